/* SPDX-License-Identifier: MIT */
/**
 * @file bfd_lib.h
 * The multi-architecture libbfd, loaded when its answer is first needed (private to
 * corelib). Loading and relocating libbfd-multiarch (4 MB, 18,000 relocations, plus
 * libzstd and libsframe) took a third of `coreq info`'s time and every other command
 * paid it too, so coreq is not linked with it: the one file the build linked against
 * (CQ_LIBBFD_PATH, fixed at build time, never searched) is opened, checked and loaded
 * like a plugin (plugin_load.h: its dependencies resolved and checked by coreq).
 */
#ifndef COREQ_BFD_LIB_H
#define COREQ_BFD_LIB_H

#define PACKAGE "coreq"            /* bfd.h insists on config.h-style macros */
#define PACKAGE_VERSION "0"
#include <bfd.h>

#include "base/error.h"

/** The libbfd functions corelib calls. */
struct cq_bfd {
	bfd *(*fdopenr)(const char *filename, const char *target, int fd);
	bool (*check_format)(bfd *abfd, bfd_format format);
	const char *(*printable_name)(bfd *abfd);
	bfd_error_type (*get_error)(void);
	const char *(*errmsg)(bfd_error_type error_tag);
	bool (*close)(bfd *abfd);
	char *(*demangle)(bfd *abfd, const char *name, int options);
};

/**
 * libbfd, loaded and initialized on the first call (thread-safe), or NULL with *@p err_ret
 * set to a one-line reason (the same on every call; not to be freed) when it cannot be
 * loaded: missing, not a fit for this host, or not the version bfd.h describes.
 */
const struct cq_bfd *cq__bfd(const char **err_ret);

#endif
