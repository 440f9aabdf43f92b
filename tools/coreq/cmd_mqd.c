/* SPDX-License-Identifier: MIT */
/* `coreq mqd CORE...`: the MPI message queues of one rank through the MPI library's MQD
 * DLL; with several cores (or per-rank JSON files) the job view. */
/* cli.h first: <sys/wait.h> brings <signal.h>, whose si_addr macro would rename a field
 * of corelib/core.h */
#include "cli.h"
#include "mqd/commarg.h"
#include "mqd/host.h"
#include "mqd/inflight.h"
#include "mqd/mpich.h"
#include "job/mpicall.h"
#include "job/pool.h"
#include "job/progress.h"
#include "job/ranges.h"
#include "job/tree.h"
#include "job/verdict.h"
#include "job/waitfor.h"
#include "output/output.h"
#include "stack/stack.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* A string of the document, escaped for the terminal (cq_esc), or NULL. */
static const char *str(json_t *o, const char *k)
{
	const char *v = json_string_value(json_object_get(o, k));
	return v ? cq_esc(v) : NULL;
}

/* "3", "any" */
static void print_rank(json_t *v)
{
	if (json_is_integer(v))
		printf("%lld", (long long)json_integer_value(v));
	else
		printf("%s", json_is_string(v) ? cq_esc(json_string_value(v)) : "?");
}

static void print_queue(const char *label, json_t *q)
{
	const char *state = str(q, "state");
	printf("  %-11s", label);
	if (!state || strcmp(state, "listed") != 0) {
		printf("%s%s%s\n", state && !strcmp(state, "no_information") ? "no information" :
				   "error", str(q, "why") || str(q, "error") ? ": " : "",
		       str(q, "why") ? str(q, "why") : str(q, "error") ? str(q, "error") : "");
		return;
	}
	json_t *ops = json_object_get(q, "operations"), *op;
	size_t i;
	printf("%zu\n", json_array_size(ops));
	json_array_foreach(ops, i, op) {
		printf("    %-8s peer ", str(op, "status") ? str(op, "status") : "?");
		print_rank(json_object_get(op, "peer"));
		printf(" (world ");
		print_rank(json_object_get(op, "peer_global"));
		printf(") tag ");
		print_rank(json_object_get(op, "tag"));
		if (json_is_integer(json_object_get(op, "length")))
			printf(" length %lld", (long long)json_integer_value(json_object_get(op, "length")));
		else if (json_is_integer(json_object_get(op, "count")))
			printf(" count %lld", (long long)json_integer_value(json_object_get(op, "count")));
		else
			printf(" length unknown");
		if (str(op, "buffer")) /* (none: an operation coreq read elsewhere, in flight or from a stack) */
			printf(" buffer %s%s", str(op, "buffer"), json_is_true(json_object_get(op, "system_buffer")) ? " (system)" : "");
		json_t *a = json_object_get(op, "actual");
		if (a) {
			printf("; actual peer ");
			print_rank(json_object_get(a, "peer_global"));
			printf(" tag ");
			print_rank(json_object_get(a, "tag"));
			if (json_is_integer(json_object_get(a, "length")))
				printf(" length %lld", (long long)json_integer_value(json_object_get(a, "length")));
			else if (json_is_integer(json_object_get(a, "count")))
				printf(" count %lld", (long long)json_integer_value(json_object_get(a, "count")));
		}
		json_t *e;
		size_t k;
		json_array_foreach(json_object_get(op, "extra"), k, e)
			printf(" [%s]", cq_esc(json_string_value(e)));
		printf("\n");
		json_array_foreach(json_object_get(op, "flags"), k, e)
			printf("      flag: %s\n", cq_esc(json_string_value(e)));
	}
	if (str(q, "cut"))
		printf("    %s\n", str(q, "cut"));
}

