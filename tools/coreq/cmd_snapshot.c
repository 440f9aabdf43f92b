/* SPDX-License-Identifier: MIT */
/* coreq snapshot [-o DIR] PID...: each process stopped, its every thread's stack walked
 * (which reads what a backtrace needs), written as a small core of exactly those pages
 * (corelib/core_write.h), and resumed; the cores read offline as kernel cores are. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "events/events.h"
#include "job/progress.h"
#include "corelib/core_write.h"
#include "launch/job.h"
#include "launch/relay.h"
#include "launch/run.h"
#include "launch/slurm.h"
#include "output/outdir.h"
#include "output/output.h"

/* The bt documents of every process of every sample (--samples), for job/progress.h. */
static json_t *sample_bts;
/* --job --json: how each job's ranks were found (the document's "jobs"). */
static json_t *job_docs;

/* A process the kernel would write no core of (not dumpable) is refused unless the user
 * asked for it; then it is said. */
static int dumpable_or_asked(const struct cq_cli *cli, int pid)
{
	char why[256];
	if (cq_process_dumpable(pid, why, sizeof(why)))
		return CQ_EXIT_OK;
	if (!cli->allow_nondumpable) {
		fprintf(stderr, "coreq: snapshot: process %d is %s: the kernel would write no core of it; "
				"--allow-non-dumpable writes one (0600) anyway\n", pid, why);
		return CQ_EXIT_PROCESS;
	}
	fprintf(stderr, "coreq: snapshot: process %d is %s: its snapshot is written because --allow-non-dumpable "
			"was given (0600)\n", pid, why);
	return CQ_EXIT_OK;
}

/* A thread's stack as a snapshot must hold it: the word its stack pointer points at. */
struct stack_top {
	pid_t tid;
	uint64_t sp;
};

/* The threads of live model @p core whose stack a snapshot must hold, into *@p ret (caller
 * frees), their count returned: each whose stack pointer is in memory the process may read,
 * but in a file the reader finds at its path (a page that holds what the file holds is left
 * out of the core: core_write.h). Each one's top word is read now, so that its page is
 * among those written whatever the walk read (a frame without CFI). */
static size_t stacks_meant(struct cq_core *core, struct stack_top **ret)
{
	struct stack_top *t = malloc((core->nthreads ? core->nthreads : 1) * sizeof(*t));
	size_t n = 0;
	for (size_t i = 0; t && i < core->nthreads; i++) {
		const struct cq_thread *th = &core->threads[i];
		if (cq_core_mem_source(core, th->sp, NULL) != CQ_MEM_CORE)
			continue;
		bool in_file = false;
		for (size_t k = 0; k < core->nfile_maps && !in_file; k++)
			in_file = th->sp >= core->file_maps[k].start && th->sp < core->file_maps[k].end &&
				  !core->file_maps[k].mapped;
		if (in_file)
			continue;
		uint8_t word[8];
		cq_error_destroy(cq_core_read(core, th->sp, word, cq_target_ptr_size(core->target)));
		t[n++] = (struct stack_top){(pid_t)th->tid, th->sp};
	}
	*ret = t;
	return t ? n : 0;
}

/* Which of the @p n stack tops @p t the core written at @p path lacks (its bytes not in it):
 * their tids into @p lost, the count into *@p nlost. What was written is read back: a
 * snapshot is judged by what it holds, whatever kept a read from it. */
static struct cq_error *stacks_lost(const char *path, const struct stack_top *t, size_t n, pid_t *lost, size_t *nlost)
{
	struct cq_core *w;
	struct cq_error *err = cq_core_open(path, NULL, &w);
	*nlost = 0;
	if (err)
		return err;
	for (size_t i = 0; i < n; i++)
		if (cq_core_mem_source(w, t[i].sp, NULL) != CQ_MEM_CORE)
			lost[(*nlost)++] = t[i].tid;
	cq_core_close(w);
	return NULL;
}

/* What the reads of the process's memory gave, in words: how many failed and the first
 * failure, into @p buf. */
static void reads_said(const struct cq_live_reads *rd, char *buf, size_t size)
{
	if (!rd->failed) {
		snprintf(buf, size, "no read of %s failed", rd->path);
		return;
	}
	snprintf(buf, size, "%llu of %llu reads of %s failed, the first at 0x%llx: %s", (unsigned long long)rd->failed,
		 (unsigned long long)(rd->ok + rd->failed), rd->path, (unsigned long long)rd->first_addr,
		 rd->first_errno ? strerror(rd->first_errno) : "nothing there");
}

