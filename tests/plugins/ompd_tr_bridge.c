/* SPDX-License-Identifier: MIT */
/* A TR 2.001 plugin over a real OpenMP 5.1 one: it exports the TR's entry points
 * (ompd/tr_abi.h) and answers them with the plugin named by $COREQ_TR_BRIDGE_INNER
 * (LLVM's libompd.so), to which it gives OpenMP 5.1 callbacks made of the host's TR
 * callbacks. No TR plugin is packaged anywhere; this lets the test suite drive coreq's TR
 * host (tr_callbacks.c, tr_adapter.c) with a real runtime's plugin and compare the report
 * with the direct 5.1 run on the same core.
 *
 * Translations: TR operating-system ids are in the target's byte order, 5.1 ones in the
 * host's; 5.1 states (ompt_state_*) become TR states (§15.9); 5.1 vectors are built from
 * the indexed 5.1 calls; ICVs are looked up by name and used only where their 5.1 scope is
 * the TR accessor's handle kind. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tr_prototypes.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_VECTOR 4096

static const cq_tr_callbacks *tr;
static void *dl;

/* The inner plugin's 5.1 entry points. */
static struct {
#define INNER(X)                                                                             \
	X(ompd_get_version_string, ompd_get_version_string) X(ompd_finalize, ompd_finalize)  \
	X(ompd_initialize, ompd_initialize_51)                                               \
	X(ompd_process_initialize, ompd_process_initialize)                                  \
	X(ompd_rel_address_space_handle, ompd_rel_address_space_handle)                      \
	X(ompd_get_thread_in_parallel, ompd_get_thread_in_parallel_51)                       \
	X(ompd_get_thread_handle, ompd_get_thread_handle_51)                                 \
	X(ompd_rel_thread_handle, ompd_rel_thread_handle)                                    \
	X(ompd_get_thread_id, ompd_get_thread_id)                                            \
	X(ompd_get_curr_parallel_handle, ompd_get_curr_parallel_handle)                      \
	X(ompd_get_enclosing_parallel_handle, ompd_get_enclosing_parallel_handle)            \
	X(ompd_get_task_parallel_handle, ompd_get_task_parallel_handle)                      \
	X(ompd_rel_parallel_handle, ompd_rel_parallel_handle)                                \
	X(ompd_parallel_handle_compare, ompd_parallel_handle_compare)                        \
	X(ompd_get_curr_task_handle, ompd_get_curr_task_handle)                              \
	X(ompd_get_generating_task_handle, ompd_get_generating_task_handle)                  \
	X(ompd_get_scheduling_task_handle, ompd_get_scheduling_task_handle)                  \
	X(ompd_get_task_in_parallel, ompd_get_task_in_parallel)                              \
	X(ompd_rel_task_handle, ompd_rel_task_handle)                                        \
	X(ompd_task_handle_compare, ompd_task_handle_compare)                                \
	X(ompd_get_task_function, ompd_get_task_function)                                    \
	X(ompd_get_task_frame, ompd_get_task_frame_51) X(ompd_get_state, ompd_get_state_51)  \
	X(ompd_get_display_control_vars, ompd_get_display_control_vars)                      \
	X(ompd_rel_display_control_vars, ompd_rel_display_control_vars)                      \
	X(ompd_enumerate_icvs, ompd_enumerate_icvs)                                          \
	X(ompd_get_icv_from_scope, ompd_get_icv_from_scope)
#define FIELD(sym, proto) __typeof__(proto) *sym;
	INNER(FIELD)
#undef FIELD
} in;

/* ---- 5.1 callbacks for the inner plugin, made of the host's TR callbacks ---- */

static ompd_rc_t b_alloc(ompd_size_t n, void **p) { return tr->d_alloc_memory(n, p); }
static ompd_rc_t b_free(void *p) { return tr->d_free_memory(p); }
static ompd_rc_t b_print(const char *s, int category) { return tr->print_string(s); }

static ompd_rc_t b_sizeof(ompd_address_space_context_t *ctx, ompd_device_type_sizes_t *s)
{
	cq_tr_type_sizes t;
	ompd_rc_t rc = tr->t_sizeof_prim_type(ctx, &t);
	if (rc == ompd_rc_ok)
		*s = (ompd_device_type_sizes_t){(uint8_t)t.sizeof_char, (uint8_t)t.sizeof_short,
						(uint8_t)t.sizeof_int, (uint8_t)t.sizeof_long,
						(uint8_t)t.sizeof_long_long, (uint8_t)t.sizeof_pointer};
	return rc;
}

static ompd_rc_t b_symbol(ompd_address_space_context_t *ctx, ompd_thread_context_t *tctx,
			  const char *name, ompd_address_t *addr, const char *file_name)
{
	return tr->t_symbol_addr_lookup(ctx, tctx, name, addr); /* the TR has no scoping */
}

