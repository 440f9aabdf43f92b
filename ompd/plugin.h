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
	struct _ompd_aspace_cont *aspace; /**< the TR navigates from a thread to its space */
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

/** The address-space context of the core given to the last cq_ompd_callbacks() or
 * cq_ompd_tr_callbacks(). */
ompd_address_space_context_t *cq_ompd_aspace_context(void);

/* The 5.1 callbacks themselves, which the TR 2.001 table (tr_callbacks.c) wraps. */
bool cq__ompd_contexts_init(struct cq_core *core, struct cq_ompd_stats *stats);
ompd_rc_t cq__ompd_cb_alloc(ompd_size_t nbytes, void **ptr);
ompd_rc_t cq__ompd_cb_free(void *ptr);
ompd_rc_t cq__ompd_cb_print(const char *string, int category);
ompd_rc_t cq__ompd_cb_sizeof(ompd_address_space_context_t *ctx, ompd_device_type_sizes_t *sizes);
ompd_rc_t cq__ompd_cb_symbol(ompd_address_space_context_t *ctx, ompd_thread_context_t *tctx,
			     const char *name, ompd_address_t *addr, const char *file_name);
ompd_rc_t cq__ompd_cb_read(ompd_address_space_context_t *ctx, ompd_thread_context_t *tctx,
			   const ompd_address_t *addr, ompd_size_t nbytes, void *buffer);
ompd_rc_t cq__ompd_cb_write(ompd_address_space_context_t *ctx, ompd_thread_context_t *tctx,
			    const ompd_address_t *addr, ompd_size_t nbytes, const void *buffer);
ompd_rc_t cq__ompd_cb_convert(ompd_address_space_context_t *ctx, const void *input,
			      ompd_size_t unit_size, ompd_size_t count, void *output);
ompd_rc_t cq__ompd_cb_thread_context(ompd_address_space_context_t *ctx, ompd_thread_id_t kind,
				     ompd_size_t sizeof_id, const void *id,
				     ompd_thread_context_t **ret);

/** Name of an ompd_rc_t ("ompd_rc_stale_handle"). */
const char *cq_ompd_rc_name(ompd_rc_t rc);

#endif
