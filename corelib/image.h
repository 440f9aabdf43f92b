/* SPDX-License-Identifier: MIT */
/**
 * @file image.h
 * Loaded images (executable, shared libraries, vDSO) of a core, and how their files are
 * found on this machine.
 *
 * Images come from the dynamic linker's list (AT_PHDR -> PT_DYNAMIC -> DT_DEBUG ->
 * r_debug -> link_map: works for qemu-user cores, which have no NT_FILE) and from NT_FILE;
 * a static executable is an image list of one. The order is the dynamic linker's search
 * order, executable first.
 */
#ifndef COREQ_IMAGE_H
#define COREQ_IMAGE_H

#include "core.h"
#include "elf/elf_file.h"

enum cq_image_status {
	CQ_IMAGE_FOUND,      /**< file found, build-id matches (or none to compare) */
	CQ_IMAGE_UNVERIFIED, /**< file found; the core has no build-id to compare with */
	CQ_IMAGE_MISSING,    /**< no file found */
	CQ_IMAGE_MISMATCH,   /**< files found, but none has the build-id the core names */
	CQ_IMAGE_VIRTUAL,    /**< vDSO: lives only in memory */
	CQ_IMAGE_BUNDLED,    /**< no matching file: symbols from the bundle (bundle.h) */
};

struct cq_image {
	char *name;            /**< path as the target saw it ("" never: exe gets its path) */
	/** Path NT_FILE gives for the same file when it differs from @c name (link_map has
	 * the path ld.so opened, NT_FILE the kernel's resolved one). */
	char *map_name;
	bool is_exe;
	bool from_link_map, from_file_note;
	bool ranges_added;      /**< its file ranges are registered with memory (memory.c) */
	uint64_t link_map;     /**< address of its struct link_map (0 if none) */
	uint64_t bias;         /**< load bias (l_addr) */
	bool bias_known;
	uint64_t dynamic;      /**< address of its dynamic section (l_ld) */
	uint64_t start, end;   /**< lowest and highest mapped address seen */
	uint8_t build_id[64];  /**< from the core's memory, when dumped */
	size_t build_id_len;
	enum cq_image_status status;
	char *found_path;      /**< file on this machine, if found */
	char *problem;         /**< why missing/mismatched: one line */
	struct cq_elf *elf;    /**< the found file (opened), bundled symbols, or NULL */
	char *debug_path;      /**< separate debug file used for symbols, or NULL */
	/** Where found_path / debug_path came from when not from a search of this machine:
	 * "debuginfod URL" (the server that sent it) or "debuginfod cache"; else NULL. */
	char *file_origin, *debug_origin;
	struct cq_elf *debug;  /**< opened separate debug file, or NULL */
	/** The dwz alt file its DWARF names (.gnu_debugaltlink), found and checked, or NULL
	 * (none named, or not found: then a problem of the image says so) */
	char *alt_path;
	struct cq_elf *alt;
	/** A bundled image's unwind ELF (bundle.h, CQ_NT_BUNDLE_UNWIND): a small ELF of the
	 * core's machine with the image's PT_LOADs and only its unwind sections (with
	 * --with-lines also line DWARF) at their link-time addresses. For unwinders only: it
	 * is never the image's file (memory and symbols do not read it). Owned by the core;
	 * NULL unless status is "bundled" and the bundle (version 2) carried a valid one. */
	const uint8_t *unwind_elf;
	size_t unwind_elf_size;
	bool unwind_elf_lines;  /**< it carries line tables and scopes (--with-lines) */
};

/** Discover images (idempotent); problems are recorded, not fatal. */
struct cq_error *cq_core_load_images(struct cq_core *core);

/** The image whose mapped range contains @p addr, or NULL. */
struct cq_image *cq_core_image_at(struct cq_core *core, uint64_t addr);

/** Whether @p path names @p img (its link_map or NT_FILE path). */
bool cq_image_has_path(const struct cq_image *img, const char *path);

/** The image whose name (full path or basename) is @p name, or NULL. */
struct cq_image *cq_core_image_named(struct cq_core *core, const char *name);

/** ELF file to take symbols from: the separate debug file if any, else the image file. */
struct cq_elf *cq_image_symbol_file(struct cq_image *img);

/**
 * A new anonymous file (memfd) holding @p img's unwind ELF, for libraries that open ELF
 * files by descriptor (libdwfl's dwfl_report_elf); the caller owns it. CQ_ERR_NOT_FOUND
 * when the image has none.
 */
struct cq_error *cq_image_unwind_fd(const struct cq_image *img, int *ret);

/** Human-readable status name ("found", "missing", ...). */
const char *cq_image_status_name(enum cq_image_status s);

/* ---- symbols (symbols.c) -------------------------------------------------------------- */

/** A symbol resolved in a core. */
struct cq_symref {
	struct cq_image *image;
	const struct cq_symbol *sym;
	uint64_t address;  /**< runtime address (bias + value); for TLS: the st_value offset */
	bool is_tls;
};

/**
 * Look @p name up in the dynamic linker's order (executable first, so copy relocations
 * win), or only in the image @p scope when it is not NULL.
 */
struct cq_error *cq_core_lookup(struct cq_core *core, const char *name,
				struct cq_image *scope, struct cq_symref *ret);

/**
 * Like cq_core_lookup(), for a name a person typed: when no image has the exact name, a
 * mangled symbol (C++, Rust) is found by its plain name, as gdb does ("ready" finds the
 * static _ZL5ready, "do_work" the function _Z7do_workv); ret->sym->name is the real one.
 */
struct cq_error *cq_core_lookup_user(struct cq_core *core, const char *name,
				     struct cq_image *scope, struct cq_symref *ret);

/** Symbolize @p addr: image, nearest symbol and offset (sym NULL when unknown). */
struct cq_error *cq_core_symbolize(struct cq_core *core, uint64_t addr, struct cq_symref *ret);

/** cq_core_symbolize() of @p n addresses (ret[i] for addrs[i]), the same answers: the
 * addresses in one image are looked up together (cq_elf_symbols_at(): one scan of its
 * symbol table for many, not one each). */
struct cq_error *cq_core_symbolize_many(struct cq_core *core, const uint64_t *addrs, size_t n,
				       struct cq_symref *ret);

/**
 * @p addr as text for reports: "symbol" or "symbol+0xoff"; with no symbol and
 * @p image_fallback, "image+0xoff" (the image's base name and link-time address). NULL when
 * nothing names it (or on allocation failure). Free the result.
 */
char *cq_core_symbol_name(struct cq_core *core, uint64_t addr, bool image_fallback);

/* ---- TLS (tls.c) ---------------------------------------------------------------------- */

/**
 * Address of glibc's struct pthread of @p thread: from the thread pointer with libc's
 * `_thread_db_*` descriptors, else by walking glibc's thread lists for the tid.
 */
struct cq_error *cq_core_thread_pthread(struct cq_core *core, struct cq_thread *thread,
					uint64_t *ret);

/** Address of the TLS variable @p name (optionally in image @p scope) for @p thread. */
struct cq_error *cq_core_tls_address(struct cq_core *core, struct cq_thread *thread,
				     const char *name, struct cq_image *scope, uint64_t *ret);

#endif
