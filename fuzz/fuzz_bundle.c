/* SPDX-License-Identifier: MIT */
/* fuzz_bundle: the bundle reader (corelib/bundle.c, format in corelib/bundle.h).
 *
 * Bases: fixture bundles (x86_64 and big-endian s390x OpenMP bundles, the i386 MPI bundle
 * that carries type donors). Input: byte 0 picks the base; the rest *is* the contents of
 * its PT_NOTE segment of "COREQ" notes (header, image entries with symbol tables, type
 * donors, unwind ELFs), appended to the file with that program header pointed at it. Seeds are the
 * fixtures' own COREQ segments, trimmed (fuzz/mkseeds.c).
 *
 * Then the bundled images stand in for the missing files: images are discovered, symbols
 * looked up by name and by address, a TLS variable resolved, and (when the notes carry
 * type donors) types and fields looked up through libdw in the donor. */
#include "corelib/core.h"
#include "corelib/image.h"
#include "corelib/types.h"
#include "fuzz_common.h"

static const char *const files[] = {"omp-x86_64.bundle.gz", "omp-s390x.bundle.gz",
				    "mpi-i386.bundle.gz"};
#define NBASES (sizeof(files) / sizeof(files[0]))

static struct {
	uint8_t *data;
	size_t len, at;
	struct fz_elf elf;
	unsigned note;      /* program header of the COREQ notes */
	struct fz_memfd mfd;
	uint8_t phdr[56];   /* its pristine bytes */
	size_t phdr_at, phdr_len;
} base[NBASES];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	for (size_t i = 0; i < NBASES; i++) {
		base[i].data = fz_read_file(fz_data_path(files[i]), &base[i].len);
		if (!fz_elf_parse(&base[i].elf, base[i].data, base[i].len) ||
		    !fz_coreq_phdr(&base[i].elf, &base[i].note))
			fz_die("%s: not a bundle", files[i]);
		base[i].at = (base[i].len + 15) & ~(size_t)15;
		unsigned sz;
		base[i].phdr_at = fz_ph_at(&base[i].elf, base[i].note, FZ_TYPE, &sz);
		base[i].phdr_len = base[i].elf.is64 ? 56 : 32;
		memcpy(base[i].phdr, base[i].data + base[i].phdr_at, base[i].phdr_len);
		fz_memfd_init(&base[i].mfd, files[i]);
		fz_memfd_set(&base[i].mfd, base[i].data, base[i].len);
	}
	return 0;
}

static void lookups(struct cq_core *core)
{
	static const char *const names[] = {"main", "__kmp_gtid", "ompd_dll_locations",
					    "_thread_db_pthread_tid", "malloc", "MPIR_dll_name",
					    "ompi_mpi_comm_world", "errno"};
	struct cq_symref ref;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		cq_error_destroy(cq_core_lookup(core, names[i], NULL, &ref));
	for (size_t i = 0; i < core->nimages; i++) {
		/* what the unwinder does with a bundled unwind ELF: a file to open */
		int fd;
		struct cq_error *uerr = cq_image_unwind_fd(&core->images[i], &fd);
		if (!uerr)
			close(fd);
		cq_error_destroy(uerr);
		cq_error_destroy(cq_core_symbolize(core, core->images[i].start + 0x40, &ref));
		cq_error_destroy(cq_core_lookup(core, "_init", &core->images[i], &ref));
	}
	for (size_t i = 0; i < core->nthreads && i < 4; i++) {
		uint64_t v;
		cq_error_destroy(cq_core_symbolize(core, core->threads[i].pc, &ref));
		cq_error_destroy(cq_core_tls_address(core, &core->threads[i], "__kmp_gtid", NULL, &v));
	}
	if (core->nbundled_donors) {
		static const char *const types[] = {"int", "opal_list_t", "struct ompi_communicator_t",
						    "mca_pml_base_request_t"};
		for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
			const struct cq_type *t;
			struct cq_error *err = cq_core_find_type(core, types[i], &t);
			if (!err) {
				(void)cq_type_size(t);
				(void)cq_type_field_offset(t, "super");
				(void)cq_type_field_offset(t, "c_name");
			}
			cq_error_destroy(err);
		}
		(void)cq_core_type_sources(core);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t bi = data[0] % NBASES;
	const uint8_t *notes = data + 1;
	size_t n = size - 1;
	/* The COREQ segment moves to the end of the file and takes the input's size. */
	uint8_t ph[56];
	memcpy(ph, base[bi].phdr, base[bi].phdr_len);
	uint8_t *file_ph = base[bi].data + base[bi].phdr_at;
	memcpy(file_ph, ph, base[bi].phdr_len);
	fz_set_ph(&base[bi].elf, base[bi].data, base[bi].note, FZ_OFFSET, base[bi].at);
	fz_set_ph(&base[bi].elf, base[bi].data, base[bi].note, FZ_FILESZ, n);
	memcpy(ph, file_ph, base[bi].phdr_len);
	memcpy(file_ph, base[bi].phdr, base[bi].phdr_len); /* keep the pristine copy pristine */
	if (ftruncate(base[bi].mfd.fd, (off_t)base[bi].at) != 0)
		fz_die("ftruncate: %s", strerror(errno));
	fz_pwrite(&base[bi].mfd, notes, n, base[bi].at);
	fz_pwrite(&base[bi].mfd, ph, base[bi].phdr_len, base[bi].phdr_at);

	static const struct cq_core_options opts = {.sysroot = FZ_SYSROOT,
						    .max_inflated = FZ_MAX_INFLATED};
	struct cq_core *core;
	struct cq_error *err = cq_core_open(base[bi].mfd.path, &opts, &core);
	fz_verbose_error("open", err);
	if (!err) {
		cq_error_destroy(cq_core_load_images(core));
		lookups(core);
		cq_core_close(core);
	}
	cq_error_destroy(err);
	return 0;
}
