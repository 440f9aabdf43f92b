/* SPDX-License-Identifier: MIT */
/* Helpers shared by the fuzz targets (fuzz/README.md) and the seed writer (mkseeds.c).
 *
 * Header-only (static functions) so that every target stays one translation unit. What is
 * here: reading the base inputs that `make fuzz-build` prepares under build-fuzz/data/
 * (gzip or raw), a memfd the library opens by path (/proc/self/fd/N), a few ELF header
 * accessors for any class and byte order, a byte cursor over the fuzz input, and the
 * "patchable base" used by fuzz_tls and fuzz_callbacks: a fixture core kept in a memfd
 * whose target memory the input overwrites at interesting addresses, restored after each
 * run. */
#ifndef COREQ_FUZZ_COMMON_H
#define COREQ_FUZZ_COMMON_H

#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

/* Helpers that a given target may not use. */
#define FZ_FN static __attribute__((unused))

#ifndef FUZZ_DATA_DIR
#define FUZZ_DATA_DIR "build-fuzz/data"
#endif

/* Never find files of the host: every image is missing or comes from a bundle, so that a
 * run depends on the input alone. */
#define FZ_SYSROOT "/nonexistent-coreq-fuzz-sysroot"
/* Compression bombs are refused early (the default is 4 GiB). */
#define FZ_MAX_INFLATED (UINT64_C(64) << 20)

FZ_FN void fz_die(const char *fmt, const char *arg)
{
	fprintf(stderr, "fuzz: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	abort();
}

/* With FUZZ_VERBOSE set (replaying a finding), say why the library refused an input. */
#define fz_verbose_error(what, err)                                                      \
	do {                                                                             \
		if ((err) && getenv("FUZZ_VERBOSE"))                                     \
			fprintf(stderr, "fuzz: %s: %s\n", (what), (err)->message);      \
	} while (0)

/* Path of a prepared base input: $COREQ_FUZZ_DATA/NAME, default FUZZ_DATA_DIR/NAME. */
FZ_FN const char *fz_data_path(const char *name)
{
	static char path[4096];
	const char *dir = getenv("COREQ_FUZZ_DATA");
	snprintf(path, sizeof(path), "%s/%s", dir && *dir ? dir : FUZZ_DATA_DIR, name);
	return path;
}

/* Whole file, inflated if gzip-compressed (gzread reads raw files as they are). */
FZ_FN uint8_t *fz_read_file(const char *path, size_t *len_ret)
{
	gzFile g = gzopen(path, "rb");
	if (!g)
		fz_die("cannot open %s (run `make fuzz-build`, or set COREQ_FUZZ_DATA)", path);
	size_t cap = 1 << 20, len = 0;
	uint8_t *p = malloc(cap);
	for (;;) {
		if (len == cap && !(p = realloc(p, cap *= 2)))
			fz_die("out of memory reading %s", path);
		int n = gzread(g, p + len, (unsigned)(cap - len > (1u << 30) ? 1u << 30 : cap - len));
		if (n < 0)
			fz_die("cannot read %s", path);
		if (n == 0)
			break;
		len += (size_t)n;
	}
	gzclose(g);
	*len_ret = len;
	return p;
}

/* ---- a memfd the library opens by path ------------------------------------------------ */

struct fz_memfd {
	int fd;
	char path[64];
};

FZ_FN void fz_memfd_init(struct fz_memfd *m, const char *name)
{
	m->fd = memfd_create(name, MFD_CLOEXEC);
	if (m->fd < 0)
		fz_die("memfd_create: %s", strerror(errno));
	snprintf(m->path, sizeof(m->path), "/proc/self/fd/%d", m->fd);
}

FZ_FN void fz_pwrite(struct fz_memfd *m, const void *p, size_t n, uint64_t off)
{
	if (n && pwrite(m->fd, p, n, (off_t)off) != (ssize_t)n)
		fz_die("pwrite to the memfd failed: %s", strerror(errno));
}

/* Make the memfd's contents exactly @p p. */
FZ_FN void fz_memfd_set(struct fz_memfd *m, const void *p, size_t n)
{
	if (ftruncate(m->fd, 0) != 0 || ftruncate(m->fd, (off_t)n) != 0)
		fz_die("ftruncate of the memfd failed: %s", strerror(errno));
	fz_pwrite(m, p, n, 0);
}

/* ---- ELF headers of a core in memory (any class and byte order) --------------------- */

struct fz_elf {
	uint8_t *p;
	size_t len;
	bool is64, le;
	uint64_t phoff;
	unsigned phnum, phentsize;
};

FZ_FN uint64_t fz_get(const struct fz_elf *e, size_t off, unsigned size)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < size; i++)
		v |= (uint64_t)e->p[off + i] << (8 * (e->le ? i : size - 1 - i));
	return v;
}

FZ_FN void fz_put(const struct fz_elf *e, uint8_t *at, unsigned size, uint64_t v)
{
	for (unsigned i = 0; i < size; i++)
		at[e->le ? i : size - 1 - i] = (uint8_t)(v >> (8 * i));
}

