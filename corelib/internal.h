/* SPDX-License-Identifier: MIT */
/* Private to corelib: functions shared between its files. */
#ifndef COREQ_INTERNAL_H
#define COREQ_INTERNAL_H

#include "core.h"
#include "elf/find.h"

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

/** The search paths of @p core's options, for elf/find.h: a pointer to a temporary that
 * lives until the end of the enclosing block. */
#define CQ_SEARCH(core) \
	(&(struct cq_search_paths){(core)->opts.sysroot, (core)->opts.solib_search_path, (core)->opts.debug_dir})

/** Upper bounds for structures walked in target memory (hostile cores). */
#define CQ_MAX_LINK_MAPS 4096
/* NT_FILE entries kept: a process has at most vm.max_map_count mappings (65530 unless
 * raised); a note claiming millions cost gigabytes of names. */
#define CQ_MAX_FILE_MAPS 65536
#define CQ_MAX_THREADS 100000
#define CQ_MAX_NOTES_BYTES (UINT64_C(256) << 20)

#endif
