/* SPDX-License-Identifier: MIT */
/* coreq snapshot [-o DIR] PID...: each process stopped, its every thread's stack walked
 * (which reads what a backtrace needs), written as a small core of exactly those pages
 * (corelib/core_write.h), and resumed; the cores read offline as kernel cores are. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "corelib/core_write.h"
#include "live/job.h"
#include "output/output.h"

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
	cq_stacks_free(st);
	if (err) {
		cq_core_close(core);
		return cq_fail(err);
	}
	/* the OpenMP and MPI views read what their plugins read (in isolated children, whose
	 * reads are logged too): where the process has such a runtime, those pages as well */
	const char *views[2] = {NULL, NULL};
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
		for (int k = 0; k < 2; k++)
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
		printf("%s: process %d (%s), %zu threads%s%s%s%s, %llu KiB of memory in %zu pieces, %llu KiB in all; "
		       "stopped %u ms\n", path, pid, cq_esc(fname), nthreads, views[0] ? ", " : "", views[0] ? views[0] : "",
		       views[1] ? ", " : "", views[1] ? views[1] : "", (unsigned long long)ws.data_bytes / 1024, ws.loads,
		       (unsigned long long)ws.file_bytes / 1024, stopped);
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

int cq_cmd_snapshot(struct cq_cli *cli)
{
	if (cli->nargs < 1 || cli->pid || (cli->job && cli->nargs != 1)) {
		fprintf(stderr, "coreq: usage: coreq snapshot [-o DIR] PID... | --job PID  [--max-stop MS] [--json]\n");
		return CQ_EXIT_USAGE;
	}
	const char *dir = cli->output ? cli->output : ".";
	json_t *list = cli->json ? json_array() : NULL;
	int rc = CQ_EXIT_OK;
	char **args = cli->args;
	int nargs = cli->nargs;
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
	cli->args = args;
	cli->nargs = nargs;
	cli->pid = 0;
	if (list) {
		json_t *doc = json_pack("{s:s, s:o}", "schema", "coreq-snapshot/1", "snapshots", list);
		cq_emit_json(doc);
	}
	return rc;
}
