/* SPDX-License-Identifier: MIT */
/* The "patchable base" of fuzz_tls and fuzz_callbacks: a fixture core (a bundle, so that
 * symbols are there without any file of the host) kept in a memfd. At start-up the target
 * opens it once with the library and records *regions*: the file bytes behind interesting
 * target addresses (glibc's _thread_db_* descriptors, each thread's struct pthread and
 * DTV, link_map entries, r_debug, runtime variables). Each input then carries patch
 * records that overwrite bytes of those regions; the library opens the patched core by
 * path, and the original bytes are written back after the run.
 *
 * Patch record: u8 region (mod the number of regions), u16 offset (mod the region size),
 * u8 length (1 + n % 16 bytes, clipped to the region), then the bytes. */
#ifndef COREQ_FUZZ_BASE_H
#define COREQ_FUZZ_BASE_H

#include "corelib/core.h"
#include "corelib/image.h"
#include "fuzz_common.h"

#define FZ_MAX_REGIONS 128
#define FZ_MAX_UNDO 512

struct fz_region {
	uint64_t vaddr, file_off;
	uint32_t size;
};

struct fz_base {
	const char *file;            /**< name under the data directory */
	uint8_t *data;               /**< pristine contents */
	size_t len;
	struct fz_memfd mfd;
	struct fz_region regions[FZ_MAX_REGIONS];
	unsigned nregions;
	struct { uint64_t off; uint32_t n; } undo[FZ_MAX_UNDO];
	unsigned nundo;
};

static const struct cq_core_options fz_core_opts __attribute__((unused)) = {
	.sysroot = FZ_SYSROOT,
	.max_inflated = FZ_MAX_INFLATED,
};

/* Load the base and open it once (the caller adds regions, then closes the core). */
FZ_FN struct cq_core *fz_base_load(struct fz_base *b)
{
	b->data = fz_read_file(fz_data_path(b->file), &b->len);
	/* Full symbol tables cost most of a run to parse; keep what the targets look up. */
	fz_trim_bundle(&b->data, &b->len, 64);
	fz_memfd_init(&b->mfd, b->file);
	fz_memfd_set(&b->mfd, b->data, b->len);
	struct cq_core *core;
	struct cq_error *err = cq_core_open(b->mfd.path, &fz_core_opts, &core);
	if (err)
		fz_die("the base core does not open: %s", err->message);
	if ((err = cq_core_load_images(core)))
		fz_die("the base core's images: %s", err->message);
	return core;
}

/* Add the core-file bytes behind [vaddr, vaddr + size) (clipped to what the core has). */
FZ_FN void fz_base_region(struct fz_base *b, struct cq_core *core, uint64_t vaddr,
			   uint64_t size)
{
	if (b->nregions == FZ_MAX_REGIONS || !size)
		return;
	for (size_t i = 0; i < core->nsegments; i++) {
		const struct cq_segment *s = &core->segments[i];
		if (vaddr < s->vaddr || vaddr - s->vaddr >= s->filesz)
			continue;
		uint64_t off = s->offset + (vaddr - s->vaddr);
		uint64_t avail = s->filesz - (vaddr - s->vaddr);
		if (off >= b->len)
			return;
		if (avail > b->len - off)
			avail = b->len - off;
		if (size > avail)
			size = avail;
		if (size > 0xffff)
			size = 0xffff;
		for (unsigned k = 0; k < b->nregions; k++)
			if (b->regions[k].file_off == off && b->regions[k].size == size)
				return;
		b->regions[b->nregions++] = (struct fz_region){vaddr, off, (uint32_t)size};
		return;
	}
}

/* A region at the address of symbol @p name (if the base has it). */
FZ_FN void fz_base_symbol_region(struct fz_base *b, struct cq_core *core, const char *name,
				  uint64_t size)
{
	struct cq_symref ref;
	struct cq_error *err = cq_core_lookup(core, name, NULL, &ref);
	if (err) {
		cq_error_destroy(err);
		return;
	}
	if (!ref.is_tls)
		fz_base_region(b, core, ref.address, size ? size : ref.sym->size ? ref.sym->size : 16);
}

