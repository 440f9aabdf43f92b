/* SPDX-License-Identifier: MIT */
/* Bundles (bundle.h), written: a core's segments and notes, plus the symbols, unwind
 * tables and read-only data its analyses need, as one new core file. */
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
#include <zlib.h>

#include "base/bytebuf.h"
#include "base/decode.h"
#include "image.h"
#include "elfcore.h"
#include "internal.h"
#include "output/output.h"
#include "source.h"


/* The core's own notes, minus any earlier COREQ notes (re-bundling replaces them). */
static struct cq_error *copy_notes(struct cq_core *core, struct cq_buf *b)
{
	size_t phnum;
	if (elf_getphdrnum(core->elf, &phnum) != 0)
		return cq_error_create(CQ_ERR_MALFORMED, "%s: %s", core->name, elf_errmsg(-1));
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(core->elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		Elf_Data *d = elf_getdata_rawchunk(core->elf, (int64_t)ph.p_offset,
						   (size_t)ph.p_filesz, ELF_T_NHDR);
		if (!d)
			return cq_error_create(CQ_ERR_MALFORMED, "%s: note segment unreadable",
					       core->name);
		size_t pos = 0, next, name_off, desc_off;
		GElf_Nhdr nh;
		while (pos < d->d_size && (next = gelf_getnote(d, pos, &nh, &name_off, &desc_off)) > 0) {
			const char *name = (const char *)d->d_buf + name_off;
			if (!(nh.n_namesz == 6 && memcmp(name, "COREQ", 6) == 0))
				cq_elf_note(b, core->target, name, nh.n_namesz, nh.n_type,
					 (const char *)d->d_buf + desc_off, nh.n_descsz);
			pos = next;
		}
	}
	return NULL;
}

static void put_image(struct cq_buf *b, const struct cq_target *t, const struct cq_image *img,
		      struct cq_elf *e, size_t *nsyms_ret)
{
	struct cq_buf strtab = {0};
	cq_buf_put(&strtab, "", 1);
	struct cq_buf desc = {0};
	size_t name_len = strlen(img->name) + 1;
	cq_buf_uint(&desc, t, 4, name_len);
	cq_buf_uint(&desc, t, 4, img->build_id_len);
	cq_buf_uint(&desc, t, 4, e->nsyms);
	size_t strsz_at = desc.len;
	cq_buf_uint(&desc, t, 4, 0); /* strtab size, patched below */
	cq_buf_uint(&desc, t, 8, img->bias);
	cq_buf_uint(&desc, t, 4, img->is_exe ? CQ_BUNDLE_IMAGE_EXE : 0);
	cq_buf_uint(&desc, t, 4, 0);
	cq_buf_uint(&desc, t, 8, img->end > img->start ? img->start : 0);
	cq_buf_uint(&desc, t, 8, img->end > img->start ? img->end : 0);
	cq_buf_put(&desc, img->name, name_len);
	cq_buf_put(&desc, img->build_id, img->build_id_len);
	cq_buf_align(&desc, 8);
	for (size_t i = 0; i < e->nsyms; i++) {
		const struct cq_symbol *s = &e->syms[i];
		cq_buf_uint(&desc, t, 8, s->value);
		cq_buf_uint(&desc, t, 8, s->size);
		cq_buf_uint(&desc, t, 4, strtab.len);
		uint8_t tail[4] = {s->type, s->bind, s->dynamic, 0};
		cq_buf_put(&desc, tail, 4);
		cq_buf_put(&strtab, s->name, strlen(s->name) + 1);
	}
	cq_buf_put(&desc, strtab.p, strtab.len);
	if (!desc.failed && !strtab.failed) {
		cq_store_uint(t, desc.p + strsz_at, 4, strtab.len);
		cq_elf_note(b, t, CQ_BUNDLE_NOTE_NAME, sizeof(CQ_BUNDLE_NOTE_NAME), CQ_NT_BUNDLE_IMAGE,
			 desc.p, desc.len);
		*nsyms_ret = e->nsyms;
	} else {
		b->failed = true;
	}
	free(desc.p);
	free(strtab.p);
}

/* A note of @p type holding a named file of @p size bytes (parse_named_file's layout);
 * returns where the file's bytes go (zeros until filled in), NULL when out of memory. */