void cq_mqd_print_rank(json_t *doc)
{
	json_t *dll = json_object_get(doc, "dll");
	printf("core:     %s (%s), pid %lld, rank ", str(doc, "core"), str(doc, "arch"),
	       (long long)json_integer_value(json_object_get(doc, "pid")));
	print_rank(json_object_get(doc, "rank"));
	printf("\ndll:      %s (%s)\n          %s, compatibility %lld, %lld-byte addresses, %s\n",
	       str(dll, "path"), str(dll, "source"), str(dll, "version") ? str(dll, "version") : "no version",
	       (long long)json_integer_value(json_object_get(dll, "compatibility")),
	       (long long)json_integer_value(json_object_get(dll, "taddr_width")),
	       str(json_object_get(dll, "run"), "ended"));
	json_t *donor = json_object_get(doc, "installed_donor");
	if (str(donor, "dir"))
		printf("types:    installed donor %s (Open MPI %s), matched by %s\n", str(donor, "dir"),
		       str(donor, "ompi_version") ? str(donor, "ompi_version") : "?", str(donor, "matched_by"));
	json_t *c;
	size_t i;
	json_array_foreach(json_object_get(doc, "communicators"), i, c) {
		printf("communicator %s (id %lld): size %lld, local rank %lld, group",
		       str(c, "name")[0] ? str(c, "name") : "(unnamed)",
		       (long long)json_integer_value(json_object_get(c, "id")),
		       (long long)json_integer_value(json_object_get(c, "size")),
		       (long long)json_integer_value(json_object_get(c, "local_rank")));
		json_t *g = json_object_get(c, "group"), *m;
		size_t k;
		if (json_is_array(g))
			json_array_foreach(g, k, m)
				printf(" %lld", (long long)json_integer_value(m));
		else
			printf(" unknown (%s)", str(c, "group_error") ? str(c, "group_error") : "?");
		printf("\n");
		json_t *q = json_object_get(c, "queues");
		print_queue("sends:", json_object_get(q, "sends"));
		print_queue("receives:", json_object_get(q, "receives"));
		print_queue("unexpected:", json_object_get(q, "unexpected"));
	}
	json_t *p = json_object_get(doc, "problems");
	if (json_array_size(p)) {
		printf("\nproblems (%zu):\n", json_array_size(p));
		json_array_foreach(p, i, c)
			printf("  %s: %s\n", str(c, "item"), str(c, "message"));
	}
}

/* Without the message queues (no type donor, no usable DLL), the rank and the size of
 * MPI_COMM_WORLD from the launcher's environment: the job view still has each rank's
 * call, the collectives' waits, the stack tree and the verdict; what the queues would add
 * is the document's problem (@p why, when the report itself failed). */
static void rank_from_environment(struct cq_core *core, json_t *doc, const char *why)
{
	if (json_is_integer(json_object_get(doc, "rank")))
		return;
	const char *rv = NULL, *sv = NULL;
	long long rank = cq_launcher_env(core, false, &rv), size = cq_launcher_env(core, true, &sv);
	if (why)
		json_array_append_new(json_object_get(doc, "problems"),
				      json_pack("{s:s, s:o}", "item", "message queues", "message", cq_json_str(why)));
	if (rank < 0 || size <= rank || size > (1 << 30))
		return; /* MPI ranks are C ints; the job view bounds them so */
	json_object_set_new(doc, "rank", json_integer(rank));
	json_object_set_new(doc, "world_size", json_integer(size));
	json_object_set_new(doc, "rank_source", json_sprintf("environment: %s, %s (the message queues could not be read)",
							      rv, sv));
}

/* One rank's document from a core (or an error document naming the core). */
static json_t *rank_doc(struct cq_cli *cli, const char *path)
{
	struct cq_core *core;
	struct cq_error *err = cq_core_open(path, &cli->opts, &core);
	json_t *doc = NULL;
	if (!err) {
		err = cq_mqd_report(core, &cli->mqd, &doc);
		if (err) {
			/* no queues at all (no DLL, refused, unusable): the stacks still tell */
			doc = json_pack("{s:s, s:o, s:o, s:[]}", "schema", "coreq-mqd/1", "core", cq_json_str(path),
					"communicators", json_array(), "problems");
			rank_from_environment(core, doc, err->message ? err->message : "the message queues could not be read");
			if (json_is_integer(json_object_get(doc, "rank"))) {
				cq_error_destroy(err);
				err = NULL;
			} else {
				json_decref(doc);
				doc = NULL;
			}
		} else {
			rank_from_environment(core, doc, NULL);
		}
		if (!err) {
			cq_inflight_add(core, doc);
			cq_mqd_add_stacks(&(struct cq_rank_analysis){cli->max_frames, &cli->mqd}, core, doc);
		}
		cq_core_close(core);
	}
	if (err) {
		doc = json_pack("{s:s, s:o, s:o}", "schema", "coreq-mqd/1", "core", cq_json_str(path), "error",
				cq_json_str(err->message ? err->message : "failed"));
		cq_error_destroy(err);
	}
	return doc;
}

