/* SPDX-License-Identifier: MIT */
/* OMPD conformance plugin: not an OpenMP runtime's plugin but a test of the host's
 * callbacks. ompd_process_initialize runs every callback against the known values of the
 * fixture program (tools/fixtures/src/fixprog.h) and reports each check as an ICV of scope
 * ompd_scope_address_space: name "conformance/<check>", value 1 (pass) or 0 (fail), string
 * a short detail. "conformance/summary" has the number of failures as its value.
 *
 * It knows nothing of the target: all sizes and byte orders come from the callbacks.
 * The executable's file name (for symbol_addr_lookup's file_name scoping) is taken from
 * $CQ_CONFORMANCE_EXE, else from the target's program_invocation_short_name, else
 * "fixprog". CQ_CONFORMANCE_HOSTILE=1 adds checks that a buggy host may not survive.
 * Entry points the host needs but this plugin has no answer for return
 * ompd_rc_unsupported or ompd_rc_unavailable (no thread is an OpenMP thread).
 *
 * Built with CQ_CONFORMANCE_TR (ompd_conformance_tr.c) it is a plugin of the OMPD TR 2.001
 * ABI instead (ompd/tr_abi.h): the same checks through the TR's callback table, minus what
 * the TR lacks (read_string, file_name scoping) and plus what only it has (thread ids in
 * target byte order, thread context -> address space context, signed counts). The TR has
 * no ICV enumeration, so that build reports its checks as display control variables
 * "conformance/<check>=<1|0> <detail>". */
#include <inttypes.h>
#include <omp-tools.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

/* tools/fixtures/src/fixprog.h, repeated: the plugin is built from this file alone. */
#define FX_NTHREADS 4
#define FX_U8_VAL 0xa5
#define FX_U16_VAL 0xbeef
#define FX_U32_VAL 0xdeadbeefU
#define FX_U64_VAL 0x0123456789abcdefULL
#define FX_I32_VAL (-123456)
#define FX_I64_VAL (-1234567890123LL)
#define FX_STR_VAL "coreq fixture string"
#define FX_STRUCT_A 0x11
#define FX_STRUCT_B 0x2233
#define FX_STRUCT_C 0x44556677U
#define FX_STRUCT_D 0x8899aabbccddeeffULL
#define FX_STRUCT_NAME "fxname"
#define FX_BSS_SIZE 4096
#define FX_BSS_BYTE(i) ((unsigned char)(((i) * 7) & 0xff))
#define FX_T_U32(i) (0x1000U + (unsigned)(i) * 0x111U)
#define FX_T_U64(i) (0xfeed000000000000ULL + (unsigned long long)(i))
#define FX_T_INIT(i) (0x5eedU + (unsigned)(i))

#define OMPD_THREAD_ID_PTHREAD 0
#define OMPD_THREAD_ID_LWP 1

#define MAX_CHECKS 240
#define NAME_LEN 48
#define DETAIL_LEN 160

struct check {
	char name[NAME_LEN];  /* "conformance/..." */
	int pass;
	char detail[DETAIL_LEN];
};

#ifdef CQ_CONFORMANCE_TR
#include "ompd/tr_abi.h"
typedef cq_tr_callbacks callbacks_t;
typedef cq_tr_type_sizes sizes_t;
#define CB_ALLOC(n, p) cb->d_alloc_memory(n, p)
#define CB_FREE(p) cb->d_free_memory(p)
#define CB_PRINT(str) cb->print_string(str)
#define CB_SIZEOF(sz) cb->t_sizeof_prim_type(actx, sz)
#define CB_LOOKUP(t, name, a, file) cb->t_symbol_addr_lookup(actx, t, name, a)
#define CB_READ(t, a, n, buf) cb->t_read_memory(actx, t, a, n, buf)
#define CB_WRITE(t, a, n, buf) cb->t_write_memory(actx, t, a, n, buf)
#define CB_TO_HOST(in, unit, count, out) cb->target_to_host(actx, in, unit, count, out)
#define CB_TO_TARGET(in, unit, count, out) cb->host_to_target(actx, in, unit, count, out)
#else
typedef ompd_callbacks_t callbacks_t;
typedef ompd_device_type_sizes_t sizes_t;
#define CB_ALLOC(n, p) cb->alloc_memory(n, p)
#define CB_FREE(p) cb->free_memory(p)
#define CB_PRINT(str) cb->print_string(str, 0)
#define CB_SIZEOF(sz) cb->sizeof_type(actx, sz)
#define CB_LOOKUP(t, name, a, file) cb->symbol_addr_lookup(actx, t, name, a, file)
#define CB_READ(t, a, n, buf) cb->read_memory(actx, t, a, n, buf)
#define CB_WRITE(t, a, n, buf) cb->write_memory(actx, t, a, n, buf)
#define CB_TO_HOST(in, unit, count, out) cb->device_to_host(actx, in, unit, count, out)
#define CB_TO_TARGET(in, unit, count, out) cb->host_to_device(actx, in, unit, count, out)
#endif

static const callbacks_t *cb;
static struct check checks[MAX_CHECKS];
static size_t nchecks;
static unsigned nfailed;
static char summary_detail[DETAIL_LEN];

struct _ompd_aspace_handle {
	ompd_address_space_context_t *context;
};

/* ---- recording ---- */