FZ_FN bool fz_elf_parse(struct fz_elf *e, uint8_t *p, size_t len)
{
	memset(e, 0, sizeof(*e));
	e->p = p;
	e->len = len;
	if (len < sizeof(Elf64_Ehdr) || memcmp(p, ELFMAG, SELFMAG) != 0)
		return false;
	e->is64 = p[EI_CLASS] == ELFCLASS64;
	e->le = p[EI_DATA] == ELFDATA2LSB;
	e->phoff = fz_get(e, e->is64 ? 32 : 28, e->is64 ? 8 : 4);
	e->phentsize = (unsigned)fz_get(e, e->is64 ? 54 : 42, 2);
	e->phnum = (unsigned)fz_get(e, e->is64 ? 56 : 44, 2);
	return e->phoff < len && e->phnum <= (len - e->phoff) / (e->is64 ? 56 : 32);
}

enum fz_ph { FZ_TYPE, FZ_OFFSET, FZ_VADDR, FZ_FILESZ, FZ_MEMSZ };

/* Offset of a program header field, within the file. */
FZ_FN size_t fz_ph_at(const struct fz_elf *e, unsigned i, enum fz_ph f, unsigned *size)
{
	static const unsigned off64[] = {0, 8, 16, 32, 40}, off32[] = {0, 4, 8, 16, 20};
	*size = f == FZ_TYPE ? 4 : e->is64 ? 8 : 4;
	return (size_t)e->phoff + (size_t)i * (e->is64 ? 56 : 32) + (e->is64 ? off64 : off32)[f];
}

FZ_FN uint64_t fz_ph(const struct fz_elf *e, unsigned i, enum fz_ph f)
{
	unsigned size;
	size_t at = fz_ph_at(e, i, f, &size);
	return fz_get(e, at, size);
}

FZ_FN void fz_set_ph(const struct fz_elf *e, uint8_t *file, unsigned i, enum fz_ph f,
		      uint64_t v)
{
	unsigned size;
	size_t at = fz_ph_at(e, i, f, &size);
	fz_put(e, file + at, size, v);
}

/* ---- input cursor --------------------------------------------------------------------- */

struct fz_in {
	const uint8_t *p;
	size_t n;
};

FZ_FN uint64_t fz_uint(struct fz_in *in, unsigned size)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < size && in->n; i++, in->p++, in->n--)
		v |= (uint64_t)in->p[0] << (8 * i);
	return v;
}

FZ_FN uint8_t fz_u8(struct fz_in *in) { return (uint8_t)fz_uint(in, 1); }
FZ_FN uint16_t fz_u16(struct fz_in *in) { return (uint16_t)fz_uint(in, 2); }
FZ_FN uint32_t fz_u32(struct fz_in *in) { return (uint32_t)fz_uint(in, 4); }
FZ_FN uint64_t fz_u64(struct fz_in *in) { return fz_uint(in, 8); }

/* Up to @p max bytes as a NUL-terminated string (length from the input) in @p buf. */
FZ_FN const char *fz_str(struct fz_in *in, char *buf, size_t max)
{
	size_t n = fz_u8(in) % max;
	if (n > in->n)
		n = in->n;
	memcpy(buf, in->p, n);
	buf[n] = 0;
	in->p += n;
	in->n -= n;
	return buf;
}

/* ---- bundles: COREQ notes (corelib/bundle.h) ------------------------------------------- */

struct fz_buf {
	uint8_t *p;
	size_t len;
	size_t origin; /* alignment is counted from here (after a selector byte) */
};

