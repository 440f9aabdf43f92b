/* SPDX-License-Identifier: MIT */
/**
 * @file progress.h
 * Repeated samples of a job's stacks, as STAT uses them: a hang is told from a slow phase.
 * A process whose program frames are the same in every sample is stuck; one whose frames
 * moved is progressing. The runtimes' frames (the C library, MPI and its transports,
 * OpenMP) are left out of the comparison: a rank waiting in MPI polls, and its innermost
 * frames change between samples while the program's do not (FACTS.md, "Live processes").
 * The CPU time a stuck process used between its first and last sample says whether it
 * spins (a quarter of the time or more) or is blocked.
 *
 * Documents in, documents out: samples are coreq-bt/2 documents (`coreq bt --json`, or
 * the walks of `coreq stacks` and `coreq mqd`), with their "task" (the MPI rank) and
 * "process" ({pid, cpu_ms, taken_ms}: cq_bt_process). Two documents are samples of one
 * process when they have the same task, or without one the same pid, and were taken at
 * different times (coreq snapshots say when: a kernel core or one given twice is not a
 * sample).
 */
#ifndef COREQ_JOB_PROGRESS_H
#define COREQ_JOB_PROGRESS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/** Whether the module named @p module (a base name; NULL: unknown) is a runtime's. */
bool cq_progress_runtime_module(const char *module);

/** The key naming the process a bt document is a sample of, into @p buf: "rank R" when
 * it has a task, else "pid P"; false (no key: a process of its own) when it has neither. */
bool cq_progress_key(const json_t *bt, char *buf, size_t size);

/**
 * Whether one process moved across its samples @p bts (a JSON array of its coreq-bt/2
 * documents, at least one). They are taken in the order of their "taken_ms" where every
 * one has it (coreq snapshots), else in the order given. Returns a new object:
 * {samples (count), latest (the index in @p bts of the last sample), moved (bool),
 * threads_moved: [tid...] (ascending, each once; a thread that came or went counts), state
 * ("progressing", "stuck" or "one sample": nothing compared), cpu_ms (used from the first
 * sample to the last, null when a core does not say or with one sample), span_ms (the time
 * from the first to the last, null when not every sample has it or with one sample), cpu ("spinning", "blocked" or null:
 * said only of a stuck process whose CPU time and span are known), pid, task (or null)}.
 * NULL when out of memory. Each sample is compared with the first by its threads sorted by
 * tid: O(T log T) time in the T threads of a sample, memory for two samples' threads.
 */
json_t *cq_progress_of(const json_t *bts);

/**
 * Group the bt documents @p bts (a JSON array in input order) into processes by
 * cq_progress_key: those with the key and a "taken_ms" no other of the group has; any
 * other document is a group of its own. Returns a new array with one entry per process, in the order of its
 * first sample: {key (string or null), samples: [indices into bts]}. NULL when out of
 * memory.
 */
json_t *cq_progress_group(const json_t *bts);

/**
 * A summary of the progress of many processes to @p f, a line per state: @p progress is
 * an array of cq_progress_of results. Ranks are written as ranges ("ranks 0-2,4-63"),
 * processes without one by pid; a progressing one names the threads that moved (the first
 * 16, then how many more). The samples and span of a line are said as ranges when its
 * processes differ ("2-3 samples over 400-600 ms"); a process sampled once is said to be
 * that and not compared, never stuck.
 */
void cq_progress_print(FILE *f, const json_t *progress);

/** The tasks (ranks) of the cq_progress_of results @p progress in state @p state, as
 * ranges ("0-3,5"); "" when none; NULL when out of memory. Caller frees. */
char *cq_progress_tasks(const json_t *progress, const char *state);

#endif