/* One process: its snapshot as DIR/core.PID (a job's rank: DIR/rankR.core), a line (or an
 * object) saying what it holds. */
static int snapshot_one(struct cq_cli *cli, int pid, int rank, const struct cq_outdir *dir, json_t *list)
{
	int drc = cli->job ? CQ_EXIT_OK : dumpable_or_asked(cli, pid); /* a job's ranks: checked before the cut */
	if (drc)
		return drc;
	cli->pid = pid;
	struct cq_core *core;
	int rc = cq_open_core(cli, false, &core);
	if (rc)
		return rc;
	/* the walk reads what a backtrace of every thread needs: those pages are the snapshot */
	struct cq_stack_options opt = {.max_frames = cli->max_frames};
	struct cq_stacks *st = NULL;
	struct cq_error *err = cq_stack_walk_frames(core, &opt, &st);
	if (err) {
		cq_core_close(core);
		return cq_fail(err);
	}
	size_t nthreads = st->nthreads;
	/* a sample (--samples): what job/progress.h compares, taken from the walk as it is (a
	 * bt document's other members cost time while the process is held) */
	json_t *bt = json_pack("{s:s, s:[]}", "schema", "coreq-bt/2", "threads");
	for (size_t i = 0; bt && i < st->nthreads; i++) {
		json_t *frames = json_array();
		for (unsigned k = 0; k < st->threads[i].nframes; k++) {
			const struct cq_frame *f = &st->threads[i].frames[k];
			json_array_append_new(frames, json_pack("{s:o, s:s?}", "pc", cq_json_addr(f->pc), "module",
								f->info ? f->info->module : NULL));
		}
		json_array_append_new(json_object_get(bt, "threads"),
				      json_pack("{s:i, s:o}", "tid", (int)st->threads[i].tid, "frames", frames));
	}
	cq_stacks_free(st);
	/* with its rank from the launcher's variables: the environment's pages are then in the
	 * snapshot too, and `coreq stacks` on it numbers the ranks as on the live job */
	cq_bt_task(core, bt);
	if (rank >= 0 && !json_is_integer(json_object_get(bt, "task"))) /* the launcher's (live/job.h) */
		json_object_set_new(bt, "task", json_integer(rank));
	cq_bt_process(core, bt);
	if (sample_bts)
		json_array_append(sample_bts, bt);
	json_decref(bt);
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
	/* the MPI view's reads (cmd_mqd.c): the DLL's where its types can be had (none without
	 * them: what an analysis lacks must not lengthen the hold), the messages in flight,
	 * what the MPI calls' parameters name */
	char mqd_why[1024];
	if (cq_mqd_snapshot_reads(&(struct cq_rank_analysis){cli->max_frames, &cli->mqd}, core, mqd_why,
				  sizeof(mqd_why)))
		views[1] = "MPI (MQD)";
	/* coreq's flight recorder: what `coreq events` reads of it (the rings' records written
	 * so far, the strings and code they name), read without decoding, bounded */
	uint64_t rec_bytes;
	char *capped = NULL;
	if (!(err = cq_events_touch(core, &rec_bytes, &capped)))
		views[2] = capped ? "events (in part)" : "events";
	if (capped)
		fprintf(stderr, "coreq: snapshot of process %d: %s\n", pid, capped);
	free(capped);
	cq_error_destroy(err);
	err = NULL;
	/* the top of every thread's stack, read so that it is written, and checked in what is */
	struct stack_top *tops;
	size_t ntops = stacks_meant(core, &tops);
	if (!tops) {
		cq_core_close(core);
		return cq_fail(&cq_error_nomem);
	}
	const struct cq_mem_range *pages;
	size_t n;
	if ((err = cq_process_pages(core, &pages, &n))) {
		free(tops);
		cq_core_close(core);
		return cq_fail(err);
	}
	/* a copy: writing reads through the model, which records (and may move) them */
	struct cq_mem_range *copy = malloc((n ? n : 1) * sizeof(*copy));
	if (!copy) {
		free(tops);
		cq_core_close(core);
		return cq_fail(&cq_error_nomem);
	}
	memcpy(copy, pages, n * sizeof(*copy));
	char path[PATH_MAX], shown[PATH_MAX], name[64];
	if (rank >= 0)
		snprintf(name, sizeof(name), "rank%d.core", rank);
	else
		snprintf(name, sizeof(name), "core.%d", pid);
	cq_outdir_file(dir, name, path, sizeof(path), shown, sizeof(shown));
	struct cq_core_write_stats ws;
	err = cq_core_write(core, path, copy, n, &ws);
	/* killed, or let go (the bound, coreq stopped), after its pages were listed: the core
	 * holds what could no longer be read */
	if (!err && (err = cq_process_check(core)))
		unlink(path);
	unsigned stopped = cq_process_stopped_ms(core);
	/* threads that did not stop (vfork, D state): a snapshot without them, said so */
	const pid_t *utids;
	size_t unstopped = cq_process_unstopped(core, &utids);
	json_t *missing = json_array();
	for (size_t i = 0; i < unstopped; i++)
		json_array_append_new(missing, json_integer(utids[i]));
	char fname[17];
	memcpy(fname, core->fname, sizeof(fname));
	struct cq_live_reads rd;
	cq_process_reads(core, &rd);
	free(copy);
	cq_core_close(core); /* resumed here */
	/* what was written, read back (the process runs meanwhile): a core that holds none of
	 * its threads' stacks, or next to nothing of what coreq read, is no snapshot of it (its
	 * stacks would all be ??): an error, not written; one that lacks some is incomplete */
	pid_t *lost = err ? NULL : malloc((ntops ? ntops : 1) * sizeof(*lost));
	size_t nlost = 0;
	if (!err && !lost)
		err = &cq_error_nomem;
	if (!err && (err = stacks_lost(path, tops, ntops, lost, &nlost)))
		unlink(path);
	char why[512];
	reads_said(&rd, why, sizeof(why));
	bool nothing = rd.failed && (!rd.ok_bytes || rd.ok_bytes < (rd.ok_bytes + rd.failed_bytes) / 10);
	if (!err && ((ntops && nlost == ntops) || nothing)) {
		unlink(path);
		if (nlost)
			err = cq_error_create(CQ_ERR_PROCESS, "snapshot: process %d: the stack of none of its %zu thread%s "
					      "could be read (%s): no snapshot written", pid, ntops, ntops > 1 ? "s" : "", why);
		else
			err = cq_error_create(CQ_ERR_PROCESS, "snapshot: process %d: its memory could not be read (%s): %llu "
					      "of %llu KiB read: no snapshot written", pid, why,
					      (unsigned long long)rd.ok_bytes / 1024,
					      (unsigned long long)(rd.ok_bytes + rd.failed_bytes) / 1024);
	}
	free(tops);
	json_t *stacks_missing = json_array();
	for (size_t i = 0; !err && i < nlost; i++)
		json_array_append_new(stacks_missing, json_integer(lost[i]));
	if (unstopped && !err)
		fprintf(stderr, "coreq: snapshot: %s: incomplete: %zu thread%s (the first %d) did not stop (vfork, D state) "
				"and %s not in it\n", shown, unstopped, unstopped > 1 ? "s" : "",
			(int)json_integer_value(json_array_get(missing, 0)), unstopped > 1 ? "are" : "is");
	if (!err && nlost)
		fprintf(stderr, "coreq: snapshot: %s: incomplete: the stacks of %zu of its %zu threads (the first %d) could "
				"not be read (%s) and are not in it\n", shown, nlost, ntops, (int)lost[0], why);
	free(lost);
	if (err) {
		json_decref(missing);
		json_decref(stacks_missing);
		return cq_fail(err);
	}
	if (list) {
		json_t *v = json_array();
		for (int k = 0; k < 3; k++)
			if (views[k])
				json_array_append_new(v, json_string(views[k]));
		json_t *o = json_pack("{s:i, s:o, s:o, s:I, s:o, s:I, s:I, s:I, s:I}", "pid", pid,
				      "command", cq_json_str(fname), "path", cq_json_str(shown), "threads",
						      (json_int_t)nthreads, "views", v, "memory_pieces", (json_int_t)ws.loads,
						      "memory_bytes", (json_int_t)ws.data_bytes, "file_bytes",
						      (json_int_t)ws.file_bytes, "stopped_ms", (json_int_t)stopped);
		if (o && rank >= 0)
			json_object_set_new(o, "rank", json_integer(rank));
		if (o && unstopped)
			json_object_set_new(o, "threads_not_stopped", json_incref(missing));
		if (o && nlost)
			json_object_set_new(o, "stacks_not_read", json_incref(stacks_missing));
		json_array_append_new(list, o);
	} else {
		printf("%s: process %d (%s), %zu threads%s%s%s%s%s%s, %llu KiB of memory in %zu pieces, %llu KiB in all; "
		       "stopped %u ms%s%s\n", shown, pid, cq_esc(fname), nthreads, views[0] ? ", " : "", views[0] ? views[0] : "",
		       views[1] ? ", " : "", views[1] ? views[1] : "", views[2] ? ", " : "", views[2] ? views[2] : "",
		       (unsigned long long)ws.data_bytes / 1024, ws.loads, (unsigned long long)ws.file_bytes / 1024, stopped,
		       unstopped ? "; INCOMPLETE: threads not stopped" : "", nlost ? "; INCOMPLETE: stacks not read" : "");
	}
	json_decref(missing);
	json_decref(stacks_missing);
	return unstopped || nlost ? CQ_EXIT_PARTIAL : CQ_EXIT_OK;
}

