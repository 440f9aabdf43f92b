/* SPDX-License-Identifier: MIT */
/* coreq bt: the stack of every thread (stack/stack.h), the crashing thread first. */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "stack/stack.h"

static const char *str(json_t *o, const char *k)
{
	const char *v = json_string_value(json_object_get(o, k));
	return v ? cq_esc(v) : NULL;
}

/* "#3  0x000055d44e7a6a1c in fx_block_read (fixprog.c:88) [fixprog+0x1a1c]": the
 * function's demangled name, +offset only where there is no source line, inlined calls
 * marked; pcs as wide as the target's addresses. */
static void print_thread(json_t *t, int width)
{
	json_t *f;
	size_t i;
	printf("thread %lld%s:\n", (long long)json_integer_value(json_object_get(t, "tid")),
	       json_is_true(json_object_get(t, "crashing")) ? " (crashing)" : "");
	json_array_foreach(json_object_get(t, "frames"), i, f) {
		const char *fn = str(f, "demangled") ? str(f, "demangled") : str(f, "function");
		const char *off = str(f, "function_offset"), *file = str(f, "file");
		unsigned long long pc = strtoull(json_string_value(json_object_get(f, "pc")), NULL, 16);
		printf("  #%-3lld 0x%0*llx in %s", (long long)json_integer_value(json_object_get(f, "index")), width, pc,
		       fn ? fn : "??");
		if (file) {
			const char *base = strrchr(file, '/');
			printf(" (%s:%lld)", base ? base + 1 : file, (long long)json_integer_value(json_object_get(f, "line")));
		} else if (fn && off && strcmp(off, "0x0")) {
			printf("+%s", off);
		}
		if (json_is_true(json_object_get(f, "inlined")))
			printf(" [inlined]");
		if (str(f, "module"))
			printf(" [%s+%s]", str(f, "module"), str(f, "module_offset") ? str(f, "module_offset") : "?");
		const char *how = json_string_value(json_object_get(f, "found_by"));
		if (how && strcmp(how, "initial") && strcmp(how, "cfi") && strcmp(how, "inline"))
			printf(" <%s>", how);
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
			print_thread(t, core->target->elf_class == ELFCLASS64 ? 16 : 8);
		}
		json_array_foreach(problems, i, p)
			printf("%s  %s: %s\n", i ? "" : "\nproblems:\n", str(p, "item"), str(p, "message"));
		json_decref(doc);
	}
	cq_core_close(core);
	return rc;
}
