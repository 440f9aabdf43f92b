/* SPDX-License-Identifier: MIT */
/* The core model's object (core.h): what a source fills it with (source.h), the parts it
 * owns, its threads, registers, auxv and problems. Nothing here reads a file. */
#include "core.h"

#include <elf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/decode.h"
#include "elfcore.h"
#include "internal.h"
#include "source.h"


static int segment_cmp(const void *a, const void *b)
{
	const struct cq_segment *x = a, *y = b;
	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

static char *dup_opt(const char *s)
{
	return s ? strdup(s) : NULL;
}

struct cq_core *cq_core_new(const struct cq_core_options *opts, const struct cq_target *target,
			    const struct cq_source *source)
{
	static const struct cq_core_options no_opts;
	if (!opts)
		opts = &no_opts;
	struct cq_core *core = calloc(1, sizeof(*core));
	if (!core)
		return NULL;
	core->target = target;
	core->source = source;
	core->opts.exe = dup_opt(opts->exe);
	core->opts.sysroot = dup_opt(opts->sysroot);
	core->opts.solib_search_path = dup_opt(opts->solib_search_path);
	core->opts.debug_dir = dup_opt(opts->debug_dir);
	core->opts.type_donors = dup_opt(opts->type_donors);
	core->opts.max_inflated = opts->max_inflated;
	if ((opts->exe && !core->opts.exe) || (opts->sysroot && !core->opts.sysroot) ||
	    (opts->solib_search_path && !core->opts.solib_search_path) || (opts->debug_dir && !core->opts.debug_dir) ||
	    (opts->type_donors && !core->opts.type_donors)) {
		cq_core_close(core);
		return NULL;
	}
	return core;
}

struct cq_error *cq_core_set_segments(struct cq_core *core, struct cq_segment *segs, size_t n, const char *what)
{
	free(core->segments);
	core->segments = segs;
	core->nsegments = n;
	qsort(core->segments, core->nsegments, sizeof(*core->segments), segment_cmp);
	for (size_t i = 1; i < core->nsegments; i++) {
		const struct cq_segment *a = &core->segments[i - 1], *b = &core->segments[i];
		if (b->vaddr < a->vaddr + a->memsz)
			return cq_error_create(CQ_ERR_MALFORMED, "%s: segments at 0x%llx and 0x%llx overlap", what,
					       (unsigned long long)a->vaddr, (unsigned long long)b->vaddr);
	}
	return NULL;
}

uint64_t cq_segment_held(const struct cq_core *core, const struct cq_segment *s)
{
	return core->source->held(core, s);
}

struct cq_error *cq_core_add_thread(struct cq_core *core, int32_t tid, int32_t signal, const uint8_t *regs,
				    size_t size, const char *what, struct cq_thread **ret)
{
	const struct cq_target *t = core->target;
	if (core->nthreads >= CQ_MAX_THREADS)
		return cq_error_create(CQ_ERR_MALFORMED, "%s: more than %d threads", what, CQ_MAX_THREADS);
	/* the array grows by doubling (its size is 8, then the next power of two): growing it
	 * by one per thread copied it whole 65 times on the benchmark core */
	size_t cap = 8;
	while (cap < core->nthreads)
		cap *= 2;
	struct cq_thread *th = core->threads;
	if (!th || core->nthreads == cap) {
		th = realloc(core->threads, (th ? 2 * cap : cap) * sizeof(*th));
		if (!th)
			return &cq_error_nomem;
		core->threads = th;
	}
	th = &th[core->nthreads];
	memset(th, 0, sizeof(*th));
	th->regs = calloc(1, t->reg_block_size);
	if (!th->regs)
		return &cq_error_nomem;
	size_t have = size < t->reg_block_size ? size : t->reg_block_size;
	memcpy(th->regs, regs, have);
	th->regs_size = (uint16_t)have;
	core->nthreads++;
	if (have < t->reg_block_size)
		cq_core_problem(core, "registers",
				"NT_PRSTATUS of thread %d has %zu register bytes, %s has %u: the registers past offset %zu are unavailable",
				(int)tid, have, t->name, t->reg_block_size, have);
	th->tid = tid;
	th->signal = signal;
	th->pc = cq_thread_reg_at(core, th, (unsigned)t->pc_reg) & ~(uint64_t)t->pc_flag_bits;
	th->sp = cq_thread_reg_at(core, th, (unsigned)t->sp_reg);
	if (t->tp_source == CQ_TP_REGISTER) {
		th->tp = cq_thread_reg_at(core, th, (unsigned)t->tp_reg);
		th->has_tp = true;
	}
	*ret = th;
	return NULL;
}

struct cq_error *cq_core_set_thread_tls(struct cq_core *core, struct cq_thread *th, uint32_t type, const uint8_t *desc,
				       size_t size)
{
	const struct cq_target *t = core->target;
	free(th->tls_note);
	th->tls_note = malloc(size ? size : 1);
	if (!th->tls_note)
		return &cq_error_nomem;
	memcpy(th->tls_note, desc, size);
	th->tls_note_size = size;
	th->tls_note_type = type;
	if (type == NT_ARM_TLS && t->tp_source == CQ_TP_NOTE_ARM_TLS && size >= cq_target_ptr_size(t)) {
		th->tp = cq_load_ptr(t, desc);
		th->has_tp = true;
	} else if (type == NT_386_TLS && t->tp_source == CQ_TP_NOTE_386_TLS && t->gs_reg >= 0) {
		/* struct user_desc: entry_number, base_addr, limit, flags (4 x u32) */
		uint64_t gs = cq_thread_reg_at(core, th, (unsigned)t->gs_reg);
		for (size_t off = 0; off + 16 <= size; off += 16)
			if (cq_load_uint(t, desc + off, 4) == gs >> 3) {
				th->tp = cq_load_uint(t, desc + off + 4, 4);
				th->has_tp = true;
			}
	}
	return NULL;
}

struct cq_error *cq_core_set_thread_fpregs(struct cq_thread *th, const uint8_t *desc, size_t size, bool copy)
{
	uint8_t *p = NULL;
	if (copy) {
		if (!(p = malloc(size ? size : 1)))
			return &cq_error_nomem;
		memcpy(p, desc, size);
	}
	if (th->fpregs_owned)
		free((void *)th->fpregs);
	th->fpregs = copy ? p : desc;
	th->fpregs_size = size;
	th->fpregs_owned = copy;
	return NULL;
}

struct cq_error *cq_core_set_auxv(struct cq_core *core, const uint8_t *bytes, size_t size)
{
	const struct cq_target *t = core->target;
	size_t w = cq_target_ptr_size(t), n = size / (2 * w);
	free(core->auxv);
	core->nauxv = 0;
	core->auxv = calloc(n ? n : 1, sizeof(*core->auxv));
	if (!core->auxv)
		return &cq_error_nomem;
	for (size_t i = 0; i < n; i++) {
		uint64_t type = cq_load_uint(t, bytes + 2 * w * i, (unsigned)w);
		if (type == AT_NULL)
			break;
		core->auxv[core->nauxv][0] = type;
		core->auxv[core->nauxv][1] = cq_load_uint(t, bytes + 2 * w * i + w, (unsigned)w);
		core->nauxv++;
	}
	return NULL;
}

static int file_map_cmp(const void *a, const void *b)
{
	const struct cq_file_map *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

void cq_core_set_file_maps(struct cq_core *core, struct cq_file_map *maps, size_t n, uint64_t page_size)
{
	if (core->file_maps) { /* only the first counts */
		for (size_t i = 0; i < n; i++)
			free(maps[i].path);
		free(maps);
		return;
	}
	core->file_maps = maps;
	core->nfile_maps = n;
	core->page_size = page_size;
	qsort(core->file_maps, core->nfile_maps, sizeof(*core->file_maps), file_map_cmp);
}

void cq_core_close(struct cq_core *core)
{
	if (!core)
		return;
	while (core->nparts)
		core->parts[--core->nparts](core);
	cq__memory_free(core);
	for (size_t i = 0; i < core->nthreads; i++) {
		free(core->threads[i].regs);
		free(core->threads[i].tls_note);
		if (core->threads[i].fpregs_owned)
			free((void *)core->threads[i].fpregs);
	}
	free(core->threads);
	for (size_t i = 0; i < core->nfile_maps; i++)
		free(core->file_maps[i].path);
	free(core->file_maps);
	for (size_t i = 0; i < core->nproblems; i++) {
		free(core->problems[i].item);
		free(core->problems[i].message);
	}
	free(core->problems);
	free(core->auxv);
	free(core->segments);
	if (core->source->close)
		core->source->close(core);
	free((char *)core->opts.exe);
	free((char *)core->opts.sysroot);
	free((char *)core->opts.solib_search_path);
	free((char *)core->opts.debug_dir);
	free((char *)core->opts.type_donors);
	free(core);
}

void cq__core_own(struct cq_core *core, void (*free_part)(struct cq_core *core))
{
	for (unsigned i = 0; i < core->nparts; i++)
		if (core->parts[i] == free_part)
			return;
	/* the model has three such parts; a fourth that does not fit is a bug found at once */
	if (core->nparts == sizeof(core->parts) / sizeof(core->parts[0]))
		abort();
	core->parts[core->nparts++] = free_part;
}

bool cq_core_auxv(const struct cq_core *core, uint64_t type, uint64_t *ret)
{
	for (size_t i = 0; i < core->nauxv; i++)
		if (core->auxv[i][0] == type) {
			*ret = core->auxv[i][1];
			return true;
		}
	return false;
}

struct cq_thread *cq_core_thread(struct cq_core *core, int32_t tid)
{
	for (size_t i = 0; i < core->nthreads; i++)
		if (core->threads[i].tid == tid)
			return &core->threads[i];
	return NULL;
}

uint64_t cq_thread_reg_at(const struct cq_core *core, const struct cq_thread *thread, unsigned i)
{
	const struct cq_reg *r = &core->target->regs[i];
	return cq_load_uint(core->target, thread->regs + r->offset, r->size);
}

bool cq_thread_has_reg(const struct cq_core *core, const struct cq_thread *thread, unsigned i)
{
	const struct cq_reg *r = &core->target->regs[i];
	return (size_t)r->offset + r->size <= thread->regs_size;
}

bool cq_thread_reg(const struct cq_core *core, const struct cq_thread *thread,
		   const char *name, uint64_t *ret)
{
	int i = cq_target_reg_index(core->target, name);
	if (i < 0)
		return false;
	*ret = cq_thread_reg_at(core, thread, (unsigned)i);
	return true;
}

void cq_core_problem(struct cq_core *core, const char *item, const char *fmt, ...)
{
	/* Problems are best effort: on allocation failure the problem is dropped. */
	struct cq_problem *p = realloc(core->problems, (core->nproblems + 1) * sizeof(*p));
	if (!p)
		return;
	core->problems = p;
	va_list ap;
	va_start(ap, fmt);
	char *msg;
	int n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	char *it = strdup(item);
	if (!it) {
		free(msg);
		return;
	}
	p[core->nproblems++] = (struct cq_problem){it, msg};
}
