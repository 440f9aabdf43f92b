/* SPDX-License-Identifier: MIT */
/**
 * @file outdir.h
 * A directory coreq writes many files into (snapshot -o DIR, its DIR/sampleN): opened once
 * and checked on that descriptor, so that nothing planted in or at it is followed. A
 * directory that does not exist is made, 0700; one that is not a directory, or not the
 * user's (coreq's effective uid), is refused; a subdirectory that is a symlink is refused,
 * never followed. Files are then named through the descriptor (/proc/self/fd/N/NAME), so
 * that a rename of a directory on the way after the check changes nothing.
 */
#ifndef COREQ_OUTPUT_OUTDIR_H
#define COREQ_OUTPUT_OUTDIR_H

#include <stddef.h>

#include "base/error.h"

struct cq_outdir {
	int fd;        /**< the directory, O_DIRECTORY */
	char *display; /**< its name as messages give it (the user's path) */
};

/** Open (or make, 0700) directory @p path for writing into. The top directory may be the
 * user's symlink to a directory of the user's; nothing else is followed. */
struct cq_error *cq_outdir_open(const char *path, struct cq_outdir *ret);

/** Open (or make, 0700) subdirectory @p name of @p dir: a symlink or another user's
 * directory there is refused. */
struct cq_error *cq_outdir_sub(const struct cq_outdir *dir, const char *name, struct cq_outdir *ret);

/** The path to write file @p name of @p dir through (into @p buf), and its name for
 * messages (into @p shown). */
void cq_outdir_file(const struct cq_outdir *dir, const char *name, char *buf, size_t n, char *shown, size_t nshown);

/** Close @p dir (safe on a zeroed or closed one). */
void cq_outdir_close(struct cq_outdir *dir);

#endif