/* --job PID: every rank of PID's job stopped first (one cut across the ranks), then each
 * read and written, then all resumed together. */
static int snapshot_job(struct cq_cli *cli, int pid, const struct cq_outdir *dir, json_t *list)
{
	struct cq_job job;
	struct cq_error *err = cq_job_find(pid, &job);
	if (err)
		return cq_fail(err);
	int rc = CQ_EXIT_OK;
	/* every rank checked before any is stopped: a refusal holds none */
	for (size_t i = 0; i < job.n && !rc; i++)
		rc = dumpable_or_asked(cli, job.ranks[i].pid);
	if (rc) {
		cq_job_free(&job);
		return rc;
	}
	cq_process_hold(true);
	for (size_t i = 0; i < job.n && !err; i++)
		err = cq_process_stop(job.ranks[i].pid, &cli->live);
	if (err) {
		cq_process_hold(false);
		cq_process_resume_all();
		cq_job_free(&job);
		return cq_fail(err);
	}
	for (size_t i = 0; i < job.n; i++) {
		cli->nargs = 0;
		int r = snapshot_one(cli, job.ranks[i].pid, job.ranks[i].rank, dir, list);
		if (r && !rc)
			rc = r;
	}
	cq_process_hold(false);
	cq_process_resume_all();
	/* a launcher's table with ranks on other hosts: this node's are written, the others
	 * named (what reaches them: --slurm), and the snapshot is not the job's */
	if (job.nelsewhere) {
		char ranks[256] = "";
		size_t at = 0;
		for (size_t i = 0; i < job.nelsewhere && at < sizeof(ranks) - 32; i++)
			at += (size_t)snprintf(ranks + at, sizeof(ranks) - at, "%s%d@%s", i ? ", " : "",
					       job.elsewhere[i].rank, cq_esc(job.elsewhere[i].host));
		fprintf(stderr, "coreq: snapshot: launcher %d: %zu of its %zu ranks are on other hosts (%s%s): not "
				"reached from here (coreq snapshot --slurm JOB reaches a Slurm job's every node)\n",
			job.launcher, job.nelsewhere, job.n + job.nelsewhere, ranks,
			at >= sizeof(ranks) - 32 ? ", ..." : "");
		if (!rc)
			rc = CQ_EXIT_PARTIAL;
	}
	if (job_docs) {
		json_t *away = json_array();
		for (size_t i = 0; i < job.nelsewhere; i++)
			json_array_append_new(away, json_pack("{s:i, s:o, s:i}", "rank", job.elsewhere[i].rank, "host",
							      cq_json_str(job.elsewhere[i].host), "pid",
							      job.elsewhere[i].pid));
		json_array_append_new(job_docs, json_pack("{s:i, s:i, s:s, s:o, s:I, s:o}", "of", pid, "launcher",
							  job.launcher, "found_by", job.table_image ? "MPIR_proctable" :
							  "environment", "table_image", job.table_image ?
							  cq_json_str(job.table_image) : json_null(), "ranks",
							  (json_int_t)job.n, "elsewhere", away));
	}
	if (!list)
		printf("job of process %d (launcher %d%s%s): %zu ranks stopped together, resumed together\n", pid,
		       job.launcher, job.table_image ? ", its MPIR_proctable in " : "",
		       job.table_image ? cq_esc(job.table_image) : "", job.n);
	cq_job_free(&job);
	return rc;
}