static void check(int pass, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void check(int pass, const char *name, const char *fmt, ...)
{
	if (!pass)
		nfailed++;
	if (nchecks >= MAX_CHECKS) {
		nfailed += pass ? 1 : 0; /* a lost check counts as a failure */
		return;
	}
	struct check *c = &checks[nchecks++];
	snprintf(c->name, sizeof(c->name), "conformance/%s", name);
	c->pass = pass != 0;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
	va_end(ap);
}

static const char *rcname(ompd_rc_t rc)
{
	static const char *const names[] = {
		"ok", "unavailable", "stale_handle", "bad_input", "error", "unsupported",
		"needs_state_tracking", "incompatible", "device_read_error", "device_write_error",
		"nomem", "incomplete", "callback_error"};
	if ((unsigned)rc < sizeof(names) / sizeof(names[0]))
		return names[rc];
	return "rc?";
}

/* ---- helpers over the callbacks ---- */

static ompd_address_space_context_t *actx;
static sizes_t sizes;
static int sizes_ok;

static ompd_rc_t lookup(const char *name, ompd_thread_context_t *t, const char *file,
			uint64_t *addr)
{
	ompd_address_t a = {0, 0};
	ompd_rc_t rc = CB_LOOKUP(t, name, &a, file);
	*addr = rc == ompd_rc_ok ? a.address : 0;
	return rc;
}

/* A thread context for the operating-system thread id @p id (host order, @p size bytes). */
static ompd_rc_t thread_context(int kind, unsigned size, const void *id, ompd_thread_context_t **ret)
{
#ifdef CQ_CONFORMANCE_TR
	/* TR §3.4: ids cross the interface in the target's format */
	uint8_t t[8];
	if (size > sizeof(t))
		return ompd_rc_bad_input;
	ompd_rc_t rc = CB_TO_TARGET(id, (int)size, 1, t);
	if (rc != ompd_rc_ok)
		return rc;
	return cb->get_thread_context_for_osthread(actx, kind, size, t, ret);
#else
	return cb->get_thread_context_for_thread_id(actx, kind, size, id, ret);
#endif
}

/* A NUL-terminated string of at most @p n bytes (with its NUL) at @p a. The TR has no
 * read_string: there it is read byte by byte. */
static ompd_rc_t read_str(ompd_thread_context_t *t, const ompd_address_t *a, uint64_t n, char *buf)
{
#ifdef CQ_CONFORMANCE_TR
	for (uint64_t i = 0; i < n; i++) {
		ompd_address_t b = {a->segment, a->address + i};
		ompd_rc_t rc = CB_READ(t, &b, 1, buf + i);
		if (rc != ompd_rc_ok)
			return rc;
		if (!buf[i])
			return ompd_rc_ok;
	}
	return ompd_rc_error;
#else
	return cb->read_string(actx, t, a, n, buf);
#endif
}

/* Read one unsigned value of @p size bytes at @p addr, converted to host order (out of
 * place). */
static ompd_rc_t read_uint(ompd_thread_context_t *t, uint64_t addr, unsigned size, uint64_t *v)
{
	uint8_t raw[8], host[8];
	ompd_address_t a = {0, addr};
	*v = 0;
	ompd_rc_t rc = CB_READ(t, &a, size, raw);
	if (rc != ompd_rc_ok)
		return rc;
	rc = CB_TO_HOST(raw, size, 1, host);
	if (rc != ompd_rc_ok)
		return rc;
	switch (size) {
	case 1: *v = host[0]; break;
	case 2: { uint16_t x; memcpy(&x, host, 2); *v = x; break; }
	case 4: { uint32_t x; memcpy(&x, host, 4); *v = x; break; }
	case 8: { uint64_t x; memcpy(&x, host, 8); *v = x; break; }
	default: return ompd_rc_bad_input;
	}
	return ompd_rc_ok;
}

/* A pointer-sized value at @p addr. */
static ompd_rc_t read_ptr(ompd_thread_context_t *t, uint64_t addr, uint64_t *v)
{
	if (!sizes_ok)
		return ompd_rc_unavailable;
	return read_uint(t, addr, (unsigned)sizes.sizeof_pointer, v);
}

static uint64_t host_value(const void *p, unsigned size)
{
	switch (size) {
	case 1: return *(const uint8_t *)p;
	case 2: { uint16_t x; memcpy(&x, p, 2); return x; }
	case 4: { uint32_t x; memcpy(&x, p, 4); return x; }
	default: { uint64_t x; memcpy(&x, p, 8); return x; }
	}
}

/* ---- the checks ---- */

static void check_sizeof(void)
{
	ompd_rc_t rc = CB_SIZEOF(&sizes);
	sizes_ok = rc == ompd_rc_ok;
	check(sizes_ok, "sizeof/rc", "sizeof_type: %s", rcname(rc));
	if (!sizes_ok) {
		memset(&sizes, 0, sizeof(sizes));
		return;
	}
	check(sizes.sizeof_pointer == 4 || sizes.sizeof_pointer == 8, "sizeof/pointer",
	      "expected 4 or 8, got %u", (unsigned)sizes.sizeof_pointer);
	check(sizes.sizeof_long == sizes.sizeof_pointer, "sizeof/long",
	      "expected sizeof_pointer (%u), got %u", (unsigned)sizes.sizeof_pointer,
	      (unsigned)sizes.sizeof_long);
	check(sizes.sizeof_char == 1, "sizeof/char", "expected 1, got %u", (unsigned)sizes.sizeof_char);
	check(sizes.sizeof_short == 2, "sizeof/short", "expected 2, got %u", (unsigned)sizes.sizeof_short);
	check(sizes.sizeof_int == 4, "sizeof/int", "expected 4, got %u", (unsigned)sizes.sizeof_int);
	check(sizes.sizeof_long_long == 8, "sizeof/long_long", "expected 8, got %u",
	      (unsigned)sizes.sizeof_long_long);
	if (sizes.sizeof_pointer != 4 && sizes.sizeof_pointer != 8)
		sizes_ok = 0;
}

static const char *const globals[] = {
	"fx_u8", "fx_u16", "fx_u32", "fx_u64", "fx_i32", "fx_i64", "fx_str", "fx_strp",
	"fx_ptr", "fx_struct", "fx_bss", "fx_tids", "fx_tls_addr"};
#define NGLOBALS (sizeof(globals) / sizeof(globals[0]))
enum { G_U8, G_U16, G_U32, G_U64, G_I32, G_I64, G_STR, G_STRP, G_PTR, G_STRUCT, G_BSS, G_TIDS,
       G_TLS_ADDR };
static uint64_t gaddr[NGLOBALS];
static int gok[NGLOBALS];

static char exe_name[128];
static const char *exe_name_from;

/* The executable's file name: the plugin is given no name, so it asks the target. */
static void find_exe_name(void)
{
	const char *env = getenv("CQ_CONFORMANCE_EXE");
	if (env && *env) {
		snprintf(exe_name, sizeof(exe_name), "%s", env);
		exe_name_from = "$CQ_CONFORMANCE_EXE";
		return;
	}
	uint64_t a, p;
	if (lookup("program_invocation_short_name", NULL, NULL, &a) == ompd_rc_ok &&
	    read_ptr(NULL, a, &p) == ompd_rc_ok && p) {
		ompd_address_t sa = {0, p};
		char buf[sizeof(exe_name)];
		if (read_str(NULL, &sa, sizeof(buf), buf) == ompd_rc_ok && buf[0]) {
			snprintf(exe_name, sizeof(exe_name), "%s", buf);
			exe_name_from = "program_invocation_short_name";
			return;
		}
	}
	snprintf(exe_name, sizeof(exe_name), "fixprog");
	exe_name_from = "default";
}

static void check_symbols(void)
{
	char name[NAME_LEN];
	for (size_t i = 0; i < NGLOBALS; i++) {
		ompd_rc_t rc = lookup(globals[i], NULL, NULL, &gaddr[i]);
		gok[i] = rc == ompd_rc_ok && gaddr[i] != 0;
		snprintf(name, sizeof(name), "symbol/%s", globals[i]);
		check(gok[i], name, "%s: %s at 0x%" PRIx64, globals[i], rcname(rc), gaddr[i]);
	}
	/* Distinct addresses, in the target's address range. */
	int distinct = 1;
	for (size_t i = 0; i < NGLOBALS; i++)
		for (size_t j = i + 1; j < NGLOBALS; j++)
			if (gok[i] && gok[j] && gaddr[i] == gaddr[j])
				distinct = 0;
	int range = 1;
	for (size_t i = 0; i < NGLOBALS && sizes_ok; i++)
		if (gok[i] && sizes.sizeof_pointer == 4 && gaddr[i] > UINT32_MAX)
			range = 0;
	check(distinct && range, "symbol/distinct", "globals at distinct addresses%s",
	      range ? "" : "; an address beyond 32 bits on a 32-bit target");

	find_exe_name();
	uint64_t a;
	ompd_rc_t rc;
#ifndef CQ_CONFORMANCE_TR /* the TR's symbol lookup has no file_name */
	rc = lookup("fx_u32", NULL, exe_name, &a);
	check(rc == ompd_rc_ok && a == gaddr[G_U32], "symbol/file_exe",
	      "file_name \"%s\" (%s): expected 0x%" PRIx64 ", got %s 0x%" PRIx64, exe_name,
	      exe_name_from, gaddr[G_U32], rcname(rc), a);
	rc = lookup("fx_struct", NULL, exe_name, &a);
	check(rc == ompd_rc_ok && a == gaddr[G_STRUCT], "symbol/file_exe_struct",
	      "file_name \"%s\": expected 0x%" PRIx64 ", got %s 0x%" PRIx64, exe_name,
	      gaddr[G_STRUCT], rcname(rc), a);
	rc = lookup("fx_u32", NULL, "no-such-file.so", &a);
	check(rc != ompd_rc_ok, "symbol/file_bogus",
	      "file_name \"no-such-file.so\": expected failure, got %s 0x%" PRIx64, rcname(rc), a);
#endif
	rc = lookup("fx_no_such_symbol", NULL, NULL, &a);
	check(rc != ompd_rc_ok, "symbol/missing",
	      "fx_no_such_symbol: expected failure, got %s 0x%" PRIx64, rcname(rc), a);
#ifndef CQ_CONFORMANCE_TR
	rc = lookup("fx_no_such_symbol", NULL, exe_name, &a);
	check(rc != ompd_rc_ok, "symbol/missing_in_file",
	      "fx_no_such_symbol in \"%s\": expected failure, got %s 0x%" PRIx64, exe_name,
	      rcname(rc), a);
#endif
	rc = lookup("", NULL, NULL, &a);
	check(rc != ompd_rc_ok, "symbol/empty_name", "\"\": expected failure, got %s 0x%" PRIx64,
	      rcname(rc), a);
}

/* sizeof_pointer bytes of fx_ptr, converted, are the address of fx_u32. */
static void check_pointer(void)
{
	uint64_t p = 0;
	ompd_rc_t rc = gok[G_PTR] ? read_ptr(NULL, gaddr[G_PTR], &p) : ompd_rc_unavailable;
	check(rc == ompd_rc_ok && gok[G_U32] && p == gaddr[G_U32], "sizeof/fx_ptr",
	      "fx_ptr (%u bytes): expected &fx_u32 0x%" PRIx64 ", got %s 0x%" PRIx64,
	      (unsigned)sizes.sizeof_pointer, gaddr[G_U32], rcname(rc), p);
}

static void check_scalars(void)
{
	static const struct {
		int g;
		unsigned size;
		uint64_t want;
		const char *label;
	} s[] = {
		{G_U8, 1, FX_U8_VAL, "u8"},
		{G_U16, 2, FX_U16_VAL, "u16"},
		{G_U32, 4, FX_U32_VAL, "u32"},
		{G_U64, 8, FX_U64_VAL, "u64"},
		{G_I32, 4, (uint32_t)(int32_t)FX_I32_VAL, "i32"},
		{G_I64, 8, (uint64_t)(int64_t)FX_I64_VAL, "i64"},
	};
	char name[NAME_LEN];
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
		unsigned n = s[i].size;
		uint8_t raw[8] = {0}, out[8] = {0}, inplace[8] = {0}, back[8] = {0};
		ompd_address_t a = {0, gaddr[s[i].g]};
		if (!gok[s[i].g]) {
			snprintf(name, sizeof(name), "read/%s", s[i].label);
			check(0, name, "no address for %s", globals[s[i].g]);
			continue;
		}
		/* out of place */
		ompd_rc_t rc = CB_READ(NULL, &a, n, raw);
		ompd_rc_t rc2 = rc == ompd_rc_ok ? CB_TO_HOST(raw, n, 1, out) : rc;
		uint64_t v = host_value(out, n);
		snprintf(name, sizeof(name), "read/%s", s[i].label);
		check(rc2 == ompd_rc_ok && v == s[i].want, name,
		      "%s: expected 0x%" PRIx64 ", got %s/%s 0x%" PRIx64, globals[s[i].g], s[i].want,
		      rcname(rc), rcname(rc2), v);
		/* in place */
		memcpy(inplace, raw, n);
		rc = CB_TO_HOST(inplace, n, 1, inplace);
		v = host_value(inplace, n);
		snprintf(name, sizeof(name), "convert/inplace_%s", s[i].label);
		check(rc == ompd_rc_ok && v == s[i].want, name,
		      "device_to_host in place: expected 0x%" PRIx64 ", got %s 0x%" PRIx64, s[i].want,
		      rcname(rc), v);
		/* host_to_device of the value gives the target's bytes, out of place and in place */
		uint8_t hv[8];
		uint64_t w = s[i].want;
		switch (n) {
		case 1: hv[0] = (uint8_t)w; break;
		case 2: { uint16_t x = (uint16_t)w; memcpy(hv, &x, 2); break; }
		case 4: { uint32_t x = (uint32_t)w; memcpy(hv, &x, 4); break; }
		default: memcpy(hv, &w, 8); break;
		}
		rc = CB_TO_TARGET(hv, n, 1, back);
		int same = rc == ompd_rc_ok && memcmp(back, raw, n) == 0;
		memcpy(inplace, hv, n);
		rc2 = CB_TO_TARGET(inplace, n, 1, inplace);
		int same2 = rc2 == ompd_rc_ok && memcmp(inplace, raw, n) == 0;
		/* and back again */
		ompd_rc_t rc3 = CB_TO_HOST(back, n, 1, back);
		int round = rc3 == ompd_rc_ok && host_value(back, n) == s[i].want;
		snprintf(name, sizeof(name), "convert/roundtrip_%s", s[i].label);
		check(same && same2 && round, name,
		      "host_to_device == target bytes: %s (%s), in place: %s (%s); back: %s (%s)",
		      same ? "yes" : "no", rcname(rc), same2 ? "yes" : "no", rcname(rc2),
		      round ? "yes" : "no", rcname(rc3));
	}
}

