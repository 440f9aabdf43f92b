/* SPDX-License-Identifier: MIT */
#include "demangle.h"
#include "elf_file.h"

#include <elf.h>
#include <gelf.h>
#include <libelf.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A symbol an in-place scan found (elf_file.h's raw): table section and entry. */
struct cq_found_symbol {
	struct cq_found_symbol *next;
	size_t scn, index;
	struct cq_symbol sym;
};

static void read_notes(struct cq_elf *e, Elf_Data *data)
{
	size_t pos = 0, next, name_off, desc_off;
	GElf_Nhdr nh;
	while (pos < data->d_size &&
	       (next = gelf_getnote(data, pos, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp((char *)data->d_buf + name_off, "GNU", 4) == 0 && nh.n_descsz > 0 &&
		    nh.n_descsz <= sizeof(e->build_id)) {
			memcpy(e->build_id, (char *)data->d_buf + desc_off, nh.n_descsz);
			e->build_id_len = nh.n_descsz;
		}
		pos = next;
	}
}

static struct cq_error *read_headers(struct cq_elf *e)
{
	Elf *elf = e->elf;
	const char *path = e->file->path;
	GElf_Ehdr eh;
	if (!gelf_getehdr(elf, &eh))
		return cq_error_create(CQ_ERR_FORMAT, "%s: not a readable ELF file: %s", path,
				       elf_errmsg(-1));
	e->e_type = eh.e_type;
	e->e_machine = eh.e_machine;
	e->e_flags = eh.e_flags;
	e->elf_class = eh.e_ident[EI_CLASS];
	e->little_endian = eh.e_ident[EI_DATA] == ELFDATA2LSB;
	e->entry = eh.e_entry;
	size_t phnum;
	if (elf_getphdrnum(elf, &phnum) != 0)
		return cq_error_create(CQ_ERR_MALFORMED, "%s: bad program headers: %s", path,
				       elf_errmsg(-1));
	e->loads = calloc(phnum ? phnum : 1, sizeof(*e->loads));
	if (!e->loads)
		return &cq_error_nomem;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph))
			return cq_error_create(CQ_ERR_MALFORMED, "%s: program header %zu: %s", path,
					       i, elf_errmsg(-1));
		switch (ph.p_type) {
		case PT_LOAD:
			e->loads[e->nloads++] = (struct cq_load){ph.p_vaddr, ph.p_memsz, ph.p_offset,
								 ph.p_filesz, ph.p_flags};
			if (!e->has_phdr && ph.p_offset == 0) {
				/* No PT_PHDR (static): the headers sit at the start of this load */
				e->phdr_vaddr = ph.p_vaddr + eh.e_phoff;
			}
			break;
		case PT_PHDR:
			e->phdr_vaddr = ph.p_vaddr;
			e->has_phdr = true;
			break;
		case PT_DYNAMIC:
			e->dynamic_vaddr = ph.p_vaddr;
			e->has_dynamic = true;
			break;
		case PT_TLS:
			e->has_tls = true;
			break;
		case PT_NOTE: {
			Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset,
							   (size_t)ph.p_filesz, ELF_T_NHDR);
			if (d)
				read_notes(e, d);
			break;
		}
		}
	}
	if (!e->has_phdr && e->nloads)
		e->has_phdr = true; /* derived from the first load above */
	/* Separate debug files have no PT_NOTE with contents: their build-id is a section. */
	size_t shstrndx;
	if (elf_getshdrstrndx(elf, &shstrndx) == 0) {
		for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
			GElf_Shdr sh;
			if (!gelf_getshdr(scn, &sh))
				continue;
			if (sh.sh_type == SHT_SYMTAB)
				e->has_symtab = true;
			if (sh.sh_type == SHT_GNU_HASH)
				e->gnu_hash = scn;
			const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
			if ((sh.sh_flags & SHF_COMPRESSED) || !name || !strncmp(name, ".zdebug", 7))
				e->compressed_sections = true;
			GElf_Chdr ch;
			if ((sh.sh_flags & SHF_COMPRESSED) && sh.sh_type != SHT_NOBITS && gelf_getchdr(scn, &ch) &&
			    ch.ch_type == 2 /* ELFCOMPRESS_ZSTD */)
				e->zstd_sections = true;
			if (name && !strncmp(name, ".debug_", 7) && sh.sh_type != SHT_NOBITS)
				e->has_dwarf = true;
			if (!name)
				continue;
			/* ELFv1 (e_flags 0 or 1; ELFv2 is 2): function symbols name descriptors. A
			 * debug file's .opd is NOBITS: its descriptors are read from the main file. */
			if (e->e_machine == EM_PPC64 && e->elf_class == ELFCLASS64 &&
			    (eh.e_flags & 3) != 2 && eh.e_type != ET_REL && (sh.sh_flags & SHF_ALLOC) &&
			    strcmp(name, ".opd") == 0)
				e->opd_abi = true;
			if (sh.sh_type == SHT_NOTE && !e->build_id_len && sh.sh_type != SHT_NOBITS) {
				Elf_Data *d = elf_getdata(scn, NULL);
				if (d && d->d_type == ELF_T_NHDR)
					read_notes(e, d);
			} else if (strcmp(name, ".gnu_debugaltlink") == 0 && sh.sh_type != SHT_NOBITS) {
				/* the alt file's path, its NUL, then its build-id */
				Elf_Data *d = elf_getdata(scn, NULL);
				const char *nul = d && d->d_size > 1 ? memchr(d->d_buf, 0, d->d_size) : NULL;
				size_t idlen = nul ? d->d_size - (size_t)(nul + 1 - (const char *)d->d_buf) : 0;
				if (nul && nul != d->d_buf && idlen > 1 && idlen <= sizeof(e->altlink_build_id) && !e->altlink) {
					if (!(e->altlink = strdup(d->d_buf)))
						return &cq_error_nomem;
					memcpy(e->altlink_build_id, nul + 1, idlen);
					e->altlink_build_id_len = idlen;
				}
			} else if (strcmp(name, ".gnu_debuglink") == 0 && sh.sh_type != SHT_NOBITS) {
				Elf_Data *d = elf_getdata(scn, NULL);
				if (d && d->d_size > 0 && memchr(d->d_buf, 0, d->d_size)) {
					e->debuglink = strdup(d->d_buf);
					if (!e->debuglink)
						return &cq_error_nomem;
				}
			}
		}
	}
	return NULL;
}

