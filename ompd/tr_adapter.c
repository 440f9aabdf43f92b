/* SPDX-License-Identifier: MIT */
/* An OMPD TR 2.001 plugin behind the OpenMP 5.1 entry points the query walker calls.
 * The TR has no ICV or state enumeration: its ICVs are one accessor function each, listed
 * here with the OpenMP names of what they return, and its states are the fixed
 * enumeration of TR §15.9. Vectors the TR returns (threads and implicit tasks of a region)
 * are indexed like 5.1's ompd_get_thread_in_parallel(handle, n). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "base/decode.h"
#include "tr.h"

static struct cq_ompd_tr_api tr;
static struct cq_core *core;
static struct cq_ompd_stats *stats;

bool cq__ompd_is_tr(void *dl)
{
	return dlsym(dl, "ompd_get_version") && !dlsym(dl, "ompd_get_api_version");
}

/* ---- ICVs: one TR accessor each ---- */

enum icv_call { BY_ASPACE, BY_THREAD, BY_PARALLEL, BY_TASK, SCHEDULE, PROC_BIND };

static const struct tr_icv {
	const char *name;     /* the OpenMP ICV (or query) the accessor answers */
	ompd_scope_t scope;
	const char *function; /* the TR entry point */
	enum icv_call how;
} icvs[] = {
	{"num-procs-var", ompd_scope_address_space, "ompd_get_num_procs", BY_ASPACE},
	{"thread-limit-var", ompd_scope_address_space, "ompd_get_thread_limit", BY_ASPACE},
	{"thread-num-var", ompd_scope_thread, "ompd_get_thread_num", BY_THREAD},
	{"max-active-levels-var", ompd_scope_thread, "ompd_get_max_active_levels", BY_THREAD},
	{"team-size-var", ompd_scope_parallel, "ompd_get_num_threads", BY_PARALLEL},
	{"levels-var", ompd_scope_parallel, "ompd_get_level", BY_PARALLEL},
	{"active-levels-var", ompd_scope_parallel, "ompd_get_active_level", BY_PARALLEL},
	{"nthreads-var", ompd_scope_task, "ompd_get_max_threads", BY_TASK},
	{"dyn-var", ompd_scope_task, "ompd_get_dynamic", BY_TASK},
	{"nest-var", ompd_scope_task, "ompd_get_nested", BY_TASK},
	{"run-sched-var", ompd_scope_task, "ompd_get_schedule", SCHEDULE},
	{"bind-var", ompd_scope_task, "ompd_get_proc_bind", PROC_BIND},
	{"final-task-var", ompd_scope_task, "ompd_in_final", BY_TASK},
	{"implicit-task-var", ompd_scope_task, "ompd_is_implicit", BY_TASK},
	/* not an ICV: omp_in_parallel() of the task, which the TR offers */
	{"in-parallel", ompd_scope_task, "ompd_in_parallel", BY_TASK},
};
#define NICVS (sizeof(icvs) / sizeof(icvs[0]))

/* The accessor of ICV @p i in the plugin, or NULL. */
static void *accessor(size_t i)
{
	static void *fns[NICVS];
	static bool looked;
	if (!looked) {
		for (size_t k = 0; k < NICVS; k++) {
#define CQ_TR_PICK(fname, args) if (!strcmp(icvs[k].function, #fname)) fns[k] = (void *)tr.fname;
			CQ_OMPD_TR_FUNCTIONS(CQ_TR_PICK)
#undef CQ_TR_PICK
		}
		looked = true;
	}
	return fns[i];
}

static ompd_rc_t a_enumerate_icvs(ompd_address_space_handle_t *handle, ompd_icv_id_t current,
				  ompd_icv_id_t *next_id, const char **next_name,
				  ompd_scope_t *next_scope, int *more)
{
	/* ids are 1 + the index in icvs[]; only accessors the plugin has are listed */
	size_t i = (size_t)current;
	while (i < NICVS && !accessor(i))
		i++;
	if (i >= NICVS)
		return ompd_rc_bad_input;
	*next_id = i + 1;
	*next_name = icvs[i].name;
	*next_scope = icvs[i].scope;
	size_t j = i + 1;
	while (j < NICVS && !accessor(j))
		j++;
	*more = j < NICVS;
	return ompd_rc_ok;
}

