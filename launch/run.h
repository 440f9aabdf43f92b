/* SPDX-License-Identifier: MIT */
/**
 * @file run.h
 * Running the launcher's own commands (scontrol, srun): a child with its stdin, stdout and
 * stderr on pipes, found on PATH as a user's shell would, never through a shell (nothing a
 * job id holds is interpreted). Every wait is bounded; a child past its bound is killed
 * (SIGTERM, then SIGKILL) and reaped, on every path.
 */
#ifndef COREQ_LAUNCH_RUN_H
#define COREQ_LAUNCH_RUN_H

#include <stddef.h>
#include <sys/types.h>

#include "base/error.h"

struct cq_run {
	pid_t pid;
	int in, out, err; /**< the child's stdin (write end), stdout and stderr (read ends); -1 closed */
};

/** Start @p argv (argv[0] looked up on PATH) with pipes for its stdin, stdout and stderr. */
struct cq_error *cq_run_start(char *const argv[], struct cq_run *ret);

/** End child @p r: its pipes closed, then a wait of at most @p grace_ms for it to exit,
 * then SIGTERM, then SIGKILL after as long again; its wait status into *@p status (NULL
 * allowed). */
void cq_run_end(struct cq_run *r, unsigned grace_ms, int *status);

/**
 * Run @p argv to its end within @p timeout_ms, stdin /dev/null: its stdout (at most
 * @p max bytes, NUL-terminated) into *@p out and its stderr's first line into *@p first_err
 * (both malloc'd; NULL allowed for @p first_err), its exit status into *@p status (-1: it
 * did not exit by itself: killed at the bound, or by a signal). An error only when it
 * cannot be started or its output is past @p max.
 */
struct cq_error *cq_run_capture(char *const argv[], unsigned timeout_ms, size_t max, char **out, char **first_err,
				int *status);

/** Milliseconds of CLOCK_MONOTONIC, for the bounds. */
long long cq_run_now_ms(void);

#endif