static uint8_t *put_named_file(struct cq_buf *b, const struct cq_target *t, uint32_t type,
			       const char *name, uint32_t flags, size_t size)
{
	size_t name_len = strlen(name) + 1;
	size_t desc_len = ((16 + name_len + 7) & ~(size_t)7) + size;
	cq_buf_uint(b, t, 4, sizeof(CQ_BUNDLE_NOTE_NAME));
	cq_buf_uint(b, t, 4, desc_len);
	cq_buf_uint(b, t, 4, type);
	cq_buf_put(b, CQ_BUNDLE_NOTE_NAME, sizeof(CQ_BUNDLE_NOTE_NAME));
	cq_buf_align(b, 4);
	size_t start = b->len;
	cq_buf_uint(b, t, 4, name_len);
	cq_buf_uint(b, t, 4, flags);
	cq_buf_uint(b, t, 8, size);
	cq_buf_put(b, name, name_len);
	while (!b->failed && (b->len - start) % 8)
		cq_buf_put(b, NULL, 1);
	size_t at = b->len;
	cq_buf_put(b, NULL, size);
	cq_buf_align(b, 4);
	return b->failed ? NULL : b->p + at;
}

/* ---- unwind ELFs (bundle.h, CQ_NT_BUNDLE_UNWIND) ---- */

/* What unwinding reads: CFI, ARM EHABI tables, hppa's unwind descriptors, and the build-id
 * to name the file. */
static const char *const unwind_sections[] = {".eh_frame", ".eh_frame_hdr", ".debug_frame",
					      ".ARM.exidx", ".ARM.extab", ".PARISC.unwind",
					      ".note.gnu.build-id"};
/* What libdw's line tables and inlined scopes read (--with-lines); location lists for
 * the scopes' variables. .debug_aranges: libdwfl finds an address's CU through it. */
static const char *const line_sections[] = {
	".debug_info", ".debug_abbrev", ".debug_line", ".debug_line_str", ".debug_str",
	".debug_str_offsets", ".debug_addr", ".debug_aranges", ".debug_ranges",
	".debug_rnglists", ".debug_loc", ".debug_loclists"};

