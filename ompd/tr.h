/* SPDX-License-Identifier: MIT */
/* Internal to ompd/: hosting a plugin of the OMPD TR 2.001 (tr_abi.h). The query walker
 * (query.c) speaks OpenMP 5.1; tr_adapter.c gives it a 5.1-shaped entry-point table whose
 * functions call the TR plugin, and tr_callbacks.c gives the plugin the TR callbacks. */
#ifndef COREQ_OMPD_TR_H
#define COREQ_OMPD_TR_H

#include <jansson.h>
#include <stddef.h>

#include "plugin.h"
#include "tr_abi.h"

/** Our TR callback table, answering from @p core (same answers as cq_ompd_callbacks). */
const cq_tr_callbacks *cq_ompd_tr_callbacks(struct cq_core *core, struct cq_ompd_stats *stats);

/** True if the plugin @p dl speaks the TR: it has ompd_get_version and not OpenMP 5.1's
 * ompd_get_api_version. */
bool cq__ompd_is_tr(void *dl);

/**
 * Fill @p api with adapters over the TR plugin @p dl. Entry points the TR requires and
 * the plugin lacks are appended to @p missing (then the plugin is unusable); the ICV
 * accessors and display control variables are optional.
 */
void cq__ompd_tr_bind(void *dl, struct cq_core *core, struct cq_ompd_stats *stats,
		      struct cq_ompd_api *api, json_t *missing);

/** Rewrite an announced call (in the 5.1 names of query.c, "ompd_get_curr_task_handle(
 * thread 7)") in place into the TR function actually called ("ompd_get_top_task_region(
 * thread 7)"), so that crash reports and skips name what the plugin ran. */
void cq__ompd_tr_rename(char *call, size_t size);

#endif
