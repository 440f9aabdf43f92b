/* SPDX-License-Identifier: MIT */
/* The job view's verdict: the blocking set and where each of its ranks is (verdict.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/text.h"
#include "graph.h"
#include "mpicall.h"
#include "ranges.h"
#include "verdict.h"

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* The ranks of the graph: those analyzed and every end of an edge, sorted and distinct. */
struct nodes {
	int *rank;
	size_t n;
};

static int node_of(const struct nodes *ns, json_int_t rank)
{
	if (rank < 0 || rank > (1 << 30))
		return -1;
	int r = (int)rank;
	const int *p = bsearch(&r, ns->rank, ns->n, sizeof(int), cmp_int);
	return p ? (int)(p - ns->rank) : -1;
}

static bool collect_nodes(const json_t *job, struct nodes *ns)
{
	const json_t *calls = json_object_get(job, "calls"), *edges = json_object_get(job, "wait_for"), *x;
	size_t i, cap = json_array_size(calls) + 2 * json_array_size(edges) + 1;
	ns->rank = malloc(cap * sizeof(int));
	ns->n = 0;
	if (!ns->rank)
		return false;
	json_array_foreach(calls, i, x)
		ns->rank[ns->n++] = (int)json_integer_value(json_object_get(x, "rank"));
	json_array_foreach(edges, i, x) {
		ns->rank[ns->n++] = (int)json_integer_value(json_object_get(x, "from"));
		ns->rank[ns->n++] = (int)json_integer_value(json_object_get(x, "to"));
	}
	qsort(ns->rank, ns->n, sizeof(int), cmp_int);
	size_t w = 0;
	for (size_t k = 0; k < ns->n; k++)
		if (ns->rank[k] >= 0 && (!w || ns->rank[w - 1] != ns->rank[k]))
			ns->rank[w++] = ns->rank[k];
	ns->n = w;
	return true;
}

/* Per node: the first analyzed document of its rank (the job view keeps the first one
 * given) and its entry in the job's calls; one pass over each list. */
static void index_nodes(const json_t *job, const struct nodes *ns, const json_t **docs, const json_t **calls)
{
	const json_t *d;
	size_t i;
	json_array_foreach(json_object_get(job, "ranks"), i, d) {
		int v = json_is_integer(json_object_get(d, "rank")) && !json_object_get(d, "error") ?
			node_of(ns, json_integer_value(json_object_get(d, "rank"))) : -1;
		if (v >= 0 && !docs[v])
			docs[v] = d;
	}
	json_array_foreach(json_object_get(job, "calls"), i, d) {
		int v = node_of(ns, json_integer_value(json_object_get(d, "rank")));
		if (v >= 0 && !calls[v])
			calls[v] = d;
	}
}

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* A frame as a place: its name, and the file and line where known, else its module. */
static json_t *place(const json_t *f)
{
	const char *name = str(f, "demangled") ?: str(f, "function"), *file = str(f, "file");
	const char *module = str(f, "module");
	json_int_t line = json_integer_value(json_object_get(f, "line"));
	char *text = NULL;
	const char *base = file ? strrchr(file, '/') : NULL;
	base = base ? base + 1 : file;
	int ok;
	if (name && base && line > 0)
		ok = asprintf(&text, "%s (%s:%lld)", name, base, (long long)line);
	else if (name)
		ok = asprintf(&text, "%s (%s)", name, module ?: "?");
	else
		ok = asprintf(&text, "%s+%s", module ?: "?", str(f, "module_offset") ?: "?");
	if (ok < 0)
		return NULL;
	json_t *p = json_pack("{s:s?, s:s?, s:s?, s:s?, s:o}", "function", str(f, "function"), "demangled",
			      str(f, "demangled"), "file", file, "module", module, "text", cq_json_str(text));
	json_object_set_new(p, "line", line > 0 ? json_integer(line) : json_null());
	if (json_is_array(json_object_get(f, "loop_variables")))
		json_object_set(p, "loop_variables", json_object_get(f, "loop_variables"));
	free(text);
	return p;
}

static const json_t *thread_of(const json_t *stacks, const json_t *tid)
{
	const json_t *t;
	size_t i;
	json_array_foreach(json_object_get(stacks, "threads"), i, t)
		if (json_equal((json_t *)json_object_get(t, "tid"), (json_t *)tid))
			return t;
	return NULL;
}

/* Where the rank of document @p doc is (verdict.h), or NULL when its stacks are unknown. */
/* @p frames[k], as a place, with its "progress" (verdict.c's own, dropped before the
 * verdict is returned): from the outermost frame in to it, each frame's {function, line,
 * loop_variables}, what STAT's temporal ordering compares. */
