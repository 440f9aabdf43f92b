/* SPDX-License-Identifier: MIT */
/**
 * @file verdict.h
 * What a person triaging a hung job reads first: which ranks the waits end on, and where
 * each of those is. The wait-for graph of a job view (waitfor.h: point-to-point waits,
 * collectives, wildcard receives, edges resting on a guess) is followed from every waiting
 * rank to the strongly connected components nothing leaves: a rank that waits on nobody
 * (outside MPI, or in MPI with nothing pending on anyone), or a cycle (a deadlock). Those
 * ranks are the blocking set.
 *
 * Where a rank is: for a rank in an MPI call, the call's caller (the program's code that
 * made it); otherwise its first thread's first frame outside the C library (`user_frame`),
 * moved to the innermost frame with a source line when the program's own code has DWARF.
 * Where several blocking ranks stand in one function at different lines, the one at the
 * lowest line, and at one line the lowest loop variables (the frames' "loop_variables",
 * outermost loop first), is named the least progressed (STAT's temporal ordering).
 */
#ifndef COREQ_JOB_VERDICT_H
#define COREQ_JOB_VERDICT_H

#include <jansson.h>
#include <stdio.h>

/**
 * The verdict of the job view @p job (a "coreq-mqd-job/1" document with wait_for,
 * deadlocks, possible_deadlocks, calls and ranks): a new object {kind, text, waiting,
 * blocking: [{rank, in, where, cycle}], least_progressed?}. kind is "deadlock",
 * "possible_deadlock", "blocked" (ranks wait, on ranks that do not) or "none".
 */
json_t *cq_job_verdict(const json_t *job);

/**
 * Qualify the verdict @p verdict (of cq_job_verdict) by repeated samples: @p progress is
 * an array of job/progress.h results of the job's ranks ("task": the rank). The verdict
 * is about its waiting and blocking ranks; it gains "samples": {stuck, progressing,
 * not_compared (ranks as ranges: those of the verdict without a result of two samples or
 * more, sampled once or with no stacks), confirmed (bool: every one of them was compared
 * and had the same program frames in every sample)}, and its text says which: the same in
 * every sample (a hang, said only when confirmed), the ranks that moved (a slow phase
 * rather than a hang: sample again), and by name the ranks not compared ("rank 2 was
 * sampled once: not compared"). The counts and spans said are those of the verdict's ranks.
 */
void cq_job_verdict_samples(json_t *verdict, const json_t *progress);

/**
 * A cycle's ranks @p cycle (a JSON array, the first repeated last) as text to @p f:
 * " 0 -> 1 -> 2 -> 0". A long one is shortened to its first and last steps with the
 * number of ranks between ("... 1994 more ..."): a ring of 2000 ranks was a 15 KB line.
 * The JSON keeps every rank.
 */
void cq_job_print_cycle(FILE *f, const json_t *cycle);

#endif
