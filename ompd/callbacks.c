/* SPDX-License-Identifier: MIT */
/* The OpenMP 5.1 OMPD callbacks, answered from a core. Everything is for the target: the
 * plugin may be 32-bit while the target is 64-bit and big-endian. One core per process
 * (libompd keeps global state), so the module keeps its state in statics. */
#include <stdlib.h>
#include <string.h>

#include "base/decode.h"
#include "corelib/image.h"
#include "plugin.h"

static struct cq_ompd_stats *stats;
static ompd_address_space_context_t aspace; /* the core */
static ompd_thread_context_t *contexts; /* one per thread of the core */

/* Larger requests are refused: plugins do ask for sizes read from (bad) target memory. */
#define MAX_ALLOC (UINT64_C(256) << 20)
/* read_string: a larger nbytes (up to (ompd_size_t)-1, "no bound") is clamped, so that
 * it never sizes our own allocation. */
#define MAX_STRING (UINT64_C(1) << 20)

const char *cq_ompd_rc_name(ompd_rc_t rc)
{
	static const char *const names[] = {
		"ompd_rc_ok", "ompd_rc_unavailable", "ompd_rc_stale_handle", "ompd_rc_bad_input",
		"ompd_rc_error", "ompd_rc_unsupported", "ompd_rc_needs_state_tracking",
		"ompd_rc_incompatible", "ompd_rc_device_read_error", "ompd_rc_device_write_error",
		"ompd_rc_nomem", "ompd_rc_incomplete", "ompd_rc_callback_error"};
	if ((unsigned)rc < sizeof(names) / sizeof(names[0]))
		return names[rc];
	if (rc == CQ_OMPD_RC_SKIPPED)
		return "skipped: the plugin died in this call in an earlier run";
	return "ompd_rc_unknown";
}

ompd_rc_t cq__ompd_cb_alloc(ompd_size_t nbytes, void **ptr)
{
	stats->allocs++;
	/* A 32-bit host receives 64-bit sizes: never let them wrap in size_t. */
	if (nbytes > MAX_ALLOC || nbytes > SIZE_MAX || !ptr) {
		stats->refused_allocs++;
		return ompd_rc_nomem;
	}
	*ptr = malloc(nbytes ? (size_t)nbytes : 1);
	return *ptr ? ompd_rc_ok : ompd_rc_nomem;
}

ompd_rc_t cq__ompd_cb_free(void *ptr)
{
	free(ptr);
	return ompd_rc_ok;
}

ompd_rc_t cq__ompd_cb_print(const char *string, int category)
{
	if (stats->log && string)
		fprintf(stats->log, "[%d] %s", category, string);
	return ompd_rc_ok;
}

ompd_rc_t cq__ompd_cb_sizeof(ompd_address_space_context_t *ctx, ompd_device_type_sizes_t *sizes)
{
	if (!ctx || !sizes)
		return ompd_rc_bad_input;
	const struct cq_target *t = ctx->core->target;
	sizes->sizeof_char = t->ctypes[CQ_CTYPE_CHAR].size;
	sizes->sizeof_short = t->ctypes[CQ_CTYPE_SHORT].size;
	sizes->sizeof_int = t->ctypes[CQ_CTYPE_INT].size;
	sizes->sizeof_long = t->ctypes[CQ_CTYPE_LONG].size;
	sizes->sizeof_long_long = t->ctypes[CQ_CTYPE_LONG_LONG].size;
	sizes->sizeof_pointer = t->ctypes[CQ_CTYPE_POINTER].size;
	return ompd_rc_ok;
}

static void note_missing(const char *name)
{
	stats->lookup_misses++;
	for (unsigned i = 0; i < stats->nmissing; i++)
		if (strcmp(stats->missing[i], name) == 0)
			return;
	if (stats->nmissing < sizeof(stats->missing) / sizeof(stats->missing[0]))
		snprintf(stats->missing[stats->nmissing++], sizeof(stats->missing[0]), "%s", name);
}

ompd_rc_t cq__ompd_cb_symbol(ompd_address_space_context_t *ctx, ompd_thread_context_t *tctx,
			   const char *name, ompd_address_t *addr, const char *file_name)
{
	if (!ctx || !name || !addr)
		return ompd_rc_bad_input;
	stats->lookups++;
	struct cq_core *core = ctx->core;
	struct cq_image *scope = NULL;
	if (file_name) {
		if (cq_core_load_images(core) == NULL)
			scope = cq_core_image_named(core, file_name);
		if (!scope) {
			note_missing(name);
			return ompd_rc_error;
		}
	}
	struct cq_symref ref;
	struct cq_error *err = cq_core_lookup(core, name, scope, &ref);
	if (err) {
		cq_error_destroy(err);
		note_missing(name);
		return ompd_rc_error;
	}
	uint64_t a = ref.address;
	if (ref.is_tls) {
		/* TLS needs a thread: the plugin names one for __kmp_gtid. */
		if (!tctx || !tctx->thread)
			return ompd_rc_bad_input;
		err = cq_core_tls_address(core, tctx->thread, name, ref.image, &a);
		if (err) {
			cq_error_destroy(err);
			note_missing(name);
			return ompd_rc_error;
		}
	}
	addr->segment = 0;
	addr->address = a;
	return ompd_rc_ok;
}

