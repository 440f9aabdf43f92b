/* SPDX-License-Identifier: MIT */
/* coreq snapshot --slurm JOB[.STEP] [-o DIR]: a Slurm job's ranks on every node of it. One
 * coreq per node runs inside the job's allocation (launch/slurm.h: srun --overlap), finds
 * its node's ranks (launch/job.h), stops them, reads them, says so and holds them until
 * every node has read (the front end's "go": one cut across the nodes, within --max-stop),
 * then resumes them and sends its cores back through srun's output (launch/relay.h) unless
 * it writes them into DIR itself (DIR shared). Then the job view's verdict of the cores.
 *
 * For tests only: COREQ_TEST_SLURM_BOUND_MS=N bounds the wait for a node's first word and,
 * after the last sample, for its end (instead of START_BOUND_MS and TRANSFER_BOUND_MS);
 * COREQ_TEST_SLURM_NODE=NODE:crash|hang makes that node's coreq die or stop answering with
 * its ranks held (cmd_snapshot.c). */
#include "cli.h" /* first: corelib/core.h names a member si_addr, a macro of <signal.h> */
#include "launch/relay.h"
#include "launch/run.h"
#include "launch/slurm.h"
#include "output/outdir.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* How long a node's coreq has to say which ranks it holds, from srun's start: srun starts
 * a step in 0.1-0.2 s on an idle cluster; a busy controller takes seconds. */
#define START_BOUND_MS 30000
/* How long the cores may take to come back after the last sample, per node's MiB... kept
 * simple: a bound on the whole transfer. */
#define TRANSFER_BOUND_MS 120000
/* A line of srun's output longer than this is not the protocol's (dropped, said). */
#define LINE_MAX_BYTES 8192

/* One of srun's two output streams, cut into lines. */
struct stream {
	int fd;
	char buf[LINE_MAX_BYTES];
	size_t n;
	bool overlong;
};

struct front {
	struct cq_cli *cli;
	struct cq_slurm_job job;
	struct cq_relay_task *tasks; /* by srun task number: one per node */
	bool *ended;                 /* a node said done, error before read, or its transfer broke */
	unsigned *read_upto;         /* the last sample each node said it read */
	unsigned *resumed_upto;      /* ... and said it resumed */
	unsigned stopped;            /* the last sample "stop" was written for */
	long long stop_ms;           /* when */
	struct cq_outdir dir, *subdirs;
	unsigned nsamples;
	unsigned released;           /* the last sample "go" was written for */
	bool sent_after;             /* "send" written: every node resumed the last sample */
	long long first_read_ms;     /* when the first node said it read the current sample */
	int srun_in;
	int problems;
	bool broke;                  /* a node failed: the exit is CQ_EXIT_JOB */
};

static const char *node_of(struct front *f, long task)
{
	if (task < 0 || (size_t)task >= f->job.nnodes)
		return "?";
	/* before it said its name: the node srun gives that task (in the order of the list) */
	return f->tasks[task].node ? f->tasks[task].node : f->job.nodes[task];
}

/* srun's "N: text" label: the task number, and where the text begins; -1 without one. */
static long label(const char *line, const char **rest)
{
	const char *p = line;
	while (*p == ' ')
		p++;
	char *end;
	long t = strtol(p, &end, 10);
	if (end == p || end[0] != ':' || end[1] != ' ')
		return -1;
	*rest = end + 2;
	return t;
}

/* Whether every node that may still read has read sample @p k. */
static bool all_read(struct front *f, unsigned k)
{
	for (size_t i = 0; i < f->job.nnodes; i++)
		if (!f->ended[i] && f->read_upto[i] < k && !(f->tasks[i].node && !f->tasks[i].nranks))
			return false;
	return true;
}

/* Whether every node that may still take a sample has said its ranks (@p k 0) or resumed
 * sample @p k. */
static bool all_ready(struct front *f, unsigned k)
{
	for (size_t i = 0; i < f->job.nnodes; i++)
		if (!f->ended[i] && (!f->tasks[i].node || (f->tasks[i].nranks && f->resumed_upto[i] < k)))
			return false;
	return true;
}

static void stop_next(struct front *f)
{
	if (f->srun_in < 0)
		return;
	dprintf(f->srun_in, "stop %u\n", ++f->stopped);
	f->stop_ms = cq_run_now_ms();
}

static void release(struct front *f, unsigned k)
{
	if (f->released >= k || f->srun_in < 0)
		return;
	dprintf(f->srun_in, "go %u\n", k);
	f->released = k;
	f->first_read_ms = 0;
}

