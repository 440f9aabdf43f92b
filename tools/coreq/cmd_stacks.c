/* SPDX-License-Identifier: MIT */
/* coreq stacks: the stacks of many processes merged into one prefix tree (job/tree.h).
 * Each input is a core (walked here), a `coreq bt --json` document or a merged tree. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "base/text.h"
#include "job/pool.h"
#include "job/progress.h"
#include "job/tree.h"
#include "stack/stack.h"

/* The bt document of the core @p path, or NULL with *@p err. */
static json_t *walk_core(struct cq_cli *cli, const char *path, struct cq_error **err)
{
	struct cq_core *core;
	if ((*err = cq_core_open(path, &cli->opts, &core)))
		return NULL;
	struct cq_error *lerr = cq_core_load_images(core);
	if (lerr) {
		cq_core_problem(core, "images", "%s", lerr->message);
		cq_error_destroy(lerr);
	}
	json_t *bt = NULL;
	struct cq_stack_options opt = {.max_frames = cli->max_frames};
	/* one stack per process is the crashing thread's: only it is walked (a core of 2,000
	 * threads of 400 frames each cost 1 GB walking them all to show one). A coreq
	 * snapshot's every thread is: it is small, and one of samples of a process, whose
	 * progress counts every thread (job/progress.h) */
	if (!cli->all_threads && core->nthreads && !core->taken_ns)
		opt.tid = core->threads[core->crash_thread < core->nthreads ? core->crash_thread : 0].tid;
	*err = cq_bt_document(core, &opt, true, &bt); /* as `coreq bt --json` makes it (and its "process") */
	cq_core_close(core);
	return bt;
}

/* A core's bt document, or {"error": why}: what a worker process hands back. */
static json_t *core_job(void *arg, int i)
{
	struct cq_cli *cli = arg;
	struct cq_error *err = NULL;
	json_t *bt = walk_core(cli, cli->args[i], &err);
	if (!bt) {
		bt = json_pack("{s:o}", "error", cq_json_str(err ? err->message : "?"));
		cq_error_destroy(err);
	}
	return bt;
}

/* The longest JSON text of a tree written: beyond it the tree is refused, before any of it
 * is written (a tree of millions of nodes, or long labels its leaf classes repeat, goes to
 * gigabytes that no reader of a job's stacks wants as one document). */
#define JSON_MAX_BYTES (UINT64_C(512) << 20)

/* The tree's document (with @p extra's members) on stdout, measured first; 0, or the exit
 * status of a tree refused or of no memory. */
static int emit_json(const struct cq_tree *t, const json_t *extra)
{
	uint64_t size;
	struct cq_error *err = cq_tree_write_json(t, extra, NULL, &size);
	if (!err && size > JSON_MAX_BYTES) {
		fprintf(stderr, "coreq: the tree's JSON would be %" PRIu64 " MiB, over the bound of %" PRIu64 " MiB: "
				"nothing written; see it as DOT (--dot FILE), or merge it coarser (--by function "
				"rather than line, one stack per process rather than --threads)\n",
			size >> 20, JSON_MAX_BYTES >> 20);
		return CQ_EXIT_QUERY;
	}
	if (!err)
		err = cq_tree_write_json(t, extra, stdout, &size);
	if (err) {
		fprintf(stderr, "coreq: %s\n", err->message);
		cq_error_destroy(err);
		return CQ_EXIT_INTERNAL;
	}
	return 0;
}