struct rank_ctx {
	struct cq_cli *cli;
	char **inputs;
};

static json_t *rank_job(void *arg, int i)
{
	struct rank_ctx *c = arg;
	return rank_doc(c->cli, c->inputs[i]);
}

/* The per-rank phase over @p n inputs (job/pool.h: cores in @p workers processes);
 * per-rank JSON inputs (made by `coreq mqd --json` elsewhere) are read as they are. */
static json_t *per_rank(struct cq_cli *cli, char **inputs, int n, int workers)
{
	json_t *docs = json_array();
	bool *cores = calloc((size_t)n + 1, sizeof(*cores));
	for (int i = 0; cores && i < n; i++)
		cores[i] = !cq_is_json_input(inputs[i]);
	struct rank_ctx ctx = {cli, inputs};
	json_t *made = cores ? cq_pool_run(n, cores, workers, rank_job, &ctx, "coreq mqd", "rank cores analyzed") : NULL;
	for (int i = 0; i < n; i++) {
		json_t *doc;
		if (cq_is_json_input(inputs[i])) {
			char *why = NULL;
			doc = cq_load_doc(inputs[i], &why);
			if (!doc || strcmp(json_string_value(json_object_get(doc, "schema")) ?: "", "coreq-mqd/1")) {
				json_decref(doc);
				doc = json_pack("{s:s, s:o, s:o}", "schema", "coreq-mqd/1", "core", cq_json_str(inputs[i]),
						"error", cq_json_str(why ? why : "not a coreq-mqd/1 document (made by coreq mqd --json CORE)"));
			}
			free(why);
		} else {
			doc = json_incref(json_array_get(made, (size_t)i));
			if (!json_is_object(doc)) {
				json_decref(doc);
				doc = json_pack("{s:s, s:o, s:s}", "schema", "coreq-mqd/1", "core", cq_json_str(inputs[i]),
						"error", "the worker analyzing this core died");
			}
		}
		json_array_append_new(docs, doc);
	}
	json_decref(made);
	free(cores);
	return docs;
}

/* Several documents of one rank are samples of it (`coreq snapshot --job --samples`):
 * the job view takes each rank's latest, and @p progress (set when there are samples)
 * says per rank whether its stacks moved (job/progress.h). @p docs is consumed. */
static json_t *latest_samples(json_t *docs, json_t **progress)
{
	json_t *keys = json_array(), *d;
	size_t i;
	*progress = NULL;
	json_array_foreach(docs, i, d) {
		json_t *rank = json_object_get(d, "rank"), *bt = json_object_get(d, "stacks");
		/* what job/progress.h compares, named by the rank (the document's own stays as it is) */
		json_t *key = json_is_object(bt) ? json_pack("{s:O?, s:O?}", "threads", json_object_get(bt, "threads"),
							      "process", json_object_get(bt, "process"))
						 : json_object();
		if (json_is_integer(rank))
			json_object_set(key, "task", rank);
		json_array_append_new(keys, key);
	}
	json_t *groups = cq_progress_group(keys), *g;
	if (json_array_size(groups) == json_array_size(docs)) {
		json_decref(groups);
		json_decref(keys);
		return docs; /* one document per rank: no samples */
	}
	json_t *out = json_array();
	*progress = json_array();
	json_array_foreach(groups, i, g) {
		json_t *idx = json_object_get(g, "samples"), *x, *bts = json_array();
		size_t m, pick = (size_t)json_integer_value(json_array_get(idx, json_array_size(idx) - 1));
		bool stacks = true;
		json_array_foreach(idx, m, x) {
			json_t *bt = json_array_get(keys, (size_t)json_integer_value(x));
			stacks &= json_is_array(json_object_get(bt, "threads"));
			json_array_append(bts, bt);
		}
		/* a rank given once among sampled ones too: the verdict names it as not compared */
		json_t *p = stacks ? cq_progress_of(bts) : NULL;
		if (p) {
			pick = (size_t)json_integer_value(json_array_get(idx, (size_t)json_integer_value(json_object_get(p, "latest"))));
			json_object_del(p, "latest");
			json_array_append_new(*progress, p);
		}
		json_decref(bts);
		json_array_append(out, json_array_get(docs, pick));
	}
	json_decref(groups);
	json_decref(keys);
	json_decref(docs);
	return out;
}