static ompd_rc_t b_read(ompd_address_space_context_t *ctx, ompd_thread_context_t *tctx,
			const ompd_address_t *addr, ompd_size_t n, void *buf)
{
	return n > INT64_MAX ? ompd_rc_bad_input : tr->t_read_memory(ctx, tctx, addr, (int64_t)n, buf);
}

static ompd_rc_t b_read_string(ompd_address_space_context_t *ctx, ompd_thread_context_t *tctx,
			       const ompd_address_t *addr, ompd_size_t n, void *buf)
{
	char *s = buf;
	for (ompd_size_t i = 0; i < n; i++) {
		ompd_address_t a = {addr->segment, addr->address + i};
		ompd_rc_t rc = tr->t_read_memory(ctx, tctx, &a, 1, s + i);
		if (rc != ompd_rc_ok)
			return rc;
		if (!s[i])
			return ompd_rc_ok;
	}
	return ompd_rc_incomplete;
}

static ompd_rc_t b_write(ompd_address_space_context_t *ctx, ompd_thread_context_t *tctx,
			 const ompd_address_t *addr, ompd_size_t n, const void *buf)
{
	return tr->t_write_memory(ctx, tctx, addr, (int64_t)n, buf);
}

static ompd_rc_t b_to_host(ompd_address_space_context_t *ctx, const void *src, ompd_size_t unit,
			   ompd_size_t count, void *out)
{
	return unit > 64 || count > INT32_MAX ? ompd_rc_bad_input :
	       tr->target_to_host(ctx, src, (int)unit, (int)count, out);
}

static ompd_rc_t b_to_target(ompd_address_space_context_t *ctx, const void *src, ompd_size_t unit,
			     ompd_size_t count, void *out)
{
	return unit > 64 || count > INT32_MAX ? ompd_rc_bad_input :
	       tr->host_to_target(ctx, src, (int)unit, (int)count, out);
}

static ompd_address_space_context_t *actx;

/* 5.1 ids are in host order, the TR's in the target's. */
static ompd_rc_t b_thread_context(ompd_address_space_context_t *ctx, ompd_thread_id_t kind,
				  ompd_size_t size, const void *id, ompd_thread_context_t **ret)
{
	uint8_t t[8];
	if (size > sizeof(t))
		return ompd_rc_bad_input;
	ompd_rc_t rc = tr->host_to_target(ctx, id, (int)size, 1, t);
	return rc != ompd_rc_ok ? rc : tr->get_thread_context_for_osthread(ctx, kind, size, t, ret);
}

static const ompd_callbacks_t table51 = {
	.alloc_memory = b_alloc, .free_memory = b_free, .print_string = b_print,
	.sizeof_type = b_sizeof, .symbol_addr_lookup = b_symbol, .read_memory = b_read,
	.write_memory = b_write, .read_string = b_read_string, .device_to_host = b_to_host,
	.host_to_device = b_to_target, .get_thread_context_for_thread_id = b_thread_context,
};

/* ---- TR entry points ---- */

EXPORT ompd_rc_t ompd_get_version(int *version)
{
	*version = 201607;
	return ompd_rc_ok;
}

EXPORT ompd_rc_t ompd_get_version_string(const char **s)
{
	*s = "coreq TR 2.001 bridge to an OpenMP 5.1 OMPD plugin ($COREQ_TR_BRIDGE_INNER)";
	return ompd_rc_ok;
}

