/* SPDX-License-Identifier: MIT */
/* The child side of an OMPD run: load the plugin, ask it everything, write one JSON record
 * per line. Every call into the plugin is announced first (cq_isolate_calling), so that a
 * crash names it. */
#include <dlfcn.h>
#include <jansson.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "base/decode.h"
#include "corelib/image.h"
#include "plugin/isolate.h"
#include "plugin.h"
#include "query.h"
#include "tr.h"

#define MAX_CHAIN 32     /* task and parallel chains longer than this are cut (and said) */
#define MAX_TEAM 4096
#define MAX_ICVS 256
#define MAX_REGIONS 1024 /* regions past this are described again for every thread */
#define MAX_TASKS 4096   /* likewise for tasks */

struct icv {
	ompd_icv_id_t id;
	const char *name;
	ompd_scope_t scope;
};

struct q {
	struct cq_core *core;
	struct cq_ompd_api api;
	ompd_address_space_handle_t *ah;
	struct icv icvs[MAX_ICVS];
	size_t nicvs;
	FILE *out;
	char call[200];
	uint64_t *pthreads; /* struct pthread address of each core thread (0: unknown) */
	const struct cq_isolate_deaths *skip; /* calls to skip (an earlier run died in them) */
	bool tr;            /* the plugin speaks the OMPD TR 2.001 (through tr_adapter.c) */
	/* regions described so far (their handles are kept to compare with) */
	ompd_parallel_handle_t *regions[MAX_REGIONS];
	size_t nregions;
	/* tasks described so far, likewise */
	ompd_task_handle_t *tasks[MAX_TASKS];
	size_t ntasks;
	__typeof__(ompd_task_handle_compare) *compare_task; /* optional */
	__typeof__(ompd_parallel_handle_compare) *compare_parallel; /* optional */
	json_t *states;     /* the runtime's state names (borrowed) */
	__typeof__(ompd_get_tool_data) *get_tool_data; /* optional (the TR has none) */
};

static void emit(struct q *q, json_t *rec)
{
	char *text = json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER);
	cq_isolate_record(q->out, text);
	free(text);
	json_decref(rec);
}

/* Announce a plugin call (for crash reports); true if an earlier run crashed in this very
 * call, which is then skipped. */
