/* SPDX-License-Identifier: MIT */
/* mkseeds DATA_DIR OUT_DIR: seed inputs for the structured fuzz targets, derived from the
 * base inputs `make fuzz-build` prepares in DATA_DIR (fixtures and mkcore cores):
 *   OUT_DIR/fuzz_linkmap/   base byte + the link_map segment of every mkcore link_map
 *                           variant (ok, cycle, wild next, bad name, long) of each base
 *   OUT_DIR/fuzz_bundle/    base byte + the bundle's own COREQ notes, trimmed: every image
 *                           entry keeps its first symbols and the ones the targets use
 *   OUT_DIR/fuzz_tls/       one input per base and flag combination, without patches and
 *                           with a few
 *   OUT_DIR/fuzz_callbacks/ one input per base that calls every operation once
 * fuzz_core's seeds are files (seeds.sh copies them). Built without sanitizers. */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_common.h"

static const char *data_dir, *out_dir;

static void put(const char *target, const char *name, const void *p, size_t n)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", out_dir, target);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/%s", out_dir, target, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0)
		fz_die("cannot write %s", path);
}

static uint8_t *load(const char *name, size_t *len)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", data_dir, name);
	return fz_read_file(path, len);
}

/* ---- fuzz_linkmap --------------------------------------------------------------------- */

static void linkmap_seeds(void)
{
	static const char *const arch[] = {"x86_64", "i386", "s390x", "ppc32"};
	static const char *const variant[] = {"ok", "cycle", "wild-next", "bad-name", "long"};
	for (unsigned a = 0; a < 4; a++)
		for (unsigned v = 0; v < 5; v++) {
			char name[128];
			snprintf(name, sizeof(name), "mkcore/%s-lm-%s.core", arch[a], variant[v]);
			size_t len;
			uint8_t *p = load(name, &len);
			struct fz_elf e;
			if (!fz_elf_parse(&e, p, len))
				fz_die("%s: not ELF", name);
			unsigned seg = 0;
			for (unsigned k = 0; k < e.phnum; k++)
				if (fz_ph(&e, k, FZ_TYPE) == PT_LOAD)
					seg = k;
			uint64_t off = fz_ph(&e, seg, FZ_OFFSET), n = fz_ph(&e, seg, FZ_FILESZ);
			if (off > len || n > len - off)
				fz_die("%s: bad last segment", name);
			uint8_t *s = malloc(n + 1);
			s[0] = (uint8_t)a;
			memcpy(s + 1, p + off, n);
			snprintf(name, sizeof(name), "%s-%s", arch[a], variant[v]);
			put("fuzz_linkmap", name, s, n + 1);
			free(s);
			free(p);
		}
}

/* ---- fuzz_bundle ---------------------------------------------------------------------- */

/* A CQ_NT_BUNDLE_UNWIND entry (corelib/bundle.h) for image @p name holding file @p elf. */
static void add_unwind(struct fz_buf *out, const struct fz_elf *e, const char *name,
		       const char *elf)
{
	size_t len;
	uint8_t *p = load(elf, &len);
	struct fz_buf d = {0};
	size_t name_len = strlen(name) + 1;
	fz_add_uint(&d, e, 4, name_len);
	fz_add_uint(&d, e, 4, 0);
	fz_add_uint(&d, e, 8, len);
	fz_add(&d, name, name_len);
	fz_pad(&d, 8);
	fz_add(&d, p, len);
	fz_add_note(out, e, 0x434f5204u, d.p, d.len);
	free(d.p);
	free(p);
}

static void bundle_seeds(void)
{
	static const char *const unwind_elf[] = {"unwind-x86_64.elf.gz", "unwind-s390x.elf.gz",
						 "unwind-i386.elf.gz"};
	static const char *const files[] = {"omp-x86_64.bundle.gz", "omp-s390x.bundle.gz",
					    "mpi-i386.bundle.gz"};
	for (unsigned bi = 0; bi < 3; bi++) {
		size_t len;
		uint8_t *p = load(files[bi], &len);
		struct fz_elf e;
		if (!fz_elf_parse(&e, p, len))
			fz_die("%s: not ELF", files[bi]);
		for (unsigned k = 0; k < e.phnum; k++) {
			if (fz_ph(&e, k, FZ_TYPE) != PT_NOTE)
				continue;
			uint64_t off = fz_ph(&e, k, FZ_OFFSET), n = fz_ph(&e, k, FZ_FILESZ);
			if (off + 20 > len || fz_get(&e, off, 4) != 6 || memcmp(p + off + 12, "COREQ", 6))
				continue;
			/* four seeds: few symbols, more symbols, with the first type donor, and
			 * (format version 2) with an unwind ELF for the first image: a fixture
			 * executable of the same machine (a real ELF with .eh_frame) */
			for (unsigned variant = 0; variant < 4; variant++) {
				struct fz_buf out = {.origin = 1};
				uint8_t byte = (uint8_t)bi;
				fz_add(&out, &byte, 1);
				bool donor_done = false;
				for (uint64_t pos = off; pos + 12 <= off + n;) {
					uint64_t namesz = fz_get(&e, pos, 4), descsz = fz_get(&e, pos + 4, 4);
					uint32_t type = (uint32_t)fz_get(&e, pos + 8, 4);
					uint64_t desc = pos + 12 + ((namesz + 3) & ~UINT64_C(3));
					const uint8_t *d = p + desc;
					if (type == 0x434f5201u && variant == 3 && descsz >= 8) {
						uint8_t *h = malloc(descsz);
						memcpy(h, d, descsz);
						fz_put(&e, h, 4, 2);
						fz_add_note(&out, &e, type, h, descsz);
						free(h);
					} else if (type == 0x434f5202u && variant == 3 && !donor_done) {
						fz_trim_image(&out, &e, d, descsz, 16);
						add_unwind(&out, &e, (const char *)d + 48, unwind_elf[bi]);
						donor_done = true; /* one unwind entry */
					} else if (type == 0x434f5202u)
						fz_trim_image(&out, &e, d, descsz, variant == 1 ? 200 : 16);
					else if (type != 0x434f5203u)
						fz_add_note(&out, &e, type, d, descsz);
					else if (variant == 2 && !donor_done) {
						fz_add_note(&out, &e, type, d, descsz);
						donor_done = true;
					}
					pos = desc + ((descsz + 3) & ~UINT64_C(3));
				}
				if (variant >= 2 && !donor_done) {
					free(out.p);
					continue;
				}
				char name[64];
				snprintf(name, sizeof(name), "%s-%u", files[bi], variant);
				put("fuzz_bundle", name, out.p, out.len);
				free(out.p);
			}
		}
		free(p);
	}
}

