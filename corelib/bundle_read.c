/* SPDX-License-Identifier: MIT */
/* Bundles (bundle.h), read: the COREQ notes of a bundle into the core's bundled images,
 * unwind ELFs and type donors, which images and types then take in. */
#include "bundle.h"

#include <elf.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/decode.h"
#include "image.h"
#include "internal.h"

static struct cq_error *bad_note(const struct cq_core *core, const char *what)
{
	return cq_error_create(CQ_ERR_MALFORMED, "%s: bundle note: %s", core->name, what);
}

static struct cq_error *read_image_note(struct cq_core *core, const uint8_t *desc, size_t size)
{
	const struct cq_target *t = core->target;
	if (size < CQ_BUNDLE_IMAGE_HEAD)
		return bad_note(core, "image entry too short");
	uint64_t name_len = cq_load_uint(t, desc, 4), bid_len = cq_load_uint(t, desc + 4, 4);
	uint64_t nsyms = cq_load_uint(t, desc + 8, 4), strsz = cq_load_uint(t, desc + 12, 4);
	uint64_t bias = cq_load_uint(t, desc + 16, 8);
	uint32_t flags = (uint32_t)cq_load_uint(t, desc + 24, 4);
	uint64_t start = cq_load_uint(t, desc + 32, 8), end = cq_load_uint(t, desc + 40, 8);
	uint64_t syms_at = (CQ_BUNDLE_IMAGE_HEAD + name_len + bid_len + 7) & ~UINT64_C(7);
	/* every size is 32-bit, so these sums cannot overflow 64 bits */
	if (name_len == 0 || bid_len > 64 || syms_at + nsyms * CQ_BUNDLE_SYM_ENTRY + strsz > size ||
	    desc[CQ_BUNDLE_IMAGE_HEAD + name_len - 1] != 0)
		return bad_note(core, "image entry sizes do not fit its note");
	const uint8_t *strtab_in = desc + syms_at + nsyms * CQ_BUNDLE_SYM_ENTRY;
	if (strsz == 0 || strtab_in[strsz - 1] != 0)
		return bad_note(core, "symbol names are not terminated");
	struct cq_bundled_image *b = realloc(core->bundled, (core->nbundled + 1) * sizeof(*b));
	if (!b)
		return &cq_error_nomem;
	core->bundled = b;
	b = &b[core->nbundled];
	memset(b, 0, sizeof(*b));
	char *strtab = malloc(strsz);
	struct cq_symbol *syms = calloc(nsyms ? nsyms : 1, sizeof(*syms));
	b->name = strdup((const char *)desc + CQ_BUNDLE_IMAGE_HEAD);
	if (!strtab || !syms || !b->name) {
		free(strtab);
		free(syms);
		free(b->name);
		return &cq_error_nomem;
	}
	memcpy(strtab, strtab_in, strsz);
	for (uint64_t i = 0; i < nsyms; i++) {
		const uint8_t *e = desc + syms_at + i * CQ_BUNDLE_SYM_ENTRY;
		uint64_t off = cq_load_uint(t, e + 16, 4);
		if (off >= strsz) {
			free(strtab);
			free(syms);
			free(b->name);
			return bad_note(core, "symbol name offset out of range");
		}
		syms[i] = (struct cq_symbol){strtab + off, cq_load_uint(t, e, 8),
					     cq_load_uint(t, e + 8, 8), e[20], e[21], e[22] != 0};
	}
	b->bias = bias;
	if (end > start) {
		b->start = start;
		b->end = end;
	}
	b->is_exe = flags & CQ_BUNDLE_IMAGE_EXE;
	b->build_id_len = (size_t)bid_len;
	memcpy(b->build_id, desc + CQ_BUNDLE_IMAGE_HEAD + name_len, (size_t)bid_len);
	core->nbundled++;
	struct cq_error *err = cq_elf_from_symbols(syms, (size_t)nsyms, strtab, b->build_id,
						   b->build_id_len, &b->elf);
	if (err)
		core->nbundled--, free(b->name);
	return err;
}

/* A named file in a note (type donors, unwind ELFs): u32 name_len (with NUL), u32 flags,
 * u64 file size, name, zero padding to 8, the file. */
struct named_file {
	const char *name;
	uint32_t flags;
	const uint8_t *data;
	size_t size;
};

