/* SPDX-License-Identifier: MIT */
/* Private to corelib: functions shared between its files. */
#ifndef COREQ_INTERNAL_H
#define COREQ_INTERNAL_H

#include "core.h"
#include "elf/find.h"

/** Make the core own what a part of the model made: @p free_part(core) runs when the core
 * is closed, the last registered first (core.c). The core object itself knows its file,
 * segments, notes, threads and memory; images, types and a bundle's contents register
 * here when they first allocate, so it knows none of them. Registering a function twice
 * keeps one. */
void cq__core_own(struct cq_core *core, void (*free_part)(struct cq_core *core));

/** Parse all PT_NOTE segments of the core (notes.c). */
struct cq_error *cq__core_parse_notes(struct cq_core *core);

/** Parse one note named "COREQ" (bundle.c). */
struct cq_error *cq__bundle_note(struct cq_core *core, uint32_t type, const uint8_t *desc,
				 size_t size);

/** Register the file range @p file [@p offset ..] as backing target memory [@p start,
 * @p end) (memory.c); @p path names it in reports. */
struct cq_error *cq__memory_add_file(struct cq_core *core, uint64_t start, uint64_t end,
				     struct cq_file *file, uint64_t offset, const char *path);

/** Release the file ranges (memory.c). */
void cq__memory_free(struct cq_core *core);

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
