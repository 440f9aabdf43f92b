/* SPDX-License-Identifier: MIT */
/* The job view (job.h): match operations across ranks, build the wait-for graph, find
 * cycles (Tarjan's strongly connected components), wildcard receives no sender can
 * satisfy, unmatched operations and ranks without MPI state. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"

enum { SEND, RECV, UNEXPECTED };
#define ANY (-1)

struct comm {
	json_int_t id;
	json_t *group; /* world ranks (borrowed) */
	const char *name;
};

struct op {
	int rank, cls, comm, peer, tag;
	json_int_t length;
	bool pending;
	int match; /* index of the matching op, or -1 */
};

struct job {
	json_t *ranks;    /* the documents */
	int *rank_of;     /* world rank of each document (-1: unknown or failed) */
	size_t nranks;
	struct comm *comms;
	size_t ncomms;
	struct op *ops;
	size_t nops;
	int maxrank;
};

static int intval(json_t *v, int dflt)
{
	return json_is_integer(v) ? (int)json_integer_value(v) : dflt;
}

static int comm_index(struct job *j, json_t *c)
{
	json_int_t id = json_integer_value(json_object_get(c, "id"));
	json_t *group = json_object_get(c, "group");
	for (size_t i = 0; i < j->ncomms; i++)
		if (j->comms[i].id == id && json_equal(j->comms[i].group, group))
			return (int)i;
	struct comm *n = realloc(j->comms, (j->ncomms + 1) * sizeof(*n));
	if (!n)
		return -1;
	j->comms = n;
	n[j->ncomms] = (struct comm){id, group, json_string_value(json_object_get(c, "name"))};
	return (int)j->ncomms++;
}

static void add_op(struct job *j, int rank, int cls, int comm, json_t *op)
{
	struct op *n = realloc(j->ops, (j->nops + 1) * sizeof(*n));
	if (!n)
		return;
	j->ops = n;
	json_t *tag = json_object_get(op, "tag");
	n[j->nops++] = (struct op){
		.rank = rank, .cls = cls, .comm = comm,
		.peer = intval(json_object_get(op, "peer_global"), ANY),
		.tag = json_is_integer(tag) ? (int)json_integer_value(tag) : ANY,
		.length = json_integer_value(json_object_get(op, "length")),
		.pending = !strcmp(json_string_value(json_object_get(op, "status")) ?: "", "pending"),
		.match = -1};
}

/* A receive @p r accepts a message @p s (a send, or an unexpected message seen from s->rank). */
static bool accepts(const struct op *r, int from, int tag, int comm)
{
	return r->comm == comm && (r->peer == ANY || r->peer == from) && (r->tag == ANY || r->tag == tag);
}

static void collect(struct job *j)
{
	json_t *doc;
	size_t i;
	j->rank_of = calloc(json_array_size(j->ranks) + 1, sizeof(int));
	j->maxrank = -1;
	json_array_foreach(j->ranks, i, doc) {
		int rank = json_object_get(doc, "error") ? -1 : intval(json_object_get(doc, "rank"), -1);
		j->rank_of[i] = rank;
		if (rank > j->maxrank)
			j->maxrank = rank;
		if (rank < 0)
			continue;
		json_t *c;
		size_t k;
		json_array_foreach(json_object_get(doc, "communicators"), k, c) {
			int ci = comm_index(j, c);
			if (ci < 0)
				continue;
			static const char *const qn[] = {"sends", "receives", "unexpected"};
			for (int cls = 0; cls < 3; cls++) {
				json_t *q = json_object_get(json_object_get(c, "queues"), qn[cls]), *op;
				size_t m;
				json_array_foreach(json_object_get(q, "operations"), m, op)
					add_op(j, rank, cls, ci, op);
			}
		}
	}
	j->nranks = json_array_size(j->ranks);
}

/* Pair pending sends with the receives posted for them, in queue (matching) order. */
static void match(struct job *j)
{
	for (size_t s = 0; s < j->nops; s++) {
		struct op *so = &j->ops[s];
		if (so->cls != SEND)
			continue;
		for (size_t r = 0; r < j->nops; r++) {
			struct op *ro = &j->ops[r];
			if (ro->cls == RECV && ro->match < 0 && ro->rank == so->peer &&
			    accepts(ro, so->rank, so->tag, so->comm)) {
				so->match = (int)r;
				ro->match = (int)s;
				break;
			}
		}
	}
}

