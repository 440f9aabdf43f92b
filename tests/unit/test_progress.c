/* SPDX-License-Identifier: MIT */
/* Progress across samples (job/progress.h) on small made-up bt documents: runtime frames
 * left out of the comparison, samples ordered by when they were taken, a thread that came,
 * the CPU time telling spinning from blocked, grouping by rank and pid, and the verdict
 * qualified by the samples (job/verdict.h). */
#include <stdlib.h>

#include "check.h"
#include "job/progress.h"
#include "job/verdict.h"

/* A sample of one process: thread 10 at @p pc in "prog" under a libmpi frame at @p mpi_pc,
 * thread @p tid2 (0: none) in "prog"; task @p task (-1: none), pid 100; cpu and taken
 * (-1: null). */
static json_t *sample(int task, const char *pc, const char *mpi_pc, int tid2, long long cpu, long long taken)
{
	json_t *t = json_pack("[{s:i, s:[{s:s, s:s}, {s:s, s:s}, {s:s, s:s}]}]", "tid", 10, "frames", "pc", mpi_pc,
			      "module", "libmpi.so.40", "pc", pc, "module", "prog", "pc", "0x1000", "module", "prog");
	if (tid2)
		json_array_append_new(t, json_pack("{s:i, s:[{s:s, s:s}]}", "tid", tid2, "frames", "pc", "0x2000", "module",
						   "prog"));
	json_t *bt = json_pack("{s:s, s:o, s:{s:i, s:o, s:o}}", "schema", "coreq-bt/2", "threads", t, "process", "pid", 100,
			       "cpu_ms", cpu < 0 ? json_null() : json_integer(cpu), "taken_ms",
			       taken < 0 ? json_null() : json_integer(taken));
	if (task >= 0)
		json_object_set_new(bt, "task", json_integer(task));
	return bt;
}

