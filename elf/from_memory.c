/* SPDX-License-Identifier: MIT */
/* An image's ELF file rebuilt from its mappings (from_memory.h). */
#include "from_memory.h"

#include <elf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "elf_file.h"

#define MAX_PHDRS 256
#define MAX_DYNAMIC 4096

/* The image's bytes, in its class and byte order. Reads outside them give 0 with *bad set,
 * which every caller checks once at the end: the bytes are the target's, not trusted. */
struct image {
	uint8_t *p;
	size_t size;
	bool is64, le, bad;
};

static uint64_t get(struct image *m, uint64_t off, unsigned n)
{
	if (off > m->size || n > m->size - off) {
		m->bad = true;
		return 0;
	}
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)m->p[off + (m->le ? i : n - 1 - i)] << (8 * i);
	return v;
}

static void put(const struct image *m, uint8_t *at, unsigned n, uint64_t v)
{
	for (unsigned i = 0; i < n; i++)
		at[m->le ? i : n - 1 - i] = (uint8_t)(v >> (8 * i));
}

struct phdr {
	uint32_t type;
	uint64_t offset, vaddr, filesz;
};

struct layout {
	struct phdr ph[MAX_PHDRS];
	size_t n;
	uint64_t bias;
};

/* The file offset of link-time [@p vaddr, + @p len) when a PT_LOAD's bytes hold it and the
 * image has them, else UINT64_MAX. */
static uint64_t offset_of(const struct image *m, const struct layout *l, uint64_t vaddr, uint64_t len)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct phdr *p = &l->ph[i];
		if (p->type != PT_LOAD || vaddr < p->vaddr || vaddr - p->vaddr > p->filesz ||
		    len > p->filesz - (vaddr - p->vaddr))
			continue;
		uint64_t off = p->offset + (vaddr - p->vaddr);
		if (off <= m->size && len <= m->size - off)
			return off;
	}
	return UINT64_MAX;
}

/* A dynamic entry's address as linked: relocated by the dynamic linker (bias added) or not,
 * whichever the image holds; 0 when neither. */
static uint64_t linked(const struct image *m, const struct layout *l, uint64_t v)
{
	if (l->bias && v >= l->bias && offset_of(m, l, v - l->bias, 1) != UINT64_MAX)
		return v - l->bias;
	return offset_of(m, l, v, 1) != UINT64_MAX ? v : 0;
}

/* One section header to write. */
struct shdr {
	uint32_t name, type;
	uint64_t flags, addr, offset, size;
	uint32_t link, info;
	uint64_t align, entsize;
};

enum { S_NULL, S_DYNSYM, S_DYNSTR, S_GNU_HASH, S_EH_FRAME_HDR, S_EH_FRAME, S_SHSTRTAB, S_COUNT };
static const char shstrtab[] = "\0.dynsym\0.dynstr\0.gnu.hash\0.eh_frame_hdr\0.eh_frame\0.shstrtab";
static const uint32_t shname[S_COUNT] = {0, 1, 9, 17, 27, 41, 51};

/* How many symbols .dynsym has, from the GNU hash table at file offset @p g (its size into
 * *@p gsize): past the last bucket's chain, as the dynamic linker counts them. 0 when the
 * table is not well formed. */
static uint64_t gnu_hash_count(struct image *m, uint64_t g, uint64_t *gsize)
{
	uint64_t nbuckets = get(m, g, 4), symoffset = get(m, g + 4, 4), bloom = get(m, g + 8, 4);
	uint64_t word = m->is64 ? 8 : 4, buckets = g + 16 + bloom * word, chains = buckets + 4 * nbuckets;
	if (m->bad || nbuckets > m->size / 4 || bloom > m->size / word)
		return 0;
	uint64_t last = 0;
	for (uint64_t i = 0; i < nbuckets && !m->bad; i++) {
		uint64_t b = get(m, buckets + 4 * i, 4);
		if (b > last)
			last = b;
	}
	if (m->bad || (last && last < symoffset))
		return 0;
	uint64_t n = symoffset;
	if (last) {
		for (n = last; !m->bad && !(get(m, chains + 4 * (n - symoffset), 4) & 1); n++)
			if (n - symoffset > m->size / 4)
				return 0;
		n++;
	}
	if (m->bad)
		return 0;
	*gsize = chains + 4 * (n - symoffset) - g;
	return n;
}

/* The .eh_frame that .eh_frame_hdr at @p hdr (link-time @p hdr_vaddr) points to, as its
 * link-time address; 0 when its encoding is not one linkers write. */
