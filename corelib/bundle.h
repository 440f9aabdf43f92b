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
 *    name, load bias, build-id and full symbol table, and (version 2) an "unwind ELF"
 *    with what unwinding through the image needs.
 * Images whose files are missing (or differ from the bundled build-id) then take their
 * symbols from the bundle and show status "bundled"; unwinders (stack/) take their CFI
 * from the unwind ELF (cq_image.unwind_elf).
 *
 * Note formats (all integers in the core's byte order, descriptors padded to 4):
 *  - CQ_NT_BUNDLE: u32 format version (CQ_BUNDLE_VERSION), u32 image count, then the
 *    NUL-terminated producer string.
 *  - CQ_NT_BUNDLE_IMAGE: u32 name_len (with NUL), u32 build_id_len, u32 nsyms,
 *    u32 strtab_size, u64 bias, u32 flags (bit 0: executable), u32 reserved,
 *    u64 start, u64 end (the mapped range; 0, 0 if unknown), name,
 *    build-id, zero padding to 8, nsyms x { u64 value, u64 size, u32 name offset, u8 type,
 *    u8 bind, u8 from_dynsym, u8 reserved }, strtab.
 *  - CQ_NT_BUNDLE_TYPES (added within version 1; older readers skip it): a type donor
 *    (types.h), u32 name_len (with NUL), u32 reserved, u64 file size, name, zero padding
 *    to 8, then the donor ELF file as it is. Written for each of the core's type donors
 *    (--types) and each donor an input bundle carried, so the bundle answers type
 *    questions (MQD's find_type) wherever it is read.
 *  - CQ_NT_BUNDLE_UNWIND (version 2): u32 name_len (with NUL), u32 flags (bit 0: line
 *    DWARF included, `coreq bundle --with-lines`), u64 ELF size, name (that of the
 *    CQ_NT_BUNDLE_IMAGE entry it belongs to, which comes before it), zero padding to 8,
 *    then the unwind ELF: an ELF file of the core's class, byte order and machine, with
 *    the e_type, e_flags and PT_LOAD program headers of the image's file (p_offset and
 *    p_filesz 0: the file carries no segment contents), so an unwinder places it at the
 *    image's bias, and only these sections, at their link-time sh_addr and with their
 *    original contents: .eh_frame, .eh_frame_hdr, .debug_frame, .ARM.exidx, .ARM.extab,
 *    .note.gnu.build-id (from the image's file, or its separate debug file for what the
 *    file lacks); with flag bit 0 also the DWARF that line tables and inlined scopes need
 *    (.debug_info, .debug_abbrev, .debug_line, .debug_line_str, .debug_str,
 *    .debug_str_offsets, .debug_addr, .debug_aranges, .debug_ranges, .debug_rnglists,
 *    .debug_loc, .debug_loclists, from the separate debug file when one was found, else
 *    from the image's file). At most CQ_BUNDLE_MAX_UNWIND bytes. Written for every image
 *    with a file that has any of these sections (--symbols-only too: stacks need no file
 *    data); an input
 *    bundle's unwind ELFs are carried over. A reader checks the ELF (machine, class,
 *    byte order, type, sections inside it); one that fails is that image's problem, the
 *    rest of the bundle still reads.
 * Version 1 bundles (no CQ_NT_BUNDLE_UNWIND) still read; readers refuse a version they do
 * not know, naming it.
 */
#ifndef COREQ_BUNDLE_H
#define COREQ_BUNDLE_H

#include "core.h"

#define CQ_BUNDLE_NOTE_NAME "COREQ"
#define CQ_NT_BUNDLE 0x434f5201u
#define CQ_NT_BUNDLE_IMAGE 0x434f5202u
#define CQ_NT_BUNDLE_TYPES 0x434f5203u
/** CQ_NT_BUNDLE_IMAGE's fixed head, its flag bit 0 and one symbol entry, in bytes. */
#define CQ_BUNDLE_IMAGE_HEAD 48
#define CQ_BUNDLE_IMAGE_EXE 1u
#define CQ_BUNDLE_SYM_ENTRY 24
/** Type donors larger than this are not bundled (they are DWARF of a few headers). */
#define CQ_BUNDLE_MAX_DONOR (UINT64_C(64) << 20)
#define CQ_NT_BUNDLE_UNWIND 0x434f5204u
/** Largest unwind ELF read or written (all notes together are bounded too). */
#define CQ_BUNDLE_MAX_UNWIND (UINT64_C(128) << 20)
#define CQ_BUNDLE_UNWIND_LINES 1u
/** Version written; readers accept 1 (no unwind ELFs) to this. */
#define CQ_BUNDLE_VERSION 2

/** Summary of what cq_core_write_bundle() wrote. */
struct cq_bundle_stats {
	size_t images;          /**< images whose symbols were stored */
	size_t symbols;         /**< symbols stored in all */
	size_t donors;          /**< type donors stored */
	uint64_t added_bytes;   /**< file-backed bytes dumped into segments */
	size_t unwind_images;   /**< images whose unwind ELF was stored */
	uint64_t unwind_bytes;  /**< the unwind ELFs' bytes in all */
	uint64_t size;          /**< bytes written (compressed size for .gz) */
};

struct cq_bundle_options {
	/** Store symbols, unwind ELFs and type donors only, no file-backed data but the
	 * images' ELF header pages (how images are found): enough for plugins that read only
	 * the process's own memory (MQD DLLs) and for backtraces, and much smaller. */
	bool symbols_only;
	/** Unwind ELFs carry line tables and inlined scopes too (the DWARF listed above). */
	bool with_lines;
};

/**
 * Write a bundle of @p core to @p path (gzip-compressed when the name ends in ".gz");
 * @p opts may be NULL. Never overwrites one of the core's own input files.
 */
struct cq_error *cq_core_write_bundle(struct cq_core *core, const char *path,
				      const struct cq_bundle_options *opts,
				      struct cq_bundle_stats *ret);

#endif
