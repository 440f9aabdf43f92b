/* SPDX-License-Identifier: MIT */
/* Base64 (base/base64.h): RFC 4648's test vectors (section 10), every length's padding
 * round trip, and what is not base64 refused. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "base/base64.h"

static void vector(const char *in, const char *want)
{
	char out[64];
	cq_base64_encode((const uint8_t *)in, strlen(in), out);
	CHECK_STR(out, want);
	CHECK(cq_base64_len(strlen(in)) == strlen(want));
	uint8_t back[64];
	size_t n;
	CHECK(cq_base64_decode(want, strlen(want), back, &n) && n == strlen(in) && !memcmp(back, in, n));
}

int main(void)
{
	vector("", "");
	vector("f", "Zg==");
	vector("fo", "Zm8=");
	vector("foo", "Zm9v");
	vector("foob", "Zm9vYg==");
	vector("fooba", "Zm9vYmE=");
	vector("foobar", "Zm9vYmFy");
	/* every byte value, every length up to 300 */
	uint8_t all[300], back[300];
	char text[404];
	for (int i = 0; i < 300; i++)
		all[i] = (uint8_t)(i * 7 + 3);
	for (size_t len = 0; len <= 300; len++) {
		size_t n;
		cq_base64_encode(all, len, text);
		CHECK(strlen(text) == cq_base64_len(len));
		CHECK(cq_base64_decode(text, strlen(text), back, &n) && n == len && !memcmp(back, all, len));
	}
	/* not base64: a stray length, a character outside the alphabet, padding inside */
	size_t n;
	CHECK(!cq_base64_decode("Zm9", 3, back, &n));
	CHECK(!cq_base64_decode("Zm9*", 4, back, &n));
	CHECK(!cq_base64_decode("Zg==Zm9v", 8, back, &n));
	CHECK(!cq_base64_decode("Z===", 4, back, &n));
	CHECK(!cq_base64_decode("Zm 9", 4, back, &n));
	return check_report("test_base64");
}