static const char *comm_name(const struct job *j, int c)
{
	const char *n = j->comms[c].name;
	return n && *n ? n : "(unnamed)";
}

static json_t *op_ref(const struct job *j, const struct op *o)
{
	static const char *const kinds[] = {"send", "receive", "unexpected"};
	json_t *r = json_pack("{s:s, s:i, s:s, s:I}", "kind", kinds[o->cls], "rank", o->rank,
			      "comm", comm_name(j, o->comm), "length", o->length);
	json_object_set_new(r, "peer", o->peer == ANY ? json_string("any") : json_integer(o->peer));
	json_object_set_new(r, "tag", o->tag == ANY ? json_string("any") : json_integer(o->tag));
	return r;
}

/* Whether an unexpected message at the receiver satisfies receive @p r. */
static bool arrived(const struct job *j, const struct op *r)
{
	for (size_t u = 0; u < j->nops; u++) {
		const struct op *uo = &j->ops[u];
		if (uo->cls == UNEXPECTED && uo->rank == r->rank && accepts(r, uo->peer, uo->tag, uo->comm))
			return true;
	}
	return false;
}

/* Whether send @p s sits in its receiver's unexpected queue: delivered, not received. */
static bool delivered(const struct job *j, const struct op *s)
{
	for (size_t u = 0; u < j->nops; u++) {
		const struct op *uo = &j->ops[u];
		if (uo->cls == UNEXPECTED && uo->rank == s->peer && uo->peer == s->rank &&
		    uo->comm == s->comm && uo->tag == s->tag)
			return true;
	}
	return false;
}

/* ---- cycles: Tarjan over the definite wait-for edges ---- */

struct graph {
	int n;
	char *adj; /* n*n */
	int *index, *low, *stack, *comp;
	bool *on;
	int sp, counter, ncomp;
};

static void strong(struct graph *g, int v)
{
	g->index[v] = g->low[v] = g->counter++;
	g->stack[g->sp++] = v;
	g->on[v] = true;
	for (int w = 0; w < g->n; w++) {
		if (!g->adj[v * g->n + w])
			continue;
		if (g->index[w] < 0) {
			strong(g, w);
			if (g->low[w] < g->low[v])
				g->low[v] = g->low[w];
		} else if (g->on[w] && g->index[w] < g->low[v]) {
			g->low[v] = g->index[w];
		}
	}
	if (g->low[v] == g->index[v]) {
		int w;
		do {
			w = g->stack[--g->sp];
			g->on[w] = false;
			g->comp[w] = g->ncomp;
		} while (w != v);
		g->ncomp++;
	}
}

/* One cycle through @p start inside its component: depth-first, shortest not needed. */
static bool cycle_from(const struct graph *g, int start, int v, int *path, int depth, bool *seen)
{
	path[depth] = v;
	for (int w = 0; w < g->n; w++) {
		if (!g->adj[v * g->n + w] || g->comp[w] != g->comp[start])
			continue;
		if (w == start) {
			path[depth + 1] = start;
			return true;
		}
		if (!seen[w]) {
			seen[w] = true;
			if (cycle_from(g, start, w, path, depth + 1, seen))
				return true;
		}
	}
	return false;
}

static json_t *find_cycles(struct job *j, json_t *edges)
{
	json_t *cycles = json_array();
	int n = j->maxrank + 1;
	if (n <= 0 || n > 100000)
		return cycles;
	struct graph g = {.n = n, .adj = calloc((size_t)n * n, 1), .index = malloc(n * sizeof(int)),
			  .low = malloc(n * sizeof(int)), .stack = malloc(n * sizeof(int)),
			  .comp = malloc(n * sizeof(int)), .on = calloc(n, sizeof(bool))};
	if (!g.adj || !g.index || !g.low || !g.stack || !g.comp || !g.on)
		goto out;
	json_t *e;
	size_t i;
	json_array_foreach(edges, i, e) {
		json_t *to = json_object_get(e, "to");
		if (json_is_true(json_object_get(e, "waits")) && !json_is_true(json_object_get(e, "wildcard")) &&
		    json_is_integer(to) && json_integer_value(to) < n)
			g.adj[intval(json_object_get(e, "from"), 0) * n + json_integer_value(to)] = 1;
	}
	for (int v = 0; v < n; v++)
		g.index[v] = -1;
	for (int v = 0; v < n; v++)
		if (g.index[v] < 0)
			strong(&g, v);
	for (int c = 0; c < g.ncomp; c++) {
		int first = -1, size = 0;
		for (int v = 0; v < n; v++)
			if (g.comp[v] == c) {
				if (first < 0)
					first = v;
				size++;
			}
		if (first < 0 || (size == 1 && !g.adj[first * n + first]))
			continue;
		int *path = calloc((size_t)n + 1, sizeof(int));
		bool *seen = calloc((size_t)n, sizeof(bool));
		if (path && seen && cycle_from(&g, first, first, path, 0, seen)) {
			json_t *ranks = json_array(), *members = json_array();
			int k = 0;
			do
				json_array_append_new(ranks, json_integer(path[k]));
			while (path[k++] != first || k == 1);
			for (int v = 0; v < n; v++)
				if (g.comp[v] == c)
					json_array_append_new(members, json_integer(v));
			json_array_append_new(cycles, json_pack("{s:o, s:o}", "cycle", ranks, "ranks", members));
		}
		free(path);
		free(seen);
	}
out:
	free(g.adj);
	free(g.index);
	free(g.low);
	free(g.stack);
	free(g.comp);
	free(g.on);
	return cycles;
}