/* Section @p name of @p e with contents (not NOBITS, not empty), or NULL. */
static Elf_Scn *section_named(Elf *e, const char *name)
{
	size_t shstrndx;
	if (!e || elf_getshdrstrndx(e, &shstrndx) != 0)
		return NULL;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		const char *n;
		if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS && sh.sh_size &&
		    (n = elf_strptr(e, shstrndx, sh.sh_name)) && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/* Copy section @p from (contents as they are: compressed DWARF stays compressed) into the
 * ELF being written, its name at @p name_off of the section name table. */
static bool copy_section(Elf *out, Elf_Scn *from, size_t name_off)
{
	GElf_Shdr sh, nsh;
	Elf_Data *d = elf_rawdata(from, NULL);
	Elf_Scn *scn = elf_newscn(out);
	Elf_Data *nd = scn ? elf_newdata(scn) : NULL;
	if (!d || !nd || !gelf_getshdr(from, &sh) || !gelf_getshdr(scn, &nsh))
		return false;
	nd->d_buf = d->d_buf;
	nd->d_size = d->d_size;
	nd->d_type = ELF_T_BYTE;
	nd->d_align = sh.sh_addralign ? sh.sh_addralign : 1;
	nsh.sh_name = (GElf_Word)name_off;
	nsh.sh_type = sh.sh_type;
	nsh.sh_flags = sh.sh_flags;
	nsh.sh_addr = sh.sh_addr;
	nsh.sh_addralign = sh.sh_addralign;
	nsh.sh_entsize = sh.sh_entsize;
	return gelf_update_shdr(scn, &nsh) != 0;
}

/* The unwind ELF of @p img (bundle.h) into *ret (malloc'd; NULL, 0 when its files have
 * none of the sections), built with libelf in an anonymous file. */
static struct cq_error *make_unwind_elf(struct cq_image *img, bool with_lines, uint8_t **ret,
					size_t *ret_size)
{
	*ret = NULL;
	*ret_size = 0;
	Elf *src = img->elf->elf, *dbg = img->debug ? img->debug->elf : NULL;
	/* the sections and where each comes from: the image's file first for unwinding
	 * (stripped debug files have NOBITS .eh_frame), the debug file first for lines */
	const size_t nu = sizeof(unwind_sections) / sizeof(*unwind_sections);
	const size_t nl = sizeof(line_sections) / sizeof(*line_sections);
	Elf_Scn *pick[sizeof(unwind_sections) / sizeof(*unwind_sections) +
		      sizeof(line_sections) / sizeof(*line_sections)];
	const char *names[sizeof(pick) / sizeof(*pick)];
	size_t n = 0;
	bool any_unwind = false;
	for (size_t i = 0; i < nu + (with_lines ? nl : 0); i++) {
		const char *name = i < nu ? unwind_sections[i] : line_sections[i - nu];
		Elf_Scn *scn = i < nu ? section_named(src, name) : section_named(dbg, name);
		if (!scn)
			scn = i < nu ? section_named(dbg, name) : section_named(src, name);
		if (!scn)
			continue;
		any_unwind |= i < nu && strcmp(name, ".note.gnu.build-id") != 0;
		names[n] = name;
		pick[n++] = scn;
	}
	if (!any_unwind)
		return NULL;
	GElf_Ehdr seh;
	size_t phnum;
	if (!gelf_getehdr(src, &seh) || elf_getphdrnum(src, &phnum) != 0)
		return cq_error_create(CQ_ERR_FORMAT, "%s: %s", img->name, elf_errmsg(-1));
	size_t nloads = 0;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(src, (int)i, &ph) && ph.p_type == PT_LOAD)
			nloads++;
	}
	if (!nloads)
		return NULL;
	int fd = memfd_create("coreq-unwind-elf", MFD_CLOEXEC);
	if (fd < 0)
		return cq_error_errno(errno, "memfd_create for an unwind ELF");
	struct cq_error *err = NULL;
	struct cq_buf shstr = {0};
	cq_buf_put(&shstr, "", 1);
	Elf *out = elf_begin(fd, ELF_C_WRITE, NULL);
	GElf_Ehdr eh;
	if (!out || !gelf_newehdr(out, seh.e_ident[EI_CLASS]) || !gelf_newphdr(out, nloads) ||
	    !gelf_getehdr(out, &eh)) /* after gelf_newphdr, which sets e_phnum */
		goto libelf_failed;
	eh.e_ident[EI_DATA] = seh.e_ident[EI_DATA];
	eh.e_ident[EI_OSABI] = seh.e_ident[EI_OSABI];
	eh.e_ident[EI_ABIVERSION] = seh.e_ident[EI_ABIVERSION];
	eh.e_type = seh.e_type;
	eh.e_machine = seh.e_machine;
	eh.e_version = EV_CURRENT;
	eh.e_entry = seh.e_entry;
	eh.e_flags = seh.e_flags;
	/* the loads place the file at the bias; it has no segment contents */
	for (size_t i = 0, k = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(src, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		ph.p_offset = 0;
		ph.p_filesz = 0;
		if (!gelf_update_phdr(out, (int)k++, &ph))
			goto libelf_failed;
	}
	for (size_t i = 0; i < n; i++) {
		size_t name_off = shstr.len;
		cq_buf_put(&shstr, names[i], strlen(names[i]) + 1);
		if (!copy_section(out, pick[i], name_off))
			goto libelf_failed;
	}
	size_t shstr_off = shstr.len;
	cq_buf_put(&shstr, ".shstrtab", sizeof(".shstrtab"));
	if (shstr.failed) {
		err = &cq_error_nomem;
		goto out;
	}
	Elf_Scn *scn = elf_newscn(out);
	Elf_Data *d = scn ? elf_newdata(scn) : NULL;
	GElf_Shdr sh;
	if (!d || !gelf_getshdr(scn, &sh))
		goto libelf_failed;
	d->d_buf = shstr.p;
	d->d_size = shstr.len;
	d->d_type = ELF_T_BYTE;
	d->d_align = 1;
	sh.sh_name = (GElf_Word)shstr_off;
	sh.sh_type = SHT_STRTAB;
	sh.sh_addralign = 1;
	eh.e_shstrndx = (GElf_Half)elf_ndxscn(scn);
	if (!gelf_update_shdr(scn, &sh) || !gelf_update_ehdr(out, &eh) ||
	    elf_update(out, ELF_C_WRITE) < 0)
		goto libelf_failed;
	elf_end(out);
	out = NULL;
	struct stat st;
	if (fstat(fd, &st) != 0) {
		err = cq_error_errno(errno, "unwind ELF of %s", img->name);
		goto out;
	}
	uint8_t *p = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!p) {
		err = &cq_error_nomem;
		goto out;
	}
	if (pread(fd, p, (size_t)st.st_size, 0) != (ssize_t)st.st_size) {
		err = cq_error_errno(errno ? errno : EIO, "reading back the unwind ELF of %s", img->name);
		free(p);
		goto out;
	}
	*ret = p;
	*ret_size = (size_t)st.st_size;
	goto out;
