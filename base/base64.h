/* SPDX-License-Identifier: MIT */
/**
 * @file base64.h
 * Base64 (RFC 4648, section 4: the standard alphabet, '=' padding), for bytes carried in
 * text lines: a per-node coreq sends its cores and documents back through srun's output,
 * which is line-oriented text (launch/relay.h). None of the libraries coreq links has it
 * (libdw, jansson, the compressors); OpenSSL's would be a dependency for 60 lines.
 */
#ifndef COREQ_BASE64_H
#define COREQ_BASE64_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** The characters cq_base64_encode writes for @p n bytes (without a NUL). */
static inline size_t cq_base64_len(size_t n)
{
	return (n + 2) / 3 * 4;
}

/** The value of base64 character @p c (0..63), -1 for one outside the alphabet ('=' too):
 * for decoders that take their input piece by piece (input/apport.c's streaming one). */
int cq_base64_value(unsigned char c);

/** @p n bytes of @p in as base64 into @p out (cq_base64_len(n) characters and a NUL). */
void cq_base64_encode(const uint8_t *in, size_t n, char *out);

/** The @p len characters @p in decoded into @p out (at least len / 4 * 3 bytes), the count
 * into *@p n; false for anything but whole, padded base64 (a length not a multiple of 4, a
 * character outside the alphabet, padding before the end). */
bool cq_base64_decode(const char *in, size_t len, uint8_t *out, size_t *n);

#endif
