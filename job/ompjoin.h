/* SPDX-License-Identifier: MIT */
/**
 * @file ompjoin.h
 * OpenMP-aware stacks: each thread's frames (a coreq-bt/2 document) joined with the
 * OpenMP runtime's own account of its tasks (a coreq-ompd/1 document, from the OMPD
 * plugin), the way LLVM's gdb plugin does for `ompd bt`, from a core.
 *
 * The runtime records two stack addresses per task (OMPT's frame): its exit frame, the
 * runtime frame that called the task's code (or, for an undeferred task, the frame of the
 * application code that ran it), and its enter frame, the frame where the task called back
 * into the runtime (0 while it runs its own code). Both are frame addresses
 * (__builtin_frame_address: the frame pointer, or on s390x the frame's back-chain slot),
 * so each is placed in the frame whose stack region holds it: the innermost frame whose
 * CFA (less the ABI's bias: 160 bytes on s390x) lies above it. On a thread, walking out
 * from frame 0:
 *   - frames up to the current task's enter frame are the runtime's (what the task called);
 *   - frames below its exit frame are the task's; the exit frame is the runtime's when it
 *     is in the runtime's module (an undeferred task's is its parent's code);
 *   - then the next task on the same stack: the task it was scheduled from (explicit
 *     tasks), or for an implicit task whose thread created its parallel region, the task
 *     that generated the region; the initial task (no exit frame) runs to the stack's end.
 * A frame address not on the thread's stack (the runtime takes an undeferred task's from
 * the application's frame pointer: garbage when the program omits it) is not used, and
 * said: that task's frames are not told apart from the next one's.
 *
 * Documents in, documents out: no core, no plugin.
 */
#ifndef COREQ_JOB_OMPJOIN_H
#define COREQ_JOB_OMPJOIN_H

#include <jansson.h>
#include <stdbool.h>

/**
 * Annotate the stacks of @p bt in place from @p ompd (NULL when no usable OMPD report was
 * made: then frames in an OpenMP runtime's module are marked by module, and @p why says
 * why there is no more). Each frame gains "openmp": "runtime", "task", "serial" or
 * "thread" (outside any task: the thread's start), each thread "openmp": {segments,
 * problems, continued?} (doc/json-schema.md); the document "openmp": {source, why?}.
 * With @p continued, each thread whose outermost task is an implicit task of a region
 * another thread created gets "continued": the segments of the generating tasks on their
 * encountering threads, out to the initial task.
 */
void cq_omp_join(json_t *bt, const json_t *ompd, const char *why, bool continued);

/** Whether @p module (a file name) is an OpenMP runtime: LLVM's libomp, Intel's libiomp5,
 * GCC's libgomp. */
bool cq_omp_runtime_module(const char *module);

#endif