static json_t *place_at(const json_t *frames, size_t k)
{
	json_t *p = place(json_array_get(frames, k)), *progress = json_array();
	for (size_t i = json_array_size(frames); p && progress && i-- > k;) {
		const json_t *f = json_array_get(frames, i);
		json_t *e = json_pack("{s:s?, s:I}", "function", str(f, "function"), "line",
				      json_integer_value(json_object_get(f, "line")));
		if (e && json_is_array(json_object_get(f, "loop_variables")))
			json_object_set(e, "loop_variables", json_object_get(f, "loop_variables"));
		json_array_append_new(progress, e);
	}
	json_object_set_new(p, "progress", progress);
	return p;
}

static json_t *where_of(const json_t *doc)
{
	const json_t *stacks = json_object_get(doc, "stacks"), *c, *pick = NULL;
	size_t i;
	/* the thread in a blocking MPI call (the first one), else in any MPI call */
	json_array_foreach(json_object_get(doc, "mpi_calls"), i, c)
		if (!pick || (!strcmp(str(pick, "waits") ?: "", "nothing") && strcmp(str(c, "waits") ?: "", "nothing")))
			pick = c;
	if (pick) {
		const json_t *frames = json_object_get(thread_of(stacks, json_object_get(pick, "tid")), "frames");
		json_int_t k = json_integer_value(json_object_get(pick, "frame"));
		return k >= 0 && (size_t)k + 1 < json_array_size(frames) ? place_at(frames, (size_t)k + 1) : NULL;
	}
	const json_t *t = json_array_get(json_object_get(stacks, "threads"), 0);
	const json_t *frames = json_object_get(t, "frames"), *uf = json_object_get(t, "user_frame");
	size_t from = json_is_integer(uf) && json_integer_value(uf) >= 0 ? (size_t)json_integer_value(uf) : 0;
	/* the program's own code has lines where it has DWARF: the innermost such frame */
	for (size_t k = from; k < json_array_size(frames); k++)
		if (json_integer_value(json_object_get(json_array_get(frames, k), "line")) > 0)
			return place_at(frames, k);
	return json_array_size(frames) > from ? place_at(frames, from) : NULL;
}

/* Where the rank of document @p doc died: its crashing thread's first frame outside the C
 * library (the abort's caller, not raise), moved in to the innermost one with a line where
 * the program has DWARF; NULL when its document says no crash or has no such stack. */
static json_t *crash_place(const json_t *doc)
{
	const json_t *crash = json_object_get(doc, "crash");
	if (!json_is_object(crash))
		return NULL;
	const json_t *t = thread_of(json_object_get(doc, "stacks"), json_object_get(crash, "tid"));
	const json_t *frames = json_object_get(t, "frames"), *uf = json_object_get(t, "user_frame");
	size_t from = json_is_integer(uf) && json_integer_value(uf) >= 0 ? (size_t)json_integer_value(uf) : 0;
	for (size_t k = from; k < json_array_size(frames); k++)
		if (json_integer_value(json_object_get(json_array_get(frames, k), "line")) > 0)
			return place(json_array_get(frames, k));
	return json_array_size(frames) > from ? place(json_array_get(frames, from)) : NULL;
}

/* "rank 3" or "ranks 0-1,3" for the set @p s. */
static char *ranks_text(const struct cq_ranges *s)
{
	char *r = cq_ranges_format(s), *out = NULL;
	if (r && asprintf(&out, "rank%s %s", cq_ranges_count(s) > 1 ? "s" : "", r) < 0)
		out = NULL;
	free(r);
	return out;
}

static void add_rank(struct cq_ranges *s, int rank)
{
	cq_error_destroy(cq_ranges_add(s, (uint64_t)rank, (uint64_t)rank));
}

static void add_range(struct cq_ranges *s, uint64_t lo, uint64_t hi)
{
	cq_error_destroy(cq_ranges_add(s, lo, hi));
}

/* The blocking ranks grouped by what is said of them ("outside MPI in f (a.c:3)"), each
 * group as "rank(s) R what" into @p f, after ": " with @p lead; with one group and @p which,
 * as ", which is/are what". */
static void say_groups(FILE *f, json_t *blocking, bool which, bool lead)
{
	json_t *groups = json_object(), *b, *order = json_array();
	size_t i;
	json_array_foreach(blocking, i, b) {
		const char *what = str(b, "said");
		json_t *g = json_object_get(groups, what);
		if (!g) {
			g = json_array();
			json_object_set_new(groups, what, g);
			json_array_append_new(order, json_string(what));
		}
		json_array_append(g, json_object_get(b, "rank"));
	}
	json_t *w;
	json_array_foreach(order, i, w) {
		struct cq_ranges s;
		cq_ranges_init(&s);
		json_t *r;
		size_t k;
		json_array_foreach(json_object_get(groups, json_string_value(w)), k, r)
			add_rank(&s, (int)json_integer_value(r));
		char *rt = ranks_text(&s);
		if (which && json_array_size(order) == 1)
			fprintf(f, ", which %s %s", cq_ranges_count(&s) > 1 ? "are" : "is", json_string_value(w));
		else
			fprintf(f, "%s%s %s", i ? "; " : lead ? ": " : "", rt ? rt : "?", json_string_value(w));
		free(rt);
		cq_ranges_deinit(&s);
	}
	json_decref(groups);
	json_decref(order);
}