ompd_rc_t cq__ompd_cb_read(ompd_address_space_context_t *ctx, ompd_thread_context_t *tctx,
			 const ompd_address_t *addr, ompd_size_t nbytes, void *buffer)
{
	if (!ctx || !addr || (!buffer && nbytes))
		return ompd_rc_bad_input;
	if (nbytes > SIZE_MAX)
		return ompd_rc_bad_input;
	stats->reads++;
	struct cq_error *err = cq_core_read(ctx->core, addr->address, buffer, (size_t)nbytes);
	if (err) {
		stats->read_faults++;
		cq_error_destroy(err);
		return ompd_rc_error;
	}
	return ompd_rc_ok;
}

static ompd_rc_t cb_read_string(ompd_address_space_context_t *ctx, ompd_thread_context_t *tctx,
				const ompd_address_t *addr, ompd_size_t nbytes, void *buffer)
{
	if (!ctx || !addr || !buffer || nbytes == 0)
		return ompd_rc_bad_input;
	size_t max = nbytes > MAX_STRING ? (size_t)MAX_STRING : (size_t)nbytes;
	stats->reads++;
	char *s;
	struct cq_error *err = cq_core_read_string(ctx->core, addr->address, max, &s);
	if (err) {
		bool unterminated = err->code == CQ_ERR_MALFORMED;
		cq_error_destroy(err);
		if (unterminated) {
			/* The first nbytes are there but hold no NUL: say so, do not overrun. */
			err = cq_core_read(ctx->core, addr->address, buffer, max);
			if (!err)
				return ompd_rc_incomplete;
			cq_error_destroy(err);
		}
		stats->read_faults++;
		return ompd_rc_error;
	}
	memcpy(buffer, s, strlen(s) + 1);
	free(s);
	return ompd_rc_ok;
}

ompd_rc_t cq__ompd_cb_write(ompd_address_space_context_t *ctx, ompd_thread_context_t *tctx,
			  const ompd_address_t *addr, ompd_size_t nbytes, const void *buffer)
{
	/* A core is evidence: it is never written. */
	stats->writes_refused++;
	return ompd_rc_unsupported;
}

ompd_rc_t cq__ompd_cb_convert(ompd_address_space_context_t *ctx, const void *input,
			    ompd_size_t unit_size, ompd_size_t count, void *output)
{
	if (!ctx || !input || !output)
		return ompd_rc_bad_input;
	if (unit_size != 1 && unit_size != 2 && unit_size != 4 && unit_size != 8 &&
	    unit_size != 16)
		return ompd_rc_bad_input;
	if (count > SIZE_MAX / unit_size)
		return ompd_rc_bad_input;
	size_t n = (size_t)(unit_size * count);
	/* In place (input == output) is how libompd calls it. */
	if (output != input)
		memmove(output, input, n);
	if (cq_target_needs_bswap(ctx->core->target))
		cq_bswap_units(output, (size_t)unit_size, (size_t)count);
	return ompd_rc_ok;
}

ompd_rc_t cq__ompd_cb_thread_context(ompd_address_space_context_t *ctx, ompd_thread_id_t kind,
				   ompd_size_t sizeof_id, const void *id,
				   ompd_thread_context_t **ret)
{
	if (!ctx || !id || !ret)
		return ompd_rc_bad_input;
	struct cq_core *core = ctx->core;
	uint64_t want;
	if (sizeof_id == 4) {
		uint32_t v;
		memcpy(&v, id, 4);
		want = v;
	} else if (sizeof_id == 8) {
		memcpy(&want, id, 8);
	} else {
		return ompd_rc_bad_input;
	}
	for (size_t i = 0; i < core->nthreads; i++) {
		struct cq_thread *th = &core->threads[i];
		if (kind == CQ_OMPD_THREAD_ID_LWP) {
			if ((uint64_t)(uint32_t)th->tid != want)
				continue;
		} else if (kind == CQ_OMPD_THREAD_ID_PTHREAD) {
			/* glibc's pthread_t is the address of struct pthread */
			uint64_t pt;
			struct cq_error *err = cq_core_thread_pthread(core, th, &pt);
			if (err) {
				cq_error_destroy(err);
				continue;
			}
			if (pt != want)
				continue;
		} else {
			return ompd_rc_unsupported;
		}
		*ret = &contexts[i];
		return ompd_rc_ok;
	}
	return ompd_rc_unavailable;
}

ompd_address_space_context_t *cq_ompd_aspace_context(void)
{
	return &aspace;
}

bool cq__ompd_contexts_init(struct cq_core *core, struct cq_ompd_stats *s)
{
	stats = s;
	aspace.core = core;
	free(contexts);
	contexts = calloc(core->nthreads ? core->nthreads : 1, sizeof(*contexts));
	if (!contexts)
		return false;
	for (size_t i = 0; i < core->nthreads; i++)
		contexts[i] = (ompd_thread_context_t){core, &core->threads[i], &aspace};
	return true;
}

const ompd_callbacks_t *cq_ompd_callbacks(struct cq_core *core, struct cq_ompd_stats *s)
{
	static const ompd_callbacks_t table = {
		.alloc_memory = cq__ompd_cb_alloc,
		.free_memory = cq__ompd_cb_free,
		.print_string = cq__ompd_cb_print,
		.sizeof_type = cq__ompd_cb_sizeof,
		.symbol_addr_lookup = cq__ompd_cb_symbol,
		.read_memory = cq__ompd_cb_read,
		.write_memory = cq__ompd_cb_write,
		.read_string = cb_read_string,
		.device_to_host = cq__ompd_cb_convert,
		.host_to_device = cq__ompd_cb_convert,
		.get_thread_context_for_thread_id = cq__ompd_cb_thread_context,
	};
	return cq__ompd_contexts_init(core, s) ? &table : NULL;
}
