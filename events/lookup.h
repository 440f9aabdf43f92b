/* SPDX-License-Identifier: MIT */
/* What the events of a recording name, looked up once per address (events.c's helper): the
 * symbol of a code address, the string a record points at. A ring repeats the same few
 * call sites and strings hundreds of thousands of times; each is symbolized or read once,
 * and no event allocates. */
#ifndef COREQ_EVENTS_LOOKUP_H
#define COREQ_EVENTS_LOOKUP_H

#include <stdbool.h>
#include <stdint.h>

#include "corelib/core.h"

/* Kept at most: entries, and bytes of the strings kept (beyond: looked up each time). */
#define CQ_LOOKUP_MAX_ENTRIES 65536u
#define CQ_LOOKUP_MAX_BYTES ((size_t)16 << 20)

/* Strings a record points at: at most this long (terminator included). */
#define CQ_LOOKUP_MAX_STRING 1024u

enum cq_lookup_what {
	CQ_LOOKUP_SYMBOL,      /* cq_core_symbol_name(addr, false) */
	CQ_LOOKUP_SYMBOL_IMG,  /* cq_core_symbol_name(addr, true): "image+0x..." without a symbol */
	CQ_LOOKUP_STRING,      /* cq_core_read_string(addr, CQ_LOOKUP_MAX_STRING), NULL if it fails */
	CQ_LOOKUP_KINDS
};

struct cq_lookup_entry {
	uint64_t key;  /* address + 1: 0 is an empty entry */
	char *value;   /* NULL: none */
};

struct cq_lookup_table {
	struct cq_lookup_entry *e;
	size_t cap, n;  /* cap: a power of two, or 0 */
};

struct cq_lookup {
	struct cq_core *core;
	struct cq_lookup_table t[CQ_LOOKUP_KINDS];
	size_t bytes;        /* of the strings kept */
	char *uncached[16];  /* looked up past the bounds: freed by cq__lookup_next() */
	unsigned nuncached;
	uint64_t reads;      /* lookups that went to the core (CQ_LOOKUP_STRING) */
	uint64_t read_bytes; /* their strings' bytes */
};

void cq__lookup_init(struct cq_lookup *lk, struct cq_core *core);
void cq__lookup_deinit(struct cq_lookup *lk);

/* What @p what of @p addr is, or NULL; valid until cq__lookup_next() (which a new event
 * calls) or cq__lookup_deinit(). */
const char *cq__lookup(struct cq_lookup *lk, enum cq_lookup_what what, uint64_t addr);

/* A new event: what the last one looked up past the bounds is freed. */
void cq__lookup_next(struct cq_lookup *lk);

#endif
