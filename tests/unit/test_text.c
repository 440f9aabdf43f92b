/* SPDX-License-Identifier: MIT */
/* Escaping strings from a core for reports (base/text.h): what stays, what is escaped,
 * and invalid UTF-8 of every kind (stray bytes, truncated, overlong, surrogates, too large). */
#include <stdlib.h>

#include "check.h"
#include "base/text.h"

static void text_is(const char *in, const char *want)
{
	char *got = cq_text_escape(in);
	CHECK_STR(got, want);
	free(got);
}

static void json_is(const char *in, const char *want)
{
	char *got = cq_utf8_escape(in);
	CHECK_STR(got, want);
	free(got);
	json_t *j = cq_json_str(in);
	CHECK(j && json_is_string(j) && !strcmp(json_string_value(j), want));
	json_decref(j);
}

int main(void)
{
	/* plain text and valid UTF-8 stay as they are */
	text_is("/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6");
	text_is("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	json_is("caf\xc3\xa9 \xe2\x82\xac", "caf\xc3\xa9 \xe2\x82\xac");
	/* text: controls, newline, backslash, DEL, C1 controls */
	text_is("a\nsignal: 0", "a\\nsignal: 0");
	text_is("\x1b[2J\t\r\x07", "\\x1b[2J\\t\\r\\x07");
	text_is("back\\slash\x7f", "back\\\\slash\\x7f");
	text_is("csi\xc2\x9b" "1m", "csi\\u009b1m");
	/* an invalid byte is escaped once in text, whether the text is made from the raw
	 * string or from the JSON report's string (issue 16: "fi\\xffp" was printed) */
	text_is("fi\xffp", "fi\\xffp");
	text_is("fi\\xffp", "fi\\xffp");
	{
		char *j = cq_utf8_escape("fi\xffp\x1b\\n"), *t = cq_text_escape(j), *r = cq_text_escape("fi\xffp\x1b\\n");
		CHECK_STR(t, r);
		CHECK_STR(t, "fi\\xffp\\x1b\\\\n");
		free(j);
		free(t);
		free(r);
	}
	/* only lower-case \xNN with two hex digits is taken as an escape already made */
	text_is("\\x1", "\\\\x1");
	text_is("\\xFF", "\\\\xFF");
	text_is("\\xg0", "\\\\xg0");
	/* JSON: controls kept (the encoder escapes them), only invalid UTF-8 becomes \xNN */
	json_is("a\n\x1b", "a\n\x1b");
	json_is("odd\xff/libompd.so", "odd\\xff/libompd.so");
	/* every kind of invalid sequence, in both */
	text_is("\xc3", "\\xc3");                    /* truncated at the end */
	text_is("\xc3(", "\\xc3(");                  /* bad continuation */
	text_is("\xc0\xaf", "\\xc0\\xaf");           /* overlong '/' */
	text_is("\xe0\x80\xaf", "\\xe0\\x80\\xaf");  /* overlong, 3 bytes */
	text_is("\xed\xa0\x80", "\\xed\\xa0\\x80");  /* a surrogate */
	text_is("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"); /* past U+10FFFF */
	text_is("\x80\xbf", "\\x80\\xbf");           /* lone continuation bytes */
	json_is("\xc0\xaf", "\\xc0\\xaf");
	json_is("\xf8\x88\x80\x80\x80", "\\xf8\\x88\\x80\\x80\\x80");
	/* the largest expansion fits (6 bytes out per 2 in, 4 per 1) */
	char many[301];
	memset(many, '\xff', 300);
	many[300] = 0;
	char *e = cq_text_escape(many);
	CHECK(e && strlen(e) == 1200);
	free(e);
	CHECK(cq_text_escape(NULL) == NULL && cq_utf8_escape(NULL) == NULL && cq_json_str(NULL) == NULL);
	return check_report("test_text");
}
