/* SPDX-License-Identifier: MIT */
/* fuzz_tls: TLS resolution without libthread_db over fuzzed target memory.
 *
 * Bases (fuzz_base.h): the OpenMP fixture bundles of x86_64 (struct pthread = tp),
 * i386 (tp from NT_386_TLS), aarch64 (tp - sizeof(struct pthread) from a descriptor) and
 * s390x (big-endian; a register plus a bias from a descriptor). They carry the symbols of
 * libc, ld.so and libomp, so glibc's `_thread_db_*` descriptors and TLS variables
 * (__kmp_gtid, errno, ...) are found with no file of the host.
 *
 * Input: u8 base, u8 flags, u8 which TLS variable, [u64 thread pointer if flags & 2],
 * then patch records over: the descriptors, each thread's struct pthread and DTV, the
 * link_map entries (l_tls_modid), _rtld_global (the thread list heads).
 * flags & 1 drops every thread's thread pointer (glibc's thread lists are walked instead);
 * flags & 2 sets thread (flags >> 4)'s thread pointer to the given value.
 * For every thread: cq_core_thread_pthread and cq_core_tls_address. */
#include "fuzz_base.h"

#define MAX_THREADS 8

static struct fz_base bases[] = {
	{.file = "omp-x86_64.bundle.gz"}, {.file = "omp-i386.bundle.gz"},
	{.file = "omp-aarch64.bundle.gz"}, {.file = "omp-s390x.bundle.gz"},
};
#define NBASES (sizeof(bases) / sizeof(bases[0]))
static char tls[NBASES][8][64];
static unsigned ntls[NBASES];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	for (size_t i = 0; i < NBASES; i++) {
		struct cq_core *core = fz_base_load(&bases[i]);
		fz_base_tls_regions(&bases[i], core);
		ntls[i] = fz_tls_names(core, tls[i], 8);
		if (!ntls[i])
			fz_die("%s: no TLS symbols", bases[i].file);
		cq_core_close(core);
		if (getenv("FUZZ_VERBOSE")) {
			fprintf(stderr, "%s: %u regions, TLS:", bases[i].file, bases[i].nregions);
			for (unsigned k = 0; k < ntls[i]; k++)
				fprintf(stderr, " %s", tls[i][k]);
			fprintf(stderr, "\n");
		}
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = {data, size};
	size_t bi = fz_u8(&in) % NBASES;
	struct fz_base *b = &bases[bi];
	uint8_t flags = fz_u8(&in);
	const char *name = tls[bi][fz_u8(&in) % ntls[bi]];
	uint64_t tp = flags & 2 ? fz_u64(&in) : 0;
	fz_base_patch(b, &in, 64);

	struct cq_core *core;
	struct cq_error *err = cq_core_open(b->mfd.path, &fz_core_opts, &core);
	fz_verbose_error("open", err);
	if (!err) {
		if (flags & 1)
			for (size_t i = 0; i < core->nthreads; i++)
				core->threads[i].has_tp = false;
		if (flags & 2) {
			struct cq_thread *th = &core->threads[(flags >> 4) % core->nthreads];
			th->tp = tp;
			th->has_tp = true;
		}
		for (size_t i = 0; i < core->nthreads && i < MAX_THREADS; i++) {
			uint64_t v;
			struct cq_error *e = cq_core_thread_pthread(core, &core->threads[i], &v);
			fz_verbose_error("pthread", e);
			cq_error_destroy(e);
			e = cq_core_tls_address(core, &core->threads[i], name, NULL, &v);
			fz_verbose_error(name, e);
			if (!e && getenv("FUZZ_VERBOSE"))
				fprintf(stderr, "fuzz: thread %d: %s at 0x%llx\n", core->threads[i].tid,
					name, (unsigned long long)v);
			cq_error_destroy(e);
		}
		cq_core_close(core);
	}
	cq_error_destroy(err);
	fz_base_restore(b);
	return 0;
}