int cq_cmd_stacks(struct cq_cli *cli)
{
	if (cli->slurm_node)
		return cq_cmd_slurm_docs(cli, "stacks");
	if (cli->slurm)
		return cq_cmd_slurm_gather(cli, "stacks");
	if (cli->nargs < 1) {
		fprintf(stderr, "coreq: usage: coreq stacks CORE|BT.json|TREE.json... [--threads] "
				"[--by function|line|module] [--json] [--dot FILE] [--svg FILE]\n");
		return CQ_EXIT_USAGE;
	}
	struct cq_tree *t = cq_tree_create(cli->tree_by, cli->all_threads);
	if (!t)
		return CQ_EXIT_INTERNAL;
	int failed = 0, merged = 0, rc = CQ_EXIT_OK, ncores = 0;
	char *first_why = NULL;
	json_t *failures = json_array();
	/* cores are walked in worker processes (job/pool.h) when there are several */
	bool *cores = calloc((size_t)cli->nargs, sizeof(*cores));
	for (int i = 0; cores && i < cli->nargs; i++)
		ncores += cores[i] = !cq_is_json_input(cli->args[i]);
	long workers = cli->workers ? cli->workers : sysconf(_SC_NPROCESSORS_ONLN);
	json_t *made = ncores > 1 ? cq_pool_run(cli->nargs, cores, workers > 0 ? (int)workers : 1, core_job, cli,
						 "coreq stacks", "cores walked") : NULL;
	free(cores);
	/* first every input's document (a bt document, a tree, or why it failed) */
	json_t *docs = json_array(), *whys = json_array();
	for (int i = 0; i < cli->nargs; i++) {
		const char *path = cli->args[i];
		char *why = NULL;
		json_t *doc;
		if (cq_is_json_input(path)) {
			doc = cq_load_doc(path, &why);
		} else {
			doc = made ? json_incref(json_array_get(made, (size_t)i)) : core_job(cli, i);
			const char *werr = json_string_value(json_object_get(doc, "error"));
			if (!json_is_object(doc))
				why = strdup("the worker walking this core died");
			else if (werr && !json_object_get(doc, "schema"))
				why = strdup(werr);
		}
		if (why) {
			json_decref(doc);
			doc = NULL;
		}
		json_array_append_new(docs, doc ? doc : json_null());
		json_array_append_new(whys, why ? json_string(why) : json_null());
		free(why);
	}
	/* several bt documents of one process (the same rank, or pid) are samples of it
	 * (`coreq snapshot --samples`): the tree shows its latest, and the progress says
	 * whether it moved (job/progress.h) */
	json_t *bts = json_array(), *d;
	size_t di;
	json_array_foreach(docs, di, d) {
		const char *schema = json_string_value(json_object_get(d, "schema"));
		json_array_append(bts, schema && !strcmp(schema, "coreq-stacks/1") ? json_null() : d);
	}
	json_t *groups = cq_progress_group(bts), *g, *progress = json_array();
	bool sampled = false;
	json_array_foreach(groups, di, g)
		sampled |= json_array_size(json_object_get(g, "samples")) > 1;
	json_array_foreach(groups, di, g) {
		json_t *idx = json_object_get(g, "samples");
		size_t pick = (size_t)json_integer_value(json_array_get(idx, 0));
		if (sampled && json_is_object(json_array_get(bts, pick))) {
			json_t *samples = json_array(), *x;
			size_t m;
			json_array_foreach(idx, m, x)
				json_array_append(samples, json_array_get(bts, (size_t)json_integer_value(x)));
			json_t *p = cq_progress_of(samples);
			json_decref(samples);
			if (p) {
				pick = (size_t)json_integer_value(json_array_get(idx, (size_t)json_integer_value(json_object_get(p, "latest"))));
				json_object_del(p, "latest");
				json_array_append_new(progress, p);
			}
		}
		int i = (int)pick;
		const char *path = cli->args[i];
		json_t *doc = json_array_get(docs, pick);
		char *why = json_is_string(json_array_get(whys, pick)) ? strdup(json_string_value(json_array_get(whys, pick))) : NULL;
		struct cq_error *err = NULL;
		const char *schema = json_string_value(json_object_get(doc, "schema"));
		if (!why && schema && !strcmp(schema, "coreq-stacks/1"))
			err = cq_tree_add_tree(t, doc, path);
		else if (!why)
			err = cq_tree_add_bt(t, doc, path);
		if (err && !why) {
			why = strdup(err->message);
			/* inputs that cannot be merged together (tree.h): no tree is sound */
			if (err->code == CQ_ERR_NOMEM || err->code == CQ_ERR_USAGE)
				rc = err->code == CQ_ERR_NOMEM ? CQ_EXIT_INTERNAL : CQ_EXIT_USAGE;
		}
		cq_error_destroy(err);
		merged += !why;
		if (why) {
			failed++;
			json_array_append_new(failures, json_pack("{s:o, s:o}", "input", cq_json_str(path), "error",
								  cq_json_str(why)));
			if (!first_why)
				first_why = why;
			else
				free(why);
		}
		if (rc)
			break; /* inputs that cannot be merged, or out of memory: nothing sound to show */
	}
	json_decref(groups);
	json_decref(bts);
	json_decref(docs);
	json_decref(whys);
	if (!rc && !merged) {
		fprintf(stderr, "coreq: no input could be merged (%d of %d failed); the first: %s\n", failed,
			cli->nargs, cq_esc(first_why ? first_why : "?"));
		rc = CQ_EXIT_IO;
	}
	if (rc) {
		if (rc == CQ_EXIT_USAGE)
			fprintf(stderr, "coreq: %s\n", cq_esc(first_why ? first_why : "?"));
		free(first_why);
		json_decref(failures);
		json_decref(made);
		json_decref(progress);
		cq_tree_destroy(t);
		return rc;
	}
	free(first_why);
	json_decref(made);
	/* what the document adds to the tree: the inputs not merged, the progress between samples */
	json_t *extra = json_pack("{s:o}", "failed", failures);
	if (sampled) {
		/* the progressing ranks marked in the tree: where they were last seen */
		char *moved = cq_progress_tasks(progress, "progressing");
		if (moved && *moved && cq_tree_ranked(t))
			cq_error_destroy(cq_tree_mark_tasks(t, "progressing", moved));
		free(moved);
		json_object_set_new(extra, "progress", progress);
	} else {
		json_decref(progress);
	}
	rc = failed || cq_tree_problem_count(t) ? CQ_EXIT_PARTIAL : CQ_EXIT_OK;
	/* the text and DOT are made from the document; --json's text is written from the tree */
	bool doc = !cli->json || cli->dot || cli->svg;
	json_t *out = doc && extra ? cq_tree_json(t) : NULL;
	if (!extra || (doc && (!out || json_object_update(out, extra)))) {
		json_decref(out);
		json_decref(extra);
		cq_tree_destroy(t);
		return CQ_EXIT_INTERNAL;
	}
	if (cli->dot || cli->svg) {
		int grc = cq_write_graph(cli, cq_tree_dot(out));
		if (grc > rc)
			rc = grc;
	}
	if (cli->json) {
		int jrc = emit_json(t, extra);
		json_decref(out);
		json_decref(extra);
		cq_tree_destroy(t);
		return jrc ? jrc : rc;
	}
	json_decref(extra);
	cq_tree_destroy(t);
	const char *nc = getenv("NO_COLOR");
	cq_tree_print(out, stdout, isatty(STDOUT_FILENO) && !(nc && *nc));
	if (json_object_get(out, "progress")) {
		printf("\nprogress between samples:\n");
		cq_progress_print(stdout, json_object_get(out, "progress"));
	}
	json_t *f;
	size_t i;
	json_array_foreach(json_object_get(out, "failed"), i, f) /* each error names its input */
		printf("%s  %s\n", i ? "" : "\nfailed:\n", cq_esc(json_string_value(json_object_get(f, "error"))));
	json_decref(out);
	return rc;
}
