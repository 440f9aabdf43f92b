/* SPDX-License-Identifier: MIT */
/* A deliberately faulty OMPD plugin of ours: it misbehaves in the way COREQ_FAULT names,
 * to prove that the host survives, names the call and keeps what it had. Otherwise it is
 * a minimal, well-behaved plugin: every thread is an OpenMP thread in state 1 (work).
 *   COREQ_FAULT=segv-state   SIGSEGV in ompd_get_state of the second thread asked
 *   COREQ_FAULT=hang-init    endless loop in ompd_process_initialize
 *   COREQ_FAULT=exit-icv     exit(3) in ompd_get_icv_from_scope
 *   COREQ_FAULT=spam         writes 1 MiB to stdout and stderr in ompd_initialize
 *   COREQ_FAULT=huge-alloc   asks alloc_memory for (ompd_size_t)-1 and 1<<40 bytes
 *   COREQ_FAULT=old-version  ompd_get_api_version says 201011 (not OpenMP 5.1)
 *   COREQ_FAULT=garbage-handle  thread handles are wild pointers (0x8): the host passes
 *                            them back, and releasing one frees a wild pointer
 *   COREQ_FAULT=wild-callbacks  calls the callbacks with NULL pointers, sizes that
 *                            overflow, bad unit sizes; test-var is 1 if every call failed
 *                            cleanly, else the number of the first that did not
 */
#include <omp-tools.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const ompd_callbacks_t *cb;
static int calls_state;
static int wild_result = -1;

/* Each call must fail (not ompd_rc_ok) and not crash: the number of the first that
 * succeeded, or 1 for all failed as they should. */
static int wild_calls(ompd_address_space_context_t *ctx)
{
	uint8_t buf[64];
	ompd_address_t a0 = {0, 0}, out;
	ompd_thread_context_t *t;
	void *p = NULL;
	const ompd_rc_t rc[] = {
		cb->read_memory(ctx, NULL, &a0, (ompd_size_t)1 << 40, buf),
		cb->read_memory(ctx, NULL, &a0, 8, NULL),
		cb->read_memory(NULL, NULL, &a0, 8, buf),
		cb->read_memory(ctx, NULL, NULL, 8, buf),
		cb->symbol_addr_lookup(ctx, NULL, NULL, &out, NULL),
		cb->symbol_addr_lookup(ctx, NULL, "main", NULL, NULL),
		cb->symbol_addr_lookup(ctx, NULL, "main", &out, "/../../etc/passwd"),
		cb->get_thread_context_for_thread_id(ctx, 1, 8, NULL, &t),
		cb->get_thread_context_for_thread_id(ctx, 1, 1 << 30, buf, &t),
		cb->device_to_host(ctx, buf, 8, ((ompd_size_t)-1) / 4, buf),
		cb->device_to_host(ctx, buf, 3, 1, buf),
		cb->device_to_host(ctx, NULL, 4, 1, buf),
		cb->read_string(ctx, NULL, &a0, 0, buf),
		cb->read_string(ctx, NULL, &a0, 16, NULL),
		cb->alloc_memory(16, NULL),
		cb->sizeof_type(NULL, NULL),
	};
	(void)p;
	for (size_t i = 0; i < sizeof(rc) / sizeof(rc[0]); i++)
		if (rc[i] == ompd_rc_ok)
			return (int)i + 2;
	return 1;
}

static int fault(const char *name)
{
	const char *f = getenv("COREQ_FAULT");
	return f && strcmp(f, name) == 0;
}

struct _ompd_aspace_handle {
	ompd_address_space_context_t *ctx;
};
struct _ompd_thread_handle {
	ompd_thread_context_t *tctx;
};
static struct _ompd_aspace_handle the_aspace;

ompd_rc_t ompd_get_api_version(ompd_word_t *v)
{
	*v = fault("old-version") ? 201011 : 201811;
	return ompd_rc_ok;
}
ompd_rc_t ompd_get_version_string(const char **s) { *s = "coreq faulty test plugin"; return ompd_rc_ok; }

ompd_rc_t ompd_initialize(ompd_word_t version, const ompd_callbacks_t *callbacks)
{
	cb = callbacks;
	if (fault("spam")) {
		static char line[1024];
		memset(line, 'x', sizeof(line) - 2);
		line[sizeof(line) - 2] = '\n';
		for (int i = 0; i < 1024; i++) {
			fputs(line, stdout);
			fputs(line, stderr);
		}
	}
	if (fault("huge-alloc")) {
		void *p = NULL;
		if (cb->alloc_memory((ompd_size_t)-1, &p) == ompd_rc_ok ||
		    cb->alloc_memory((ompd_size_t)1 << 40, &p) == ompd_rc_ok)
			return ompd_rc_error; /* the host must refuse both */
	}
	return ompd_rc_ok;
}

ompd_rc_t ompd_finalize(void) { return ompd_rc_ok; }

ompd_rc_t ompd_process_initialize(ompd_address_space_context_t *ctx, ompd_address_space_handle_t **h)
{
	if (fault("hang-init"))
		for (;;)
			pause();
	the_aspace.ctx = ctx;
	*h = &the_aspace;
	if (fault("wild-callbacks"))
		wild_result = wild_calls(ctx);
	return ompd_rc_ok;
}