json_t *cq_mqd_job(json_t *ranks)
{
	struct job j = {.ranks = ranks};
	collect(&j);
	match(&j);
	json_t *edges = json_array(), *unmatched_s = json_array(), *unmatched_r = json_array();
	json_t *matched = json_array(), *stalls = json_array();
	bool *blocked = calloc((size_t)j.maxrank + 2, sizeof(bool));
	for (size_t i = 0; i < j.nops; i++) {
		struct op *o = &j.ops[i];
		if (o->cls == UNEXPECTED || !o->pending)
			continue;
		if (o->match >= 0) {
			if (o->cls == SEND)
				json_array_append_new(matched, json_pack("{s:o, s:o}", "send", op_ref(&j, o),
									 "receive", op_ref(&j, &j.ops[o->match])));
			continue;
		}
		if (o->cls == RECV && arrived(&j, o))
			continue; /* the message is there: not waiting on its sender */
		blocked[o->rank] = true;
		json_t *ref = op_ref(&j, o);
		/* the message is at the receiver, which posted no receive taking it */
		if (o->cls == SEND && delivered(&j, o))
			json_object_set_new(ref, "arrived", json_true());
		json_array_append_new(o->cls == SEND ? unmatched_s : unmatched_r, ref);
		if (o->peer != ANY) {
			json_t *e = json_pack("{s:i, s:i, s:b, s:b, s:o}", "from", o->rank, "to", o->peer,
					      "waits", 1, "wildcard", 0, "op", op_ref(&j, o));
			json_array_append_new(edges, e);
			continue;
		}
		/* a wildcard receive waits for any other member of the group */
		json_t *m;
		size_t k;
		json_array_foreach(j.comms[o->comm].group, k, m) {
			int to = intval(m, -1);
			if (to >= 0 && to != o->rank)
				json_array_append_new(edges, json_pack("{s:i, s:i, s:b, s:b, s:o}", "from", o->rank,
								       "to", to, "waits", 1, "wildcard", 1,
								       "op", op_ref(&j, o)));
		}
	}
	/* ranks with no MPI operation at all, and documents that failed */
	json_t *no_state = json_array(), *failed = json_array(), *doc;
	size_t i;
	bool *has_ops = calloc((size_t)j.maxrank + 2, sizeof(bool));
	for (size_t k = 0; k < j.nops; k++)
		has_ops[j.ops[k].rank] = true;
	json_array_foreach(ranks, i, doc) {
		int r = j.rank_of[i];
		if (r < 0)
			json_array_append_new(failed, json_pack("{s:s?, s:s?}", "core", json_string_value(json_object_get(doc, "core")),
								  "error", json_string_value(json_object_get(doc, "error")) ?: "the rank in MPI_COMM_WORLD is unknown"));
		else if (!has_ops[r])
			json_array_append_new(no_state, json_integer(r));
	}
	/* wildcard receives whose every possible sender is itself waiting or idle in MPI */
	for (size_t k = 0; k < j.nops; k++) {
		struct op *o = &j.ops[k];
		if (o->cls != RECV || !o->pending || o->match >= 0 || o->peer != ANY || arrived(&j, o))
			continue;
		json_t *m, *who = json_array();
		size_t x;
		bool all = true;
		json_array_foreach(j.comms[o->comm].group, x, m) {
			int to = intval(m, -1);
			if (to < 0 || to == o->rank)
				continue;
			json_array_append_new(who, json_integer(to));
			if (to <= j.maxrank && !blocked[to] && has_ops[to])
				all = false;
		}
		if (all)
			json_array_append_new(stalls, json_pack("{s:o, s:o, s:s}", "receive", op_ref(&j, o), "senders", who,
								"why", "every other member of the communicator is itself waiting or has no pending MPI operation"));
		else
			json_decref(who);
	}
	json_t *cycles = find_cycles(&j, edges);
	json_t *blocked_ranks = json_array();
	for (int r = 0; r <= j.maxrank; r++)
		if (blocked[r])
			json_array_append_new(blocked_ranks, json_integer(r));
	json_t *comms = json_array();
	for (size_t c = 0; c < j.ncomms; c++)
		json_array_append_new(comms, json_pack("{s:I, s:s, s:O}", "id", j.comms[c].id,
						       "name", comm_name(&j, (int)c), "group", j.comms[c].group));
	json_t *out = json_pack("{s:s, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
				"schema", "coreq-mqd-job/1", "nranks", (json_int_t)j.nranks,
				"deadlocks", cycles, "wildcard_stalls", stalls,
				"unmatched_sends", unmatched_s, "unmatched_receives", unmatched_r,
				"matched", matched, "blocked", blocked_ranks, "no_mpi_state", no_state,
				"failed", failed, "communicators", comms, "wait_for", edges);
	json_object_set(out, "ranks", ranks);
	free(blocked);
	free(has_ops);
	free(j.rank_of);
	free(j.comms);
	free(j.ops);
	return out;
}