/* The guesses @p list (strings) into @p f, each after @p lead then " and ": those of one
 * shape about several ranks ("rank 0's MPI_Allreduce is on MPI_COMM_WORLD", the same of
 * ranks 2 and 3) as one ("ranks 0,2-3's MPI_Allreduce is on MPI_COMM_WORLD"); at most
 * @p max said. */
static void say_assumptions(FILE *f, const json_t *list, const char *lead, size_t max)
{
	json_t *groups = json_object(), *order = json_array(), *x;
	size_t i, said = 0;
	json_array_foreach(list, i, x) {
		const char *a = json_string_value(x), *rest;
		long long r = -1;
		int used = 0;
		if (!a)
			continue;
		if (sscanf(a, "rank %lld's %n", &r, &used) == 1 && used > 0 && r >= 0)
			rest = a + used;
		else
			rest = a, r = -1;
		json_t *g = json_object_get(groups, rest);
		if (!g) {
			g = json_array();
			json_object_set_new(groups, rest, g);
			json_array_append_new(order, json_string(rest));
		}
		json_array_append_new(g, json_integer(r));
	}
	json_array_foreach(order, i, x) {
		if (said >= max)
			break;
		const char *rest = json_string_value(x);
		json_t *g = json_object_get(groups, rest), *r;
		struct cq_ranges s;
		size_t k;
		cq_ranges_init(&s);
		json_array_foreach(g, k, r)
			if (json_integer_value(r) >= 0)
				add_rank(&s, (int)json_integer_value(r));
		char *rt = cq_ranges_count(&s) ? ranks_text(&s) : NULL;
		fprintf(f, "%s%s%s%s", said++ ? " and " : lead, rt ? rt : "", rt ? "'s " : "", rest);
		free(rt);
		cq_ranges_deinit(&s);
	}
	json_decref(groups);
	json_decref(order);
}

/* The receive of rank @p rank whose message is already at the rank (the job's
 * satisfied_receives), or NULL. */
static const json_t *satisfied_of(const json_t *job, int rank)
{
	const json_t *r;
	size_t i;
	json_array_foreach(json_object_get(job, "satisfied_receives"), i, r)
		if (json_integer_value(json_object_get(r, "rank")) == rank)
			return r;
	return NULL;
}

/* Whether any communicator @p doc lists has a send or receive queue read. */
static bool queues_read(const json_t *doc)
{
	const json_t *c;
	size_t i;
	json_array_foreach(json_object_get(doc, "communicators"), i, c) {
		const json_t *q = json_object_get(c, "queues");
		for (int k = 0; k < 2; k++) {
			const char *st = str(json_object_get(q, k ? "receives" : "sends"), "state");
			if (st && strcmp(st, "no_information"))
				return true;
		}
	}
	return false;
}

/* What is said of a blocking rank: where it is, and in what; of one inside MPI whose
 * receive has its message there already (@p sat), that it is not running. */
static json_t *describe(const json_t *doc, int rank, const char *in, bool cycle, const json_t *sat,
			const json_t *call)
{
	const char *dead_of = str(call, "died"), *not_running = str(call, "not_running");
	json_t *where = doc ? where_of(doc) : NULL;
	const char *at = json_string_value(json_object_get(where, "text"));
	char *said = NULL, ready[560] = "";
	int ok;
	const char *st = json_string_value(json_object_get(
		json_object_get(json_object_get(doc, "stacks"), "process"), "state"));
	/* a message there already: it returns once it runs (a rank held by a snapshot's cut
	 * may have had it arrive just before; one stopped by a signal does not run) */
	bool stopped = st && !strcmp(st, "stopped");
	int n = 0;
	if (sat && in && !strncmp(in, "MPI_", 4)) {
		const json_t *m = json_object_get(sat, "message");
		n = snprintf(ready, sizeof(ready), ", with the message it waits for (from rank %lld, tag %lld) already in its %s",
			     (long long)json_integer_value(json_object_get(m, "peer")),
			     (long long)json_integer_value(json_object_get(m, "tag")),
			     json_is_true(json_object_get(m, "in_flight")) ? "shared memory, not yet taken by MPI"
									   : "unexpected queue");
	}
	if (stopped && n >= 0 && (size_t)n < sizeof(ready))
		snprintf(ready + n, sizeof(ready) - (size_t)n,
			 "%s stopped by a signal (SIGSTOP, SIGTSTP, ...) when its core was taken: it is not running",
			 n ? ";" : ",");
	/* found not running from a send of its (or to it) that no running pair leaves pending */
	else if (not_running && n >= 0 && (size_t)n < sizeof(ready))
		snprintf(ready + n, sizeof(ready) - (size_t)n, "%s %s", n ? ";" : ",", not_running);
	/* in point-to-point with no queues read: the ranks waiting on it are known (their
	 * collectives), what it waits on is not */
	enum cq_mpi_wait w = in ? cq_mpi_call_waits(in) : CQ_MPI_WAITS_NOTHING;
	if (!stopped && !not_running && !dead_of && doc && w != CQ_MPI_WAITS_NOTHING && w != CQ_MPI_WAITS_COLLECTIVE &&
	    !queues_read(doc) && n >= 0 && (size_t)n < sizeof(ready))
		snprintf(ready + n, sizeof(ready) - (size_t)n, "%s waiting on what is not known (no message queues read)",
			 n ? ";" : ",");
	const char *died = dead_of;
	if (!doc)
		ok = asprintf(&said, "not analyzed (no document for it)");
	else if (died)
		ok = asprintf(&said, "dead (%s)", died); /* where: said first, of every dead rank */
	else if (!in || !strcmp(in, "outside MPI"))
		ok = asprintf(&said, "outside MPI%s%s%s", at ? " in " : "", at ?: "", ready);
	else
		ok = asprintf(&said, "%s%s%s%s%s", strncmp(in, "MPI_", 4) ? "" : "in ", in, at ? " from " : "", at ?: "",
			      ready);
	json_t *b = json_pack("{s:i, s:s?, s:o, s:b, s:o}", "rank", rank, "in", doc ? in : NULL, "where",
			      where ? where : json_null(), "cycle", cycle, "said", cq_json_str(ok < 0 ? "?" : said));
	if (died)
		json_object_set_new(b, "died", cq_json_str(died));
	free(said);
	return b;
}

