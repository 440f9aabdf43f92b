/* SPDX-License-Identifier: MIT */
/**
 * @file debuginfod.h
 * Files fetched by build-id from debuginfod servers (private to corelib): the last resort
 * when an executable, a library or a separate debug file is not on this machine.
 *
 * Nothing happens unless DEBUGINFOD_URLS is set and not empty: then, on the first miss,
 * libdebuginfod is loaded (like libbfd, from the one file the build linked against,
 * CQ_LIBDEBUGINFOD_PATH, its dependencies checked: plugin_load.h) and asked. Loading it
 * and libcurl costs 14-34 ms, so it never happens when nothing is missing or no server is
 * named. libdebuginfod keeps its cache (DEBUGINFOD_CACHE_PATH, else
 * $XDG_CACHE_HOME/debuginfod_client or ~/.cache/debuginfod_client) and honours its other
 * variables (DEBUGINFOD_TIMEOUT, DEBUGINFOD_MAXSIZE, DEBUGINFOD_MAXTIME, ...); when the
 * last two are unset coreq bounds each transfer itself (CQ_DEBUGINFOD_MAXSIZE,
 * CQ_DEBUGINFOD_MAXTIME) so that a server cannot send without end. Progress is shown on
 * stderr when it is a terminal. coreq's processes that share a cache take turns on it
 * (an flock on .coreq-fetch.lock in it): `coreq mqd`'s workers fetch the same files at
 * once, and libdebuginfod 0.188 then lost one now and then.
 *
 * A server may serve anything: what comes back is used only when it is an ELF file whose
 * build-id is the one asked for. After a failure that is not a plain miss (server
 * unreachable, a transfer over the bounds), no server is asked again in this process: one
 * slow or dead server costs its time once, not once per image.
 */
#ifndef COREQ_DEBUGINFOD_H
#define COREQ_DEBUGINFOD_H

#include <stddef.h>
#include <stdint.h>

#include "elf_file.h"

/** Bounds applied when DEBUGINFOD_MAXSIZE / DEBUGINFOD_MAXTIME are unset (a build may
 * set others with -D, as a check of them does). */
#ifndef CQ_DEBUGINFOD_MAXSIZE
#define CQ_DEBUGINFOD_MAXSIZE (1L << 30) /* bytes per file */
#endif
#ifndef CQ_DEBUGINFOD_MAXTIME
#define CQ_DEBUGINFOD_MAXTIME 300        /* seconds per file */
#endif

enum cq_debuginfod_kind {
	CQ_DEBUGINFOD_EXECUTABLE, /**< the executable or shared object itself */
	CQ_DEBUGINFOD_DEBUGINFO,  /**< its separate debug file */
};

enum cq_debuginfod_result {
	CQ_DEBUGINFOD_OFF,       /**< DEBUGINFOD_URLS unset or empty: nothing loaded or asked */
	CQ_DEBUGINFOD_FETCHED,   /**< *ret filled */
	CQ_DEBUGINFOD_NOT_FOUND, /**< no server has it (*why_ret says so) */
	CQ_DEBUGINFOD_FAILED,    /**< *why_ret: one line (refused file, server error, bounds) */
	CQ_DEBUGINFOD_SKIPPED,   /**< not asked: an earlier failure in this process (*why_ret) */
};

/** A fetched, verified file. */
struct cq_debuginfod_file {
	char *path;         /**< in libdebuginfod's cache */
	char *origin;       /**< "debuginfod URL" (the server that answered) or "debuginfod cache" */
	struct cq_elf *elf; /**< the file, open; its build-id is the one asked for */
};

/** Whether DEBUGINFOD_URLS names a server (nothing loaded). */
bool cq__debuginfod_enabled(void);

/** The value of DEBUGINFOD_URLS, or "" (for messages). */
const char *cq__debuginfod_urls(void);

/**
 * Fetch the @p kind file of build-id @p build_id (@p len bytes; nothing asked when @p len
 * is below 2); @p what names it in progress and messages ("debug file of libmpi.so.40").
 * Thread-safe (one request at a time). On CQ_DEBUGINFOD_FETCHED the caller owns *@p ret's
 * members (cq__debuginfod_file_deinit()); otherwise *@p why_ret is a one-line reason to
 * free, or NULL for CQ_DEBUGINFOD_OFF.
 */
enum cq_debuginfod_result cq__debuginfod_fetch(enum cq_debuginfod_kind kind, const uint8_t *build_id,
					       size_t len, const char *what,
					       struct cq_debuginfod_file *ret, char **why_ret);

void cq__debuginfod_file_deinit(struct cq_debuginfod_file *f);

#endif
