/* SPDX-License-Identifier: MIT */
/**
 * @file host.h
 * OMPD host: drives an OpenMP debugging plugin (e.g. LLVM's libompd.so) against a core
 * and returns what it reports about the OpenMP runtime as a JSON document
 * ("coreq-ompd/1", doc/json-schema.md).
 *
 * The plugin runs in a child process (plugin/isolate.h): libompd keeps process-global
 * state and has crashing bugs, so a crash, hang or exit() of the plugin ends only the
 * child; everything reported before it is kept and the failing call is named.
 * Every callback answers for the *target*: type sizes from the target table, byte order
 * conversion by unit size, symbols in dynamic-linker order, TLS through corelib.
 */
#ifndef COREQ_OMPD_HOST_H
#define COREQ_OMPD_HOST_H

#include <jansson.h>
#include <stdbool.h>

#include "corelib/core.h"

struct cq_ompd_options {
	/** Plugin to load; overrides discovery and counts as the user's consent. */
	const char *plugin;
	/** Extra trusted directories (colon-separated) for plugins the core names. */
	const char *trusted_dirs;
	/** Load a plugin the core names even outside the trusted directories. */
	bool allow_untrusted;
	/** Time limit for the whole plugin run, in ms (0: CQ_OMPD_DEFAULT_TIMEOUT_MS). */
	unsigned timeout_ms;
};

#define CQ_OMPD_DEFAULT_TIMEOUT_MS 20000

/**
 * Report on the OpenMP runtime in @p core. On success *ret is a "coreq-ompd/1" document;
 * it may still describe a failed or partial plugin run (see its "plugin" and "problems").
 * Errors are returned only when no report can be made at all (no plugin found, refused).
 */
struct cq_error *cq_ompd_report(struct cq_core *core, const struct cq_ompd_options *opts,
				json_t **ret);

#endif