static struct cq_error *elf_from_file(struct cq_elf *e, const char *path, struct cq_elf **ret);

struct cq_error *cq_elf_open(const char *path, struct cq_elf **ret)
{
	struct cq_elf *e = calloc(1, sizeof(*e));
	if (!e)
		return &cq_error_nomem;
	struct cq_error *err = cq_file_open(path, 0, &e->file);
	if (err) {
		free(e);
		return err;
	}
	return elf_from_file(e, path, ret);
}

struct cq_error *cq_elf_open_memory(uint8_t *buf, size_t size, const char *name, struct cq_elf **ret)
{
	struct cq_elf *e = calloc(1, sizeof(*e));
	if (!e) {
		free(buf);
		return &cq_error_nomem;
	}
	struct cq_error *err = cq_file_of_memory(buf, size, name, &e->file);
	if (err) {
		free(e);
		return err;
	}
	return elf_from_file(e, name, ret);
}

/* The ELF of the opened e->file (cq_elf_open): @p e is closed on error. */
static struct cq_error *elf_from_file(struct cq_elf *e, const char *path, struct cq_elf **ret)
{
	struct cq_error *err;
	elf_version(EV_CURRENT);
	/* mapped, not read: libelf then hands out section data in place (a library's .symtab
	 * and .strtab are read for every name lookup: copying them cost more than the rest of
	 * `info`), and the kernel maps the file's cached pages in batches. Sections in the
	 * target's byte order are converted into copies as before. */
	e->elf = e->file->mem ? elf_memory((char *)e->file->mem, (size_t)e->file->size)
			      : elf_begin(e->file->fd, ELF_C_READ_MMAP, NULL);
	if (!e->elf || elf_kind(e->elf) != ELF_K_ELF) {
		err = cq_error_create(CQ_ERR_FORMAT, "%s: not an ELF file", path);
		cq_elf_close(e);
		return err;
	}
	if ((err = read_headers(e))) {
		cq_elf_close(e);
		return err;
	}
	*ret = e;
	return NULL;
}

struct cq_elf *cq_elf_share(struct cq_elf *e)
{
	e->refs++;
	return e;
}

void cq_elf_close(struct cq_elf *e)
{
	if (!e)
		return;
	if (e->refs) {
		e->refs--;
		return;
	}
	free(e->syms);
	for (struct cq_found_symbol *f = e->found, *next; f; f = next) {
		next = f->next;
		free(f);
	}
	free(e->strtab);
	free(e->by_name);
	for (size_t k = 0; e->plain && k <= e->by_plain_mask; k++)
		free(e->plain[k]);
	free(e->plain);
	free(e->by_plain);
	free(e->by_addr);
	free(e->sym_opd);
	free(e->opd_alias);
	cq_elf_close(e->opd_file);
	free(e->loads);
	free(e->debuglink);
	free(e->altlink);
	if (e->elf)
		elf_end(e->elf);
	cq_file_close(e->file);
	free(e);
}

struct cq_error *cq_elf_from_symbols(struct cq_symbol *syms, size_t nsyms, char *strtab,
				     const uint8_t *build_id, size_t build_id_len,
				     struct cq_elf **ret)
{
	struct cq_elf *e = calloc(1, sizeof(*e));
	if (!e) {
		free(syms);
		free(strtab);
		return &cq_error_nomem;
	}
	e->syms = syms;
	e->nsyms = nsyms;
	e->strtab = strtab;
	e->syms_loaded = true;
	e->has_symtab = true;
	if (build_id_len <= sizeof(e->build_id)) {
		memcpy(e->build_id, build_id, build_id_len);
		e->build_id_len = build_id_len;
	}
	*ret = e;
	return NULL;
}

/* Whether @p x should answer a lookup of its name rather than @p y (same name):
 * .symtab before .dynsym, then global before weak before local. */