/* ---- fuzz_tls and fuzz_callbacks: hand-made structured inputs ----------------------- */

static void tls_seeds(void)
{
	for (uint8_t b = 0; b < 4; b++)
		for (uint8_t flags = 0; flags < 4; flags++) {
			uint8_t s[64] = {b, (uint8_t)(flags | 0x10), 0};
			size_t n = 3;
			if (flags & 2) {
				memset(s + n, 0, 8); /* thread pointer 0 */
				n += 8;
			}
			/* one patch record: region 0 (a descriptor), offset 0, 4 bytes */
			uint8_t rec[] = {0, 0, 0, 3, 0x40, 0, 0, 0};
			memcpy(s + n, rec, sizeof(rec));
			char name[32];
			snprintf(name, sizeof(name), "b%u-f%u-plain", b, flags);
			put("fuzz_tls", name, s, 3 + (flags & 2 ? 8 : 0));
			snprintf(name, sizeof(name), "b%u-f%u-patch", b, flags);
			put("fuzz_tls", name, s, n + sizeof(rec));
		}
}

static void callbacks_seeds(void)
{
	for (uint8_t b = 0; b < 4; b++)
		for (uint8_t width = 0; width < 2; width++) {
			struct fz_buf s = {0};
			uint8_t head[] = {b, 0, width};
			fz_add(&s, head, sizeof(head));
			/* OMPD ops 0..7 with small arguments, then MQD ops 0..5 */
			static const uint8_t ompd[][12] = {
				{0, 0, 0, 0x10, 0, 0},           /* read_memory 16 bytes */
				{1, 1, 0, 0, 0x40, 0},           /* read_string 64 */
				{2, 0, 0, 0, 0},                 /* symbol lookup */
				{3, 2, 0, 2, 8, 0, 1},           /* device_to_host 4 x 8 */
				{4, 3, 0, 1, 4, 0},              /* thread context: lwp, 4 bytes */
				{5, 4, 0, 0, 0x20, 0, 0},        /* sizeof, alloc, print */
				{6, 5, 0, 8, 0, 0, 0, 0, 0, 0, 0}, /* TR read 8 */
				{7, 6, 0, 4, 1, 0, 0},           /* TR thread context */
			};
			static const size_t ompd_len[] = {6, 6, 5, 7, 6, 7, 11, 7};
			for (size_t i = 0; i < 8; i++)
				fz_add(&s, ompd[i], ompd_len[i]);
			static const uint8_t mqd[][8] = {
				{0x80, 0, 0, 0, 8, 0, 0, 0},     /* fetch 8 */
				{0x81, 0, 1},                    /* find_symbol */
				{0x82, 1, 0},                    /* find_type, field */
				{0x83, 4, 0, 0, 0},              /* target_to_host 4 */
				{0x84, 0, 16, 0, 0, 0, 0, 0},    /* malloc 16 */
				{0x85},                          /* rank, image, sizes */
			};
			static const size_t mqd_len[] = {8, 3, 3, 5, 8, 1};
			for (size_t i = 0; i < 6; i++)
				fz_add(&s, mqd[i], mqd_len[i]);
			char name[32];
			snprintf(name, sizeof(name), "b%u-w%u-all-ops", b, width ? 4 : 8);
			put("fuzz_callbacks", name, s.p, s.len);
			free(s.p);
		}
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: mkseeds DATA_DIR OUT_DIR\n");
		return 2;
	}
	data_dir = argv[1];
	out_dir = argv[2];
	mkdir(out_dir, 0755);
	linkmap_seeds();
	bundle_seeds();
	tls_seeds();
	callbacks_seeds();
	return 0;
}