static struct cq_error *parse_named_file(const struct cq_core *core, const uint8_t *desc,
					 size_t size, const char *what, struct named_file *ret)
{
	const struct cq_target *t = core->target;
	if (size < 16)
		return cq_error_create(CQ_ERR_MALFORMED, "%s: bundle note: %s entry too short",
				       core->name, what);
	uint64_t name_len = cq_load_uint(t, desc, 4), file_size = cq_load_uint(t, desc + 8, 8);
	uint64_t at = (16 + name_len + 7) & ~UINT64_C(7);
	if (name_len == 0 || at > size || file_size > size - at || desc[16 + name_len - 1] != 0)
		return cq_error_create(CQ_ERR_MALFORMED, "%s: bundle note: %s sizes do not fit its note",
				       core->name, what);
	*ret = (struct named_file){(const char *)desc + 16, (uint32_t)cq_load_uint(t, desc + 4, 4),
				   desc + at, (size_t)file_size};
	return NULL;
}

/* A new anonymous file holding @p size bytes at @p p, in *ret. */
static struct cq_error *memfd_with(const char *what, const uint8_t *p, size_t size, int *ret)
{
	int fd = memfd_create(what, MFD_CLOEXEC);
	if (fd < 0)
		return cq_error_errno(errno, "memfd_create for %s", what);
	for (size_t done = 0; done < size;) {
		ssize_t n = write(fd, p + done, size - done);
		if (n <= 0) {
			int e = n < 0 ? errno : EIO;
			close(fd);
			return cq_error_errno(e, "writing %s", what);
		}
		done += (size_t)n;
	}
	*ret = fd;
	return NULL;
}

/* A bundled type donor goes to an anonymous file, which libdw opens like any other. */
static struct cq_error *read_donor_note(struct cq_core *core, const uint8_t *desc, size_t size)
{
	struct named_file nf;
	struct cq_error *err = parse_named_file(core, desc, size, "type donor", &nf);
	if (err)
		return err;
	if (nf.size > CQ_BUNDLE_MAX_DONOR)
		return bad_note(core, "type donor larger than 64 MiB");
	struct cq_bundled_donor *d = realloc(core->bundled_donors,
					     (core->nbundled_donors + 1) * sizeof(*d));
	if (!d)
		return &cq_error_nomem;
	core->bundled_donors = d;
	int fd;
	if ((err = memfd_with("coreq-type-donor", nf.data, nf.size, &fd)))
		return err;
	char *name = strdup(nf.name);
	if (!name) {
		close(fd);
		return &cq_error_nomem;
	}
	d[core->nbundled_donors++] = (struct cq_bundled_donor){name, fd};
	return NULL;
}

/* Why the unwind ELF @p p (@p size bytes) is unfit for @p core, or NULL if it is fit: it
 * comes from a file that may be crafted, and libdwfl will read it. */
static char *unwind_elf_problem(const struct cq_core *core, const uint8_t *p, size_t size)
{
	const struct cq_target *t = core->target;
	char *why = NULL;
	Elf *e = elf_memory((char *)p, size);
	GElf_Ehdr eh;
	size_t phnum = 0, shnum = 0, shstrndx = 0;
	if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh)) {
		why = strdup("not an ELF file");
		goto out;
	}
	if (eh.e_ident[EI_CLASS] != t->elf_class ||
	    eh.e_ident[EI_DATA] != (t->little_endian ? ELFDATA2LSB : ELFDATA2MSB) ||
	    eh.e_machine != t->e_machine) {
		if (asprintf(&why, "an ELF file for another machine (e_machine %u, class %u) than the core (%s)",
			     eh.e_machine, eh.e_ident[EI_CLASS], t->name) < 0)
			why = NULL;
		goto out;
	}
	if ((eh.e_type != ET_EXEC && eh.e_type != ET_DYN) || elf_getphdrnum(e, &phnum) != 0 ||
	    phnum == 0 || phnum > 256 || elf_getshdrnum(e, &shnum) != 0 || shnum > 256 ||
	    elf_getshdrstrndx(e, &shstrndx) != 0) {
		why = strdup("not an executable or shared object with program and section headers");
		goto out;
	}
	for (size_t i = 0; i < phnum && !why; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph))
			why = strdup("a program header is unreadable");
	}
	for (Elf_Scn *scn = NULL; !why && (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || !elf_strptr(e, shstrndx, sh.sh_name))
			why = strdup("a section header or its name is unreadable");
		else if (sh.sh_type != SHT_NOBITS &&
			 (sh.sh_offset > size || sh.sh_size > size - sh.sh_offset || !elf_rawdata(scn, NULL)))
			why = strdup("a section lies outside the file");
	}