static ompd_rc_t get_icv(void *handle, ompd_scope_t scope, ompd_icv_id_t id, ompd_word_t *v,
			 int *kind_out)
{
	if (id < 1 || id > NICVS || icvs[id - 1].scope != scope || !accessor(id - 1))
		return ompd_rc_bad_input;
	const struct tr_icv *icv = &icvs[id - 1];
	void *fn = accessor(id - 1);
	cq_tr_tword_t val = 0;
	ompd_rc_t rc;
	switch (icv->how) {
	case BY_ASPACE:
		rc = ((ompd_rc_t(*)(cq_tr_ah *, cq_tr_tword_t *))fn)(handle, &val);
		break;
	case BY_THREAD:
		rc = ((ompd_rc_t(*)(cq_tr_th *, cq_tr_tword_t *))fn)(handle, &val);
		break;
	case BY_PARALLEL:
		rc = ((ompd_rc_t(*)(cq_tr_ph *, cq_tr_tword_t *))fn)(handle, &val);
		break;
	case BY_TASK:
		rc = ((ompd_rc_t(*)(cq_tr_task *, cq_tr_tword_t *))fn)(handle, &val);
		break;
	case SCHEDULE: {
		cq_tr_sched_t kind = 0;
		rc = tr.ompd_get_schedule(handle, &kind, &val);
		*kind_out = kind;
		break;
	}
	case PROC_BIND: {
		cq_tr_proc_bind_t bind = 0;
		rc = tr.ompd_get_proc_bind(handle, &bind);
		val = bind;
		break;
	}
	default:
		rc = ompd_rc_error;
	}
	*v = val;
	return rc;
}

static ompd_rc_t a_get_icv(void *handle, ompd_scope_t scope, ompd_icv_id_t id, ompd_word_t *v)
{
	int kind = 0;
	ompd_word_t val;
	ompd_rc_t rc = get_icv(handle, scope, id, &val, &kind);
	/* run-sched-var: the value is the kind (omp_sched_t); the string has both */
	*v = id >= 1 && id <= NICVS && icvs[id - 1].how == SCHEDULE ? kind : val;
	return rc;
}

static const char *name_of(const char *const *names, size_t n, long v)
{
	return v >= 0 && (size_t)v < n && names[v] ? names[v] : NULL;
}

static ompd_rc_t a_get_icv_string(void *handle, ompd_scope_t scope, ompd_icv_id_t id,
				  const char **out)
{
	static const char *const sched[] = {NULL, "static", "dynamic", "guided", "auto"};
	static const char *const bind[] = {"false", "true", "master", "close", "spread"};
	if (id < 1 || id > NICVS)
		return ompd_rc_bad_input;
	enum icv_call how = icvs[id - 1].how;
	if (how != SCHEDULE && how != PROC_BIND)
		return ompd_rc_unsupported; /* the TR has numbers only */
	int kind = 0;
	ompd_word_t v;
	ompd_rc_t rc = get_icv(handle, scope, id, &v, &kind);
	if (rc != ompd_rc_ok)
		return rc;
	char buf[64];
	if (how == SCHEDULE) {
		const char *k = name_of(sched, 5, kind);
		if (k)
			snprintf(buf, sizeof(buf), "%s,%lld", k, (long long)v);
		else
			snprintf(buf, sizeof(buf), "vendor kind %d,%lld", kind, (long long)v);
	} else {
		const char *b = name_of(bind, 5, (long)v);
		snprintf(buf, sizeof(buf), "%s", b ? b : "unknown");
	}
	void *p;
	if (cq__ompd_cb_alloc(strlen(buf) + 1, &p) != ompd_rc_ok)
		return ompd_rc_nomem;
	memcpy(p, buf, strlen(buf) + 1);
	*out = p;
	return ompd_rc_ok;
}

/* ---- states: TR §15.9 ---- */