libelf_failed:
	err = cq_error_create(CQ_ERR_INTERNAL, "unwind ELF of %s: libelf: %s", img->name, elf_errmsg(-1));
out:
	if (out)
		elf_end(out);
	close(fd);
	free(shstr.p);
	return err;
}

/* The unwind note of @p img, when it has an unwind ELF (made from its files, or carried by
 * an input bundle); *bytes gets its size (0: none). Skipped, as a problem, when the notes
 * would grow past what a reader accepts. */
static struct cq_error *put_unwind(struct cq_core *core, struct cq_buf *b, struct cq_image *img,
				   bool with_lines, uint64_t *bytes)
{
	const struct cq_target *t = core->target;
	*bytes = 0;
	uint8_t *own = NULL;
	const uint8_t *p = img->unwind_elf;
	size_t size = img->unwind_elf_size;
	bool lines = img->unwind_elf_lines;
	if (img->elf && img->elf->file) {
		struct cq_error *err = make_unwind_elf(img, with_lines, &own, &size);
		if (err)
			return err;
		p = own;
		lines = with_lines;
	}
	if (!p)
		return NULL;
	size_t name_len = strlen(img->name) + 1;
	if (size > CQ_BUNDLE_MAX_UNWIND || b->len + size + name_len + 64 > CQ_MAX_NOTES_BYTES / 2) {
		cq_core_problem(core, img->name, "its unwind ELF (%zu bytes) is too large to bundle: frames in it will not be unwound from the bundle",
				size);
		free(own);
		return NULL;
	}
	uint8_t *at = put_named_file(b, t, CQ_NT_BUNDLE_UNWIND, img->name,
				     lines ? CQ_BUNDLE_UNWIND_LINES : 0, size);
	if (at)
		memcpy(at, p, size);
	free(own);
	*bytes = size;
	return NULL;
}

/* One type donor note from the file open as @p fd. */
static struct cq_error *put_donor(struct cq_buf *b, const struct cq_target *t, const char *name,
				  int fd)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return cq_error_errno(errno, "type donor %s", name);
	if ((uint64_t)st.st_size > CQ_BUNDLE_MAX_DONOR)
		return cq_error_create(CQ_ERR_USAGE, "type donor %s is larger than 64 MiB: not bundled", name);
	uint8_t *at = put_named_file(b, t, CQ_NT_BUNDLE_TYPES, name, 0, (size_t)st.st_size);
	if (at && pread(fd, at, (size_t)st.st_size, 0) != (ssize_t)st.st_size)
		return cq_error_errno(errno, "reading type donor %s", name);
	return NULL;
}

/* The core's type donors (--types) and those an input bundle carried. */
static struct cq_error *put_donors(struct cq_core *core, struct cq_buf *b, size_t *n)
{
	for (size_t i = 0; i < core->nbundled_donors; i++) {
		struct cq_error *err = put_donor(b, core->target, core->bundled_donors[i].name,
						 core->bundled_donors[i].fd);
		if (err)
			return err;
		(*n)++;
	}
	const char *d = core->opts.type_donors;
	while (d && *d) {
		size_t len = strcspn(d, ":");
		char *path = strndup(d, len);
		if (!path)
			return &cq_error_nomem;
		/* a compressed donor is stored expanded, as it is read (input/file.h) */
		struct cq_file *file = NULL;
		struct cq_error *err = *path ? cq_file_open(path, core->opts.max_inflated, &file) : NULL;
		if (err) {
			struct cq_error *named = cq_error_create(err->code, "type donor %s", err->message);
			cq_error_destroy(err);
			err = named;
		} else if (file) {
			const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
			err = put_donor(b, core->target, base, file->fd);
			cq_file_close(file);
			(*n)++;
		}
		free(path);
		if (err)
			return err;
		d += len + (d[len] == ':');
	}
	return NULL;
}

/* Output: a plain file or a gzip stream, written sequentially. */
struct out {
	FILE *f;
	gzFile gz;
	uint64_t pos;
	bool failed;
};

static void out_write(struct out *o, const void *p, size_t n)
{
	static const uint8_t zeros[4096];
	while (n && !o->failed) {
		size_t k = n;
		if (!p && k > sizeof(zeros))
			k = sizeof(zeros);
		const void *src = p ? p : zeros;
		if (o->gz ? gzwrite(o->gz, src, (unsigned)k) != (int)k : fwrite(src, 1, k, o->f) != k)
			o->failed = true;
		o->pos += k;
		n -= k;
		if (p)
			p = (const uint8_t *)p + k;
	}
}

