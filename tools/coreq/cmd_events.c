/* SPDX-License-Identifier: MIT */
/* `coreq events CORE [EXE]`: the flight recorder's last events of every thread. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "events/events.h"

/* A string of the document, escaped for the terminal (cq_esc), or NULL. */
static const char *str(json_t *o, const char *k)
{
	const char *v = json_string_value(json_object_get(o, k));
	return v ? cq_esc(v) : NULL;
}

/* "name=value" for each named field (null ones left out), else the raw slots */
static void print_fields(json_t *e)
{
	json_t *fields = json_object_get(e, "fields"), *v, *code = json_object_get(e, "code");
	const char *k;
	if (!fields) {
		printf("a=%s b=%s c=%s d=%s  %s%s%s", str(e, "a"), str(e, "b"), str(e, "c"), str(e, "d"),
		       str(code, "symbol") ? str(code, "symbol") : str(code, "address"),
		       str(code, "symbol") ? " " : "", str(code, "symbol") ? str(code, "address") : "");
		return;
	}
	bool first = true;
	json_object_foreach(fields, k, v) {
		if (json_is_null(v))
			continue;
		printf("%s%s=", first ? "" : " ", cq_esc(k));
		first = false;
		if (json_is_integer(v))
			printf("%lld", (long long)json_integer_value(v));
		else
			fputs(cq_esc(json_string_value(v)), stdout);
	}
}

void cq_events_print_thread(json_t *ring, const char *indent)
{
	json_t *e;
	size_t i;
	json_array_foreach(json_object_get(ring, "events"), i, e) {
		json_t *k = json_object_get(e, "kind");
		char kind[32];
		if (json_is_string(k))
			snprintf(kind, sizeof(kind), "%s", cq_esc(json_string_value(k)));
		else
			snprintf(kind, sizeof(kind), "kind %lld", (long long)json_integer_value(k));
		printf("%s#%-6lld +%.6f s  %-22s %-6s ", indent,
		       (long long)json_integer_value(json_object_get(e, "seq")),
		       (double)json_integer_value(json_object_get(e, "time_ns")) / 1e9, kind, str(e, "phase"));
		print_fields(e);
		putchar('\n');
	}
}

int cq_cmd_events(struct cq_cli *cli)
{
	struct cq_core *core;
	int rc = cq_open_core(cli, true, &core);
	if (rc)
		return rc;
	json_t *doc;
	struct cq_error *err = cq_events_read(core, cli->last ? cli->last : CQ_EVENTS_DEFAULT_LAST, &doc);
	if (err) {
		cq_core_close(core);
		return cq_fail(err);
	}
	rc = json_array_size(json_object_get(doc, "problems")) ? CQ_EXIT_PARTIAL : CQ_EXIT_OK;
	if (cli->json) {
		cq_emit_json(doc);
	} else {
		json_t *h = json_object_get(doc, "recorder"), *r, *p;
		size_t i;
		printf("core:     %s (%s)\nrecorder: %s in %s, format %lld, %s-endian, %lld-byte words, %lld records per ring\n",
		       str(doc, "core"), str(doc, "arch"), str(h, "producer"), str(h, "image"),
		       (long long)json_integer_value(json_object_get(h, "version")), str(h, "byte_order"),
		       (long long)json_integer_value(json_object_get(h, "word_size")),
		       (long long)json_integer_value(json_object_get(h, "ring_records")));
		json_array_foreach(json_object_get(doc, "threads"), i, r) {
			printf("thread %lld: %lld recorded, %lld kept, %lld torn%s%s\n",
			       (long long)json_integer_value(json_object_get(r, "tid")),
			       (long long)json_integer_value(json_object_get(r, "recorded")),
			       (long long)json_integer_value(json_object_get(r, "kept")),
			       (long long)json_integer_value(json_object_get(r, "torn")),
			       str(r, "error") ? ": " : "", str(r, "error") ? str(r, "error") : "");
			cq_events_print_thread(r, "  ");
		}
		json_array_foreach(json_object_get(doc, "problems"), i, p)
			printf("problem: %s: %s\n", str(p, "item"), str(p, "message"));
		json_decref(doc);
	}
	cq_core_close(core);
	return rc;
}