static const struct {
	int value;
	const char *name;
} states[] = {
	{0x00, "ompd_state_work_serial"}, {0x01, "ompd_state_work_parallel"},
	{0x02, "ompd_state_work_reduction"}, {0x10, "ompd_state_idle"},
	{0x20, "ompd_state_overhead"}, {0x40, "ompd_state_wait_barrier"},
	{0x41, "ompd_state_wait_barrier_implicit"}, {0x42, "ompd_state_wait_barrier_explicit"},
	{0x50, "ompd_state_wait_taskwait"}, {0x51, "ompd_state_wait_taskgroup"},
	{0x60, "ompd_state_wait_mutex"}, {0x61, "ompd_state_wait_lock"},
	{0x62, "ompd_state_wait_critical"}, {0x63, "ompd_state_wait_atomic"},
	{0x64, "ompd_state_wait_ordered"}, {0x70, "ompd_state_undefined"},
	{0x71, "ompd_state_first"},
};
#define NSTATES (sizeof(states) / sizeof(states[0]))

static ompd_rc_t a_enumerate_states(ompd_address_space_handle_t *h, ompd_word_t current,
				    ompd_word_t *next, const char **name, ompd_word_t *more)
{
	size_t i = 0; /* a value not in the table starts the enumeration */
	for (size_t k = 0; k < NSTATES; k++)
		if (states[k].value == current)
			i = k + 1;
	if (i >= NSTATES)
		return ompd_rc_bad_input;
	*next = states[i].value;
	*name = states[i].name;
	*more = i + 1 < NSTATES;
	return ompd_rc_ok;
}

static ompd_rc_t a_get_state(ompd_thread_handle_t *th, ompd_word_t *state, ompd_wait_id_t *wait)
{
	cq_tr_state_t s = 0;
	ompd_rc_t rc = tr.ompd_get_state(th, &s, wait);
	*state = s;
	return rc;
}

/* ---- entry points that differ only in name or shape ---- */

static ompd_rc_t a_initialize(ompd_word_t version, const ompd_callbacks_t *unused)
{
	const cq_tr_callbacks *cb = cq_ompd_tr_callbacks(core, stats);
	return cb ? tr.ompd_initialize(cb) : ompd_rc_nomem;
}

static ompd_rc_t a_get_api_version(ompd_word_t *version)
{
	int v = 0;
	ompd_rc_t rc = tr.ompd_get_version(&v);
	*version = v;
	return rc;
}

static ompd_rc_t a_unsupported_version(ompd_address_space_handle_t *h, ompd_word_t *v)
{
	return ompd_rc_unsupported; /* the TR has no OpenMP version query */
}

static ompd_rc_t a_unsupported_version_string(ompd_address_space_handle_t *h, const char **s)
{
	return ompd_rc_unsupported;
}

/* Operating-system thread ids cross the TR in the target's byte order. */
static void target_order(void *id, ompd_size_t size)
{
	if (cq_target_needs_bswap(core->target) && (size == 2 || size == 4 || size == 8))
		cq_bswap_units(id, (size_t)size, 1);
}

static ompd_rc_t a_get_thread_handle(ompd_address_space_handle_t *h, ompd_thread_id_t kind,
				     ompd_size_t size, const void *id, ompd_thread_handle_t **th)
{
	uint8_t buf[8];
	if (size > sizeof(buf) || !id)
		return ompd_rc_bad_input;
	memcpy(buf, id, (size_t)size);
	target_order(buf, size);
	return tr.ompd_get_thread_handle(h, kind, size, buf, th);
}

static ompd_rc_t a_get_thread_id(ompd_thread_handle_t *th, ompd_thread_id_t kind, ompd_size_t size,
				 void *id)
{
	ompd_rc_t rc = tr.ompd_get_osthread(th, kind, size, id);
	if (rc == ompd_rc_ok)
		target_order(id, size);
	return rc;
}

