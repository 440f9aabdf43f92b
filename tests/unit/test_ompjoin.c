/* SPDX-License-Identifier: MIT */
/* OpenMP-aware stacks (job/ompjoin.h) on small made-up documents: where a task's frame
 * addresses fall (frame address, flagged CFA, s390x's bias, not on the stack), which frames
 * are the runtime's, and the continuation onto the thread that created a region. */
#include <stdlib.h>

#include "check.h"
#include "job/ompjoin.h"

/* A worker's stack, innermost first: a lock wait in libc and libomp, the task's code, the
 * runtime that invoked it, the thread's start. CFAs grow outwards by 0x100 from 0x7ffd00007100. */
static json_t *worker_bt(const char *arch)
{
	static const char *const fr[][2] = {
		{"__sched_yield", "libc.so.6"},  {"__kmpc_critical", "libomp.so.5"}, {"work", "prog"},
		{".omp_outlined.", "prog"},       {"__kmp_invoke_microtask", "libomp.so.5"},
		{"__kmp_launch_worker", "libomp.so.5"}, {"start_thread", "libc.so.6"},
	};
	json_t *frames = json_array();
	for (size_t i = 0; i < sizeof(fr) / sizeof(fr[0]); i++) {
		char cfa[32];
		snprintf(cfa, sizeof(cfa), "0x%" PRIx64, UINT64_C(0x7ffd00007000) + 0x100 * (uint64_t)(i + 1));
		json_array_append_new(frames, json_pack("{s:I, s:s, s:s, s:s, s:b}", "index", (json_int_t)i, "cfa", cfa,
							"function", fr[i][0], "module", fr[i][1], "inlined", 0));
	}
	return json_pack("{s:s, s:s, s:[{s:i, s:o}, {s:i, s:[{s:I, s:s, s:s, s:s, s:b}]}]}", "schema", "coreq-bt/2",
			 "arch", arch, "threads", "tid", 11, "frames", frames, "tid", 10, "frames", "index",
			 (json_int_t)0, "cfa", "0x7ffd00009100", "function", "main", "module", "prog", "inlined", 0);
}

/* One implicit task of region 0 (team: thread 10 created it, 11 is thread 1), its exit
 * frame at @p exit (flag @p flag, -1: none); the initial task 1 on thread 10. */
static json_t *report(const char *exit, int flag)
{
	json_t *ef = json_pack("{s:s, s:o}", "address", exit, "flag", flag < 0 ? json_null() : json_integer(flag));
	return json_pack("{s:[{s:i, s:b, s:i, s:[i], s:[], s:[i]}, {s:i, s:b, s:i, s:[], s:[], s:[i]}],"
			 " s:[{s:{s:s}, s:o, s:{s:s}, s:{s:i}}, {s:{s:n}, s:{s:s}, s:{s:s}, s:{s:i}}],"
			 " s:[{s:i, s:i, s:i, s:[{s:i, s:i}, {s:i, s:i}], s:{s:s}}, {s:i, s:i, s:i, s:[{s:i, s:i}]}]}",
			 "threads", "tid", 11, "openmp", 1, "current_task", 0, "generating_chain", 1, "scheduling_chain",
			 "parallel_chain", 0, "tid", 10, "openmp", 1, "current_task", 1, "generating_chain",
			 "scheduling_chain", "parallel_chain", 1,
			 "tasks", "function", "symbol", ".omp_outlined.", "exit_frame", ef, "enter_frame", "address", "0x0",
			 "icvs", "implicit-task-var", 1, "function", "symbol", "exit_frame", "address", "0x0", "enter_frame",
			 "address", "0x7ffd00009000", "icvs", "implicit-task-var", 1,
			 "parallel_regions", "id", 0, "level", 1, "team_size", 2, "team", "tid", 10, "thread_num", 0, "tid",
			 11, "thread_num", 1, "function", "symbol", ".omp_outlined.", "id", 1, "level", 0, "team_size", 1,
			 "team", "tid", 10, "thread_num", 0);
}

