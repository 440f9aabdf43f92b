/* SPDX-License-Identifier: MIT */
/**
 * @file plugin_load.h
 * Loading exactly the plugin file that was checked, and only dependencies that were checked
 * too.
 *
 * A path is only a name: between a check of the path and dlopen() of the same string, a
 * symlink can be swapped, and glibc's dlopen expands $LIB, $PLATFORM and $ORIGIN in it (a
 * path through directories literally named "$LIB" resolves one way for realpath() and
 * another for dlopen()). So the plugin is opened once (names containing '$' are refused),
 * the open file is checked (regular, its real path trusted, ELF of the host's class and
 * machine) and then loaded through /proc/self/fd/N: what was checked is what runs.
 *
 * Its dependencies would still be found by the dynamic linker's search, which honours
 * LD_LIBRARY_PATH and takes $ORIGIN of a RUNPATH from the name used to load (a symlink
 * elsewhere to libLLVM, whose RUNPATH is $ORIGIN/../lib, pulled an attacker's library). So
 * coreq resolves the whole dependency closure itself before anything is loaded: DT_NEEDED
 * names that an object already in the process satisfies are left to it; every other one is
 * searched in the object's RPATH/RUNPATH ($ORIGIN taken from the object's real directory;
 * other $ tokens are not expanded), then coreq's own run paths, then the system library
 * directories, opened and checked like the plugin (trusted unless allowed), and loaded
 * first, through its descriptor, so that the dynamic linker finds each by its SONAME among
 * the loaded objects and never searches.
 */
#ifndef COREQ_PLUGIN_LOAD_H
#define COREQ_PLUGIN_LOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "plugin_path.h"

/** Objects loaded at most for one plugin (itself included). */
#define CQ_PLUGIN_MAX_OBJECTS 64

/** One checked, open file. */
struct cq_plugin_object {
	int fd;     /**< open read-only on the checked file */
	char *real; /**< its real path (for reports and $ORIGIN) */
	char *name; /**< DT_NEEDED name it satisfies, or the plugin's path as named */
};

/** A plugin ready to load: the dependencies to load first, in load order, then itself. */
struct cq_plugin_load {
	struct cq_plugin_object obj[CQ_PLUGIN_MAX_OBJECTS];
	size_t n; /**< obj[0 .. n-1]; obj[n-1] is the plugin */
};

/**
 * Open @p path as a plugin: refused when the name has a '$', when it is not a regular file,
 * when its real path is not directly in one of @p trusted (NULL: no trust check, the user
 * named it), or when it is not an ELF shared object of this host (@p option names how to
 * give another: "--ompd-plugin"). On success *@p fd_ret and *@p real_ret (caller frees)
 * hold the open file and its real path. The error's message is one line naming the path.
 */
struct cq_error *cq_plugin_open(const char *path, const struct cq_dirs *trusted, const char *option,
				int *fd_ret, char **real_ret);

/**
 * Resolve the dependency closure of the plugin open as @p fd (real path @p real, shown as
 * @p name) as described above. Dependencies must lie in @p trusted, the system library
 * directories, coreq's own run paths or, when @p own_dir_trusted (the user named the
 * plugin), the plugin's own directory; @p allow_untrusted lifts that. Takes ownership of
 * @p fd (closed on failure too). Release with cq_plugin_load_deinit().
 */
struct cq_error *cq_plugin_load_prepare(int fd, const char *real, const char *name,
					const struct cq_dirs *trusted, bool own_dir_trusted,
					bool allow_untrusted, struct cq_plugin_load *ret);

/**
 * In the process that runs the plugin (the isolation child): load the dependencies, then
 * the plugin, each through /proc/self/fd/N, RTLD_NOW | RTLD_LOCAL. NULL with *@p why_ret
 * (dlerror's text, or ours; not to be freed) on failure.
 */
void *cq_plugin_load_dlopen(const struct cq_plugin_load *l, const char **why_ret);

/**
 * Prepare the load (cq_plugin_load_prepare(), plugin not in its own trusted directory) of
 * what cq_plugin_choose() found in @p c, taking its descriptor. Nothing found: NULL and
 * nothing done. On failure c->path is freed and set to NULL.
 */
struct cq_error *cq_plugin_choice_load(struct cq_plugin_choice *c, const struct cq_dirs *trusted,
				       bool allow_untrusted, struct cq_plugin_load *ret);

void cq_plugin_load_deinit(struct cq_plugin_load *l);

/**
 * Load a library coreq itself depends on but loads only when its answer is needed (libbfd,
 * libdebuginfod), from @p path, a file fixed at build time (like a DT_NEEDED with an rpath:
 * no trusted-directory check for it). It is loaded as plugins are: opened once, checked as
 * opened, its dependencies resolved and checked by coreq. Returns the handle, or NULL with
 * why in @p why (@p why_size bytes).
 */
void *cq_plugin_load_fixed(const char *path, char *why, size_t why_size);

#endif
