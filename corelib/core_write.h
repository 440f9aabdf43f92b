/* SPDX-License-Identifier: MIT */
/**
 * @file core_write.h
 * The model written out as a Linux ELF core file: what a snapshot of a live process is
 * (live/snapshot), readable by coreq, gdb and eu-stack like the kernel's cores.
 *
 * Notes are made from the model, in the target's layouts (elfcore.h): NT_PRPSINFO, NT_AUXV,
 * NT_FILE, then per thread NT_PRSTATUS (its register block as the kernel gives it, the
 * signal it was taking, its tid). Memory is written only where asked: each segment of the
 * model becomes PT_LOADs, the pieces inside @p ranges with their bytes (read through the
 * model), the rest without file bytes (p_filesz 0), so the file has the address space's
 * shape and no more data than the analyses read. A page that holds what its mapped file
 * holds (NT_FILE's file, compared byte for byte) is left out too, but for a mapping's first
 * page at file offset 0 (ELF headers, the build-id). Readers take the rest from the mapped
 * files, as they do for a kernel core's left-out pages.
 *
 * But for an image whose file the model reads at a path of its own (cq_file_map.mapped: a
 * live process's library deleted or replaced since it was mapped): its path holds no such
 * file where the snapshot is read, so its mappings are written whole, as a kernel core
 * dumps file-backed mappings (coredump_filter bit 2), and readers rebuild its file from
 * them (image.c). Other deleted files (a mapped data file, a memfd) stay as above.
 */
#ifndef COREQ_CORELIB_CORE_WRITE_H
#define COREQ_CORELIB_CORE_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "core.h"

/** A range of target addresses [start, end). */
struct cq_mem_range {
	uint64_t start, end;
};

/** Sort the @p n ranges at @p r by start and merge those that overlap or touch, in place;
 * returns how many are left. */
size_t cq_mem_ranges_merge(struct cq_mem_range *r, size_t n);

/** What cq_core_write wrote. */
struct cq_core_write_stats {
	size_t loads;         /**< PT_LOAD headers */
	uint64_t data_bytes;  /**< memory bytes written */
	uint64_t file_bytes;  /**< the file's size */
	/** The mappings of images written whole (their files deleted or replaced): bytes. */
	uint64_t mapped_bytes;
	size_t mapped_images; /**< how many such images */
};

/** Write @p core as a core file at @p path (a temporary, then a rename; never over an
 * input), with the memory of @p ranges (@p n, sorted, not overlapping). A range the model
 * cannot read is written without bytes. */
struct cq_error *cq_core_write(struct cq_core *core, const char *path, const struct cq_mem_range *ranges, size_t n,
			       struct cq_core_write_stats *st);

#endif
