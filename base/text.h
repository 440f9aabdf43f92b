/* SPDX-License-Identifier: MIT */
/**
 * @file text.h
 * Strings from a core (paths, names, arguments, symbol names) are data from a possibly
 * hostile process: they reach every report, escaped so that they can neither break the
 * report's format nor drive the reader's terminal.
 *
 * JSON keeps a string as it is when it is valid UTF-8 (control characters are escaped by
 * the JSON encoder); each byte of an invalid UTF-8 sequence becomes the four characters
 * "\xNN", so a name with one stray byte is still reported, not dropped. Text escapes
 * backslashes ("\\"), newline, tab and carriage return ("\n", "\t", "\r"), other C0
 * controls, DEL and invalid bytes ("\xNN") and the C1 controls U+0080..U+009F ("\u0080"),
 * so a forged line or an escape sequence shows as what it is. Text is mostly printed from a
 * JSON report's strings: a "\xNN" already there (an invalid byte cq_utf8_escape wrote) is
 * kept, not escaped again, so each byte shows escaped once ("fi\xffp") however the string
 * reached the printer; other backslashes are doubled.
 */
#ifndef COREQ_TEXT_H
#define COREQ_TEXT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/** @p s for JSON: valid UTF-8 kept, invalid bytes as "\xNN"; caller frees; NULL for NULL. */
char *cq_utf8_escape(const char *s);

/** @p s for a text report or a terminal (see above); caller frees; NULL for NULL. */
char *cq_text_escape(const char *s);

/** Whether @p s needs no escaping: ASCII, and for a text report (@p text) also free of
 * control characters and backslashes. cq_utf8_escape() (cq_text_escape()) returns such a
 * string unchanged. */
bool cq_text_plain(const char *s, bool text);

/** A JSON string of @p s through cq_utf8_escape() (never NULL for a string, as
 * json_string() is for invalid UTF-8); NULL for NULL, as json_string(). */
json_t *cq_json_str(const char *s);

/** "0x" and @p v in lower-case hex, no leading zeros ("0x0" for 0), as a JSON string: the
 * form of every address in the reports. Not printf: a backtrace formats thousands. */
json_t *cq_json_hex(uint64_t v);

/** The same text in @p b, for reports printed straight as text; returns where it starts in
 * @p b. */
const char *cq_hex_str(char b[19], uint64_t v);

/** Append {"item": @p item, "message": printf(@p fmt, ...)} to the JSON array @p problems,
 * both through cq_json_str() (the reports' common "problems" entry). */
void cq_json_problem(json_t *problems, const char *item, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