static bool better_named(const struct cq_symbol *x, const struct cq_symbol *y)
{
	if (x->dynamic != y->dynamic)
		return !x->dynamic;
	int rx = x->bind == STB_GLOBAL ? 0 : x->bind == STB_WEAK ? 1 : 2;
	int ry = y->bind == STB_GLOBAL ? 0 : y->bind == STB_WEAK ? 1 : 2;
	return rx < ry;
}

/* FNV-1a: cheap, and good enough for symbol names. */
static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

/* Open-addressing table of the best symbol per name, 2x oversized. A hash, not a sorted
 * index: sorting libomp's ~10,000 names with strcmp cost more than the whole OMPD run. */
static bool build_name_index(struct cq_elf *e)
{
	size_t cap = 16;
	while (cap < 2 * e->nsyms)
		cap *= 2;
	e->by_name = calloc(cap, sizeof(*e->by_name));
	if (!e->by_name)
		return false;
	e->by_name_mask = cap - 1;
	for (size_t i = 0; i < e->nsyms; i++) {
		struct cq_symbol *s = &e->syms[i];
		for (size_t k = name_hash(s->name) & e->by_name_mask;; k = (k + 1) & e->by_name_mask) {
			struct cq_symbol *o = e->by_name[k];
			if (!o) {
				e->by_name[k] = s;
				break;
			}
			if (strcmp(o->name, s->name) == 0) {
				if (better_named(s, o))
					e->by_name[k] = s;
				break;
			}
		}
	}
	return true;
}

/* By address only: ties are settled at lookup time (preferred_symbol), which keeps the
 * comparison cheap; sorting libc's symbols dominates `coreq info` otherwise. */
static int sym_addr_cmp(const void *a, const void *b)
{
	const struct cq_symbol *x = *(const struct cq_symbol *const *)a;
	const struct cq_symbol *y = *(const struct cq_symbol *const *)b;
	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return x < y ? -1 : x > y; /* file order, for a deterministic result */
}

/* Whether @p name is "." followed by @p plain: an old ppc64 ELFv1 code symbol. */
static bool is_dot_name_of(const char *name, const char *plain)
{
	return name[0] == '.' && strcmp(name + 1, plain) == 0;
}

/* Whether @p x names an address better than @p y: sized, then global, then by name. In a
 * ppc64 ELFv1 file a dot symbol (".foo", code) gives way to its function "foo", whose
 * value is that code too (cq_symbol.value): gdb shows "foo". */
static bool preferred_symbol(const struct cq_elf *e, const struct cq_symbol *x,
			     const struct cq_symbol *y)
{
	if (e->opd_abi && (is_dot_name_of(x->name, y->name) || is_dot_name_of(y->name, x->name)))
		return y->name[0] == '.';
	if ((x->size == 0) != (y->size == 0))
		return x->size != 0;
	int rx = x->bind == STB_GLOBAL ? 0 : x->bind == STB_WEAK ? 1 : 2;
	int ry = y->bind == STB_GLOBAL ? 0 : y->bind == STB_WEAK ? 1 : 2;
	if (rx != ry)
		return rx < ry;
	return strcmp(x->name, y->name) < 0;
}

/* An unsigned integer of @p n bytes in the file's byte order. */
static uint64_t load_uint(const uint8_t *p, unsigned n, bool little)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * (little ? i : n - 1 - i));
	return v;
}

/* The .opd section of @p src with contents (SHT_PROGBITS), its data and address range;
 * NULL if there is none or it cannot be read (truncated file: libelf refuses it). */
static const uint8_t *opd_contents(struct cq_elf *src, uint64_t *lo, uint64_t *hi)
{
	size_t shstrndx;
	if (!src->elf || elf_getshdrstrndx(src->elf, &shstrndx) != 0)
		return NULL;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(src->elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC))
			continue;
		const char *name = elf_strptr(src->elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".opd") != 0)
			continue;
		if (sh.sh_type != SHT_PROGBITS)
			return NULL;
		Elf_Data *d = elf_rawdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < 8)
			return NULL;
		uint64_t size = sh.sh_size < d->d_size ? sh.sh_size : d->d_size;
		if (size < 8 || sh.sh_addr > UINT64_MAX - size)
			return NULL;
		*lo = sh.sh_addr;
		*hi = sh.sh_addr + size;
		return d->d_buf;
	}
	return NULL;
}

/* Whether @p addr is in an executable PT_LOAD of @p e: a plausible code entry. */
static bool in_code(const struct cq_elf *e, uint64_t addr)
{
	for (size_t i = 0; i < e->nloads; i++) {
		const struct cq_load *l = &e->loads[i];
		if ((l->flags & PF_X) && addr >= l->vaddr && addr - l->vaddr < l->memsz)
			return true;
	}
	return false;
}

static int dot_plain_cmp(const void *a, const void *b)
{
	const struct cq_symbol *x = *(const struct cq_symbol *const *)a;
	const struct cq_symbol *y = *(const struct cq_symbol *const *)b;
	return strcmp(x->name + 1, y->name + 1);
}

static int dot_key_cmp(const void *key, const void *b)
{
	return strcmp(key, (*(const struct cq_symbol *const *)b)->name + 1);
}

