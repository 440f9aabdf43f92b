/* SPDX-License-Identifier: MIT */
/**
 * @file pool.h
 * The per-process phase of a job command: one document per input, made in worker
 * processes (a core that crashes or exhausts its worker takes only its own document
 * down), each taking the next input from a shared pipe so a slow core does not hold up a
 * fixed share. Documents come back through files in a private temporary directory.
 */
#ifndef COREQ_JOB_POOL_H
#define COREQ_JOB_POOL_H

#include <jansson.h>
#include <stdbool.h>

/** Makes the document of input @p index (runs in a worker process). */
typedef json_t *(*cq_pool_fn)(void *arg, int index);

/**
 * Run @p fn for every index in [0, @p n) whose @p wanted is true, in at most @p workers
 * processes; a terminal on stderr sees "@p what: done/total @p unit". The result has @p n
 * entries: the document made for a wanted index, JSON null where its worker died (or
 * the index was not wanted). NULL when out of memory or no temporary directory/pipe.
 */
json_t *cq_pool_run(int n, const bool *wanted, int workers, cq_pool_fn fn, void *arg, const char *what,
		    const char *unit);

#endif
