/* SPDX-License-Identifier: MIT */
/**
 * @file bundle.h
 * Bundles: a core plus what analyzing it needs from the files it names, in one file.
 *
 * A bundle is itself an ELF core (same machine, class and byte order), so everything that
 * reads a core reads a bundle; it may be gzip-compressed like any core. Compared with the
 * core it was made from it has:
 *  - the non-executable file-backed memory the core left out (read-only data of the
 *    libraries, e.g. an OpenMP runtime's .rodata) dumped into the PT_LOAD segments;
 *    code is not added;
 *  - one extra PT_NOTE segment of notes named "COREQ": a header note and, per image, its
 *    name, load bias, build-id and full symbol table.
 * Images whose files are missing (or differ from the bundled build-id) then take their
 * symbols from the bundle and show status "bundled".
 *
 * Note formats (all integers in the core's byte order, descriptors padded to 4):
 *  - CQ_NT_BUNDLE: u32 format version (CQ_BUNDLE_VERSION), u32 image count, then the
 *    NUL-terminated producer string.
 *  - CQ_NT_BUNDLE_IMAGE: u32 name_len (with NUL), u32 build_id_len, u32 nsyms,
 *    u32 strtab_size, u64 bias, u32 flags (bit 0: executable), u32 reserved,
 *    u64 start, u64 end (the mapped range; 0, 0 if unknown), name,
 *    build-id, zero padding to 8, nsyms x { u64 value, u64 size, u32 name offset, u8 type,
 *    u8 bind, u8 from_dynsym, u8 reserved }, strtab.
 * Readers refuse a version they do not know, naming it.
 */
#ifndef COREQ_BUNDLE_H
#define COREQ_BUNDLE_H

#include "core.h"

#define CQ_BUNDLE_NOTE_NAME "COREQ"
#define CQ_NT_BUNDLE 0x434f5201u
#define CQ_NT_BUNDLE_IMAGE 0x434f5202u
#define CQ_BUNDLE_VERSION 1

/** Summary of what cq_core_write_bundle() wrote. */
struct cq_bundle_stats {
	size_t images;          /**< images whose symbols were stored */
	size_t symbols;         /**< symbols stored in all */
	uint64_t added_bytes;   /**< file-backed bytes dumped into segments */
	uint64_t size;          /**< bytes written (compressed size for .gz) */
};

/**
 * Write a bundle of @p core to @p path (gzip-compressed when the name ends in ".gz").
 * Never overwrites one of the core's own input files.
 */
struct cq_error *cq_core_write_bundle(struct cq_core *core, const char *path,
				      struct cq_bundle_stats *ret);

#endif