static bool calling(struct q *q, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool calling(struct q *q, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(q->call, sizeof(q->call), fmt, ap);
	va_end(ap);
	if (q->tr)
		cq__ompd_tr_rename(q->call, sizeof(q->call));
	return cq_isolate_calling_unless_died(q->skip, q->call);
}

/* Make a plugin call unless an earlier run crashed in it. */
#define CALL(q, call, ...) (calling(q, __VA_ARGS__) ? CQ_OMPD_RC_SKIPPED : (call))

static json_t *rc_json(ompd_rc_t rc)
{
	return cq_json_str(cq_ompd_rc_name(rc));
}

static json_t *addr_json(uint64_t v)
{
	char b[24];
	snprintf(b, sizeof(b), "0x%" PRIx64, v);
	return cq_json_str(b);
}

/* FACTS bug E: for 32-bit targets libompd sign-extends values of the target's width, so
 * addresses at or above 0x80000000 come back as 0xffffffff8.......; coreq restores them
 * and says so. NULL when @p a needs no correction. */
static const char *fix_address(struct q *q, uint64_t *a)
{
	if (cq_target_ptr_size(q->core->target) != 4 || *a <= UINT32_MAX)
		return NULL;
	if ((*a >> 32) == UINT32_MAX && (*a & 0x80000000u)) {
		*a &= UINT32_MAX;
		return "known plugin bug E: the plugin sign-extended this 32-bit address; coreq corrected it";
	}
	return "beyond the 32-bit target's address space";
}

/* An address with its symbol, e.g. a task function. */
static json_t *code_json(struct q *q, uint64_t a)
{
	json_t *o = json_object();
	const char *flag = fix_address(q, &a);
	json_object_set_new(o, "address", addr_json(a));
	if (flag)
		json_object_set_new(o, "flag", cq_json_str(flag));
	char *s = cq_core_symbol_name(q->core, a, false);
	json_object_set_new(o, "symbol", s ? cq_json_str(s) : json_null());
	free(s);
	return o;
}

/* ICVs of one scope for @p handle, compactly: name -> the value (a number), or the string
 * when only that exists, or {value, string} when both do, or {rc} when neither does. */
static json_t *icvs_json(struct q *q, void *handle, ompd_scope_t scope, const char *what)
{
	json_t *o = json_object();
	for (size_t i = 0; i < q->nicvs; i++) {
		if (q->icvs[i].scope != scope)
			continue;
		const char *name = q->icvs[i].name;
		ompd_word_t v;
		ompd_rc_t rc = CALL(q, q->api.ompd_get_icv_from_scope(handle, scope, q->icvs[i].id, &v),
				    "ompd_get_icv_from_scope(%s, %s)", what, name);
		const char *str = NULL;
		ompd_rc_t src = CALL(q, q->api.ompd_get_icv_string_from_scope(handle, scope, q->icvs[i].id, &str),
				     "ompd_get_icv_string_from_scope(%s, %s)", what, name);
		bool has_str = src == ompd_rc_ok && str;
		json_t *e;
		if (rc == ompd_rc_ok && has_str)
			e = json_pack("{s:I, s:o}", "value", (json_int_t)v, "string", cq_json_str(str));
		else if (rc == ompd_rc_ok)
			e = json_integer(v);
		else if (has_str)
			e = cq_json_str(str);
		else
			e = json_pack("{s:o}", "rc", rc_json(rc));
		if (has_str)
			free((void *)str); /* allocated by the plugin through our alloc_memory */
		json_object_set_new(o, name, e);
	}
	return o;
}

/* Marks fields the plugin did not fill in (LLVM's libompd leaves frame_flag alone). */
#define UNSET_WORD INT64_MIN

static json_t *frame_json(struct q *q, const ompd_frame_info_t *f)
{
	json_t *o = code_json(q, f->frame_address.address);
	json_object_set_new(o, "flag", f->frame_flag == UNSET_WORD ? json_null() :
				       json_integer(f->frame_flag));
	return o;
}

/* What an OMPT tool keeps for a thread, region or task (ompt_data_t: a word and a
 * pointer), read through the plugin: {value, ptr}, or {rc}; NULL when the plugin has no
 * ompd_get_tool_data (it is optional: the OMPD TR has none). */
static json_t *tool_data_json(struct q *q, void *handle, ompd_scope_t scope, const char *what)
{
	if (!q->get_tool_data)
		return NULL;
	ompd_word_t value = 0;
	ompd_address_t ptr = {0, 0};
	ompd_rc_t rc = CALL(q, q->get_tool_data(handle, scope, &value, &ptr), "ompd_get_tool_data(%s)", what);
	if (rc != ompd_rc_ok)
		return json_pack("{s:o}", "rc", rc_json(rc));
	uint64_t pv = ptr.address;
	const char *flag = fix_address(q, &pv);
	json_t *o = json_pack("{s:I, s:o}", "value", (json_int_t)value, "ptr", addr_json(pv));
	if (flag)
		json_object_set_new(o, "ptr_flag", cq_json_str(flag));
	return o;
}

static void set_tool_data(json_t *o, json_t *td)
{
	if (td)
		json_object_set_new(o, "tool_data", td);
}

/* One task: function, frames, ICVs. */
static json_t *task_json(struct q *q, ompd_task_handle_t *task, const char *what)
{
	json_t *o = json_object();
	ompd_address_t entry;
	ompd_rc_t rc = CALL(q, q->api.ompd_get_task_function(task, &entry), "ompd_get_task_function(%s)", what);
	json_object_set_new(o, "function", rc == ompd_rc_ok ? code_json(q, entry.address) : json_null());
	if (rc != ompd_rc_ok)
		json_object_set_new(o, "function_rc", rc_json(rc));
	ompd_frame_info_t exit_f = {{0, 0}, UNSET_WORD}, enter_f = {{0, 0}, UNSET_WORD};
	rc = CALL(q, q->api.ompd_get_task_frame(task, &exit_f, &enter_f), "ompd_get_task_frame(%s)", what);
	if (rc == ompd_rc_ok) {
		json_object_set_new(o, "exit_frame", frame_json(q, &exit_f));
		json_object_set_new(o, "enter_frame", frame_json(q, &enter_f));
	} else {
		json_object_set_new(o, "exit_frame", json_null());
		json_object_set_new(o, "enter_frame", json_null());
		json_object_set_new(o, "frames_rc", rc_json(rc));
	}
	json_object_set_new(o, "icvs", icvs_json(q, task, ompd_scope_task, what));
	json_object_set_new(o, "implicit_task_icvs", icvs_json(q, task, ompd_scope_implicit_task, what));
	set_tool_data(o, tool_data_json(q, task, ompd_scope_task, what));
	return o;
}

/* The chain of tasks reached by @p next from @p first (first not included). */
/* Id of the task @p task denotes in the task table, describing it (one "task" record) the
 * first time. *kept tells whether the table now holds the handle (then the caller must
 * not release it). Tasks are shared by many threads' chains: each is described once. */
static int task_ref(struct q *q, ompd_task_handle_t *task, const char *what, bool *kept)
{
	*kept = false;
	size_t n = q->ntasks < MAX_TASKS ? q->ntasks : MAX_TASKS;
	for (size_t i = 0; q->compare_task && i < n; i++) {
		int cmp = 1;
		ompd_rc_t rc = CALL(q, q->compare_task(task, q->tasks[i], &cmp),
				    "ompd_task_handle_compare(%s, task %zu)", what, i);
		if (rc == ompd_rc_ok && cmp == 0)
			return (int)i;
	}
	int id = (int)q->ntasks;
	json_t *rec = task_json(q, task, what);
	json_object_set_new(rec, "record", cq_json_str("task"));
	json_object_set_new(rec, "id", json_integer(id));
	emit(q, rec);
	if (q->ntasks < MAX_TASKS) {
		q->tasks[q->ntasks] = task;
		*kept = true;
	}
	q->ntasks++;
	return id;
}

/* The ids of the tasks reached by @p next from @p first (first not included). */
static json_t *task_chain(struct q *q, ompd_task_handle_t *first,
			  ompd_rc_t (*next)(ompd_task_handle_t *, ompd_task_handle_t **),
			  const char *what, json_t **rc_out)
{
	json_t *a = json_array();
	ompd_task_handle_t *cur = first, *n = NULL;
	bool cur_kept = true; /* first belongs to the caller */
	const char *fn = next == q->api.ompd_get_generating_task_handle ?
			 "ompd_get_generating_task_handle" : "ompd_get_scheduling_task_handle";
	*rc_out = cq_json_str("cut: longer than 32");
	for (int depth = 0; depth < MAX_CHAIN; depth++) {
		char label[128];
		snprintf(label, sizeof(label), "%s[%d]", what, depth);
		bool skip = calling(q, "%s(%s)", fn, label);
		ompd_rc_t rc = skip ? CQ_OMPD_RC_SKIPPED : next(cur, &n);
		if (!cur_kept)
			CALL(q, q->api.ompd_rel_task_handle(cur), "ompd_rel_task_handle(%s)", label);
		if (rc != ompd_rc_ok) {
			json_decref(*rc_out);
			*rc_out = rc == ompd_rc_unavailable ? json_null() : rc_json(rc);
			return a;
		}
		json_array_append_new(a, json_integer(task_ref(q, n, label, &cur_kept)));
		cur = n;
	}
	if (!cur_kept)
		CALL(q, q->api.ompd_rel_task_handle(cur), "ompd_rel_task_handle(%s end)", what);
	return a;
}

/* The kernel thread id of an OpenMP thread handle: the plugin gives pthread_t (LLVM's
 * libompd supports only that kind), which glibc makes the address of struct pthread. */
static json_t *thread_id_json(struct q *q, ompd_thread_handle_t *th, const char *what)
{
	uint8_t raw[8] = {0};
	unsigned size = cq_target_ptr_size(q->core->target);
	ompd_rc_t rc = CALL(q, q->api.ompd_get_thread_id(th, CQ_OMPD_THREAD_ID_PTHREAD, size, raw), "ompd_get_thread_id(%s)", what);
	if (rc != ompd_rc_ok)
		return json_pack("{s:n, s:n, s:o}", "pthread", "tid", "rc", rc_json(rc));
	uint64_t v = 0, swapped;
	memcpy(&v, raw, sizeof(v)); /* host order, as the interface promises */
	if (size == 4)
		v = (uint32_t)v;
	uint8_t b[8];
	memcpy(b, raw, 8);
	cq_bswap_units(b, size, 1);
	swapped = 0;
	memcpy(&swapped, b, sizeof(swapped));
	if (size == 4)
		swapped = (uint32_t)swapped;
	json_t *o = json_object();
	json_object_set_new(o, "pthread", addr_json(v));
	for (size_t i = 0; i < q->core->nthreads; i++) {
		if (q->pthreads[i] && q->pthreads[i] == v) {
			json_object_set_new(o, "tid", json_integer(q->core->threads[i].tid));
			return o;
		}
	}
	for (size_t i = 0; i < q->core->nthreads; i++) {
		if (q->pthreads[i] && q->pthreads[i] == swapped && cq_target_needs_bswap(q->core->target)) {
			json_object_set_new(o, "tid", json_integer(q->core->threads[i].tid));
			json_object_set_new(o, "flag", cq_json_str(
				"known plugin bug J: ompd_get_thread_id returned target-order bytes; coreq corrected them"));
			return o;
		}
	}
	json_object_set_new(o, "tid", json_null());
	json_object_set_new(o, "flag", cq_json_str("matches no thread of the core"));
	return o;
}

static const char *icv_named(json_t *icvs, const char *name, json_int_t *v)
{
	json_t *e = json_object_get(icvs, name);
	if (json_is_object(e))
		e = json_object_get(e, "value");
	if (!json_is_integer(e))
		return NULL;
	*v = json_integer_value(e);
	return name;
}

static json_t *state_name(json_t *states, ompd_word_t v)
{
	json_t *n = json_object_get(states, "names");
	char key[32];
	snprintf(key, sizeof(key), "%lld", (long long)v);
	json_t *s = json_object_get(n, key);
	return s ? json_incref(s) : json_null();
}

static json_t *parallel_json(struct q *q, ompd_parallel_handle_t *par, const char *what)
{
	json_t *o = json_object();
	json_t *icvs = icvs_json(q, par, ompd_scope_parallel, what);
	json_int_t size = -1, level = -1, active = -1;
	(void)(icv_named(icvs, "ompd-team-size-var", &size) || icv_named(icvs, "team-size-var", &size));
	icv_named(icvs, "levels-var", &level);
	icv_named(icvs, "active-levels-var", &active);
	json_object_set_new(o, "team_size", size >= 0 ? json_integer(size) : json_null());
	json_object_set_new(o, "level", level >= 0 ? json_integer(level) : json_null());
	json_object_set_new(o, "active_level", active >= 0 ? json_integer(active) : json_null());
	/* The region's function: the entry of its implicit task 0. */
	ompd_task_handle_t *t0;
	ompd_rc_t rc = CALL(q, q->api.ompd_get_task_in_parallel(par, 0, &t0), "ompd_get_task_in_parallel(%s, 0)", what);
	json_t *fn = json_null();
	if (rc == ompd_rc_ok) {
		ompd_address_t entry;
		if (CALL(q, q->api.ompd_get_task_function(t0, &entry), "ompd_get_task_function(%s implicit task 0)", what) == ompd_rc_ok)
			fn = code_json(q, entry.address);
		CALL(q, q->api.ompd_rel_task_handle(t0), "ompd_rel_task_handle(%s implicit task 0)", what);
	}
	json_object_set_new(o, "function", fn);
	/* Threads of the team, by their kernel thread id. */
	json_t *team = json_array();
	for (json_int_t i = 0; i < size && i < MAX_TEAM; i++) {
		ompd_thread_handle_t *th;
		rc = CALL(q, q->api.ompd_get_thread_in_parallel(par, (int)i, &th), "ompd_get_thread_in_parallel(%s, %lld)", what, (long long)i);
		if (rc != ompd_rc_ok) {
			json_array_append_new(team, json_pack("{s:I, s:n, s:o}", "thread_num", i, "tid",
							      "rc", rc_json(rc)));
			continue;
		}
		char label[128];
		snprintf(label, sizeof(label), "%s thread %lld", what, (long long)i);
		json_t *m = thread_id_json(q, th, label);
		json_object_set_new(m, "thread_num", json_integer(i));
		/* the member's state through the team's handle: a thread the runtime has just
		 * made (its own handle not set up yet: ompd_get_thread_handle fails) has one */
		ompd_word_t state;
		ompd_wait_id_t wait_id;
		rc = CALL(q, q->api.ompd_get_state(th, &state, &wait_id), "ompd_get_state(%s)", label);
		if (rc == ompd_rc_ok)
			json_object_set_new(m, "state", json_pack("{s:I, s:o}", "value", (json_int_t)state, "name",
								 state_name(q->states, state)));
		else
			json_object_set_new(m, "state", json_pack("{s:n, s:o}", "value", "rc", rc_json(rc)));
		set_tool_data(m, tool_data_json(q, th, ompd_scope_thread, label));
		json_array_append_new(team, m);
		CALL(q, q->api.ompd_rel_thread_handle(th), "ompd_rel_thread_handle(%s thread %lld)", what, (long long)i);
	}
	json_object_set_new(o, "team", team);
	json_object_set_new(o, "icvs", icvs);
	set_tool_data(o, tool_data_json(q, par, ompd_scope_parallel, what));
	return o;
}

/* Id of a region already described that @p par denotes, or -1. The plugin's compare is
 * trusted only for equality and with the same team size: LLVM's truncates a 64-bit
 * difference to int (FACTS bug I). */
static int known_region(struct q *q, ompd_parallel_handle_t *par, const char *what)
{
	if (!q->compare_parallel)
		return -1;
	size_t n = q->nregions < MAX_REGIONS ? q->nregions : MAX_REGIONS;
	for (size_t i = 0; i < n; i++) {
		int cmp = 1;
		ompd_rc_t rc = CALL(q, q->compare_parallel(par, q->regions[i], &cmp),
				    "ompd_parallel_handle_compare(%s, region %zu)", what, i);
		if (rc == ompd_rc_ok && cmp == 0)
			return (int)i;
	}
	return -1;
}


static void query_thread(struct q *q, struct cq_thread *th, json_t *states)
{
	json_t *o = json_object();
	json_object_set_new(o, "record", cq_json_str("thread"));
	json_object_set_new(o, "tid", json_integer(th->tid));
	ompd_thread_handle_t *h;
	uint64_t tid = (uint32_t)th->tid;
	ompd_rc_t rc = CALL(q, q->api.ompd_get_thread_handle(q->ah, CQ_OMPD_THREAD_ID_LWP, sizeof(tid), &tid, &h), "ompd_get_thread_handle(thread %d)", th->tid);
	if (rc != ompd_rc_ok) {
		json_object_set_new(o, "openmp", json_false());
		json_object_set_new(o, "rc", rc_json(rc));
		emit(q, o);
		return;
	}
	json_object_set_new(o, "openmp", json_true());
	char what[64];
	snprintf(what, sizeof(what), "thread %d", th->tid);
	json_object_set_new(o, "thread_id", thread_id_json(q, h, what));
	ompd_word_t state;
	ompd_wait_id_t wait_id;
	rc = CALL(q, q->api.ompd_get_state(h, &state, &wait_id), "ompd_get_state(%s)", what);
	if (rc == ompd_rc_ok) {
		uint64_t w = wait_id;
		const char *flag = fix_address(q, &w);
		json_object_set_new(o, "state", json_pack("{s:I, s:o, s:o}", "value", (json_int_t)state,
							 "name", state_name(states, state),
							 "wait_id", addr_json(w)));
		if (flag)
			json_object_set_new(json_object_get(o, "state"), "wait_id_flag", cq_json_str(flag));
	}
	else
		json_object_set_new(o, "state", json_pack("{s:n, s:o}", "value", "rc", rc_json(rc)));
	json_object_set_new(o, "icvs", icvs_json(q, h, ompd_scope_thread, what));
	set_tool_data(o, tool_data_json(q, h, ompd_scope_thread, what));

	ompd_task_handle_t *task;
	rc = CALL(q, q->api.ompd_get_curr_task_handle(h, &task), "ompd_get_curr_task_handle(%s)", what);
	if (rc == ompd_rc_ok) {
		bool kept;
		char label[96];
		json_object_set_new(o, "current_task", json_integer(task_ref(q, task, what, &kept)));
		json_t *rc_gen, *rc_sched;
		snprintf(label, sizeof(label), "%s generating", what);
		json_object_set_new(o, "generating_chain",
				    task_chain(q, task, q->api.ompd_get_generating_task_handle, label, &rc_gen));
		json_object_set_new(o, "generating_chain_rc", rc_gen);
		snprintf(label, sizeof(label), "%s scheduling", what);
		json_object_set_new(o, "scheduling_chain",
				    task_chain(q, task, q->api.ompd_get_scheduling_task_handle, label, &rc_sched));
		json_object_set_new(o, "scheduling_chain_rc", rc_sched);
		if (!kept)
			CALL(q, q->api.ompd_rel_task_handle(task), "ompd_rel_task_handle(%s current task)", what);
	} else {
		json_object_set_new(o, "current_task", json_null());
		json_object_set_new(o, "current_task_rc", rc_json(rc));
	}

	/* The chain names regions by id; each region is described once, when first met. */
	json_t *chain = json_array();
	ompd_parallel_handle_t *par, *outer;
	rc = CALL(q, q->api.ompd_get_curr_parallel_handle(h, &par), "ompd_get_curr_parallel_handle(%s)", what);
	for (int depth = 0; rc == ompd_rc_ok && depth < MAX_CHAIN; depth++) {
		char label[96];
		snprintf(label, sizeof(label), "%s parallel[%d]", what, depth);
		int id = known_region(q, par, label);
		bool keep = id < 0 && q->nregions < MAX_REGIONS;
		if (id < 0) {
			id = (int)q->nregions;
			json_t *reg = parallel_json(q, par, label);
			json_object_set_new(reg, "record", cq_json_str("parallel"));
			json_object_set_new(reg, "id", json_integer(id));
			emit(q, reg);
			if (keep)
				q->regions[q->nregions] = par;
			q->nregions++;
		}
		json_array_append_new(chain, json_integer(id));
		rc = CALL(q, q->api.ompd_get_enclosing_parallel_handle(par, &outer), "ompd_get_enclosing_parallel_handle(%s)", label);
		if (!keep)
			CALL(q, q->api.ompd_rel_parallel_handle(par), "ompd_rel_parallel_handle(%s)", label);
		par = outer;
	}
	json_object_set_new(o, "parallel_chain", chain);
	json_object_set_new(o, "parallel_chain_rc", rc == ompd_rc_unavailable || rc == ompd_rc_ok ?
			    json_null() : rc_json(rc));
	CALL(q, q->api.ompd_rel_thread_handle(h), "ompd_rel_thread_handle(%s)", what);
	emit(q, o);
}

static json_t *states_json(struct q *q)
{
	json_t *names = json_object();
	ompd_word_t cur = 0x102 /* ompt_state_undefined */, next, more = 1;
	const char *name;
	for (int i = 0; more && i < 512; i++) {
		if (CALL(q, q->api.ompd_enumerate_states(q->ah, cur, &next, &name, &more), "ompd_enumerate_states(%lld)", (long long)cur) != ompd_rc_ok)
			break;
		char key[32];
		snprintf(key, sizeof(key), "%lld", (long long)next);
		json_object_set_new(names, key, cq_json_str(name ? name : "?"));
		cur = next;
	}
	return json_pack("{s:o}", "names", names);
}

static void enumerate_icvs(struct q *q)
{
	ompd_icv_id_t cur = 0 /* ompd_icv_undefined */, next;
	const char *name;
	ompd_scope_t scope;
	int more = 1;
	while (more && q->nicvs < MAX_ICVS) {
		if (CALL(q, q->api.ompd_enumerate_icvs(q->ah, cur, &next, &name, &scope, &more), "ompd_enumerate_icvs(%llu)", (unsigned long long)cur) != ompd_rc_ok)
			break;
		q->icvs[q->nicvs++] = (struct icv){next, name ? name : "?", scope};
		cur = next;
	}
}

int cq__ompd_child(void *arg, const struct cq_isolate_deaths *skip, FILE *out)
{
	const struct cq__ompd_job *job = arg;
	struct q q = {.core = job->core, .out = out, .skip = skip};
	struct cq_ompd_stats stats = {.log = stderr};
	calling(&q, "dlopen(%s)", job->plugin);
	const char *why;
	void *dl = cq_plugin_load_dlopen(job->load, &why);
	if (!dl) {
		emit(&q, json_pack("{s:s, s:o}", "record", "error", "message", cq_json_str(why)));
		emit(&q, json_pack("{s:s}", "record", "done"));
		return 0;
	}
	/* Which ABI: the 2016 TR has ompd_get_version, OpenMP 5.1 ompd_get_api_version. */
	json_t *missing = json_array();
	q.tr = cq__ompd_is_tr(dl);
	if (q.tr) {
		cq__ompd_tr_bind(dl, q.core, &stats, &q.api, missing);
	} else {
#define CQ_OMPD_LOAD(name)                                                                   \
	if (!(q.api.name = (__typeof__(q.api.name))dlsym(dl, #name)))                        \
		json_array_append_new(missing, cq_json_str(#name));
		CQ_OMPD_FUNCTIONS(CQ_OMPD_LOAD)
#undef CQ_OMPD_LOAD
	}
	const char *abi = q.tr ? "OMPD TR 2.001 (ompd_get_version)" : "OpenMP 5.1 (201811)";
	if (json_array_size(missing)) {
		emit(&q, json_pack("{s:s, s:s}", "record", "plugin", "abi", abi));
		emit(&q, json_pack("{s:s, s:s, s:o}", "record", "error", "message",
				   q.tr ? "the plugin lacks OMPD TR 2.001 entry points" :
					  "the plugin lacks OpenMP 5.1 OMPD entry points",
				   "missing", missing));
		emit(&q, json_pack("{s:s}", "record", "done"));
		return 0;
	}
	json_decref(missing);
	q.compare_parallel = (__typeof__(q.compare_parallel))dlsym(dl, "ompd_parallel_handle_compare");
	q.compare_task = (__typeof__(q.compare_task))dlsym(dl, "ompd_task_handle_compare");
	if (!q.tr)
		q.get_tool_data = (__typeof__(q.get_tool_data))dlsym(dl, "ompd_get_tool_data");
	const ompd_callbacks_t *cb = cq_ompd_callbacks(q.core, &stats);
	json_t *plugin = json_object();
	json_object_set_new(plugin, "record", cq_json_str("plugin"));
	json_object_set_new(plugin, "abi", cq_json_str(abi));
	ompd_word_t api;
	const char *vs = NULL;
	json_object_set_new(plugin, "api_version", CALL(&q, q.api.ompd_get_api_version(&api), "ompd_get_api_version") == ompd_rc_ok ?
			    json_integer(api) : json_null());
	json_object_set_new(plugin, "version_string",
			    CALL(&q, q.api.ompd_get_version_string(&vs), "ompd_get_version_string") == ompd_rc_ok && vs ? cq_json_str(vs) : json_null());
	json_int_t got = json_integer_value(json_object_get(plugin, "api_version"));
	if (q.tr ? got < CQ_OMPD_TR_VERSION_MIN || got > CQ_OMPD_TR_VERSION_MAX :
		   got != CQ_OMPD_API_VERSION) {
		emit(&q, plugin);
		emit(&q, json_pack("{s:s, s:s}", "record", "error", "message", q.tr ?
				   "the plugin has the TR 2.001 entry points but its ompd_get_version is not a TR version (201400..201712): refused, its ABI is unknown" :
				   "the plugin's ompd_get_api_version is not 201811: this coreq drives the OpenMP 5.1 OMPD ABI (ompd_get_api_version 201811) and the TR 2.001 one (ompd_get_version)"));
		emit(&q, json_pack("{s:s}", "record", "done"));
		return 0;
	}
	ompd_rc_t rc = CALL(&q, q.api.ompd_initialize(CQ_OMPD_API_VERSION, cb), "ompd_initialize(%d)", CQ_OMPD_API_VERSION);
	json_object_set_new(plugin, "initialize_rc", rc_json(rc));
	emit(&q, plugin);
	if (rc != ompd_rc_ok) {
		emit(&q, json_pack("{s:s, s:s}", "record", "error", "message", "ompd_initialize failed"));
		emit(&q, json_pack("{s:s}", "record", "done"));
		return 0;
	}

	rc = CALL(&q, q.api.ompd_process_initialize(cq_ompd_aspace_context(), &q.ah), "ompd_process_initialize");
	json_t *proc = json_object();
	json_object_set_new(proc, "record", cq_json_str("process"));
	json_object_set_new(proc, "initialize_rc", rc_json(rc));
	if (rc != ompd_rc_ok) {
		json_t *m = json_array();
		for (unsigned i = 0; i < stats.nmissing; i++)
			json_array_append_new(m, cq_json_str(stats.missing[i]));
		json_object_set_new(proc, "missing_symbols", m);
		emit(&q, proc);
		emit(&q, json_pack("{s:s}", "record", "done"));
		return 0;
	}
	ompd_word_t ver;
	const char *vstr = NULL;
	json_object_set_new(proc, "omp_version", CALL(&q, q.api.ompd_get_omp_version(q.ah, &ver), "ompd_get_omp_version") == ompd_rc_ok ?
			    json_integer(ver) : json_null());
	rc = CALL(&q, q.api.ompd_get_omp_version_string(q.ah, &vstr), "ompd_get_omp_version_string");
	json_object_set_new(proc, "omp_version_string", rc == ompd_rc_ok && vstr ? cq_json_str(vstr) : json_null());
	json_t *states = states_json(&q);
	q.states = states;
	json_object_set_new(proc, "states", json_incref(states));
	enumerate_icvs(&q);
	json_object_set_new(proc, "icvs", icvs_json(&q, q.ah, ompd_scope_address_space, "address space"));
	const char *const *dcv = NULL;
	rc = CALL(&q, q.api.ompd_get_display_control_vars(q.ah, &dcv), "ompd_get_display_control_vars");
	json_t *d = json_array();
	for (size_t i = 0; rc == ompd_rc_ok && dcv && dcv[i] && i < 1024; i++)
		json_array_append_new(d, cq_json_str(dcv[i]));
	json_object_set_new(proc, "display_control_vars", rc == ompd_rc_ok ? d : json_null());
	if (rc != ompd_rc_ok) {
		json_decref(d);
		json_object_set_new(proc, "display_control_vars_rc", rc_json(rc));
	} else if (dcv) {
		CALL(&q, q.api.ompd_rel_display_control_vars(&dcv), "ompd_rel_display_control_vars");
	}
	emit(&q, proc);

	q.pthreads = calloc(q.core->nthreads ? q.core->nthreads : 1, sizeof(*q.pthreads));
	for (size_t i = 0; q.pthreads && i < q.core->nthreads; i++) {
		struct cq_error *err = cq_core_thread_pthread(q.core, &q.core->threads[i], &q.pthreads[i]);
		cq_error_destroy(err);
	}
	for (size_t i = 0; q.pthreads && i < q.core->nthreads; i++)
		query_thread(&q, &q.core->threads[i], states);
	free(q.pthreads);
	for (size_t i = 0; i < q.nregions && i < MAX_REGIONS; i++)
		CALL(&q, q.api.ompd_rel_parallel_handle(q.regions[i]), "ompd_rel_parallel_handle(region %zu)", i);
	for (size_t i = 0; i < q.ntasks && i < MAX_TASKS; i++)
		CALL(&q, q.api.ompd_rel_task_handle(q.tasks[i]), "ompd_rel_task_handle(task %zu)", i);
	json_decref(states);

	json_t *m = json_array();
	for (unsigned i = 0; i < stats.nmissing; i++)
		json_array_append_new(m, cq_json_str(stats.missing[i]));
	emit(&q, json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o}", "record", "callbacks",
			   "reads", (json_int_t)stats.reads, "read_faults", (json_int_t)stats.read_faults,
			   "lookups", (json_int_t)stats.lookups, "lookup_misses", (json_int_t)stats.lookup_misses,
			   "allocs", (json_int_t)stats.allocs, "refused_allocs", (json_int_t)stats.refused_allocs,
			   "writes_refused", (json_int_t)stats.writes_refused, "missing_symbols", m));
	CALL(&q, q.api.ompd_rel_address_space_handle(q.ah), "ompd_rel_address_space_handle");
	CALL(&q, q.api.ompd_finalize(), "ompd_finalize");
	cq_isolate_calling(NULL);
	emit(&q, json_pack("{s:s}", "record", "done"));
	return 0;
}