/* --slurm-node: wait for the front end's line "@p verb K" on stdin until @p deadline_ms
 * (monotonic): true when it came; false at the deadline, at stdin's end (the front end gave
 * up or ended), or when another sample's line came. */
static bool wait_for_line(const char *verb, unsigned k, long long deadline_ms)
{
	char line[128];
	size_t n = 0, vlen = strlen(verb);
	for (;;) {
		long long left = deadline_ms - cq_run_now_ms();
		if (left <= 0)
			return false;
		struct pollfd pf = {0, POLLIN, 0};
		int r = poll(&pf, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		ssize_t got = read(0, line + n, 1);
		if (got <= 0)
			return false;
		if (line[n] == '\n') {
			line[n] = 0;
			char *end;
			if (!strncmp(line, verb, vlen) && line[vlen] == ' ') {
				unsigned long said = strtoul(line + vlen + 1, &end, 10);
				return said == k && !*end;
			}
			n = 0;
			continue;
		}
		if (++n == sizeof(line) - 1)
			n = 0;
	}
}

/* Remove the files of local directory @p path and the directory. */
static void remove_local(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	char p[PATH_MAX];
	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
		if (e->d_type == DT_DIR)
			remove_local(p);
		else
			unlink(p);
	}
	if (d)
		closedir(d);
	rmdir(path);
}