/* One PT_LOAD of the bundle: a piece of a core segment, its first filesz bytes present. */
struct piece {
	uint64_t vaddr, memsz, filesz;
	uint32_t flags;
};

struct plan {
	struct piece *p;
	size_t n, cap;
	bool failed;
};

static void plan_add(struct plan *pl, uint64_t vaddr, uint64_t memsz, uint64_t filesz,
		     uint32_t flags)
{
	if (pl->failed || memsz == 0)
		return;
	if (pl->n == pl->cap) {
		size_t cap = pl->cap ? 2 * pl->cap : 64;
		struct piece *p = realloc(pl->p, cap * sizeof(*p));
		if (!p) {
			pl->failed = true;
			return;
		}
		pl->p = p;
		pl->cap = cap;
	}
	pl->p[pl->n++] = (struct piece){vaddr, memsz, filesz, flags};
}

struct range {
	uint64_t start, end;
};

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Append [start, end) to a growing array; false when memory runs out. */
static bool range_push(struct range **r, size_t *n, size_t *cap, uint64_t start, uint64_t end)
{
	if (*n == *cap) {
		struct range *p = realloc(*r, 2 * *cap * sizeof(**r));
		if (!p)
			return false;
		*r = p;
		*cap *= 2;
	}
	(*r)[(*n)++] = (struct range){start, end};
	return true;
}

/* End of the readable prefix of [start, end) (read from a file: the core lacks it). */
static uint64_t readable_end(struct cq_core *core, uint64_t start, uint64_t end)
{
	uint8_t chunk[4096];
	for (uint64_t a = start; a < end;) {
		size_t n = end - a < sizeof(chunk) ? (size_t)(end - a) : sizeof(chunk);
		struct cq_error *err = cq_core_read(core, a, chunk, n);
		if (err) {
			uint64_t stop = err->has_address && err->address > a && err->address < a + n ?
					err->address : a;
			cq_error_destroy(err);
			return stop;
		}
		a += n;
	}
	return end;
}

/* Ranges past the dumped prefix of @p s that the bundle adds: in a non-executable segment
 * all of the rest when a file backs it; in an executable one (code stays out) the ELF
 * header page, as the kernel keeps it, and the data objects the images' symbol tables
 * place there (read-only data linked into the text segment, e.g. s390x's .rodata). */
static size_t wanted_ranges(struct cq_core *core, uint64_t from, uint64_t end, bool exec,
			    bool headers_only, struct range **ret)
{
	size_t n = 0, cap = 16;
	struct range *r = malloc(cap * sizeof(*r));
	if (!r)
		return 0;
	if (headers_only || exec) {
		/* the ELF header page: program headers are how images are found (AT_PHDR) */
		uint8_t magic[SELFMAG];
		struct cq_error *err = NULL;
		if (end - from >= 4096 && !(err = cq_core_read(core, from, magic, SELFMAG)) &&
		    memcmp(magic, ELFMAG, SELFMAG) == 0)
			r[n++] = (struct range){from, from + 4096};
		cq_error_destroy(err);
	}
	if (!headers_only && !exec) {
		r[n++] = (struct range){from, end};
	} else if (!headers_only) {
		for (size_t i = 0; i < core->nimages; i++) {
			struct cq_image *img = &core->images[i];
			if (!img->elf || !img->bias_known)
				continue;
			struct cq_range ro[16];
			size_t nro = cq_elf_rodata_sections(img->elf, ro, 16);
			for (size_t k = 0; k < nro; k++) {
				uint64_t a = img->bias + ro[k].start, b = img->bias + ro[k].end;
				if (b <= from || a >= end)
					continue;
				if (!range_push(&r, &n, &cap, a < from ? from : a, b > end ? end : b))
					break;
			}
		}
		for (size_t i = 0; i < core->nimages; i++) {
			struct cq_image *img = &core->images[i];
			struct cq_elf *e = cq_image_symbol_file(img);
			if (!e || !img->bias_known || cq_elf_load_symbols(e))
				continue;
			for (size_t k = 0; k < e->nsyms; k++) {
				const struct cq_symbol *sym = &e->syms[k];
				uint64_t a = img->bias + sym->value;
				if (sym->type != STT_OBJECT || sym->size == 0 || sym->size > (1u << 20) ||
				    a < from || a >= end || sym->size > end - a)
					continue;
				if (!range_push(&r, &n, &cap, a, a + sym->size))
					break;
			}
		}
	}
	qsort(r, n, sizeof(*r), range_cmp);
	/* Merge what overlaps or nearly touches (fewer, larger pieces), keep what reads. */
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (m && r[i].start <= r[m - 1].end + 64) {
			if (r[i].end > r[m - 1].end)
				r[m - 1].end = r[i].end;
		} else {
			r[m++] = r[i];
		}
	}
	size_t k = 0;
	for (size_t i = 0; i < m; i++) {
		r[i].end = readable_end(core, r[i].start, r[i].end);
		if (r[i].end > r[i].start)
			r[k++] = r[i];
	}
	*ret = r;
	return k;
}

