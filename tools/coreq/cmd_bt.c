/* SPDX-License-Identifier: MIT */
/* coreq bt: the stack of every thread (stack/stack.h), the crashing thread first. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "job/ompjoin.h"
#include "ompd/host.h"
#include "stack/stack.h"

static const char *str(json_t *o, const char *k)
{
	const char *v = json_string_value(json_object_get(o, k));
	return v ? cq_esc(v) : NULL;
}

/* Frames first..last of @p frames as bt prints them. */
static void print_range(json_t *frames, json_int_t first, json_int_t last, int width)
{
	json_t *slice = json_array();
	for (json_int_t i = first; i >= 0 && i <= last && (size_t)i < json_array_size(frames); i++)
		json_array_append(slice, json_array_get(frames, (size_t)i));
	cq_print_frames(slice, width);
	json_decref(slice);
}

/* A frame's function as bt shows it: demangled, else its symbol */
static const char *fname(json_t *f)
{
	return str(f, "demangled") ?: str(f, "function") ?: "??";
}

/* "implicit task of parallel region 2 (.omp_outlined., level 2, thread 1 of 2, encountering thread 25055)" */
static void print_segment_head(json_t *seg)
{
	const char *type = str(seg, "task_type") ?: "?";
	if (!strcmp(type, "initial")) {
		printf("  -- initial task (the serial part)\n");
		return;
	} else if (!strcmp(type, "implicit"))
		printf("  -- implicit task of parallel region %lld", (long long)json_integer_value(json_object_get(seg, "region")));
	else
		printf("  -- explicit task #%lld", (long long)json_integer_value(json_object_get(seg, "task")));
	printf(" (%s", str(seg, "function") ?: "?");
	if (json_object_get(seg, "region"))
		printf(", level %lld, thread %lld of %lld, encountering thread %lld",
		       (long long)json_integer_value(json_object_get(seg, "level")),
		       (long long)json_integer_value(json_object_get(seg, "thread_num")),
		       (long long)json_integer_value(json_object_get(seg, "team_size")),
		       (long long)json_integer_value(json_object_get(seg, "encountering_tid")));
	json_t *also = json_object_get(seg, "also_tasks"), *v;
	size_t i;
	json_array_foreach(also, i, v)
		printf("%s%lld", i ? ", #" : "; with task #", (long long)json_integer_value(v));
	if (json_array_size(also))
		printf(" inside, not told apart");
	printf(")\n");
}

/* One segment: runtime frames folded to a line, the others in full. */
static void print_segment(json_t *frames, json_t *seg, int width)
{
	json_int_t first = json_integer_value(json_object_get(seg, "first")),
		   last = json_integer_value(json_object_get(seg, "last"));
	const char *kind = str(seg, "kind") ?: "?";
	if (!strcmp(kind, "runtime")) {
		json_t *a = json_array_get(frames, (size_t)first), *b = json_array_get(frames, (size_t)last);
		char range[48];
		snprintf(range, sizeof(range), "#%lld-#%lld", (long long)first, (long long)last);
		printf("  %-10s [OpenMP runtime: %s", last > first ? range : range + strlen(range) - 1 - snprintf(NULL, 0, "%lld", (long long)last),
		       fname(a));
		if (last > first)
			printf("%s%s", last > first + 1 ? " ... " : ", ", fname(b));
		const char *mod = NULL; /* the runtime's module, not what it called */
		for (json_int_t k = first; k <= last && !mod; k++)
			if (cq_omp_runtime_module(json_string_value(json_object_get(json_array_get(frames, (size_t)k), "module"))))
				mod = str(json_array_get(frames, (size_t)k), "module");
		printf(" (%lld frame%s)%s%s]\n", (long long)(last - first + 1), last > first ? "s" : "", mod ? ", " : "",
		       mod ? mod : "");
		return;
	}
	if (json_object_get(seg, "task"))
		print_segment_head(seg);
	else if (!strcmp(kind, "thread"))
		printf("  -- outside any task\n");
	print_range(frames, first, last, width);
}