/* Progress of two places in one function, as STAT's temporal ordering has it: their
 * stacks from the outermost frame in, as long as both are in the same functions; the first
 * frame where they differ decides: a lower line is behind, and at one line the lower loop
 * variables (outermost loop first, as far as both have the same ones). < 0 when @p a is
 * behind @p b, 0 when nothing tells them apart. */
static int progress_cmp(const json_t *a, const json_t *b)
{
	const json_t *pa = json_object_get(a, "progress"), *pb = json_object_get(b, "progress");
	for (size_t k = 0; k < json_array_size(pa) && k < json_array_size(pb); k++) {
		const json_t *fa = json_array_get(pa, k), *fb = json_array_get(pb, k);
		if (strcmp(str(fa, "function") ?: "", str(fb, "function") ?: ""))
			return 0; /* other calls: not one path */
		json_int_t la = json_integer_value(json_object_get(fa, "line"));
		json_int_t lb = json_integer_value(json_object_get(fb, "line"));
		if (la != lb)
			return la > 0 && lb > 0 ? (la < lb ? -1 : 1) : 0;
		const json_t *va = json_object_get(fa, "loop_variables"), *vb = json_object_get(fb, "loop_variables");
		for (size_t i = 0; i < json_array_size(va) && i < json_array_size(vb); i++) {
			const json_t *x = json_array_get(va, i), *y = json_array_get(vb, i);
			if (strcmp(str(x, "name") ?: "", str(y, "name") ?: ""))
				break; /* other loops: not comparable */
			json_int_t vx = json_integer_value(json_object_get(x, "value"));
			json_int_t vy = json_integer_value(json_object_get(y, "value"));
			if (vx != vy)
				return vx < vy ? -1 : 1;
		}
	}
	return 0;
}

/* The loop variables of place @p where's stack (its "progress"), outermost first, for
 * people: "step=5, i=2"; NULL without. */
static char *loop_text(const json_t *where)
{
	const json_t *f, *v;
	size_t k, i;
	char *out = NULL;
	json_array_foreach(json_object_get(where, "progress"), k, f)
		json_array_foreach(json_object_get(f, "loop_variables"), i, v) {
			char *n = NULL, *name = cq_text_escape(str(v, "name") ?: "?");
			if (asprintf(&n, "%s%s%s=%lld", out ? out : "", out ? ", " : "", name ? name : "?",
				     (long long)json_integer_value(json_object_get(v, "value"))) < 0)
				n = NULL;
			free(name);
			free(out);
			out = n;
		}
	return out;
}

/* Where several blocking ranks stand in one function at different places (lines, or
 * loop variables at one line): the one furthest behind is the least progressed (NULL
 * when no function is shared at different places). One pass gathers each function's
 * furthest behind and ahead, the next picks the first function whose two differ. */
static json_t *least_progressed(json_t *blocking)
{
	json_t *seen = json_object(), *b, *best = NULL;
	size_t i;
	json_array_foreach(blocking, i, b) {
		const json_t *w = json_object_get(b, "where");
		const char *fn = str(w, "function");
		if (!fn || json_integer_value(json_object_get(w, "line")) <= 0)
			continue;
		json_t *s = json_object_get(seen, fn);
		if (!s) {
			json_object_set_new(seen, fn, json_pack("{s:O, s:O}", "lo", b, "hi", b));
			continue;
		}
		if (progress_cmp(w, json_object_get(json_object_get(s, "lo"), "where")) < 0)
			json_object_set(s, "lo", b);
		if (progress_cmp(w, json_object_get(json_object_get(s, "hi"), "where")) > 0)
			json_object_set(s, "hi", b);
	}
	json_array_foreach(blocking, i, b) {
		json_t *s = json_object_get(seen, str(json_object_get(b, "where"), "function") ?: "");
		if (s && progress_cmp(json_object_get(json_object_get(s, "lo"), "where"),
				      json_object_get(json_object_get(s, "hi"), "where"))) {
			best = json_object_get(s, "lo");
			break;
		}
	}
	json_t *out = best ? json_pack("{s:O, s:O}", "rank", json_object_get(best, "rank"), "where",
				       json_object_get(best, "where")) : NULL;
	json_decref(seen);
	return out;
}