/* Cut segment @p s into pieces: the core's prefix, then alternately left-out and added
 * ranges. */
static void plan_segment(struct cq_core *core, struct plan *pl, const struct cq_segment *s,
			 bool add_data, uint64_t *added)
{
	uint64_t have = cq_segment_held(core, s);
	uint64_t end = s->vaddr + s->memsz, at = s->vaddr + have;
	struct range *r = NULL;
	size_t n = 0;
	if (have < s->memsz && cq_core_mem_source(core, at, NULL) != CQ_MEM_CORE)
		n = wanted_ranges(core, at, end, s->flags & PF_X, !add_data, &r);
	/* The first piece holds the prefix and an added range that starts right after it. */
	uint64_t first_end = at;
	size_t i = 0;
	if (n && r[0].start == at) {
		first_end = r[0].end;
		*added += r[0].end - r[0].start;
		i = 1;
	}
	uint64_t piece_end = i < n ? r[i].start : end;
	plan_add(pl, s->vaddr, piece_end - s->vaddr, first_end - s->vaddr, s->flags);
	for (; i < n; i++) {
		uint64_t next = i + 1 < n ? r[i + 1].start : end;
		plan_add(pl, r[i].start, next - r[i].start, r[i].end - r[i].start, s->flags);
		*added += r[i].end - r[i].start;
	}
	free(r);
}