/* `coreq mqd --json CORE` of a rank's core just written, into @p docpath: false when it
 * gives no document (said on stderr). */
static bool rank_document(struct cq_cli *cli, const char *core, const char *docpath)
{
	char self[PATH_MAX];
	ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[sl > 0 ? sl : 0] = 0;
	char *argv[16];
	size_t n = 0;
	argv[n++] = self;
	argv[n++] = "mqd";
	argv[n++] = "--json";
	cq_slurm_pass_options(cli, argv, &n, false);
	argv[n++] = (char *)core;
	argv[n] = NULL;
	char *out = NULL, *said = NULL;
	int status;
	struct cq_error *err = cq_run_capture(argv, 300000, 256u << 20, &out, &said, &status);
	bool ok = !err && out && *out == '{';
	if (ok) {
		struct cq_output o;
		ok = !(err = cq_output_begin_mode(docpath, "a rank's document", NULL, 0, 0600, &o));
		if (ok && (err = cq_output_write(&o, out, strlen(out))))
			cq_output_abort(&o);
		else if (ok)
			err = cq_output_commit(&o);
		ok = !err;
	}
	if (!ok)
		fprintf(stderr, "coreq: %s: no MPI document of it (exit %d): %s\n", core, status,
			err ? err->message : said ? said : "");
	cq_error_destroy(err);
	free(out);
	free(said);
	return ok;
}

void cq_sample_dir_name(unsigned k, unsigned n, char *buf, size_t size)
{
	snprintf(buf, size, "sample%0*u", snprintf(NULL, 0, "%u", n), k);
}

/* What a node sends of one cut, after the resume: each rank's MPI document (coreq mqd
 * --json of its core, made here: the job view is then made of documents, the nodes' work
 * done in parallel; a child per rank, its DLL and bounds as `coreq mqd` has them), and the
 * cores and documents themselves through srun's output where @p send (DIR not shared).
 * @p list's entries [@p from, @p to) are the cut's snapshots, written into @p dir (at
 * @p base / @p subname by name); @p sample 0: the only one. Returns an exit status. */
