/* SPDX-License-Identifier: MIT */
/* The struct decoder and integer loads in all four class x byte-order combinations. */
#include <stdlib.h>

#include "check.h"
#include "base/decode.h"

#define SAMPLE_FIELDS(X, T)                                                               \
	X(T, U8, a, 1) X(T, U16, b, 1) X(T, S32, c, 1) X(T, PTR, p, 1) X(T, U64, d, 1)       \
	X(T, LONG, l, 1) X(T, BYTES, name, 5) X(T, ULONG, u, 1)
CQ_DEFINE_STRUCT(sample, SAMPLE_FIELDS);

/* Expected target offsets, worked out by hand from each ABI:
 *   a u8 | b u16 | c s32 | p ptr | d u64 | l long | name[5] | u ulong */
struct layout {
	const char *target;
	size_t off[8];
	size_t size;
};
static const struct layout layouts[] = {
	{"x86_64", {0, 2, 4, 8, 16, 24, 32, 40}, 48},
	{"s390x", {0, 2, 4, 8, 16, 24, 32, 40}, 48},
	{"i386", {0, 2, 4, 8, 12, 20, 24, 32}, 36},  /* u64 aligned to 4 */
	{"ppc32", {0, 2, 4, 8, 16, 24, 28, 36}, 40}, /* u64 aligned to 8 */
};

static void test_layout(const struct layout *lay)
{
	const struct cq_target *t = cq_target_by_name(lay->target);
	CHECK(t != NULL);
	if (!t)
		return;
	for (size_t i = 0; i < 8; i++)
		CHECK_U64(cq_struct_offset(t, &sample_desc, i), lay->off[i]);
	CHECK_U64(cq_struct_size(t, &sample_desc), lay->size);

	uint8_t buf[64] = {0};
	unsigned ps = cq_target_ptr_size(t);
	cq_store_uint(t, buf + lay->off[0], 1, 0xa5);
	cq_store_uint(t, buf + lay->off[1], 2, 0xbeef);
	cq_store_uint(t, buf + lay->off[2], 4, (uint32_t)-123456);
	cq_store_uint(t, buf + lay->off[3], ps, ps == 8 ? 0x7f0011223344ULL : 0xf7001122);
	cq_store_uint(t, buf + lay->off[4], 8, 0x0123456789abcdefULL);
	cq_store_uint(t, buf + lay->off[5], ps, (uint64_t)-2);
	memcpy(buf + lay->off[6], "abcd", 5);
	cq_store_uint(t, buf + lay->off[7], ps, 0x80000001);

	struct sample s;
	struct cq_error *err = cq_struct_decode(t, &sample_desc, buf, lay->size, &s);
	CHECK(err == NULL);
	CHECK_U64(s.a, 0xa5);
	CHECK_U64(s.b, 0xbeef);
	CHECK(s.c == -123456);
	CHECK_U64(s.p, ps == 8 ? 0x7f0011223344ULL : 0xf7001122);
	CHECK_U64(s.d, 0x0123456789abcdefULL);
	CHECK(s.l == -2); /* sign-extended from the target's long */
	CHECK_STR(s.name, "abcd");
	CHECK_U64(s.u, 0x80000001); /* unsigned: not sign-extended */

	/* A buffer one byte short is refused with a message naming the struct and target. */
	err = cq_struct_decode(t, &sample_desc, buf, lay->size - 1, &s);
	CHECK(err && err->code == CQ_ERR_MALFORMED && strstr(err->message, "sample") &&
	      strstr(err->message, t->name));
	cq_error_destroy(err);
}

static void test_loads(void)
{
	const struct cq_target *le = cq_target_by_name("x86_64"), *be = cq_target_by_name("s390x");
	const uint8_t b[8] = {1, 2, 3, 4, 5, 6, 7, 0x88};
	CHECK_U64(cq_load_uint(le, b, 2), 0x0201);
	CHECK_U64(cq_load_uint(be, b, 2), 0x0102);
	CHECK_U64(cq_load_uint(le, b, 8), 0x8807060504030201ULL);
	CHECK_U64(cq_load_uint(be, b, 8), 0x0102030405060788ULL);
	CHECK(cq_load_sint(le, b + 7, 1) == -120);
	CHECK(cq_load_sint(be, b + 6, 2) == 0x0788);
	uint8_t s[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	cq_bswap_units(s, 4, 2);
	CHECK(memcmp(s, (uint8_t[]){4, 3, 2, 1, 8, 7, 6, 5}, 8) == 0);
	cq_bswap_units(s, 8, 1);
	CHECK(memcmp(s, (uint8_t[]){5, 6, 7, 8, 1, 2, 3, 4}, 8) == 0);
	cq_bswap_units(s, 1, 8); /* no-op */
	CHECK(s[0] == 5);
}

static void test_cursor(void)
{
	const struct cq_target *t = cq_target_by_name("ppc32");
	const uint8_t b[] = {0, 0, 0, 2, 'h', 'i', 0, 'x'};
	struct cq_cursor c;
	cq_cursor_init(&c, t, b, sizeof(b));
	CHECK_U64(cq_cursor_word(&c), 2);
	CHECK_STR(cq_cursor_string(&c), "hi");
	CHECK(!c.overflow);
	CHECK(cq_cursor_string(&c) == NULL); /* "x" is not terminated */
	CHECK(c.overflow);
	CHECK_U64(cq_cursor_uint(&c, 4), 0);
}

int main(void)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		test_layout(&layouts[i]);
	test_loads();
	test_cursor();
	return check_report("test_decode");
}
