/* SPDX-License-Identifier: MIT */
#include "core.h"

#include <elf.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>

#include "base/decode.h"
#include "internal.h"

static int segment_cmp(const void *a, const void *b)
{
	const struct cq_segment *x = a, *y = b;
	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

static char *dup_opt(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* Check the ELF identification ourselves first: libelf accepts anything it can parse and
 * we want to say precisely what is wrong with the input. */
static struct cq_error *check_ident(struct cq_core *core, const unsigned char *id, size_t n,
				    uint16_t *machine_ret)
{
	const char *path = core->file->path;
	if (n < SELFMAG || memcmp(id, ELFMAG, SELFMAG) != 0)
		return cq_error_create(CQ_ERR_FORMAT, "%s: not an ELF file%s", path,
				       core->file->size == 0 ? " (empty file)" : "");
	if (n < EI_NIDENT)
		return cq_error_create(CQ_ERR_MALFORMED, "%s: truncated ELF header (%zu bytes)",
				       path, n);
	if (id[EI_CLASS] != ELFCLASS32 && id[EI_CLASS] != ELFCLASS64)
		return cq_error_create(CQ_ERR_FORMAT, "%s: bad ELF class %u", path, id[EI_CLASS]);
	if (id[EI_DATA] != ELFDATA2LSB && id[EI_DATA] != ELFDATA2MSB)
		return cq_error_create(CQ_ERR_FORMAT, "%s: bad ELF byte order %u", path,
				       id[EI_DATA]);
	if (n < (id[EI_CLASS] == ELFCLASS64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr)))
		return cq_error_create(CQ_ERR_MALFORMED, "%s: truncated ELF header", path);
	bool le = id[EI_DATA] == ELFDATA2LSB;
	uint16_t type = le ? (uint16_t)(id[16] | id[17] << 8) : (uint16_t)(id[16] << 8 | id[17]);
	uint16_t machine = le ? (uint16_t)(id[18] | id[19] << 8) : (uint16_t)(id[18] << 8 | id[19]);
	if (type != ET_CORE) {
		uint16_t swapped = (uint16_t)(type << 8 | type >> 8);
		if (swapped == ET_CORE)
			return cq_error_create(CQ_ERR_FORMAT,
					       "%s: e_type reads %u in the declared %s-endian byte order and ET_CORE in the other: EI_DATA is wrong",
					       path, type, le ? "little" : "big");
		if (type != ET_EXEC && type != ET_DYN && type != ET_REL)
			return cq_error_create(CQ_ERR_FORMAT, "%s: e_type %u: not a core file", path, type);
		const char *what = type == ET_EXEC ? "an executable" :
				   type == ET_DYN ? "a shared object or PIE executable" :
				   "a relocatable object";
		return cq_error_create(CQ_ERR_FORMAT,
				       "%s: is %s (e_type %u), not a core file; give the core first: coreq info CORE [EXE]",
				       path, what, type);
	}
	core->target = cq_target_find(machine, id[EI_CLASS], le);
	if (!core->target) {
		char names[256];
		return cq_error_create(CQ_ERR_UNSUPPORTED,
				       "%s: unsupported architecture: e_machine %u, %s-bit %s-endian (supported: %s)",
				       path, machine, id[EI_CLASS] == ELFCLASS64 ? "64" : "32",
				       le ? "little" : "big", cq_target_names(names, sizeof(names)));
	}
	*machine_ret = machine;
	return NULL;
}

static struct cq_error *read_segments(struct cq_core *core)
{
	Elf *elf = core->elf;
	const char *path = core->file->path;
	size_t phnum;
	if (elf_getphdrnum(elf, &phnum) != 0)
		return cq_error_create(CQ_ERR_MALFORMED, "%s: bad program header table: %s", path,
				       elf_errmsg(-1));
	size_t entsize = core->target->elf_class == ELFCLASS64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	GElf_Ehdr eh;
	if (!gelf_getehdr(elf, &eh))
		return cq_error_create(CQ_ERR_MALFORMED, "%s: bad ELF header: %s", path, elf_errmsg(-1));
	/* libelf lowers the count to what fits in the file; a truncated table must be said. */
	if (eh.e_phnum != PN_XNUM && eh.e_phnum > phnum)
		phnum = eh.e_phnum;
	if (phnum == 0)
		return cq_error_create(CQ_ERR_MALFORMED, "%s: core has no program headers", path);
	if (eh.e_phoff > core->file->size || phnum > (core->file->size - eh.e_phoff) / entsize)
		return cq_error_create(CQ_ERR_MALFORMED,
				       "%s: %zu program headers at offset 0x%llx run past the end of the file (0x%llx bytes): truncated core",
				       path, phnum, (unsigned long long)eh.e_phoff,
				       (unsigned long long)core->file->size);
	core->segments = calloc(phnum, sizeof(*core->segments));
	if (!core->segments)
		return &cq_error_nomem;
	bool truncated = false;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph))
			return cq_error_create(CQ_ERR_MALFORMED,
					       "%s: program header %zu of %zu (table at offset 0x%llx) is unreadable: %s",
					       path, i, phnum, (unsigned long long)eh.e_phoff,
					       elf_errmsg(-1));
		if (ph.p_type != PT_LOAD)
			continue;
		if (ph.p_filesz > ph.p_memsz)
			return cq_error_create(CQ_ERR_MALFORMED,
					       "%s: segment %zu at 0x%llx has more file bytes (0x%llx) than memory (0x%llx)",
					       path, i, (unsigned long long)ph.p_vaddr,
					       (unsigned long long)ph.p_filesz, (unsigned long long)ph.p_memsz);
		if (ph.p_memsz == 0)
			continue;
		if (ph.p_vaddr + ph.p_memsz < ph.p_vaddr ||
		    (core->target->elf_class == ELFCLASS32 && ph.p_vaddr + ph.p_memsz > UINT64_C(1) << 32))
			return cq_error_create(CQ_ERR_MALFORMED,
					       "%s: segment %zu at 0x%llx size 0x%llx wraps around the address space",
					       path, i, (unsigned long long)ph.p_vaddr, (unsigned long long)ph.p_memsz);
		if (ph.p_offset > core->file->size || ph.p_filesz > core->file->size - ph.p_offset)
			truncated = true;
		struct cq_segment *s = &core->segments[core->nsegments++];
		*s = (struct cq_segment){ph.p_vaddr, ph.p_memsz, ph.p_offset, ph.p_filesz, ph.p_flags};
	}
	qsort(core->segments, core->nsegments, sizeof(*core->segments), segment_cmp);
	for (size_t i = 1; i < core->nsegments; i++) {
		const struct cq_segment *a = &core->segments[i - 1], *b = &core->segments[i];
		if (b->vaddr < a->vaddr + a->memsz)
			return cq_error_create(CQ_ERR_MALFORMED,
					       "%s: segments at 0x%llx and 0x%llx overlap",
					       path, (unsigned long long)a->vaddr,
					       (unsigned long long)b->vaddr);
	}
	core->file_end = core->file->size;
	if (truncated)
		cq_core_problem(core, "core file",
				"%s is truncated at 0x%llx bytes: memory past that offset is unavailable (reads fault)",
				path, (unsigned long long)core->file->size);
	return NULL;
}

