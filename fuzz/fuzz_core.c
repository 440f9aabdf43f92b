/* SPDX-License-Identifier: MIT */
/* fuzz_core: the input is a whole core file, raw or compressed (gzip, zlib, zstd, xz, lz4).
 *
 * Opens it (ELF and program headers, every note: threads, auxv, psinfo, siginfo, NT_FILE,
 * TLS notes, bundle notes; libbfd's identification), discovers images (auxv, dynamic
 * section, r_debug, link_map, NT_FILE, vDSO, build-ids from memory), then per thread reads
 * every register, symbolizes the pc, reads memory at pc and sp and a string at sp, looks for
 * the struct pthread, and reads the first and last bytes of every segment. Files of the host
 * are never used (sysroot that does not exist) and expansion is bounded to 64 MiB. */
#include <stdint.h>

#include "corelib/core.h"
#include "corelib/environ.h"
#include "corelib/image.h"
#include "elf/bfd_ident.h"
#include "fuzz_common.h"

#define MAX_THREADS 64   /* work per input stays bounded whatever the core claims */
#define MAX_SEGMENTS 256

static struct fz_memfd input;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_memfd_init(&input, "fuzz_core");
	return 0;
}

static void drop(struct cq_error *err)
{
	cq_error_destroy(err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct cq_core_options opts = {.sysroot = FZ_SYSROOT,
						    .max_inflated = FZ_MAX_INFLATED};
	fz_memfd_set(&input, data, size);
	struct cq_core *core;
	struct cq_error *err = cq_core_open(input.path, &opts, &core);
	fz_verbose_error("open", err);
	if (err) {
		drop(err);
		return 0;
	}
	/* libbfd's identification, as `info --bfd` asks it (elf/bfd_ident.h) */
	struct cq_bfd_query q = {core->name, core->file->fd, core->target->name, core->target->bfd_arch,
				 core->nthreads};
	struct cq_bfd_ident id;
	drop(cq_bfd_identify(&q, &id));
	cq_bfd_ident_deinit(&id);
	drop(cq_core_load_images(core));
	uint8_t buf[256];
	for (size_t i = 0; i < core->nthreads && i < MAX_THREADS; i++) {
		struct cq_thread *th = &core->threads[i];
		for (unsigned r = 0; r < core->target->nregs; r++)
			if (cq_thread_has_reg(core, th, r))
				(void)cq_thread_reg_at(core, th, r);
		uint64_t v;
		(void)cq_thread_reg(core, th, "pc", &v);
		struct cq_symref ref;
		drop(cq_core_symbolize(core, th->pc, &ref));
		drop(cq_core_read(core, th->pc, buf, 16));
		drop(cq_core_read(core, th->sp, buf, sizeof(buf)));
		drop(cq_core_read_ptr(core, th->sp, &v));
		char *s = NULL;
		if (!(err = cq_core_read_string(core, th->sp, 128, &s)))
			free(s);
		drop(err);
		(void)cq_core_mem_source(core, th->pc, NULL);
		uint64_t pthread;
		drop(cq_core_thread_pthread(core, th, &pthread));
		drop(cq_core_tls_address(core, th, "errno", NULL, &v));
		(void)cq_core_thread(core, th->tid);
	}
	for (size_t i = 0; i < core->nsegments && i < MAX_SEGMENTS; i++) {
		const struct cq_segment *s = &core->segments[i];
		drop(cq_core_read(core, s->vaddr, buf, s->memsz < 64 ? (size_t)s->memsz : 64));
		drop(cq_core_read(core, s->vaddr + s->memsz - 1, buf, 1));
	}
	uint64_t v;
	if (cq_core_auxv(core, AT_EXECFN, &v)) {
		char *s = NULL;
		if (!(err = cq_core_read_string(core, v, 4096, &s)))
			free(s);
		drop(err);
	}
	struct cq_symref ref;
	/* the initial environment (launchers' rank variables) */
	static const char *const env_names[] = {"OMPI_COMM_WORLD_RANK", "PATH", "HOME"};
	size_t which;
	char *env_value = NULL;
	drop(cq_core_getenv(core, env_names, 3, &which, &env_value));
	free(env_value);
	drop(cq_core_lookup(core, "main", NULL, &ref));
	for (size_t i = 0; i < core->nimages; i++) {
		(void)cq_core_image_at(core, core->images[i].start);
		(void)cq_core_image_named(core, core->images[i].name);
	}
	cq_core_close(core);
	return 0;
}
