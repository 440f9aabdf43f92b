/* SPDX-License-Identifier: MIT */
/**
 * @file file.h
 * Input files (cores, executables, libraries), read lazily with pread.
 *
 * A compressed input (gzip, zlib, zstd, xz, lz4: decompress.h) is expanded once into an
 * anonymous temporary file (holes for runs of zeros, so sparse cores stay sparse) and then
 * read like any other file. The expansion is bounded so that a compression bomb is
 * refused, not followed. An Ubuntu apport report (apport.h) is read the same way: its
 * CoreDump field is decoded and expanded, under the same bound, and the report's fields
 * are kept on the file.
 */
#ifndef COREQ_FILE_H
#define COREQ_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "apport.h"
#include "base/error.h"

/** Default bound on the inflated size of a compressed input (4 GiB). */
#define CQ_FILE_DEFAULT_MAX_INFLATED (UINT64_C(4) << 30)

/**
 * The bound for inputs opened without one of their own (cq_file_open with 0): the
 * executables, libraries and debug files a core names, is given or a server sends, which
 * are opened far from the options (cq_elf_open). A tool sets it once, from its
 * --max-inflate, before it opens anything; 0 restores CQ_FILE_DEFAULT_MAX_INFLATED.
 */
void cq_file_set_max_inflated(uint64_t max_inflated);

/** Blocks of a file kept in memory: plugins read the same few bytes many times. A block is
 * a quarter of a page: an unwinder reads a few words of each thread's stack, and copying
 * whole pages out of the kernel was a twentieth of `coreq info` on 65 threads. */
#define CQ_FILE_CACHE_PAGES 64
#define CQ_FILE_PAGE 1024
/** Of those, the slots a page read for the first time goes to (cq_file.cache_tag). */
#define CQ_FILE_CACHE_NEW 8

struct cq_file {
	char *path;        /**< path as given by the user */
	int fd;            /**< readable descriptor (the temporary file if inflated); -1 for
	                    *   contents held in memory (cq_file_of_memory) */
	uint8_t *mem;      /**< the contents when they are held in memory (owned), else NULL */
	uint64_t size;     /**< size of the (inflated) contents */
	bool compressed;   /**< the file on disk was compressed (decompress.h) or a report */
	/** The file on disk was an apport report: its fields (the contents are its core), or
	 * NULL. */
	struct cq_apport *apport;
	uint64_t dev, ino; /**< the file on disk (st_dev, st_ino): one file under many names */
	/** Small-read cache (allocated on first use): page number + 1 per slot, 0 = empty.
	 * A page read for the first time takes one of the first CQ_FILE_CACHE_NEW slots (in
	 * turn); one read again after it left them (its number is in cache_gone) takes one of
	 * the others. A walk over many pages, each read a few times (one stack page per
	 * thread), so reuses a few slots' memory instead of touching the whole cache (a page
	 * fault per fresh page), and pages read over and over still stay. */
	uint64_t cache_tag[CQ_FILE_CACHE_PAGES];
	uint8_t *cache;
	unsigned cache_next;  /**< the next of the first slots to take */
	unsigned kept_next;   /**< the next of the other slots to take */
	/** Pages (number + 1) that left the first slots lately, 0 = none. */
	uint64_t cache_gone[CQ_FILE_CACHE_PAGES];
	unsigned gone_next;
};

/**
 * Open @p path read-only, refusing anything but a regular file, into *@p fd_ret. A path an
 * input names may be a FIFO (open would block forever) or a device (opening one can act):
 * the file is first opened with O_PATH, which opens nothing, checked with fstat, and only
 * then opened for reading through that descriptor, so what is read is what was checked.
 * Errors name @p what and @p path ("type donor /x: not a regular file (a FIFO)").
 */
struct cq_error *cq_open_regular(const char *path, const char *what, int *fd_ret);

/**
 * Open @p path for reading; inflate it if compressed, or take the core out of an apport
 * report, refusing more than @p max_inflated bytes of output (0:
 * CQ_FILE_DEFAULT_MAX_INFLATED).
 */
struct cq_error *cq_file_open(const char *path, uint64_t max_inflated, struct cq_file **ret);

/**
 * A file whose contents coreq holds in memory (the vDSO, read out of the core): @p buf
 * (malloc'd, @p size bytes) is the file's from now on (freed on error too); @p name is its
 * path in messages. It has no descriptor: reads copy from @p buf. Creating an anonymous
 * file for it instead (memfd, write, map) cost more than the rest of the vDSO's set-up.
 */
struct cq_error *cq_file_of_memory(uint8_t *buf, size_t size, const char *name, struct cq_file **ret);

/** Close a file; NULL is allowed. */
void cq_file_close(struct cq_file *f);

/**
 * Read exactly @p len bytes at @p offset. Reading past the end fails with
 * CQ_ERR_MALFORMED naming @p what (e.g. "note segment") and the offsets.
 */
struct cq_error *cq_file_read(struct cq_file *f, void *buf, size_t len, uint64_t offset,
			      const char *what);

#endif