static const char *kind_of(json_t *bt, size_t frame)
{
	json_t *f = json_array_get(json_object_get(json_array_get(json_object_get(bt, "threads"), 0), "frames"), frame);
	return json_string_value(json_object_get(f, "openmp"));
}

static json_t *seg(json_t *bt, size_t i)
{
	return json_array_get(json_object_get(json_object_get(json_array_get(json_object_get(bt, "threads"), 0), "openmp"),
					      "segments"), i);
}

/* the worker's frames with the task's exit at @p exit: 0-1 runtime, 2-3 the task, 4-5 runtime, 6 thread */
static void expect_worker(const char *arch, const char *exit, int flag)
{
	json_t *bt = worker_bt(arch), *o = report(exit, flag);
	cq_omp_join(bt, o, NULL, true);
	static const char *const want[] = {"runtime", "runtime", "task", "task", "runtime", "runtime", "thread"};
	for (size_t i = 0; i < 7; i++)
		CHECK_STR(kind_of(bt, i), want[i]);
	json_t *t = seg(bt, 1);
	CHECK_STR(json_string_value(json_object_get(t, "task_type")), "implicit");
	CHECK_STR(json_string_value(json_object_get(t, "function")), ".omp_outlined.");
	CHECK(json_integer_value(json_object_get(t, "encountering_tid")) == 10);
	CHECK(json_integer_value(json_object_get(t, "thread_num")) == 1);
	/* continued on thread 10: its initial task */
	json_t *c = json_object_get(json_object_get(json_array_get(json_object_get(bt, "threads"), 0), "openmp"), "continued");
	CHECK(json_array_size(c) == 1 && json_integer_value(json_object_get(json_array_get(c, 0), "tid")) == 10);
	json_decref(bt);
	json_decref(o);
}

/* A stack of @p n frames (function, module), CFAs 0x7ffe00001100 outwards by 0x100. */
static json_t *stack_of(const char *const (*fr)[2], size_t n)
{
	json_t *frames = json_array();
	for (size_t i = 0; i < n; i++) {
		char cfa[32];
		snprintf(cfa, sizeof(cfa), "0x%" PRIx64, UINT64_C(0x7ffe00001000) + 0x100 * (uint64_t)(i + 1));
		json_array_append_new(frames, json_pack("{s:I, s:s, s:s, s:s, s:b}", "index", (json_int_t)i, "cfa", cfa,
							"function", fr[i][0], "module", fr[i][1], "inlined", 0));
	}
	return frames;
}

/* One thread 10 on @p frames whose current task 0 has no frames (exit and enter 0) and is
 * the last of its chain, or (@p initial_enter not NULL) is followed by the initial task 1
 * with that enter frame. */
static void expect_kinds(const char *what, const char *const (*fr)[2], size_t n, const char *initial_enter,
			 const char *const *want)
{
	json_t *bt = json_pack("{s:s, s:s, s:[{s:i, s:o}]}", "schema", "coreq-bt/2", "arch", "x86_64", "threads", "tid",
			       10, "frames", stack_of(fr, n));
	json_t *chain = initial_enter ? json_pack("[i]", 1) : json_array();
	json_t *o = json_pack("{s:[{s:i, s:b, s:i, s:o, s:[], s:[i]}],"
			      " s:[{s:{s:s}, s:{s:s}, s:{s:s}, s:{s:i}}, {s:{s:n}, s:{s:s}, s:{s:s}, s:{s:i}}],"
			      " s:[{s:i, s:i, s:i, s:[{s:i, s:i}]}]}",
			      "threads", "tid", 10, "openmp", 1, "current_task", 0, "generating_chain", chain,
			      "scheduling_chain", "parallel_chain", 0,
			      "tasks", "function", "symbol", ".omp_outlined.", "exit_frame", "address", "0x0", "enter_frame",
			      "address", "0x0", "icvs", "implicit-task-var", 1, "function", "symbol", "exit_frame", "address",
			      "0x0", "enter_frame", "address", initial_enter ? initial_enter : "0x0", "icvs",
			      "implicit-task-var", 1,
			      "parallel_regions", "id", 0, "level", 1, "team_size", 1, "team", "tid", 10, "thread_num", 0);
	cq_omp_join(bt, o, NULL, false);
	for (size_t i = 0; i < n; i++)
		if (!kind_of(bt, i) || strcmp(kind_of(bt, i), want[i])) {
			check_failed++;
			printf("not ok - %s: frame %zu (%s) is %s, not %s\n", what, i, fr[i][0], kind_of(bt, i) ?: "?",
			       want[i]);
		} else {
			check_passed++;
		}
	json_decref(bt);
	json_decref(o);
}