json_t *cq_job_verdict(const json_t *job)
{
	struct nodes ns = {0};
	struct cq_graph g = {0};
	const json_t *edges = json_object_get(job, "wait_for"), *e;
	json_t *x;
	size_t i, k, ne = 0;
	struct cq_graph_edge *el = malloc((json_array_size(edges) + 1) * sizeof(*el));
	json_t *out = NULL;
	bool *reached = NULL, *leaves = NULL;
	int *queue = NULL;
	const json_t **docs = NULL, **calls = NULL;
	if (!el || !collect_nodes(job, &ns))
		goto out;
	json_array_foreach(edges, i, e) {
		int from = node_of(&ns, json_integer_value(json_object_get(e, "from")));
		int to = node_of(&ns, json_integer_value(json_object_get(e, "to")));
		if (from >= 0 && to >= 0)
			el[ne++] = (struct cq_graph_edge){from, to};
	}
	int n = (int)ns.n;
	reached = calloc((size_t)n + 1, sizeof(bool));
	queue = malloc(((size_t)n + 1) * sizeof(int));
	docs = calloc((size_t)n + 1, sizeof(*docs));
	calls = calloc((size_t)n + 1, sizeof(*calls));
	if (!reached || !queue || !docs || !calls || !cq_graph_init(&g, n, el, ne))
		goto out;
	index_nodes(job, &ns, docs, calls);
	cq_graph_strong(&g);
	leaves = calloc((size_t)g.ncomp + 1, sizeof(bool)); /* a component with an edge out of it */
	bool *cyclic = calloc((size_t)g.ncomp + 1, sizeof(bool));
	if (!leaves || !cyclic) {
		free(cyclic);
		goto out;
	}
	for (int v = 0; v < n; v++)
		for (int y = g.first[v]; y < g.first[v + 1]; y++) {
			int w = g.to[y];
			if (g.comp[w] != g.comp[v])
				leaves[g.comp[v]] = true;
			else
				cyclic[g.comp[v]] = true; /* an edge inside: a cycle (or a self-wait) */
		}
	/* every rank reached from a waiting rank; the waits end in the components nothing leaves */
	struct cq_ranges waiting, blocking_set;
	cq_ranges_init(&waiting);
	cq_ranges_init(&blocking_set);
	size_t qn = 0;
	for (int v = 0; v < n; v++)
		if (g.first[v + 1] > g.first[v]) {
			reached[v] = true;
			queue[qn++] = v;
			add_rank(&waiting, ns.rank[v]);
		}
	for (size_t q = 0; q < qn; q++)
		for (int y = g.first[queue[q]]; y < g.first[queue[q] + 1]; y++)
			if (!reached[g.to[y]]) {
				reached[g.to[y]] = true;
				queue[qn++] = g.to[y];
			}
	json_t *blocking = json_array();
	for (int v = 0; v < n; v++) {
		if (!reached[v] || leaves[g.comp[v]])
			continue;
		json_array_append_new(blocking, describe(docs[v], ns.rank[v], str(calls[v], "in"), cyclic[g.comp[v]],
							    satisfied_of(job, ns.rank[v]),
							    calls[v]));
		add_rank(&blocking_set, ns.rank[v]);
	}
	free(cyclic);
	/* ranks in a blocking MPI call that wait on nobody known: said when nobody else waits */
	json_t *inside = json_array();
	for (int v = 0; v < n; v++) {
		const char *in = str(calls[v], "in");
		if (!reached[v] && g.first[v + 1] == g.first[v] && in && !strncmp(in, "MPI_", 4))
			json_array_append_new(inside, describe(docs[v], ns.rank[v], in, false, satisfied_of(job, ns.rank[v]),
							    calls[v]));
	}
	/* the text: what kind, who waits, on whom, where those are */
	const json_t *dl = json_object_get(job, "deadlocks"), *pd = json_object_get(job, "possible_deadlocks");
	const char *kind = json_array_size(dl) ? "deadlock" : json_array_size(pd) ? "possible_deadlock" :
			   cq_ranges_count(&waiting) ? "blocked" : "none";
	char *text = NULL;
	size_t tlen = 0;
	FILE *f = open_memstream(&text, &tlen);
	/* the ranks that died, first: by which signal, where */
	json_t *dead = json_array();
	for (int v = 0; v < n; v++) {
		const char *sig = str(calls[v], "died");
		if (!sig)
			continue;
		json_t *at = crash_place(docs[v]);
		char *said = NULL;
		if (asprintf(&said, "died of %s%s%s", sig, at ? " in " : "", at ? str(at, "text") : "") < 0)
			said = NULL;
		json_t *d = json_pack("{s:i, s:o, s:o, s:o}", "rank", ns.rank[v], "signal", cq_json_str(sig), "where",
				      at ? at : json_null(), "said", cq_json_str(said ? said : "died"));
		free(said);
		json_array_append_new(dead, d);
	}
	if (f && json_array_size(dead)) {
		say_groups(f, dead, false, false);
		fputs("; ", f);
	}
	json_array_foreach(dead, i, x)
		json_object_del(x, "said");
	if (f) {
		char *wt = ranks_text(&waiting), *bt = ranks_text(&blocking_set);
		if (!strcmp(kind, "none") && json_array_size(inside)) {
			/* in MPI, on peers nobody knows (no queues, or nothing pending in them) */
			struct cq_ranges in;
			cq_ranges_init(&in);
			json_array_foreach(inside, i, x)
				add_rank(&in, (int)json_integer_value(json_object_get(x, "rank")));
			char *it = ranks_text(&in);
			fprintf(f, "no wait between ranks is known; %s %s blocked in MPI", it ? it : "?",
				cq_ranges_count(&in) > 1 ? "are" : "is");
			say_groups(f, inside, false, true);
			free(it);
			cq_ranges_deinit(&in);
			/* and the ranks outside MPI, where a straggler is */
			json_t *outside = json_array();
			for (int v = 0; v < n; v++)
				if (calls[v] && !strcmp(str(calls[v], "in") ?: "", "outside MPI"))
					json_array_append_new(outside, describe(docs[v], ns.rank[v], "outside MPI", false, NULL, NULL));
			if (json_array_size(outside)) {
				fputs("; outside MPI", f);
				say_groups(f, outside, false, true);
			}
			json_decref(outside);
		} else if (!strcmp(kind, "none")) {
			fputs(json_array_size(json_object_get(job, "calls")) ? "no rank waits on another" :
			      "no rank analyzed", f);
		} else {
			const json_t *c0 = json_array_get(strcmp(kind, "deadlock") ? pd : dl, 0);
			if (!strcmp(kind, "blocked")) {
				fprintf(f, "%s wait%s, directly or through others, on %s", wt ? wt : "?",
					cq_ranges_count(&waiting) > 1 ? "" : "s", bt ? bt : "?");
				say_groups(f, blocking, true, true);
				/* waits that rest on a guess are said with it (every waiting rank is
				 * reached, so every assumed edge counts) */
				json_t *said = json_array();
				json_array_foreach(edges, i, e) {
					const char *a = str(e, "assumption");
					bool dup = false;
					json_array_foreach(said, k, x)
						dup |= !strcmp(json_string_value(x), a ? a : "");
					if (a && !dup && json_array_size(said) < 64)
						json_array_append_new(said, json_string(a));
				}
				say_assumptions(f, said, "; assuming ", 3);
				json_decref(said);
			} else {
				/* the cycle, where its ranks are, then who else waits on them */
				fputs(!strcmp(kind, "deadlock") ? "DEADLOCK: cycle" : "POSSIBLE DEADLOCK, assuming ", f);
				say_assumptions(f, json_object_get(c0, "assuming"), "", 16);
				if (strcmp(kind, "deadlock"))
					fputs(": cycle", f);
				cq_job_print_cycle(f, json_object_get(c0, "cycle"));
				say_groups(f, blocking, false, true);
				struct cq_ranges others;
				cq_ranges_init(&others);
				for (int v = 0; v < n; v++)
					if (g.first[v + 1] > g.first[v] && !cq_ranges_has(&blocking_set, (uint64_t)ns.rank[v]))
						add_rank(&others, ns.rank[v]);
				char *ot = cq_ranges_count(&others) ? ranks_text(&others) : NULL;
				if (ot)
					fprintf(f, "; %s wait%s on them", ot, cq_ranges_count(&others) > 1 ? "" : "s");
				free(ot);
				cq_ranges_deinit(&others);
			}
		}
		/* a small send neither end can be told not to have run: both are named */
		size_t ties = 0;
		json_array_foreach(json_object_get(job, "unseen_sends"), i, x) {
			const json_t *o = json_object_get(x, "one_of");
			if (json_array_size(o) != 2 || ties++ >= 3)
				continue;
			long long a = json_integer_value(json_array_get(o, 0)), b = json_integer_value(json_array_get(o, 1));
			fprintf(f, "; one of ranks %lld, %lld is not running: rank %lld's send to rank %lld", a < b ? a : b,
				a < b ? b : a, (long long)json_integer_value(json_object_get(x, "rank")),
				(long long)json_integer_value(json_object_get(x, "peer")));
			if (json_is_integer(json_object_get(x, "tag")))
				fprintf(f, " (tag %lld)", (long long)json_integer_value(json_object_get(x, "tag")));
			fputs(" is neither received nor queued there", f);
		}
		free(wt);
		free(bt);
		fclose(f);
	}
	json_decref(inside);
	json_t *lp = least_progressed(blocking), *b;
	char *loops = lp ? loop_text(json_object_get(lp, "where")) : NULL;
	json_array_foreach(blocking, i, b) {
		json_object_del(b, "said");
		json_object_del(json_object_get(b, "where"), "progress"); /* the ordering's own */
	}
	char *wr = cq_ranges_format(&waiting), *br = cq_ranges_format(&blocking_set);
	out = json_pack("{s:s, s:o, s:s, s:s, s:o}", "kind", kind, "text", cq_json_str(text ? text : "?"), "waiting",
			wr ? wr : "", "blocking_ranks", br ? br : "", "blocking", blocking);
	if (json_array_size(dead))
		json_object_set(out, "died", dead);
	json_decref(dead);
	if (lp) {
		json_object_set_new(out, "least_progressed", lp);
		/* said after the places: which of the ranks in one function is behind */
		const json_t *w = json_object_get(lp, "where");
		json_t *t = json_sprintf("%s; least progressed: rank %lld at %s%s%s", json_string_value(json_object_get(out, "text")),
					 (long long)json_integer_value(json_object_get(lp, "rank")), str(w, "text") ?: "?",
					 loops ? ", " : "", loops ?: "");
		if (t)
			json_object_set_new(out, "text", t);
	}
	free(loops);
	free(wr);
	free(br);
	free(text);
	cq_ranges_deinit(&waiting);
	cq_ranges_deinit(&blocking_set);
out:
	free(el);
	free(ns.rank);
	free(reached);
	free(queue);
	free(leaves);
	free(docs);
	free(calls);
	cq_graph_free(&g);
	return out;
}

