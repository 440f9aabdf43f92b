/* SPDX-License-Identifier: MIT */
/**
 * @file tr_abi.h
 * The OMPD ABI of the 2016 technical report (OMPD TR, version 2.001, July 22 2016;
 * ../shared/specs/ompd-2.001-2016.txt), as coreq hosts it. Internal to ompd/.
 *
 * Plugins of the TR export ompd_get_version(int *) instead of OpenMP 5.1's
 * ompd_get_api_version, take the callback table in a one-argument ompd_initialize and use
 * a different table: no read_string, no file_name scoping, an int-typed size table, the
 * address of a read passed by pointer, a target_to_host conversion and thread contexts
 * navigable back to their address space. Operating-system thread ids cross the interface
 * in the *target's* format (TR §3.4), unlike OpenMP 5.1.
 *
 * The TR's C names clash with omp-tools.h, so the types carry a cq_tr_ prefix; the entry
 * points keep their ompd_ names (they are what dlsym looks for). Handle and context types
 * are opaque and shared with the 5.1 declarations. Where the printed TR is damaged or
 * silent, the choice made is noted:
 *  - ompd_size_t: not defined by the TR text; uint64_t (as in every OMPD header since).
 *  - d_alloc_memory: only its free twin survives in the text; (ompd_size_t, void **).
 *  - t_sizeof_prim_type: (context, cq_tr_type_sizes *), the §15.8 struct of ints.
 *  - ompd_get_threads, ompd_get_state, ompd_get_level, ompd_get_parallel_function:
 *    signatures follow their descriptions (§7.2, §10.2, §9.1).
 *  - ompd_get_active_level: the text prints a task handle but describes "the parallel
 *    region specified by its handle" under Parallel Region Settings; coreq passes the
 *    parallel handle.
 */
#ifndef COREQ_OMPD_TR_ABI_H
#define COREQ_OMPD_TR_ABI_H

#include <omp-tools.h>
#include <stdint.h>

/** Versions ompd_get_version may report for the TR ABI (drafts 2014 to the 2016 TR and
 * its 2017 revisions); anything else through ompd_get_version is refused. */
#define CQ_OMPD_TR_VERSION_MIN 201400
#define CQ_OMPD_TR_VERSION_MAX 201712

typedef uint64_t cq_tr_size_t;
typedef int64_t cq_tr_tword_t;

/** TR §15.2 */
enum { CQ_TR_OSTHREAD_PTHREAD = 0, CQ_TR_OSTHREAD_LWP = 1, CQ_TR_OSTHREAD_WINTHREAD = 2 };
typedef int cq_tr_osthread_kind_t;

/** TR §15.8: sizes of the target's primitive types, as ints. */
typedef struct {
	int sizeof_char, sizeof_short, sizeof_int, sizeof_long, sizeof_long_long,
		sizeof_pointer;
} cq_tr_type_sizes;

/** TR §15.6, §15.7 */
typedef int cq_tr_sched_t;
typedef int cq_tr_proc_bind_t;
/** TR §15.9: numeric values differ from OpenMP 5.1's states. */
typedef int cq_tr_state_t;

/* TR §15.10: the callbacks. Return codes 0..10 are those of OpenMP 5.1. */
typedef ompd_rc_t (*cq_tr_alloc_fn)(cq_tr_size_t bytes, void **ptr);
typedef ompd_rc_t (*cq_tr_free_fn)(void *ptr);
typedef ompd_rc_t (*cq_tr_print_fn)(const char *string);
typedef ompd_rc_t (*cq_tr_sizeof_fn)(ompd_address_space_context_t *ctx, cq_tr_type_sizes *sizes);
typedef ompd_rc_t (*cq_tr_symbol_fn)(ompd_address_space_context_t *ctx,
				     ompd_thread_context_t *tctx, const char *name,
				     ompd_address_t *addr);
typedef ompd_rc_t (*cq_tr_read_fn)(ompd_address_space_context_t *ctx, ompd_thread_context_t *tctx,
				   const ompd_address_t *addr, cq_tr_tword_t nbytes, void *buffer);
typedef ompd_rc_t (*cq_tr_write_fn)(ompd_address_space_context_t *ctx,
				    ompd_thread_context_t *tctx, const ompd_address_t *addr,
				    cq_tr_tword_t nbytes, const void *buffer);
typedef ompd_rc_t (*cq_tr_convert_fn)(ompd_address_space_context_t *ctx, const void *input,
				      int unit_size, int count, void *output);
typedef ompd_rc_t (*cq_tr_thread_context_fn)(ompd_address_space_context_t *ctx,
					     cq_tr_osthread_kind_t kind, cq_tr_size_t sizeof_osthread,
					     const void *osthread, ompd_thread_context_t **ret);
typedef ompd_rc_t (*cq_tr_aspace_of_thread_fn)(ompd_thread_context_t *tctx,
					       ompd_address_space_context_t **ret);

/** TR §16, in its order. */
typedef struct {
	cq_tr_alloc_fn d_alloc_memory;
	cq_tr_free_fn d_free_memory;
	cq_tr_print_fn print_string;
	cq_tr_sizeof_fn t_sizeof_prim_type;
	cq_tr_symbol_fn t_symbol_addr_lookup;
	cq_tr_read_fn t_read_memory;
	cq_tr_write_fn t_write_memory;
	cq_tr_convert_fn target_to_host;
	cq_tr_convert_fn host_to_target;
	cq_tr_thread_context_fn get_thread_context_for_osthread;
	cq_tr_aspace_of_thread_fn get_address_space_context_for_thread;
} cq_tr_callbacks;