/* The cut's next step, as far as the nodes have come at @p now: "go K" once every node has
 * read sample K; the next "stop" once every node resumed the last (and --interval after
 * it); "send K" once every node resumed the last sample, K: from then on the nodes make
 * and send what they took. No node's own work runs while another still holds ranks: where
 * nodes share CPUs (a test's cluster, a node with the front end on it), it would delay
 * that node's read and the "go" that ends its hold. */
static void advance(struct front *f, long long now)
{
	if (f->released < f->nsamples && f->stopped > f->released && all_read(f, f->released + 1))
		release(f, f->released + 1);
	if (f->stopped == f->released && f->stopped < f->nsamples && all_ready(f, f->stopped) &&
	    (!f->stopped || now - f->stop_ms >= f->cli->interval_ms))
		stop_next(f);
	if (f->stopped == f->nsamples && f->released == f->nsamples && !f->sent_after && f->srun_in >= 0 &&
	    all_ready(f, f->nsamples)) {
		dprintf(f->srun_in, "send %u\n", f->nsamples);
		f->sent_after = true;
	}
}

static void on_stdout(struct front *f, const char *line)
{
	const char *rest;
	long t = label(line, &rest);
	if (t < 0 || (size_t)t >= f->job.nnodes) {
		if (*line)
			fprintf(stderr, "coreq: srun: %s\n", cq_esc(line));
		return;
	}
	if (f->ended[t] && f->tasks[t].rc < 0 && strncmp(rest, "CQ1 done", 8))
		return; /* a broken transfer: the rest of it is not taken */
	struct cq_relay_event ev;
	struct cq_error *err = cq_relay_take(&f->tasks[t], rest, &f->dir, f->subdirs, f->nsamples, &ev);
	if (err) {
		fprintf(stderr, "coreq: %s\n", cq_esc(err->message));
		cq_error_destroy(err);
		f->ended[t] = true;
		f->broke = true;
		return;
	}
	switch (ev.what) {
	case CQ_RELAY_ERROR:
		fprintf(stderr, "coreq: node %s: %s\n", node_of(f, t), ev.text);
		f->broke = true;
		if (f->read_upto[t] < f->released + 1)
			f->ended[t] = true; /* it holds nothing the cut waits for */
		break;
	case CQ_RELAY_READ:
		f->read_upto[t] = ev.sample;
		if (!f->first_read_ms)
			f->first_read_ms = cq_run_now_ms();
		break;
	case CQ_RELAY_RESUMED:
		f->resumed_upto[t] = ev.sample;
		break;
	case CQ_RELAY_DONE:
		f->ended[t] = true;
		if (ev.value && ev.value != CQ_EXIT_PARTIAL)
			f->broke = true;
		break;
	default:
		break;
	}
	advance(f, cq_run_now_ms());
}

static void on_stderr(struct front *f, const char *line)
{
	const char *rest;
	long t = label(line, &rest);
	if (t >= 0 && (size_t)t < f->job.nnodes)
		fprintf(stderr, "coreq: node %s: %s\n", node_of(f, t), cq_esc(rest));
	else if (*line)
		fprintf(stderr, "coreq: srun: %s\n", cq_esc(line));
}

/* Read what @p s has; each whole line to @p take. False at its end. */
static bool pump(struct front *f, struct stream *s, void (*take)(struct front *, const char *))
{
	char tmp[65536];
	ssize_t k = read(s->fd, tmp, sizeof(tmp));
	if (k < 0 && errno == EINTR)
		return true;
	if (k <= 0)
		return false;
	for (ssize_t i = 0; i < k; i++) {
		if (tmp[i] == '\n') {
			s->buf[s->n] = 0;
			if (!s->overlong)
				take(f, s->buf);
			s->n = 0;
			s->overlong = false;
		} else if (s->n < sizeof(s->buf) - 1) {
			s->buf[s->n++] = tmp[i];
		} else {
			s->overlong = true;
		}
	}
	return true;
}

static bool all_ended(struct front *f)
{
	for (size_t i = 0; i < f->job.nnodes; i++)
		if (!f->ended[i] || f->tasks[i].rc < 0)
			return false;
	return true;
}

/* The job view of the cores written (`coreq mqd`, a child: its own bounds and plugins'
 * isolation): its first line (text) or its verdict (JSON) into @p doc. */
