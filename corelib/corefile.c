/* SPDX-License-Identifier: MIT */
/* The ELF core file as the model's source (source.h): the file opened and identified, its
 * PT_LOAD segments, its notes (notes.c), a bundle's COREQ notes among them (bundle_read.c);
 * memory read from the segments' file bytes, up to where a truncated core ends. */
#include <elf.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>

#include "internal.h"
#include "source.h"

/* Check the ELF identification ourselves first: libelf accepts anything it can parse and
 * we want to say precisely what is wrong with the input. */
static struct cq_error *check_ident(const struct cq_file *file, const unsigned char *id, size_t n,
				    const struct cq_target **target_ret)
{
	const char *path = file->path;
	if (n < SELFMAG || memcmp(id, ELFMAG, SELFMAG) != 0)
		return cq_error_create(CQ_ERR_FORMAT, "%s: not an ELF file%s", path,
				       file->size == 0 ? " (empty file)" : "");
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
	*target_ret = cq_target_find(machine, id[EI_CLASS], le);
	if (!*target_ret) {
		char names[256];
		return cq_error_create(CQ_ERR_UNSUPPORTED,
				       "%s: unsupported architecture: e_machine %u, %s-bit %s-endian (supported: %s)",
				       path, machine, id[EI_CLASS] == ELFCLASS64 ? "64" : "32",
				       le ? "little" : "big", cq_target_names(names, sizeof(names)));
	}
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
	struct cq_segment *segs = calloc(phnum, sizeof(*segs));
	size_t nsegs = 0;
	if (!segs)
		return &cq_error_nomem;
	struct cq_error *err = NULL;
	bool truncated = false;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph)) {
			err = cq_error_create(CQ_ERR_MALFORMED,
					       "%s: program header %zu of %zu (table at offset 0x%llx) is unreadable: %s",
					       path, i, phnum, (unsigned long long)eh.e_phoff,
					       elf_errmsg(-1));
			break;
		}
		if (ph.p_type != PT_LOAD)
			continue;
		if (ph.p_filesz > ph.p_memsz) {
			err = cq_error_create(CQ_ERR_MALFORMED,
					      "%s: segment %zu at 0x%llx has more file bytes (0x%llx) than memory (0x%llx)",
					      path, i, (unsigned long long)ph.p_vaddr,
					      (unsigned long long)ph.p_filesz, (unsigned long long)ph.p_memsz);
			break;
		}
		if (ph.p_memsz == 0)
			continue;
		if (ph.p_vaddr + ph.p_memsz < ph.p_vaddr ||
		    (core->target->elf_class == ELFCLASS32 && ph.p_vaddr + ph.p_memsz > UINT64_C(1) << 32)) {
			err = cq_error_create(CQ_ERR_MALFORMED,
					      "%s: segment %zu at 0x%llx size 0x%llx wraps around the address space",
					      path, i, (unsigned long long)ph.p_vaddr, (unsigned long long)ph.p_memsz);
			break;
		}
		if (ph.p_offset > core->file->size || ph.p_filesz > core->file->size - ph.p_offset)
			truncated = true;
		segs[nsegs++] = (struct cq_segment){ph.p_vaddr, ph.p_memsz, ph.p_offset, ph.p_filesz, ph.p_flags};
	}
	if (err) {
		free(segs);
		return err;
	}
	if ((err = cq_core_set_segments(core, segs, nsegs, path)))
		return err;
	core->file_end = core->file->size;
	if (truncated)
		cq_core_problem(core, "core file",
				"%s is truncated at 0x%llx bytes: memory past that offset is unavailable (reads fault)",
				path, (unsigned long long)core->file->size);
	return NULL;
}

static uint64_t file_held(const struct cq_core *core, const struct cq_segment *s)
{
	if (s->offset >= core->file_end)
		return 0;
	return s->filesz < core->file_end - s->offset ? s->filesz : core->file_end - s->offset;
}

static struct cq_error *file_read(struct cq_core *core, const struct cq_segment *s, uint64_t addr, void *buf,
				  size_t len, size_t *got)
{
	uint64_t off = s->offset + (addr - s->vaddr);
	uint64_t avail = s->filesz - (addr - s->vaddr);
	if (off >= core->file_end)
		return cq_error_fault(addr,
				      "cannot read target memory at 0x%llx: the core is truncated (segment data at file offset 0x%llx is missing)",
				      (unsigned long long)addr, (unsigned long long)off);
	if (avail > core->file_end - off)
		avail = core->file_end - off;
	*got = len < avail ? len : (size_t)avail;
	return cq_file_read(core->file, buf, *got, off, "segment data");
}

static void file_close(struct cq_core *core)
{
	for (unsigned i = 0; i < core->nnote_maps; i++)
		munmap(core->note_maps[i].addr, core->note_maps[i].len);
	core->nnote_maps = 0;
	if (core->elf)
		elf_end(core->elf);
	core->elf = NULL;
	cq_file_close(core->file);
	core->file = NULL;
	core->name = NULL;
}

static const struct cq_source core_file = {"core file", file_held, file_read, file_close};

struct cq_error *cq_core_open(const char *path, const struct cq_core_options *opts,
			      struct cq_core **ret)
{
	struct cq_file *file;
	struct cq_error *err = cq_file_open(path, opts ? opts->max_inflated : 0, &file);
	if (err)
		return err;
	unsigned char ident[64] = {0};
	size_t n = file->size < sizeof(ident) ? (size_t)file->size : sizeof(ident);
	const struct cq_target *target = NULL;
	if ((err = cq_file_read(file, ident, n, 0, "ELF header")) || (err = check_ident(file, ident, n, &target))) {
		cq_file_close(file);
		return err;
	}
	struct cq_core *core = cq_core_new(opts, target, &core_file);
	if (!core) {
		cq_file_close(file);
		return &cq_error_nomem;
	}
	core->file = file;
	core->name = file->path;
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
