/* SPDX-License-Identifier: MIT */
/**
 * @file isolate.h
 * Running foreign code (debugger plugins) where a crash, a hang or an exit() cannot take
 * the analyzer down: a child process per run, with a time limit.
 *
 * The child writes records, one per line, to a pipe; the parent keeps every complete line
 * it received, so what was gathered before a failure is never lost. Before each call into
 * the foreign code the child names it in a page shared with the parent
 * (cq_isolate_calling()), so a crash is reported with the call that caused it. The
 * child's stdout and stderr (where plugins print) are captured separately and never reach
 * ours.
 */
#ifndef COREQ_ISOLATE_H
#define COREQ_ISOLATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "base/error.h"

/** How the child ended. */
enum cq_isolate_end {
	CQ_ISOLATE_OK,       /**< exited 0 after the function returned */
	CQ_ISOLATE_EXIT,     /**< exited with another status (e.g. a plugin called exit()) */
	CQ_ISOLATE_SIGNAL,   /**< killed by a signal (crash) */
	CQ_ISOLATE_TIMEOUT,  /**< ran past the time limit and was killed */
};

struct cq_isolate_result {
	enum cq_isolate_end end;
	int status;          /**< exit status or signal number */
	/** The foreign call in progress when it ended ("" if none: the function returned).
	 * An exit with a call in progress means the foreign code called exit(). */
	char call[256];
	char **records;      /**< complete lines the child wrote, in order */
	size_t nrecords;
	char *output;        /**< what the child printed on stdout/stderr (bounded), or NULL */
	double seconds;
};

/**
 * Function run in the child. Writes records to @p out (one per line; fflush is done by the
 * host). Its return value becomes the child's exit status.
 */
typedef int (*cq_isolate_fn)(void *arg, FILE *out);

/** Run @p fn in a child with a limit of @p timeout_ms milliseconds (0: no limit). */
struct cq_error *cq_isolate_run(cq_isolate_fn fn, void *arg, unsigned timeout_ms,
				struct cq_isolate_result *ret);

/** In the child: name the foreign call about to be made (NULL: none in progress). */
void cq_isolate_calling(const char *what);

/** Runs at most, in cq_isolate_run_retrying(). */
#define CQ_ISOLATE_MAX_RUNS 8

/** Foreign calls earlier runs died in, and how ("killed by SIGSEGV in f(x)"). */
struct cq_isolate_deaths {
	char *call[CQ_ISOLATE_MAX_RUNS];
	char *how[CQ_ISOLATE_MAX_RUNS];
	size_t n;
};

/** Function run in the child by cq_isolate_run_retrying(): it must skip the calls in
 * @p skip (compare with what it passes to cq_isolate_calling()). */
typedef int (*cq_isolate_retry_fn)(void *arg, const struct cq_isolate_deaths *skip, FILE *out);

/**
 * Like cq_isolate_run(), but a child that dies (crash, time limit, exit()) inside a named
 * foreign call is run again with that call skipped, so one bad answer does not hide all
 * the others: at most CQ_ISOLATE_MAX_RUNS runs, and no third run after a time-out (time
 * limits add up). *ret is the last run; @p deaths lists the calls skipped and how each
 * died (release with cq_isolate_deaths_deinit()).
 */
struct cq_error *cq_isolate_run_retrying(cq_isolate_retry_fn fn, void *arg, unsigned timeout_ms,
					 struct cq_isolate_result *ret,
					 struct cq_isolate_deaths *deaths);

void cq_isolate_deaths_deinit(struct cq_isolate_deaths *d);

/** In the child of cq_isolate_run_retrying(): true if an earlier run died in @p call (the
 * caller skips it); else names it as the foreign call in progress and returns false. */
bool cq_isolate_calling_unless_died(const struct cq_isolate_deaths *skip, const char *call);

/** In the child: write one record line to @p out and flush it, so that it reaches the
 * parent even if the next foreign call crashes. */
void cq_isolate_record(FILE *out, const char *text);

/** Release what cq_isolate_run() returned. */
void cq_isolate_result_deinit(struct cq_isolate_result *r);

/** "SIGSEGV in ompd_get_state", "timeout after 10 s in ...", "exit status 3 in ...". */
char *cq_isolate_describe(const struct cq_isolate_result *r);

#endif
