/* SPDX-License-Identifier: MIT */
/**
 * @file plugin_path.h
 * Which debugger plugin file may be loaded into this process. A path a core names is data
 * from a possibly hostile process: it is loaded only from trusted directories (resolved
 * with realpath, so a symlink out of one does not count) or with the user's consent, and
 * only if it is an ELF shared object of the host's class and machine.
 */
#ifndef COREQ_PLUGIN_PATH_H
#define COREQ_PLUGIN_PATH_H

#include <stdbool.h>
#include <stddef.h>

/** A list of trusted directories. */
struct cq_dirs {
	char **dir;
	size_t n;
};

/**
 * Trusted directories, most specific first: @p extra (colon-separated, the user's), the
 * matches of the glob @p patterns (NULL-terminated, e.g. "/usr/lib/llvm-[0-9]*\/lib"), then
 * the host's system library directories. Release with cq_dirs_free().
 */
struct cq_dirs cq_plugin_trusted_dirs(const char *extra, const char *const *patterns);

void cq_dirs_free(struct cq_dirs *d);

/** The host's Debian multiarch triplet ("x86_64-linux-gnu", "i386-linux-gnu", ...). */
const char *cq_host_multiarch(void);

/** Whether the resolved path @p real lies directly in one of @p d (resolved too). */
bool cq_plugin_trusted(const char *real, const struct cq_dirs *d);

/** Why the file open as @p fd (named @p path) cannot be loaded into this process (not
 * ELF, other class or machine), or NULL if it can; @p option names how the user gives
 * another plugin ("--mqd-plugin"). Caller frees. */
char *cq_plugin_host_mismatch_fd(int fd, const char *path, const char *option);

/** What cq_plugin_choose() found. */
struct cq_plugin_choice {
	char *path;     /**< the plugin to load (as found, not resolved), or NULL */
	int fd;         /**< the checked file, open: what is to be loaded (-1: none) */
	char *real;     /**< its real path */
	char *refused;  /**< first untrusted candidate passed over, "PATH (resolves to REAL)" */
	char *mismatch; /**< first candidate that does not fit this host, and why */
};

/**
 * The first loadable plugin among @p names (paths a core names): each name itself when it
 * is absolute, then its base name in each trusted directory of @p dirs, in that order. A
 * candidate is opened once and checked as opened (cq_plugin_open(), plugin_load.h): its
 * real path in a trusted directory unless @p allow_untrusted, no '$' in its name, and it
 * must fit the host (@p option named in the message). Release with
 * cq_plugin_choice_deinit().
 */
void cq_plugin_choose(char *const *names, size_t n, const struct cq_dirs *dirs,
		      bool allow_untrusted, const char *option, struct cq_plugin_choice *ret);

void cq_plugin_choice_deinit(struct cq_plugin_choice *c);

#endif