/* Apply up to @p max patch records from @p in. */
FZ_FN void fz_base_patch(struct fz_base *b, struct fz_in *in, unsigned max)
{
	for (unsigned r = 0; r < max && in->n >= 4 && b->nregions && b->nundo < FZ_MAX_UNDO; r++) {
		const struct fz_region *g = &b->regions[fz_u8(in) % b->nregions];
		uint32_t off = fz_u16(in) % g->size;
		uint32_t n = 1 + fz_u8(in) % 16;
		if (n > g->size - off)
			n = g->size - off;
		if (n > in->n)
			n = (uint32_t)in->n;
		if (!n)
			break;
		fz_pwrite(&b->mfd, in->p, n, g->file_off + off);
		b->undo[b->nundo].off = g->file_off + off;
		b->undo[b->nundo++].n = n;
		in->p += n;
		in->n -= n;
	}
}

/* Write the pristine bytes back. */
FZ_FN void fz_base_restore(struct fz_base *b)
{
	for (unsigned i = 0; i < b->nundo; i++)
		fz_pwrite(&b->mfd, b->data + b->undo[i].off, b->undo[i].n, b->undo[i].off);
	b->nundo = 0;
}

/* Names of the TLS symbols the base's images define (up to @p max). */
FZ_FN unsigned fz_tls_names(struct cq_core *core, char (*out)[64], unsigned max)
{
	unsigned n = 0;
	for (size_t i = 0; i < core->nimages && n < max; i++) {
		struct cq_elf *e = cq_image_symbol_file(&core->images[i]);
		if (!e || cq_elf_load_symbols(e))
			continue;
		for (size_t k = 0; k < e->nsyms && n < max; k++)
			if (e->syms[k].type == STT_TLS && e->syms[k].name[0]) {
				bool dup = false;
				for (unsigned j = 0; j < n; j++)
					dup |= strcmp(out[j], e->syms[k].name) == 0;
				if (!dup)
					snprintf(out[n++], 64, "%s", e->syms[k].name);
			}
	}
	return n;
}

/* glibc's thread debugging descriptors (3 x u32 each). */
static const char *const fz_thread_db_names[] __attribute__((unused)) = {
	"_thread_db_const_thread_area", "_thread_db_register64", "_thread_db_register32",
	"_thread_db_pthread_list", "_thread_db_list_t_next", "_thread_db_pthread_tid",
	"_thread_db_rtld_global__dl_stack_user", "_thread_db_rtld_global__dl_stack_used",
	"_thread_db_link_map_l_tls_modid", "_thread_db_pthread_dtvp", "_thread_db_dtv_dtv",
	"_thread_db_dtv_t_pointer_val",
};

/* Regions every TLS-related walk reads: descriptors, struct pthread and DTV of each thread,
 * the link_map entries, glibc's thread list heads. */
FZ_FN void fz_base_tls_regions(struct fz_base *b, struct cq_core *core)
{
	for (size_t i = 0; i < sizeof(fz_thread_db_names) / sizeof(fz_thread_db_names[0]); i++)
		fz_base_symbol_region(b, core, fz_thread_db_names[i], 12);
	fz_base_symbol_region(b, core, "_rtld_global", 4096);
	fz_base_symbol_region(b, core, "_dl_stack_user", 16);
	fz_base_symbol_region(b, core, "_dl_stack_used", 16);
	for (size_t i = 0; i < core->nimages; i++)
		if (core->images[i].link_map)
			fz_base_region(b, core, core->images[i].link_map, 0x600);
	for (size_t i = 0; i < core->nthreads && i < 8; i++) {
		uint64_t pthread;
		struct cq_error *err = cq_core_thread_pthread(core, &core->threads[i], &pthread);
		if (err) {
			cq_error_destroy(err);
			continue;
		}
		/* tcbhead_t (dtv pointer) and struct pthread's tid and list links. */
		fz_base_region(b, core, pthread, 0x800);
		if (pthread > 0x800)
			fz_base_region(b, core, pthread - 0x800, 0x800); /* TLS_DTV_AT_TP targets */
		/* The DTV, through glibc's own descriptor of where struct pthread keeps it. */
		struct cq_symref ref;
		uint64_t dtvp_off, dtv;
		err = cq_core_lookup(core, "_thread_db_pthread_dtvp", NULL, &ref);
		if (!err)
			err = cq_core_read_uint(core, ref.address + 8, 4, &dtvp_off);
		if (!err)
			err = cq_core_read_ptr(core, pthread + dtvp_off, &dtv);
		if (!err && dtv > 0x100)
			fz_base_region(b, core, dtv - 0x20, 0x200);
		cq_error_destroy(err);
	}
}

#endif