/* A task of @p fn with exit and enter frames, implicit or not. */
static json_t *task_of(const char *fn, const char *exit, const char *enter, int implicit)
{
	return json_pack("{s:{s:s?}, s:{s:s}, s:{s:s}, s:{s:i}}", "function", "symbol", fn, "exit_frame", "address", exit,
			 "enter_frame", "address", enter, "icvs", "implicit-task-var", implicit);
}

/* A task run undeferred (if(0)) that opened a parallel region, inside the region of main's
 * fork (LLVM): the explicit task's exit frame is the outer implicit task's enter frame. Its
 * chain goes on through the outer region's implicit task to the initial task: each has
 * its frames (before, everything past the explicit task was "outside any task"). */
static void expect_undeferred_region(void)
{
	static const char *const fr[][2] = {
		{".omp_outlined..168", "prog"}, {"__kmp_invoke_microtask", "libomp.so.5"}, {"__kmpc_fork_call", "libomp.so.5"},
		{".omp_task_entry.", "prog"},   {".omp_outlined..169", "prog"},             {"__kmp_invoke_microtask", "libomp.so.5"},
		{"__kmpc_fork_call", "libomp.so.5"}, {"main", "prog"},                     {"__libc_start_main", "libc.so.6"},
	};
	json_t *bt = json_pack("{s:s, s:s, s:[{s:i, s:o}]}", "schema", "coreq-bt/2", "arch", "x86_64", "threads", "tid",
			       10, "frames", stack_of(fr, 9));
	/* frame addresses: a frame's CFA less 16 (its rbp) */
	json_t *o = json_pack("{s:[{s:i, s:b, s:i, s:[i, i, i], s:[], s:[i, i, i]}], s:[o, o, o, o],"
			      " s:[{s:i, s:i, s:i, s:[{s:i, s:i}]}, {s:i, s:i, s:i, s:[{s:i, s:i}]}, {s:i, s:i, s:i, s:[{s:i, s:i}]}]}",
			      "threads", "tid", 10, "openmp", 1, "current_task", 0, "generating_chain", 1, 2, 3,
			      "scheduling_chain", "parallel_chain", 0, 1, 2, "tasks",
			      task_of(".omp_outlined..168", "0x7ffe000011f0", "0x0", 1),
			      task_of(".omp_task_entry.", "0x7ffe000014f0", "0x7ffe000012f0", 0),
			      task_of(".omp_outlined..169", "0x7ffe000015f0", "0x7ffe000014f0", 1),
			      task_of(NULL, "0x0", "0x7ffe000016f0", 1),
			      "parallel_regions", "id", 0, "level", 2, "team_size", 1, "team", "tid", 10, "thread_num", 0,
			      "id", 1, "level", 1, "team_size", 2, "team", "tid", 10, "thread_num", 0,
			      "id", 2, "level", 0, "team_size", 1, "team", "tid", 10, "thread_num", 0);
	cq_omp_join(bt, o, NULL, false);
	static const char *const want[] = {"task", "runtime", "runtime", "task", "task", "runtime", "runtime", "serial",
					   "serial"};
	for (size_t i = 0; i < 9; i++)
		if (!kind_of(bt, i) || strcmp(kind_of(bt, i), want[i])) {
			check_failed++;
			printf("not ok - undeferred task with a region: frame %zu (%s) is %s, not %s\n", i, fr[i][0],
			       kind_of(bt, i) ?: "?", want[i]);
		} else {
			check_passed++;
		}
	CHECK_STR(json_string_value(json_object_get(seg(bt, 2), "task_type")), "explicit");
	CHECK_STR(json_string_value(json_object_get(seg(bt, 3), "task_type")), "implicit");
	CHECK(json_integer_value(json_object_get(seg(bt, 3), "region")) == 1);
	json_decref(bt);
	json_decref(o);
}

