/* SPDX-License-Identifier: MIT */
/**
 * @file decompress.h
 * Compressed inputs as users have them: gzip and zlib (cores copied around, coreq's
 * fixtures), zstd (systemd-coredump on Debian bookworm), xz and lz4 frames (systemd
 * elsewhere). Recognised by their magic bytes, never by a file name, and expanded by the
 * format's own library (zlib, libzstd, liblzma, liblz4) into a file descriptor, under one
 * bound on the output (a compression bomb is refused, not followed) and with holes for
 * runs of zeros (sparse cores stay sparse). Concatenated streams (members, frames) are
 * read to the end; trailing zero padding is accepted.
 */
#ifndef COREQ_DECOMPRESS_H
#define COREQ_DECOMPRESS_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

enum cq_compression {
	CQ_COMPRESSION_NONE,
	CQ_COMPRESSION_GZIP,
	CQ_COMPRESSION_ZLIB, /**< weak evidence (two bytes): a stream that yields nothing is taken as raw */
	CQ_COMPRESSION_ZSTD,
	CQ_COMPRESSION_XZ,
	CQ_COMPRESSION_LZ4,
};

/** Bytes of magic cq_compression_of() looks at. */
#define CQ_COMPRESSION_MAGIC 6

/** The format whose magic starts @p m (@p n bytes of the file's start). */
enum cq_compression cq_compression_of(const unsigned char *m, size_t n);

/** "gzip", "zlib", "zstd", "xz", "lz4"; "none". */
const char *cq_compression_name(enum cq_compression c);

/**
 * Expand all of @p in (read from its current offset) in format @p c into @p out (written
 * from its current offset, which must be a fresh file: zero runs are left as holes), at
 * most @p max bytes; *@p size_ret: the bytes of output, also on failure. Errors:
 * CQ_ERR_COMPRESSED naming @p path, the format and how many bytes came out before the
 * stream was found truncated or corrupt, or over @p max; CQ_ERR_IO for reads and writes.
 */
struct cq_error *cq_decompress(enum cq_compression c, int in, int out, const char *path, uint64_t max,
			       uint64_t *size_ret);

#endif