/* Old ppc64 ELFv1 files also have a code symbol ".foo" per function "foo", whose size is
 * the code's (foo's may be the descriptor's): foo, translated to the same address and
 * preferred to name it (preferred_symbol), takes .foo's size. false: out of memory. */
static bool dot_sizes(struct cq_symbol *syms, size_t n, const uint64_t *desc)
{
	size_t ndot = 0;
	for (size_t i = 0; i < n; i++)
		ndot += syms[i].name[0] == '.' && syms[i].name[1];
	if (!ndot)
		return true;
	struct cq_symbol **dots = malloc(ndot * sizeof(*dots));
	if (!dots)
		return false;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (syms[i].name[0] == '.' && syms[i].name[1])
			dots[k++] = &syms[i];
	qsort(dots, ndot, sizeof(*dots), dot_plain_cmp);
	for (size_t i = 0; i < n; i++) {
		if (!desc[i])
			continue;
		struct cq_symbol **d = bsearch(syms[i].name, dots, ndot, sizeof(*dots), dot_key_cmp);
		/* equal names sit together: any of them at the function's code will do */
		for (; d && d > dots && !strcmp(d[-1]->name + 1, syms[i].name); d--)
			;
		for (; d && d < dots + ndot && !strcmp((*d)->name + 1, syms[i].name); d++)
			if ((*d)->value == syms[i].value && (*d)->size) {
				syms[i].size = (*d)->size;
				break;
			}
	}
	free(dots);
	return true;
}

/* ppc64 ELFv1: give every function symbol whose st_value is a descriptor in .opd the code
 * entry of that descriptor (its first doubleword, in the file's byte order), as elfutils'
 * ppc64_resolve_sym_value and gdb do, and keep the descriptor's address (sym_opd) and an
 * alias symbol there (opd_alias). A symbol whose descriptor is not in the file's .opd
 * contents, or whose entry is not in the file's code, keeps its st_value. Only allocation
 * fails. */
static struct cq_error *opd_translate(struct cq_elf *e, struct cq_symbol *syms, size_t n)
{
	struct cq_elf *src = e->opd_file ? e->opd_file : e;
	uint64_t lo, hi;
	const uint8_t *opd = e->opd_abi && src->opd_abi && src->little_endian == e->little_endian ?
				     opd_contents(src, &lo, &hi) : NULL;
	if (!opd || !n)
		return NULL;
	uint64_t *desc = calloc(n, sizeof(*desc));
	if (!desc)
		return &cq_error_nomem;
	size_t count = 0;
	for (size_t i = 0; i < n; i++) {
		struct cq_symbol *s = &syms[i];
		if ((s->type != STT_FUNC && s->type != STT_GNU_IFUNC) || s->value < lo ||
		    s->value > hi - 8)
			continue;
		uint64_t entry = load_uint(opd + (s->value - lo), 8, src->little_endian);
		if (!in_code(src, entry))
			continue;
		desc[i] = s->value;
		s->value = entry;
		count += desc[i] != 0;
	}
	if (!count) {
		free(desc);
		return NULL;
	}
	if (!dot_sizes(syms, n, desc)) {
		free(desc);
		return &cq_error_nomem;
	}
	struct cq_symbol *alias = calloc(count, sizeof(*alias));
	if (!alias) {
		free(desc);
		return &cq_error_nomem;
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (!desc[i])
			continue;
		/* a descriptor is three doublewords: entry, TOC, environment */
		alias[k] = syms[i];
		alias[k].value = desc[i];
		alias[k].size = hi - desc[i] < 24 ? hi - desc[i] : 24;
		alias[k].type = STT_OBJECT;
		k++;
	}
	e->sym_opd = desc;
	e->opd_alias = alias;
	e->nopd_alias = count;
	return NULL;
}

void cq_elf_set_opd_file(struct cq_elf *debug, struct cq_elf *main)
{
	if (debug && main && debug != main && debug->opd_abi && main->opd_abi &&
	    !debug->syms_loaded && !debug->opd_file)
		debug->opd_file = cq_elf_share(main);
}

uint64_t cq_elf_symbol_descriptor(const struct cq_elf *e, const struct cq_symbol *s)
{
	if (!e->sym_opd || s < e->syms || s >= e->syms + e->nsyms)
		return 0;
	return e->sym_opd[s - e->syms];
}

/* How many entries of a symbol table section gelf_getsym would read: the header's count,
 * but no entry past the data (a crafted sh_entsize cannot make more). */
static size_t symbol_count(const GElf_Shdr *sh, const Elf_Data *d, size_t symsz)
{
	size_t count = d->d_size / sh->sh_entsize, fit = d->d_size / symsz;
	return count < fit ? count : fit;
}

