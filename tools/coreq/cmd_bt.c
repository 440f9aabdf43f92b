/* SPDX-License-Identifier: MIT */
/* coreq bt: the stack of every thread (stack/stack.h), the crashing thread first. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "stack/stack.h"

static const char *str(json_t *o, const char *k)
{
	const char *v = json_string_value(json_object_get(o, k));
	return v ? cq_esc(v) : NULL;
}

static void print_thread(json_t *t, int width)
{
	printf("thread %lld%s:\n", (long long)json_integer_value(json_object_get(t, "tid")),
	       json_is_true(json_object_get(t, "crashing")) ? " (crashing)" : "");
	cq_print_frames(json_object_get(t, "frames"), width);
	printf("  (%s)\n", str(t, "stop"));
}

struct cq_error *cq_bt_document(struct cq_core *core, const struct cq_stack_options *opt, bool with_task,
				json_t **ret)
{
	json_t *doc;
	struct cq_error *err = cq_stack_walk(core, opt, &doc);
	if (err)
		return err;
	if (with_task)
		cq_bt_task(core, doc);
	/* the core's own problems (missing files) go with the stacks' */
	json_t *problems = json_object_get(doc, "problems"), *p, *t;
	size_t i;
	json_t *core_problems = cq_json_problems(core);
	json_array_foreach(core_problems, i, p)
		json_array_append(problems, p);
	json_decref(core_problems);
	/* and each stack a missing piece cut short (its last frame's module is the item) */
	json_array_foreach(json_object_get(doc, "threads"), i, t) {
		if (!json_is_true(json_object_get(t, "cut_short")))
			continue;
		json_t *frames = json_object_get(t, "frames");
		const char *mod = json_string_value(json_object_get(json_array_get(frames, json_array_size(frames) - 1),
								     "module"));
		cq_json_problem(problems, mod ? mod : "stack", "thread %lld: %s",
				(long long)json_integer_value(json_object_get(t, "tid")),
				json_string_value(json_object_get(t, "stop")));
	}
	*ret = doc;
	return NULL;
}

int cq_cmd_bt(struct cq_cli *cli)
{
	struct cq_core *core;
	int rc = cq_open_core(cli, true, &core);
	if (rc)
		return rc;
	if (cli->has_thread && !cq_core_thread(core, cli->thread)) {
		fprintf(stderr, "coreq: no thread %d in %s\n", cli->thread, cq_esc(core->file->path));
		cq_core_close(core);
		return CQ_EXIT_QUERY;
	}
	json_t *doc;
	struct cq_stack_options opt = {.tid = cli->has_thread ? cli->thread : 0, .max_frames = cli->max_frames,
				       .system_lines = cli->all_lines};
	/* the document's task (an MPI rank) is for merges; text shows none */
	struct cq_error *err = cq_bt_document(core, &opt, !opt.tid && cli->json, &doc);
	if (err) {
		cq_core_close(core);
		return cq_fail(err);
	}
	json_t *problems = json_object_get(doc, "problems"), *p, *t;
	size_t i;
	rc = json_array_size(problems) ? CQ_EXIT_PARTIAL : CQ_EXIT_OK;
	if (cli->json) {
		cq_emit_json(doc);
	} else {
		json_array_foreach(json_object_get(doc, "threads"), i, t) {
			if (i)
				printf("\n");
			print_thread(t, (int)cq_target_ptr_size(core->target) * 2);
		}
		json_array_foreach(problems, i, p)
			printf("%s  %s: %s\n", i ? "" : "\nproblems:\n", str(p, "item"), str(p, "message"));
		cq_release(doc, core);
		return rc;
	}
	cq_core_close(core);
	return rc;
}
