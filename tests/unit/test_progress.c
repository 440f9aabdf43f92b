/* SPDX-License-Identifier: MIT */
/* Progress across samples (job/progress.h) on small made-up bt documents: runtime frames
 * left out of the comparison, samples ordered by when they were taken, a thread that came,
 * the CPU time telling spinning from blocked, grouping by rank and pid, many threads
 * compared (the result, not the time: tools/bench/bench-progress.py times it), the text of
 * cq_progress_print, and the verdict qualified by the samples (job/verdict.h): a hang only
 * when every rank it is about was compared. */
#include <stdio.h>
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

/* A sample of a process of @p n threads (tids 1000 + i, in reverse order: the comparison
 * must not depend on it) at time @p taken: thread i's program frame is at 0x100 + i,
 * plus @p index where i % 3 == 0 (those move between samples); thread 1000 only in
 * sample 0 (it went), thread 1000 + n only in sample 1 (it came). */
static json_t *many(int n, int index, long long taken)
{
	json_t *t = json_array();
	for (int i = n - 1; i >= 0; i--) {
		if ((i == 0 && index != 0) || (i == n - 1 && index != 1 && n > 1))
			continue;
		char pc[32];
		snprintf(pc, sizeof(pc), "0x%x", 0x100 + i + (i % 3 ? 0 : index));
		json_array_append_new(t, json_pack("{s:i, s:[{s:s, s:s}, {s:s, s:s}]}", "tid", 1000 + i, "frames", "pc",
						   "0x7000", "module", "libc.so.6", "pc", pc, "module", "prog"));
	}
	return json_pack("{s:s, s:o, s:{s:i, s:i, s:I}}", "schema", "coreq-bt/2", "threads", t, "process", "pid", 7,
			 "cpu_ms", 0, "taken_ms", (json_int_t)taken);
}

/* What cq_progress_print writes for @p progress; caller frees. */
static char *printed(const json_t *progress)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	cq_progress_print(f, progress);
	fclose(f);
	return text;
}

/* A cq_progress_of result as the verdict reads it. */
static json_t *result(int task, const char *state, int samples, int span)
{
	return json_pack("{s:i, s:s, s:i, s:i}", "task", task, "state", state, "samples", samples, "span_ms", span);
}