static uint64_t eh_frame_of(struct image *m, uint64_t hdr, uint64_t hdr_vaddr)
{
	if (get(m, hdr, 1) != 1)
		return 0;
	unsigned enc = (unsigned)get(m, hdr + 1, 1);
	uint64_t v;
	switch (enc & 0x0f) {
	case 0x00: v = get(m, hdr + 4, m->is64 ? 8 : 4); break; /* absptr */
	case 0x03: v = get(m, hdr + 4, 4); break;               /* udata4 */
	case 0x0b: v = (uint64_t)(int64_t)(int32_t)get(m, hdr + 4, 4); break; /* sdata4 */
	case 0x04: case 0x0c: v = get(m, hdr + 4, 8); break;    /* udata8, sdata8 */
	default: return 0;
	}
	switch (enc & 0x70) {
	case 0x00: break;                   /* absolute */
	case 0x10: v += hdr_vaddr + 4; break; /* pcrel: from the field */
	case 0x30: v += hdr_vaddr; break;     /* datarel: from the header */
	default: return 0;
	}
	return m->is64 ? v : v & 0xffffffffu;
}

/* The sections the program headers locate (from_memory.h). */
static void find_sections(struct image *m, const struct layout *l, struct shdr *sh)
{
	uint64_t word = m->is64 ? 8 : 4;
	for (size_t i = 0; i < l->n; i++) {
		const struct phdr *p = &l->ph[i];
		if (p->type == PT_DYNAMIC && !sh[S_DYNSYM].type) {
			uint64_t symtab = 0, strtab = 0, strsz = 0, syment = m->is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
			uint64_t hash = 0, gnu_hash = 0;
			for (uint64_t k = 0; k < MAX_DYNAMIC && (k + 1) * 2 * word <= p->filesz; k++) {
				uint64_t tag = get(m, p->offset + 2 * word * k, (unsigned)word);
				uint64_t val = get(m, p->offset + 2 * word * k + word, (unsigned)word);
				if (m->bad || tag == DT_NULL)
					break;
				if (tag == DT_SYMTAB)
					symtab = linked(m, l, val);
				else if (tag == DT_STRTAB)
					strtab = linked(m, l, val);
				else if (tag == DT_STRSZ)
					strsz = val;
				else if (tag == DT_SYMENT && val)
					syment = val;
				else if (tag == DT_HASH)
					hash = linked(m, l, val);
				else if (tag == DT_GNU_HASH)
					gnu_hash = linked(m, l, val);
			}
			uint64_t soff = symtab ? offset_of(m, l, symtab, syment) : UINT64_MAX;
			uint64_t stroff = strtab && strsz ? offset_of(m, l, strtab, strsz) : UINT64_MAX;
			if (m->bad || soff == UINT64_MAX || stroff == UINT64_MAX)
				continue;
			uint64_t n = 0, gsize = 0, goff = gnu_hash ? offset_of(m, l, gnu_hash, 16) : UINT64_MAX;
			if (goff != UINT64_MAX && (n = gnu_hash_count(m, goff, &gsize)))
				sh[S_GNU_HASH] = (struct shdr){shname[S_GNU_HASH], SHT_GNU_HASH, SHF_ALLOC, gnu_hash, goff, gsize,
							       S_DYNSYM, 0, word, 0};
			uint64_t hoff = !n && hash ? offset_of(m, l, hash, 8) : UINT64_MAX;
			if (hoff != UINT64_MAX)
				n = get(m, hoff + 4, 4); /* nchain */
			if (!n && strtab > symtab)
				n = (strtab - symtab) / syment; /* .dynstr follows .dynsym (every linker) */
			m->bad = false;
			if (n > (m->size - soff) / syment)
				n = (m->size - soff) / syment;
			sh[S_DYNSYM] = (struct shdr){shname[S_DYNSYM], SHT_DYNSYM, SHF_ALLOC, symtab, soff, n * syment, S_DYNSTR,
						     1, word, syment};
			sh[S_DYNSTR] = (struct shdr){shname[S_DYNSTR], SHT_STRTAB, SHF_ALLOC, strtab, stroff, strsz, 0, 0, 1, 0};
		} else if (p->type == PT_GNU_EH_FRAME && !sh[S_EH_FRAME_HDR].type) {
			uint64_t eh = p->filesz >= 8 ? eh_frame_of(m, p->offset, p->vaddr) : 0;
			uint64_t ehoff = eh ? offset_of(m, l, eh, 4) : UINT64_MAX;
			if (m->bad || offset_of(m, l, p->vaddr, p->filesz) != p->offset || ehoff == UINT64_MAX) {
				m->bad = false;
				continue;
			}
			sh[S_EH_FRAME_HDR] = (struct shdr){shname[S_EH_FRAME_HDR], SHT_PROGBITS, SHF_ALLOC, p->vaddr, p->offset,
							   p->filesz, 0, 0, 4, 0};
			/* its end is not written anywhere: up to the end of its PT_LOAD's bytes
			 * (lookups go through the header's table; a walk stops at its terminator) */
			uint64_t end = ehoff;
			for (size_t k = 0; k < l->n; k++) {
				const struct phdr *q = &l->ph[k];
				if (q->type == PT_LOAD && eh >= q->vaddr && eh - q->vaddr < q->filesz)
					end = q->offset + q->filesz;
			}
			if (end > m->size)
				end = m->size;
			if (end > ehoff)
				sh[S_EH_FRAME] = (struct shdr){shname[S_EH_FRAME], SHT_PROGBITS, SHF_ALLOC, eh, ehoff, end - ehoff,
							       0, 0, word, 0};
		}
	}
}

