/* SPDX-License-Identifier: MIT */
/* The bt document of a process (btdoc.h). */
#include "corelib/core.h"
#include "btdoc.h"
#include "rank.h"

#include <stdlib.h>

#include "base/text.h"
#include "stack/stack.h"

json_t *cq_json_problems(const struct cq_core *core)
{
	json_t *a = json_array();
	for (size_t i = 0; i < core->nproblems; i++)
		json_array_append_new(a, json_pack("{s:o, s:o}", "item", cq_json_str(core->problems[i].item),
						   "message", cq_json_str(core->problems[i].message)));
	return a;
}

void cq_bt_task(struct cq_core *core, json_t *bt)
{
	const char *which;
	long long v = cq_launcher_env(core, false, &which);
	if (v >= 0) {
		json_object_set_new(bt, "task", json_integer((json_int_t)v));
		json_object_set_new(bt, "task_source", json_string(which));
	}
}

void cq_bt_process(const struct cq_core *core, json_t *bt)
{
	/* the kernel writes the whole process's CPU time into its leader's NT_PRSTATUS; a core
	 * without the leader's: the sum of the threads it has */
	const struct cq_thread *leader = core->has_psinfo ? cq_core_thread((struct cq_core *)core, core->pid) : NULL;
	uint64_t us = 0;
	for (size_t i = 0; i < core->nthreads; i++)
		if (!leader || &core->threads[i] == leader)
			us += core->threads[i].utime_us + core->threads[i].stime_us;
	json_object_set_new(bt, "process",
			    json_pack("{s:o, s:o, s:o}", "pid", core->has_psinfo ? json_integer(core->pid) : json_null(),
				      /* all 0: gdb's gcore (it writes none), unless coreq took it */
				      "cpu_ms", us || core->taken_ns ? json_integer((json_int_t)(us / 1000)) : json_null(), "taken_ms",
				      core->taken_ns ? json_integer((json_int_t)(core->taken_ns / 1000000)) : json_null()));
	/* stopped by a signal before the core was taken (a coreq snapshot records it): not
	 * running, whatever its stacks wait on */
	if (core->state == 'T')
		json_object_set_new(json_object_get(bt, "process"), "state", json_string("stopped"));
}

/* To the walk's problems (s->problems) those of `bt`: the core's own (missing files), and
 * each stack a missing piece cut short (its last frame's module is the item). */
void cq_bt_add_problems(struct cq_core *core, struct cq_stacks *s)
{
	json_t *core_problems = cq_json_problems(core), *p;
	size_t i;
	json_array_foreach(core_problems, i, p)
		json_array_append(s->problems, p);
	json_decref(core_problems);
	for (size_t k = 0; k < s->nthreads; k++) {
		const struct cq_thread_stack *t = &s->threads[k];
		if (!t->cut_short)
			continue;
		const char *mod = t->nframes ? t->frames[t->nframes - 1].info->module : NULL;
		cq_json_problem(s->problems, mod ? mod : "stack", "thread %lld: %s", (long long)t->tid,
				t->stop ? t->stop : "?");
	}
}

struct cq_error *cq_bt_document(struct cq_core *core, const struct cq_stack_options *opt, bool with_task,
				json_t **ret)
{
	struct cq_stacks *s;
	struct cq_error *err = cq_stack_walk_frames(core, opt, &s);
	if (err)
		return err;
	cq_bt_add_problems(core, s);
	json_t *doc = cq_stacks_json(core, s, true);
	cq_stacks_free(s);
	if (with_task)
		cq_bt_task(core, doc);
	cq_bt_process(core, doc);
	*ret = doc;
	return NULL;
}