struct cq_error *cq_elf_load_symbols(struct cq_elf *e)
{
	if (e->syms_loaded || !e->elf)
		return NULL;
	/* the entries as libelf has them in memory (host byte order, the file's class), read in
	 * place: gelf_getsym's call and checks per entry were a third of loading libc's */
	bool is64 = e->elf_class == ELFCLASS64;
	size_t symsz = is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
	/* the tables' sizes first, for one allocation: growing the array by doubling touched
	 * twice its memory, and each fresh page costs a page fault (a microsecond here) */
	size_t cap = 0, n = 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e->elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (d && sh.sh_entsize && d->d_type == ELF_T_SYM && d->d_buf)
			cap += symbol_count(&sh, d, symsz);
	}
	struct cq_symbol *syms = malloc((cap ? cap : 1) * sizeof(*syms));
	if (!syms)
		return &cq_error_nomem;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e->elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !sh.sh_entsize)
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			e->has_symtab = true;
		if (d->d_type != ELF_T_SYM || !d->d_buf)
			continue; /* gelf_getsym refuses every entry */
		/* the names indexed directly when the string table ends in a NUL (elf_strptr
		 * checks each name again: half the cost of loading libc's 10,000 symbols) */
		Elf_Scn *strscn = elf_getscn(e->elf, sh.sh_link);
		GElf_Shdr strsh;
		Elf_Data *str = strscn && gelf_getshdr(strscn, &strsh) && strsh.sh_type == SHT_STRTAB
					? elf_getdata(strscn, NULL) : NULL;
		const char *strbuf = str && str->d_buf && str->d_size && ((const char *)str->d_buf)[str->d_size - 1] == 0
					     ? str->d_buf : NULL;
		size_t count = symbol_count(&sh, d, symsz);
		for (size_t i = 1; i < count && n < cap; i++) {
			const char *at = (const char *)d->d_buf + i * symsz;
			uint64_t value, size;
			uint32_t name_off;
			unsigned char info;
			uint16_t shndx;
			/* copied out: libelf may hand out an unaligned table where the host allows it */
			if (is64) {
				Elf64_Sym s;
				memcpy(&s, at, sizeof(s));
				value = s.st_value, size = s.st_size, name_off = s.st_name, info = s.st_info;
				shndx = s.st_shndx;
			} else {
				Elf32_Sym s;
				memcpy(&s, at, sizeof(s));
				value = s.st_value, size = s.st_size, name_off = s.st_name, info = s.st_info;
				shndx = s.st_shndx;
			}
			if (shndx == SHN_UNDEF)
				continue;
			int type = GELF_ST_TYPE(info);
			if (type == STT_SECTION || type == STT_FILE)
				continue;
			const char *name = !strbuf ? elf_strptr(e->elf, sh.sh_link, name_off)
				: name_off < str->d_size ? strbuf + name_off : NULL;
			if (!name || !*name)
				continue;
			syms[n++] = (struct cq_symbol){name, value, size, (uint8_t)type, (uint8_t)GELF_ST_BIND(info),
						       sh.sh_type == SHT_DYNSYM};
		}
	}
	struct cq_error *err = opd_translate(e, syms, n);
	if (err) {
		free(syms);
		return err;
	}
	/* the address index (by_addr) is made when lookups turn to sorting: most runs ask a
	 * few addresses per file, answered by scanning the symbols (scan_symbol_at) */
	e->syms = syms;
	e->nsyms = n;
	e->syms_loaded = true;
	return NULL;
}

/* Whether the GNU hash table's Bloom filter rules @p name out of .dynsym. Only for files
 * without .symtab, where .dynsym holds every symbol coreq would find: looking a name up in
 * the dynamic linker's order asks every library, and most do not have it; this answers
 * them without loading their symbols. */
static bool surely_absent(const struct cq_elf *e, const char *name)
{
	if (e->syms_loaded || e->has_symtab || !e->gnu_hash)
		return false;
	Elf_Data *d = elf_rawdata(e->gnu_hash, NULL);
	unsigned word = e->elf_class == ELFCLASS64 ? 8 : 4;
	if (!d || d->d_size < 16)
		return false;
	const uint8_t *p = d->d_buf;
#define U(at, n) load_uint(p + (at), (n), e->little_endian)
	uint64_t bloom_size = U(8, 4), shift = U(12, 4);
	if (bloom_size == 0 || 16 + bloom_size * word > d->d_size)
		return false;
	uint32_t h = 5381;
	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		h = h * 33 + *c;
	unsigned bits = word * 8;
	uint64_t w = U(16 + ((h / bits) % bloom_size) * word, word);
#undef U
	uint64_t mask = (UINT64_C(1) << (h % bits)) | (UINT64_C(1) << ((h >> shift) % bits));
	return (w & mask) != mask;
}

const struct cq_symbol *cq_elf_find_symbol(struct cq_elf *e, const char *name)
{
	if (surely_absent(e, name))
		return NULL;
	struct cq_error *err = cq_elf_load_symbols(e);
	if (err) {
		/* only allocation can fail here; the caller sees "not found" */
		cq_error_destroy(err);
		return NULL;
	}
	if (!e->nsyms || (!e->by_name && !build_name_index(e)))
		return NULL;
	for (size_t k = name_hash(name) & e->by_name_mask; e->by_name[k]; k = (k + 1) & e->by_name_mask)
		if (strcmp(e->by_name[k]->name, name) == 0)
			return e->by_name[k];
	return NULL;
}

/* The plain-name index (elf_file.h), same shape as the by-name one. Only mangled names are
 * demangled, once per file, on the first lookup that needs it. */