EXPORT ompd_rc_t ompd_initialize(const cq_tr_callbacks *callbacks)
{
	const char *path = getenv("COREQ_TR_BRIDGE_INNER");
	if (!callbacks || !path)
		return ompd_rc_bad_input;
	tr = callbacks;
	if (!(dl = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
		fprintf(stderr, "ompd_tr_bridge: %s\n", dlerror());
		return ompd_rc_error;
	}
#define LOAD(sym, proto)                                                                     \
	if (!(in.sym = (__typeof__(in.sym))dlsym(dl, #sym)))                                 \
		return ompd_rc_unsupported;
	INNER(LOAD)
#undef LOAD
	return in.ompd_initialize(201811, &table51);
}

EXPORT ompd_rc_t ompd_finalize(void)
{
	return in.ompd_finalize ? in.ompd_finalize() : ompd_rc_ok;
}

/* The inner plugin's ICVs by name: id and scope. */
static struct {
	const char *name;
	ompd_icv_id_t id;
	ompd_scope_t scope;
} icv[256];
static int nicv;

EXPORT ompd_rc_t ompd_process_initialize(ompd_address_space_context_t *ctx,
					 ompd_address_space_handle_t **ah)
{
	actx = ctx;
	ompd_rc_t rc = in.ompd_process_initialize(ctx, ah);
	if (rc != ompd_rc_ok)
		return rc;
	ompd_icv_id_t cur = 0;
	int more = 1;
	nicv = 0;
	while (more && nicv < 256) {
		const char *name;
		ompd_scope_t scope;
		ompd_icv_id_t next;
		if (in.ompd_enumerate_icvs(*ah, cur, &next, &name, &scope, &more) != ompd_rc_ok)
			break;
		icv[nicv].name = name;
		icv[nicv].id = next;
		icv[nicv++].scope = scope;
		cur = next;
	}
	return ompd_rc_ok;
}

EXPORT ompd_rc_t ompd_release_address_space_handle(ompd_address_space_handle_t *ah)
{
	return in.ompd_rel_address_space_handle(ah);
}

/* A 5.1 ICV, for a TR accessor whose handle is of @p scope. */
static ompd_rc_t by_name(void *handle, ompd_scope_t scope, const char *name, int64_t *val)
{
	for (int i = 0; i < nicv; i++) {
		if (strcmp(icv[i].name, name) != 0)
			continue;
		if (icv[i].scope != scope)
			return ompd_rc_unsupported; /* another handle kind: never pass it */
		ompd_word_t v;
		ompd_rc_t rc = in.ompd_get_icv_from_scope(handle, scope, icv[i].id, &v);
		*val = v;
		return rc;
	}
	return ompd_rc_unsupported;
}

#define ACCESSOR(fn, type, scope, name)                                                      \
	EXPORT ompd_rc_t fn(type *h, int64_t *val) { return by_name(h, scope, name, val); }
ACCESSOR(ompd_get_num_procs, ompd_address_space_handle_t, ompd_scope_address_space, "num-procs-var")
ACCESSOR(ompd_get_thread_limit, ompd_address_space_handle_t, ompd_scope_address_space, "thread-limit-var")
ACCESSOR(ompd_get_thread_num, ompd_thread_handle_t, ompd_scope_thread, "thread-num-var")
ACCESSOR(ompd_get_max_active_levels, ompd_thread_handle_t, ompd_scope_thread, "max-active-levels-var")
ACCESSOR(ompd_get_num_threads, ompd_parallel_handle_t, ompd_scope_parallel, "team-size-var")
ACCESSOR(ompd_get_level, ompd_parallel_handle_t, ompd_scope_parallel, "levels-var")
ACCESSOR(ompd_get_active_level, ompd_parallel_handle_t, ompd_scope_parallel, "active-levels-var")
ACCESSOR(ompd_get_max_threads, ompd_task_handle_t, ompd_scope_task, "nthreads-var")
ACCESSOR(ompd_get_dynamic, ompd_task_handle_t, ompd_scope_task, "dyn-var")
ACCESSOR(ompd_in_final, ompd_task_handle_t, ompd_scope_task, "final-task-var")
ACCESSOR(ompd_is_implicit, ompd_task_handle_t, ompd_scope_task, "implicit-task-var")
#undef ACCESSOR

/* Build a TR vector from the indexed 5.1 call @p get. */
#define VECTOR(get, par, vec, count)                                                         \
	do {                                                                                 \
		void **v = NULL;                                                             \
		if (tr->d_alloc_memory(MAX_VECTOR * sizeof(void *), (void **)&v) != ompd_rc_ok) \
			return ompd_rc_nomem;                                                \
		int n = 0;                                                                   \
		while (n < MAX_VECTOR && get(par, n, (void *)&v[n]) == ompd_rc_ok)           \
			n++;                                                                 \
		*(void ***)(vec) = v;                                                        \
		*(count) = n;                                                                \
		return n ? ompd_rc_ok : ompd_rc_unavailable;                                 \
	} while (0)

EXPORT ompd_rc_t ompd_get_thread_in_parallel(ompd_parallel_handle_t *par,
					     ompd_thread_handle_t ***vec, int *count)
{
	VECTOR(in.ompd_get_thread_in_parallel, par, vec, count);
}

EXPORT ompd_rc_t ompd_get_implicit_task_in_parallel(ompd_parallel_handle_t *par,
						    ompd_task_handle_t ***vec, int *count)
{
	VECTOR(in.ompd_get_task_in_parallel, par, vec, count);
}

EXPORT ompd_rc_t ompd_get_thread_handle(ompd_address_space_handle_t *ah, int kind, uint64_t size,
					const void *id, ompd_thread_handle_t **th)
{
	uint8_t h[8];
	if (size > sizeof(h))
		return ompd_rc_bad_input;
	ompd_rc_t rc = tr->target_to_host(actx, id, (int)size, 1, h);
	return rc != ompd_rc_ok ? rc : in.ompd_get_thread_handle(ah, kind, size, h, th);
}

EXPORT ompd_rc_t ompd_get_osthread(ompd_thread_handle_t *th, int kind, uint64_t size, void *id)
{
	ompd_rc_t rc = in.ompd_get_thread_id(th, kind, size, id);
	return rc != ompd_rc_ok ? rc : tr->host_to_target(actx, id, (int)size, 1, id);
}

EXPORT ompd_rc_t ompd_release_thread_handle(ompd_thread_handle_t *th)
{
	return in.ompd_rel_thread_handle(th);
}

EXPORT ompd_rc_t ompd_get_top_parallel_region(ompd_thread_handle_t *th, ompd_parallel_handle_t **p)
{
	return in.ompd_get_curr_parallel_handle(th, p);
}

EXPORT ompd_rc_t ompd_get_enclosing_parallel_handle(ompd_parallel_handle_t *p,
						    ompd_parallel_handle_t **outer)
{
	return in.ompd_get_enclosing_parallel_handle(p, outer);
}

EXPORT ompd_rc_t ompd_get_task_parallel_handle(ompd_task_handle_t *t, ompd_parallel_handle_t **p)
{
	return in.ompd_get_task_parallel_handle(t, p);
}

EXPORT ompd_rc_t ompd_release_parallel_handle(ompd_parallel_handle_t *p)
{
	return in.ompd_rel_parallel_handle(p);
}

EXPORT ompd_rc_t ompd_parallel_handle_compare(ompd_parallel_handle_t *a, ompd_parallel_handle_t *b,
					      int *cmp)
{
	return in.ompd_parallel_handle_compare(a, b, cmp);
}

EXPORT ompd_rc_t ompd_get_top_task_region(ompd_thread_handle_t *th, ompd_task_handle_t **t)
{
	return in.ompd_get_curr_task_handle(th, t);
}

EXPORT ompd_rc_t ompd_get_generating_ancestor_task_region(ompd_task_handle_t *t,
							  ompd_task_handle_t **parent)
{
	return in.ompd_get_generating_task_handle(t, parent);
}

EXPORT ompd_rc_t ompd_get_scheduling_ancestor_task_region(ompd_task_handle_t *t,
							  ompd_task_handle_t **parent)
{
	return in.ompd_get_scheduling_task_handle(t, parent);
}

EXPORT ompd_rc_t ompd_release_task_handle(ompd_task_handle_t *t)
{
	return in.ompd_rel_task_handle(t);
}

EXPORT ompd_rc_t ompd_task_handle_compare(ompd_task_handle_t *a, ompd_task_handle_t *b, int *cmp)
{
	return in.ompd_task_handle_compare(a, b, cmp);
}

EXPORT ompd_rc_t ompd_get_task_function(ompd_task_handle_t *t, ompd_address_t *entry)
{
	return in.ompd_get_task_function(t, entry);
}

EXPORT ompd_rc_t ompd_get_task_frame(ompd_task_handle_t *t, ompd_address_t *exit_addr,
				     ompd_address_t *reenter)
{
	ompd_frame_info_t e, r;
	ompd_rc_t rc = in.ompd_get_task_frame(t, &e, &r);
	if (rc == ompd_rc_ok) {
		*exit_addr = e.frame_address;
		*reenter = r.frame_address;
	}
	return rc;
}

/* OpenMP 5.1 (ompt_state_*) -> TR §15.9 */
static int tr_state(ompd_word_t s)
{
	if (s == 0x000 || s == 0x001 || s == 0x002)
		return (int)s; /* work serial, parallel, reduction */
	if (s == 0x011 || s == 0x012 || s == 0x013)
		return 0x41; /* implicit barriers */
	if (s == 0x014)
		return 0x42; /* explicit barrier */
	if (s >= 0x010 && s <= 0x016)
		return 0x40;
	if (s == 0x020 || s == 0x021)
		return 0x50 + (int)(s - 0x020); /* taskwait, taskgroup */
	if (s >= 0x040 && s <= 0x044)
		return 0x60 + (int)(s - 0x040); /* mutex, lock, critical, atomic, ordered */
	if (s == 0x100)
		return 0x10; /* idle */
	if (s == 0x101)
		return 0x20; /* overhead */
	return 0x70;         /* undefined */
}

EXPORT ompd_rc_t ompd_get_state(ompd_thread_handle_t *th, int *state, ompd_wait_id_t *wait_id)
{
	ompd_word_t s;
	ompd_rc_t rc = in.ompd_get_state(th, &s, wait_id);
	if (rc == ompd_rc_ok)
		*state = tr_state(s);
	return rc;
}

EXPORT ompd_rc_t ompd_get_display_control_vars(ompd_address_space_handle_t *ah,
					       const char *const **vars)
{
	return in.ompd_get_display_control_vars(ah, vars);
}

EXPORT ompd_rc_t ompd_release_display_control_vars(const char *const **vars)
{
	return in.ompd_rel_display_control_vars(vars);
}