/* Several units at once: fx_tids (5 x 4) and fx_tls_addr (5 x 8). */
static int32_t tids[FX_NTHREADS + 1];
static uint64_t tls_addr[FX_NTHREADS + 1];
static int tids_ok, tls_addr_ok;

static void check_arrays(void)
{
	uint8_t raw[8 * (FX_NTHREADS + 1)];
	ompd_address_t a = {0, gaddr[G_TIDS]};
	ompd_rc_t rc = gok[G_TIDS] ? CB_READ(NULL, &a, sizeof(tids), raw) :
				     ompd_rc_unavailable;
	ompd_rc_t rc2 = rc == ompd_rc_ok ? CB_TO_HOST(raw, 4, FX_NTHREADS + 1, tids) : rc;
	int distinct = 1;
	for (int i = 0; i <= FX_NTHREADS; i++)
		for (int j = i + 1; j <= FX_NTHREADS; j++)
			if (tids[i] == tids[j])
				distinct = 0;
	int positive = 1;
	for (int i = 0; i <= FX_NTHREADS; i++)
		if (tids[i] <= 0)
			positive = 0;
	tids_ok = rc2 == ompd_rc_ok && distinct && positive;
	check(tids_ok, "convert/count_fx_tids",
	      "fx_tids as 5 units of 4: %s/%s {%d %d %d %d %d}", rcname(rc), rcname(rc2), tids[0],
	      tids[1], tids[2], tids[3], tids[4]);

	a.address = gaddr[G_TLS_ADDR];
	rc = gok[G_TLS_ADDR] ? CB_READ(NULL, &a, sizeof(tls_addr), raw) :
			       ompd_rc_unavailable;
	/* in place, 5 units of 8 */
	rc2 = rc == ompd_rc_ok ? CB_TO_HOST(raw, 8, FX_NTHREADS + 1, raw) : rc;
	memcpy(tls_addr, raw, sizeof(tls_addr));
	distinct = 1;
	for (int i = 0; i <= FX_NTHREADS; i++)
		for (int j = i + 1; j <= FX_NTHREADS; j++)
			if (tls_addr[i] == tls_addr[j])
				distinct = 0;
	int nonzero = 1;
	for (int i = 0; i <= FX_NTHREADS; i++)
		if (!tls_addr[i] || (sizes.sizeof_pointer == 4 && tls_addr[i] > UINT32_MAX))
			nonzero = 0;
	tls_addr_ok = rc2 == ompd_rc_ok && distinct && nonzero;
	check(tls_addr_ok, "convert/count_fx_tls_addr",
	      "fx_tls_addr as 5 units of 8 in place: %s/%s [0]=0x%" PRIx64 " [4]=0x%" PRIx64,
	      rcname(rc), rcname(rc2), tls_addr[0], tls_addr[4]);
}

