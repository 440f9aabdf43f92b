/* SPDX-License-Identifier: MIT */
/* Expanding zstd-compressed ELF sections for libdw (zsections.h). */
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "zsections.h"

struct cq_zsections {
	void **bufs;
	size_t n;
};

void cq_zsections_free(struct cq_zsections *z)
{
	if (!z)
		return;
	for (size_t i = 0; i < z->n; i++)
		free(z->bufs[i]);
	free(z->bufs);
	free(z);
}

/* The compression header of a SHF_COMPRESSED section (NULL for any other). */
static bool zstd_section(Elf_Scn *scn, GElf_Shdr *sh, GElf_Chdr *ch)
{
	return gelf_getshdr(scn, sh) && (sh->sh_flags & SHF_COMPRESSED) && sh->sh_type != SHT_NOBITS &&
	       gelf_getchdr(scn, ch) && ch->ch_type == ELFCOMPRESS_ZSTD;
}

bool cq_elf_has_zstd(Elf *elf)
{
	GElf_Shdr sh;
	GElf_Chdr ch;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));)
		if (zstd_section(scn, &sh, &ch))
			return true;
	return false;
}

static const char *section_name(Elf *elf, const GElf_Shdr *sh)
{
	size_t shstrndx;
	const char *n = elf_getshdrstrndx(elf, &shstrndx) == 0 ? elf_strptr(elf, shstrndx, sh->sh_name) : NULL;
	return n ? n : "(unnamed)";
}

bool cq_elf_expand_zstd(Elf *elf, uint64_t max_total, struct cq_zsections **ret, char **why)
{
	struct cq_zsections *z = NULL;
	uint64_t total = 0;
	bool ok = true;
	GElf_Shdr sh;
	GElf_Chdr ch;
	*ret = NULL;
	*why = NULL;
	size_t hdr = gelf_getclass(elf) == ELFCLASS32 ? sizeof(Elf32_Chdr) : sizeof(Elf64_Chdr);
	for (Elf_Scn *scn = NULL; ok && (scn = elf_nextscn(elf, scn));) {
		if (!zstd_section(scn, &sh, &ch))
			continue;
		const char *name = section_name(elf, &sh);
		Elf_Data *raw = elf_rawdata(scn, NULL);
		void **bufs = z ? realloc(z->bufs, (z->n + 1) * sizeof(*bufs)) : NULL;
		if (!z && (z = calloc(1, sizeof(*z))))
			bufs = malloc(sizeof(*bufs));
		if (!z || !bufs) {
			if (asprintf(why, "section %s: out of memory", name) < 0)
				*why = NULL;
			ok = false;
			break;
		}
		z->bufs = bufs;
		if (!raw || raw->d_size < hdr || !ch.ch_size || ch.ch_size > max_total - total) {
			if (asprintf(why, "section %s: %s", name,
				     !raw || raw->d_size < hdr ? "truncated compression header"
				     : !ch.ch_size ? "compression header gives size 0"
						  : "expands beyond --max-inflate") < 0)
				*why = NULL;
			ok = false;
			break;
		}
		void *buf = malloc(ch.ch_size);
		size_t n = buf ? ZSTD_decompress(buf, ch.ch_size, (const char *)raw->d_buf + hdr, raw->d_size - hdr) : 0;
		if (!buf || ZSTD_isError(n) || n != ch.ch_size) {
			if (asprintf(why, "section %s: %s", name,
				     !buf ? "out of memory"
				     : ZSTD_isError(n) ? ZSTD_getErrorName(n) : "expands to another size than its header gives") < 0)
				*why = NULL;
			free(buf);
			ok = false;
			break;
		}
		z->bufs[z->n++] = buf;
		total += ch.ch_size;
		/* the section as libelf shows an expanded one (elf_compress does the same for
		 * zlib): its data the expanded bytes, its header without SHF_COMPRESSED */
		Elf_Data *d = elf_getdata(scn, NULL);
		sh.sh_flags &= ~(GElf_Xword)SHF_COMPRESSED;
		sh.sh_size = ch.ch_size;
		sh.sh_addralign = ch.ch_addralign;
		if (!d || !gelf_update_shdr(scn, &sh)) {
			if (asprintf(why, "section %s: libelf: %s", name, elf_errmsg(-1)) < 0)
				*why = NULL;
			ok = false;
			break;
		}
		d->d_buf = buf;
		d->d_size = ch.ch_size;
		d->d_type = ELF_T_BYTE;
		d->d_off = 0;
		d->d_align = ch.ch_addralign ? ch.ch_addralign : 1;
	}
	if (z && !z->n) {
		cq_zsections_free(z);
		z = NULL;
	}
	*ret = z;
	return ok;
}