static int send_sample(struct cq_cli *cli, const struct cq_outdir *dir, const char *base, const char *subname,
		       unsigned sample, json_t *list, size_t from, size_t to, bool send)
{
	int rc = CQ_EXIT_OK;
	for (size_t i = from; i < to; i++) {
		json_t *o = json_array_get(list, i);
		int r = (int)json_integer_value(json_object_get(o, "rank"));
		char name[64], path[PATH_MAX], shown[PATH_MAX], docname[64], docpath[PATH_MAX], dshown[PATH_MAX];
		snprintf(name, sizeof(name), "rank%d.core", r);
		snprintf(docname, sizeof(docname), "rank%d.mqd.json", r);
		cq_outdir_file(dir, name, path, sizeof(path), shown, sizeof(shown));
		cq_outdir_file(dir, docname, docpath, sizeof(docpath), dshown, sizeof(dshown));
		/* the child opens the core by its name (not through this process's descriptor) */
		char named[PATH_MAX];
		snprintf(named, sizeof(named), "%s%s%s/%s", base, *subname ? "/" : "", subname, name);
		if (!rank_document(cli, named, docpath))
			*docpath = 0;
		struct cq_error *e = send ? cq_relay_send_file(stdout, sample, name, path) : NULL;
		if (!e && send && *docpath)
			e = cq_relay_send_file(stdout, sample, docname, docpath);
		if (e) {
			printf("CQ1 error %s\n", cq_esc(e->message));
			rc = rc ? rc : cq_exit_for(e);
			cq_error_destroy(e);
		}
		fflush(stdout);
	}
	return rc;
}