static void check_struct(void)
{
	uint8_t raw[32];
	unsigned psize = sizes_ok ? (unsigned)sizes.sizeof_pointer : 8;
	ompd_address_t a = {0, gaddr[G_STRUCT]};
	ompd_rc_t rc = gok[G_STRUCT] ? CB_READ(NULL, &a, 24 + psize, raw) :
				       ompd_rc_unavailable;
	if (rc != ompd_rc_ok) {
		check(0, "struct/read", "fx_struct (%u bytes): %s", 24 + psize, rcname(rc));
		return;
	}
	check(1, "struct/read", "fx_struct (%u bytes): ok", 24 + psize);
	uint8_t av;
	uint16_t bv;
	uint32_t cv;
	uint64_t dv, pv = 0;
	ompd_rc_t r[5];
	r[0] = CB_TO_HOST(raw + 0, 1, 1, &av);
	r[1] = CB_TO_HOST(raw + 2, 2, 1, &bv);
	r[2] = CB_TO_HOST(raw + 4, 4, 1, &cv);
	r[3] = CB_TO_HOST(raw + 8, 8, 1, &dv);
	r[4] = CB_TO_HOST(raw + 24, psize, 1, raw + 24);
	pv = host_value(raw + 24, psize);
	int rcs = 1;
	for (int i = 0; i < 5; i++)
		if (r[i] != ompd_rc_ok)
			rcs = 0;
	check(rcs && av == FX_STRUCT_A, "struct/a", "offset 0: expected 0x%x, got 0x%x",
	      FX_STRUCT_A, av);
	check(rcs && bv == FX_STRUCT_B, "struct/b", "offset 2: expected 0x%x, got 0x%x",
	      FX_STRUCT_B, bv);
	check(rcs && cv == FX_STRUCT_C, "struct/c", "offset 4: expected 0x%x, got 0x%x",
	      FX_STRUCT_C, cv);
	check(rcs && dv == FX_STRUCT_D, "struct/d",
	      "offset 8: expected 0x%llx, got 0x%" PRIx64, (unsigned long long)FX_STRUCT_D, dv);
	check(memcmp(raw + 16, FX_STRUCT_NAME, sizeof(FX_STRUCT_NAME)) == 0, "struct/name",
	      "offset 16: expected \"%s\", got \"%.8s\"", FX_STRUCT_NAME, (const char *)raw + 16);
	check(rcs && gok[G_U64] && pv == gaddr[G_U64], "struct/p",
	      "offset 24: expected &fx_u64 0x%" PRIx64 ", got 0x%" PRIx64, gaddr[G_U64], pv);
}

static void check_bss(void)
{
	static uint8_t buf[FX_BSS_SIZE];
	ompd_address_t a = {0, gaddr[G_BSS]};
	ompd_rc_t rc = gok[G_BSS] ? CB_READ(NULL, &a, sizeof(buf), buf) :
				    ompd_rc_unavailable;
	int bad = -1;
	for (int i = 0; rc == ompd_rc_ok && i < FX_BSS_SIZE; i++)
		if (buf[i] != FX_BSS_BYTE(i)) {
			bad = i;
			break;
		}
	check(rc == ompd_rc_ok && bad < 0, "read/bss",
	      "fx_bss (4096 bytes): %s, first wrong byte %d", rcname(rc), bad);
}

#define CANARY 0x5a
static int canary_intact(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != CANARY)
			return 0;
	return 1;
}

static void check_strings(void)
{
#ifndef CQ_CONFORMANCE_TR
	const size_t len = sizeof(FX_STR_VAL) - 1;
	uint8_t buf[64 + 32];
	ompd_address_t a = {0, gaddr[G_STR]};
	ompd_rc_t rc;

	memset(buf, CANARY, sizeof(buf));
	rc = gok[G_STR] ? cb->read_string(actx, NULL, &a, 64, buf) : ompd_rc_unavailable;
	check(rc == ompd_rc_ok && strcmp((char *)buf, FX_STR_VAL) == 0 && canary_intact(buf + 64, 32),
	      "string/fx_str", "nbytes 64: expected \"%s\", got %s \"%.64s\"", FX_STR_VAL,
	      rcname(rc), rc == ompd_rc_ok ? (char *)buf : "");

	/* exactly the string and its NUL */
	memset(buf, CANARY, sizeof(buf));
	rc = gok[G_STR] ? cb->read_string(actx, NULL, &a, len + 1, buf) : ompd_rc_unavailable;
	check(rc == ompd_rc_ok && strcmp((char *)buf, FX_STR_VAL) == 0 && canary_intact(buf + len + 1, 32),
	      "string/exact", "nbytes %zu: %s, canary %s", len + 1, rcname(rc),
	      canary_intact(buf + len + 1, 32) ? "intact" : "OVERWRITTEN");

	/* one byte short: no room for the NUL */
	memset(buf, CANARY, sizeof(buf));
	rc = gok[G_STR] ? cb->read_string(actx, NULL, &a, len, buf) : ompd_rc_unavailable;
	check(gok[G_STR] && rc != ompd_rc_ok && canary_intact(buf + len, 32), "string/no_room_for_nul",
	      "nbytes %zu: expected incomplete or an error, got %s, canary %s", len, rcname(rc),
	      canary_intact(buf + len, 32) ? "intact" : "OVERWRITTEN");

	/* much shorter */
	memset(buf, CANARY, sizeof(buf));
	rc = gok[G_STR] ? cb->read_string(actx, NULL, &a, 8, buf) : ompd_rc_unavailable;
	int prefix = rc != ompd_rc_incomplete || memcmp(buf, FX_STR_VAL, 8) == 0;
	check(gok[G_STR] && rc != ompd_rc_ok && prefix && canary_intact(buf + 8, 32), "string/short",
	      "nbytes 8: expected incomplete or an error, got %s, canary %s%s", rcname(rc),
	      canary_intact(buf + 8, 32) ? "intact" : "OVERWRITTEN",
	      prefix ? "" : ", incomplete but not the string's first bytes");

	/* through fx_strp */
	uint64_t p = 0;
	rc = gok[G_STRP] ? read_ptr(NULL, gaddr[G_STRP], &p) : ompd_rc_unavailable;
	check(rc == ompd_rc_ok && p == gaddr[G_STR], "string/fx_strp_value",
	      "fx_strp: expected &fx_str 0x%" PRIx64 ", got %s 0x%" PRIx64, gaddr[G_STR],
	      rcname(rc), p);
	memset(buf, CANARY, sizeof(buf));
	ompd_address_t pa = {0, p};
	rc = rc == ompd_rc_ok && p ? cb->read_string(actx, NULL, &pa, 64, buf) : rc;
	check(rc == ompd_rc_ok && strcmp((char *)buf, FX_STR_VAL) == 0, "string/fx_strp",
	      "*fx_strp: %s \"%.64s\"", rcname(rc), rc == ompd_rc_ok ? (char *)buf : "");

	/* Hostile (only with CQ_CONFORMANCE_HOSTILE=1: a host with the bug corrupts its own heap
	 * and may crash before any result is reported): nbytes = (ompd_size_t)-1, "no bound".
	 * A host must survive it and either fail or write the string and its NUL only. */
	const char *hostile = getenv("CQ_CONFORMANCE_HOSTILE");
	if (hostile && strcmp(hostile, "1") == 0) {
		memset(buf, CANARY, sizeof(buf));
		rc = gok[G_STR] ? cb->read_string(actx, NULL, &a, ~(ompd_size_t)0, buf) :
				  ompd_rc_unavailable;
		int good = rc == ompd_rc_ok ? strcmp((char *)buf, FX_STR_VAL) == 0 &&
						      canary_intact(buf + len + 1, sizeof(buf) - len - 1) :
					      canary_intact(buf, sizeof(buf));
		check(gok[G_STR] && good, "string/nbytes_max",
		      "nbytes (ompd_size_t)-1: expected the string or an error, got %s%s", rcname(rc),
		      good ? "" : " and bytes beyond the string");
		/* a 32-bit host's SIZE_MAX */
		memset(buf, CANARY, sizeof(buf));
		rc = gok[G_STR] ? cb->read_string(actx, NULL, &a, UINT32_MAX, buf) : ompd_rc_unavailable;
		good = rc == ompd_rc_ok ? strcmp((char *)buf, FX_STR_VAL) == 0 &&
					      canary_intact(buf + len + 1, sizeof(buf) - len - 1) :
				      canary_intact(buf, sizeof(buf));
		check(gok[G_STR] && good, "string/nbytes_4g",
		      "nbytes 0xffffffff: expected the string or an error, got %s%s", rcname(rc),
		      good ? "" : " and bytes beyond the string");
	}

	/* fx_struct.name: 7 characters and a NUL */
	memset(buf, CANARY, sizeof(buf));
	ompd_address_t na = {0, gaddr[G_STRUCT] + 16};
	rc = gok[G_STRUCT] ? cb->read_string(actx, NULL, &na, 8, buf) : ompd_rc_unavailable;
	check(rc == ompd_rc_ok && strcmp((char *)buf, FX_STRUCT_NAME) == 0 && canary_intact(buf + 8, 32),
	      "string/struct_name", "fx_struct.name, nbytes 8: %s \"%.8s\"", rcname(rc),
	      rc == ompd_rc_ok ? (char *)buf : "");
#endif
}

