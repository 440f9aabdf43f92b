/* SPDX-License-Identifier: MIT */
/* Thread-local storage without libthread_db: glibc describes its own internals with
 * `_thread_db_*` descriptors (3 x uint32 in target byte order: size in bits, count or
 * bias, offset). They are read from the core's libc every time, since offsets differ
 * between libc builds. */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/decode.h"
#include "image.h"
#include "internal.h"

struct descriptor {
	uint32_t bits, count, offset;
};

static struct cq_error *read_descriptor(struct cq_core *core, const char *name,
					struct descriptor *ret)
{
	char full[96];
	snprintf(full, sizeof(full), "_thread_db_%s", name);
	struct cq_symref ref;
	struct cq_error *err = cq_core_lookup(core, full, NULL, &ref);
	if (err)
		return cq_error_wrap(err, "glibc's thread debugging descriptor");
	uint8_t b[12];
	if ((err = cq_core_read(core, ref.address, b, sizeof(b))))
		return cq_error_wrap(err, "reading %s", full);
	ret->bits = (uint32_t)cq_load_uint(core->target, b, 4);
	ret->count = (uint32_t)cq_load_uint(core->target, b + 4, 4);
	ret->offset = (uint32_t)cq_load_uint(core->target, b + 8, 4);
	return NULL;
}

/* Read a field described by @p d at @p base (scalar fields only). */
static struct cq_error *read_field(struct cq_core *core, uint64_t base, const struct descriptor *d,
				   uint64_t *ret)
{
	unsigned size = d->bits / 8;
	if (size != 1 && size != 2 && size != 4 && size != 8)
		return cq_error_create(CQ_ERR_MALFORMED, "glibc descriptor has a %u-bit field", d->bits);
	return cq_core_read_uint(core, base + d->offset, size, ret);
}

static struct cq_error *pthread_from_tp(struct cq_core *core, struct cq_thread *th, uint64_t *ret)
{
	const struct cq_target *t = core->target;
	struct descriptor d;
	struct cq_error *err;
	switch (t->pthread_from_tp) {
	case CQ_PTHREAD_IS_TP:
		*ret = th->tp;
		return NULL;
	case CQ_PTHREAD_TP_MINUS_CONST:
		if ((err = read_descriptor(core, "const_thread_area", &d)))
			return err;
		*ret = th->tp - d.bits; /* the descriptor's first word is sizeof(struct pthread) */
		return NULL;
	case CQ_PTHREAD_REGISTER_BIAS: {
		bool is64 = cq_target_ptr_size(t) == 8;
		if ((err = read_descriptor(core, is64 ? "register64" : "register32", &d)))
			return err;
		unsigned size = d.bits / 8;
		if ((size != 4 && size != 8) || (uint64_t)d.offset + size > t->reg_block_size)
			return cq_error_create(CQ_ERR_MALFORMED,
					       "glibc's register descriptor {%u, %d, %u} does not fit %s registers",
					       d.bits, (int32_t)d.count, d.offset, t->name);
		uint64_t reg = cq_load_uint(t, th->regs + d.offset, size);
		*ret = reg + (uint64_t)(int64_t)(int32_t)d.count; /* count holds the bias */
		return NULL;
	}
	}
	return cq_error_create(CQ_ERR_INTERNAL, "bad pthread_from_tp");
}

/* Walk one of glibc's thread lists (list_t heads) for @p tid. */
static struct cq_error *walk_list(struct cq_core *core, uint64_t head, int32_t tid,
				  const struct descriptor *list, const struct descriptor *next,
				  const struct descriptor *tidd, uint64_t *ret, bool *found)
{
	uint64_t p;
	struct cq_error *err = read_field(core, head, next, &p);
	/* A corrupt list may loop without passing the head again: Brent's cycle check stops
	 * such a walk after about twice the loop's length instead of CQ_MAX_THREADS reads
	 * per thread asked for. */
	uint64_t mark = head;
	unsigned power = 1, lap = 0;
	for (unsigned n = 0; !err && p != head && n < CQ_MAX_THREADS; n++) {
		if (!p)
			return cq_error_create(CQ_ERR_MALFORMED,
					       "glibc thread list at 0x%llx has a NULL link", (unsigned long long)head);
		if (p == mark)
			return cq_error_create(CQ_ERR_MALFORMED,
					       "glibc thread list at 0x%llx loops at 0x%llx without returning to its head",
					       (unsigned long long)head, (unsigned long long)p);
		if (++lap == power) {
			mark = p;
			power *= 2;
			lap = 0;
		}
		uint64_t pthread = p - list->offset, v;
		if ((err = read_field(core, pthread, tidd, &v)))
			break;
		if ((int32_t)v == tid) {
			*ret = pthread;
			*found = true;
			return NULL;
		}
		err = read_field(core, p, next, &p);
	}
	return err;
}

