/* SPDX-License-Identifier: MIT */
/* Base64, RFC 4648 section 4 (base64.h). */
#include "base64.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void cq_base64_encode(const uint8_t *in, size_t n, char *out)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)in[i + 1] << 8;
		if (i + 2 < n)
			v |= in[i + 2];
		out[o++] = alphabet[v >> 18 & 63];
		out[o++] = alphabet[v >> 12 & 63];
		out[o++] = i + 1 < n ? alphabet[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? alphabet[v & 63] : '=';
	}
	out[o] = 0;
}

int cq_base64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '+' ? 62 : c == '/' ? 63 : -1;
}

bool cq_base64_decode(const char *in, size_t len, uint8_t *out, size_t *n)
{
	*n = 0;
	if (len % 4)
		return false;
	for (size_t i = 0; i < len; i += 4) {
		bool last = i + 4 == len;
		int pad = last ? (in[i + 3] == '=') + (in[i + 2] == '=' && in[i + 3] == '=') : 0;
		uint32_t v = 0;
		for (int k = 0; k < 4; k++) {
			int x = k >= 4 - pad ? 0 : cq_base64_value((unsigned char)in[i + k]);
			if (x < 0)
				return false;
			v = v << 6 | (uint32_t)x;
		}
		out[(*n)++] = (uint8_t)(v >> 16);
		if (pad < 2)
			out[(*n)++] = (uint8_t)(v >> 8);
		if (pad < 1)
			out[(*n)++] = (uint8_t)v;
	}
	return true;
}
