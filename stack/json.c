/* SPDX-License-Identifier: MIT */
/* The stacks as JSON (stack.h): the "coreq-bt/2" document `bt --json` prints and the job
 * views merge. The walk itself keeps C structures; only what is printed as JSON becomes
 * JSON (building an object per frame was half the cost of `coreq info`). */
#include <stdio.h>
#include <stdlib.h>

#include "base/text.h"
#include "stack.h"

static json_t *str_or_null(const char *s)
{
	return s ? cq_json_str(s) : json_null();
}

json_t *cq_frame_json(const struct cq_frame *f)
{
	const struct cq_frame_info *i = f->info;
	json_t *o = json_object();
	/* the keys in the schema's order (doc/coreq.1, bt --json) */
	json_object_set_new_nocheck(o, "index", json_integer(f->index));
	json_object_set_new_nocheck(o, "pc", cq_json_hex(f->pc));
	json_object_set_new_nocheck(o, "cfa", f->has_cfa ? cq_json_hex(f->cfa) : json_null());
	json_object_set_new_nocheck(o, "inlined", json_boolean(f->inlined));
	json_object_set_new_nocheck(o, "found_by", json_string_nocheck(cq_found_by_name(f->found_by)));
	json_object_set_new_nocheck(o, "module", str_or_null(i->module));
	json_object_set_new_nocheck(o, "module_offset", i->has_module_offset ? cq_json_hex(i->module_offset) : json_null());
	json_object_set_new_nocheck(o, "function", str_or_null(i->function));
	json_object_set_new_nocheck(o, "demangled", str_or_null(i->demangled));
	json_object_set_new_nocheck(o, "function_offset",
				    i->has_function_offset ? cq_json_hex(i->function_offset) : json_null());
	json_object_set_new_nocheck(o, "file", str_or_null(i->file));
	json_object_set_new_nocheck(o, "line", i->file && i->line > 0 ? json_integer(i->line) : json_null());
	if (f->signal_frame)
		json_object_set_new_nocheck(o, "signal_frame", json_true());
	return o;
}

json_t *cq_thread_stack_json(const struct cq_thread_stack *t)
{
	json_t *frames = json_array();
	for (unsigned i = 0; i < t->nframes; i++) {
		json_t *f = cq_frame_json(&t->frames[i]), *v;
		char key[16];
		snprintf(key, sizeof(key), "%u", i);
		if (t->loop_vars && (v = json_object_get(t->loop_vars, key)))
			json_object_set_nocheck(f, "loop_variables", v);
		json_array_append_new(frames, f);
	}
	return json_pack("{s:i, s:b, s:o, s:o, s:s, s:b}", "tid", t->tid, "crashing", t->crashing, "frames", frames,
			 "user_frame", t->user_frame >= 0 ? json_integer(t->user_frame) : json_null(), "stop", t->stop ? t->stop : "?",
			 "cut_short", t->cut_short);
}

json_t *cq_stacks_json(const struct cq_core *core, const struct cq_stacks *s, bool with_threads)
{
	json_t *threads = json_array();
	for (size_t i = 0; with_threads && i < s->nthreads; i++)
		json_array_append_new(threads, cq_thread_stack_json(&s->threads[i]));
	return json_pack("{s:s, s:o, s:s, s:o, s:O}", "schema", "coreq-bt/2", "core", cq_json_str(core->name),
			 "arch", core->target->name, "threads", threads, "problems", s->problems);
}

struct cq_error *cq_stack_walk(struct cq_core *core, const struct cq_stack_options *opt, json_t **ret)
{
	struct cq_stacks *s;
	struct cq_error *err = cq_stack_walk_frames(core, opt, &s);
	if (err)
		return err;
	*ret = cq_stacks_json(core, s, true);
	cq_stacks_free(s);
	return NULL;
}