static struct cq_error *pthread_by_list(struct cq_core *core, struct cq_thread *th, uint64_t *ret)
{
	struct descriptor list, next, tidd;
	struct cq_error *err;
	if ((err = read_descriptor(core, "pthread_list", &list)) ||
	    (err = read_descriptor(core, "list_t_next", &next)) ||
	    (err = read_descriptor(core, "pthread_tid", &tidd)))
		return err;
	uint64_t heads[2];
	struct cq_symref ref;
	/* Dynamic programs keep the lists in ld.so's _rtld_global, static ones in variables. */
	if (!(err = cq_core_lookup(core, "_rtld_global", NULL, &ref))) {
		struct descriptor du, dd;
		if ((err = read_descriptor(core, "rtld_global__dl_stack_user", &du)) ||
		    (err = read_descriptor(core, "rtld_global__dl_stack_used", &dd)))
			return err;
		heads[0] = ref.address + du.offset;
		heads[1] = ref.address + dd.offset;
	} else {
		cq_error_destroy(err);
		struct cq_symref u, d;
		if ((err = cq_core_lookup(core, "_dl_stack_user", NULL, &u)) ||
		    (err = cq_core_lookup(core, "_dl_stack_used", NULL, &d)))
			return cq_error_wrap(err, "no thread pointer and no glibc thread list");
		heads[0] = u.address;
		heads[1] = d.address;
	}
	/* A broken list does not hide a thread that the other list holds. */
	bool found = false;
	struct cq_error *first = NULL;
	for (int i = 0; i < 2 && !found; i++)
		if ((err = walk_list(core, heads[i], th->tid, &list, &next, &tidd, ret, &found))) {
			if (first)
				cq_error_destroy(err);
			else
				first = err;
		}
	if (found) {
		cq_error_destroy(first);
		return NULL;
	}
	if (first)
		return cq_error_wrap(first, "walking glibc's thread list");
	return cq_error_create(CQ_ERR_NOT_FOUND, "thread %d is in neither of glibc's thread lists",
			       th->tid);
}

struct cq_error *cq_core_thread_pthread(struct cq_core *core, struct cq_thread *thread,
					uint64_t *ret)
{
	if (thread->has_tp)
		return pthread_from_tp(core, thread, ret);
	return pthread_by_list(core, thread, ret);
}

struct cq_error *cq_core_tls_address(struct cq_core *core, struct cq_thread *thread,
				     const char *name, struct cq_image *scope, uint64_t *ret)
{
	struct cq_symref ref;
	struct cq_error *err = cq_core_lookup(core, name, scope, &ref);
	if (err)
		return err;
	if (!ref.is_tls)
		return cq_error_create(CQ_ERR_USAGE, "%s (in %s) is not a thread-local variable",
				       name, ref.image->name);
	uint64_t modid = 1;
	if (ref.image->link_map) {
		struct descriptor d;
		if ((err = read_descriptor(core, "link_map_l_tls_modid", &d)) ||
		    (err = read_field(core, ref.image->link_map, &d, &modid)))
			return cq_error_wrap(err, "TLS module id of %s", ref.image->name);
	} else if (!ref.image->is_exe) {
		return cq_error_create(CQ_ERR_MISSING,
				       "%s: no link_map for %s, so its TLS module id is unknown", name,
				       ref.image->name);
	}
	if (modid == 0)
		return cq_error_create(CQ_ERR_MISSING, "%s has no TLS block (module id 0)",
				       ref.image->name);
	uint64_t pthread, dtv, val;
	struct descriptor dtvp, dtvd, pval;
	if ((err = cq_core_thread_pthread(core, thread, &pthread)))
		return cq_error_wrap(err, "thread %d", thread->tid);
	if ((err = read_descriptor(core, "pthread_dtvp", &dtvp)) ||
	    (err = read_descriptor(core, "dtv_dtv", &dtvd)) ||
	    (err = read_descriptor(core, "dtv_t_pointer_val", &pval)))
		return err;
	if ((err = cq_core_read_ptr(core, pthread + dtvp.offset, &dtv)))
		return cq_error_wrap(err, "thread %d: reading its DTV pointer", thread->tid);
	uint64_t slot = dtv + modid * (dtvd.bits / 8) + pval.offset;
	if ((err = cq_core_read_ptr(core, slot, &val)))
		return cq_error_wrap(err, "thread %d: reading DTV slot %llu", thread->tid,
				     (unsigned long long)modid);
	uint64_t unallocated = cq_target_ptr_size(core->target) == 8 ? UINT64_MAX : UINT32_MAX;
	if (val == 0 || val == unallocated)
		return cq_error_create(CQ_ERR_MISSING,
				       "thread %d has not allocated the TLS block of %s yet",
				       thread->tid, ref.image->name);
	*ret = val + ref.address;
	return NULL;
}
