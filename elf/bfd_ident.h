/* SPDX-License-Identifier: MIT */
/**
 * @file bfd_ident.h
 * A core file identified by the multi-architecture libbfd, as a second opinion the CLI
 * asks for (`info --bfd`): libbfd's target name and architecture next to coreq's, and
 * every disagreement as a problem (it is how a host-only libbfd silently misreads foreign
 * cores). Not part of the core model: loading libbfd (bfd_lib.h, on first use) and its
 * identification pass cost more than opening a big core.
 */
#ifndef COREQ_ELF_BFD_IDENT_H
#define COREQ_ELF_BFD_IDENT_H

#include <stddef.h>

#include "base/error.h"

/** What coreq read of the core, for libbfd's answer to be checked against. */
struct cq_bfd_query {
	const char *path;        /**< the core, as named in messages */
	int fd;                  /**< open on it (libbfd gets a descriptor of its own) */
	const char *target_name; /**< coreq's architecture name ("s390x") */
	const char *bfd_arch;    /**< the prefix libbfd's printable name must have */
	size_t nthreads;         /**< threads coreq read from the notes */
};

/** libbfd's answer: names NULL when it did not recognize the core; problems (one-line
 * reasons, in order: libbfd not loadable, not recognized, another architecture, another
 * thread count, what libbfd itself printed) for the caller to report. */
struct cq_bfd_ident {
	char *target;
	char *arch;
	char **problems;
	size_t nproblems;
};

/** Identify @p q's core into *@p out (always initialized; cq_bfd_ident_deinit). An error
 * only when the core cannot be opened again or memory runs out; libbfd's own failures
 * are problems. libbfd's stderr output is captured, never shown. */
struct cq_error *cq_bfd_identify(const struct cq_bfd_query *q, struct cq_bfd_ident *out);

void cq_bfd_ident_deinit(struct cq_bfd_ident *id);

#endif