static void check_faults(void)
{
	uint8_t buf[64 + 16];
	static const struct {
		uint64_t addr;
		uint64_t n;
		const char *name;
	} f[] = {
		{0x10, 8, "fault/read_0x10"},
		{0, 8, "fault/read_0"},
		{0, 1, "fault/read_0_1byte"},
		{UINT64_C(0xfffffffffffffff0), 32, "fault/read_wraps"},
		{UINT64_C(0xfffffffffffff000), 64, "fault/read_top"},
	};
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		ompd_address_t a = {0, f[i].addr};
		memset(buf, CANARY, sizeof(buf));
		ompd_rc_t rc = CB_READ(NULL, &a, f[i].n, buf);
		check(rc != ompd_rc_ok && canary_intact(buf + f[i].n, sizeof(buf) - f[i].n), f[i].name,
		      "read_memory(0x%" PRIx64 ", %" PRIu64 "): expected failure, got %s", f[i].addr,
		      f[i].n, rcname(rc));
	}
	ompd_rc_t rc;
#ifdef CQ_CONFORMANCE_TR
	/* the TR's counts are signed */
	ompd_address_t g = {0, gaddr[G_U32]};
	memset(buf, CANARY, sizeof(buf));
	rc = gok[G_U32] ? CB_READ(NULL, &g, -1, buf) : ompd_rc_unavailable;
	check(gok[G_U32] && rc != ompd_rc_ok && canary_intact(buf, sizeof(buf)), "fault/read_negative",
	      "t_read_memory(fx_u32, -1): expected failure, got %s", rcname(rc));
	uint8_t in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8];
	memset(out, CANARY, sizeof(out));
	rc = CB_TO_HOST(in, 4, -2, out);
	check(rc != ompd_rc_ok && canary_intact(out, sizeof(out)), "convert/negative_count",
	      "target_to_host(unit 4, count -2): expected failure, got %s", rcname(rc));
	rc = CB_TO_HOST(in, 0, 1, out);
	check(rc != ompd_rc_ok && canary_intact(out, sizeof(out)), "convert/unit_0",
	      "target_to_host(unit 0): expected failure, got %s", rcname(rc));
	rc = CB_TO_HOST(in, -4, 1, out);
	check(rc != ompd_rc_ok && canary_intact(out, sizeof(out)), "convert/negative_unit",
	      "target_to_host(unit -4): expected failure, got %s", rcname(rc));
#else
	ompd_address_t z = {0, 0};
	memset(buf, CANARY, sizeof(buf));
	rc = cb->read_string(actx, NULL, &z, 16, buf);
	check(rc != ompd_rc_ok && canary_intact(buf + 16, 32), "fault/read_string_0",
	      "read_string(0): expected failure, got %s", rcname(rc));
#endif
	/* write_memory: a core is never written */
	uint8_t v[4] = {1, 2, 3, 4};
	ompd_address_t a = {0, gaddr[G_U32]};
	rc = gok[G_U32] ? CB_WRITE(NULL, &a, 4, v) : ompd_rc_unavailable;
	check(gok[G_U32] && rc != ompd_rc_ok, "write/refused",
	      "write_memory(fx_u32): expected refusal, got %s", rcname(rc));
	uint64_t after = 0;
	ompd_rc_t rc2 = gok[G_U32] ? read_uint(NULL, gaddr[G_U32], 4, &after) : ompd_rc_unavailable;
	check(rc2 == ompd_rc_ok && after == FX_U32_VAL, "write/unchanged",
	      "fx_u32 after the write: expected 0x%x, got %s 0x%" PRIx64, FX_U32_VAL, rcname(rc2),
	      after);
}

