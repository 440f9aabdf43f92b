/* SPDX-License-Identifier: MIT */
/* fuzz_linkmap: the dynamic linker's structures over fuzzed memory.
 *
 * Bases: the synthetic link_map cores of tests/tools/mkcore.c (<arch>-lm-ok.core for
 * x86_64, i386, s390x and ppc32: the four class/byte-order pairs), whose auxv points
 * AT_PHDR into their last PT_LOAD, the segment that holds the program headers, the
 * dynamic section (DT_DEBUG), r_debug, the link_map list and the names.
 *
 * Input: byte 0 picks the base; the rest *is* that segment's contents. The segment is
 * moved to the end of the file and resized to the input (shorter input: the rest of the
 * segment is not dumped and reads fault; longer: the segment grows). Then images are
 * discovered (PT_PHDR/PT_DYNAMIC from memory, DT_DEBUG, r_debug, the bounded, cycle-safe
 * link_map walk, names, build-ids from memory) and looked at. */
#include <stdint.h>

#include "corelib/core.h"
#include "corelib/image.h"
#include "fuzz_common.h"

static const char *const bases[] = {"lm-x86_64.core", "lm-i386.core", "lm-s390x.core",
				    "lm-ppc32.core"};
#define NBASES (sizeof(bases) / sizeof(bases[0]))

static struct {
	uint8_t *data;
	size_t len;
	struct fz_elf elf;
	unsigned seg;       /* program header index of the link_map segment */
	uint64_t memsz;
} base[NBASES];
static struct fz_memfd out;
static uint8_t *scratch;
static size_t scratch_cap;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	for (size_t i = 0; i < NBASES; i++) {
		base[i].data = fz_read_file(fz_data_path(bases[i]), &base[i].len);
		if (!fz_elf_parse(&base[i].elf, base[i].data, base[i].len))
			fz_die("%s: not an ELF core", bases[i]);
		bool found = false;
		for (unsigned k = 0; k < base[i].elf.phnum; k++)
			if (fz_ph(&base[i].elf, k, FZ_TYPE) == PT_LOAD) {
				base[i].seg = k; /* mkcore writes the link_map segment last */
				found = true;
			}
		if (!found)
			fz_die("%s: no PT_LOAD", bases[i]);
		base[i].memsz = fz_ph(&base[i].elf, base[i].seg, FZ_MEMSZ);
	}
	fz_memfd_init(&out, "fuzz_linkmap");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t b = data[0] % NBASES;
	const uint8_t *seg = data + 1;
	size_t seglen = size - 1;
	size_t at = (base[b].len + 15) & ~(size_t)15, total = at + seglen;
	if (total > scratch_cap) {
		scratch = realloc(scratch, total);
		scratch_cap = total;
	}
	memcpy(scratch, base[b].data, base[b].len);
	memset(scratch + base[b].len, 0, at - base[b].len);
	memcpy(scratch + at, seg, seglen);
	fz_set_ph(&base[b].elf, scratch, base[b].seg, FZ_OFFSET, at);
	fz_set_ph(&base[b].elf, scratch, base[b].seg, FZ_FILESZ, seglen);
	fz_set_ph(&base[b].elf, scratch, base[b].seg, FZ_MEMSZ,
		  seglen > base[b].memsz ? seglen : base[b].memsz);
	fz_memfd_set(&out, scratch, total);

	static const struct cq_core_options opts = {.sysroot = FZ_SYSROOT,
						    .max_inflated = FZ_MAX_INFLATED};
	struct cq_core *core;
	struct cq_error *err = cq_core_open(out.path, &opts, &core);
	fz_verbose_error("open", err);
	if (err) {
		cq_error_destroy(err);
		return 0;
	}
	cq_error_destroy(cq_core_load_images(core));
	for (size_t i = 0; i < core->nimages; i++) {
		struct cq_image *img = &core->images[i];
		struct cq_symref ref;
		cq_error_destroy(cq_core_symbolize(core, img->start, &ref));
		(void)cq_core_image_at(core, img->bias);
		(void)cq_core_image_named(core, img->name);
		if (img->map_name)
			(void)cq_image_has_path(img, img->map_name);
		(void)cq_image_status_name(img->status);
	}
	struct cq_symref ref;
	cq_error_destroy(cq_core_lookup(core, "r_debug_state", NULL, &ref));
	uint64_t pthread;
	cq_error_destroy(cq_core_thread_pthread(core, &core->threads[0], &pthread));
	cq_core_close(core);
	return 0;
}