static void print_omp_thread(json_t *bt, json_t *t, int width)
{
	json_t *omp = json_object_get(t, "openmp");
	printf("thread %lld%s", (long long)json_integer_value(json_object_get(t, "tid")),
	       json_is_true(json_object_get(t, "crashing")) ? " (crashing)" : "");
	if (str(omp, "state"))
		printf(", OpenMP %s", str(omp, "state"));
	else if (!json_object_get(omp, "tasks") && !strcmp(str(json_object_get(bt, "openmp"), "source") ?: "", "ompd"))
		printf(", not an OpenMP thread");
	printf(":\n");
	cq_print_omp_stack(bt, t, width);
}

void cq_print_omp_stack(json_t *bt, json_t *t, int width)
{
	json_t *omp = json_object_get(t, "openmp"), *frames = json_object_get(t, "frames"), *seg, *p;
	size_t i;
	/* continued: the thread's own frames out to its outermost task, then the others' */
	json_t *segs = json_object_get(omp, "segments");
	size_t upto = json_array_size(segs);
	if (json_array_size(json_object_get(omp, "continued")))
		json_array_foreach(segs, i, seg)
			if (json_object_get(seg, "task"))
				upto = i + 1;
	json_array_foreach(segs, i, seg)
		if (i < upto)
			print_segment(frames, seg, width);
	json_int_t on = -1;
	json_array_foreach(json_object_get(omp, "continued"), i, seg) {
		json_int_t tid = json_integer_value(json_object_get(seg, "tid"));
		if (str(seg, "why")) {
			printf("  continued on thread %lld: %s\n", (long long)tid, str(seg, "why"));
			continue;
		}
		if (tid != on)
			printf("  continued on thread %lld, the encountering thread:\n", (long long)tid);
		on = tid;
		json_t *th = NULL, *x;
		size_t k;
		json_array_foreach(json_object_get(bt, "threads"), k, x)
			if (json_integer_value(json_object_get(x, "tid")) == tid)
				th = x;
		json_t *full = NULL;
		json_array_foreach(json_object_get(json_object_get(th, "openmp"), "segments"), k, x)
			if (json_equal(json_object_get(x, "first"), json_object_get(seg, "first")))
				full = x;
		print_segment(json_object_get(th, "frames"), full ? full : seg, width);
	}
	printf("  (%s)\n", str(t, "stop"));
	json_array_foreach(json_object_get(omp, "problems"), i, p)
		printf("  note: %s\n", cq_esc(json_string_value(p)));
}

static json_t *thread_item(size_t i, void *arg)
{
	const struct cq_stacks *s = arg;
	return cq_thread_stack_json(&s->threads[i]);
}

/* `bt` without OpenMP: printed from the walk's structures, text or JSON a thread at a time
 * (a thread of a core's 100,000 cost 14 kB as JSON objects, all held at once). */
static int print_bt(struct cq_cli *cli, struct cq_core *core, const struct cq_stack_options *opt)
{
	struct cq_stacks *s;
	struct cq_error *err = cq_stack_walk_frames(core, opt, &s);
	if (!err && (err = cq_process_check(core))) /* --pid: a process killed while read */
		cq_stacks_free(s);
	if (err) {
		cq_core_close(core);
		return cq_fail(err);
	}
	cq_bt_add_problems(core, s);
	if (cli->json) {
		int rc = json_array_size(s->problems) ? CQ_EXIT_PARTIAL : CQ_EXIT_OK;
		json_t *doc = cq_stacks_json(core, s, false);
		/* the task (an MPI rank) is for merges: of the whole process only */
		if (!opt->tid)
			cq_bt_task(core, doc);
		cq_bt_process(core, doc);
		cq_json_add_apport(doc, core);
		cq_emit_json_items(doc, "threads", s->nthreads, thread_item, s);
		cq_stacks_free(s);
		cq_core_close(core);
		return rc;
	}
	int width = (int)cq_target_ptr_size(core->target) * 2;
	if (!opt->tid) {
		json_t *mpi = cq_mpi_rank_json(core);
		cq_print_mpi_rank(mpi, "MPI ");
		if (mpi)
			printf("\n");
		json_decref(mpi);
	}
	for (size_t k = 0; k < s->nthreads; k++) {
		const struct cq_thread_stack *t = &s->threads[k];
		printf("%sthread %lld%s:\n", k ? "\n" : "", (long long)t->tid, t->crashing ? " (crashing)" : "");
		cq_print_stack_frames(t->frames, t->nframes, width);
		printf("  (%s)\n", cq_esc(t->stop ? t->stop : "?"));
	}
	json_t *p;
	size_t i;
	json_array_foreach(s->problems, i, p)
		printf("%s  %s: %s\n", i ? "" : "\nproblems:\n", str(p, "item"), str(p, "message"));
	int rc = json_array_size(s->problems) ? CQ_EXIT_PARTIAL : CQ_EXIT_OK;
	cq_stacks_free(s);
	cq_core_close(core);
	return rc;
}

