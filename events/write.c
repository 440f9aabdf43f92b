/* SPDX-License-Identifier: MIT */
/* The "coreq-events/1" document written while the rings are read (events.h): the text
 * jansson writes for the same tree with JSON_INDENT(2) (the commands' layout), event by
 * event into one reused buffer, so a million events cost neither a tree nor an allocation
 * each. The header and the problems are small trees of their own, written by jansson at
 * their depth. cq_events_read() parses this text back: one writer of the document. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "events.h"

/* Written out whenever this much is buffered. */
#define FLUSH_AT (64u << 10)

struct out {
	FILE *f;
	char *p;
	size_t len, cap;
	bool failed; /* out of memory: written as it comes */
};

static void flush(struct out *o)
{
	if (o->len)
		fwrite(o->p, 1, o->len, o->f);
	o->len = 0;
}

static void put_slow(struct out *o, const char *s, size_t n)
{
	flush(o);
	if (n > o->cap && !o->failed) {
		size_t cap = n > 2 * FLUSH_AT ? n : 2 * FLUSH_AT;
		char *p = realloc(o->p, cap);
		if (p) {
			o->p = p;
			o->cap = cap;
		} else {
			o->failed = true;
		}
	}
	if (o->failed) {
		fwrite(s, 1, n, o->f);
		return;
	}
	memcpy(o->p, s, n);
	o->len = n;
}

static inline void put(struct out *o, const char *s, size_t n)
{
	if (o->len + n <= o->cap) {
		memcpy(o->p + o->len, s, n);
		o->len += n;
		return;
	}
	put_slow(o, s, n);
}

