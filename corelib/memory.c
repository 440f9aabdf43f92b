/* SPDX-License-Identifier: MIT */
/* Target memory: core contents, else the file mapped there, else a fault. Reads are lazy
 * preads; the segment table is searched by bisection. */
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "image.h"
#include "internal.h"

static const struct cq_segment *find_segment(const struct cq_core *core, uint64_t addr)
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

/* The file range that backs @p addr: through NT_FILE when the core has it (it is what the
 * kernel really mapped), else through the image's own PT_LOAD headers and load bias. */
static bool file_backing(struct cq_core *core, uint64_t addr, struct cq_image **img_ret,
			 uint64_t *off_ret, uint64_t *avail_ret)
{
	if (!core->images_done) {
		/* Files are found with the images; failures there are problems, not faults. */
		struct cq_error *err = cq_core_load_images(core);
		if (err)
			cq_core_problem(core, "images", "%s", err->message);
		cq_error_destroy(err);
	}
	if (core->nfile_maps) {
		size_t lo = 0, hi = core->nfile_maps;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			const struct cq_file_map *m = &core->file_maps[mid];
			if (addr < m->start)
				hi = mid;
			else if (addr >= m->end)
				lo = mid + 1;
			else {
				struct cq_image *img = cq_core_image_named(core, m->path);
				if (!img || !img->elf || !img->elf->file)
					return false;
				*img_ret = img;
				*off_ret = m->offset + (addr - m->start);
				*avail_ret = m->end - addr;
				return true;
			}
		}
		return false;
	}
	for (size_t i = 0; i < core->nimages; i++) {
		struct cq_image *img = &core->images[i];
		if (!img->elf || !img->elf->file || !img->bias_known)
			continue;
		for (size_t k = 0; k < img->elf->nloads; k++) {
			const struct cq_load *l = &img->elf->loads[k];
			uint64_t start = img->bias + l->vaddr;
			if (addr >= start && addr - start < l->filesz) {
				*img_ret = img;
				*off_ret = l->offset + (addr - start);
				*avail_ret = l->filesz - (addr - start);
				return true;
			}
		}
	}
	return false;
}

struct cq_error *cq_core_read(struct cq_core *core, uint64_t addr, void *buf, size_t len)
{
	uint8_t *out = buf;
	while (len) {
		const struct cq_segment *s = find_segment(core, addr);
		if (s && addr - s->vaddr < s->filesz) {
			uint64_t off = s->offset + (addr - s->vaddr);
			uint64_t avail = s->filesz - (addr - s->vaddr);
			if (off >= core->file_end)
				return cq_error_fault(addr,
						      "cannot read target memory at 0x%llx: the core is truncated (segment data at file offset 0x%llx is missing)",
						      (unsigned long long)addr, (unsigned long long)off);
			if (avail > core->file_end - off)
				avail = core->file_end - off;
			size_t n = len < avail ? len : (size_t)avail;
			struct cq_error *err = cq_file_read(core->file, out, n, off, "segment data");
			if (err)
				return err;
			out += n;
			addr += n;
			len -= n;
			continue;
		}
		struct cq_image *img;
		uint64_t off, avail;
		if (!file_backing(core, addr, &img, &off, &avail)) {
			const char *why = !s ? "not mapped in the core" :
				"not dumped in the core and no file found that backs it";
			return cq_error_fault(addr, "cannot read target memory at 0x%llx: %s",
					      (unsigned long long)addr, why);
		}
		/* Do not run past the end of the core's segment: beyond it is another mapping. */
		if (s && avail > s->vaddr + s->memsz - addr)
			avail = s->vaddr + s->memsz - addr;
		size_t n = len < avail ? len : (size_t)avail;
		struct cq_file *f = img->elf->file;
		if (off >= f->size)
			return cq_error_fault(addr,
					      "cannot read target memory at 0x%llx: %s is shorter than the mapping (offset 0x%llx)",
					      (unsigned long long)addr, img->found_path,
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
	const struct cq_segment *s = find_segment(core, addr);
	if (s && addr - s->vaddr < s->filesz && s->offset + (addr - s->vaddr) < core->file_end)
		return CQ_MEM_CORE;
	struct cq_image *img;
	uint64_t off, avail;
	if (file_backing(core, addr, &img, &off, &avail)) {
		if (path_ret)
			*path_ret = img->found_path;
		return CQ_MEM_FILE;
	}
	return CQ_MEM_NONE;
}