out:
	if (e)
		elf_end(e);
	return why;
}

static struct cq_error *read_unwind_note(struct cq_core *core, const uint8_t *desc, size_t size)
{
	struct named_file nf;
	struct cq_error *err = parse_named_file(core, desc, size, "unwind", &nf);
	if (err)
		return err;
	uint64_t elf_size = nf.size;
	struct cq_bundled_image *b = NULL;
	for (size_t i = core->nbundled; i-- > 0 && !b;)
		if (!strcmp(core->bundled[i].name, nf.name))
			b = &core->bundled[i];
	if (!b)
		return bad_note(core, "unwind entry for an image the bundle does not carry");
	if (b->unwind || b->unwind_problem)
		return bad_note(core, "two unwind entries for one image");
	if (elf_size > CQ_BUNDLE_MAX_UNWIND) {
		b->unwind_problem = strdup("the bundle's unwind ELF is larger than 128 MiB: not used");
		return NULL;
	}
	/* a copy: aligned for libelf, and it outlives the note segment's buffer */
	uint8_t *copy = malloc(elf_size ? (size_t)elf_size : 1);
	if (!copy)
		return &cq_error_nomem;
	memcpy(copy, nf.data, (size_t)elf_size);
	char *why = unwind_elf_problem(core, copy, (size_t)elf_size);
	if (why) {
		free(copy);
		if (asprintf(&b->unwind_problem, "the bundle's unwind ELF is refused (%s): frames in the image are not unwound",
			     why) < 0)
			b->unwind_problem = NULL;
		free(why);
		return NULL;
	}
	b->unwind = copy;
	b->unwind_size = (size_t)elf_size;
	b->unwind_lines = nf.flags & CQ_BUNDLE_UNWIND_LINES;
	return NULL;
}

struct cq_error *cq_image_unwind_fd(const struct cq_image *img, int *ret)
{
	if (!img->unwind_elf)
		return cq_error_create(CQ_ERR_NOT_FOUND, "%s: no unwind ELF in the bundle", img->name);
	return memfd_with("coreq-unwind-elf", img->unwind_elf, img->unwind_elf_size, ret);
}

static void free_bundle(struct cq_core *core);

struct cq_error *cq__bundle_note(struct cq_core *core, uint32_t type, const uint8_t *desc,
				 size_t size)
{
	cq__core_own(core, free_bundle);
	if (type == CQ_NT_BUNDLE) {
		if (size < 8)
			return bad_note(core, "header too short");
		uint32_t v = (uint32_t)cq_load_uint(core->target, desc, 4);
		if (v < 1 || v > CQ_BUNDLE_VERSION)
			return cq_error_create(CQ_ERR_UNSUPPORTED,
					       "%s: bundle format version %u; this coreq reads versions 1 to %d",
					       core->name, v, CQ_BUNDLE_VERSION);
		core->bundle_version = v;
		return NULL;
	}
	if (type == CQ_NT_BUNDLE_UNWIND) {
		if (core->bundle_version < 2)
			return bad_note(core, "unwind entry without a version 2 bundle header");
		return read_unwind_note(core, desc, size);
	}
	if (type == CQ_NT_BUNDLE_IMAGE) {
		if (!core->bundle_version)
			return bad_note(core, "image entry before the bundle header");
		return read_image_note(core, desc, size);
	}
	if (type == CQ_NT_BUNDLE_TYPES) {
		if (!core->bundle_version)
			return bad_note(core, "type donor before the bundle header");
		return read_donor_note(core, desc, size);
	}
	return NULL; /* later versions may add note types: ignore */
}

/* What the bundle notes gave, when the core is closed (cq__core_own). */
static void free_bundle(struct cq_core *core)
{
	for (size_t i = 0; i < core->nbundled; i++) {
		free(core->bundled[i].name);
		cq_elf_close(core->bundled[i].elf);
		free(core->bundled[i].unwind);
		free(core->bundled[i].unwind_problem);
	}
	free(core->bundled);
	core->bundled = NULL;
	core->nbundled = 0;
	for (size_t i = 0; i < core->nbundled_donors; i++) {
		free(core->bundled_donors[i].name);
		close(core->bundled_donors[i].fd);
	}
	free(core->bundled_donors);
	core->bundled_donors = NULL;
	core->nbundled_donors = 0;
}