static bool build_plain_index(struct cq_elf *e)
{
	size_t n = 0;
	for (size_t i = 0; i < e->nsyms; i++)
		n += !strncmp(e->syms[i].name, "_Z", 2) || !strncmp(e->syms[i].name, "_R", 2);
	size_t cap = 16;
	while (cap < 2 * n)
		cap *= 2;
	e->plain = calloc(cap, sizeof(*e->plain));
	e->by_plain = calloc(cap, sizeof(*e->by_plain));
	if (!e->plain || !e->by_plain) {
		free(e->plain);
		free(e->by_plain);
		e->plain = NULL;
		e->by_plain = NULL;
		return false;
	}
	e->by_plain_mask = cap - 1;
	for (size_t i = 0; i < e->nsyms && n; i++) {
		struct cq_symbol *s = &e->syms[i];
		if (strncmp(s->name, "_Z", 2) && strncmp(s->name, "_R", 2))
			continue;
		/* options 0: no parameter list, which is what a plain name is */
		char *d = cq_demangle(s->name, false);
		if (!d)
			continue;
		for (size_t k = name_hash(d) & e->by_plain_mask;; k = (k + 1) & e->by_plain_mask) {
			if (!e->plain[k]) {
				e->plain[k] = d;
				e->by_plain[k] = s;
				break;
			}
			if (strcmp(e->plain[k], d) == 0) {
				if (better_named(s, e->by_plain[k]))
					e->by_plain[k] = s;
				free(d);
				break;
			}
		}
	}
	return true;
}

const struct cq_symbol *cq_elf_find_symbol_plain(struct cq_elf *e, const char *name)
{
	struct cq_error *err = cq_elf_load_symbols(e);
	if (err) {
		cq_error_destroy(err);
		return NULL;
	}
	if (!e->nsyms || (!e->plain && !build_plain_index(e)))
		return NULL;
	for (size_t k = name_hash(name) & e->by_plain_mask; e->plain[k]; k = (k + 1) & e->by_plain_mask)
		if (strcmp(e->plain[k], name) == 0)
			return e->by_plain[k];
	return NULL;
}

/* Whether @p s is in the address index: defined, not TLS (an offset, not an address). */
static bool addressed(const struct cq_symbol *s)
{
	return s->type != STT_TLS && s->value != 0;
}

/* The address index's members in its order: the symbols, then the ppc64 descriptor
 * aliases; NULL past the end. */
static struct cq_symbol *addressed_at(const struct cq_elf *e, size_t i)
{
	return i < e->nsyms ? &e->syms[i] : i - e->nsyms < e->nopd_alias ? &e->opd_alias[i - e->nsyms] : NULL;
}

/* The best of @p n symbols at or below @p vaddr into *@p best (scan_symbol_at). */
static void scan_symbols(const struct cq_elf *e, const struct cq_symbol *syms, size_t n, uint64_t vaddr,
			 const struct cq_symbol **best)
{
	const struct cq_symbol *b = *best;
	uint64_t floor = b ? b->value : 0;
	for (size_t i = 0; i < n; i++) {
		const struct cq_symbol *s = &syms[i];
		if (s->value > vaddr || s->value < floor || !addressed(s))
			continue;
		if (!b || s->value > b->value || preferred_symbol(e, s, b)) {
			b = s;
			floor = s->value;
		}
	}
	*best = b;
}

/* Nearest symbol at or below @p vaddr by one pass over all of them, in the index's order
 * (the first of equally preferred ones wins, as in the sorted index). */
static const struct cq_symbol *scan_symbol_at(const struct cq_elf *e, uint64_t vaddr)
{
	const struct cq_symbol *best = NULL;
	scan_symbols(e, e->syms, e->nsyms, vaddr, &best);
	scan_symbols(e, e->opd_alias, e->nopd_alias, vaddr, &best);
	return best;
}

/* The address index, sorted; false when there is no memory for it (lookups scan). */
static bool build_addr_index(struct cq_elf *e)
{
	size_t n = e->nsyms + e->nopd_alias;
	e->by_addr = malloc((n ? n : 1) * sizeof(*e->by_addr));
	if (!e->by_addr)
		return false;
	for (size_t i = 0; i < n; i++) {
		struct cq_symbol *s = addressed_at(e, i);
		if (addressed(s))
			e->by_addr[e->nby_addr++] = s;
	}
	if (e->nby_addr)
		qsort(e->by_addr, e->nby_addr, sizeof(*e->by_addr), sym_addr_cmp);
	e->by_addr_sorted = true;
	return true;
}

/* Below this many lookups a linear scan is cheaper than sorting libc's symbols. */
#define SCAN_LOOKUPS 16

static const struct cq_symbol *lookup_symbol_at(struct cq_elf *e, uint64_t vaddr);

/* Whether address lookups can scan the symbol tables in place (elf_file.h's raw): tables
 * of entries libelf converted, each with a string table ending in a NUL, in a file whose
 * symbol values are used as they are (not ppc64 ELFv1's descriptors). */