int cq_cmd_bt(struct cq_cli *cli)
{
	struct cq_core *core;
	int rc = cq_open_core(cli, true, &core);
	if (rc)
		return rc;
	if (cli->has_thread && !cq_core_thread(core, cli->thread)) {
		fprintf(stderr, "coreq: no thread %d in %s\n", cli->thread, cq_esc(core->name));
		cq_core_close(core);
		return CQ_EXIT_QUERY;
	}
	json_t *doc;
	/* --openmp=continued goes on in other threads' stacks: all are walked, one printed */
	struct cq_stack_options opt = {.tid = cli->has_thread && cli->openmp != 2 ? cli->thread : 0,
				       .max_frames = cli->max_frames, .system_lines = cli->all_lines};
	if (!cli->openmp)
		return print_bt(cli, core, &opt);
	/* the document's task (an MPI rank) is for merges; text shows none */
	struct cq_error *err = cq_bt_document(core, &opt, !opt.tid && cli->json, &doc);
	if (!err && (err = cq_process_check(core))) /* --pid: ran again, or killed, while read */
		json_decref(doc);
	if (err) {
		cq_core_close(core);
		return cq_fail(err);
	}
	json_t *problems = json_object_get(doc, "problems"), *p, *t;
	size_t i;
	if (cli->openmp) {
		/* the runtime's account of the tasks (ompd/), joined with the stacks (job/) */
		json_t *ompd = NULL;
		struct cq_error *oerr = cq_ompd_report(core, &cli->ompd, &ompd);
		const char *why = oerr ? oerr->message : NULL;
		if (!oerr && !json_array_size(json_object_get(ompd, "threads")))
			why = json_string_value(json_object_get(json_array_get(json_object_get(ompd, "problems"), 0), "message"))
				      ?: "the OMPD plugin reports no threads";
		cq_omp_join(doc, why ? NULL : ompd, why, cli->openmp == 2);
		json_t *om = json_object_get(doc, "openmp");
		if (strcmp(json_string_value(json_object_get(om, "source")) ?: "", "ompd"))
			/* plain stacks, the runtime's frames marked by module: said */
			cq_json_problem(problems, "openmp", "no OpenMP task frames (%s): the runtime's frames are marked by their module",
					json_string_value(json_object_get(om, "why")) ?: "?");
		cq_error_destroy(oerr);
		json_decref(ompd);
	}
	rc = json_array_size(problems) ? CQ_EXIT_PARTIAL : CQ_EXIT_OK;
	if (cli->json) {
		cq_json_add_apport(doc, core);
		cq_emit_json(doc);
	} else {
		json_t *om = json_object_get(doc, "openmp");
		if (om && strcmp(str(om, "source") ?: "", "ompd"))
			printf("OpenMP: no task frames (%s); the runtime's frames are marked by their module\n\n",
			       str(om, "why") ?: "?");
		bool first = true;
		json_array_foreach(json_object_get(doc, "threads"), i, t) {
			if (cli->has_thread && json_integer_value(json_object_get(t, "tid")) != cli->thread)
				continue;
			if (!first)
				printf("\n");
			first = false;
			print_omp_thread(doc, t, (int)cq_target_ptr_size(core->target) * 2);
		}
		json_array_foreach(problems, i, p)
			printf("%s  %s: %s\n", i ? "" : "\nproblems:\n", str(p, "item"), str(p, "message"));
		cq_release(doc, core);
		return rc;
	}
	cq_core_close(core);
	return rc;
}
