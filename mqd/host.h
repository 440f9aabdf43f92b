/* SPDX-License-Identifier: MIT */
/**
 * @file host.h
 * MQD host: drives an MPI library's message-queue DLL (MQD 1.0, e.g. Open MPI's
 * libompi_dbg_msgq.so) against the core of one rank and returns its communicators and
 * send / receive / unexpected queues as a JSON document ("coreq-mqd/1",
 * doc/json-schema.md).
 *
 * The DLL runs in a child process (plugin/isolate.h) with a time limit; a crash, hang or
 * exit() of it loses nothing already reported, and the call it died in is named and
 * skipped in a new run. Every callback answers for the target (sizes, byte order, symbols
 * in linker order, types from DWARF and type donors: corelib/types.h).
 */
#ifndef COREQ_MQD_HOST_H
#define COREQ_MQD_HOST_H

#include <jansson.h>
#include <stdbool.h>

#include "corelib/core.h"

struct cq_mqd_options {
	/** DLL to load; overrides MPIR_dll_name and counts as the user's consent. */
	const char *dll;
	/** Extra trusted directories (colon-separated) for a DLL the core names. */
	const char *trusted_dirs;
	/** Load a DLL the core names even outside the trusted directories. */
	bool allow_untrusted;
	/** Use the DLL the core names even where coreq has its own (Open MPI 4.1: coreq's
	 * shows the unexpected queue and serves any host; see plugins/ompi41). */
	bool vendor;
	/** Time limit of one DLL run, in ms (0: CQ_MQD_DEFAULT_TIMEOUT_MS). */
	unsigned timeout_ms;
};

#define CQ_MQD_DEFAULT_TIMEOUT_MS 20000

/**
 * Whether the types the DLL asks for can be found for @p core without a search that cannot
 * find them: a type donor given (--types) or bundled, one installed for the core's libmpi
 * (donors.h: then added as the core's type source, as cq_mqd_report() adds it), or DWARF of
 * the MPI library's own image (the one holding MPIR_dll_name: its file's, or a debug file
 * found for it). The library's structs are defined nowhere else: the program's DWARF and
 * the system libraries' declare them at most, so where this is false the search of every
 * image's DWARF (a distribution's libc debug file: megabytes to inflate and index, about
 * 150 ms per rank, twice: the DLL's child and the communicators' ids) finds no type, and
 * the DLL reads no queue. False with why in @p why. (The C runtime's debug files are
 * left out of the search for the MPI library's types in any case: callbacks.h.)
 */
bool cq_mqd_types_available(struct cq_core *core, char *why, size_t why_size);

/**
 * Report on the MPI message queues of the rank in @p core. On success *ret is a
 * "coreq-mqd/1" document, which may describe a failed or partial DLL run (see "dll" and
 * "problems"). Errors are returned only when no report can be made at all (no DLL found,
 * refused).
 */
struct cq_error *cq_mqd_report(struct cq_core *core, const struct cq_mqd_options *opts,
			       json_t **ret);

#endif
