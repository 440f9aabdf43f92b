/* SPDX-License-Identifier: MIT */
/**
 * @file stack.h
 * Backtraces of a core's threads: elfutils' libdwfl unwinder driven by coreq's model of
 * the core, never by libdwfl's own discovery of it. The modules are the images corelib
 * found (their verified files, the vDSO from the core's memory), memory is read through
 * cq_core_read() (compressed cores, bundles, file-backed text, qemu cores alike), and each
 * thread's initial registers come from its prstatus block through the target table's
 * DWARF numbers. Where a frame has no CFI, coreq takes one step of its own and restarts
 * libdwfl from the caller (internal.h): ARM EHABI tables, the powerpc back chain, riscv64
 * and Thumb-2 prologue analysis, riscv64 frame pointers, a leaf's link register. Each frame
 * says how it was found. Knows no OpenMP and no MPI.
 *
 * Return addresses are symbolized at pc - 1 (the call, not the instruction after it),
 * except in the initial frame and after a signal frame, where the pc is exact.
 */
#ifndef COREQ_STACK_H
#define COREQ_STACK_H

#include <jansson.h>

#include "corelib/core.h"

/** Frames per thread unless the caller says otherwise. */
#define CQ_STACK_DEFAULT_MAX_FRAMES 256

/** What a report walks. */
struct cq_stack_options {
	int32_t tid;          /**< only this thread (0: every thread) */
	unsigned max_frames;  /**< physical frames per thread (0: CQ_STACK_DEFAULT_MAX_FRAMES) */
	/** Stop every thread but the crashing one at its user frame (what `info` and `threads`
	 * show): the walk costs a few frames per thread, not the whole stack. */
	bool to_user_frame;
	/** Source lines and inlined calls in system modules (stack.h's user frame) too. Off
	 * by default: a distribution's libc debug file is megabytes of compressed DWARF, 100 ms
	 * to inflate, for lines few people read; the program's own modules always get them. */
	bool system_lines;
};

/**
 * The stacks of @p core's threads (the crashing one first) as @p opt says, as a
 * "coreq-bt/2" document (new reference in *@p ret): per thread its frames, its user frame (the index of the first
 * frame outside the C library, the dynamic linker and the vDSO, with a source line where
 * the executable is static; null if none was reached) and why the walk stopped. Errors
 * only for what stops all threads (out of memory, libdwfl refusing the architecture).
 */
struct cq_error *cq_stack_walk(struct cq_core *core, const struct cq_stack_options *opt, json_t **ret);

#endif