int cq_cmd_snapshot_node(struct cq_cli *cli)
{
	long long job_id, step_id;
	char node[256];
	const char *nn = getenv("SLURMD_NODENAME");
	struct utsname u;
	snprintf(node, sizeof(node), "%s", nn && *nn ? nn : uname(&u) == 0 ? u.nodename : "?");
	for (char *c = node; *c; c++)
		if (*c <= ' ' || *c == 127)
			*c = '?'; /* one word on the node line */
	/* fully buffered, flushed where the front end waits on a line: a write per line of a
	 * core's base64 was most of what srun's forwarding cost */
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	if (!cq_slurm_parse_spec(cli->slurm_node, &job_id, &step_id)) {
		printf("CQ1 error --slurm-node %s: not a job id\nCQ1 done %d\n", cq_esc(cli->slurm_node), CQ_EXIT_USAGE);
		return CQ_EXIT_USAGE;
	}
	struct cq_job job;
	struct cq_error *err = cq_job_find_slurm(job_id, step_id, &job);
	if (err) {
		int rc = cq_exit_for(err);
		printf("CQ1 node %s 0 \nCQ1 error %s\nCQ1 done %d\n", node, cq_esc(err->message), rc);
		fflush(stdout);
		cq_error_destroy(err);
		return rc;
	}
	printf("CQ1 node %s %zu ", node, job.n);
	for (size_t i = 0; i < job.n; i++)
		printf("%s%d:%d", i ? "," : "", job.ranks[i].rank, job.ranks[i].pid);
	printf("\n");
	fflush(stdout);
	int rc = CQ_EXIT_OK;
	for (size_t i = 0; i < job.n && !rc; i++)
		rc = dumpable_or_asked(cli, job.ranks[i].pid);
	/* where to write: the front end's DIR when this node sees it (its token file is
	 * there: a shared file system), else a directory of its own, sent back and removed */
	char token[PATH_MAX], local[PATH_MAX] = "";
	struct stat st;
	snprintf(token, sizeof(token), "%s/.coreq-slurm-%s", cli->slurm_dir ? cli->slurm_dir : "",
		 cli->slurm_token ? cli->slurm_token : "");
	bool shared = cli->slurm_dir && cli->slurm_token && lstat(token, &st) == 0 && S_ISREG(st.st_mode) &&
		      st.st_uid == geteuid();
	struct cq_outdir top = {-1, NULL};
	if (!rc && job.n) {
		if (!shared) {
			const char *tmp = getenv("TMPDIR");
			snprintf(local, sizeof(local), "%s/coreq-node-XXXXXX", tmp && *tmp ? tmp : "/tmp");
			if (!mkdtemp(local))
				err = cq_error_errno(errno, "%s", local);
		}
		if (!err)
			err = cq_outdir_open(shared ? cli->slurm_dir : local, &top);
		if (err) {
			rc = cq_exit_for(err);
			printf("CQ1 error %s\n", cq_esc(err->message));
			cq_error_destroy(err);
			err = NULL;
		}
	}
	unsigned nsamples = cli->samples ? cli->samples : 1;
	unsigned max_stop = cli->live.max_stop_ms ? cli->live.max_stop_ms : CQ_LIVE_MAX_STOP_MS;
	json_t *list = json_array();
	struct cq_outdir *subs = calloc(nsamples, sizeof(*subs));
	size_t *upto = calloc(nsamples + 1, sizeof(*upto)); /* list's entries of sample k: [upto[k-1], upto[k]) */
	if (!list || !subs || !upto) {
		printf("CQ1 error %s\n", cq_error_nomem.message);
		rc = rc ? rc : CQ_EXIT_INTERNAL;
	}
	for (unsigned k = 0; subs && k < nsamples; k++)
		subs[k] = (struct cq_outdir){-1, NULL};
	unsigned taken = 0;
	for (unsigned k = 1; !rc && job.n && k <= nsamples; k++) {
		const struct cq_outdir *dir = &top;
		if (nsamples > 1) {
			char subname[32];
			cq_sample_dir_name(k, nsamples, subname, sizeof(subname));
			if ((err = cq_outdir_sub(&top, subname, &subs[k - 1]))) {
				rc = cq_exit_for(err);
				printf("CQ1 error %s\n", cq_esc(err->message));
				cq_error_destroy(err);
				break;
			}
			dir = &subs[k - 1];
		}
		/* the cut: the front end says when (every node stops its ranks at once: "stop K",
		 * after --interval since the last), then every rank here is stopped and read, and
		 * held until every node has read ("go K") */
		if (!wait_for_line("stop", k, cq_run_now_ms() + 60000 + (long long)cli->interval_ms)) {
			printf("CQ1 error no \"stop %u\" from the front end: its ranks were not stopped\n", k);
			fflush(stdout);
			rc = CQ_EXIT_JOB;
			break;
		}
		long long first = cq_run_now_ms();
		cq_process_hold(true);
		for (size_t i = 0; i < job.n && !err; i++)
			err = cq_process_stop(job.ranks[i].pid, &cli->live);
		size_t before = json_array_size(list);
		for (size_t i = 0; i < job.n && !err; i++) {
			cli->nargs = 0;
			int r = snapshot_one(cli, job.ranks[i].pid, job.ranks[i].rank, dir, list);
			if (r && !rc)
				rc = r;
		}
		/* for tests only: this node's coreq dies (crash) or stops answering (hang) with its
		 * ranks held, as a node's coreq may (COREQ_TEST_SLURM_NODE=NODE:crash|hang) */
		const char *fail = getenv("COREQ_TEST_SLURM_NODE");
		size_t fl = fail ? strcspn(fail, ":") : 0;
		if (fail && fl == strlen(node) && !strncmp(fail, node, fl)) {
			if (!strcmp(fail + fl, ":crash"))
				abort();
			if (!strcmp(fail + fl, ":hang"))
				for (;;)
					pause();
		}
		if (!err) {
			printf("CQ1 read %u\n", k);
			fflush(stdout);
			wait_for_line("go", k, first + max_stop);
		}
		cq_process_hold(false);
		cq_process_resume_all();
		long long held = 0;
		for (size_t i = before; i < json_array_size(list); i++) {
			json_t *o = json_array_get(list, i);
			/* the whole stop: the wait for the other nodes too */
			unsigned ms;
			if (cq_process_held_ms((int)json_integer_value(json_object_get(o, "pid")), &ms)) {
				json_object_set_new(o, "held_ms", json_integer(ms));
				held = ms > held ? ms : held;
			}
			json_object_set_new(o, "node", json_string(node));
			if (nsamples > 1)
				json_object_set_new(o, "sample", json_integer(k));
		}
		upto[k] = json_array_size(list);
		taken = k;
		if (err) {
			rc = cq_exit_for(err);
			printf("CQ1 error %s\n", cq_esc(err->message));
			cq_error_destroy(err);
			err = NULL;
		} else {
			printf("CQ1 resumed %u %lld\n", k, held);
		}
		fflush(stdout);
	}
	/* what is made of the cuts, once every node resumed the last ("send K"): nothing of it
	 * runs between two samples (it would take the CPUs the ranks' progress is sampled on),
	 * nor while another node still holds its ranks (where nodes share CPUs, its read and
	 * its "go" would wait for this). Without the word (the front end gone, a node that
	 * never answers), after the bound of a hold. */
	if (taken == nsamples)
		wait_for_line("send", nsamples, cq_run_now_ms() + max_stop);
	for (unsigned k = 1; k <= taken; k++) {
		char subname[32] = "";
		if (nsamples > 1)
			cq_sample_dir_name(k, nsamples, subname, sizeof(subname));
		int r = send_sample(cli, nsamples > 1 ? &subs[k - 1] : &top, shared ? cli->slurm_dir : local, subname,
				    nsamples > 1 ? k : 0, list, upto[k - 1], upto[k], !shared);
		if (r && !rc)
			rc = r;
	}
	for (unsigned k = 0; subs && k < nsamples; k++)
		cq_outdir_close(&subs[k]);
	free(subs);
	free(upto);
	cq_outdir_close(&top);
	if (*local)
		remove_local(local);
	json_t *doc = json_pack("{s:s, s:s, s:b, s:o}", "schema", "coreq-snapshot/1", "node", node, "dir_shared", shared,
				"snapshots", list);
	cq_relay_send_doc(stdout, doc);
	json_decref(doc);
	printf("CQ1 done %d\n", rc);
	fflush(stdout);
	cq_job_free(&job);
	return rc;
}

