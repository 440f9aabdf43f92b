/* SPDX-License-Identifier: MIT */
/* Target memory: core contents, else the file mapped there, else a fault. Reads are lazy
 * preads; the segment table is searched by bisection. */
#include <stdlib.h>
#include <string.h>

#include "base/decode.h"
#include "internal.h"
#include "source.h"

const struct cq_segment *cq_core_segment_at(const struct cq_core *core, uint64_t addr)
{
	size_t lo = 0, hi = core->nsegments;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct cq_segment *s = &core->segments[mid];
		if (addr < s->vaddr)
			hi = mid;
		else if (addr - s->vaddr >= s->memsz)
			lo = mid + 1;
		else
			return s;
	}
	return NULL;
}

static int range_cmp(const void *a, const void *b)
{
	const struct cq_file_range *x = a, *y = b;
	return (x->start > y->start) - (x->start < y->start);
}

/* Ranges added since the last sort are looked through one by one until there are this many. */
#define UNSORTED_MAX 32

struct cq_error *cq__memory_add_file(struct cq_core *core, uint64_t start, uint64_t end,
				     struct cq_file *file, uint64_t offset, const char *path)
{
	if (end <= start || !file)
		return NULL;
	if (core->nranges == core->ranges_cap) {
		size_t cap = core->ranges_cap ? core->ranges_cap * 2 : 64;
		struct cq_file_range *r = realloc(core->ranges, cap * sizeof(*r));
		if (!r)
			return &cq_error_nomem;
		core->ranges = r;
		core->ranges_cap = cap;
	}
	core->ranges[core->nranges++] = (struct cq_file_range){start, end, offset, file, path};
	if (core->nranges - core->nsorted > UNSORTED_MAX) {
		qsort(core->ranges, core->nranges, sizeof(*core->ranges), range_cmp);
		core->nsorted = core->nranges;
	}
	return NULL;
}

void cq__memory_free(struct cq_core *core)
{
	free(core->ranges);
	core->ranges = NULL;
	core->nranges = core->nsorted = core->ranges_cap = 0;
}

/* The registered file range that backs @p addr, or NULL. Memory knows no images: what the
 * images found is registered with cq__memory_add_file() (image.c). */
static const struct cq_file_range *file_backing(const struct cq_core *core, uint64_t addr)
{
	size_t lo = 0, hi = core->nsorted;
	while (lo < hi) { /* the last range starting at or below addr */
		size_t mid = lo + (hi - lo) / 2;
		if (core->ranges[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && addr < core->ranges[lo - 1].end)
		return &core->ranges[lo - 1];
	for (size_t i = core->nsorted; i < core->nranges; i++)
		if (addr >= core->ranges[i].start && addr < core->ranges[i].end)
			return &core->ranges[i];
	return NULL;
}

struct cq_error *cq_core_read(struct cq_core *core, uint64_t addr, void *buf, size_t len)
{
	uint8_t *out = buf;
	while (len) {
		const struct cq_segment *s = cq_core_segment_at(core, addr);
		if (s && addr - s->vaddr < s->filesz) {
			/* bytes the target holds: the source's (source.h) */
			size_t n = 0;
			struct cq_error *err = core->source->read(core, s, addr, out, len, &n);
			if (err)
				return err;
			out += n;
			addr += n;
			len -= n;
			continue;
		}
		const struct cq_file_range *r = file_backing(core, addr);
		if (!r) {
			const char *why = !s ? "not mapped in the core" :
				"not dumped in the core and no file found that backs it";
			return cq_error_fault(addr, "cannot read target memory at 0x%llx: %s",
					      (unsigned long long)addr, why);
		}
		uint64_t off = r->offset + (addr - r->start), avail = r->end - addr;
		/* Do not run past the end of the core's segment: beyond it is another mapping. */
		if (s && avail > s->vaddr + s->memsz - addr)
			avail = s->vaddr + s->memsz - addr;
		size_t n = len < avail ? len : (size_t)avail;
		struct cq_file *f = r->file;
		if (off >= f->size)
			return cq_error_fault(addr,
					      "cannot read target memory at 0x%llx: %s is shorter than the mapping (offset 0x%llx)",
					      (unsigned long long)addr, r->path,
					      (unsigned long long)off);
		if (n > f->size - off)
			n = (size_t)(f->size - off);
		struct cq_error *err = cq_file_read(f, out, n, off, "mapped file contents");
		if (err)
			return err;
		out += n;
		addr += n;
		len -= n;
	}
	return NULL;
}

struct cq_error *cq_core_read_uint(struct cq_core *core, uint64_t addr, unsigned size,
				   uint64_t *ret)
{
	uint8_t b[8];
	struct cq_error *err = cq_core_read(core, addr, b, size);
	if (err)
		return err;
	*ret = cq_load_uint(core->target, b, size);
	return NULL;
}

struct cq_error *cq_core_read_ptr(struct cq_core *core, uint64_t addr, uint64_t *ret)
{
	return cq_core_read_uint(core, addr, cq_target_ptr_size(core->target), ret);
}

struct cq_error *cq_core_read_string(struct cq_core *core, uint64_t addr, size_t max,
				     char **ret)
{
	/* The loop writes at most max bytes; max + 1 would wrap to 0 for max == SIZE_MAX. */
	char *s = malloc(max ? max : 1);
	if (!s)
		return &cq_error_nomem;
	size_t have = 0;
	/* Read in small steps so a string at the end of a mapping does not fault. */
	while (have < max) {
		size_t chunk = 64 - (size_t)((addr + have) % 64);
		if (chunk > max - have)
			chunk = max - have;
		struct cq_error *err = cq_core_read(core, addr + have, s + have, chunk);
		if (err && err->has_address && err->address > addr + have &&
		    err->address - (addr + have) < chunk) {
			/* The string may end before the unreadable byte: look at what reads. */
			size_t part = (size_t)(err->address - (addr + have));
			struct cq_error *again = cq_core_read(core, addr + have, s + have, part);
			if (!again && memchr(s + have, 0, part)) {
				cq_error_destroy(err);
				*ret = s;
				return NULL;
			}
			cq_error_destroy(again);
		}
		if (err) {
			free(s);
			return err;
		}
		char *nul = memchr(s + have, 0, chunk);
		have += chunk;
		if (nul) {
			*ret = s;
			return NULL;
		}
	}
	free(s);
	return cq_error_create(CQ_ERR_MALFORMED, "string at 0x%llx is not terminated within %zu bytes",
			       (unsigned long long)addr, max);
}

enum cq_mem_source cq_core_mem_source(struct cq_core *core, uint64_t addr, const char **path_ret)
{
	const struct cq_segment *s = cq_core_segment_at(core, addr);
	if (s && addr - s->vaddr < cq_segment_held(core, s))
		return CQ_MEM_CORE;
	const struct cq_file_range *r = file_backing(core, addr);
	if (r) {
		if (path_ret)
			*path_ret = r->path;
		return CQ_MEM_FILE;
	}
	return CQ_MEM_NONE;
}