static void check_threads(void)
{
	char name[NAME_LEN];
	if (!tids_ok) {
		check(0, "threads/tids", "fx_tids unreadable or implausible");
		return;
	}
	for (int i = 0; i <= FX_NTHREADS; i++) {
		ompd_thread_context_t *c8 = NULL, *c4 = NULL;
		uint64_t id8 = (uint64_t)(uint32_t)tids[i];
		uint32_t id4 = (uint32_t)tids[i];
		ompd_rc_t rc8 = thread_context(OMPD_THREAD_ID_LWP, 8, &id8, &c8);
		snprintf(name, sizeof(name), "threads/%d/lwp8", i);
		check(rc8 == ompd_rc_ok && c8, name, "tid %d, 8-byte id: %s", tids[i], rcname(rc8));
		ompd_rc_t rc4 = thread_context(OMPD_THREAD_ID_LWP, 4, &id4, &c4);
		snprintf(name, sizeof(name), "threads/%d/lwp4", i);
		check(rc4 == ompd_rc_ok && c4, name, "tid %d, 4-byte id: %s", tids[i], rcname(rc4));
		if (rc8 != ompd_rc_ok || !c8)
			continue;

		uint64_t a = 0, a4 = 0;
		ompd_rc_t rc = lookup("fx_t_u32", c8, NULL, &a);
		snprintf(name, sizeof(name), "tls/%d/addr", i);
		check(rc == ompd_rc_ok && tls_addr_ok && a == tls_addr[i], name,
		      "&fx_t_u32 of thread %d: expected fx_tls_addr[%d] 0x%" PRIx64 ", got %s 0x%" PRIx64,
		      i, i, tls_addr[i], rcname(rc), a);
		if (rc4 == ompd_rc_ok && c4) {
			rc = lookup("fx_t_u32", c4, NULL, &a4);
			snprintf(name, sizeof(name), "tls/%d/addr_lwp4", i);
			check(rc == ompd_rc_ok && a4 == a, name,
			      "&fx_t_u32 with the 4-byte id's context: expected 0x%" PRIx64
			      ", got %s 0x%" PRIx64, a, rcname(rc), a4);
		}
		uint64_t v = 0;
		rc = a ? read_uint(c8, a, 4, &v) : ompd_rc_unavailable;
		snprintf(name, sizeof(name), "tls/%d/u32", i);
		check(rc == ompd_rc_ok && v == FX_T_U32(i), name,
		      "fx_t_u32: expected 0x%x, got %s 0x%" PRIx64, FX_T_U32(i), rcname(rc), v);

		rc = lookup("fx_t_index", c8, NULL, &a);
		rc = rc == ompd_rc_ok ? read_uint(c8, a, 4, &v) : rc;
		snprintf(name, sizeof(name), "tls/%d/index", i);
		check(rc == ompd_rc_ok && v == (uint64_t)i, name,
		      "fx_t_index: expected %d, got %s %" PRIu64, i, rcname(rc), v);

		rc = lookup("fx_t_u64", c8, NULL, &a);
		rc = rc == ompd_rc_ok ? read_uint(c8, a, 8, &v) : rc;
		snprintf(name, sizeof(name), "tls/%d/u64", i);
		check(rc == ompd_rc_ok && v == FX_T_U64(i), name,
		      "fx_t_u64: expected 0x%llx, got %s 0x%" PRIx64, (unsigned long long)FX_T_U64(i),
		      rcname(rc), v);

		rc = lookup("fx_t_init", c8, NULL, &a);
		rc = rc == ompd_rc_ok ? read_uint(c8, a, 4, &v) : rc;
		snprintf(name, sizeof(name), "tls/%d/init", i);
		check(rc == ompd_rc_ok && v == FX_T_INIT(i), name,
		      "fx_t_init (.tdata): expected 0x%x, got %s 0x%" PRIx64, FX_T_INIT(i), rcname(rc), v);

		char want[16], got[16 + 16];
		snprintf(want, sizeof(want), "thread-%d", i);
		memset(got, CANARY, sizeof(got));
		rc = lookup("fx_t_name", c8, NULL, &a);
		ompd_address_t sa = {0, a};
		rc = rc == ompd_rc_ok ? read_str(c8, &sa, 16, got) : rc;
		snprintf(name, sizeof(name), "tls/%d/name", i);
		check(rc == ompd_rc_ok && strcmp(got, want) == 0 && canary_intact((uint8_t *)got + 16, 16),
		      name, "fx_t_name: expected \"%s\", got %s \"%.16s\"", want, rcname(rc),
		      rc == ompd_rc_ok ? got : "");
	}

	/* scoped to the executable, with a thread */
	ompd_thread_context_t *c0 = NULL;
	uint64_t id0 = (uint64_t)(uint32_t)tids[0], a = 0;
	ompd_rc_t rc = thread_context(OMPD_THREAD_ID_LWP, 8, &id0, &c0);
#ifdef CQ_CONFORMANCE_TR
	/* from a thread context back to its address space */
	ompd_address_space_context_t *back = NULL;
	ompd_rc_t rcb = rc == ompd_rc_ok ? cb->get_address_space_context_for_thread(c0, &back) : rc;
	check(rcb == ompd_rc_ok && back == actx, "threads/address_space",
	      "get_address_space_context_for_thread: %s, %s the process context", rcname(rcb),
	      back == actx ? "is" : "is NOT");
	rcb = cb->get_address_space_context_for_thread(NULL, &back);
	check(rcb != ompd_rc_ok, "threads/address_space_null",
	      "get_address_space_context_for_thread(NULL): expected failure, got %s", rcname(rcb));
#else
	rc = rc == ompd_rc_ok ? lookup("fx_t_u32", c0, exe_name, &a) : rc;
	check(rc == ompd_rc_ok && tls_addr_ok && a == tls_addr[0], "tls/file_exe",
	      "&fx_t_u32 of thread 0 in \"%s\": expected 0x%" PRIx64 ", got %s 0x%" PRIx64,
	      exe_name, tls_addr[0], rcname(rc), a);
#endif

	/* a TLS symbol without a thread has no address */
	rc = lookup("fx_t_u32", NULL, NULL, &a);
	check(rc != ompd_rc_ok, "tls/no_thread",
	      "fx_t_u32 without a thread context: expected failure, got %s 0x%" PRIx64, rcname(rc), a);

	/* unknown thread ids */
	int32_t unknown = 0x7ffffff0;
	for (int i = 0; i <= FX_NTHREADS; i++)
		if (tids[i] == unknown)
			unknown--;
	ompd_thread_context_t *c = NULL;
	uint64_t u8 = (uint32_t)unknown;
	uint32_t u4 = (uint32_t)unknown;
	rc = thread_context(OMPD_THREAD_ID_LWP, 8, &u8, &c);
	check(rc != ompd_rc_ok, "threads/unknown_lwp8", "tid %d: expected failure, got %s",
	      unknown, rcname(rc));
	rc = thread_context(OMPD_THREAD_ID_LWP, 4, &u4, &c);
	check(rc != ompd_rc_ok, "threads/unknown_lwp4", "tid %d: expected failure, got %s",
	      unknown, rcname(rc));
	/* the high half of an 8-byte id is part of the id */
	u8 = ((uint64_t)1 << 32) | (uint32_t)tids[0];
	rc = thread_context(OMPD_THREAD_ID_LWP, 8, &u8, &c);
	check(rc != ompd_rc_ok, "threads/lwp8_high_bits",
	      "id 0x%" PRIx64 ": expected failure, got %s", u8, rcname(rc));
	uint16_t id2 = (uint16_t)tids[0];
	rc = thread_context(OMPD_THREAD_ID_LWP, 2, &id2, &c);
	check(rc != ompd_rc_ok, "threads/bad_size", "2-byte id: expected failure, got %s",
	      rcname(rc));
	rc = thread_context(0x7777, 8, &id0, &c);
	check(rc != ompd_rc_ok, "threads/bad_kind", "kind 0x7777: expected failure, got %s",
	      rcname(rc));
}

static void check_alloc(void)
{
	void *p = (void *)1;
	ompd_rc_t rc = CB_ALLOC((ompd_size_t)1 << 62, &p);
	check(rc != ompd_rc_ok, "alloc/huge", "alloc_memory(1<<62): expected failure, got %s",
	      rcname(rc));
	if (rc == ompd_rc_ok && p)
		CB_FREE(p);
	rc = CB_ALLOC(UINT64_MAX, &p);
	check(rc != ompd_rc_ok, "alloc/max", "alloc_memory(UINT64_MAX): expected failure, got %s",
	      rcname(rc));
	if (rc == ompd_rc_ok && p)
		CB_FREE(p);
	if (sizeof(void *) == 4) {
		/* 4 GiB + 16 must not wrap to 16 bytes in a 32-bit host */
		rc = CB_ALLOC(((ompd_size_t)1 << 32) + 16, &p);
		check(rc != ompd_rc_ok, "alloc/wrap32",
		      "alloc_memory(4 GiB + 16) in a 32-bit host: expected failure, got %s", rcname(rc));
		if (rc == ompd_rc_ok && p)
			CB_FREE(p);
	}
	p = NULL;
	rc = CB_ALLOC(4096, &p);
	int ok = rc == ompd_rc_ok && p;
	if (ok)
		memset(p, 0xab, 4096);
	ompd_rc_t rc2 = ok ? CB_FREE(p) : ompd_rc_unavailable;
	check(ok && rc2 == ompd_rc_ok, "alloc/normal", "alloc_memory(4096): %s, free_memory: %s",
	      rcname(rc), rcname(rc2));
	p = NULL;
	rc = CB_ALLOC(0, &p);
	rc2 = rc == ompd_rc_ok && p ? CB_FREE(p) : ompd_rc_ok;
	check(rc2 == ompd_rc_ok, "alloc/zero", "alloc_memory(0): %s, free: %s", rcname(rc),
	      rcname(rc2));
}

static void check_print(void)
{
	ompd_rc_t rc = CB_PRINT("ompd_conformance: checking the host's callbacks\n");
	check(rc == ompd_rc_ok, "print_string", "print_string: %s", rcname(rc));
}

static void run_checks(void)
{
	nchecks = 0;
	nfailed = 0;
	check_print();
	check_sizeof();
	check_symbols();
	check_pointer();
	check_scalars();
	check_arrays();
	check_struct();
	check_bss();
	check_strings();
	check_faults();
	check_threads();
	check_alloc();
	snprintf(summary_detail, sizeof(summary_detail), "%zu checks, %u failed", nchecks, nfailed);
}

/* ---- entry points ---- */

/* Both ABIs: the checks run when the host opens the core. */
EXPORT ompd_rc_t ompd_process_initialize(ompd_address_space_context_t *context,
					 ompd_address_space_handle_t **handle)
{
	if (!cb)
		return ompd_rc_stale_handle;
	if (!context || !handle)
		return ompd_rc_bad_input;
	void *p = NULL;
	if (CB_ALLOC(sizeof(struct _ompd_aspace_handle), &p) != ompd_rc_ok || !p)
		return ompd_rc_nomem;
	struct _ompd_aspace_handle *h = p;
	h->context = context;
	actx = context;
	run_checks();
	*handle = h;
	return ompd_rc_ok;
}

EXPORT ompd_rc_t ompd_finalize(void)
{
	cb = NULL;
	return ompd_rc_ok;
}

static ompd_rc_t release_address_space(ompd_address_space_handle_t *handle)
{
	if (!handle)
		return ompd_rc_stale_handle;
	if (cb)
		CB_FREE(handle);
	return ompd_rc_ok;
}

