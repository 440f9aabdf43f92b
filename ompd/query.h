/* SPDX-License-Identifier: MIT */
/* Internal to ompd/: the child side of a run (query.c). */
#ifndef COREQ_OMPD_QUERY_H
#define COREQ_OMPD_QUERY_H

#include <stdio.h>

#include "corelib/core.h"

#include "plugin/isolate.h"
#include "plugin/plugin_load.h"

struct cq__ompd_job {
	struct cq_core *core;
	const char *plugin;                 /**< as named, for reports */
	const struct cq_plugin_load *load;  /**< what is loaded (plugin/plugin_load.h) */
};

/** cq_isolate_retry_fn: load the plugin and write the report records to @p out, skipping
 * the calls (as announced) an earlier run died in. */
int cq__ompd_child(void *arg, const struct cq_isolate_deaths *skip, FILE *out);

#endif