static void print_op_ref(json_t *o)
{
	printf("rank %lld %s ", (long long)json_integer_value(json_object_get(o, "rank")),
	       str(o, "kind"));
	printf(!strcmp(str(o, "kind") ?: "", "send") ? "to " : "from ");
	print_rank(json_object_get(o, "peer"));
	printf(" tag ");
	print_rank(json_object_get(o, "tag"));
	if (json_is_integer(json_object_get(o, "length")))
		printf(" (%s, %lld bytes)", str(o, "comm"), (long long)json_integer_value(json_object_get(o, "length")));
	else if (json_is_integer(json_object_get(o, "count"))) /* MPICH's DLL: elements */
		printf(" (%s, %lld elements)", str(o, "comm"), (long long)json_integer_value(json_object_get(o, "count")));
	else /* an operation known from the stack only (stack_sends) */
		printf(" (%s, length unknown)", str(o, "comm"));
}

/* The ranks' own problems (rank_problems), each distinct one once with its ranks as
 * ranges ("problem: ranks 0-3: types: ..."): a type problem every rank shares was printed
 * once per rank, 900 characters each. The JSON keeps one entry per rank. */
static void print_rank_problems(json_t *list)
{
	json_t *index = json_object(), *x;
	size_t i, n = 0;
	struct cq_ranges *sets = calloc(json_array_size(list) + 1, sizeof(*sets));
	json_t **first = calloc(json_array_size(list) + 1, sizeof(*first));
	bool ok = index && sets && first;
	json_array_foreach(list, i, x) {
		json_int_t rank = json_integer_value(json_object_get(x, "rank"));
		char *key = NULL;
		if (!ok || rank < 0 || asprintf(&key, "%s\x1f%s", str(x, "item") ?: "", str(x, "message") ?: "") < 0) {
			/* no rank to gather by (or no memory): as it is */
			printf("problem: rank %lld: %s: %s\n", (long long)rank, str(x, "item"), str(x, "message"));
			continue;
		}
		json_t *at = json_object_get(index, key);
		size_t k = at ? (size_t)json_integer_value(at) : n;
		if (!at) {
			json_object_set_new(index, key, json_integer((json_int_t)n));
			cq_ranges_init(&sets[n]);
			first[n++] = x;
		}
		struct cq_error *err = cq_ranges_add(&sets[k], (uint64_t)rank, (uint64_t)rank);
		cq_error_destroy(err);
		free(key);
	}
	for (size_t k = 0; k < n; k++) {
		char *r = cq_ranges_format(&sets[k]);
		printf("problem: rank%s %s: %s: %s\n", cq_ranges_count(&sets[k]) > 1 ? "s" : "", r ? r : "?",
		       str(first[k], "item"), str(first[k], "message"));
		free(r);
		cq_ranges_deinit(&sets[k]);
	}
	free(sets);
	free(first);
	json_decref(index);
}

