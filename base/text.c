/* SPDX-License-Identifier: MIT */
/* Escaping strings from a core for reports (text.h). */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

/* Length of the valid UTF-8 sequence at @p p (1..4), or 0 if the bytes there are not one
 * (overlong forms, surrogates and code points past U+10FFFF are invalid too). */
static size_t utf8_len(const unsigned char *p, uint32_t *cp)
{
	unsigned char c = p[0];
	size_t n;
	uint32_t v, min;
	if (c < 0x80) {
		*cp = c;
		return 1;
	} else if ((c & 0xe0) == 0xc0) {
		n = 2, v = c & 0x1f, min = 0x80;
	} else if ((c & 0xf0) == 0xe0) {
		n = 3, v = c & 0x0f, min = 0x800;
	} else if ((c & 0xf8) == 0xf0) {
		n = 4, v = c & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (p[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return n;
}

static bool is_lower_hex(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

bool cq_text_plain(const char *s, bool text)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p >= 0x80 || (text && (*p < 0x20 || *p == 0x7f || *p == '\\')))
			return false;
	return true;
}

static char *escape(const char *s, bool text)
{
	if (!s)
		return NULL;
	/* names and paths are nearly always plain: a copy, without the worst-case buffer */
	if (cq_text_plain(s, text))
		return strdup(s);
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s);
	char *out = malloc(len * 6 + 1), *o = out; /* "\u0080" is the longest: 6 per 2 bytes */
	if (!out)
		return NULL;
	while (*p) {
		uint32_t cp;
		size_t n = utf8_len(p, &cp);
		if (!n) {
			o += sprintf(o, "\\x%02x", *p++);
			continue;
		}
		if (text && cp == '\\' && p[1] == 'x' && is_lower_hex(p[2]) && is_lower_hex(p[3])) {
			/* "\xNN" is how a JSON report (cq_utf8_escape) already wrote an invalid
			 * byte; text printed from a report keeps it, so the byte is escaped once
			 * ("fi\xffp", not "fi\\xffp"). A literal backslash-x-hex in a name reads
			 * the same, as it does in JSON. */
			memcpy(o, p, 4);
			o += 4;
			p += 4;
			continue;
		}
		if (text && cp < 0x80 && (cp < 0x20 || cp == 0x7f || cp == '\\')) {
			const char *e = cp == '\n' ? "\\n" : cp == '\t' ? "\\t" : cp == '\r' ? "\\r" : cp == '\\' ? "\\\\" : NULL;
			if (e)
				o += sprintf(o, "%s", e);
			else
				o += sprintf(o, "\\x%02x", (unsigned)cp);
			p++;
			continue;
		}
		if (text && cp >= 0x80 && cp <= 0x9f) {
			o += sprintf(o, "\\u%04x", (unsigned)cp);
			p += n;
			continue;
		}
		memcpy(o, p, n);
		o += n;
		p += n;
	}
	*o = 0;
	return out;
}

char *cq_utf8_escape(const char *s)
{
	return escape(s, false);
}

char *cq_text_escape(const char *s)
{
	return escape(s, true);
}

json_t *cq_json_str(const char *s)
{
	if (!s)
		return NULL;
	if (cq_text_plain(s, false))
		return json_string_nocheck(s); /* ASCII: valid UTF-8, nothing to escape */
	char *e = cq_utf8_escape(s);
	json_t *j = e ? json_string(e) : NULL;
	free(e);
	return j;
}

const char *cq_hex_str(char b[19], uint64_t v)
{
	char *p = b + 18;
	*p = 0;
	do
		*--p = "0123456789abcdef"[v & 15];
	while (v >>= 4);
	*--p = 'x';
	*--p = '0';
	return p;
}

json_t *cq_json_hex(uint64_t v)
{
	char b[19];
	const char *p = cq_hex_str(b, v);
	return json_stringn_nocheck(p, (size_t)(b + 18 - p));
}

void cq_json_problem(json_t *problems, const char *item, const char *fmt, ...)
{
	va_list ap;
	char *m = NULL;
	va_start(ap, fmt);
	if (vasprintf(&m, fmt, ap) < 0)
		m = NULL;
	va_end(ap);
	json_array_append_new(problems, json_pack("{s:o, s:o}", "item", cq_json_str(item), "message",
						  cq_json_str(m ? m : "?")));
	free(m);
}
