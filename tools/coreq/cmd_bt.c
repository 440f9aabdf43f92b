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

/* "#3  0x000055d44e7a6a1c in fx_block_read+0x1c [fixprog+0x1a1c]" */
static void print_thread(json_t *t)
{
	json_t *f;
	size_t i;
	printf("thread %lld%s:\n", (long long)json_integer_value(json_object_get(t, "tid")),
	       json_is_true(json_object_get(t, "crashing")) ? " (crashing)" : "");
	json_array_foreach(json_object_get(t, "frames"), i, f) {
		const char *fn = str(f, "function"), *off = str(f, "function_offset");
		printf("  #%-3zu %-18s in %s%s%s", i, str(f, "pc"), fn ? fn : "??",
		       fn && off && strcmp(off, "0x0") ? "+" : "", fn && off && strcmp(off, "0x0") ? off : "");
		if (str(f, "module"))
			printf(" [%s+%s]", str(f, "module"), str(f, "module_offset") ? str(f, "module_offset") : "?");
		printf("\n");
	}
	printf("  (%s)\n", str(t, "stop"));
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
	struct cq_error *err = cq_stack_report(core, cli->has_thread ? cli->thread : 0, cli->max_frames, &doc);
	if (err) {
		cq_core_close(core);
		return cq_fail(err);
	}
	/* the core's own problems (missing files) go with the stacks' */
	json_t *problems = json_object_get(doc, "problems"), *p;
	size_t i;
	json_t *core_problems = cq_json_problems(core);
	json_array_foreach(core_problems, i, p)
		json_array_append(problems, p);
	json_decref(core_problems);
	rc = json_array_size(problems) ? CQ_EXIT_PARTIAL : CQ_EXIT_OK;
	if (cli->json) {
		cq_emit_json(doc);
	} else {
		json_t *t;
		json_array_foreach(json_object_get(doc, "threads"), i, t) {
			if (i)
				printf("\n");
			print_thread(t);
		}
		json_array_foreach(problems, i, p)
			printf("%s  %s: %s\n", i ? "" : "\nproblems:\n", str(p, "item"), str(p, "message"));
		json_decref(doc);
	}
	cq_core_close(core);
	return rc;
}