static void verdict_of(struct front *f, const char *self, const char *abs, json_t *doc)
{
	char pattern[PATH_MAX], docs[PATH_MAX];
	snprintf(pattern, sizeof(pattern), f->nsamples > 1 ? "%s/sample*/rank*.core" : "%s/rank*.core", abs);
	snprintf(docs, sizeof(docs), f->nsamples > 1 ? "%s/sample*/rank*.mqd.json" : "%s/rank*.mqd.json", abs);
	glob_t g, d;
	if (glob(pattern, 0, NULL, &g) || !g.gl_pathc) {
		globfree(&g);
		return;
	}
	/* every rank's document made on its node (after its resume): the job view of those,
	 * which is that of the cores without their per-rank work done again here */
	if (glob(docs, 0, NULL, &d) == 0 && d.gl_pathc == g.gl_pathc) {
		globfree(&g);
		g = d;
	} else {
		globfree(&d);
	}
	char **argv = calloc(g.gl_pathc + 8, sizeof(*argv));
	if (!argv) {
		globfree(&g);
		return;
	}
	size_t a = 0;
	argv[a++] = (char *)self;
	argv[a++] = "mqd";
	argv[a++] = "--json";
	if (f->cli->opts.type_donors) {
		argv[a++] = "--types";
		argv[a++] = (char *)f->cli->opts.type_donors;
	}
	for (size_t i = 0; i < g.gl_pathc; i++)
		argv[a++] = g.gl_pathv[i];
	char *out = NULL;
	int status;
	struct cq_error *err = cq_run_capture(argv, 600000, 256u << 20, &out, NULL, &status);
	json_t *m = !err && out ? json_loads(out, 0, NULL) : NULL;
	json_t *v = json_object_get(m, "verdict");
	if (v && doc) {
		json_object_set(doc, "verdict", v);
		json_object_set_new(doc, "verdict_exit", json_integer(status));
	} else if (v) {
		printf("verdict: %s\n", cq_esc(json_string_value(json_object_get(v, "text"))));
		printf("(the job view: coreq mqd %s; the stack tree: coreq stacks %s)\n", cq_esc(pattern), cq_esc(pattern));
	} else {
		fprintf(stderr, "coreq: the job view of %s gave no verdict (exit %d)%s%s\n", pattern, status,
			err ? ": " : "", err ? cq_esc(err->message) : "");
	}
	cq_error_destroy(err);
	json_decref(m);
	free(out);
	free(argv);
	globfree(&g);
}

/* The paths a node's coreq is given, absolute: it runs in / (srun --chdir=/), and a
 * relative donor, DLL or trusted directory named from here would be another file there. */
struct abs_paths {
	char donors[PATH_MAX], dll[PATH_MAX], trusted[PATH_MAX];
};

/* @p list (':'-separated) with each relative element made absolute from the working
 * directory (its real path where it exists), into @p out; false where it does not fit. */
static bool absolute_list(const char *list, char *out, size_t size)
{
	char cwd[PATH_MAX], one[PATH_MAX], real[PATH_MAX];
	size_t used = 0;
	if (!getcwd(cwd, sizeof(cwd)))
		return false;
	for (const char *p = list;;) {
		size_t len = strcspn(p, ":");
		if (len >= sizeof(one))
			return false;
		memcpy(one, p, len);
		one[len] = 0;
		const char *abs = one;
		if (*one && *one != '/') {
			if (realpath(one, real))
				abs = real;
			else if (snprintf(real, sizeof(real), "%s/%s", cwd, one) < (int)sizeof(real))
				abs = real;
			else
				return false;
		}
		int w = snprintf(out + used, size - used, "%s%s", used ? ":" : "", abs);
		if (w < 0 || (size_t)w >= size - used)
			return false;
		used += (size_t)w;
		if (!p[len])
			return true;
		p += len + 1;
	}
}

static void absolute_paths(struct cq_cli *cli, struct abs_paths *a)
{
	if (cli->opts.type_donors && absolute_list(cli->opts.type_donors, a->donors, sizeof(a->donors)))
		cli->opts.type_donors = a->donors;
	if (cli->mqd.dll && absolute_list(cli->mqd.dll, a->dll, sizeof(a->dll)))
		cli->mqd.dll = a->dll;
	if (cli->mqd.trusted_dirs && absolute_list(cli->mqd.trusted_dirs, a->trusted, sizeof(a->trusted)))
		cli->mqd.trusted_dirs = a->trusted;
}

/* The options a node's coreq and the merge take from this one's, after @p argv[*n]. */
void cq_slurm_pass_options(const struct cq_cli *cli, char **argv, size_t *n, bool merge)
{
	if (cli->opts.type_donors) {
		argv[(*n)++] = "--types";
		argv[(*n)++] = (char *)cli->opts.type_donors;
	}
	if (cli->mqd.dll) {
		argv[(*n)++] = "--mqd-plugin";
		argv[(*n)++] = (char *)cli->mqd.dll;
	}
	if (cli->mqd.trusted_dirs) {
		argv[(*n)++] = "--mqd-trusted-dir";
		argv[(*n)++] = (char *)cli->mqd.trusted_dirs;
	}
	if (cli->all_threads)
		argv[(*n)++] = "--threads";
	if (!merge)
		return;
	if (cli->json)
		argv[(*n)++] = "--json";
	if (cli->dot) {
		argv[(*n)++] = "--dot";
		argv[(*n)++] = (char *)cli->dot;
	}
	if (cli->svg) {
		argv[(*n)++] = "--svg";
		argv[(*n)++] = (char *)cli->svg;
	}
}