static json_t *verdict_of(const char *waiting, const char *blocking, const char *text)
{
	return json_pack("{s:s, s:s, s:s, s:s}", "kind", "blocked", "text", text, "waiting", waiting, "blocking_ranks",
			 blocking);
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

	/* many threads: 3,000, a third of them moved, one went, one came; samples 1 and 2 both
	 * differ from sample 0 in the same threads, named once each, ascending */
	int nt = 3000;
	a = json_pack("[o, o, o]", many(nt, 2, 300), many(nt, 0, 100), many(nt, 1, 200));
	p = cq_progress_of(a);
	const json_t *moved = json_object_get(p, "threads_moved");
	size_t want = 0, bad = 0;
	for (int i = 0; i < nt; i++)
		if (i % 3 == 0 || i == nt - 1) {
			bad += (json_int_t)(1000 + i) != json_integer_value(json_array_get(moved, want));
			want++;
		}
	CHECK_STR(s(p, "state"), "progressing");
	CHECK_U64(json_array_size(moved), want);
	CHECK_U64(bad, 0);
	CHECK_U64(json_integer_value(json_object_get(p, "latest")), 0);
	/* the text names the first 16 and says how many more: a line, not 1,001 tids */
	json_t *list = json_pack("[O]", p);
	char *txt = printed(list);
	char line[160];
	snprintf(line, sizeof(line), "  process 7: threads 1000, 1003, 1006, 1009, 1012, 1015, 1018, 1021, 1024, 1027, 1030, "
		 "1033, 1036, 1039, 1042, 1045 and %zu more moved\n", want - 16);
	CHECK(txt && strstr(txt, line) != NULL);
	free(txt);
	json_decref(list);
	json_decref(p);
	json_decref(a);
	/* ... and none moved: stuck, every thread compared */
	a = json_array();
	for (int k2 = 0; k2 < 2; k2++) {
		json_t *d = many(nt, 0, 100 + k2);
		json_t *th = json_object_get(d, "threads");
		/* the same threads in both: thread 1000 and the last one in each */
		json_array_clear(th);
		for (int i = 0; i < nt; i++)
			json_array_append_new(th, json_pack("{s:i, s:[{s:s, s:s}]}", "tid", 1000 + (k2 ? nt - 1 - i : i),
							    "frames", "pc", "0x500", "module", "prog"));
		json_array_append_new(a, d);
	}
	p = cq_progress_of(a);
	CHECK_STR(s(p, "state"), "stuck");
	CHECK_U64(json_array_size(json_object_get(p, "threads_moved")), 0);
	json_decref(p);
	/* one thread's frames moved in the second sample (the last in document order there) */
	json_t *last = json_array_get(json_object_get(json_array_get(a, 1), "threads"), (size_t)nt - 1);
	json_object_set_new(json_array_get(json_object_get(last, "frames"), 0), "pc", json_string("0x501"));
	p = cq_progress_of(a);
	CHECK(json_array_size(json_object_get(p, "threads_moved")) == 1 &&
	      json_integer_value(json_array_get(json_object_get(p, "threads_moved"), 0)) == 1000);
	json_decref(p);
	json_decref(a);

	/* a tid claimed twice in one sample (crafted) and once in the other: moved; a frame
	 * more or less moved; a frame without a pc equal only to one without */
	a = json_pack("[{s:[{s:i, s:[{s:s, s:s}]}, {s:i, s:[{s:s, s:s}]}, {s:i, s:[{s:s}]}, {s:i, s:[{s:s, s:s}]}], s:{s:i}},"
		      " {s:[{s:i, s:[{s:s, s:s}]}, {s:i, s:[{s:s}]}, {s:i, s:[{s:s, s:s}, {s:s, s:s}]}], s:{s:i}}]",
		      "threads", "tid", 5, "frames", "pc", "0x1", "module", "prog", "tid", 5, "frames", "pc", "0x1", "module",
		      "prog", "tid", 6, "frames", "module", "prog", "tid", 7, "frames", "pc", "0x1", "module", "prog", "process",
		      "taken_ms", 1, "threads", "tid", 5, "frames", "pc", "0x1", "module", "prog", "tid", 6, "frames", "module",
		      "prog", "tid", 7, "frames", "pc", "0x1", "module", "prog", "pc", "0x2", "module", "prog", "process",
		      "taken_ms", 2);
	p = cq_progress_of(a);
	moved = json_object_get(p, "threads_moved");
	CHECK(json_array_size(moved) == 2 && json_integer_value(json_array_get(moved, 0)) == 5 &&
	      json_integer_value(json_array_get(moved, 1)) == 7);
	json_decref(p);
	json_decref(a);

	/* one sample: nothing compared, no CPU time or span between samples said */
	a = json_pack("[o]", sample(4, "0x1234", "0x7000", 0, 50, 1000));
	p = cq_progress_of(a);
	CHECK_STR(s(p, "state"), "one sample");
	CHECK(json_is_null(json_object_get(p, "cpu_ms")) && json_is_null(json_object_get(p, "span_ms")) &&
	      json_is_null(json_object_get(p, "cpu")) && json_is_false(json_object_get(p, "moved")));
	list = json_pack("[O]", p);
	txt = printed(list);
	CHECK_STR(txt, "one sample: rank 4 (sampled once: not compared)\n");
	free(txt);
	json_decref(list);
	json_decref(p);
	json_decref(a);

	/* cq_progress_print: a process given once is said to be not compared, never stuck;
	 * counts and spans that differ within a line are said as ranges */
	prog = json_pack("[o, o, o]", result(0, "stuck", 2, 200), result(1, "stuck", 3, 400), result(2, "one sample", 1, 0));
	txt = printed(prog);
	CHECK(txt && strstr(txt, "stuck: ranks 0-1 (the same program frames in every sample; the cores do not say the "
				 "CPU time; 2-3 samples over 200-400 ms)\n") != NULL);
	CHECK(txt && strstr(txt, "one sample: rank 2 (sampled once: not compared)\n") != NULL);
	CHECK(txt && !strstr(txt, "stuck: rank 2") && !strstr(txt, "ranks 0-2"));
	free(txt);
	json_decref(prog);

	/* the verdict of the issue: rank 3 waits on rank 2, rank 3 stuck in 2 samples, rank 2
	 * (what everyone waits on) sampled once: not a hang, rank 2 named */
	prog = json_pack("[o, o]", result(3, "stuck", 2, 300), result(2, "one sample", 1, 0));
	v = verdict_of("3", "2", "rank 3 waits on rank 2");
	cq_job_verdict_samples(v, prog);
	CHECK_STR(s(v, "text"), "rank 3 waits on rank 2; rank 3 was the same in every sample, but rank 2 was sampled "
				"once: not compared, so not known to be a hang");
	CHECK(!strstr(s(v, "text") ?: "a hang", ": a hang"));
	CHECK(json_is_false(json_object_get(json_object_get(v, "samples"), "confirmed")));
	CHECK_STR(s(json_object_get(v, "samples"), "not_compared"), "2");
	json_decref(v);
	json_decref(prog);
	/* rank 2 with no result at all (its documents had no stacks), ranks 4-5 once, rank 6
	 * not in the verdict sampled once (it does not matter) */
	prog = json_pack("[o, o, o, o]", result(3, "stuck", 2, 300), result(4, "one sample", 1, 0),
			 result(5, "one sample", 1, 0), result(6, "one sample", 1, 0));
	v = verdict_of("3-5", "2", "ranks 3-5 wait on rank 2");
	cq_job_verdict_samples(v, prog);
	CHECK_STR(s(v, "text"), "ranks 3-5 wait on rank 2; rank 3 was the same in every sample, but ranks 4-5 were "
				"sampled once and rank 2 has no stacks in the samples: not compared, so not known to "
				"be a hang");
	CHECK_STR(s(json_object_get(v, "samples"), "not_compared"), "2,4-5");
	json_decref(v);
	json_decref(prog);
	/* a rank moved and another was sampled once: both said */
	prog = json_pack("[o, o]", result(3, "progressing", 2, 300), result(2, "one sample", 1, 0));
	v = verdict_of("3", "2", "rank 3 waits on rank 2");
	cq_job_verdict_samples(v, prog);
	CHECK_STR(s(v, "text"), "rank 3 waits on rank 2; but rank 3 moved between the samples: a slow phase rather than "
				"a hang (sample again, longer apart); rank 2 was sampled once: not compared");
	json_decref(v);
	json_decref(prog);
	/* every rank compared, with different counts and spans: a hang, said as ranges; the
	 * counts of ranks outside the verdict (rank 9: 5 samples) are not said */
	prog = json_pack("[o, o, o]", result(3, "stuck", 2, 300), result(2, "stuck", 3, 450), result(9, "stuck", 5, 900));
	v = verdict_of("3", "2", "rank 3 waits on rank 2");
	cq_job_verdict_samples(v, prog);
	CHECK_STR(s(v, "text"), "rank 3 waits on rank 2; the same in every sample (2-3 per rank over 300-450 ms): a hang");
	CHECK(json_is_true(json_object_get(json_object_get(v, "samples"), "confirmed")));
	CHECK_STR(s(json_object_get(v, "samples"), "not_compared"), "");
	json_decref(v);
	json_decref(prog);
	/* a "stuck" result of one sample (crafted) is not a comparison */
	prog = json_pack("[o, o]", result(3, "stuck", 2, 300), result(2, "stuck", 1, 0));
	v = verdict_of("3", "2", "rank 3 waits on rank 2");
	cq_job_verdict_samples(v, prog);
	CHECK(json_is_false(json_object_get(json_object_get(v, "samples"), "confirmed")) &&
	      strstr(s(v, "text") ?: "", "rank 2 was sampled once: not compared") != NULL);
	json_decref(v);
	json_decref(prog);
	return check_report("test_progress");
}
