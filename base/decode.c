/* SPDX-License-Identifier: MIT */
#include "decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t cq_load_uint(const struct cq_target *t, const void *p, unsigned size)
{
	/* the common sizes as one load, swapped when the target's order is not the host's:
	 * every register, note header and pointer read from a core comes through here */
	bool swap = t->little_endian != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__);
	switch (size) {
	case 8: {
		uint64_t v;
		memcpy(&v, p, 8);
		return swap ? __builtin_bswap64(v) : v;
	}
	case 4: {
		uint32_t v;
		memcpy(&v, p, 4);
		return swap ? __builtin_bswap32(v) : v;
	}
	case 2: {
		uint16_t v;
		memcpy(&v, p, 2);
		return swap ? __builtin_bswap16(v) : v;
	}
	case 1:
		return *(const uint8_t *)p;
	default:
		break;
	}
	const uint8_t *b = p;
	uint64_t v = 0;
	if (t->little_endian)
		for (unsigned i = size; i-- > 0;)
			v = (v << 8) | b[i];
	else
		for (unsigned i = 0; i < size; i++)
			v = (v << 8) | b[i];
	return v;
}

int64_t cq_load_sint(const struct cq_target *t, const void *p, unsigned size)
{
	uint64_t v = cq_load_uint(t, p, size);
	if (size < 8 && (v >> (size * 8 - 1)) & 1)
		v |= ~UINT64_C(0) << (size * 8);
	return (int64_t)v;
}

void cq_store_uint(const struct cq_target *t, void *p, unsigned size, uint64_t v)
{
	uint8_t *b = p;
	for (unsigned i = 0; i < size; i++) {
		unsigned at = t->little_endian ? i : size - 1 - i;
		b[at] = (uint8_t)(v >> (8 * i));
	}
}

void cq_bswap_units(void *p, size_t unit, size_t n)
{
	uint8_t *b = p;
	if (unit < 2)
		return;
	for (size_t k = 0; k < n; k++, b += unit)
		for (size_t i = 0, j = unit - 1; i < j; i++, j--) {
			uint8_t tmp = b[i];
			b[i] = b[j];
			b[j] = tmp;
		}
}

uint64_t cq_cursor_uint(struct cq_cursor *c, unsigned size)
{
	if (cq_cursor_left(c) < size) {
		c->overflow = 1;
		c->p = c->end;
		return 0;
	}
	uint64_t v = cq_load_uint(c->target, c->p, size);
	c->p += size;
	return v;
}

uint64_t cq_cursor_word(struct cq_cursor *c)
{
	return cq_cursor_uint(c, cq_target_ptr_size(c->target));
}

void cq_cursor_skip(struct cq_cursor *c, size_t n)
{
	if (cq_cursor_left(c) < n) {
		c->overflow = 1;
		c->p = c->end;
		return;
	}
	c->p += n;
}

const char *cq_cursor_string(struct cq_cursor *c)
{
	const uint8_t *nul = memchr(c->p, 0, cq_cursor_left(c));
	if (!nul) {
		c->overflow = 1;
		c->p = c->end;
		return NULL;
	}
	const char *s = (const char *)c->p;
	c->p = nul + 1;
	return s;
}

/* Target size and alignment of one member kind. */
static void field_layout(const struct cq_target *t, const struct cq_field *f, size_t *size,
			 size_t *align)
{
	enum cq_ctype ct;
	switch (f->kind) {
	case CQ_F_U8: *size = *align = 1; return;
	/* the target aligns them: m68k to 2, its prstatus head too */
	case CQ_F_S16:
	case CQ_F_U16: *size = 2; *align = t->ctypes[CQ_CTYPE_SHORT].align; return;
	case CQ_F_S32:
	case CQ_F_U32: *size = 4; *align = t->ctypes[CQ_CTYPE_INT].align; return;
	case CQ_F_U64: ct = CQ_CTYPE_LONG_LONG; break;
	case CQ_F_LONG:
	case CQ_F_ULONG: ct = CQ_CTYPE_LONG; break;
	case CQ_F_PTR: ct = CQ_CTYPE_POINTER; break;
	case CQ_F_UID: *size = *align = t->prpsinfo_uid_size; return;
	default: *size = f->count; *align = 1; return;
	}
	*size = t->ctypes[ct].size;
	*align = t->ctypes[ct].align;
}

static size_t align_up(size_t v, size_t a)
{
	return (v + a - 1) / a * a;
}

/* Walk the members, returning the offset of member @p stop (or the unpadded end). */
static size_t layout(const struct cq_target *t, const struct cq_struct_desc *d, size_t stop,
		     size_t *max_align)
{
	size_t off = 0, size, align;
	*max_align = 1;
	for (size_t i = 0; i < d->nfields; i++) {
		field_layout(t, &d->fields[i], &size, &align);
		off = align_up(off, align);
		if (align > *max_align)
			*max_align = align;
		if (i == stop)
			return off;
		off += size;
	}
	return off;
}

size_t cq_struct_size(const struct cq_target *t, const struct cq_struct_desc *d)
{
	size_t max_align;
	size_t end = layout(t, d, SIZE_MAX, &max_align);
	return align_up(end, max_align);
}

size_t cq_struct_offset(const struct cq_target *t, const struct cq_struct_desc *d, size_t index)
{
	size_t max_align;
	return layout(t, d, index, &max_align);
}

struct cq_error *cq_struct_decode(const struct cq_target *t, const struct cq_struct_desc *d,
				  const void *buf, size_t len, void *ret)
{
	size_t need = cq_struct_size(t, d);
	if (len < need)
		return cq_error_create(CQ_ERR_MALFORMED,
				       "%s: %zu bytes, the %s target layout needs %zu", d->name,
				       len, t->name, need);
	const uint8_t *b = buf;
	size_t off = 0, size, align;
	for (size_t i = 0; i < d->nfields; i++) {
		const struct cq_field *f = &d->fields[i];
		field_layout(t, f, &size, &align);
		off = align_up(off, align);
		void *dst = (char *)ret + f->host_offset;
		switch (f->kind) {
		case CQ_F_BYTES:
			memcpy(dst, b + off, size);
			break;
		case CQ_F_S16:
		case CQ_F_S32:
		case CQ_F_LONG: {
			int64_t v = cq_load_sint(t, b + off, (unsigned)size);
			memcpy(dst, &v, sizeof(v));
			break;
		}
		default: {
			uint64_t v = cq_load_uint(t, b + off, (unsigned)size);
			memcpy(dst, &v, sizeof(v));
			break;
		}
		}
		off += size;
	}
	return NULL;
}

char *cq_hex_string(const uint8_t *p, size_t n)
{
	char *s = malloc(2 * n + 1);
	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++)
		sprintf(s + 2 * i, "%02x", p[i]);
	s[2 * n] = 0;
	return s;
}