static void print_job(json_t *job)
{
	json_t *x, *y;
	size_t i, k;
	/* first: on whom the waits end (job/verdict.h) */
	if (str(json_object_get(job, "verdict"), "text"))
		printf("verdict: %s\n", cq_esc(str(json_object_get(job, "verdict"), "text")));
	printf("job: %lld rank(s), %zu communicator(s)\n", (long long)json_integer_value(json_object_get(job, "nranks")),
	       json_array_size(json_object_get(job, "communicators")));
	if (str(job, "error")) {
		printf("FAILED: %s\n", str(job, "error"));
		return;
	}
	if (json_object_get(job, "progress")) {
		printf("progress between samples:\n");
		cq_progress_print(stdout, json_object_get(job, "progress"));
	}
	/* where each rank is: what the waits below are taken from */
	json_array_foreach(json_object_get(job, "calls"), i, x) {
		printf("rank %lld: %s%s", (long long)json_integer_value(json_object_get(x, "rank")),
		       !strncmp(str(x, "in") ?: "", "MPI_", 4) ? "in " : "", str(x, "in"));
		json_t *th = json_object_get(x, "threads");
		bool requests = false;
		json_int_t read = -1;
		json_array_foreach(th, k, y) {
			printf("%s%lld%s", k ? ", " : " (thread ", (long long)json_integer_value(json_object_get(y, "tid")),
			       k + 1 == json_array_size(th) ? ")" : "");
			requests |= !strcmp(str(y, "waits") ?: "", "requests");
			if (json_is_integer(json_object_get(y, "requests_read")))
				read = json_integer_value(json_object_get(y, "requests_read"));
		}
		if (requests && read >= 0)
			printf(": waits on the requests its arguments name (%lld pending)", (long long)read);
		else if (requests)
			printf(": waits on every request the rank posted (the call's arguments are not read)");
		if (!json_is_true(json_object_get(x, "from_stacks")))
			printf(": no stacks in its document, every pending operation taken as waited on");
		printf("\n");
	}
	json_array_foreach(json_object_get(job, "deadlocks"), i, x) {
		printf("DEADLOCK: cycle");
		cq_job_print_cycle(stdout, json_object_get(x, "cycle"));
		printf("\n");
	}
	json_array_foreach(json_object_get(job, "possible_deadlocks"), i, x) {
		printf("POSSIBLE DEADLOCK: cycle");
		cq_job_print_cycle(stdout, json_object_get(x, "cycle"));
		printf(", assuming");
		json_array_foreach(json_object_get(x, "assuming"), k, y)
			printf("%s%s", k ? " and " : " ", cq_esc(json_string_value(y)));
		printf("\n");
	}
	json_array_foreach(json_object_get(job, "wildcard_stalls"), i, x) {
		printf("STALLED wildcard receive: ");
		print_op_ref(json_object_get(x, "receive"));
		printf(": %s\n", str(x, "why"));
	}
	static const char *const lists[][2] = {{"unmatched_sends", "unmatched send"},
					       {"unmatched_receives", "unmatched receive"}};
	for (int l = 0; l < 2; l++)
		json_array_foreach(json_object_get(job, lists[l][0]), i, x) {
			printf("%s: ", lists[l][1]);
			print_op_ref(x);
			printf("%s\n", json_is_true(json_object_get(x, "arrived")) ?
			       " - arrived at the receiver, which posted no receive that takes it" : "");
		}
	json_array_foreach(json_object_get(job, "collectives"), i, x) {
		printf("%s: rank(s)", json_is_true(json_object_get(x, "mismatch")) ? "COLLECTIVE MISMATCH" : "collective");
		json_array_foreach(json_object_get(x, "ranks"), k, y)
			printf(" %lld", (long long)json_integer_value(y));
		if (str(x, "comm"))
			printf(" in %s on %s (%s)", str(x, "call"), cq_esc(str(x, "comm")), str(x, "comm_source"));
		else
			printf(" in %s on a communicator %s", str(x, "call"), str(x, "comm_source"));
		static const char *const parts[][2] = {{"elsewhere", "not in it, waited for"},
						      {"ahead", "already past it (in a later one)"}};
		for (int l = 0; l < 2; l++) {
			json_t *list = json_object_get(x, parts[l][0]);
			if (json_array_size(list))
				printf("; %s:", parts[l][1]);
			json_array_foreach(list, k, y)
				printf("%s rank %lld %s%s", k ? "," : "", (long long)json_integer_value(json_object_get(y, "rank")),
				       !strncmp(str(y, "in") ?: "", "MPI_", 4) ? "in " : "", str(y, "in"));
		}
		printf("\n");
	}
	json_array_foreach(json_object_get(job, "posted"), i, x) {
		printf("posted, not waited on: ");
		print_op_ref(x);
		printf("%s\n", json_is_true(json_object_get(x, "rank_stopped")) ? " - its process is stopped" :
			       json_is_true(json_object_get(x, "rank_died")) ? " - its process died" : "");
	}
	json_array_foreach(json_object_get(job, "taken_sends"), i, x) {
		printf("sent, taken by its receiver: ");
		print_op_ref(x);
		printf(" - completes when rank %lld's MPI runs again%s%s\n", (long long)json_integer_value(json_object_get(x, "rank")),
		       str(x, "assumption") ? "; " : "", str(x, "assumption") ? str(x, "assumption") : "");
	}
	/* matched operations whose peer does not progress: waits on it */
	json_array_foreach(json_object_get(job, "wait_for"), i, x) {
		json_t *op = json_object_get(x, "op");
		if (!str(op, "peer_not_progressing"))
			continue;
		printf("matched, waits on rank %lld (%s): ", (long long)json_integer_value(json_object_get(x, "to")),
		       str(op, "peer_not_progressing"));
		print_op_ref(op);
		printf("\n");
	}
	json_array_foreach(json_object_get(job, "matched"), i, x) {
		printf("matched (in progress): ");
		print_op_ref(json_object_get(x, "send"));
		printf(" <-> ");
		print_op_ref(json_object_get(x, "receive"));
		printf("\n");
	}
	json_t *idle = json_object_get(job, "no_mpi_state");
	if (json_array_size(idle)) {
		printf("no MPI operation pending on rank(s)");
		json_array_foreach(idle, i, x)
			printf(" %lld", (long long)json_integer_value(x));
		printf("\n");
	}
	json_array_foreach(json_object_get(job, "failed"), i, x)
		printf("FAILED: %s: %s\n", str(x, "core"), str(x, "error"));
	json_array_foreach(json_object_get(job, "problems"), i, x)
		printf("problem: rank %lld: %s\n", (long long)json_integer_value(json_object_get(x, "rank")), str(x, "why"));
	print_rank_problems(json_object_get(job, "rank_problems"));
	size_t nfailed = json_array_size(json_object_get(job, "failed"));
	if (!json_array_size(json_object_get(job, "deadlocks")) &&
	    !json_array_size(json_object_get(job, "wildcard_stalls"))) {
		/* ranks read without their queues: their point-to-point waits are not known */
		bool unknown = false;
		json_array_foreach(json_object_get(job, "ranks"), i, x)
			unknown |= json_is_true(json_object_get(x, "communicators_assumed"));
		const char *among = unknown ? ", among the waits known (no message queues: point-to-point waits unknown)" : "";
		/* a possible deadlock above is not "no deadlock": none that does not rest on a guess */
		const char *what = json_array_size(json_object_get(job, "possible_deadlocks"))
					   ? "no deadlock found without an assumption" : "no deadlock found";
		if (nfailed)
			printf("%s among the %lld rank(s) analyzed (%zu failed)%s\n", what,
			       (long long)json_integer_value(json_object_get(job, "nranks")) - (long long)nfailed, nfailed,
			       among);
		else
			printf("%s%s\n", what, among);
	}
	json_t *tree = json_object_get(job, "stack_tree");
	if (tree) {
		printf("\nstacks (one per rank; the ranks of a deadlock cycle and the blocking ranks marked):\n");
		const char *nc = getenv("NO_COLOR");
		cq_tree_print(tree, stdout, isatty(STDOUT_FILENO) && !(nc && *nc));
	}
}