static void put_s(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

/* A new line at @p depth (2 spaces each), as jansson's indentation. */
static void newline(struct out *o, int depth)
{
	static const char spaces[] = "\n                                ";
	put(o, spaces, 1 + 2 * (size_t)depth);
}

static void put_int(struct out *o, int64_t v)
{
	char b[24], *e = b + sizeof(b), *p = e;
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
	do
		*--p = (char)('0' + u % 10);
	while ((u /= 10));
	if (v < 0)
		*--p = '-';
	put(o, p, (size_t)(e - p));
}

/* jansson's text of @p v (which the call owns) at @p depth: each line after the first
 * indented by it. */
static void put_json(struct out *o, json_t *v, int depth)
{
	char *t = v ? json_dumps(v, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY) : NULL;
	json_decref(v);
	const char *p = t ? t : "null";
	for (const char *nl; (nl = strchr(p, '\n')); p = nl + 1) {
		put(o, p, (size_t)(nl - p));
		newline(o, depth);
	}
	put_s(o, p);
	free(t);
}

/* Bytes a JSON string holds as they are (ASCII but controls, quote and backslash). */
static const bool plain[256] = {[0x20 ... 0x21] = true, [0x23 ... 0x5b] = true, [0x5d ... 0x7e] = true};

/* A JSON string of @p s, as cq_json_str() and jansson write it; null for NULL. */
static void put_str(struct out *o, const char *s)
{
	if (!s) {
		put(o, "null", 4);
		return;
	}
	size_t n = 0;
	while (plain[(unsigned char)s[n]])
		n++;
	if (s[n]) {
		put_json(o, cq_json_str(s), 0); /* escapes and other bytes: rare, jansson's */
		return;
	}
	put(o, "\"", 1);
	put(o, s, n);
	put(o, "\"", 1);
}

/* "0x..." (cq_hex_str's text), quoted. */
static void put_hex(struct out *o, uint64_t v)
{
	char b[20], *e = b + sizeof(b), *p = e;
	*--p = '"';
	do
		*--p = "0123456789abcdef"[v & 15];
	while ((v >>= 4));
	*--p = 'x';
	*--p = '0';
	*--p = '"';
	put(o, p, (size_t)(e - p));
}

/* A string literal's bytes. */
#define PUT_LIT(o, lit) put(o, lit, sizeof(lit) - 1)
/* An event's member (depth 5), not the first: its comma, line, indentation and key. */
#define MEMBER5(o, key) PUT_LIT(o, ",\n          \"" key "\": ")

/* Depths: the document's members 1, a ring 2 (its members 3), an event 4 (members 5,
 * those of code and fields 6). */

/* `"name": ` of an object member at @p depth, after a comma unless it is the first. */
static void member(struct out *o, int depth, bool first, const char *name)
{
	if (!first)
		put(o, ",", 1);
	newline(o, depth);
	put_str(o, name);
	put(o, ": ", 2);
}

static void put_event(struct out *o, const struct cq_event *e, bool first)
{
	if (first)
		PUT_LIT(o, "\n        {\n          \"seq\": ");
	else
		PUT_LIT(o, ",\n        {\n          \"seq\": ");
	put_int(o, (int64_t)e->seq);
	MEMBER5(o, "time_ns");
	put_int(o, (int64_t)e->time_ns);
	MEMBER5(o, "kind");
	if (e->kind_name)
		put_str(o, e->kind_name);
	else
		put_int(o, (int64_t)e->kind);
	MEMBER5(o, "phase");
	put_str(o, e->phase);
	MEMBER5(o, "flags");
	put_int(o, e->flags);
	MEMBER5(o, "a");
	put_hex(o, e->a);
	MEMBER5(o, "b");
	put_hex(o, e->b);
	MEMBER5(o, "c");
	put_hex(o, e->c);
	MEMBER5(o, "d");
	put_hex(o, e->d);
	MEMBER5(o, "code");
	PUT_LIT(o, "{\n            \"address\": ");
	put_hex(o, e->code);
	PUT_LIT(o, ",\n            \"symbol\": ");
	put_str(o, e->symbol);
	PUT_LIT(o, "\n          }");
	if (e->named) {
		MEMBER5(o, "fields");
		put(o, "{", 1);
		for (unsigned i = 0; i < e->nfields; i++) {
			const struct cq_event_field *f = &e->fields[i];
			member(o, 6, i == 0, f->name);
			if (f->type == CQ_EVENT_INT)
				put_int(o, f->i);
			else
				put_str(o, f->type == CQ_EVENT_STR ? f->s : NULL);
		}
		if (e->nfields)
			newline(o, 5);
		put(o, "}", 1);
	}
	PUT_LIT(o, "\n        }");
}

static void put_ring(struct out *o, struct cq_events *ev, size_t i, unsigned last)
{
	struct cq_events_ring r;
	cq_events_ring(ev, i, last, &r);
	if (i)
		put(o, ",", 1);
	newline(o, 2);
	put(o, "{", 1);
	member(o, 3, true, "address");
	put_hex(o, r.address);
	if (r.has_ids) {
		member(o, 3, false, "tid");
		put_int(o, (int64_t)r.tid);
		member(o, 3, false, "thread_data");
		put_int(o, (int64_t)r.thread_data);
		member(o, 3, false, "head");
		put_int(o, (int64_t)r.head);
	}
	if (r.error) {
		member(o, 3, false, "error");
		put_str(o, r.error);
	} else {
		member(o, 3, false, "recorded");
		put_int(o, (int64_t)r.head);
		member(o, 3, false, "kept");
		put_int(o, (int64_t)r.kept);
		member(o, 3, false, "torn");
		put_int(o, (int64_t)r.torn);
		member(o, 3, false, "events");
		put(o, "[", 1);
		const struct cq_event *e;
		bool any = false;
		for (; (e = cq_events_next(ev)); any = true) {
			put_event(o, e, !any);
			if (o->len >= FLUSH_AT)
				flush(o);
		}
		if (any)
			newline(o, 3);
		put(o, "]", 1);
	}
	member(o, 3, false, "slot");
	put_int(o, r.slot);
	newline(o, 2);
	put(o, "}", 1);
}

struct cq_error *cq_events_write_json(struct cq_core *core, unsigned last, FILE *f, size_t *nproblems)
{
	struct cq_events *ev;
	struct cq_error *err = cq_events_open(core, &ev);
	if (err)
		return err;
	struct out o = {.f = f};
	put(&o, "{", 1);
	member(&o, 1, true, "schema");
	put_str(&o, "coreq-events/1");
	member(&o, 1, false, "core");
	put_str(&o, core->name);
	member(&o, 1, false, "arch");
	put_str(&o, core->target->name);
	member(&o, 1, false, "recorder");
	put_json(&o, json_incref(cq_events_recorder(ev)), 1);
	member(&o, 1, false, "threads");
	put(&o, "[", 1);
	size_t n = cq_events_nrings(ev);
	for (size_t i = 0; i < n; i++)
		put_ring(&o, ev, i, last);
	if (n)
		newline(&o, 1);
	put(&o, "]", 1);
	member(&o, 1, false, "problems");
	json_t *problems = cq_events_problems(ev);
	*nproblems = json_array_size(problems);
	put_json(&o, json_incref(problems), 1);
	newline(&o, 0);
	put(&o, "}", 1);
	flush(&o);
	free(o.p);
	cq_events_close(ev);
	return NULL;
}

struct cq_error *cq_events_read(struct cq_core *core, unsigned last, json_t **ret)
{
	char *text = NULL;
	size_t len = 0, nproblems;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return &cq_error_nomem;
	struct cq_error *err = cq_events_write_json(core, last, f, &nproblems);
	if (fclose(f) && !err)
		err = &cq_error_nomem;
	if (!err && !(*ret = json_loadb(text, len, 0, NULL)))
		err = &cq_error_nomem;
	free(text);
	return err;
}