/* The entry points coreq calls, by name and type. */
typedef ompd_address_space_handle_t cq_tr_ah;
typedef ompd_thread_handle_t cq_tr_th;
typedef ompd_parallel_handle_t cq_tr_ph;
typedef ompd_task_handle_t cq_tr_task;

#define CQ_OMPD_TR_FUNCTIONS(X)                                                              \
	X(ompd_get_version, (int *version))                                                  \
	X(ompd_get_version_string, (const char **string))                                    \
	X(ompd_initialize, (const cq_tr_callbacks *callbacks))                              \
	X(ompd_finalize, (void))                                                             \
	X(ompd_process_initialize, (ompd_address_space_context_t *ctx, cq_tr_ah **handle))   \
	X(ompd_release_address_space_handle, (cq_tr_ah *handle))                             \
	X(ompd_get_threads, (cq_tr_ah *handle, cq_tr_th ***vector, int *count))              \
	X(ompd_get_thread_in_parallel, (cq_tr_ph *par, cq_tr_th ***vector, int *count))      \
	X(ompd_release_thread_handle, (cq_tr_th *th))                                        \
	X(ompd_get_top_parallel_region, (cq_tr_th *th, cq_tr_ph **par))                      \
	X(ompd_get_enclosing_parallel_handle, (cq_tr_ph *par, cq_tr_ph **outer))             \
	X(ompd_get_task_parallel_handle, (cq_tr_task *task, cq_tr_ph **par))                 \
	X(ompd_release_parallel_handle, (cq_tr_ph *par))                                     \
	X(ompd_get_top_task_region, (cq_tr_th *th, cq_tr_task **task))                       \
	X(ompd_get_generating_ancestor_task_region, (cq_tr_task *task, cq_tr_task **parent)) \
	X(ompd_get_scheduling_ancestor_task_region, (cq_tr_task *task, cq_tr_task **parent)) \
	X(ompd_get_implicit_task_in_parallel, (cq_tr_ph *par, cq_tr_task ***vector, int *count)) \
	X(ompd_release_task_handle, (cq_tr_task *task))                                      \
	X(ompd_get_num_procs, (cq_tr_ah *handle, cq_tr_tword_t *val))                        \
	X(ompd_get_thread_limit, (cq_tr_ah *handle, cq_tr_tword_t *val))                     \
	X(ompd_get_num_threads, (cq_tr_ph *par, cq_tr_tword_t *val))                         \
	X(ompd_get_level, (cq_tr_ph *par, cq_tr_tword_t *val))                               \
	X(ompd_get_active_level, (cq_tr_ph *par, cq_tr_tword_t *val))                        \
	X(ompd_get_parallel_function, (cq_tr_ph *par, ompd_address_t *entry))                \
	X(ompd_get_thread_handle, (cq_tr_ah *handle, cq_tr_osthread_kind_t kind,             \
				   cq_tr_size_t size, const void *osthread, cq_tr_th **th))  \
	X(ompd_get_osthread, (cq_tr_th *th, cq_tr_osthread_kind_t kind, cq_tr_size_t size,   \
			      void *osthread))                                               \
	X(ompd_get_state, (cq_tr_th *th, cq_tr_state_t *state, ompd_wait_id_t *wait_id))     \
	X(ompd_get_task_function, (cq_tr_task *task, ompd_address_t *entry))                 \
	X(ompd_get_max_threads, (cq_tr_task *task, cq_tr_tword_t *val))                      \
	X(ompd_get_thread_num, (cq_tr_th *th, cq_tr_tword_t *val))                           \
	X(ompd_in_parallel, (cq_tr_task *task, cq_tr_tword_t *val))                          \
	X(ompd_in_final, (cq_tr_task *task, cq_tr_tword_t *val))                             \
	X(ompd_get_dynamic, (cq_tr_task *task, cq_tr_tword_t *val))                          \
	X(ompd_get_nested, (cq_tr_task *task, cq_tr_tword_t *val))                           \
	X(ompd_get_max_active_levels, (cq_tr_th *th, cq_tr_tword_t *val))                    \
	X(ompd_get_schedule, (cq_tr_task *task, cq_tr_sched_t *kind, cq_tr_tword_t *modifier)) \
	X(ompd_get_proc_bind, (cq_tr_task *task, cq_tr_proc_bind_t *bind))                   \
	X(ompd_is_implicit, (cq_tr_task *task, cq_tr_tword_t *val))                          \
	X(ompd_get_task_frame, (cq_tr_task *task, ompd_address_t *exit_runtime,              \
				ompd_address_t *reenter_runtime))                            \
	X(ompd_get_display_control_vars, (cq_tr_ah *handle, const char *const **vars))       \
	X(ompd_release_display_control_vars, (const char *const **vars))

/** Entry points of a TR plugin. The optional compares are looked up separately. */
struct cq_ompd_tr_api {
#define CQ_TR_FIELD(name, args) ompd_rc_t (*name) args;
	CQ_OMPD_TR_FUNCTIONS(CQ_TR_FIELD)
#undef CQ_TR_FIELD
};

#endif
