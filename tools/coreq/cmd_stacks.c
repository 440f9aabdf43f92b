/* SPDX-License-Identifier: MIT */
/* coreq stacks: the stacks of many processes merged into one prefix tree (job/tree.h).
 * Each input is a core (walked here), a `coreq bt --json` document or a merged tree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "corelib/text.h"
#include "job/tree.h"
#include "stack/stack.h"

/* The bt document of the core @p path, or NULL with *@p err. */
static json_t *walk_core(struct cq_cli *cli, const char *path, struct cq_error **err)
{
	struct cq_core *core;
	if ((*err = cq_core_open(path, &cli->opts, &core)))
		return NULL;
	struct cq_error *lerr = cq_core_load_images(core);
	if (lerr) {
		cq_core_problem(core, "images", "%s", lerr->message);
		cq_error_destroy(lerr);
	}
	json_t *bt = NULL;
	struct cq_stack_options opt = {.max_frames = cli->max_frames};
	if (!(*err = cq_stack_walk(core, &opt, &bt))) {
		cq_bt_task(core, bt);
		/* the core's own problems (missing files) go with the stacks' */
		json_t *problems = json_object_get(bt, "problems"), *p;
		json_t *core_problems = cq_json_problems(core);
		size_t i;
		json_array_foreach(core_problems, i, p)
			json_array_append(problems, p);
		json_decref(core_problems);
	}
	cq_core_close(core);
	return bt;
}

int cq_cmd_stacks(struct cq_cli *cli)
{
	if (cli->nargs < 1) {
		fprintf(stderr, "coreq: usage: coreq stacks CORE|BT.json|TREE.json... [--threads] "
				"[--by function|line|module] [--json] [--dot FILE] [--svg FILE]\n");
		return CQ_EXIT_USAGE;
	}
	struct cq_tree *t = cq_tree_create(cli->tree_by, cli->all_threads);
	if (!t)
		return CQ_EXIT_INTERNAL;
	int failed = 0, rc = CQ_EXIT_OK;
	char *first_why = NULL;
	json_t *failures = json_array();
	for (int i = 0; i < cli->nargs; i++) {
		const char *path = cli->args[i];
		struct cq_error *err = NULL;
		char *why = NULL;
		json_t *doc;
		if (cq_is_json_input(path)) {
			doc = cq_load_doc(path, &why);
			const char *schema = json_string_value(json_object_get(doc, "schema"));
			if (doc && schema && !strcmp(schema, "coreq-stacks/1"))
				err = cq_tree_add_tree(t, doc, path);
			else if (doc)
				err = cq_tree_add_bt(t, doc, path);
		} else {
			doc = walk_core(cli, path, &err);
			if (doc)
				err = cq_tree_add_bt(t, doc, path);
		}
		json_decref(doc);
		if (err && !why) {
			why = strdup(err->message);
			if (err->code == CQ_ERR_NOMEM || (err->code == CQ_ERR_USAGE && strstr(err->message, "numbered by")))
				rc = err->code == CQ_ERR_NOMEM ? CQ_EXIT_INTERNAL : CQ_EXIT_USAGE;
		}
		cq_error_destroy(err);
		if (why) {
			failed++;
			json_array_append_new(failures, json_pack("{s:o, s:o}", "input", cq_json_str(path), "error",
								  cq_json_str(why)));
			if (!first_why)
				first_why = why;
			else
				free(why);
		}
		if (rc)
			break; /* inputs that cannot be merged, or out of memory: nothing sound to show */
	}
	if (!rc && failed == cli->nargs) {
		fprintf(stderr, "coreq: no input could be merged (%d of %d failed); the first: %s\n", failed,
			cli->nargs, cq_esc(first_why ? first_why : "?"));
		rc = CQ_EXIT_IO;
	}
	if (rc) {
		if (rc == CQ_EXIT_USAGE)
			fprintf(stderr, "coreq: %s\n", cq_esc(first_why ? first_why : "?"));
		free(first_why);
		json_decref(failures);
		cq_tree_destroy(t);
		return rc;
	}
	free(first_why);
	json_t *out = cq_tree_json(t);
	cq_tree_destroy(t);
	if (!out) {
		json_decref(failures);
		return CQ_EXIT_INTERNAL;
	}
	json_object_set_new(out, "failed", failures);
	rc = failed || json_array_size(json_object_get(out, "problems")) ? CQ_EXIT_PARTIAL : CQ_EXIT_OK;
	if (cli->dot || cli->svg) {
		int grc = cq_write_graph(cli, cq_tree_dot(out));
		if (grc > rc)
			rc = grc;
	}
	if (cli->json) {
		cq_emit_json(out);
		return rc;
	}
	const char *nc = getenv("NO_COLOR");
	cq_tree_print(out, stdout, isatty(STDOUT_FILENO) && !(nc && *nc));
	json_t *f;
	size_t i;
	json_array_foreach(json_object_get(out, "failed"), i, f)
		printf("%s  %s: %s\n", i ? "" : "\nfailed:\n", cq_esc(json_string_value(json_object_get(f, "input"))),
		       cq_esc(json_string_value(json_object_get(f, "error"))));
	json_decref(out);
	return rc;
}
