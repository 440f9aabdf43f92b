/* SPDX-License-Identifier: MIT */
/* `coreq mqd CORE`: the MPI message queues of one rank through the MPI library's MQD DLL. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mqd/host.h"

static const char *str(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* "3", "any" */
static void print_rank(json_t *v)
{
	if (json_is_integer(v))
		printf("%lld", (long long)json_integer_value(v));
	else
		printf("%s", json_is_string(v) ? json_string_value(v) : "?");
}

static void print_queue(const char *label, json_t *q)
{
	const char *state = str(q, "state");
	printf("  %-11s", label);
	if (!state || strcmp(state, "listed") != 0) {
		printf("%s%s%s\n", state && !strcmp(state, "no_information") ? "no information" :
				   "error", str(q, "why") || str(q, "error") ? ": " : "",
		       str(q, "why") ? str(q, "why") : str(q, "error") ? str(q, "error") : "");
		return;
	}
	json_t *ops = json_object_get(q, "operations"), *op;
	size_t i;
	printf("%zu\n", json_array_size(ops));
	json_array_foreach(ops, i, op) {
		printf("    %-8s peer ", str(op, "status") ? str(op, "status") : "?");
		print_rank(json_object_get(op, "peer"));
		printf(" (world ");
		print_rank(json_object_get(op, "peer_global"));
		printf(") tag ");
		print_rank(json_object_get(op, "tag"));
		printf(" length %lld buffer %s%s", (long long)json_integer_value(json_object_get(op, "length")),
		       str(op, "buffer"), json_is_true(json_object_get(op, "system_buffer")) ? " (system)" : "");
		json_t *a = json_object_get(op, "actual");
		if (a) {
			printf("; actual peer ");
			print_rank(json_object_get(a, "peer_global"));
			printf(" tag ");
			print_rank(json_object_get(a, "tag"));
			printf(" length %lld", (long long)json_integer_value(json_object_get(a, "length")));
		}
		json_t *e;
		size_t k;
		json_array_foreach(json_object_get(op, "extra"), k, e)
			printf(" [%s]", json_string_value(e));
		printf("\n");
		json_array_foreach(json_object_get(op, "flags"), k, e)
			printf("      flag: %s\n", json_string_value(e));
	}
	if (str(q, "cut"))
		printf("    %s\n", str(q, "cut"));
}

void cq_mqd_print_rank(json_t *doc)
{
	json_t *dll = json_object_get(doc, "dll");
	printf("core:     %s (%s), pid %lld, rank ", str(doc, "core"), str(doc, "arch"),
	       (long long)json_integer_value(json_object_get(doc, "pid")));
	print_rank(json_object_get(doc, "rank"));
	printf("\ndll:      %s (%s)\n          %s, compatibility %lld, %lld-byte addresses, %s\n",
	       str(dll, "path"), str(dll, "source"), str(dll, "version") ? str(dll, "version") : "no version",
	       (long long)json_integer_value(json_object_get(dll, "compatibility")),
	       (long long)json_integer_value(json_object_get(dll, "taddr_width")),
	       str(json_object_get(dll, "run"), "ended"));
	json_t *c;
	size_t i;
	json_array_foreach(json_object_get(doc, "communicators"), i, c) {
		printf("communicator %s (id %lld): size %lld, local rank %lld, group",
		       str(c, "name")[0] ? str(c, "name") : "(unnamed)",
		       (long long)json_integer_value(json_object_get(c, "id")),
		       (long long)json_integer_value(json_object_get(c, "size")),
		       (long long)json_integer_value(json_object_get(c, "local_rank")));
		json_t *g = json_object_get(c, "group"), *m;
		size_t k;
		if (json_is_array(g))
			json_array_foreach(g, k, m)
				printf(" %lld", (long long)json_integer_value(m));
		else
			printf(" unknown (%s)", str(c, "group_error") ? str(c, "group_error") : "?");
		printf("\n");
		json_t *q = json_object_get(c, "queues");
		print_queue("sends:", json_object_get(q, "sends"));
		print_queue("receives:", json_object_get(q, "receives"));
		print_queue("unexpected:", json_object_get(q, "unexpected"));
	}
	json_t *p = json_object_get(doc, "problems");
	if (json_array_size(p)) {
		printf("\nproblems (%zu):\n", json_array_size(p));
		json_array_foreach(p, i, c)
			printf("  %s: %s\n", str(c, "item"), str(c, "message"));
	}
}

int cq_cmd_mqd(struct cq_cli *cli)
{
	if (cli->nargs != 1) {
		fprintf(stderr, "coreq: usage: coreq mqd CORE [--exe EXE] [--types DONOR] [--mqd-plugin DLL]\n");
		return CQ_EXIT_USAGE;
	}
	struct cq_core *core;
	int rc = cq_open_core(cli, false, &core);
	if (rc)
		return rc;
	json_t *doc;
	struct cq_error *err = cq_mqd_report(core, &cli->mqd, &doc);
	if (err) {
		cq_core_close(core);
		return cq_fail(err);
	}
	rc = json_array_size(json_object_get(doc, "problems")) ? CQ_EXIT_PARTIAL : CQ_EXIT_OK;
	if (cli->json) {
		cq_emit_json(doc);
	} else {
		cq_mqd_print_rank(doc);
		json_decref(doc);
	}
	if (rc)
		fprintf(stderr, "coreq: analysis incomplete: problems listed in the output\n");
	cq_core_close(core);
	return rc;
}
