/* SPDX-License-Identifier: MIT */
/**
 * @file self_path.h
 * Where coreq's own files are: beside the running binary. In the build tree that is
 * build/ (build/plugins/, ...); installed with `make install PREFIX=P` the binary is
 * P/bin/coreq and its files are P/lib/coreq/ and P/share/coreq/. Paths are taken relative
 * to the binary's real location (/proc/self/exe), never from the environment or the
 * current directory, so a staged install (DESTDIR) or a moved prefix works as is.
 */
#ifndef COREQ_SELF_PATH_H
#define COREQ_SELF_PATH_H

/**
 * The real path of @p rel (e.g. "../share/coreq/donors") taken from the directory of the
 * running binary, or NULL if it does not exist. Caller frees.
 */
char *cq_self_relative(const char *rel);

#endif