static bool raw_usable(struct cq_elf *e)
{
	if (e->raw_state)
		return e->raw_state > 0;
	e->raw_state = -1;
	if (e->syms_loaded || !e->elf || e->opd_abi)
		return false;
	size_t symsz = e->elf_class == ELFCLASS64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e->elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !sh.sh_entsize || d->d_type != ELF_T_SYM || !d->d_buf)
			continue; /* no entries (as cq_elf_load_symbols) */
		Elf_Scn *strscn = elf_getscn(e->elf, sh.sh_link);
		GElf_Shdr strsh;
		Elf_Data *str = strscn && gelf_getshdr(strscn, &strsh) && strsh.sh_type == SHT_STRTAB
					? elf_getdata(strscn, NULL) : NULL;
		if (!str || !str->d_buf || !str->d_size || ((const char *)str->d_buf)[str->d_size - 1] != 0 ||
		    e->nraw == sizeof(e->raw) / sizeof(e->raw[0]))
			return false;
		e->raw[e->nraw++] = (struct cq_raw_symtab){d->d_buf, symbol_count(&sh, d, symsz), elf_ndxscn(scn),
							    str->d_buf, str->d_size, sh.sh_type == SHT_DYNSYM};
	}
	e->raw_state = 1;
	return true;
}

/* One field of a table entry, copied out: libelf may hand out an unaligned table where the
 * host allows it (and copying the whole entry to the stack made the scan three times slower). */
#define SYM_FIELD(p, type, field) ({ __typeof__(((type *)0)->field) v_; \
	memcpy(&v_, (p) + offsetof(type, field), sizeof(v_)); v_; })

/* What raw_symbols_at() keeps per address: the best symbol so far, where it is. */
struct raw_best {
	struct cq_symbol sym;
	size_t scn, index;
	bool have;
	uint64_t floor; /* entries below the best so far cannot win */
};

/* The copy of the entry @p b found, kept with @p e (one per table entry, so that a symbol
 * found twice is one pointer); NULL only when there is none (or no memory for it). */
static const struct cq_symbol *raw_found(struct cq_elf *e, const struct raw_best *b)
{
	if (!b->have)
		return NULL;
	for (struct cq_found_symbol *f = e->found; f; f = f->next)
		if (f->scn == b->scn && f->index == b->index)
			return &f->sym;
	struct cq_found_symbol *f = malloc(sizeof(*f));
	if (!f)
		return NULL;
	*f = (struct cq_found_symbol){e->found, b->scn, b->index, b->sym};
	e->found = f;
	return &f->sym;
}

/* scan_symbol_at() over libelf's tables in place, for @p n addresses in one pass (ret[k]
 * for vaddrs[k]; n <= RAW_BATCH): the same symbols (defined, named, not a section, file or
 * TLS symbol, at a non-zero address), in the same order, the same choice. libc's 10,000
 * entries are 240 KB: a walk's frames in one scan instead of one scan each. */
#define RAW_BATCH 32
static void raw_symbols_at(struct cq_elf *e, const uint64_t *vaddrs, size_t n, const struct cq_symbol **ret)
{
	bool is64 = e->elf_class == ELFCLASS64;
	size_t symsz = is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
	struct raw_best best[RAW_BATCH];
	uint64_t top = 0, low = 0; /* an entry outside [low, top] is no address's */
	for (size_t k = 0; k < n; k++) {
		best[k] = (struct raw_best){.have = false};
		top = vaddrs[k] > top ? vaddrs[k] : top;
	}
	for (unsigned t = 0; t < e->nraw; t++) {
		const struct cq_raw_symtab *r = &e->raw[t];
		for (size_t i = 1; i < r->count; i++) {
			const char *p = r->data + i * symsz;
			/* most entries end here: above every address, or below every best so far */
			uint64_t value = is64 ? SYM_FIELD(p, Elf64_Sym, st_value) : SYM_FIELD(p, Elf32_Sym, st_value);
			if (value > top || value < low || value == 0)
				continue;
			size_t first = 0; /* the first address this entry could be the answer for */
			while (first < n && (value > vaddrs[first] || value < best[first].floor))
				first++;
			if (first == n)
				continue;
			unsigned char info = is64 ? SYM_FIELD(p, Elf64_Sym, st_info) : SYM_FIELD(p, Elf32_Sym, st_info);
			uint16_t shndx = is64 ? SYM_FIELD(p, Elf64_Sym, st_shndx) : SYM_FIELD(p, Elf32_Sym, st_shndx);
			uint32_t name = is64 ? SYM_FIELD(p, Elf64_Sym, st_name) : SYM_FIELD(p, Elf32_Sym, st_name);
			int type = GELF_ST_TYPE(info);
			if (shndx == SHN_UNDEF || type == STT_SECTION || type == STT_FILE || type == STT_TLS ||
			    name >= r->strsize || !r->str[name])
				continue;
			uint64_t size = is64 ? SYM_FIELD(p, Elf64_Sym, st_size) : SYM_FIELD(p, Elf32_Sym, st_size);
			struct cq_symbol s = {r->str + name, value, size, (uint8_t)type, (uint8_t)GELF_ST_BIND(info),
					      r->dynamic};
			bool moved = false;
			for (size_t k = first; k < n; k++) {
				struct raw_best *b = &best[k];
				if (value > vaddrs[k] || value < b->floor)
					continue;
				if (!b->have || value > b->sym.value || preferred_symbol(e, &s, &b->sym)) {
					*b = (struct raw_best){s, r->scn, i, true, value};
					moved = true;
				}
			}
			if (moved) {
				low = best[0].floor;
				for (size_t k = 1; k < n; k++)
					low = best[k].floor < low ? best[k].floor : low;
			}
		}
	}
	for (size_t k = 0; k < n; k++)
		ret[k] = raw_found(e, &best[k]);
}

