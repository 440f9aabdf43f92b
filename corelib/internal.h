/* SPDX-License-Identifier: MIT */
/* Private to corelib: functions shared between its files. */
#ifndef COREQ_INTERNAL_H
#define COREQ_INTERNAL_H

#include "core.h"

/** Parse all PT_NOTE segments of the core (notes.c). */
struct cq_error *cq__core_parse_notes(struct cq_core *core);

/** Parse one note named "COREQ" (bundle.c). */
struct cq_error *cq__bundle_note(struct cq_core *core, uint32_t type, const uint8_t *desc,
				 size_t size);

/** Release what cq__bundle_note() kept (bundle.c). */
void cq__bundle_free(struct cq_core *core);

/** Identify the core with the multi-architecture libbfd (bfd_ident.c). */
struct cq_error *cq__core_bfd_identify(struct cq_core *core);

/** Register the file range @p file [@p offset ..] as backing target memory [@p start,
 * @p end) (memory.c); @p path names it in reports. */
struct cq_error *cq__memory_add_file(struct cq_core *core, uint64_t start, uint64_t end,
				     struct cq_file *file, uint64_t offset, const char *path);

/** Release the file ranges (memory.c). */
void cq__memory_free(struct cq_core *core);

/** Release images (image.c). */
void cq__core_free_images(struct cq_core *core);

/** Find the file for @p target_path (find.c); NULL and *why set when not found. With a
 * @p build_id the candidate is opened to compare it, and *@p elf gets that open file (the
 * one checked, not the path opened again; caller closes), else NULL. */
char *cq__find_file(const struct cq_core *core, const char *target_path,
		    const uint8_t *build_id, size_t build_id_len, char **why, struct cq_elf **elf);

/** Find a separate debug file for @p e (build-id, then debuglink); NULL if none. */
char *cq__find_debug_file(const struct cq_core *core, const char *found_path,
			  const struct cq_elf *e);

/** Find the dwz alt file @p e names (.gnu_debugaltlink), @p e being the file at
 * @p dwarf_path that holds an image's DWARF: where its link says (under the sysroot, or
 * relative to @p dwarf_path), under --debug-dir, by build-id under --debug-dir and the
 * sysroot's /usr/lib/debug, from debuginfod. Its build-id is checked; the file is returned
 * open in *@p elf (caller closes). NULL and *@p why (a one-line reason) when not found. */
char *cq__find_alt_file(const struct cq_core *core, const char *dwarf_path, const struct cq_elf *e,
			struct cq_elf **elf, char **why);

/** Upper bounds for structures walked in target memory (hostile cores). */
#define CQ_MAX_LINK_MAPS 4096
/* NT_FILE entries kept: a process has at most vm.max_map_count mappings (65530 unless
 * raised); a note claiming millions cost gigabytes of names. */
#define CQ_MAX_FILE_MAPS 65536
#define CQ_MAX_THREADS 100000
#define CQ_MAX_NOTES_BYTES (UINT64_C(256) << 20)

#endif
