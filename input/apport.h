/* SPDX-License-Identifier: MIT */
/**
 * @file apport.h
 * Ubuntu apport crash reports (/var/crash/NAME.crash) as core inputs.
 *
 * A report is RFC822-like text: `Key: value` lines, a multi-line value continued on lines
 * that start with one space, and binary fields written as `Key: base64` followed by
 * indented base64 lines. apport's writer (problem_report.py) encodes each chunk of one
 * gzip member on its own line (the header naming the field, then the deflate output as it
 * comes, then the trailer with CRC32 and size), so every line is decoded by itself and
 * the bytes are concatenated. Older apport wrote a bare zlib stream; a core that
 * systemd-coredump had stored can be attached as its zstd file: both are accepted, as
 * the magic of the decoded bytes says (decompress.h).
 *
 * A report is recognised by its content, never by its name: it starts with
 * `ProblemType:` (apport writes that field first), or its first line is a `Key: value`
 * line and it has a CoreDump field. The fields that say where the core came from are
 * kept (bounded); the others are skipped without being held in memory.
 */
#ifndef COREQ_APPORT_H
#define COREQ_APPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/** Longest value kept of a field; a longer one is cut there and marked. */
#define CQ_APPORT_FIELD_MAX 4096

/** One kept field's value: NULL if the report has no such field. */
struct cq_apport_field {
	char *value;
	bool cut; /**< longer than CQ_APPORT_FIELD_MAX: only its start is kept */
};

/** The fields of a report that describe its core. */
struct cq_apport {
	struct cq_apport_field problem_type, executable_path, executable_timestamp, proc_cmdline,
		signal, package;
	const char *compression; /**< format of the CoreDump field: "gzip", "zlib", "zstd"... */
};

/** Bytes of a file's start cq_apport_maybe() looks at. */
#define CQ_APPORT_MAGIC 64

/** Whether @p m (@p n bytes of a file's start) may be an apport report: a first line of
 * the form `Key:` (cq_apport_extract() decides). */
bool cq_apport_maybe(const unsigned char *m, size_t n);

/**
 * Read the report @p in (from its current offset) and expand its CoreDump field into
 * @p out (a fresh file: zero runs become holes), at most @p max bytes; @p scratch is a
 * fresh temporary file for the decoded (still compressed) bytes. *@p size_ret: the bytes
 * of output. On success *@p ret is the report's fields (cq_apport_destroy()).
 *
 * *@p not_report is set (and NULL returned, *@p ret NULL) when the file does not start
 * with `ProblemType:` and turns out to be no report (a line not `Key: value`, or no
 * CoreDump field): it is then read as what it is. Errors name @p path: CQ_ERR_FORMAT for
 * a report whose CoreDump field is missing or not base64 and for lines that are not
 * `Key: value`; CQ_ERR_COMPRESSED for bad base64 and what cq_decompress() refuses
 * (truncated, corrupt, CRC mismatch, over @p max); CQ_ERR_IO.
 */
struct cq_error *cq_apport_extract(int in, int scratch, int out, const char *path, uint64_t max,
				   uint64_t *size_ret, bool *not_report, struct cq_apport **ret);

/** Release; NULL allowed. */
void cq_apport_destroy(struct cq_apport *a);

#endif
