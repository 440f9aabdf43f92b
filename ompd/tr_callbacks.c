/* SPDX-License-Identifier: MIT */
/* The OMPD TR 2.001 callback table (tr_abi.h): the same answers as the OpenMP 5.1 table
 * (callbacks.c), adapted to the TR's types. What the TR does differently is handled here:
 * signed byte counts, int unit sizes and counts, operating-system thread ids in target
 * byte order, and the way back from a thread context to its address space. */
#include <string.h>

#include "base/decode.h"
#include "plugin.h"
#include "tr.h"

static ompd_rc_t tr_print(const char *string)
{
	return cq__ompd_cb_print(string, 0);
}

static ompd_rc_t tr_sizeof(ompd_address_space_context_t *ctx, cq_tr_type_sizes *sizes)
{
	ompd_device_type_sizes_t s;
	if (!sizes)
		return ompd_rc_bad_input;
	ompd_rc_t rc = cq__ompd_cb_sizeof(ctx, &s);
	if (rc == ompd_rc_ok)
		*sizes = (cq_tr_type_sizes){s.sizeof_char, s.sizeof_short, s.sizeof_int,
					    s.sizeof_long, s.sizeof_long_long, s.sizeof_pointer};
	return rc;
}

static ompd_rc_t tr_symbol(ompd_address_space_context_t *ctx, ompd_thread_context_t *tctx,
			   const char *name, ompd_address_t *addr)
{
	return cq__ompd_cb_symbol(ctx, tctx, name, addr, NULL);
}

static ompd_rc_t tr_read(ompd_address_space_context_t *ctx, ompd_thread_context_t *tctx,
			 const ompd_address_t *addr, cq_tr_tword_t nbytes, void *buffer)
{
	if (nbytes < 0)
		return ompd_rc_bad_input;
	return cq__ompd_cb_read(ctx, tctx, addr, (ompd_size_t)nbytes, buffer);
}

static ompd_rc_t tr_write(ompd_address_space_context_t *ctx, ompd_thread_context_t *tctx,
			  const ompd_address_t *addr, cq_tr_tword_t nbytes, const void *buffer)
{
	return cq__ompd_cb_write(ctx, tctx, addr, nbytes < 0 ? 0 : (ompd_size_t)nbytes, buffer);
}

static ompd_rc_t tr_convert(ompd_address_space_context_t *ctx, const void *input, int unit_size,
			    int count, void *output)
{
	if (unit_size <= 0 || count < 0)
		return ompd_rc_bad_input;
	return cq__ompd_cb_convert(ctx, input, (ompd_size_t)unit_size, (ompd_size_t)count, output);
}

/* TR §3.4: "The format of the information, such as byte ordering, is that of the target." */
static ompd_rc_t tr_thread_context(ompd_address_space_context_t *ctx, cq_tr_osthread_kind_t kind,
				   cq_tr_size_t size, const void *osthread,
				   ompd_thread_context_t **ret)
{
	if (!ctx || !osthread || !ret)
		return ompd_rc_bad_input;
	if (size != 4 && size != 8)
		return ompd_rc_bad_input;
	uint8_t id[8];
	memcpy(id, osthread, (size_t)size);
	if (cq_target_needs_bswap(ctx->core->target))
		cq_bswap_units(id, (size_t)size, 1);
	return cq__ompd_cb_thread_context(ctx, kind, size, id, ret);
}

static ompd_rc_t tr_aspace_of_thread(ompd_thread_context_t *tctx,
				     ompd_address_space_context_t **ret)
{
	if (!tctx || !ret || !tctx->aspace)
		return ompd_rc_bad_input;
	*ret = tctx->aspace;
	return ompd_rc_ok;
}

const cq_tr_callbacks *cq_ompd_tr_callbacks(struct cq_core *core, struct cq_ompd_stats *stats)
{
	static const cq_tr_callbacks table = {
		.d_alloc_memory = cq__ompd_cb_alloc,
		.d_free_memory = cq__ompd_cb_free,
		.print_string = tr_print,
		.t_sizeof_prim_type = tr_sizeof,
		.t_symbol_addr_lookup = tr_symbol,
		.t_read_memory = tr_read,
		.t_write_memory = tr_write,
		.target_to_host = tr_convert,
		.host_to_target = tr_convert,
		.get_thread_context_for_osthread = tr_thread_context,
		.get_address_space_context_for_thread = tr_aspace_of_thread,
	};
	return cq__ompd_contexts_init(core, stats) ? &table : NULL;
}