int cq_cmd_snapshot(struct cq_cli *cli)
{
	if (cli->slurm_node)
		return cq_cmd_snapshot_node(cli);
	if (cli->slurm)
		return cq_cmd_snapshot_slurm(cli);
	if (cli->nargs < 1 || cli->pid || (cli->job && cli->nargs != 1)) {
		fprintf(stderr, "coreq: usage: coreq snapshot [-o DIR] PID... | --job PID  [--samples N --interval MS] "
				"[--max-stop MS] [--json]\n");
		return CQ_EXIT_USAGE;
	}
	const char *base = cli->output ? cli->output : ".";
	struct cq_outdir top;
	struct cq_error *derr = cq_outdir_open(base, &top);
	if (derr)
		return cq_fail(derr);
	unsigned nsamples = cli->samples ? cli->samples : 1;
	json_t *list = cli->json ? json_array() : NULL;
	sample_bts = nsamples > 1 ? json_array() : NULL;
	job_docs = list && cli->job ? json_array() : NULL;
	int rc = CQ_EXIT_OK;
	char **args = cli->args;
	int nargs = cli->nargs;
	for (unsigned k = 0; k < nsamples; k++) {
		struct cq_outdir sub = {-1, NULL};
		const struct cq_outdir *dir = &top;
		if (nsamples > 1) {
			/* DIR/sample1, DIR/sample2, ...: one set of cores per sample */
			char name[32];
			cq_sample_dir_name(k + 1, nsamples, name, sizeof(name));
			if ((derr = cq_outdir_sub(&top, name, &sub))) {
				rc = cq_fail(derr);
				break;
			}
			dir = &sub;
			/* --interval between one sample and the next; a sleep that a signal (the
			 * timer that lets go of threads which stop late) cuts short is resumed */
			if (k) {
				struct timespec next;
				clock_gettime(CLOCK_MONOTONIC, &next);
				next.tv_sec += cli->interval_ms / 1000;
				next.tv_nsec += (long)(cli->interval_ms % 1000) * 1000000;
				if (next.tv_nsec >= 1000000000) {
					next.tv_sec++;
					next.tv_nsec -= 1000000000;
				}
				while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
					;
			}
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
		cq_outdir_close(&sub);
	}
	cq_outdir_close(&top);
	cli->args = args;
	cli->nargs = nargs;
	cli->pid = 0;
	/* STAT's use of repeated samples: a hang is told from a slow phase (job/progress.h) */
	json_t *moved = NULL;
	if (sample_bts) {
		json_t *groups = cq_progress_group(sample_bts), *g;
		moved = json_array();
		size_t i;
		json_array_foreach(groups, i, g) {
			json_t *docs = json_array(), *x;
			size_t m;
			json_array_foreach(json_object_get(g, "samples"), m, x)
				json_array_append(docs, json_array_get(sample_bts, (size_t)json_integer_value(x)));
			json_array_append_new(moved, cq_progress_of(docs));
			json_decref(docs);
		}
		json_decref(groups);
		json_decref(sample_bts);
		sample_bts = NULL;
		if (!list)
			cq_progress_print(stdout, moved);
	}
	if (list) {
		json_t *doc = json_pack("{s:s, s:o}", "schema", "coreq-snapshot/1", "snapshots", list);
		if (job_docs)
			json_object_set_new(doc, "jobs", job_docs);
		job_docs = NULL;
		if (moved)
			json_object_set_new(doc, "progress", json_incref(moved));
		cq_emit_json(doc);
	}
	json_decref(moved);
	return rc;
}