/* Cycles longer than this many steps are shortened in text: the first CYCLE_HEAD ranks,
 * how many are left out, the last CYCLE_TAIL (the closing rank among them). */
#define CYCLE_LONG 16
#define CYCLE_HEAD 6
#define CYCLE_TAIL 3

void cq_job_print_cycle(FILE *f, const json_t *cycle)
{
	size_t n = json_array_size(cycle);
	for (size_t i = 0; i < n; i++) {
		if (n > CYCLE_LONG && i == CYCLE_HEAD) {
			fprintf(f, " -> ... %zu more ...", n - CYCLE_HEAD - CYCLE_TAIL);
			i = n - CYCLE_TAIL;
		}
		fprintf(f, "%s%lld", i ? " -> " : " ", (long long)json_integer_value(json_array_get(cycle, i)));
	}
}

/* @p dst gains the ids of @p a that are not in @p b: one walk over both lists of ranges. */
static void ranges_minus(struct cq_ranges *dst, const struct cq_ranges *a, const struct cq_ranges *b)
{
	size_t j = 0;
	for (size_t i = 0; i < a->n; i++) {
		uint64_t lo = a->r[i].lo, hi = a->r[i].hi;
		while (j < b->n && b->r[j].hi < lo)
			j++;
		for (size_t k = j; k < b->n && b->r[k].lo <= hi && lo <= hi; k++) {
			if (b->r[k].lo > lo)
				add_range(dst, lo, b->r[k].lo - 1);
			if (b->r[k].hi >= hi)
				lo = hi + 1; /* the rest covered */
			else
				lo = b->r[k].hi + 1;
		}
		if (lo <= hi)
			add_range(dst, lo, hi);
	}
}