/* The conversation with the nodes through srun @p r until every node is done, srun's output
 * ends, or the bound: the cuts (stop, go) as the nodes are ready and have read, the files
 * and documents they send into f->dir; srun ended after. */
static void relay(struct front *f, struct cq_run *r, unsigned max_stop)
{
	long long t0 = cq_run_now_ms();
	const char *tb = getenv("COREQ_TEST_SLURM_BOUND_MS");
	long long start_bound = tb ? atoll(tb) : START_BOUND_MS, transfer_bound = tb ? atoll(tb) : TRANSFER_BOUND_MS;
	long long bound = t0 + start_bound + (long long)(f->nsamples - 1) * f->cli->interval_ms +
			  (long long)f->nsamples * max_stop + transfer_bound;
	struct stream out = {.fd = r->out}, errs = {.fd = r->err};
	f->srun_in = r->in;
	while ((out.fd >= 0 || errs.fd >= 0) && !all_ended(f)) {
		long long now = cq_run_now_ms();
		/* a node that has not said its ranks by the start bound, or a sample some node
		 * has not read by the hold's bound, no longer holds the others */
		if (now - t0 > start_bound)
			for (size_t i = 0; i < f->job.nnodes; i++)
				if (!f->tasks[i].node && !f->ended[i]) {
					fprintf(stderr, "coreq: node %s: its coreq said nothing within %lld ms (srun could not "
							"start it there?)\n", f->job.nodes[i], start_bound);
					f->ended[i] = true;
					f->broke = true;
				}
		if (f->first_read_ms && now - f->first_read_ms > max_stop && f->released < f->nsamples) {
			for (size_t i = 0; i < f->job.nnodes; i++)
				if (!f->ended[i] && f->read_upto[i] <= f->released && f->tasks[i].nranks)
					fprintf(stderr, "coreq: node %s: sample %u not read within --max-stop %u ms: the other "
							"nodes resumed without it\n", node_of(f, (long)i), f->released + 1, max_stop);
			release(f, f->released + 1);
		}
		advance(f, now);
		if (now > bound) {
			fprintf(stderr, "coreq: srun did not end within %lld s: stopped (its nodes' coreq end with it, "
					"and so their holds)\n", (bound - t0) / 1000);
			f->broke = true;
			break;
		}
		struct pollfd pf[2] = {{out.fd, POLLIN, 0}, {errs.fd, POLLIN, 0}};
		int pr = poll(pf, 2, 20);
		if (pr < 0 && errno != EINTR)
			break;
		if (out.fd >= 0 && pf[0].revents && !pump(f, &out, on_stdout)) {
			close(out.fd);
			out.fd = r->out = -1;
		}
		if (errs.fd >= 0 && pf[1].revents && !pump(f, &errs, on_stderr)) {
			close(errs.fd);
			errs.fd = r->err = -1;
		}
	}
	if (r->pid > 0)
		cq_run_end(r, 5000, NULL); /* what srun says last (its own errors) */
}