int cq_cmd_mqd(struct cq_cli *cli)
{
	if (cli->slurm_node)
		return cq_cmd_slurm_docs(cli, "mqd");
	if (cli->slurm)
		return cq_cmd_slurm_gather(cli, "mqd");
	if (cli->nargs < 1 && !cli->pid) {
		fprintf(stderr, "coreq: usage: coreq mqd CORE|RANK.json...|--pid PID [--exe EXE] [--types DONOR] [--mqd-plugin DLL] [--dot FILE] [--svg FILE] [--workers N]\n");
		return CQ_EXIT_USAGE;
	}
	if (cli->pid)
		goto one_rank; /* a running rank (live/process.h): its own view, as of one core */
	/* CORE EXE, as `coreq info` takes them, and RANK0.core RANK1.core ... EXE (every rank
	 * runs the same program): a last argument that is an executable is that, not a rank */
	int last = cli->nargs - 1;
	if (cli->nargs >= 2 && !cli->opts.exe && !cq_is_json_input(cli->args[last]) &&
	    cq_is_executable(cli->args[last])) {
		cli->opts.exe = cli->args[last];
		cli->nargs = last;
	}
	if (cli->nargs > 1 || cli->dot || cli->svg || cq_is_json_input(cli->args[0])) {
		long n = cli->workers ? cli->workers : sysconf(_SC_NPROCESSORS_ONLN);
		json_t *progress;
		json_t *docs = latest_samples(per_rank(cli, cli->args, cli->nargs, n > 0 ? (int)n : 1), &progress);
		json_t *job = cq_waitfor_job(docs);
		json_decref(docs);
		if (progress) {
			/* repeated samples: the verdict says whether the ranks it is about moved */
			cq_job_verdict_samples(json_object_get(job, "verdict"), progress);
			char *moved = cq_progress_tasks(progress, "progressing");
			if (moved && *moved && json_object_get(job, "stack_tree"))
				cq_error_destroy(cq_tree_mark(json_object_get(job, "stack_tree"), "progressing", moved));
			free(moved);
			json_object_set_new(job, "progress", progress);
		}
		/* a finding outranks missing pieces: a deadlock found among what was known is one */
		int rc = json_array_size(json_object_get(job, "deadlocks")) ? CQ_EXIT_DEADLOCK :
			 json_array_size(json_object_get(job, "possible_deadlocks")) ? CQ_EXIT_POSSIBLE_DEADLOCK :
			 json_array_size(json_object_get(job, "failed")) || json_array_size(json_object_get(job, "problems")) ||
				 json_array_size(json_object_get(job, "rank_problems")) ? CQ_EXIT_PARTIAL : CQ_EXIT_OK;
		if (json_object_get(job, "error")) {
			/* no rank analyzed: as `coreq stacks` when no input merged */
			fprintf(stderr, "coreq: %s\n", str(job, "error"));
			rc = CQ_EXIT_IO;
		}
		if (cli->dot || cli->svg) {
			/* an output refused (onto an input: usage) says so whatever the analysis found */
			int grc = cq_write_graph(cli, cq_waitfor_dot(job));
			if (grc > CQ_EXIT_PARTIAL)
				rc = grc; /* the graph not written: said over the finding */
		}
		if (cli->json) {
			cq_emit_json(job);
		} else {
			print_job(job);
			json_decref(job);
		}
		return rc;
	}
one_rank:;
	struct cq_core *core;
	int rc = cq_open_core(cli, false, &core);
	if (rc)
		return rc;
	json_t *doc;
	struct cq_error *err = cq_mqd_report(core, &cli->mqd, &doc);
	if (err) {
		cq_core_close(core);
		return cq_fail(err);
	}
	cq_inflight_add(core, doc);
	cq_mqd_add_stacks(&(struct cq_rank_analysis){cli->max_frames, &cli->mqd}, core, doc);
	/* --pid: a rank that ran again (the bound) or died while read is not shown */
	if ((err = cq_process_check(core))) {
		json_decref(doc);
		cq_core_close(core);
		return cq_fail(err);
	}
	rc = json_array_size(json_object_get(doc, "problems")) ? CQ_EXIT_PARTIAL : CQ_EXIT_OK;
	if (cli->json) {
		cq_emit_json(doc);
	} else {
		cq_mqd_print_rank(doc);
		json_decref(doc);
	}
	if (rc)
		fprintf(stderr, "coreq: analysis incomplete: problems listed in the output\n");
	cq_core_close(core);
	return rc;
}