/* A symbol's answer for @p vaddr as cq_elf_symbol_at() gives it: inside the symbol's size
 * when it has one; remembered. */
static const struct cq_symbol *answer(struct cq_elf *e, uint64_t vaddr, const struct cq_symbol *s)
{
	if (s && s->size && vaddr - s->value >= s->size)
		s = NULL;
	size_t slot = e->recent_next++ % (sizeof(e->recent) / sizeof(e->recent[0]));
	e->recent[slot].valid = true;
	e->recent[slot].vaddr = vaddr;
	e->recent[slot].sym = s;
	return s;
}

const struct cq_symbol *cq_elf_symbol_at(struct cq_elf *e, uint64_t vaddr)
{
	/* Threads of a core sit at few distinct pcs: remember recent answers. */
	for (size_t i = 0; i < sizeof(e->recent) / sizeof(e->recent[0]); i++)
		if (e->recent[i].valid && e->recent[i].vaddr == vaddr)
			return e->recent[i].sym;
	const struct cq_symbol *s;
	if (!e->syms_loaded && e->addr_lookups < SCAN_LOOKUPS && raw_usable(e)) {
		/* a few lookups: scanned in place, nothing loaded */
		e->addr_lookups++;
		raw_symbols_at(e, &vaddr, 1, &s);
	} else {
		struct cq_error *err = cq_elf_load_symbols(e);
		if (err) {
			cq_error_destroy(err);
			return NULL;
		}
		s = lookup_symbol_at(e, vaddr);
	}
	return answer(e, vaddr, s);
}

void cq_elf_symbols_at(struct cq_elf *e, const uint64_t *vaddrs, size_t n, const struct cq_symbol **ret)
{
	if (n > 1 && n <= RAW_BATCH && !e->syms_loaded && e->addr_lookups < SCAN_LOOKUPS && raw_usable(e)) {
		/* one scan for all: counted as one lookup of the few scanned in place */
		e->addr_lookups++;
		raw_symbols_at(e, vaddrs, n, ret);
		for (size_t k = 0; k < n; k++)
			ret[k] = answer(e, vaddrs[k], ret[k]);
		return;
	}
	for (size_t k = 0; k < n; k++)
		ret[k] = cq_elf_symbol_at(e, vaddrs[k]);
}

static const struct cq_symbol *lookup_symbol_at(struct cq_elf *e, uint64_t vaddr)
{
	const struct cq_symbol *s;
	if (e->addr_lookups < SCAN_LOOKUPS || (!e->by_addr_sorted && !build_addr_index(e))) {
		e->addr_lookups++;
		s = scan_symbol_at(e, vaddr);
	} else {
		size_t lo = 0, hi = e->nby_addr;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (e->by_addr[mid]->value <= vaddr)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == 0)
			return NULL;
		/* Several symbols at one address (aliases): pick the preferred name. */
		uint64_t v = e->by_addr[lo - 1]->value;
		s = e->by_addr[lo - 1];
		for (size_t i = lo - 1; i > 0 && e->by_addr[i - 1]->value == v; i--)
			if (preferred_symbol(e, e->by_addr[i - 1], s))
				s = e->by_addr[i - 1];
	}
	return s;
}

size_t cq_elf_rodata_sections(struct cq_elf *e, struct cq_range *ret, size_t max)
{
	size_t n = 0, shstrndx;
	if (!e->elf || elf_getshdrstrndx(e->elf, &shstrndx) != 0)
		return 0;
	for (Elf_Scn *scn = NULL; n < max && (scn = elf_nextscn(e->elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_ALLOC) ||
		    (sh.sh_flags & (SHF_WRITE | SHF_EXECINSTR)) || !sh.sh_size)
			continue;
		const char *name = elf_strptr(e->elf, shstrndx, sh.sh_name);
		if (name && (strncmp(name, ".rodata", 7) == 0 || strcmp(name, ".interp") == 0))
			ret[n++] = (struct cq_range){sh.sh_addr, sh.sh_addr + sh.sh_size};
	}
	return n;
}

struct cq_error *cq_elf_read_vaddr(struct cq_elf *e, uint64_t vaddr, void *buf, size_t len)
{
	for (size_t i = 0; i < e->nloads; i++) {
		const struct cq_load *l = &e->loads[i];
		if (vaddr >= l->vaddr && vaddr - l->vaddr < l->filesz &&
		    len <= l->filesz - (vaddr - l->vaddr))
			return cq_file_read(e->file, buf, len, l->offset + (vaddr - l->vaddr),
					    "file contents");
	}
	return cq_error_fault(vaddr, "%s: address 0x%llx is not in the file's loaded contents",
			      e->file->path, (unsigned long long)vaddr);
}
