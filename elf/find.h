/* SPDX-License-Identifier: MIT */
/**
 * @file find.h
 * The search for the files a core names, on this machine and from debuginfod servers:
 * executables and libraries (under --sysroot, in --solib-search-path, by build-id under
 * --debug-dir), their separate debug files (by build-id under --debug-dir and the
 * sysroot's /usr/lib/debug, then by .gnu_debuglink beside the file, in its .debug/ and
 * under those directories) and dwz alt files (.gnu_debugaltlink). A candidate whose
 * build-id differs from the one asked for is never used: the mismatch is the answer's
 * reason. Paths a core or an image names may be hostile: a path under the sysroot is
 * normalized lexically and never leaves it; a debuglink is a file name, never a path.
 */
#ifndef COREQ_ELF_FIND_H
#define COREQ_ELF_FIND_H

#include <stddef.h>
#include <stdint.h>

struct cq_elf;

/** Where to look (the CLI's --sysroot, --solib-search-path, --debug-dir); any may be NULL. */
struct cq_search_paths {
	const char *sysroot;           /**< prefix for the absolute paths a core names */
	const char *solib_search_path; /**< colon-separated directories, searched by basename */
	const char *debug_dir;         /**< root of .build-id/xx/rest.debug and debuglink dirs */
};

/** The file for @p target_path (a path the core names); NULL and *@p why set (a one-line
 * reason naming what was tried, or the build-id mismatch) when not found. With a
 * @p build_id the candidate is opened to compare it, and *@p elf gets that open file (the
 * one checked, not the path opened again; caller closes), else NULL. */
char *cq_find_file(const struct cq_search_paths *paths, const char *target_path, const uint8_t *build_id,
		   size_t build_id_len, char **why, struct cq_elf **elf);

/** A separate debug file for @p e, the file found at @p found_path (build-id, then
 * debuglink); NULL if none. Its build-id is not checked here: the caller opens it. */
char *cq_find_debug_file(const struct cq_search_paths *paths, const char *found_path, const struct cq_elf *e);

/** The dwz alt file @p e names (.gnu_debugaltlink), @p e being the file at @p dwarf_path
 * that holds an image's DWARF: where its link says (under the sysroot, or relative to
 * @p dwarf_path), under --debug-dir, by build-id under --debug-dir and the sysroot's
 * /usr/lib/debug, from debuginfod. Its build-id is checked; the file is returned open in
 * *@p elf (caller closes). NULL and *@p why (a one-line reason) when not found. */
char *cq_find_alt_file(const struct cq_search_paths *paths, const char *dwarf_path, const struct cq_elf *e,
		       struct cq_elf **elf, char **why);

#endif