struct cq_error *cq_core_open(const char *path, const struct cq_core_options *opts,
			      struct cq_core **ret)
{
	static const struct cq_core_options no_opts;
	if (!opts)
		opts = &no_opts;
	struct cq_core *core = calloc(1, sizeof(*core));
	if (!core)
		return &cq_error_nomem;
	core->opts.exe = dup_opt(opts->exe);
	core->opts.sysroot = dup_opt(opts->sysroot);
	core->opts.solib_search_path = dup_opt(opts->solib_search_path);
	core->opts.debug_dir = dup_opt(opts->debug_dir);
	core->opts.type_donors = dup_opt(opts->type_donors);
	core->opts.max_inflated = opts->max_inflated;

	struct cq_error *err = cq_file_open(path, opts->max_inflated, &core->file);
	if (err)
		goto fail;
	unsigned char ident[64] = {0};
	size_t n = core->file->size < sizeof(ident) ? (size_t)core->file->size : sizeof(ident);
	if ((err = cq_file_read(core->file, ident, n, 0, "ELF header")))
		goto fail;
	uint16_t machine;
	if ((err = check_ident(core, ident, n, &machine)))
		goto fail;

	elf_version(EV_CURRENT);
	core->elf = elf_begin(core->file->fd, ELF_C_READ, NULL);
	if (!core->elf || elf_kind(core->elf) != ELF_K_ELF) {
		err = cq_error_create(CQ_ERR_MALFORMED, "%s: libelf cannot read it: %s", path,
				      elf_errmsg(-1));
		goto fail;
	}
	if ((err = read_segments(core)) || (err = cq__core_parse_notes(core)))
		goto fail;
	*ret = core;
	return NULL;
fail:
	cq_core_close(core);
	return err;
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
	for (unsigned i = 0; i < core->nnote_maps; i++)
		munmap(core->note_maps[i].addr, core->note_maps[i].len);
	if (core->elf)
		elf_end(core->elf);
	cq_file_close(core->file);
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