ompd_rc_t ompd_rel_address_space_handle(ompd_address_space_handle_t *h) { return ompd_rc_ok; }
ompd_rc_t ompd_get_omp_version(ompd_address_space_handle_t *h, ompd_word_t *v) { *v = 201811; return ompd_rc_ok; }
ompd_rc_t ompd_get_omp_version_string(ompd_address_space_handle_t *h, const char **s) { return ompd_rc_unsupported; }

ompd_rc_t ompd_get_thread_handle(ompd_address_space_handle_t *h, ompd_thread_id_t kind,
				 ompd_size_t size, const void *id, ompd_thread_handle_t **ret)
{
	ompd_thread_context_t *tctx;
	ompd_rc_t rc = cb->get_thread_context_for_thread_id(h->ctx, kind, size, id, &tctx);
	if (rc != ompd_rc_ok)
		return rc;
	void *p;
	if ((rc = cb->alloc_memory(sizeof(struct _ompd_thread_handle), &p)) != ompd_rc_ok)
		return rc;
	((struct _ompd_thread_handle *)p)->tctx = tctx;
	*ret = p;
	if (fault("garbage-handle")) {
		cb->free_memory(p);
		*ret = (ompd_thread_handle_t *)(uintptr_t)8;
	}
	return ompd_rc_ok;
}

ompd_rc_t ompd_rel_thread_handle(ompd_thread_handle_t *t) { return cb->free_memory(t); }

ompd_rc_t ompd_get_state(ompd_thread_handle_t *t, ompd_word_t *state, ompd_wait_id_t *wait)
{
	if (fault("segv-state") && ++calls_state == 2)
		raise(SIGSEGV);
	*state = 1;
	*wait = 0;
	return ompd_rc_ok;
}

ompd_rc_t ompd_enumerate_states(ompd_address_space_handle_t *h, ompd_word_t cur, ompd_word_t *next,
				const char **name, ompd_word_t *more)
{
	if (cur != 0x102)
		return ompd_rc_bad_input;
	*next = 1;
	*name = "ompt_state_work_parallel";
	*more = 0;
	return ompd_rc_ok;
}

ompd_rc_t ompd_enumerate_icvs(ompd_address_space_handle_t *h, ompd_icv_id_t cur, ompd_icv_id_t *next,
			      const char **name, ompd_scope_t *scope, int *more)
{
	if (cur != 0)
		return ompd_rc_bad_input;
	*next = 1;
	*name = "test-var";
	*scope = ompd_scope_address_space;
	*more = 0;
	return ompd_rc_ok;
}

ompd_rc_t ompd_get_icv_from_scope(void *h, ompd_scope_t scope, ompd_icv_id_t id, ompd_word_t *v)
{
	if (fault("exit-icv"))
		exit(3);
	*v = fault("wild-callbacks") ? wild_result : 42;
	return ompd_rc_ok;
}

/* Everything else: not available from this plugin. */
#define UNAVAILABLE(name, ...) ompd_rc_t name(__VA_ARGS__) { return ompd_rc_unavailable; }
UNAVAILABLE(ompd_get_icv_string_from_scope, void *h, ompd_scope_t s, ompd_icv_id_t i, const char **r)
UNAVAILABLE(ompd_get_thread_in_parallel, ompd_parallel_handle_t *p, int n, ompd_thread_handle_t **t)
UNAVAILABLE(ompd_get_thread_id, ompd_thread_handle_t *t, ompd_thread_id_t k, ompd_size_t s, void *id)
UNAVAILABLE(ompd_get_curr_parallel_handle, ompd_thread_handle_t *t, ompd_parallel_handle_t **p)
UNAVAILABLE(ompd_get_enclosing_parallel_handle, ompd_parallel_handle_t *p, ompd_parallel_handle_t **e)
UNAVAILABLE(ompd_get_task_parallel_handle, ompd_task_handle_t *t, ompd_parallel_handle_t **p)
UNAVAILABLE(ompd_rel_parallel_handle, ompd_parallel_handle_t *p)
UNAVAILABLE(ompd_get_curr_task_handle, ompd_thread_handle_t *t, ompd_task_handle_t **r)
UNAVAILABLE(ompd_get_generating_task_handle, ompd_task_handle_t *t, ompd_task_handle_t **r)
UNAVAILABLE(ompd_get_scheduling_task_handle, ompd_task_handle_t *t, ompd_task_handle_t **r)
UNAVAILABLE(ompd_get_task_in_parallel, ompd_parallel_handle_t *p, int n, ompd_task_handle_t **r)
UNAVAILABLE(ompd_rel_task_handle, ompd_task_handle_t *t)
UNAVAILABLE(ompd_get_task_function, ompd_task_handle_t *t, ompd_address_t *a)
UNAVAILABLE(ompd_get_task_frame, ompd_task_handle_t *t, ompd_frame_info_t *x, ompd_frame_info_t *e)
UNAVAILABLE(ompd_get_display_control_vars, ompd_address_space_handle_t *h, const char *const **v)
UNAVAILABLE(ompd_rel_display_control_vars, const char *const **v)
