/* SPDX-License-Identifier: MIT */
/* coreq snapshot [-o DIR] PID...: each process stopped, its every thread's stack walked
 * (which reads what a backtrace needs), written as a small core of exactly those pages
 * (corelib/core_write.h), and resumed; the cores read offline as kernel cores are. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "events/events.h"
#include "corelib/core_write.h"
#include "live/job.h"
#include "output/output.h"

/* What a sample of the stacks is: per process (its pid, as a key) its threads' frame pcs
 * ({tid: [pc...]}), compared between samples (--samples). */
static json_t *sample_stacks;

/* The CPU time process @p pid has used, in ms (utime + stime of /proc/PID/stat), -1 when
 * unknown. */
static long long cpu_ms(int pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *p = strrchr(buf, ')');
	unsigned long long ut, st;
	/* after ")": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -1;
	long hz = sysconf(_SC_CLK_TCK);
	return hz > 0 ? (long long)((ut + st) * 1000 / (unsigned long long)hz) : -1;
}

/* Whether @p module is a runtime's (the C library and loader, MPI and its layers, OpenMP):
 * a thread waiting in one polls, and its frames there change between samples while the
 * program's own do not (FACTS.md, "Live processes"). */
static bool runtime_module(const char *module)
{
	static const char *const prefixes[] = {"libc.so", "libc-", "ld-linux", "ld64.so", "linux-vdso", "linux-gate",
					       "[vdso]", "libpthread", "libmpi", "libopen-pal", "libopen-rte", "libpmix",
					       "libevent", "libucp", "libucs", "libuct", "libfabric", "libpsm", "mca_",
					       "libomp", "libgomp", "libiomp", "libhwloc", "libmlx", "libibverbs"};
	if (!module)
		return true;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(module, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/* {tid: [pc...]} of @p st: per thread the pcs of its frames from the innermost one outside
 * the runtimes outward (the program's frames: a rank polling in MPI has not moved). */
static json_t *stack_pcs(const struct cq_stacks *st)
{
	json_t *o = json_object();
	for (size_t i = 0; st && o && i < st->nthreads; i++) {
		json_t *a = json_array();
		unsigned k = 0;
		while (k < st->threads[i].nframes && runtime_module(st->threads[i].frames[k].info->module))
			k++;
		for (; a && k < st->threads[i].nframes; k++)
			json_array_append_new(a, json_integer((json_int_t)st->threads[i].frames[k].pc));
		char key[16];
		snprintf(key, sizeof(key), "%d", (int)st->threads[i].tid);
		json_object_set_new(o, key, a);
	}
	return o;
}

/* One process: its snapshot as DIR/core.PID (a job's rank: DIR/rankR.core), a line (or an
 * object) saying what it holds. */
static int snapshot_one(struct cq_cli *cli, int pid, int rank, const char *dir, json_t *list)
{
	cli->pid = pid;
	struct cq_core *core;
	int rc = cq_open_core(cli, false, &core);
	if (rc)
		return rc;
	/* the walk reads what a backtrace of every thread needs: those pages are the snapshot */
	struct cq_stack_options opt = {.max_frames = cli->max_frames};
	struct cq_stacks *st = NULL;
	struct cq_error *err = cq_stack_walk_frames(core, &opt, &st);
	size_t nthreads = st ? st->nthreads : 0;
	if (sample_stacks) {
		char key[16];
		snprintf(key, sizeof(key), "%d", pid);
		json_t *pcs = stack_pcs(st);
		/* the CPU time so far beside the stacks (a stack that does not move may still spin) */
		json_object_set_new(pcs, "cpu_ms", json_integer(cpu_ms(pid)));
		json_object_set_new(sample_stacks, key, pcs);
	}
	cq_stacks_free(st);
	if (err) {
		cq_core_close(core);
		return cq_fail(err);
	}
	/* the OpenMP and MPI views read what their plugins read (in isolated children, whose
	 * reads are logged too): where the process has such a runtime, those pages as well */
	const char *views[3] = {NULL, NULL, NULL};
	struct cq_symref ref;
	json_t *doc = NULL;
	if (!(err = cq_core_lookup(core, "ompd_dll_locations", NULL, &ref)) &&
	    !(err = cq_ompd_report(core, &cli->ompd, &doc)))
		views[0] = "OpenMP (OMPD)";
	cq_error_destroy(err);
	json_decref(doc);
	doc = NULL;
	if (!(err = cq_core_lookup(core, "MPIR_dll_name", NULL, &ref)) && !(err = cq_mqd_report(core, &cli->mqd, &doc)))
		views[1] = "MPI (MQD)";
	cq_error_destroy(err);
	json_decref(doc);
	doc = NULL;
	/* coreq's flight recorder: its rings, every event (`coreq events` on the snapshot) */
	if (!(err = cq_events_read(core, 0, &doc)))
		views[2] = "events";
	cq_error_destroy(err);
	json_decref(doc);
	err = NULL;
	const struct cq_mem_range *pages;
	size_t n;
	if ((err = cq_process_pages(core, &pages, &n))) {
		cq_core_close(core);
		return cq_fail(err);
	}
	/* a copy: writing reads through the model, which records (and may move) them */
	struct cq_mem_range *copy = malloc((n ? n : 1) * sizeof(*copy));
	if (!copy) {
		cq_core_close(core);
		return cq_fail(&cq_error_nomem);
	}
	memcpy(copy, pages, n * sizeof(*copy));
	char path[PATH_MAX];
	if (rank >= 0)
		snprintf(path, sizeof(path), "%s/rank%d.core", dir, rank);
	else
		snprintf(path, sizeof(path), "%s/core.%d", dir, pid);
	struct cq_core_write_stats ws;
	err = cq_core_write(core, path, copy, n, &ws);
	unsigned stopped = cq_process_stopped_ms(core);
	char fname[17];
	memcpy(fname, core->fname, sizeof(fname));
	free(copy);
	cq_core_close(core); /* resumed here */
	if (err)
		return cq_fail(err);
	if (list) {
		json_t *v = json_array();
		for (int k = 0; k < 3; k++)
			if (views[k])
				json_array_append_new(v, json_string(views[k]));
		json_t *o = json_pack("{s:i, s:o, s:o, s:I, s:o, s:I, s:I, s:I, s:I}", "pid", pid,
				      "command", cq_json_str(fname), "path", cq_json_str(path), "threads",
						      (json_int_t)nthreads, "views", v, "memory_pieces", (json_int_t)ws.loads,
						      "memory_bytes", (json_int_t)ws.data_bytes, "file_bytes",
						      (json_int_t)ws.file_bytes, "stopped_ms", (json_int_t)stopped);
		if (o && rank >= 0)
			json_object_set_new(o, "rank", json_integer(rank));
		json_array_append_new(list, o);
	} else {
		printf("%s: process %d (%s), %zu threads%s%s%s%s%s%s, %llu KiB of memory in %zu pieces, %llu KiB in all; "
		       "stopped %u ms\n", path, pid, cq_esc(fname), nthreads, views[0] ? ", " : "", views[0] ? views[0] : "",
		       views[1] ? ", " : "", views[1] ? views[1] : "", views[2] ? ", " : "", views[2] ? views[2] : "",
		       (unsigned long long)ws.data_bytes / 1024, ws.loads, (unsigned long long)ws.file_bytes / 1024, stopped);
	}
	return CQ_EXIT_OK;
}

/* --job PID: every rank of PID's job stopped first (one cut across the ranks), then each
 * read and written, then all resumed together. */
static int snapshot_job(struct cq_cli *cli, int pid, const char *dir, json_t *list)
{
	struct cq_job_rank *ranks;
	size_t n;
	int launcher;
	struct cq_error *err = cq_job_ranks(pid, &ranks, &n, &launcher);
	if (err)
		return cq_fail(err);
	int rc = CQ_EXIT_OK;
	cq_process_hold(true);
	for (size_t i = 0; i < n && !err; i++)
		err = cq_process_stop(ranks[i].pid, &cli->live);
	if (err) {
		cq_process_hold(false);
		cq_process_resume_all();
		free(ranks);
		return cq_fail(err);
	}
	for (size_t i = 0; i < n; i++) {
		cli->nargs = 0;
		int r = snapshot_one(cli, ranks[i].pid, ranks[i].rank, dir, list);
		if (r && !rc)
			rc = r;
	}
	cq_process_hold(false);
	cq_process_resume_all();
	if (!list)
		printf("job of process %d (launcher %d): %zu ranks stopped together, resumed together\n", pid, launcher, n);
	free(ranks);
	return rc;
}

/* Add tid @p tid to @p moved once. */
static void add_moved(json_t *moved, const char *tid)
{
	size_t m;
	json_t *x;
	json_array_foreach(moved, m, x)
		if (json_integer_value(x) == atoi(tid))
			return;
	json_array_append_new(moved, json_integer(atoi(tid)));
}

/* Per process, whether its stacks moved between the samples (@p samples: one
 * {pid: {tid: [pc...]}} per sample): {pid: {moved, threads_moved: [tid...]}}. A thread that
 * came or went between samples counts as moved. */
static json_t *progress(json_t *samples)
{
	json_t *out = json_object(), *first = json_array_get(samples, 0), *base;
	const char *pid;
	json_object_foreach(first, pid, base) {
		json_t *moved = json_array(), *s, *pcs;
		const char *tid;
		size_t k;
		json_array_foreach(samples, k, s) {
			json_t *other = json_object_get(s, pid);
			json_object_foreach(base, tid, pcs)
				if (strcmp(tid, "cpu_ms") && (!other || !json_equal(pcs, json_object_get(other, tid))))
					add_moved(moved, tid);
			json_object_foreach(other, tid, pcs)
				if (strcmp(tid, "cpu_ms") && !json_object_get(base, tid))
					add_moved(moved, tid);
		}
		json_t *last = json_object_get(json_array_get(samples, json_array_size(samples) - 1), pid);
		json_int_t c0 = json_integer_value(json_object_get(base, "cpu_ms")),
			   c1 = json_integer_value(json_object_get(last, "cpu_ms"));
		json_object_set_new(out, pid, json_pack("{s:b, s:o, s:I}", "moved", json_array_size(moved) > 0,
							 "threads_moved", moved, "cpu_ms", c0 >= 0 && c1 >= c0 ? c1 - c0 : -1));
	}
	return out;
}

int cq_cmd_snapshot(struct cq_cli *cli)
{
	if (cli->nargs < 1 || cli->pid || (cli->job && cli->nargs != 1)) {
		fprintf(stderr, "coreq: usage: coreq snapshot [-o DIR] PID... | --job PID  [--samples N --interval MS] "
				"[--max-stop MS] [--json]\n");
		return CQ_EXIT_USAGE;
	}
	const char *base = cli->output ? cli->output : ".";
	unsigned nsamples = cli->samples ? cli->samples : 1;
	json_t *list = cli->json ? json_array() : NULL, *samples = nsamples > 1 ? json_array() : NULL;
	int rc = CQ_EXIT_OK;
	char **args = cli->args;
	int nargs = cli->nargs;
	for (unsigned k = 0; k < nsamples; k++) {
		char dir[PATH_MAX];
		if (nsamples > 1) {
			/* DIR/sample1, DIR/sample2, ...: one set of cores per sample */
			snprintf(dir, sizeof(dir), "%s/sample%u", base, k + 1);
			if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
				fprintf(stderr, "coreq: snapshot: %s: %s\n", dir, strerror(errno));
				rc = CQ_EXIT_IO;
				break;
			}
			if (k)
				usleep(cli->interval_ms * 1000u);
			sample_stacks = json_object();
		} else {
			snprintf(dir, sizeof(dir), "%s", base);
		}
		for (int i = 0; i < nargs; i++) {
			uint64_t v;
			if (!cq_parse_u64(args[i], &v) || v == 0 || v > INT32_MAX) {
				fprintf(stderr, "coreq: snapshot: %s is not a process id\n", args[i]);
				rc = CQ_EXIT_USAGE;
				continue;
			}
			cli->nargs = 0; /* cq_open_core: no CORE argument with --pid */
			int r = cli->job ? snapshot_job(cli, (int)v, dir, list) : snapshot_one(cli, (int)v, -1, dir, list);
			if (r && !rc)
				rc = r;
		}
		if (samples)
			json_array_append_new(samples, sample_stacks);
		sample_stacks = NULL;
	}
	cli->args = args;
	cli->nargs = nargs;
	cli->pid = 0;
	json_t *moved = samples ? progress(samples) : NULL;
	json_decref(samples);
	if (moved && !list) {
		/* STAT's use of repeated samples: a hang is told from a slow phase */
		const char *pid;
		json_t *v;
		json_object_foreach(moved, pid, v) {
			json_t *t = json_object_get(v, "threads_moved");
			printf("process %s: %s", pid, json_is_true(json_object_get(v, "moved")) ? "progressing" : "stuck");
			if (json_is_true(json_object_get(v, "moved"))) {
				printf(" (threads whose stack moved:");
				size_t m;
				json_t *x;
				json_array_foreach(t, m, x)
					printf(" %lld", (long long)json_integer_value(x));
				printf(")");
			} else {
				printf(" (the same stacks in %u samples %u ms apart)", nsamples, cli->interval_ms);
			}
			json_int_t c = json_integer_value(json_object_get(v, "cpu_ms"));
			if (c >= 0)
				printf(", %lld ms of CPU meanwhile%s", (long long)c,
				       json_is_true(json_object_get(v, "moved")) ? ""
				       /* a quarter of the time sampled or more: a loop, not a few wakeups */
				       : (unsigned long long)c * 4 >= (unsigned long long)cli->interval_ms * (nsamples - 1) ? ": spinning"
				       : ": blocked");
			printf("\n");
		}
	}
	if (list) {
		json_t *doc = json_pack("{s:s, s:o}", "schema", "coreq-snapshot/1", "snapshots", list);
		if (moved)
			json_object_set_new(doc, "progress", json_incref(moved));
		cq_emit_json(doc);
	}
	json_decref(moved);
	return rc;
}