struct cq_error *cq_elf_open_mapped(uint8_t *buf, size_t size, uint64_t base, const char *name, struct cq_elf **ret)
{
	struct image m = {buf, size, false, false, false};
	if (size < EI_NIDENT || memcmp(buf, ELFMAG, SELFMAG) ||
	    (buf[EI_CLASS] != ELFCLASS32 && buf[EI_CLASS] != ELFCLASS64) ||
	    (buf[EI_DATA] != ELFDATA2LSB && buf[EI_DATA] != ELFDATA2MSB)) {
		free(buf);
		return cq_error_create(CQ_ERR_FORMAT, "%s: its mapping holds no ELF header", name);
	}
	m.is64 = buf[EI_CLASS] == ELFCLASS64;
	m.le = buf[EI_DATA] == ELFDATA2LSB;
	unsigned word = m.is64 ? 8 : 4;
	size_t ehsize = m.is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	uint64_t phoff = get(&m, m.is64 ? 32 : 28, word);
	uint64_t phentsize = get(&m, m.is64 ? 54 : 42, 2), phnum = get(&m, m.is64 ? 56 : 44, 2);
	struct layout *l = calloc(1, sizeof(*l));
	if (!l) {
		free(buf);
		return &cq_error_nomem;
	}
	size_t min_ph = m.is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	bool have_bias = false;
	for (uint64_t i = 0; !m.bad && phentsize >= min_ph && i < phnum && l->n < MAX_PHDRS; i++) {
		uint64_t at = phoff + i * phentsize;
		struct phdr p = {.type = (uint32_t)get(&m, at, 4)};
		p.offset = get(&m, at + (m.is64 ? 8 : 4), word);
		p.vaddr = get(&m, at + (m.is64 ? 16 : 8), word);
		p.filesz = get(&m, at + (m.is64 ? 32 : 16), word);
		l->ph[l->n++] = p;
		if (p.type == PT_LOAD && !have_bias) {
			/* the first load's file offset 0 is where the mapping begins */
			l->bias = base - (p.vaddr - p.offset);
			have_bias = true;
		}
	}
	if (m.bad || !have_bias || size < ehsize) {
		free(l);
		free(buf);
		return cq_error_create(CQ_ERR_FORMAT, "%s: its mapping holds no readable program headers", name);
	}
	struct shdr sh[S_COUNT] = {{0}};
	find_sections(&m, l, sh);
	free(l);
	/* the table at the end: the names, then the headers (empty ones left out, the links
	 * renumbered) */
	size_t shentsize = m.is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	size_t names_at = (size + 7) & ~(size_t)7, table_at = (names_at + sizeof(shstrtab) + 7) & ~(size_t)7;
	uint8_t *nb = realloc(buf, table_at + S_COUNT * shentsize);
	if (!nb) {
		free(buf);
		return &cq_error_nomem;
	}
	buf = m.p = nb;
	memset(buf + size, 0, table_at + S_COUNT * shentsize - size);
	memcpy(buf + names_at, shstrtab, sizeof(shstrtab));
	sh[S_SHSTRTAB] = (struct shdr){shname[S_SHSTRTAB], SHT_STRTAB, 0, 0, names_at, sizeof(shstrtab), 0, 0, 1, 0};
	unsigned index[S_COUNT] = {0}, n = 1;
	for (unsigned i = 1; i < S_COUNT; i++)
		if (sh[i].type)
			index[i] = n++;
	for (unsigned i = 1; i < S_COUNT; i++) {
		if (!sh[i].type)
			continue;
		uint8_t *o = buf + table_at + index[i] * shentsize;
		uint32_t link = sh[i].link ? index[sh[i].link] : 0;
		/* Elf32_Shdr and Elf64_Shdr have the same members in the same order: the flags,
		 * addresses, sizes, alignment and entry size are words of the class's width */
		const unsigned w = word;
		const struct {
			unsigned size;
			uint64_t v;
		} f[] = {{4, sh[i].name},   {4, sh[i].type}, {w, sh[i].flags}, {w, sh[i].addr},  {w, sh[i].offset},
			 {w, sh[i].size},   {4, link},       {4, sh[i].info},  {w, sh[i].align}, {w, sh[i].entsize}};
		for (size_t k = 0; k < sizeof(f) / sizeof(f[0]); o += f[k].size, k++)
			put(&m, o, f[k].size, f[k].v);
	}
	/* e_shoff, e_shentsize, e_shnum, e_shstrndx: the file's own pointed past what is mapped */
	put(&m, buf + (m.is64 ? 40 : 32), word, table_at);
	put(&m, buf + (m.is64 ? 58 : 46), 2, shentsize);
	put(&m, buf + (m.is64 ? 60 : 48), 2, n);
	put(&m, buf + (m.is64 ? 62 : 50), 2, index[S_SHSTRTAB]);
	return cq_elf_open_memory(buf, table_at + n * shentsize, name, ret);
}