FZ_FN void fz_add(struct fz_buf *b, const void *p, size_t n)
{
	b->p = realloc(b->p, b->len + n + 8);
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

FZ_FN void fz_pad(struct fz_buf *b, size_t a)
{
	static const uint8_t z[8];
	if ((b->len - b->origin) % a)
		fz_add(b, z, a - (b->len - b->origin) % a);
}

FZ_FN void fz_add_uint(struct fz_buf *b, const struct fz_elf *e, unsigned size, uint64_t v)
{
	uint8_t x[8];
	fz_put(e, x, size, v);
	fz_add(b, x, size);
}

FZ_FN void fz_add_note(struct fz_buf *b, const struct fz_elf *e, uint32_t type, const void *d,
		     size_t n)
{
	fz_add_uint(b, e, 4, 6);
	fz_add_uint(b, e, 4, n);
	fz_add_uint(b, e, 4, type);
	fz_add(b, "COREQ\0\0", 8);
	fz_add(b, d, n);
	fz_pad(b, 4);
}

FZ_FN bool fz_wanted(const char *s)
{
	static const char *const keep[] = {"_thread_db_", "__kmp_gtid", "errno", "ompd_", "main",
					   "MPIR_", "ompi_mpi_comm_world", "_rtld_global",
					   "_dl_stack_", "malloc", "_init"};
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		if (strncmp(s, keep[i], strlen(keep[i])) == 0)
			return true;
	return false;
}

/* An image entry with at most @p first symbols plus the wanted ones. */
FZ_FN void fz_trim_image(struct fz_buf *out, const struct fz_elf *e, const uint8_t *d, size_t n,
		       size_t first)
{
	struct fz_elf de = *e;
	de.p = (uint8_t *)d;
	uint64_t name_len = fz_get(&de, 0, 4), bid_len = fz_get(&de, 4, 4);
	uint64_t nsyms = fz_get(&de, 8, 4), strsz = fz_get(&de, 12, 4);
	uint64_t syms_at = (48 + name_len + bid_len + 7) & ~UINT64_C(7);
	if (syms_at + nsyms * 24 + strsz > n)
		fz_die("%s", "bundle image note does not parse");
	const uint8_t *strtab = d + syms_at + nsyms * 24;
	struct fz_buf syms = {0}, str = {0};
	fz_add(&str, "", 1);
	uint64_t kept = 0;
	for (uint64_t i = 0; i < nsyms; i++) {
		const uint8_t *s = d + syms_at + i * 24;
		const char *nm = (const char *)strtab + fz_get(&de, (size_t)(s - d) + 16, 4);
		if (i >= first && !fz_wanted(nm) && s[20] != STT_TLS)
			continue;
		uint8_t ent[24];
		memcpy(ent, s, 24);
		fz_put(e, ent + 16, 4, str.len);
		fz_add(&syms, ent, 24);
		fz_add(&str, nm, strlen(nm) + 1);
		kept++;
	}
	struct fz_buf img = {0};
	fz_add(&img, d, 48);
	fz_put(e, img.p + 8, 4, kept);
	fz_put(e, img.p + 12, 4, str.len);
	fz_add(&img, d + 48, name_len + bid_len);
	fz_pad(&img, 8);
	fz_add(&img, syms.p, syms.len);
	fz_add(&img, str.p, str.len);
	fz_add_note(out, e, 0x434f5202u, img.p, img.len);
	free(img.p);
	free(syms.p);
	free(str.p);
}


/* Index of the PT_NOTE whose first note is named "COREQ" (a bundle's own notes). */
FZ_FN bool fz_coreq_phdr(const struct fz_elf *e, unsigned *ret)
{
	for (unsigned k = 0; k < e->phnum; k++) {
		if (fz_ph(e, k, FZ_TYPE) != PT_NOTE)
			continue;
		uint64_t off = fz_ph(e, k, FZ_OFFSET);
		if (off + 20 <= e->len && fz_get(e, off, 4) == 6 &&
		    memcmp(e->p + off + 12, "COREQ", 6) == 0) {
			*ret = k;
			return true;
		}
	}
	return false;
}

/* A bundle's COREQ notes with every image entry trimmed to its first @p first symbols,
 * the TLS ones and the ones fz_wanted() names; type donors kept if @p donors. The notes
 * are appended to @p out. */
FZ_FN void fz_trim_coreq(struct fz_buf *out, const struct fz_elf *e, unsigned k, size_t first,
			 bool donors)
{
	uint64_t off = fz_ph(e, k, FZ_OFFSET), n = fz_ph(e, k, FZ_FILESZ);
	for (uint64_t pos = off; pos + 12 <= off + n && pos + 12 <= e->len;) {
		uint64_t namesz = fz_get(e, pos, 4), descsz = fz_get(e, pos + 4, 4);
		uint32_t type = (uint32_t)fz_get(e, pos + 8, 4);
		uint64_t desc = pos + 12 + ((namesz + 3) & ~UINT64_C(3));
		if (desc + descsz > e->len)
			break;
		const uint8_t *d = e->p + desc;
		if (type == 0x434f5202u)
			fz_trim_image(out, e, d, descsz, first);
		else if (type != 0x434f5203u || donors)
			fz_add_note(out, e, type, d, descsz);
		pos = desc + ((descsz + 3) & ~UINT64_C(3));
	}
}

/* Rewrite a bundle in memory so that its COREQ notes are trimmed (fz_trim_coreq): fewer
 * symbols to parse per run, the same answers for the names the targets use. */
FZ_FN void fz_trim_bundle(uint8_t **data, size_t *len, size_t first)
{
	struct fz_elf e;
	unsigned k;
	if (!fz_elf_parse(&e, *data, *len) || !fz_coreq_phdr(&e, &k))
		return;
	struct fz_buf notes = {0};
	fz_trim_coreq(&notes, &e, k, first, true);
	size_t at = (*len + 15) & ~(size_t)15;
	uint8_t *p = realloc(*data, at + notes.len);
	if (!p)
		fz_die("%s", "out of memory trimming a bundle");
	memset(p + *len, 0, at - *len);
	memcpy(p + at, notes.p, notes.len);
	e.p = p;
	fz_set_ph(&e, p, k, FZ_OFFSET, at);
	fz_set_ph(&e, p, k, FZ_FILESZ, notes.len);
	free(notes.p);
	*data = p;
	*len = at + notes.len;
}

#endif