#ifdef CQ_CONFORMANCE_TR

EXPORT ompd_rc_t ompd_get_version(int *version)
{
	if (!version)
		return ompd_rc_bad_input;
	/* the TR 2.001 of July 2016; CQ_CONFORMANCE_TR_VERSION tests the host's version check */
	const char *v = getenv("CQ_CONFORMANCE_TR_VERSION");
	*version = v && *v ? atoi(v) : 201607;
	return ompd_rc_ok;
}

EXPORT ompd_rc_t ompd_get_version_string(const char **string)
{
	if (!string)
		return ompd_rc_bad_input;
	*string = "coreq OMPD conformance test plugin, TR 2.001 ABI (checks the host's callbacks "
		  "against fixprog; results are the conformance/* display control variables)";
	return ompd_rc_ok;
}

EXPORT ompd_rc_t ompd_initialize(const cq_tr_callbacks *callbacks)
{
	if (!callbacks)
		return ompd_rc_bad_input;
	const void *fns[] = {
		(const void *)callbacks->d_alloc_memory, (const void *)callbacks->d_free_memory,
		(const void *)callbacks->print_string, (const void *)callbacks->t_sizeof_prim_type,
		(const void *)callbacks->t_symbol_addr_lookup, (const void *)callbacks->t_read_memory,
		(const void *)callbacks->t_write_memory, (const void *)callbacks->target_to_host,
		(const void *)callbacks->host_to_target,
		(const void *)callbacks->get_thread_context_for_osthread,
		(const void *)callbacks->get_address_space_context_for_thread};
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		if (!fns[i]) {
			fprintf(stderr, "ompd_conformance: TR callback %zu is NULL\n", i);
			return ompd_rc_bad_input;
		}
	cb = callbacks;
	return ompd_rc_ok;
}

EXPORT ompd_rc_t ompd_release_address_space_handle(ompd_address_space_handle_t *handle)
{
	return release_address_space(handle);
}

/* The checks, "conformance/<check>=<1|0> <detail>", then the summary; allocated through
 * the host, which releases them with ompd_release_display_control_vars. */
EXPORT ompd_rc_t ompd_get_display_control_vars(ompd_address_space_handle_t *handle,
					       const char *const **vars)
{
	if (!handle || !vars || !cb)
		return ompd_rc_bad_input;
	size_t n = nchecks + 1;
	char **v = NULL;
	if (CB_ALLOC((n + 1) * sizeof(char *), (void **)&v) != ompd_rc_ok || !v)
		return ompd_rc_nomem;
	for (size_t i = 0; i < n; i++) {
		char line[NAME_LEN + DETAIL_LEN + 16];
		if (i < nchecks)
			snprintf(line, sizeof(line), "%.*s=%d %.*s", NAME_LEN, checks[i].name,
				 checks[i].pass, DETAIL_LEN, checks[i].detail);
		else
			snprintf(line, sizeof(line), "conformance/summary=%u %.*s", nfailed, DETAIL_LEN,
				 summary_detail);
		v[i] = NULL;
		if (CB_ALLOC(strlen(line) + 1, (void **)&v[i]) != ompd_rc_ok || !v[i])
			return ompd_rc_nomem;
		memcpy(v[i], line, strlen(line) + 1);
	}
	v[n] = NULL;
	*vars = (const char *const *)v;
	return ompd_rc_ok;
}

EXPORT ompd_rc_t ompd_release_display_control_vars(const char *const **vars)
{
	if (!vars || !*vars || !cb)
		return ompd_rc_bad_input;
	for (size_t i = 0; (*vars)[i]; i++)
		CB_FREE((void *)(*vars)[i]);
	CB_FREE((void *)*vars);
	*vars = NULL;
	return ompd_rc_ok;
}

/* No thread is an OpenMP thread: the rest of the TR answers "unavailable". */
#define NONE(name, args) EXPORT ompd_rc_t name args { return ompd_rc_unavailable; }
NONE(ompd_get_thread_handle, (ompd_address_space_handle_t *h, int kind, uint64_t size,
			      const void *id, ompd_thread_handle_t **th))
NONE(ompd_get_thread_in_parallel, (ompd_parallel_handle_t *p, ompd_thread_handle_t ***v, int *n))
NONE(ompd_release_thread_handle, (ompd_thread_handle_t *th))
NONE(ompd_get_osthread, (ompd_thread_handle_t *th, int kind, uint64_t size, void *id))
NONE(ompd_get_state, (ompd_thread_handle_t *th, int *state, ompd_wait_id_t *wait_id))
NONE(ompd_get_top_parallel_region, (ompd_thread_handle_t *th, ompd_parallel_handle_t **p))
NONE(ompd_get_enclosing_parallel_handle, (ompd_parallel_handle_t *p, ompd_parallel_handle_t **o))
NONE(ompd_get_task_parallel_handle, (ompd_task_handle_t *t, ompd_parallel_handle_t **p))
NONE(ompd_release_parallel_handle, (ompd_parallel_handle_t *p))
NONE(ompd_get_top_task_region, (ompd_thread_handle_t *th, ompd_task_handle_t **t))
NONE(ompd_get_generating_ancestor_task_region, (ompd_task_handle_t *t, ompd_task_handle_t **p))
NONE(ompd_get_scheduling_ancestor_task_region, (ompd_task_handle_t *t, ompd_task_handle_t **p))
NONE(ompd_get_implicit_task_in_parallel, (ompd_parallel_handle_t *p, ompd_task_handle_t ***v, int *n))
NONE(ompd_release_task_handle, (ompd_task_handle_t *t))
NONE(ompd_get_task_function, (ompd_task_handle_t *t, ompd_address_t *entry))
NONE(ompd_get_task_frame, (ompd_task_handle_t *t, ompd_address_t *exit_addr, ompd_address_t *reenter))
NONE(ompd_get_num_procs, (ompd_address_space_handle_t *h, int64_t *val))
#undef NONE

#else /* OpenMP 5.1 */

EXPORT ompd_rc_t ompd_initialize(ompd_word_t api_version, const ompd_callbacks_t *callbacks)
{
	if (!callbacks)
		return ompd_rc_bad_input;
	static const char *const need[] = {"alloc_memory", "free_memory", "print_string",
		"sizeof_type", "symbol_addr_lookup", "read_memory", "write_memory", "read_string",
		"device_to_host", "host_to_device", "get_thread_context_for_thread_id"};
	const void *fns[] = {
		(const void *)callbacks->alloc_memory, (const void *)callbacks->free_memory,
		(const void *)callbacks->print_string, (const void *)callbacks->sizeof_type,
		(const void *)callbacks->symbol_addr_lookup, (const void *)callbacks->read_memory,
		(const void *)callbacks->write_memory, (const void *)callbacks->read_string,
		(const void *)callbacks->device_to_host, (const void *)callbacks->host_to_device,
		(const void *)callbacks->get_thread_context_for_thread_id};
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		if (!fns[i]) {
			fprintf(stderr, "ompd_conformance: callback %s is NULL\n", need[i]);
			return ompd_rc_bad_input;
		}
	cb = callbacks;
	return ompd_rc_ok;
}

EXPORT ompd_rc_t ompd_get_api_version(ompd_word_t *version)
{
	if (!version)
		return ompd_rc_bad_input;
	*version = 201811;
	return ompd_rc_ok;
}

EXPORT ompd_rc_t ompd_get_version_string(const char **string)
{
	if (!string)
		return ompd_rc_bad_input;
	*string = "coreq OMPD conformance test plugin (checks the host's callbacks against "
		  "fixprog; results are the conformance/* ICVs)";
	return ompd_rc_ok;
}

EXPORT ompd_rc_t ompd_device_initialize(ompd_address_space_handle_t *process_handle,
					ompd_address_space_context_t *device_context,
					ompd_device_t kind, ompd_size_t sizeof_id, void *id,
					ompd_address_space_handle_t **device_handle)
{
	return ompd_rc_unsupported;
}