int main(void)
{
	expect_undeferred_region();
	/* the master in its region's join barrier: its implicit task is done (no frames), the
	 * initial task's enter frame is the fork's: main is the serial part, not that task's */
	static const char *const master[][2] = {
		{"__sched_yield", "libc.so.6"}, {"__kmp_join_barrier", "libomp.so.5"}, {"__kmpc_fork_call", "libomp.so.5"},
		{"main", "prog"}, {"__libc_start_main", "libc.so.6"},
	};
	static const char *const master_want[] = {"runtime", "runtime", "runtime", "serial", "serial"};
	expect_kinds("master in the join barrier", master, 5, "0x7ffe00001300", master_want);
	/* an idle worker whose chain is one task without frames: no serial part on it */
	static const char *const idle[][2] = {
		{"__sched_yield", "libc.so.6"}, {"__kmp_launch_worker", "libomp.so.5"}, {"start_thread", "libc.so.6"},
	};
	static const char *const idle_want[] = {"runtime", "runtime", "thread"};
	expect_kinds("an idle worker", idle, 3, NULL, idle_want);
	/* a worker whose chain ends in the master's initial task (its enter frame elsewhere) */
	expect_kinds("a worker, the initial task on the master", idle, 3, "0x7ffe00009000", idle_want);

	/* a frame address (rbp of __kmp_invoke_microtask: its CFA 0x7500 less 16) */
	expect_worker("x86_64", "0x7ffd000074f0", -1);
	/* flagged as a CFA: exactly __kmp_invoke_microtask's CFA */
	expect_worker("x86_64", "0x7ffd00007500", 0x10);
	/* s390x: the back-chain slot of __kmp_invoke_microtask is its callee's CFA less 160 */
	expect_worker("s390x", "0x7ffd00007360", -1);
	/* the runtime's stack address flag (0x30) is placed like a frame address */
	expect_worker("aarch64", "0x7ffd000074f8", 0x30);

	/* an exit frame not on the stack: said, and the frames not told apart */
	json_t *bt = worker_bt("x86_64"), *o = report("0x3", -1);
	cq_omp_join(bt, o, NULL, false);
	json_t *p = json_object_get(json_object_get(json_array_get(json_object_get(bt, "threads"), 0), "openmp"), "problems");
	CHECK(json_array_size(p) == 1 && strstr(json_string_value(json_array_get(p, 0)) ?: "", "0x3 is not on thread 11's stack"));
	json_decref(bt);

	/* no report: frames marked by module, and why */
	bt = worker_bt("x86_64");
	cq_omp_join(bt, NULL, "no plugin", false);
	CHECK_STR(kind_of(bt, 0), "other");
	CHECK_STR(kind_of(bt, 1), "runtime");
	CHECK_STR(json_string_value(json_object_get(json_object_get(bt, "openmp"), "why")), "no plugin");
	json_decref(bt);
	json_decref(o);

	CHECK(cq_omp_runtime_module("libomp.so.5") && cq_omp_runtime_module("libgomp.so.1") &&
	      cq_omp_runtime_module("libiomp5.so") && !cq_omp_runtime_module("libompd.so") && !cq_omp_runtime_module(NULL));
	return check_report("test_ompjoin");
}
