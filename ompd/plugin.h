/* SPDX-License-Identifier: MIT */
/* Internal to ompd/: the plugin's entry points and our callback table (OpenMP 5.1 ABI). */
#ifndef COREQ_OMPD_PLUGIN_H
#define COREQ_OMPD_PLUGIN_H

#include <omp-tools.h>
#include <stdio.h>

#include "corelib/core.h"

/** The API version of OpenMP 5.1's OMPD (what LLVM's libompd accepts). */
#define CQ_OMPD_API_VERSION 201811

/* Defined by OpenMP 5.1 (and LLVM's ompd-types.h), not by omp-tools.h. */
#define CQ_OMPD_THREAD_ID_PTHREAD 0
#define CQ_OMPD_THREAD_ID_LWP 1

/** Not an OMPD return code: the call was skipped because an earlier run died in it. */
#define CQ_OMPD_RC_SKIPPED ((ompd_rc_t)1000)

/** Entry points of a loaded plugin (NULL where the plugin lacks one). */
struct cq_ompd_api {
#define CQ_OMPD_FUNCTIONS(X)                                                                 \
	X(ompd_initialize) X(ompd_get_api_version) X(ompd_get_version_string)                \
	X(ompd_finalize) X(ompd_process_initialize) X(ompd_rel_address_space_handle)         \
	X(ompd_get_omp_version) X(ompd_get_omp_version_string)                               \
	X(ompd_get_thread_in_parallel) X(ompd_get_thread_handle) X(ompd_rel_thread_handle)   \
	X(ompd_get_thread_id) X(ompd_get_curr_parallel_handle)                               \
	X(ompd_get_enclosing_parallel_handle) X(ompd_get_task_parallel_handle)               \
	X(ompd_rel_parallel_handle) X(ompd_get_curr_task_handle)                             \
	X(ompd_get_generating_task_handle) X(ompd_get_scheduling_task_handle)                \
	X(ompd_get_task_in_parallel) X(ompd_rel_task_handle) X(ompd_get_task_function)       \
	X(ompd_get_task_frame) X(ompd_enumerate_states) X(ompd_get_state)                    \
	X(ompd_get_display_control_vars) X(ompd_rel_display_control_vars)                    \
	X(ompd_enumerate_icvs) X(ompd_get_icv_from_scope) X(ompd_get_icv_string_from_scope)
#define CQ_OMPD_FIELD(name) __typeof__(name) *name;
	CQ_OMPD_FUNCTIONS(CQ_OMPD_FIELD)
#undef CQ_OMPD_FIELD
};

/** The address-space context we give the plugin: the core. */
struct _ompd_aspace_cont {
	struct cq_core *core;
};

/** A thread context: one thread of the core. */
struct _ompd_thread_cont {
	struct cq_core *core;
	struct cq_thread *thread;
};

/** Bookkeeping of the callbacks, reported with the results. */
struct cq_ompd_stats {
	unsigned long reads, read_faults, lookups, lookup_misses, allocs, refused_allocs;
	unsigned long writes_refused;
	char missing[8][96]; /**< first symbols the plugin asked for and did not get */
	unsigned nmissing;
	FILE *log;           /**< print_string output goes here */
};

/** Our callback table, answering from @p core; @p stats collects counters. */
const ompd_callbacks_t *cq_ompd_callbacks(struct cq_core *core, struct cq_ompd_stats *stats);

/** Name of an ompd_rc_t ("ompd_rc_stale_handle"). */
const char *cq_ompd_rc_name(ompd_rc_t rc);

#endif