EXPORT ompd_rc_t ompd_rel_address_space_handle(ompd_address_space_handle_t *handle)
{
	return release_address_space(handle);
}

EXPORT ompd_rc_t ompd_get_omp_version(ompd_address_space_handle_t *address_space,
				      ompd_word_t *omp_version)
{
	return ompd_rc_unsupported;
}

EXPORT ompd_rc_t ompd_get_omp_version_string(ompd_address_space_handle_t *address_space,
					     const char **string)
{
	return ompd_rc_unsupported;
}

EXPORT ompd_rc_t ompd_get_thread_in_parallel(ompd_parallel_handle_t *parallel_handle,
					     int thread_num, ompd_thread_handle_t **thread_handle)
{
	return ompd_rc_unavailable;
}

EXPORT ompd_rc_t ompd_get_thread_handle(ompd_address_space_handle_t *handle, ompd_thread_id_t kind,
					ompd_size_t sizeof_thread_id, const void *thread_id,
					ompd_thread_handle_t **thread_handle)
{
	return ompd_rc_unavailable; /* no thread is an OpenMP thread */
}

EXPORT ompd_rc_t ompd_rel_thread_handle(ompd_thread_handle_t *thread_handle)
{
	return ompd_rc_stale_handle;
}

EXPORT ompd_rc_t ompd_thread_handle_compare(ompd_thread_handle_t *thread_handle_1,
					    ompd_thread_handle_t *thread_handle_2, int *cmp_value)
{
	return ompd_rc_unsupported;
}

EXPORT ompd_rc_t ompd_get_thread_id(ompd_thread_handle_t *thread_handle, ompd_thread_id_t kind,
				    ompd_size_t sizeof_thread_id, void *thread_id)
{
	return ompd_rc_unsupported;
}

EXPORT ompd_rc_t ompd_get_curr_parallel_handle(ompd_thread_handle_t *thread_handle,
					       ompd_parallel_handle_t **parallel_handle)
{
	return ompd_rc_unavailable;
}

EXPORT ompd_rc_t ompd_get_enclosing_parallel_handle(ompd_parallel_handle_t *parallel_handle,
						    ompd_parallel_handle_t **enclosing)
{
	return ompd_rc_unavailable;
}

EXPORT ompd_rc_t ompd_get_task_parallel_handle(ompd_task_handle_t *task_handle,
					       ompd_parallel_handle_t **task_parallel_handle)
{
	return ompd_rc_unavailable;
}

EXPORT ompd_rc_t ompd_rel_parallel_handle(ompd_parallel_handle_t *parallel_handle)
{
	return ompd_rc_stale_handle;
}

EXPORT ompd_rc_t ompd_parallel_handle_compare(ompd_parallel_handle_t *parallel_handle_1,
					      ompd_parallel_handle_t *parallel_handle_2,
					      int *cmp_value)
{
	return ompd_rc_unsupported;
}

EXPORT ompd_rc_t ompd_get_curr_task_handle(ompd_thread_handle_t *thread_handle,
					   ompd_task_handle_t **task_handle)
{
	return ompd_rc_unavailable;
}

EXPORT ompd_rc_t ompd_get_generating_task_handle(ompd_task_handle_t *task_handle,
						 ompd_task_handle_t **generating_task_handle)
{
	return ompd_rc_unavailable;
}

EXPORT ompd_rc_t ompd_get_scheduling_task_handle(ompd_task_handle_t *task_handle,
						 ompd_task_handle_t **scheduling_task_handle)
{
	return ompd_rc_unavailable;
}

EXPORT ompd_rc_t ompd_get_task_in_parallel(ompd_parallel_handle_t *parallel_handle,
					   int thread_num, ompd_task_handle_t **task_handle)
{
	return ompd_rc_unavailable;
}

EXPORT ompd_rc_t ompd_rel_task_handle(ompd_task_handle_t *task_handle)
{
	return ompd_rc_stale_handle;
}

EXPORT ompd_rc_t ompd_task_handle_compare(ompd_task_handle_t *task_handle_1,
					  ompd_task_handle_t *task_handle_2, int *cmp_value)
{
	return ompd_rc_unsupported;
}

EXPORT ompd_rc_t ompd_get_task_function(ompd_task_handle_t *task_handle,
					ompd_address_t *entry_point)
{
	return ompd_rc_unavailable;
}

EXPORT ompd_rc_t ompd_get_task_frame(ompd_task_handle_t *task_handle,
				     ompd_frame_info_t *exit_frame, ompd_frame_info_t *enter_frame)
{
	return ompd_rc_unavailable;
}

EXPORT ompd_rc_t ompd_enumerate_states(ompd_address_space_handle_t *address_space_handle,
				       ompd_word_t current_state, ompd_word_t *next_state,
				       const char **next_state_name, ompd_word_t *more_enums)
{
	return ompd_rc_unsupported;
}

EXPORT ompd_rc_t ompd_get_state(ompd_thread_handle_t *thread_handle, ompd_word_t *state,
				ompd_wait_id_t *wait_id)
{
	return ompd_rc_unavailable;
}

EXPORT ompd_rc_t ompd_get_display_control_vars(ompd_address_space_handle_t *address_space_handle,
					       const char *const **control_vars)
{
	return ompd_rc_unsupported;
}

EXPORT ompd_rc_t ompd_rel_display_control_vars(const char *const **control_vars)
{
	return ompd_rc_unsupported;
}

EXPORT ompd_rc_t ompd_get_tool_data(void *handle, ompd_scope_t scope, ompd_word_t *value,
				    ompd_address_t *ptr)
{
	return ompd_rc_unsupported;
}

/* ICV ids: 1..nchecks are the checks, nchecks+1 the summary. */
static ompd_icv_id_t nicvs(void)
{
	return (ompd_icv_id_t)nchecks + 1;
}

EXPORT ompd_rc_t ompd_enumerate_icvs(ompd_address_space_handle_t *handle, ompd_icv_id_t current,
				     ompd_icv_id_t *next_id, const char **next_icv_name,
				     ompd_scope_t *next_scope, int *more)
{
	if (!handle || !next_id || !next_icv_name || !next_scope || !more)
		return ompd_rc_bad_input;
	if (current >= nicvs())
		return ompd_rc_bad_input;
	ompd_icv_id_t id = current + 1;
	*next_id = id;
	*next_icv_name = id <= nchecks ? checks[id - 1].name : "conformance/summary";
	*next_scope = ompd_scope_address_space;
	*more = id < nicvs();
	return ompd_rc_ok;
}

EXPORT ompd_rc_t ompd_get_icv_from_scope(void *handle, ompd_scope_t scope, ompd_icv_id_t icv_id,
					 ompd_word_t *icv_value)
{
	if (!handle || !icv_value)
		return ompd_rc_bad_input;
	if (scope != ompd_scope_address_space || icv_id < 1 || icv_id > nicvs())
		return ompd_rc_bad_input;
	*icv_value = icv_id <= nchecks ? checks[icv_id - 1].pass : (ompd_word_t)nfailed;
	return ompd_rc_ok;
}

EXPORT ompd_rc_t ompd_get_icv_string_from_scope(void *handle, ompd_scope_t scope,
						ompd_icv_id_t icv_id, const char **icv_string)
{
	if (!handle || !icv_string || !cb)
		return ompd_rc_bad_input;
	if (scope != ompd_scope_address_space || icv_id < 1 || icv_id > nicvs())
		return ompd_rc_bad_input;
	const char *s = icv_id <= nchecks ? checks[icv_id - 1].detail : summary_detail;
	size_t n = strlen(s) + 1;
	void *p = NULL;
	/* the host frees it: allocate through the host */
	if (CB_ALLOC(n, &p) != ompd_rc_ok || !p)
		return ompd_rc_nomem;
	memcpy(p, s, n);
	*icv_string = p;
	return ompd_rc_ok;
}

#endif
