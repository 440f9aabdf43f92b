/* SPDX-License-Identifier: MIT */
/**
 * @file bytebuf.h
 * A growing byte buffer for what coreq writes in a target's layout (a core's notes and
 * headers, a bundle's entries): integers in the target's byte order and size, zero padding
 * to an alignment. A failed allocation is remembered (@c failed) and every later write is
 * dropped, so a writer checks once at the end.
 */
#ifndef COREQ_BASE_BYTEBUF_H
#define COREQ_BASE_BYTEBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../targets/target.h"

struct cq_buf {
	uint8_t *p;
	size_t len, cap;
	bool failed;
};

/** @p n zero bytes appended: where they are, NULL once an allocation failed. */
uint8_t *cq_buf_grow(struct cq_buf *b, size_t n);

/** @p n bytes of @p data appended (NULL: zeros). */
void cq_buf_put(struct cq_buf *b, const void *data, size_t n);

/** An unsigned integer of @p size bytes in @p t's byte order. */
void cq_buf_uint(struct cq_buf *b, const struct cq_target *t, unsigned size, uint64_t v);

/** Zeros up to a multiple of @p a. */
void cq_buf_align(struct cq_buf *b, size_t a);

#endif