static const char *s(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

int main(void)
{
	/* polling in MPI: the libmpi frame moves, the program's do not; 100 of 400 ms on CPU */
	json_t *a = json_pack("[o, o, o]", sample(3, "0x1234", "0x7000", 0, 50, 1000),
			      sample(3, "0x1234", "0x7010", 0, 100, 1200), sample(3, "0x1234", "0x7020", 0, 150, 1400));
	json_t *p = cq_progress_of(a);
	CHECK_STR(s(p, "state"), "stuck");
	CHECK_STR(s(p, "cpu"), "spinning");
	CHECK_U64(json_integer_value(json_object_get(p, "cpu_ms")), 100);
	CHECK_U64(json_integer_value(json_object_get(p, "span_ms")), 400);
	CHECK_U64(json_integer_value(json_object_get(p, "task")), 3);
	CHECK_U64(json_integer_value(json_object_get(p, "latest")), 2);
	json_decref(p);
	json_decref(a);

	/* given out of order: ordered by taken_ms (the latest is the one given first); 10 ms
	 * of CPU in 400: blocked */
	a = json_pack("[o, o, o]", sample(-1, "0x1234", "0x7000", 0, 60, 1400), sample(-1, "0x1234", "0x7000", 0, 50, 1000),
		      sample(-1, "0x1234", "0x7000", 0, 55, 1200));
	p = cq_progress_of(a);
	CHECK_STR(s(p, "cpu"), "blocked");
	CHECK_U64(json_integer_value(json_object_get(p, "latest")), 0);
	CHECK(json_is_null(json_object_get(p, "task")));
	json_decref(p);
	json_decref(a);

	/* the program's frame moved: progressing, thread 10 named; no CPU verdict */
	a = json_pack("[o, o]", sample(1, "0x1234", "0x7000", 0, 50, 1000), sample(1, "0x1240", "0x7000", 0, 250, 1200));
	p = cq_progress_of(a);
	CHECK_STR(s(p, "state"), "progressing");
	CHECK(json_is_null(json_object_get(p, "cpu")));
	CHECK(json_array_size(json_object_get(p, "threads_moved")) == 1 &&
	      json_integer_value(json_array_get(json_object_get(p, "threads_moved"), 0)) == 10);
	json_decref(p);
	json_decref(a);

	/* a thread that came: moved; no times (gcore's cores): no span, no CPU verdict */
	a = json_pack("[o, o]", sample(1, "0x1234", "0x7000", 0, -1, -1), sample(1, "0x1234", "0x7000", 11, -1, -1));
	p = cq_progress_of(a);
	CHECK(json_integer_value(json_array_get(json_object_get(p, "threads_moved"), 0)) == 11);
	CHECK(json_is_null(json_object_get(p, "span_ms")) && json_is_null(json_object_get(p, "cpu_ms")));
	json_decref(p);
	json_decref(a);

	/* grouping: rank 0 twice, rank 1 once, a document without task or pid on its own */
	a = json_pack("[o, o, o, {s:s}]", sample(0, "0x1", "0x7", 0, 1, 1), sample(1, "0x1", "0x7", 0, 1, 1),
		      sample(0, "0x1", "0x7", 0, 1, 2), "schema", "coreq-bt/2");
	json_t *g = cq_progress_group(a);
	CHECK(json_array_size(g) == 3);
	CHECK_STR(s(json_array_get(g, 0), "key"), "rank 0");
	CHECK(json_array_size(json_object_get(json_array_get(g, 0), "samples")) == 2 &&
	      json_integer_value(json_array_get(json_object_get(json_array_get(g, 0), "samples"), 1)) == 2);
	CHECK(json_is_null(json_object_get(json_array_get(g, 2), "key")));
	json_decref(g);
	json_decref(a);
	/* not samples: one snapshot given twice, kernel cores (no time) of one process */
	a = json_pack("[o, o, o, o]", sample(0, "0x1", "0x7", 0, 1, 5), sample(0, "0x1", "0x7", 0, 1, 5),
		      sample(2, "0x1", "0x7", 0, 1, -1), sample(2, "0x1", "0x7", 0, 1, -1));
	g = cq_progress_group(a);
	CHECK(json_array_size(g) == 4);
	json_decref(g);
	json_decref(a);

	CHECK(cq_progress_runtime_module("libmpi.so.40") && cq_progress_runtime_module("libc.so.6") &&
	      cq_progress_runtime_module(NULL) && !cq_progress_runtime_module("prog"));

	/* the verdict qualified: rank 2 (blocking) moved; then every rank stuck */
	json_t *prog = json_pack("[{s:i, s:s, s:i, s:i}, {s:i, s:s, s:i, s:i}]", "task", 3, "state", "stuck", "samples", 3,
				 "span_ms", 400, "task", 2, "state", "progressing", "samples", 3, "span_ms", 400);
	json_t *v = json_pack("{s:s, s:s, s:s, s:s}", "kind", "blocked", "text", "rank 3 waits on rank 2", "waiting", "3",
			      "blocking_ranks", "2");
	cq_job_verdict_samples(v, prog);
	CHECK(strstr(s(v, "text") ?: "", "but rank 2 moved between the samples") != NULL);
	CHECK(json_is_false(json_object_get(json_object_get(v, "samples"), "confirmed")));
	CHECK_STR(s(json_object_get(v, "samples"), "progressing"), "2");
	json_decref(v);
	json_object_set_new(json_array_get(prog, 1), "state", json_string("stuck"));
	v = json_pack("{s:s, s:s, s:s, s:s}", "kind", "blocked", "text", "rank 3 waits on rank 2", "waiting", "3",
		      "blocking_ranks", "2");
	cq_job_verdict_samples(v, prog);
	CHECK_STR(s(v, "text"), "rank 3 waits on rank 2; the same in all 3 samples over 400 ms: a hang");
	CHECK(json_is_true(json_object_get(json_object_get(v, "samples"), "confirmed")));
	CHECK_STR(s(json_object_get(v, "samples"), "stuck"), "2-3");
	char *t = cq_progress_tasks(prog, "stuck");
	CHECK_STR(t, "2-3");
	free(t);
	json_decref(v);
	json_decref(prog);
	return check_report("test_progress");
}