/* @p s as the inside of a DOT string. */
static void dot_string(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if ((unsigned char)*s >= 0x20)
			fputc(*s, f);
	}
}

char *cq_mqd_job_dot(json_t *job)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	fprintf(f, "digraph waitfor {\n  rankdir=LR;\n  node [shape=box, fontname=\"monospace\"];\n");
	json_t *in_cycle = json_object(), *c, *r;
	size_t i, k;
	json_array_foreach(json_object_get(job, "deadlocks"), i, c)
		json_array_foreach(json_object_get(c, "ranks"), k, r) {
			char key[16];
			snprintf(key, sizeof(key), "%lld", (long long)json_integer_value(r));
			json_object_set_new(in_cycle, key, json_true());
		}
	json_t *doc;
	json_array_foreach(json_object_get(job, "ranks"), i, doc) {
		json_t *rank = json_object_get(doc, "rank");
		if (!json_is_integer(rank))
			continue;
		char key[16];
		snprintf(key, sizeof(key), "%lld", (long long)json_integer_value(rank));
		bool idle = false, blocked = false;
		json_array_foreach(json_object_get(job, "no_mpi_state"), k, r)
			idle |= json_integer_value(r) == json_integer_value(rank);
		json_array_foreach(json_object_get(job, "blocked"), k, r)
			blocked |= json_integer_value(r) == json_integer_value(rank);
		const char *color = json_object_get(in_cycle, key) ? "red" : blocked ? "orange" :
				    idle ? "gray" : "black";
		fprintf(f, "  r%s [label=\"rank %s\\npid %lld%s\", color=%s];\n", key, key,
			(long long)json_integer_value(json_object_get(doc, "pid")),
			idle ? "\\nno MPI operation" : "", color);
	}
	json_t *e;
	json_array_foreach(json_object_get(job, "wait_for"), i, e) {
		json_t *op = json_object_get(e, "op"), *tag = json_object_get(op, "tag");
		char t[32];
		if (json_is_integer(tag))
			snprintf(t, sizeof(t), "%lld", (long long)json_integer_value(tag));
		else
			snprintf(t, sizeof(t), "any");
		fprintf(f, "  r%lld -> r%lld [label=\"%s tag %s\\n",
			(long long)json_integer_value(json_object_get(e, "from")),
			(long long)json_integer_value(json_object_get(e, "to")),
			json_string_value(json_object_get(op, "kind")), t);
		dot_string(f, json_string_value(json_object_get(op, "comm")));
		fprintf(f, "\"%s];\n", json_is_true(json_object_get(e, "wildcard")) ? ", style=dashed" : "");
	}
	fprintf(f, "}\n");
	fclose(f);
	json_decref(in_cycle);
	return buf;
}
