/* SPDX-License-Identifier: MIT */
/**
 * @file decode.h
 * Target-independent decoding of integers, pointers and C structs.
 *
 * Everything that reads bytes of the target goes through here: the byte order and the
 * widths of long/pointer/uid come from the target table, never from the host. Structs are
 * described once by an X-macro of their scalar members; the target-side offsets (with the
 * target's alignment rules) are derived from that description, so one description serves
 * 32/64-bit x little/big-endian.
 */
#ifndef COREQ_DECODE_H
#define COREQ_DECODE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../targets/target.h"
#include "base/error.h"

/** Load an unsigned integer of @p size (1, 2, 4 or 8) bytes in the target's order. */
uint64_t cq_load_uint(const struct cq_target *t, const void *p, unsigned size);

/** Load a signed integer of @p size bytes, sign-extended to 64 bits. */
int64_t cq_load_sint(const struct cq_target *t, const void *p, unsigned size);

/** Load a target pointer (or unsigned long: same width on every Linux ABI here). */
static inline uint64_t cq_load_ptr(const struct cq_target *t, const void *p)
{
	return cq_load_uint(t, p, cq_target_ptr_size(t));
}

/** Store @p v as @p size bytes in the target's order (used by tests and synthetic cores). */
void cq_store_uint(const struct cq_target *t, void *p, unsigned size, uint64_t v);

/** Lowercase hex string of @p n bytes (build-ids); NULL on allocation failure; caller frees. */
char *cq_hex_string(const uint8_t *p, size_t n);

/** Reverse each @p unit-byte unit of @p n units in place (unit 1, 2, 4, 8, 16). */
void cq_bswap_units(void *p, size_t unit, size_t n);

/**
 * Bounds-checked reader over a byte range, in the target's byte order. A read past the end
 * returns 0 and sets @c overflow once; callers check it after a group of reads.
 */
struct cq_cursor {
	const uint8_t *p, *end;
	const struct cq_target *target;
	int overflow;
};

static inline void cq_cursor_init(struct cq_cursor *c, const struct cq_target *t,
				  const void *buf, size_t len)
{
	c->p = buf;
	c->end = (const uint8_t *)buf + len;
	c->target = t;
	c->overflow = 0;
}

static inline size_t cq_cursor_left(const struct cq_cursor *c)
{
	return (size_t)(c->end - c->p);
}

/** Read an unsigned integer of @p size bytes. */
uint64_t cq_cursor_uint(struct cq_cursor *c, unsigned size);
/** Read a target word (unsigned long). */
uint64_t cq_cursor_word(struct cq_cursor *c);
/** Skip @p n bytes. */
void cq_cursor_skip(struct cq_cursor *c, size_t n);
/** Return a pointer to the next NUL-terminated string and skip it; NULL on overflow. */
const char *cq_cursor_string(struct cq_cursor *c);

/* ---- struct decoding ------------------------------------------------------------------ */

/** Kinds of scalar members a described struct can have. */
enum cq_field_kind {
	CQ_F_U8,
	CQ_F_S16,
	CQ_F_U16,
	CQ_F_S32,
	CQ_F_U32,
	CQ_F_U64,
	CQ_F_LONG,  /**< target `long` */
	CQ_F_ULONG, /**< target `unsigned long` */
	CQ_F_PTR,   /**< target pointer */
	CQ_F_UID,   /**< kernel uid in prpsinfo: 2 or 4 bytes (target table) */
	CQ_F_BYTES, /**< char array of `count` bytes, copied as is */
};

struct cq_field {
	const char *name;
	uint8_t kind;
	uint16_t count;       /**< array length for CQ_F_BYTES, else 1 */
	uint16_t host_offset; /**< offset of the member in the host struct */
};

struct cq_struct_desc {
	const char *name;
	const struct cq_field *fields;
	size_t nfields;
};

/* Host member types: signed kinds decode to int64_t, others to uint64_t, bytes to char[]. */
#define CQ__DECL_U8(n, c) uint64_t n;
#define CQ__DECL_S16(n, c) int64_t n;
#define CQ__DECL_U16(n, c) uint64_t n;
#define CQ__DECL_S32(n, c) int64_t n;
#define CQ__DECL_U32(n, c) uint64_t n;
#define CQ__DECL_U64(n, c) uint64_t n;
#define CQ__DECL_LONG(n, c) int64_t n;
#define CQ__DECL_ULONG(n, c) uint64_t n;
#define CQ__DECL_PTR(n, c) uint64_t n;
#define CQ__DECL_UID(n, c) uint64_t n;
#define CQ__DECL_BYTES(n, c) char n[c];
#define CQ__DECL(tag, kind, n, c) CQ__DECL_##kind(n, c)

/**
 * Define `struct TAG` (host form) and `TAG##_desc` (its description) from an X-macro
 * FIELDS(X, T) that lists X(T, KIND, name, count) in target declaration order.
 */
#define CQ_DEFINE_STRUCT(tag, FIELDS)                                                        \
	struct tag {                                                                          \
		FIELDS(CQ__DECL, tag)                                                              \
	};                                                                                    \
	static const struct cq_field tag##_fields[] = { FIELDS(CQ__FIELD, tag) };                  \
	static const struct cq_struct_desc tag##_desc                                         \
		__attribute__((unused)) = { #tag, tag##_fields,                               \
					    sizeof(tag##_fields) / sizeof(tag##_fields[0]) }
#define CQ__FIELD(tag, kind, n, c) { #n, CQ_F_##kind, c, offsetof(struct tag, n) },

/** Size of the described struct on the target, tail padding included. */
size_t cq_struct_size(const struct cq_target *t, const struct cq_struct_desc *d);

/** Target offset of field @p index. */
size_t cq_struct_offset(const struct cq_target *t, const struct cq_struct_desc *d, size_t index);

/**
 * Decode @p len bytes at @p buf into the host struct @p ret. Fails with CQ_ERR_MALFORMED
 * naming the struct when @p len is smaller than the target size.
 */
struct cq_error *cq_struct_decode(const struct cq_target *t, const struct cq_struct_desc *d,
				  const void *buf, size_t len, void *ret);

#endif
