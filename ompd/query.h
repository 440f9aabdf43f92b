/* SPDX-License-Identifier: MIT */
/* Internal to ompd/: the child side of a run (query.c). */
#ifndef COREQ_OMPD_QUERY_H
#define COREQ_OMPD_QUERY_H

#include <stdio.h>

#include "corelib/core.h"

struct cq__ompd_job {
	struct cq_core *core;
	const char *plugin;
	char **skip;  /**< calls (as announced) an earlier run crashed or hung in */
	size_t nskip;
};

/** cq_isolate_fn: load the plugin and write the report records to @p out. */
int cq__ompd_child(void *arg, FILE *out);

#endif
