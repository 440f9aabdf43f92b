/* SPDX-License-Identifier: MIT */
/* A growing byte buffer in a target's layout (bytebuf.h). */
#include "bytebuf.h"

#include <stdlib.h>
#include <string.h>

#include "decode.h"

uint8_t *cq_buf_grow(struct cq_buf *b, size_t n)
{
	if (b->failed)
		return NULL;
	if (n > SIZE_MAX - b->len) {
		b->failed = true;
		return NULL;
	}
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n)
			cap = cap > SIZE_MAX / 2 ? b->len + n : cap * 2;
		uint8_t *p = realloc(b->p, cap);
		if (!p) {
			b->failed = true;
			return NULL;
		}
		b->p = p;
		b->cap = cap;
	}
	uint8_t *at = b->p + b->len;
	memset(at, 0, n);
	b->len += n;
	return at;
}

void cq_buf_put(struct cq_buf *b, const void *data, size_t n)
{
	uint8_t *at = cq_buf_grow(b, n);
	if (at && data && n)
		memcpy(at, data, n);
}

void cq_buf_uint(struct cq_buf *b, const struct cq_target *t, unsigned size, uint64_t v)
{
	uint8_t *at = cq_buf_grow(b, size);
	if (at)
		cq_store_uint(t, at, size, v);
}

void cq_buf_align(struct cq_buf *b, size_t a)
{
	if (b->len % a)
		cq_buf_grow(b, a - b->len % a);
}
