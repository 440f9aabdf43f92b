/* SPDX-License-Identifier: MIT */
/* `coreq events CORE [EXE]`: the flight recorder's last events of every thread, written as
 * the rings are read (events/events.h): a core of a million events needs no tree of them. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "cli.h"
#include "events/events.h"

/* @p s escaped for the terminal as the JSON document's string of it would be (cq_esc of
 * cq_utf8_escape: an invalid byte shows as "\xNN" once), or NULL. */
static const char *esc(const char *s)
{
	if (!s || cq_text_plain(s, false))
		return s ? cq_esc(s) : NULL;
	char *u = cq_utf8_escape(s);
	const char *r = cq_esc(u ? u : s);
	free(u);
	return r;
}

static const char *hex(char b[19], uint64_t v)
{
	return cq_hex_str(b, v);
}

/* One event's line: "name=value" for each named field (null ones left out), else the raw
 * slots. A million lines: one printf each, the rest put as they are. */
static void print_event(const struct cq_event *e, const char *indent)
{
	char kind[32];
	if (e->kind_name)
		snprintf(kind, sizeof(kind), "%s", esc(e->kind_name));
	else
		snprintf(kind, sizeof(kind), "kind %lld", (long long)e->kind);
	printf("%s#%-6lld +%.6f s  %-22s %-6s ", indent, (long long)e->seq, (double)(int64_t)e->time_ns / 1e9,
	       kind, e->phase);
	if (!e->named) {
		char a[19], b[19], c[19], d[19], code[19];
		const char *sym = esc(e->symbol);
		printf("a=%s b=%s c=%s d=%s  %s%s%s\n", hex(a, e->a), hex(b, e->b), hex(c, e->c), hex(d, e->d),
		       sym ? sym : hex(code, e->code), sym ? " " : "", sym ? hex(code, e->code) : "");
		return;
	}
	bool first = true;
	for (unsigned i = 0; i < e->nfields; i++) {
		const struct cq_event_field *f = &e->fields[i];
		if (f->type == CQ_EVENT_NULL)
			continue;
		if (!first)
			putchar_unlocked(' ');
		first = false;
		fputs_unlocked(esc(f->name), stdout);
		putchar_unlocked('=');
		if (f->type == CQ_EVENT_INT) {
			char b[24], *end = b + sizeof(b), *p = end;
			uint64_t u = f->i < 0 ? -(uint64_t)f->i : (uint64_t)f->i;
			do
				*--p = (char)('0' + u % 10);
			while ((u /= 10));
			if (f->i < 0)
				*--p = '-';
			fwrite_unlocked(p, 1, (size_t)(end - p), stdout);
		} else {
			fputs_unlocked(esc(f->s), stdout);
		}
	}
	putchar_unlocked('\n');
}

static uint64_t hex_value(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? strtoull(s, NULL, 16) : 0;
}

void cq_events_print_thread(json_t *ring, const char *indent)
{
	/* the document's events (`coreq ompd`'s recent_events) printed as `coreq events` does */
	json_t *j, *v;
	size_t i;
	const char *k;
	json_array_foreach(json_object_get(ring, "events"), i, j) {
		struct cq_event e = {0};
		json_t *kind = json_object_get(j, "kind"), *code = json_object_get(j, "code");
		json_t *fields = json_object_get(j, "fields");
		e.seq = (uint64_t)json_integer_value(json_object_get(j, "seq"));
		e.time_ns = (uint64_t)json_integer_value(json_object_get(j, "time_ns"));
		e.kind_name = json_string_value(kind);
		e.kind = (uint64_t)json_integer_value(kind);
		e.phase = json_string_value(json_object_get(j, "phase"));
		e.a = hex_value(j, "a");
		e.b = hex_value(j, "b");
		e.c = hex_value(j, "c");
		e.d = hex_value(j, "d");
		e.code = hex_value(code, "address");
		e.symbol = json_string_value(json_object_get(code, "symbol"));
		e.named = fields != NULL;
		json_object_foreach(fields, k, v) {
			if (e.nfields == CQ_EVENT_MAX_FIELDS)
				break;
			struct cq_event_field *f = &e.fields[e.nfields++];
			f->name = k;
			f->type = json_is_integer(v) ? CQ_EVENT_INT : json_is_string(v) ? CQ_EVENT_STR : CQ_EVENT_NULL;
			f->i = json_integer_value(v);
			f->s = json_string_value(v);
		}
		print_event(&e, indent);
	}
}

static void print_text(struct cq_core *core, struct cq_events *ev, unsigned last)
{
	json_t *h = cq_events_recorder(ev), *p;
	printf("core:     %s (%s)\nrecorder: %s in %s, format %lld, %s-endian, %lld-byte words, %lld records per ring\n",
	       esc(core->name), esc(core->target->name), esc(json_string_value(json_object_get(h, "producer"))),
	       esc(json_string_value(json_object_get(h, "image"))),
	       (long long)json_integer_value(json_object_get(h, "version")),
	       esc(json_string_value(json_object_get(h, "byte_order"))),
	       (long long)json_integer_value(json_object_get(h, "word_size")),
	       (long long)json_integer_value(json_object_get(h, "ring_records")));
	for (size_t i = 0; i < cq_events_nrings(ev); i++) {
		struct cq_events_ring r;
		cq_events_ring(ev, i, last, &r);
		printf("thread %lld: %lld recorded, %lld kept, %lld torn%s%s\n", r.has_ids ? (long long)r.tid : 0LL,
		       r.error ? 0LL : (long long)r.head, (long long)r.kept, (long long)r.torn, r.error ? ": " : "",
		       r.error ? esc(r.error) : "");
		const struct cq_event *e;
		while ((e = cq_events_next(ev)))
			print_event(e, "  ");
	}
	size_t i;
	json_array_foreach(cq_events_problems(ev), i, p)
		printf("problem: %s: %s\n", esc(json_string_value(json_object_get(p, "item"))),
		       esc(json_string_value(json_object_get(p, "message"))));
}

int cq_cmd_events(struct cq_cli *cli)
{
	struct cq_core *core;
	int rc = cq_open_core(cli, true, &core);
	if (rc)
		return rc;
	unsigned last = cli->last ? cli->last : CQ_EVENTS_DEFAULT_LAST;
	size_t nproblems = 0;
	struct cq_error *err;
	if (cli->json) {
		if (!(err = cq_events_write_json(core, last, stdout, &nproblems)))
			fputc('\n', stdout);
	} else {
		struct cq_events *ev;
		if (!(err = cq_events_open(core, &ev))) {
			print_text(core, ev, last);
			nproblems = json_array_size(cq_events_problems(ev));
			cq_events_close(ev);
		}
	}
	/* --pid: what was written is not the process's if it ran again (the bound) or died
	 * while it was read (the output streams: said after it, exit 12) */
	if (!err)
		err = cq_process_check(core);
	cq_core_close(core);
	if (err)
		return cq_fail(err);
	return nproblems ? CQ_EXIT_PARTIAL : CQ_EXIT_OK;
}