int cq_cmd_snapshot_slurm(struct cq_cli *cli)
{
	if (cli->nargs || cli->job) {
		fprintf(stderr, "coreq: usage: coreq snapshot --slurm JOB[.STEP] [-o DIR] [--samples N --interval MS] "
				"[--max-stop MS] [--types DONOR] [--json]\n");
		return CQ_EXIT_USAGE;
	}
	struct front f = {.cli = cli, .srun_in = -1, .dir = {-1, NULL}};
	struct cq_error *err = cq_slurm_job_find(cli->slurm, 20000, &f.job);
	if (err)
		return cq_fail(err);
	const char *base = cli->output ? cli->output : ".";
	char abs[PATH_MAX], self[PATH_MAX], token[40], tokfile[96];
	int rc = CQ_EXIT_OK;
	if ((err = cq_outdir_open(base, &f.dir)) || !realpath(base, abs)) {
		cq_slurm_job_free(&f.job);
		return err ? cq_fail(err) : cq_fail(cq_error_errno(errno, "%s", base));
	}
	ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[sl > 0 ? sl : 0] = 0;
	/* the token file: a node that sees it writes into DIR itself */
	uint8_t rnd[8];
	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
		memset(rnd, 0, sizeof(rnd));
	snprintf(token, sizeof(token), "%d-%02x%02x%02x%02x%02x%02x%02x%02x", (int)getpid(), rnd[0], rnd[1], rnd[2],
		 rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
	snprintf(tokfile, sizeof(tokfile), ".coreq-slurm-%s", token);
	int tfd = openat(f.dir.fd, tokfile, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (tfd >= 0)
		close(tfd);
	f.nsamples = cli->samples ? cli->samples : 1;
	f.subdirs = calloc(f.nsamples, sizeof(*f.subdirs));
	f.tasks = calloc(f.job.nnodes, sizeof(*f.tasks));
	f.ended = calloc(f.job.nnodes, sizeof(*f.ended));
	f.read_upto = calloc(f.job.nnodes, sizeof(*f.read_upto));
	f.resumed_upto = calloc(f.job.nnodes, sizeof(*f.resumed_upto));
	if (!f.subdirs || !f.tasks || !f.ended || !f.read_upto || !f.resumed_upto)
		err = &cq_error_nomem;
	for (size_t i = 0; f.tasks && i < f.job.nnodes; i++)
		f.tasks[i].rc = -1;
	for (unsigned k = 0; !err && f.nsamples > 1 && k < f.nsamples; k++) {
		char name[32];
		cq_sample_dir_name(k + 1, f.nsamples, name, sizeof(name));
		err = cq_outdir_sub(&f.dir, name, &f.subdirs[k]);
	}
	/* the per-node coreq: this binary, at the same path on every node; a donor given by a
	 * relative path, as seen from here */
	char ms[16], ns[16], iv[16];
	unsigned max_stop = cli->live.max_stop_ms ? cli->live.max_stop_ms : CQ_LIVE_MAX_STOP_MS;
	snprintf(ms, sizeof(ms), "%u", max_stop);
	snprintf(ns, sizeof(ns), "%u", f.nsamples);
	snprintf(iv, sizeof(iv), "%u", cli->interval_ms);
	char *cmd[24];
	size_t c = 0;
	cmd[c++] = self;
	cmd[c++] = "snapshot";
	cmd[c++] = "--slurm-node";
	cmd[c++] = (char *)cli->slurm;
	cmd[c++] = "--slurm-dir";
	cmd[c++] = abs;
	cmd[c++] = "--slurm-token";
	cmd[c++] = token;
	cmd[c++] = "--max-stop";
	cmd[c++] = ms;
	cmd[c++] = "--samples";
	cmd[c++] = ns;
	cmd[c++] = "--interval";
	cmd[c++] = iv;
	struct abs_paths paths;
	absolute_paths(cli, &paths);
	cq_slurm_pass_options(cli, cmd, &c, false);
	if (cli->allow_nondumpable)
		cmd[c++] = "--allow-non-dumpable";
	cmd[c] = NULL;
	char **argv = err ? NULL : cq_slurm_per_node_argv(f.job.job, f.job.nodes, f.job.nnodes, cmd);
	if (!err && !argv)
		err = &cq_error_nomem;
	struct cq_run r = {-1, -1, -1, -1};
	if (!err)
		err = cq_run_start(argv, &r);
	cq_slurm_argv_free(argv);
	if (!err)
		relay(&f, &r, max_stop);
	f.srun_in = -1;
	unlinkat(f.dir.fd, tokfile, 0);
	if (err) {
		rc = cq_fail(err);
		err = NULL;
	}
	/* what came back: every node's snapshots, by sample and rank */
	json_t *snaps = json_array();
	size_t nranks = 0, nodes_ok = 0;
	long long longest = 0;
	for (size_t i = 0; i < f.job.nnodes; i++) {
		struct cq_relay_task *t = &f.tasks[i];
		nranks += t->nranks;
		json_t *list = json_object_get(t->doc, "snapshots"), *o;
		size_t k;
		json_array_foreach(list, k, o) {
			/* the core's path as it is here */
			char name[64], p[PATH_MAX];
			snprintf(name, sizeof(name), "rank%d.core", (int)json_integer_value(json_object_get(o, "rank")));
			json_int_t s = json_integer_value(json_object_get(o, "sample"));
			if (f.nsamples > 1) {
				char sub[32];
				cq_sample_dir_name(s > 0 ? (unsigned)s : 0, f.nsamples, sub, sizeof(sub));
				snprintf(p, sizeof(p), "%s/%s/%s", f.dir.display, sub, name);
			} else
				snprintf(p, sizeof(p), "%s/%s", f.dir.display, name);
			json_object_set_new(o, "path", json_string(p));
			json_t *h = json_object_get(o, "held_ms");
			long long st = json_integer_value(h ? h : json_object_get(o, "stopped_ms"));
			longest = st > longest ? st : longest;
			json_array_append(snaps, o);
		}
		if (t->rc == CQ_EXIT_OK || t->rc == CQ_EXIT_PARTIAL)
			nodes_ok++;
		else if (t->rc < 0) {
			fprintf(stderr, "coreq: node %s: its coreq ended without a result%s\n", node_of(&f, (long)i),
				t->nranks ? " (its ranks resume with its end)" : "");
			f.broke = true;
		}
		if (t->node && t->nranks && !json_array_size(list))
			fprintf(stderr, "coreq: node %s: none of its %zu ranks came back\n", t->node, t->nranks);
	}
	if (!nranks && !f.broke) {
		fprintf(stderr, "coreq: Slurm job %s: no MPI rank on its %zu node%s (%s): a step with no MPI process "
				"(its processes map no MPI library and have no rank variable)\n", f.job.spec, f.job.nnodes,
			f.job.nnodes > 1 ? "s" : "", f.job.nodelist);
		f.broke = true;
	}
	if (!cli->json) {
		json_t *o;
		size_t k;
		json_array_foreach(snaps, k, o)
			printf("%s: node %s, process %d (%s), %d threads, %lld KiB of memory in %lld pieces, %lld KiB in all; "
			       "stopped %lld ms (read in %lld)\n", cq_esc(json_string_value(json_object_get(o, "path"))),
			       cq_esc(json_string_value(json_object_get(o, "node"))),
			       (int)json_integer_value(json_object_get(o, "pid")),
			       cq_esc(json_string_value(json_object_get(o, "command"))),
			       (int)json_integer_value(json_object_get(o, "threads")),
			       (long long)json_integer_value(json_object_get(o, "memory_bytes")) / 1024,
			       (long long)json_integer_value(json_object_get(o, "memory_pieces")),
			       (long long)json_integer_value(json_object_get(o, "file_bytes")) / 1024,
			       (long long)json_integer_value(json_object_get(o, "held_ms")),
			       (long long)json_integer_value(json_object_get(o, "stopped_ms")));
		printf("Slurm job %s: %zu ranks on %zu of %zu nodes (%s) stopped together (each node held its ranks until "
		       "every node had read them), resumed; the longest stop %lld ms\n", f.job.spec, nranks, nodes_ok,
		       f.job.nnodes, f.job.nodelist, longest);
	}
	json_t *doc = cli->json ? json_pack("{s:s, s:o}", "schema", "coreq-snapshot/1", "snapshots", snaps) : NULL;
	if (doc) {
		json_t *nodes = json_array();
		for (size_t i = 0; i < f.job.nnodes; i++) {
			json_t *rk = json_array();
			for (size_t k = 0; k < f.tasks[i].nranks; k++)
				json_array_append_new(rk, json_integer(f.tasks[i].ranks[k]));
			json_t *sh = json_object_get(f.tasks[i].doc, "dir_shared");
			json_array_append_new(nodes, json_pack("{s:s, s:o, s:i, s:O?}", "node", f.job.nodes[i], "ranks", rk,
								"exit", f.tasks[i].rc, "dir_shared", sh));
		}
		json_object_set_new(doc, "slurm", json_pack("{s:s, s:s, s:o}", "job", f.job.spec, "nodelist",
							     f.job.nodelist, "nodes", nodes));
	} else {
		json_decref(snaps);
	}
	if (nranks)
		verdict_of(&f, self, abs, doc);
	if (doc)
		cq_emit_json(doc);
	if (!rc && f.broke)
		rc = CQ_EXIT_JOB;
	for (size_t i = 0; i < f.job.nnodes; i++)
		cq_relay_task_free(&f.tasks[i]);
	for (unsigned k = 0; f.subdirs && k < f.nsamples; k++)
		cq_outdir_close(&f.subdirs[k]);
	free(f.subdirs);
	free(f.tasks);
	free(f.ended);
	free(f.read_upto);
	free(f.resumed_upto);
	cq_outdir_close(&f.dir);
	cq_slurm_job_free(&f.job);
	return rc;
}

int cq_cmd_slurm_docs(struct cq_cli *cli, const char *what)
{
	char node[256], self[PATH_MAX];
	const char *nn = getenv("SLURMD_NODENAME");
	/* the node's name is part of the documents' names (at most 63 bytes): letters, digits,
	 * '-', '_' only, 40 at most */
	snprintf(node, sizeof(node), "%.40s", nn && *nn ? nn : "node");
	for (char *c = node; *c; c++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_", *c))
			*c = '_';
	ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[sl > 0 ? sl : 0] = 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("CQ1 node %s 0 \n", node);
	/* the inputs: each pattern as this node's shell would expand it, regular files only */
	glob_t g = {0};
	for (int i = 0; i < cli->nargs; i++)
		glob(cli->args[i], i ? GLOB_APPEND : 0, NULL, &g);
	json_t *inputs = json_array();
	char tmpdir[PATH_MAX];
	const char *t = getenv("TMPDIR");
	snprintf(tmpdir, sizeof(tmpdir), "%s/coreq-docs-XXXXXX", t && *t ? t : "/tmp");
	int rc = CQ_EXIT_OK;
	if (!mkdtemp(tmpdir)) {
		printf("CQ1 error %s: %s\n", cq_esc(tmpdir), strerror(errno));
		rc = CQ_EXIT_IO;
	}
	char **files = calloc(g.gl_pathc + 1, sizeof(*files));
	size_t nfiles = 0;
	for (size_t i = 0; files && i < g.gl_pathc; i++) {
		struct stat st;
		if (stat(g.gl_pathv[i], &st) == 0 && S_ISREG(st.st_mode))
			files[nfiles++] = g.gl_pathv[i];
	}
	/* mqd: a document per core (the job view is made of them); stacks: the node's tree */
	size_t runs = !strcmp(what, "mqd") ? nfiles : nfiles ? 1 : 0;
	for (size_t k = 0; rc != CQ_EXIT_IO && k < runs; k++) {
		char **argv = calloc(nfiles + 16, sizeof(*argv));
		size_t n = 0;
		if (!argv)
			break;
		argv[n++] = self;
		argv[n++] = (char *)what;
		argv[n++] = "--json";
		cq_slurm_pass_options(cli, argv, &n, false);
		if (!strcmp(what, "mqd"))
			argv[n++] = files[k];
		else
			for (size_t i = 0; i < nfiles; i++)
				argv[n++] = files[i];
		char *out = NULL, *said = NULL, name[64], path[PATH_MAX + 64];
		int status;
		struct cq_error *err = cq_run_capture(argv, 600000, 256u << 20, &out, &said, &status);
		free(argv);
		snprintf(name, sizeof(name), !strcmp(what, "mqd") ? "%s.%zu.json" : "%s.tree.json", node, k);
		snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
		FILE *f = !err && out && *out ? fopen(path, "w") : NULL;
		if (f) {
			fputs(out, f);
			fclose(f);
			struct cq_error *e = cq_relay_send_file(stdout, 0, name, path);
			if (e) {
				printf("CQ1 error %s\n", cq_esc(e->message));
				cq_error_destroy(e);
				rc = CQ_EXIT_JOB;
			}
			unlink(path);
		} else {
			printf("CQ1 error coreq %s of %s on %s gave no document (exit %d): %s\n", what,
			       !strcmp(what, "mqd") ? cq_esc(files[k]) : "its inputs", node, status,
			       err ? cq_esc(err->message) : said ? cq_esc(said) : "");
			rc = CQ_EXIT_JOB;
		}
		cq_error_destroy(err);
		json_array_append_new(inputs, json_pack("{s:o, s:i}", "input", cq_json_str(!strcmp(what, "mqd") ? files[k] :
									 "(all)"), "exit", status));
		free(out);
		free(said);
	}
	rmdir(tmpdir);
	json_t *doc = json_pack("{s:s, s:s, s:I, s:o}", "schema", "coreq-slurm-node/1", "node", node, "files",
				(json_int_t)nfiles, "runs", inputs);
	cq_relay_send_doc(stdout, doc);
	json_decref(doc);
	printf("CQ1 done %d\n", rc);
	free(files);
	globfree(&g);
	return rc;
}

int cq_cmd_slurm_gather(struct cq_cli *cli, const char *what)
{
	if (!cli->nargs) {
		fprintf(stderr, "coreq: usage: coreq %s --slurm JOB PATTERN... [-o DIR]: each node's files that match "
				"PATTERN (quoted: a glob on the node)\n", what);
		return CQ_EXIT_USAGE;
	}
	struct front f = {.cli = cli, .srun_in = -1, .dir = {-1, NULL}, .nsamples = 1};
	struct cq_error *err = cq_slurm_job_find(cli->slurm, 20000, &f.job);
	if (err)
		return cq_fail(err);
	/* the documents: into -o DIR (kept), else a directory of ours, removed after */
	char abs[PATH_MAX], self[PATH_MAX];
	bool mine = !cli->output;
	if (mine) {
		const char *t = getenv("TMPDIR");
		snprintf(abs, sizeof(abs), "%s/coreq-slurm-docs-XXXXXX", t && *t ? t : "/tmp");
		if (!mkdtemp(abs)) {
			cq_slurm_job_free(&f.job);
			return cq_fail(cq_error_errno(errno, "%s", abs));
		}
	}
	if ((err = cq_outdir_open(mine ? abs : cli->output, &f.dir)) || (!mine && !realpath(cli->output, abs))) {
		cq_slurm_job_free(&f.job);
		return err ? cq_fail(err) : cq_fail(cq_error_errno(errno, "%s", cli->output));
	}
	ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[sl > 0 ? sl : 0] = 0;
	struct abs_paths paths;
	absolute_paths(cli, &paths);
	f.tasks = calloc(f.job.nnodes, sizeof(*f.tasks));
	f.ended = calloc(f.job.nnodes, sizeof(*f.ended));
	f.read_upto = calloc(f.job.nnodes, sizeof(*f.read_upto));
	f.resumed_upto = calloc(f.job.nnodes, sizeof(*f.resumed_upto));
	f.subdirs = calloc(1, sizeof(*f.subdirs));
	char **cmd = calloc((size_t)cli->nargs + 24, sizeof(*cmd));
	if (!f.tasks || !f.ended || !f.read_upto || !f.resumed_upto || !f.subdirs || !cmd)
		err = &cq_error_nomem;
	for (size_t i = 0; f.tasks && i < f.job.nnodes; i++)
		f.tasks[i].rc = -1;
	size_t c = 0;
	if (cmd) {
		cmd[c++] = self;
		cmd[c++] = (char *)what;
		cmd[c++] = "--slurm-node";
		cmd[c++] = (char *)cli->slurm;
		cq_slurm_pass_options(cli, cmd, &c, false);
		for (int i = 0; i < cli->nargs; i++)
			cmd[c++] = cli->args[i];
	}
	char **argv = err ? NULL : cq_slurm_per_node_argv(f.job.job, f.job.nodes, f.job.nnodes, cmd);
	if (!err && !argv)
		err = &cq_error_nomem;
	struct cq_run r = {-1, -1, -1, -1};
	if (!err)
		err = cq_run_start(argv, &r);
	cq_slurm_argv_free(argv);
	free(cmd);
	if (!err) {
		/* no cut: every node is "read" at once (no rank held); the bound is the run's */
		f.stopped = f.released = f.nsamples;
		f.sent_after = true;
		relay(&f, &r, 600000);
	}
	int rc = CQ_EXIT_OK;
	if (err)
		rc = cq_fail(err);
	size_t ndocs = 0;
	for (size_t i = 0; i < f.job.nnodes; i++) {
		if (f.tasks[i].rc < 0) {
			fprintf(stderr, "coreq: node %s: its coreq ended without a result\n", node_of(&f, (long)i));
			f.broke = true;
		}
	}
	/* the merge: the job view (mqd) or the tree (stacks) of every node's documents */
	char pattern[PATH_MAX + 16];
	snprintf(pattern, sizeof(pattern), "%s/*.json", abs);
	glob_t g = {0};
	if (!rc && glob(pattern, 0, NULL, &g) == 0)
		ndocs = g.gl_pathc;
	if (!rc && !ndocs) {
		fprintf(stderr, "coreq: Slurm job %s: no file on its %zu node%s matches %s%s\n", f.job.spec, f.job.nnodes,
			f.job.nnodes > 1 ? "s" : "", cq_esc(cli->args[0]), cli->nargs > 1 ? " ..." : "");
		rc = CQ_EXIT_JOB;
	}
	if (!rc) {
		char **m = calloc(ndocs + 24, sizeof(*m));
		size_t n = 0;
		if (m) {
			m[n++] = self;
			m[n++] = (char *)what;
			cq_slurm_pass_options(cli, m, &n, true);
			for (size_t i = 0; i < ndocs; i++)
				m[n++] = g.gl_pathv[i];
			/* its output is this command's: stdout and stderr as they are */
			pid_t pid;
			extern char **environ;
			int e = posix_spawn(&pid, self, NULL, NULL, m, environ), st = 0;
			if (e)
				rc = cq_fail(cq_error_create(CQ_ERR_INTERNAL, "%s cannot be run: %s", self, strerror(e)));
			else if (waitpid(pid, &st, 0) == pid)
				rc = WIFEXITED(st) ? WEXITSTATUS(st) : CQ_EXIT_INTERNAL;
			free(m);
		}
	}
	if (f.broke && (rc == CQ_EXIT_OK || rc == CQ_EXIT_PARTIAL))
		rc = CQ_EXIT_JOB;
	if (mine)
		for (size_t i = 0; i < g.gl_pathc; i++)
			unlink(g.gl_pathv[i]);
	globfree(&g);
	for (size_t i = 0; i < f.job.nnodes; i++)
		cq_relay_task_free(&f.tasks[i]);
	free(f.tasks);
	free(f.ended);
	free(f.read_upto);
	free(f.resumed_upto);
	free(f.subdirs);
	cq_outdir_close(&f.dir);
	if (mine)
		rmdir(abs);
	cq_slurm_job_free(&f.job);
	return rc;
}
