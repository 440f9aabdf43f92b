/* SPDX-License-Identifier: MIT */
/**
 * @file error.h
 * Errors as returned objects.
 *
 * Every fallible corelib function returns `struct cq_error *`: NULL means success,
 * anything else describes one failure and must be released with cq_error_destroy().
 * Results go to trailing out-parameters named `ret`. Out of memory is reported through a
 * static singleton (cq_error_nomem) so that reporting it never allocates.
 */
#ifndef COREQ_ERROR_H
#define COREQ_ERROR_H

#include <stdbool.h>
#include <stdint.h>

/** What went wrong; each code maps to one exit status of the `coreq` tool. */
enum cq_error_code {
	CQ_ERR_NOMEM = 1,   /**< allocation failed */
	CQ_ERR_IO,          /**< open/read of a file failed (errno and path set) */
	CQ_ERR_FORMAT,      /**< input is not what was expected (not ELF, not a core) */
	CQ_ERR_UNSUPPORTED, /**< well-formed but unsupported (unknown e_machine) */
	CQ_ERR_MALFORMED,   /**< structurally broken core (truncated, bad sizes) */
	CQ_ERR_COMPRESSED,  /**< corrupt compressed stream or expansion over the limit */
	CQ_ERR_FAULT,       /**< target memory not available at an address */
	CQ_ERR_NOT_FOUND,   /**< a symbol, thread or item does not exist */
	CQ_ERR_MISSING,     /**< a piece needed for the answer is missing (file, tp) */
	CQ_ERR_USAGE,       /**< bad request from the caller */
	CQ_ERR_INTERNAL,    /**< a library we use failed unexpectedly */
	CQ_ERR_PLUGIN,      /**< a debugger plugin is missing, untrusted or unusable */
	CQ_ERR_PROCESS,     /**< a live process cannot be traced, stopped or held (live/) */
	CQ_ERR_JOB,         /**< a launcher's job: none such, ended, no rank, a node that failed (launch/) */
};

struct cq_error {
	enum cq_error_code code;
	/** One line, without trailing newline; names the file/address involved. */
	char *message;
	/** Set for CQ_ERR_FAULT: the first target address that could not be read. */
	uint64_t address;
	bool has_address;
	/** errno for CQ_ERR_IO, else 0. */
	int errnum;
};

/** Singleton returned on allocation failure; cq_error_destroy() ignores it. */
extern struct cq_error cq_error_nomem;

/** Create an error with a printf-style message. Never returns NULL. */
struct cq_error *cq_error_create(enum cq_error_code code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/** Create a CQ_ERR_FAULT error for target address @p address. */
struct cq_error *cq_error_fault(uint64_t address, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/** Create a CQ_ERR_IO error; the message gets ": strerror(errnum)" appended. */
struct cq_error *cq_error_errno(int errnum, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/**
 * Prefix the message of @p err with more context ("while reading link_map: ...").
 * Returns @p err (or cq_error_nomem).
 */
struct cq_error *cq_error_wrap(struct cq_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/** Release an error; NULL and cq_error_nomem are allowed. */
void cq_error_destroy(struct cq_error *err);

/** Short stable name of a code, e.g. "malformed" (used in JSON output). */
const char *cq_error_code_name(enum cq_error_code code);

#endif