/* Element @p n of a TR vector of handles; the others are released, the vector freed. */
#define FROM_VECTOR(get, release, par, n, out)                                               \
	do {                                                                                 \
		__typeof__(*(out)) *vec = NULL;                                              \
		int count = 0;                                                               \
		ompd_rc_t rc = get(par, &vec, &count);                                       \
		if (rc != ompd_rc_ok)                                                        \
			return rc;                                                           \
		*(out) = NULL;                                                               \
		for (int k = 0; vec && k < count; k++) {                                     \
			if (k == (n))                                                        \
				*(out) = vec[k];                                             \
			else if (vec[k])                                                     \
				release(vec[k]);                                             \
		}                                                                            \
		free(vec); /* allocated through our d_alloc_memory */                        \
		return *(out) ? ompd_rc_ok : ompd_rc_bad_input;                              \
	} while (0)

static ompd_rc_t a_thread_in_parallel(ompd_parallel_handle_t *par, int n, ompd_thread_handle_t **th)
{
	FROM_VECTOR(tr.ompd_get_thread_in_parallel, tr.ompd_release_thread_handle, par, n, th);
}

static ompd_rc_t a_task_in_parallel(ompd_parallel_handle_t *par, int n, ompd_task_handle_t **task)
{
	FROM_VECTOR(tr.ompd_get_implicit_task_in_parallel, tr.ompd_release_task_handle, par, n, task);
}

static ompd_rc_t a_get_task_frame(ompd_task_handle_t *task, ompd_frame_info_t *exit_f,
				  ompd_frame_info_t *enter_f)
{
	/* The TR gives addresses only: frame_flag stays as the caller set it (unknown). */
	return tr.ompd_get_task_frame(task, &exit_f->frame_address, &enter_f->frame_address);
}

static ompd_rc_t a_get_dcv(ompd_address_space_handle_t *h, const char *const **vars)
{
	return tr.ompd_get_display_control_vars ? tr.ompd_get_display_control_vars(h, vars) :
						  ompd_rc_unsupported;
}

static ompd_rc_t a_rel_dcv(const char *const **vars)
{
	return tr.ompd_release_display_control_vars ? tr.ompd_release_display_control_vars(vars) :
						      ompd_rc_unsupported;
}

/* The walker's 5.1 name -> the TR entry point it ends up in. */
static const char *const renames[][2] = {
	{"ompd_get_api_version", "ompd_get_version"},
	{"ompd_initialize", "ompd_initialize"},
	{"ompd_rel_address_space_handle", "ompd_release_address_space_handle"},
	{"ompd_rel_thread_handle", "ompd_release_thread_handle"},
	{"ompd_rel_parallel_handle", "ompd_release_parallel_handle"},
	{"ompd_rel_task_handle", "ompd_release_task_handle"},
	{"ompd_rel_display_control_vars", "ompd_release_display_control_vars"},
	{"ompd_get_thread_id", "ompd_get_osthread"},
	{"ompd_get_curr_parallel_handle", "ompd_get_top_parallel_region"},
	{"ompd_get_curr_task_handle", "ompd_get_top_task_region"},
	{"ompd_get_generating_task_handle", "ompd_get_generating_ancestor_task_region"},
	{"ompd_get_scheduling_task_handle", "ompd_get_scheduling_ancestor_task_region"},
	{"ompd_get_task_in_parallel", "ompd_get_implicit_task_in_parallel"},
	{"ompd_enumerate_states", "coreq's TR state table"},
	{"ompd_enumerate_icvs", "coreq's TR ICV table"},
};