/* "rank 2 was sampled once" / "ranks 2,5 were sampled once" (@p one, @p many: the verb
 * and what follows, as said of one rank and of several) into @p f. */
static void say_ranks(FILE *f, const struct cq_ranges *s, const char *one, const char *many)
{
	char *rt = ranks_text(s);
	fprintf(f, "%s %s", rt ? rt : "?", cq_ranges_count(s) > 1 ? many : one);
	free(rt);
}

/* A low-high of counts, "3" when they are one, into @p f. */
static void say_span(FILE *f, json_int_t lo, json_int_t hi)
{
	fprintf(f, lo == hi ? "%lld" : "%lld-%lld", (long long)lo, (long long)hi);
}

void cq_job_verdict_samples(json_t *verdict, const json_t *progress)
{
	if (!verdict || !json_array_size(progress))
		return;
	const char *kind = str(verdict, "kind") ?: "none";
	/* compared: ranks with a result of two samples or more; once: ranks given once */
	struct cq_ranges stuck, moving, concerned, compared, once, moved_concerned, stuck_concerned, not_compared,
		once_nc, unsampled;
	struct cq_ranges *all[] = {&stuck, &moving, &concerned, &compared, &once, &moved_concerned, &stuck_concerned,
				   &not_compared, &once_nc, &unsampled};
	for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++)
		cq_ranges_init(all[k]);
	/* the ranks the verdict is about: those that wait and those the waits end on */
	cq_error_destroy(cq_ranges_parse(str(verdict, "waiting") ?: "", &concerned));
	cq_error_destroy(cq_ranges_parse(str(verdict, "blocking_ranks") ?: "", &concerned));
	const json_t *p;
	size_t i;
	/* the samples and span said are those of the ranks the verdict is about */
	json_int_t nlo = -1, nhi = -1, splo = -1, sphi = -1;
	bool span_all = true;
	json_array_foreach(progress, i, p) {
		const json_t *t = json_object_get(p, "task");
		const char *state = str(p, "state") ?: "";
		json_int_t ns = json_integer_value(json_object_get(p, "samples"));
		if (!json_is_integer(t) || json_integer_value(t) < 0 || (uint64_t)json_integer_value(t) >= CQ_TASK_MAX)
			continue;
		uint64_t r = (uint64_t)json_integer_value(t);
		bool two = ns >= 2 && (!strcmp(state, "stuck") || !strcmp(state, "progressing"));
		if (!two) {
			add_range(&once, r, r);
			continue;
		}
		add_range(&compared, r, r);
		if (!strcmp(state, "stuck"))
			add_range(&stuck, r, r);
		else
			add_range(&moving, r, r);
		if (!cq_ranges_has(&concerned, r))
			continue;
		if (!strcmp(state, "progressing"))
			add_range(&moved_concerned, r, r);
		else
			add_range(&stuck_concerned, r, r);
		nlo = nlo < 0 || ns < nlo ? ns : nlo;
		nhi = ns > nhi ? ns : nhi;
		const json_t *sp = json_object_get(p, "span_ms");
		if (json_is_integer(sp) && json_integer_value(sp) >= 0) {
			splo = splo < 0 || json_integer_value(sp) < splo ? json_integer_value(sp) : splo;
			sphi = json_integer_value(sp) > sphi ? json_integer_value(sp) : sphi;
		} else {
			span_all = false;
		}
	}
	/* a rank of the verdict with fewer than two samples was not compared: sampled once,
	 * or with no stacks in any sample (not analyzed, or not a coreq-bt/2 walk) */
	ranges_minus(&not_compared, &concerned, &compared);
	cq_error_destroy(cq_ranges_intersect(&once_nc, &not_compared, &once));
	ranges_minus(&unsampled, &not_compared, &once_nc);
	char *st = cq_ranges_format(&stuck), *mv = cq_ranges_format(&moving), *mc = cq_ranges_format(&moved_concerned),
	     *nc = cq_ranges_format(&not_compared);
	bool confirmed = strcmp(kind, "none") && cq_ranges_count(&concerned) && !cq_ranges_count(&moved_concerned) &&
			 !cq_ranges_count(&not_compared);
	json_object_set_new(verdict, "samples", json_pack("{s:s, s:s, s:s, s:b}", "stuck", st ?: "", "progressing",
							  mv ?: "", "not_compared", nc ?: "", "confirmed", confirmed));
	char *text = NULL;
	size_t tlen = 0;
	FILE *f = strcmp(kind, "none") && cq_ranges_count(&concerned) ? open_memstream(&text, &tlen) : NULL;
	if (f) {
		fputs(str(verdict, "text") ?: "", f);
		if (cq_ranges_count(&moved_concerned)) {
			fputs("; but ", f);
			say_ranks(f, &moved_concerned, "moved", "moved");
			fputs(" between the samples: a slow phase rather than a hang (sample again, longer apart)", f);
		} else if (confirmed) {
			fputs(nlo == nhi ? "; the same in all " : "; the same in every sample (", f);
			say_span(f, nlo, nhi);
			fputs(nlo == nhi ? " samples" : " per rank", f);
			if (span_all && splo >= 0) {
				fputs(" over ", f);
				say_span(f, splo, sphi);
				fputs(" ms", f);
			}
			fputs(nlo == nhi ? ": a hang" : "): a hang", f);
		} else if (cq_ranges_count(&stuck_concerned)) {
			fputs("; ", f);
			say_ranks(f, &stuck_concerned, "was", "were");
			fputs(" the same in every sample, but", f);
		} else {
			fputs(";", f);
		}
		/* who was not compared, by name: no hang is said without them */
		if (cq_ranges_count(&not_compared)) {
			const char *sep = cq_ranges_count(&moved_concerned) ? "; " : " ";
			if (cq_ranges_count(&once_nc)) {
				fputs(sep, f);
				say_ranks(f, &once_nc, "was sampled once", "were sampled once");
				sep = " and ";
			}
			if (cq_ranges_count(&unsampled)) {
				fputs(sep, f);
				say_ranks(f, &unsampled, "has no stacks in the samples", "have no stacks in the samples");
			}
			fputs(cq_ranges_count(&moved_concerned) ? ": not compared" : ": not compared, so not known to be a hang",
			      f);
		}
		fclose(f);
	}
	if (text)
		json_object_set_new(verdict, "text", cq_json_str(text));
	free(text);
	free(st);
	free(mv);
	free(mc);
	free(nc);
	for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++)
		cq_ranges_deinit(all[k]);
}