static int piece_cmp(const void *a, const void *b)
{
	const struct piece *x = a, *y = b;
	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

/* Parts of the images' loaded ranges that no core segment covers (gdb's gcore leaves
 * read-only file mappings out entirely): added as pieces of their own, by the same rule. */
static void plan_uncovered(struct cq_core *core, struct plan *pl, uint64_t *added)
{
	for (size_t i = 0; i < core->nimages; i++) {
		struct cq_image *img = &core->images[i];
		if (!img->elf || !img->elf->file || !img->bias_known)
			continue;
		for (size_t k = 0; k < img->elf->nloads; k++) {
			const struct cq_load *l = &img->elf->loads[k];
			uint64_t start = img->bias + l->vaddr, end = start + l->filesz;
			/* walk the gaps between core segments inside [start, end) */
			for (uint64_t at = start; at < end;) {
				uint64_t gap_end = end;
				bool covered = false;
				for (size_t j = 0; j < core->nsegments; j++) {
					const struct cq_segment *s = &core->segments[j];
					if (at >= s->vaddr && at < s->vaddr + s->memsz) {
						at = s->vaddr + s->memsz;
						covered = true;
						break;
					}
					if (s->vaddr > at && s->vaddr < gap_end)
						gap_end = s->vaddr;
				}
				if (covered)
					continue;
				struct range *r = NULL;
				size_t n = wanted_ranges(core, at, gap_end, l->flags & PF_X, false, &r);
				for (size_t m = 0; m < n; m++) {
					plan_add(pl, r[m].start, r[m].end - r[m].start,
						 r[m].end - r[m].start, l->flags);
					*added += r[m].end - r[m].start;
				}
				free(r);
				at = gap_end;
			}
		}
	}
	if (!pl->failed && pl->n)
		qsort(pl->p, pl->n, sizeof(*pl->p), piece_cmp);
}

struct cq_error *cq_core_write_bundle(struct cq_core *core, const char *path,
				      const struct cq_bundle_options *opts,
				      struct cq_bundle_stats *ret)
{
	bool add_data = !(opts && opts->symbols_only);
	const struct cq_target *t = core->target;
	struct cq_bundle_stats st = {0};
	struct cq_error *err = cq_core_load_images(core);
	if (err)
		return err;
	if (cq_same_file(path, core->name))
		return cq_error_create(CQ_ERR_USAGE, "%s is the core itself: write the bundle elsewhere", path);
	for (size_t i = 0; i < core->nimages; i++)
		if (cq_same_file(path, core->images[i].found_path))
			return cq_error_create(CQ_ERR_USAGE, "%s is an input file (%s): write the bundle elsewhere",
					       path, core->images[i].name);

	/* Notes: the core's, then ours. */
	struct cq_buf notes = {0}, ours = {0};
	if ((err = copy_notes(core, &notes)))
		goto out_free;
	size_t nimg = 0;
	for (size_t i = 0; i < core->nimages; i++)
		if (cq_image_symbol_file(&core->images[i]))
			nimg++;
	struct cq_buf head = {0};
	cq_buf_uint(&head, t, 4, CQ_BUNDLE_VERSION);
	cq_buf_uint(&head, t, 4, nimg);
	cq_buf_put(&head, "coreq bundle", sizeof("coreq bundle"));
	cq_elf_note(&ours, t, CQ_BUNDLE_NOTE_NAME, sizeof(CQ_BUNDLE_NOTE_NAME), CQ_NT_BUNDLE, head.p,
		 head.len);
	free(head.p);
	for (size_t i = 0; i < core->nimages; i++) {
		struct cq_image *img = &core->images[i];
		struct cq_elf *e = cq_image_symbol_file(img);
		if (!e)
			continue;
		if ((err = cq_elf_load_symbols(e)))
			goto out_free;
		size_t n = 0;
		put_image(&ours, t, img, e, &n);
		st.symbols += n;
		st.images++;
		uint64_t ub = 0;
		if ((err = put_unwind(core, &ours, img, opts && opts->with_lines, &ub)))
			goto out_free;
		st.unwind_images += ub != 0;
		st.unwind_bytes += ub;
	}
	if ((err = put_donors(core, &ours, &st.donors)))
		goto out_free;
	if (notes.failed || ours.failed) {
		err = &cq_error_nomem;
		goto out_free;
	}

	/* Layout: ELF header, program headers, the two note segments, segment data. */
	bool is64 = t->elf_class == ELFCLASS64;
	size_t ehsize = is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	size_t phsize = is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	struct plan pl = {0};
	for (size_t i = 0; i < core->nsegments; i++)
		plan_segment(core, &pl, &core->segments[i], add_data, &st.added_bytes);
	if (add_data)
		plan_uncovered(core, &pl, &st.added_bytes);
	if (pl.failed) {
		free(pl.p);
		err = &cq_error_nomem;
		goto out_free;
	}
	struct piece *pieces = pl.p;
	size_t nph = 2 + pl.n;
	struct cq_buf hdr = {0};
	uint64_t notes_at = ehsize + nph * phsize, data_at = notes_at + notes.len + ours.len;
	data_at = (data_at + 4095) & ~UINT64_C(4095);
	/* ELF header */
	uint8_t ident[EI_NIDENT] = {ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, t->elf_class,
				    t->little_endian ? ELFDATA2LSB : ELFDATA2MSB, EV_CURRENT};
	cq_buf_put(&hdr, ident, EI_NIDENT);
	cq_buf_uint(&hdr, t, 2, ET_CORE);
	cq_buf_uint(&hdr, t, 2, t->e_machine);
	cq_buf_uint(&hdr, t, 4, EV_CURRENT);
	unsigned w = is64 ? 8 : 4;
	cq_buf_uint(&hdr, t, w, 0);      /* e_entry */
	cq_buf_uint(&hdr, t, w, ehsize); /* e_phoff */
	cq_buf_uint(&hdr, t, w, 0);      /* e_shoff */
	cq_buf_uint(&hdr, t, 4, 0);      /* e_flags */
	cq_buf_uint(&hdr, t, 2, ehsize);
	cq_buf_uint(&hdr, t, 2, phsize);
	cq_buf_uint(&hdr, t, 2, nph < PN_XNUM ? nph : PN_XNUM);
	cq_buf_uint(&hdr, t, 2, 0);
	cq_buf_uint(&hdr, t, 2, 0);
	cq_buf_uint(&hdr, t, 2, 0);
	if (nph >= PN_XNUM) {
		err = cq_error_create(CQ_ERR_UNSUPPORTED, "%s: too many segments to bundle", core->name);
		free(pieces);
		free(hdr.p);
		goto out_free;
	}
	/* Program headers: p_type, p_flags (64-bit order) / p_offset ... (32-bit order). */
	uint64_t off = data_at;
	for (size_t i = 0; i < nph; i++) {
		uint64_t type, flags = 0, poff, vaddr = 0, filesz, memsz, align;
		if (i < 2) {
			type = PT_NOTE;
			poff = i == 0 ? notes_at : notes_at + notes.len;
			filesz = memsz = i == 0 ? notes.len : ours.len;
			align = 4;
		} else {
			const struct piece *pc = &pieces[i - 2];
			type = PT_LOAD;
			flags = pc->flags;
			poff = off;
			vaddr = pc->vaddr;
			filesz = pc->filesz;
			memsz = pc->memsz;
			align = 1;
			off += filesz;
		}
		cq_buf_uint(&hdr, t, 4, type);
		if (is64)
			cq_buf_uint(&hdr, t, 4, flags);
		cq_buf_uint(&hdr, t, w, poff);
		cq_buf_uint(&hdr, t, w, vaddr);
		cq_buf_uint(&hdr, t, w, 0); /* p_paddr */
		cq_buf_uint(&hdr, t, w, filesz);
		cq_buf_uint(&hdr, t, w, memsz);
		if (!is64)
			cq_buf_uint(&hdr, t, 4, flags);
		cq_buf_uint(&hdr, t, w, align);
	}
	if (hdr.failed) {
		err = &cq_error_nomem;
		free(pieces);
		goto out_free;
	}

	/* Written beside the output and renamed into place (output.h): no half-written bundle
	 * is left behind, and nothing planted at a temporary name is followed. The donors
	 * given are inputs too. */
	const char *inputs[64];
	size_t ninputs = 0;
	char *donors = core->opts.type_donors ? strdup(core->opts.type_donors) : NULL;
	for (char *save = NULL, *d = donors ? strtok_r(donors, ":", &save) : NULL; d && ninputs < 64;
	     d = strtok_r(NULL, ":", &save))
		inputs[ninputs++] = d;
	/* no wider than the core it holds (a 0600 core's bundle is 0600) */
	mode_t mode = 0666;
	struct stat cst;
	if (core->file && core->file->path && stat(core->file->path, &cst) == 0)
		mode = cst.st_mode & 0666;
	struct cq_output out;
	err = cq_output_begin_mode(path, "bundle", inputs, ninputs, mode, &out);
	free(donors);
	if (err) {
		free(pieces);
		free(hdr.p);
		goto out_free;
	}
	struct out o = {0};
	size_t plen = strlen(path);
	int wfd = dup(out.fd);
	if (wfd >= 0 && plen > 3 && strcmp(path + plen - 3, ".gz") == 0)
		o.gz = gzdopen(wfd, "wb6");
	else if (wfd >= 0)
		o.f = fdopen(wfd, "wb");
	if (!o.gz && !o.f) {
		err = cq_error_errno(errno ? errno : ENOMEM, "%s", out.tmp);
		if (wfd >= 0)
			close(wfd);
		cq_output_abort(&out);
		free(pieces);
		free(hdr.p);
		goto out_free;
	}
	out_write(&o, hdr.p, hdr.len);
	out_write(&o, notes.p, notes.len);
	out_write(&o, ours.p, ours.len);
	out_write(&o, NULL, data_at - o.pos);
	uint8_t *chunk = malloc(1 << 16);
	for (size_t i = 0; i < pl.n && chunk && !o.failed && !err; i++) {
		const struct piece *pc = &pieces[i];
		for (uint64_t done = 0; done < pc->filesz && !err;) {
			size_t n = pc->filesz - done < (1 << 16) ? (size_t)(pc->filesz - done) : (1 << 16);
			err = cq_core_read(core, pc->vaddr + done, chunk, n);
			out_write(&o, chunk, n);
			done += n;
		}
	}
	if (!chunk && !err)
		err = &cq_error_nomem;
	free(chunk);
	int close_failed = o.gz ? gzclose(o.gz) != Z_OK : fclose(o.f) != 0;
	if (!err && (o.failed || close_failed))
		err = cq_error_errno(errno ? errno : EIO, "writing %s", out.tmp);
	if (err)
		cq_output_abort(&out);
	else
		err = cq_output_commit(&out);
	free(pieces);
	free(hdr.p);
	if (!err) {
		struct stat sb;
		st.size = stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
		if (ret)
			*ret = st;
	}
out_free:
	free(notes.p);
	free(ours.p);
	return err;
}