void cq__ompd_tr_rename(char *call, size_t size)
{
	size_t len = strcspn(call, "(");
	char rest[256];
	snprintf(rest, sizeof(rest), "%s", call + len);
	/* "ompd_get_icv_from_scope(thread 7, nthreads-var)" -> "ompd_get_max_threads(thread 7)" */
	if (!strncmp(call, "ompd_get_icv_from_scope", len) ||
	    !strncmp(call, "ompd_get_icv_string_from_scope", len)) {
		char *comma = strrchr(rest, ',');
		if (!comma)
			return;
		char icv[64];
		snprintf(icv, sizeof(icv), "%s", comma + 2);
		icv[strcspn(icv, ")")] = 0;
		for (size_t i = 0; i < NICVS; i++) {
			if (strcmp(icvs[i].name, icv) == 0) {
				strcpy(comma, ")");
				snprintf(call, size, "%s%s", icvs[i].function, rest);
				return;
			}
		}
		return;
	}
	for (size_t i = 0; i < sizeof(renames) / sizeof(renames[0]); i++) {
		if (strlen(renames[i][0]) == len && !strncmp(call, renames[i][0], len)) {
			/* the 5.1 argument "(201811)" of ompd_initialize does not exist in the TR */
			snprintf(call, size, "%s%s", renames[i][1],
				 !strcmp(renames[i][1], "ompd_initialize") ? "" : rest);
			return;
		}
	}
}

/* Entry points without which a TR plugin cannot be hosted. */
static bool optional(const char *name)
{
	if (!strcmp(name, "ompd_get_display_control_vars") ||
	    !strcmp(name, "ompd_release_display_control_vars") || !strcmp(name, "ompd_get_threads") ||
	    !strcmp(name, "ompd_get_parallel_function"))
		return true;
	for (size_t i = 0; i < NICVS; i++)
		if (!strcmp(icvs[i].function, name))
			return true;
	return false;
}

void cq__ompd_tr_bind(void *dl, struct cq_core *c, struct cq_ompd_stats *s,
		      struct cq_ompd_api *api, json_t *missing)
{
	core = c;
	stats = s;
	memset(&tr, 0, sizeof(tr));
#define CQ_TR_LOAD(name, args)                                                               \
	tr.name = (ompd_rc_t(*) args)dlsym(dl, #name);                                       \
	if (!tr.name && !optional(#name))                                                    \
		json_array_append_new(missing, cq_json_str(#name));
	CQ_OMPD_TR_FUNCTIONS(CQ_TR_LOAD)
#undef CQ_TR_LOAD
	*api = (struct cq_ompd_api){
		.ompd_initialize = a_initialize,
		.ompd_get_api_version = a_get_api_version,
		.ompd_get_version_string = tr.ompd_get_version_string,
		.ompd_finalize = tr.ompd_finalize,
		.ompd_process_initialize = tr.ompd_process_initialize,
		.ompd_rel_address_space_handle = tr.ompd_release_address_space_handle,
		.ompd_get_omp_version = a_unsupported_version,
		.ompd_get_omp_version_string = a_unsupported_version_string,
		.ompd_get_thread_in_parallel = a_thread_in_parallel,
		.ompd_get_thread_handle = a_get_thread_handle,
		.ompd_rel_thread_handle = tr.ompd_release_thread_handle,
		.ompd_get_thread_id = a_get_thread_id,
		.ompd_get_curr_parallel_handle = tr.ompd_get_top_parallel_region,
		.ompd_get_enclosing_parallel_handle = tr.ompd_get_enclosing_parallel_handle,
		.ompd_get_task_parallel_handle = tr.ompd_get_task_parallel_handle,
		.ompd_rel_parallel_handle = tr.ompd_release_parallel_handle,
		.ompd_get_curr_task_handle = tr.ompd_get_top_task_region,
		.ompd_get_generating_task_handle = tr.ompd_get_generating_ancestor_task_region,
		.ompd_get_scheduling_task_handle = tr.ompd_get_scheduling_ancestor_task_region,
		.ompd_get_task_in_parallel = a_task_in_parallel,
		.ompd_rel_task_handle = tr.ompd_release_task_handle,
		.ompd_get_task_function = tr.ompd_get_task_function,
		.ompd_get_task_frame = a_get_task_frame,
		.ompd_enumerate_states = a_enumerate_states,
		.ompd_get_state = a_get_state,
		.ompd_get_display_control_vars = a_get_dcv,
		.ompd_rel_display_control_vars = a_rel_dcv,
		.ompd_enumerate_icvs = a_enumerate_icvs,
		.ompd_get_icv_from_scope = a_get_icv,
		.ompd_get_icv_string_from_scope = a_get_icv_string,
	};
}
