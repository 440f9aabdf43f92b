/* SPDX-License-Identifier: MIT */
/* The job view (waitfor.h): match operations across ranks, build the wait-for graph, find
 * cycles (Tarjan's strongly connected components), wildcard receives no sender can
 * satisfy, unmatched operations and ranks without MPI state. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "graph.h"
#include "mpicall.h"
#include "ranges.h"
#include "tree.h"
#include "verdict.h"
#include "waitfor.h"

enum { SEND, RECV, UNEXPECTED };
#define ANY (-1)

struct comm {
	json_int_t id;
	json_t *group; /* world ranks (borrowed) */
	const char *name;
	char *label;   /* the name and its members, when another communicator has the name */
};

/* What one rank's threads are inside, from its stacks (mpicall.h): the union of what its
 * blocking calls wait on. Without stacks in the document nothing is known, and every
 * pending operation is taken as waited on (and said so). */
struct calls {
	bool known;                /* the document has "mpi_calls" */
	bool send, recv, requests; /* a thread waits on its sends, receives, every request */
	const char *collective;    /* a thread is in this collective (C name), or NULL */
	int collective_comm;       /* its communicator (index into comms), or -1 */
	bool comm_assumed;         /* that communicator is a guess */
	int internal_comm;         /* the communicator of its collective traffic: -1 none, -2 several */
	bool internal_listed;      /* its DLL lists the library's own operations (coreq's) */
	int internal_pending;      /* how many of them are pending */
	int ipeer[8], nipeer;      /* the world ranks its pending ones are with (the first 8) */
	const char *not_running;   /* why it is taken as not running (an unseen message), or NULL */
	char nr_why[240];          /* not_running's text */
	const char *comm_source;   /* how that communicator was chosen */
	bool comm_dropped;         /* MPI_COMM_WORLD was guessed, and dropped as impossible */
	char comm_why[200];        /* comm_source when made here */
	bool stopped;              /* its process was stopped by a signal: none of its waits is one */
	const char *died;          /* the signal its process died of (its core is a crash's), or NULL */
	bool unexpected_known;     /* every communicator it lists has its unexpected queue listed */
	json_t *list;              /* the document's mpi_calls (borrowed) */
	json_t *arg_comm;          /* the collective's "communicator", read from its argument, or NULL */
};

struct op {
	int rank, cls, comm, peer, tag;
	json_int_t length;      /* bytes, -1 unknown */
	json_int_t count;       /* elements, -1 unknown (MPICH's DLL gives counts) */
	bool pending;
	bool pending_by_stack; /* the DLL said complete, unreliably; a thread waits on it */
	bool in_flight;        /* an unexpected message coreq read in flight (mqd/inflight.h) */
	int match;             /* index of the matching op, or -1 */
};

struct job {
	json_t *ranks;    /* the documents */
	int *rank_of;     /* world rank of each document (-1: unknown, failed or refused) */
	char **why_not;   /* per document: why its rank was refused (NULL: accepted) */
	size_t nranks;
	/* The world ranks the documents give, sorted and distinct: every per-rank structure is
	 * indexed by position in this list (node()), so its size follows the documents
	 * given, never the largest rank number one of them claims. */
	int *present;
	size_t npresent;
	struct comm *comms;
	size_t ncomms;
	struct op *ops;
	size_t nops;
	json_t *problems; /* operations refused: {rank, why} */
	bool internal_seen; /* some rank's queues hold collective traffic: the job's collectives run
			     * over the PML, where a waiting rank always has a receive pending */
	struct calls *calls; /* per rank present (node()): what its threads are inside */
	struct unseen *unseen; /* sends pending for a reason one of their ranks explains */
	size_t nunseen;
};

/* A pending send both of whose ranks run inside MPI, whose message is not waiting for a
 * receive: Open MPI's shared-memory transport completes a send once the receiver has taken
 * the fragment and the sender has seen it come back, so one of the two has not run its
 * library since (stopped, or starved of CPU), and the cores cannot say which (a message in
 * flight in the receiver's shared memory is in no queue). */
enum unseen_kind {
	UNSEEN_MATCHED, /* a small one matched by the receiver's pending receive: it has not run */
	UNSEEN_ABSENT,  /* at the receiver neither as a receive nor unexpected: one of the two */
};

struct unseen {
	size_t op;
	enum unseen_kind kind;
};

/* Ranks are C ints in MPI; a document's is refused outside [0, MAX_RANK]. */
/* The size up to which every transport of Open MPI and MPICH sends eagerly (Open MPI's
 * vader 4 KiB, tcp 64 KiB; MPICH's nemesis 64 KiB): the data leaves with the send. */
#define EAGER_MAX 4096
#define MAX_RANK (1 << 30)

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* Position of world rank @p rank among the ranks present, or -1. */
static int node(const struct job *j, int rank)
{
	if (rank < 0 || !j->npresent)
		return -1;
	const int *p = bsearch(&rank, j->present, j->npresent, sizeof(int), cmp_int);
	return p ? (int)(p - j->present) : -1;
}

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
	n[j->ncomms] = (struct comm){id, group, json_string_value(json_object_get(c, "name")), NULL};
	return (int)j->ncomms++;
}

/* Whether world rank @p r is a member of communicator @p c's group (an empty or absent
 * group: unknown, so any rank is taken). */
static bool in_group(const struct job *j, int c, int r)
{
	json_t *g = j->comms[c].group, *m;
	size_t k;
	if (!json_array_size(g))
		return true;
	json_array_foreach(g, k, m)
		if (json_is_integer(m) && json_integer_value(m) == r)
			return true;
	return false;
}

static void add_op(struct job *j, int rank, int cls, int comm, json_t *op)
{
	/* the library's own traffic (a collective's): not the program's operation, but where
	 * the rank's collective runs */
	if (json_is_true(json_object_get(op, "internal"))) {
		int v = node(j, rank);
		if (j->calls && v >= 0) {
			struct calls *c = &j->calls[v];
			c->internal_comm = c->internal_comm == -1 || c->internal_comm == comm ? comm : -2;
			bool pend = !strcmp(json_string_value(json_object_get(op, "status")) ?: "", "pending");
			c->internal_pending += pend;
			json_t *pg = json_object_get(op, "peer_global");
			bool dup = false;
			for (int k = 0; k < c->nipeer; k++)
				dup |= json_is_integer(pg) && c->ipeer[k] == json_integer_value(pg);
			if (pend && json_is_integer(pg) && json_integer_value(pg) >= 0 && json_integer_value(pg) <= MAX_RANK &&
			    !dup && c->nipeer < 8)
				c->ipeer[c->nipeer++] = (int)json_integer_value(pg);
			j->internal_seen = true;
		}
		return;
	}
	/* The peer must be MPI_ANY_SOURCE (-1) or a member of the communicator: a document
	 * (or the core behind it) is input like any other, and an out-of-range peer would
	 * otherwise index per-rank structures. Such an operation is reported, not used. */
	json_t *pv = json_object_get(op, "peer_global");
	json_int_t peer = json_is_integer(pv) ? json_integer_value(pv) : ANY;
	if (peer != ANY && (peer < 0 || peer > MAX_RANK || !in_group(j, comm, (int)peer))) {
		static const char *const kinds[] = {"send", "receive", "unexpected message"};
		char why[160];
		snprintf(why, sizeof(why), "%s with peer %lld, which is not a member of %s: not used", kinds[cls],
			 (long long)peer, j->comms[comm].name && *j->comms[comm].name ? j->comms[comm].name : "its communicator");
		json_array_append_new(j->problems, json_pack("{s:i, s:o}", "rank", rank, "why", cq_json_str(why)));
		return;
	}
	struct op *n = realloc(j->ops, (j->nops + 1) * sizeof(*n));
	if (!n)
		return;
	j->ops = n;
	json_t *tag = json_object_get(op, "tag");
	bool pending = !strcmp(json_string_value(json_object_get(op, "status")) ?: "", "pending");
	/* Open MPI 4.1's DLL reads a request a thread waits on in MPI_Wait* as complete (the
	 * document says its status is unreliable): the stack decides. A request that completed
	 * leaves the PML's queues, so one still listed while its rank waits is pending. */
	int v = node(j, rank);
	bool by_stack = false;
	if (!pending && json_is_false(json_object_get(op, "status_reliable")) && cls != UNEXPECTED && j->calls &&
	    v >= 0 && j->calls[v].known &&
	    (j->calls[v].requests || (cls == SEND ? j->calls[v].send : j->calls[v].recv)))
		pending = by_stack = true;
	n[j->nops++] = (struct op){
		.rank = rank, .cls = cls, .comm = comm,
		.peer = (int)peer,
		.tag = json_is_integer(tag) ? (int)json_integer_value(tag) : ANY,
		/* -1: not known (an operation known from the stack only) */
		.length = json_is_integer(json_object_get(op, "length")) ? json_integer_value(json_object_get(op, "length")) : -1,
		.count = json_is_integer(json_object_get(op, "count")) ? json_integer_value(json_object_get(op, "count")) : -1,
		.pending = pending, .pending_by_stack = by_stack,
		.in_flight = json_is_true(json_object_get(op, "in_flight")),
		.match = -1};
}

/* A receive @p r accepts a message @p s (a send, or an unexpected message seen from s->rank). */
static bool accepts(const struct op *r, int from, int tag, int comm)
{
	return r->comm == comm && (r->peer == ANY || r->peer == from) && (r->tag == ANY || r->tag == tag);
}

/* Whether a document's MPI_COMM_WORLD group (when it lists one) holds its own rank. */
static bool in_world(json_t *doc, json_int_t r)
{
	json_t *c, *m;
	size_t k, x;
	json_array_foreach(json_object_get(doc, "communicators"), k, c) {
		json_t *g = json_object_get(c, "group");
		if (strcmp(json_string_value(json_object_get(c, "name")) ?: "", "MPI_COMM_WORLD") || !json_array_size(g))
			continue;
		json_array_foreach(g, x, m)
			if (json_is_integer(m) && json_integer_value(m) == r)
				return true;
		return false;
	}
	return true;
}

/* The calls of the rank at node @p v from its document's "mpi_calls" (made from its stacks
 * by cq_mpi_calls). */
static void read_calls(struct job *j, int v, json_t *doc)
{
	json_t *list = json_object_get(doc, "mpi_calls"), *c;
	size_t k;
	if (!j->calls || !json_is_array(list))
		return;
	struct calls *rc = &j->calls[v];
	rc->known = true;
	rc->list = list;
	rc->internal_listed = json_is_true(json_object_get(doc, "internal_ops_listed"));
	rc->stopped = !strcmp(json_string_value(json_object_get(json_object_get(json_object_get(doc, "stacks"), "process"),
							    "state")) ?: "", "stopped");
	json_array_foreach(list, k, c) {
		const char *call = json_string_value(json_object_get(c, "call"));
		switch (cq_mpi_call_waits(call)) {
		case CQ_MPI_WAITS_SEND: rc->send = true; break;
		case CQ_MPI_WAITS_RECV: rc->recv = true; break;
		case CQ_MPI_WAITS_BOTH: rc->send = rc->recv = true; break;
		case CQ_MPI_WAITS_REQUESTS: rc->requests = true; break;
		case CQ_MPI_WAITS_COLLECTIVE:
			if (!rc->collective) {
				rc->collective = call;
				rc->arg_comm = json_object_get(c, "communicator");
			}
			break;
		default: break;
		}
	}
}

/* MPI_COMM_WORLD for a document without communicators whose rank and job size came from
 * the environment: the ranks given below that size (never a group of the size claimed: a
 * document may claim 2^30), one group per size shared by the documents, and no queues. */
static void world_from_environment(struct job *j, json_t *doc, json_t *groups, json_int_t size)
{
	char key[32];
	snprintf(key, sizeof(key), "%lld", (long long)size);
	json_t *g = json_object_get(groups, key);
	if (!g) {
		g = json_array();
		for (size_t k = 0; k < j->npresent; k++)
			if (j->present[k] < size)
				json_array_append_new(g, json_integer(j->present[k]));
		json_object_set_new(groups, key, g);
	}
	json_t *none = json_pack("{s:s, s:s}", "state", "no_information", "why", "the message queues could not be read");
	/* what is known of its queues all the same: the operation each thread is blocked in,
	 * where the call's parameters were read (its peer and tag, from libmpi's DWARF) */
	json_t *stack[2] = {NULL, NULL}, *call, *items = json_array(), *req;
	size_t k, m;
	/* the blocking calls, and the requests an MPI_Waitall waits on (MPICH: its request
	 * pointers), each an item {waits, peer, tag, communicator} */
	json_array_foreach(json_object_get(doc, "mpi_calls"), k, call) {
		json_array_append(items, call);
		json_array_foreach(json_object_get(call, "requests"), m, req)
			json_array_append_new(items, json_pack("{s:O, s:O, s:O, s:O?}", "waits", json_object_get(req, "kind"),
							       "peer", json_object_get(req, "peer"), "tag",
							       json_object_get(req, "tag"), "communicator",
							       json_object_get(req, "communicator")));
	}
	json_array_foreach(items, k, call) {
		const char *w = json_string_value(json_object_get(call, "waits")) ?: "";
		const char *cn = json_string_value(json_object_get(json_object_get(call, "communicator"), "name")) ?: "";
		/* peer: a rank, or "any" (MPI_ANY_SOURCE); tag likewise */
		json_t *peer = json_object_get(call, "peer"), *tag = json_object_get(call, "tag");
		int cls = !strcmp(w, "send") ? 0 : !strcmp(w, "receive") ? 1 : -1;
		bool any = json_is_string(peer) && !strcmp(json_string_value(peer), "any") && cls == 1;
		bool anytag = json_is_string(tag) && !strcmp(json_string_value(tag), "any") && cls == 1;
		if (cls < 0 || strcmp(cn, "MPI_COMM_WORLD") ||
		    (!any && (!json_is_integer(peer) || json_integer_value(peer) < 0 || json_integer_value(peer) >= size)) ||
		    (!anytag && (!json_is_integer(tag) || json_integer_value(tag) < 0)))
			continue;
		if (!stack[cls])
			stack[cls] = json_pack("{s:s, s:s, s:[]}", "state", "from_stack", "why",
					       "the message queues could not be read: the operation a thread is blocked in, "
					       "from its call's parameters", "operations");
		json_array_append_new(json_object_get(stack[cls], "operations"),
				      json_pack("{s:s, s:O, s:O, s:O, s:n, s:s}", "status", "pending", "peer", peer, "peer_global",
						peer, "tag", tag, "length", "from", "stack: the call's parameters"));
	}
	json_decref(items);
	/* the messages in flight to it on MPI_COMM_WORLD (mqd/inflight.h), whose ranks are
	 * world ranks; the library's own (a collective's) tell nothing without its queues */
	json_t *flight = NULL, *msg;
	json_array_foreach(json_object_get(json_object_get(doc, "in_flight"), "messages"), k, msg) {
		json_t *src = json_object_get(msg, "source"), *tag = json_object_get(msg, "tag");
		if (strcmp(json_string_value(json_object_get(msg, "communicator")) ?: "", "MPI_COMM_WORLD") ||
		    json_is_true(json_object_get(msg, "internal")) || !json_is_integer(src) || json_integer_value(src) < 0 ||
		    json_integer_value(src) >= size || !json_is_integer(tag))
			continue;
		if (!flight)
			flight = json_pack("{s:s, s:s, s:[]}", "state", "in_flight", "why",
					   "the message queues could not be read: the messages in flight in the rank's shared "
					   "memory", "operations");
		json_array_append_new(json_object_get(flight, "operations"),
				      json_pack("{s:s, s:O, s:O, s:O, s:O, s:b, s:s}", "status", "pending", "peer", src,
						"peer_global", src, "tag", tag, "length", json_object_get(msg, "length"),
						"in_flight", 1, "from", "the core: in flight in the rank's shared memory"));
	}
	json_t *c = json_pack("{s:i, s:i, s:s, s:I, s:O, s:O, s:s, s:{s:O, s:O, s:O}}", "index", 0, "id", -1, "name",
			      "MPI_COMM_WORLD", "size", size, "local_rank", json_object_get(doc, "rank"), "group", g,
			      "from", "the launcher's environment: the members are the ranks given", "queues", "sends",
			      stack[0] ? stack[0] : none, "receives", stack[1] ? stack[1] : none, "unexpected",
			      flight ? flight : none);
	json_decref(flight);
	json_decref(none);
	json_decref(stack[0]);
	json_decref(stack[1]);
	if (c) {
		json_object_set_new(doc, "communicators", json_pack("[o]", c));
		json_object_set_new(doc, "communicators_assumed", json_true());
	}
}

/* Which ranks died, from their cores' "crash" (a core the kernel wrote for a fatal signal).
 * A fault or a signal the process sent itself (abort) is a death. A signal another process
 * sent is one only where some rank of the job is alive (its core taken live: gcore, a
 * snapshot): when every rank's core comes from such a kill, that kill is how the job's cores
 * were taken (`kill -ABRT` of a hung job's ranks, a launcher's timeout), not news. */
static void mark_dead(struct job *j)
{
	json_t *doc;
	size_t i;
	bool alive = false;
	if (!j->calls)
		return;
	json_array_foreach(j->ranks, i, doc)
		if (j->rank_of[i] >= 0 && json_is_object(json_object_get(doc, "stacks")) &&
		    !json_is_object(json_object_get(doc, "crash")))
			alive = true;
	json_array_foreach(j->ranks, i, doc) {
		json_t *crash = json_object_get(doc, "crash");
		int v = node(j, j->rank_of[i]);
		if (v < 0 || !json_is_object(crash))
			continue;
		const char *origin = json_string_value(json_object_get(crash, "origin")) ?: "unknown";
		bool own = !strcmp(origin, "fault") || !strcmp(origin, "self") || !strcmp(origin, "kernel");
		if (own || alive)
			j->calls[v].died = json_string_value(json_object_get(crash, "signal")) ?: "a signal";
	}
}

static void collect(struct job *j)
{
	json_t *doc;
	size_t i, nd = json_array_size(j->ranks);
	j->nranks = nd;
	j->rank_of = calloc(nd + 1, sizeof(int));
	j->why_not = calloc(nd + 1, sizeof(char *));
	j->present = calloc(nd + 1, sizeof(int));
	j->problems = json_array();
	if (!j->rank_of || !j->why_not || !j->present)
		return;
	/* the ranks first: valid, and each given once */
	json_array_foreach(j->ranks, i, doc) {
		json_t *rv = json_object_get(doc, "rank");
		j->rank_of[i] = -1;
		if (json_object_get(doc, "error"))
			continue;
		if (!json_is_integer(rv))
			continue; /* unknown: reported as failed below */
		json_int_t r = json_integer_value(rv);
		if (r < 0 || r > MAX_RANK) {
			if (asprintf(&j->why_not[i], "rank %lld in MPI_COMM_WORLD is out of range (0..%d): the document or its core is corrupt",
				     (long long)r, MAX_RANK) < 0)
				j->why_not[i] = NULL;
			continue;
		}
		if (!in_world(doc, r)) {
			if (asprintf(&j->why_not[i], "rank %lld is not a member of the document's own MPI_COMM_WORLD group: the document or its core is corrupt",
				     (long long)r) < 0)
				j->why_not[i] = NULL;
			continue;
		}
		j->rank_of[i] = (int)r;
		j->present[j->npresent++] = (int)r;
	}
	qsort(j->present, j->npresent, sizeof(int), cmp_int);
	size_t w = 0;
	for (size_t k = 0; k < j->npresent; k++)
		if (!w || j->present[w - 1] != j->present[k])
			j->present[w++] = j->present[k];
	j->npresent = w;
	j->calls = calloc(w + 1, sizeof(*j->calls));
	for (size_t k = 0; j->calls && k < w; k++)
		j->calls[k].internal_comm = -1;
	/* a rank analyzed without its queues (coreq mqd took its rank and the job's size from
	 * the launcher's environment): MPI_COMM_WORLD of the ranks given, in its document */
	json_t *groups = json_object();
	json_array_foreach(j->ranks, i, doc) {
		json_t *ws = json_object_get(doc, "world_size");
		if (j->rank_of[i] < 0 || !json_is_integer(ws) || json_array_size(json_object_get(doc, "communicators")))
			continue;
		world_from_environment(j, doc, groups, json_integer_value(ws));
	}
	json_decref(groups);
	/* a rank given twice: the first document keeps it */
	bool *taken = calloc(w + 1, sizeof(bool));
	json_array_foreach(j->ranks, i, doc) {
		int rank = j->rank_of[i], v = node(j, rank);
		if (v < 0 || !taken)
			continue;
		if (taken[v]) {
			j->rank_of[i] = -1;
			if (asprintf(&j->why_not[i], "rank %d is given by an earlier document too: this one is not used", rank) < 0)
				j->why_not[i] = NULL;
			continue;
		}
		taken[v] = true;
		read_calls(j, v, doc);
		json_t *c;
		size_t k;
		/* whether a message sent to it and not in its unexpected queue is known not to be
		 * there (coreq's DLL lists ob1's and MPICH's; Open MPI's own lists none) */
		bool listed = json_array_size(json_object_get(doc, "communicators")) > 0;
		json_array_foreach(json_object_get(doc, "communicators"), k, c)
			listed &= !strcmp(json_string_value(json_object_get(json_object_get(json_object_get(c, "queues"),
											 "unexpected"), "state")) ?: "", "listed");
		if (j->calls)
			j->calls[v].unexpected_known = listed;
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
	free(taken);
	mark_dead(j);
}

/* Pair pending sends with the pending receives posted for them, in queue (matching) order.
 * A completed operation matches nothing: a send of the previous exchange, done and still
 * listed (its request not yet freed), says nothing about this exchange's receive, which
 * still waits for a send its peer has not posted. */
static void match(struct job *j)
{
	for (size_t s = 0; s < j->nops; s++) {
		struct op *so = &j->ops[s];
		if (so->cls != SEND || !so->pending)
			continue;
		for (size_t r = 0; r < j->nops; r++) {
			struct op *ro = &j->ops[r];
			if (ro->cls == RECV && ro->pending && ro->match < 0 && ro->rank == so->peer &&
			    accepts(ro, so->rank, so->tag, so->comm)) {
				so->match = (int)r;
				ro->match = (int)s;
				break;
			}
		}
	}
}

static const char *raw_name(const struct job *j, int c)
{
	const char *n = j->comms[c].name;
	return n && *n ? n : "(unnamed)";
}

/* How a communicator is named in findings: its name, with its members where another
 * communicator has the same name (a code's row communicators are all "MPI COMMUNICATOR 4
 * SPLIT FROM 3"). */
static const char *comm_name(const struct job *j, int c)
{
	return j->comms[c].label ? j->comms[c].label : raw_name(j, c);
}

/* The labels of communicators that share a name: one count per name, then a label for
 * each communicator whose name counts more than one. */
static void label_comms(struct job *j)
{
	json_t *count = json_object();
	for (size_t c = 0; c < j->ncomms; c++) {
		const char *n = raw_name(j, (int)c);
		json_object_set_new(count, n, json_integer(json_integer_value(json_object_get(count, n)) + 1));
	}
	for (size_t c = 0; c < j->ncomms; c++) {
		if (json_integer_value(json_object_get(count, raw_name(j, (int)c))) < 2)
			continue;
		struct cq_ranges set;
		cq_ranges_init(&set);
		json_t *m;
		size_t k;
		json_array_foreach(j->comms[c].group, k, m)
			if (json_is_integer(m) && json_integer_value(m) >= 0 && json_integer_value(m) <= MAX_RANK)
				cq_error_destroy(cq_ranges_add(&set, (uint64_t)json_integer_value(m), (uint64_t)json_integer_value(m)));
		char *r = cq_ranges_format(&set);
		if (r && asprintf(&j->comms[c].label, "%s (ranks %s)", raw_name(j, (int)c), *r ? r : "unknown") < 0)
			j->comms[c].label = NULL;
		free(r);
		cq_ranges_deinit(&set);
	}
	json_decref(count);
}

static json_t *op_ref(const struct job *j, const struct op *o)
{
	static const char *const kinds[] = {"send", "receive", "unexpected"};
	json_t *r = json_pack("{s:s, s:i, s:s, s:o}", "kind", kinds[o->cls], "rank", o->rank,
			      "comm", comm_name(j, o->comm), "length", o->length >= 0 ? json_integer(o->length) : json_null());
	if (o->count >= 0)
		json_object_set_new(r, "count", json_integer(o->count));
	json_object_set_new(r, "peer", o->peer == ANY ? cq_json_str("any") : json_integer(o->peer));
	json_object_set_new(r, "tag", o->tag == ANY ? cq_json_str("any") : json_integer(o->tag));
	if (o->pending_by_stack)
		json_object_set_new(r, "status_from", json_string("stack: the DLL's 'complete' is unreliable, and a "
								  "thread of the rank waits on it"));
	return r;
}

/* The unexpected message at the receiver that satisfies receive @p r (index into ops), or -1. */
static int arrival(const struct job *j, const struct op *r)
{
	for (size_t u = 0; u < j->nops; u++) {
		const struct op *uo = &j->ops[u];
		if (uo->cls == UNEXPECTED && uo->rank == r->rank && accepts(r, uo->peer, uo->tag, uo->comm))
			return (int)u;
	}
	return -1;
}

static bool arrived(const struct job *j, const struct op *r)
{
	return arrival(j, r) >= 0;
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

/* ---- cycles: strongly connected components of the wait-for edges (graph.h) ----
 * Nodes are the ranks present (node()). The walk is iterative: a chain of 100,000 waiting
 * ranks must not overflow the stack. */

/* A cycle through @p start inside its component, depth-first with neighbours in ascending
 * order (the first one found, not the shortest): path[0..len] with path[len] == start. */
static int cycle_from(const struct cq_graph *g, int start, int *path, bool *seen)
{
	int depth = 0;
	path[0] = start;
	g->next[start] = g->first[start];
	while (depth >= 0) {
		int v = path[depth];
		if (g->next[v] >= g->first[v + 1]) {
			depth--;
			continue;
		}
		int w = g->to[g->next[v]++];
		if (g->comp[w] != g->comp[start])
			continue;
		if (w == start) {
			path[depth + 1] = start;
			return depth + 1;
		}
		if (!seen[w] && depth + 1 < g->n) {
			seen[w] = true;
			path[++depth] = w;
			g->next[w] = g->first[w];
		}
	}
	return 0;
}

/* The cycles of the wait-for graph @p edges, one per strongly connected component: of the
 * definite edges, and with @p assumed also of the edges that rest on a guess. */
static json_t *find_cycles(struct job *j, json_t *edges, bool assumed)
{
	json_t *cycles = json_array();
	int n = (int)j->npresent;
	size_t ne = 0, cap = json_array_size(edges);
	if (n <= 0)
		return cycles;
	struct cq_graph_edge *el = malloc((cap + 1) * sizeof(*el));
	struct cq_graph g = {0};
	int *path = malloc(((size_t)n + 1) * sizeof(int));
	bool *seen = calloc((size_t)n, sizeof(bool));
	if (!el || !path || !seen)
		goto out;
	json_t *e;
	size_t i;
	json_array_foreach(edges, i, e) {
		int from = node(j, (int)json_integer_value(json_object_get(e, "from")));
		json_t *tv = json_object_get(e, "to");
		int to = json_is_integer(tv) ? node(j, (int)json_integer_value(tv)) : -1;
		if (json_is_true(json_object_get(e, "waits")) && !json_is_true(json_object_get(e, "wildcard")) &&
		    !json_is_true(json_object_get(e, "within")) &&
		    (assumed || !json_is_true(json_object_get(e, "assumed"))) && from >= 0 && to >= 0)
			el[ne++] = (struct cq_graph_edge){from, to};
	}
	if (!cq_graph_init(&g, n, el, ne))
		goto out;
	cq_graph_strong(&g);
	/* members of each component, ascending: components in Tarjan's order */
	int *cfirst = calloc((size_t)g.ncomp + 1, sizeof(int)), *members = malloc((size_t)n * sizeof(int));
	if (!cfirst || !members) {
		free(cfirst);
		free(members);
		goto out;
	}
	for (int v = 0; v < n; v++)
		cfirst[g.comp[v] + 1]++;
	for (int c = 0; c < g.ncomp; c++)
		cfirst[c + 1] += cfirst[c];
	for (int v = 0, *fill = g.low; v < n; v++) /* low[] is free now: fill positions */
		fill[v] = 0;
	for (int v = 0; v < n; v++)
		members[cfirst[g.comp[v]] + g.low[g.comp[v]]++] = v;
	for (int c = 0; c < g.ncomp; c++) {
		int size = cfirst[c + 1] - cfirst[c], first = members[cfirst[c]];
		bool self = false;
		for (int k = g.first[first]; k < g.first[first + 1]; k++)
			self |= g.to[k] == first;
		if (size == 1 && !self)
			continue;
		memset(seen, 0, (size_t)n * sizeof(bool));
		int len = cycle_from(&g, first, path, seen);
		if (!len)
			continue;
		json_t *ranks = json_array(), *mem = json_array();
		for (int k = 0; k <= len; k++)
			json_array_append_new(ranks, json_integer(j->present[path[k]]));
		for (int k = cfirst[c]; k < cfirst[c + 1]; k++)
			json_array_append_new(mem, json_integer(j->present[members[k]]));
		json_array_append_new(cycles, json_pack("{s:o, s:o}", "cycle", ranks, "ranks", mem));
	}
	free(cfirst);
	free(members);
out:
	free(el);
	free(path);
	free(seen);
	cq_graph_free(&g);
	return cycles;
}

/* The cycles that only the edges resting on a guess close (a collective's communicator
 * taken as MPI_COMM_WORLD, an order of two collectives neither decides), each with what it
 * assumes: never a DEADLOCK, said as possible. */
static json_t *possible_cycles(struct job *j, json_t *edges, json_t *definite)
{
	json_t *all = find_cycles(j, edges, true), *out = json_array(), *c, *d, *e;
	size_t i, k, x;
	bool *in = calloc(j->npresent + 1, sizeof(bool));
	json_array_foreach(all, i, c) {
		if (!in)
			break;
		bool known = false;
		json_array_foreach(definite, k, d)
			known |= json_equal(json_object_get(c, "ranks"), json_object_get(d, "ranks"));
		if (known)
			continue;
		/* the guesses of the edges inside the component, each once (a mark per rank
		 * present: the edges are walked once per component, not once per member) */
		json_t *members = json_object_get(c, "ranks"), *assuming = json_array();
		json_array_foreach(members, x, d)
			if (node(j, (int)json_integer_value(d)) >= 0)
				in[node(j, (int)json_integer_value(d))] = true;
		json_array_foreach(edges, k, e) {
			const char *a = json_string_value(json_object_get(e, "assumption"));
			int from = node(j, (int)json_integer_value(json_object_get(e, "from")));
			int to = node(j, (int)json_integer_value(json_object_get(e, "to")));
			bool dup = false;
			if (!a || from < 0 || to < 0 || !in[from] || !in[to] || json_array_size(assuming) >= 16)
				continue;
			json_array_foreach(assuming, x, d)
				dup |= !strcmp(json_string_value(d), a);
			if (!dup)
				json_array_append_new(assuming, json_string(a));
		}
		json_array_foreach(members, x, d)
			if (node(j, (int)json_integer_value(d)) >= 0)
				in[node(j, (int)json_integer_value(d))] = false;
		json_object_set_new(c, "assuming", assuming);
		json_array_append(out, c);
	}
	json_decref(all);
	free(in);
	return out;
}

/* Whether a thread of the rank of pending operation @p o waits on it: its rank is inside
 * a call that waits on operations of its kind, or on requests (the ones MPI_Waitall names
 * are not recovered from the stack: every request it posted); with no stacks, every
 * pending operation is taken as waited on. */
static bool waited_on(const struct job *j, const struct op *o)
{
	int v = node(j, o->rank);
	if (!j->calls || v < 0 || !j->calls[v].known)
		return true;
	const struct calls *c = &j->calls[v];
	return c->requests || (o->cls == SEND ? c->send : c->recv);
}

/* The communicator of rank @p v's collective: the only one of more than one rank its
 * document lists (a collective on it, or on one the DLL does not list), else
 * MPI_COMM_WORLD as an assumption: the call's communicator argument is not recovered
 * from the stack, and an edge resting on that guess never makes a DEADLOCK. */
static void collective_comm(struct job *j, int v, json_t *doc)
{
	struct calls *c = &j->calls[v];
	json_t *cm;
	size_t k;
	int only = -1, many = 0, world = -1;
	c->collective_comm = -1;
	c->comm_assumed = false;
	json_array_foreach(json_object_get(doc, "communicators"), k, cm) {
		int ci = comm_index(j, cm);
		if (ci < 0)
			continue;
		if (!strcmp(json_string_value(json_object_get(cm, "name")) ?: "", "MPI_COMM_WORLD"))
			world = ci;
		if (json_array_size(j->comms[ci].group) > 1 && ci != only) {
			only = ci;
			many++;
		}
	}
	/* the call's own argument, read from the calling frame (mqd/commarg.h): by id, or
	 * a predefined communicator by name */
	json_int_t arg_id = json_integer_value(json_object_get(c->arg_comm, "id"));
	const char *arg_name = json_string_value(json_object_get(c->arg_comm, "name"));
	bool arg_id_known = json_is_integer(json_object_get(c->arg_comm, "id"));
	int arg = -1;
	json_array_foreach(json_object_get(doc, "communicators"), k, cm) {
		int ci = comm_index(j, cm);
		if (ci >= 0 && ((arg_id_known && json_integer_value(json_object_get(cm, "id")) == arg_id) ||
				(arg_name && !strcmp(json_string_value(json_object_get(cm, "name")) ?: "", arg_name))))
			arg = ci;
	}
	/* where the value was read: the MPI library's own parameter (its debug file), or
	 * the program's call site */
	bool param = !strcmp(json_string_value(json_object_get(c->arg_comm, "from")) ?: "", "parameter");
	if (arg >= 0 && !json_is_true(json_object_get(doc, "communicators_assumed"))) {
		c->collective_comm = arg;
		c->comm_source = param ? "the call's communicator argument (read from the MPI library's DWARF)"
				       : "the call's communicator argument (read from the calling frame's DWARF)";
	} else if (arg >= 0 && arg_name && !strcmp(arg_name, "MPI_COMM_WORLD")) {
		/* no queues, but the argument is MPI_COMM_WORLD itself: its members are known */
		c->collective_comm = arg;
		c->comm_source = param ? "the call's communicator argument, MPI_COMM_WORLD (read from the MPI library's DWARF)"
				       : "the call's communicator argument, MPI_COMM_WORLD (read from the calling frame's DWARF)";
	} else if (c->internal_comm >= 0) {
		/* the queues hold its collective's own traffic on one communicator: that one */
		c->collective_comm = c->internal_comm;
		c->comm_source = "the communicator whose queues hold the rank's collective traffic (the library's "
				 "own operations, negative tags)";
	} else if (many == 1 && !json_is_true(json_object_get(doc, "communicators_assumed")) &&
		   !(c->arg_comm && !arg_name && only == world)) {
		/* (not MPI_COMM_WORLD when the argument says it is another) */
		c->collective_comm = only;
		c->comm_source = "the only communicator of more than one rank the rank belongs to";
	} else if (c->arg_comm && !arg_name) {
		/* the argument is a communicator of the program's own, not MPI_COMM_WORLD: which
		 * one is not known (no type donor for its id, or one the rank does not list) */
		c->comm_source = "a communicator other than MPI_COMM_WORLD (its address is read from the call, not "
				 "which one it is)";
	} else if (world >= 0) {
		c->collective_comm = world;
		c->comm_assumed = true;
		c->comm_source = many > 1 ? "assumed MPI_COMM_WORLD: the rank belongs to several communicators and the "
					    "call's communicator argument is not recovered from the stack"
					  : "assumed MPI_COMM_WORLD: the rank's communicators are not known (no message "
					    "queues), and the call's argument is not recovered from the stack";
	}
}

/* What the rank at node @p v is inside, for a report: "MPI_Recv", "outside MPI", ... */
static const char *rank_state(const struct job *j, int v)
{
	if (v < 0)
		return "no document";
	if (!j->calls[v].known)
		return "unknown (no stacks in its document)";
	const char *first = NULL;
	json_t *c;
	size_t k;
	json_array_foreach(j->calls[v].list, k, c) {
		const char *call = json_string_value(json_object_get(c, "call"));
		if (cq_mpi_call_waits(call) != CQ_MPI_WAITS_NOTHING)
			return call;
		if (!first)
			first = call;
	}
	return first ? first : "outside MPI";
}

/* Collectives in which some members may return before every member has called: the
 * non-roots of a rooted reduction or gather send their part and return, the root of a
 * broadcast or scatter sends and returns (MPI-4.0 section 6.14: a collective may or may
 * not synchronize). Every other one needs all members' calls before any returns. */
static bool leaves_early(const char *call)
{
	static const char *const early[] = {"MPI_Bcast", "MPI_Gather", "MPI_Gatherv", "MPI_Reduce",
					    "MPI_Scatter", "MPI_Scatterv"};
	for (size_t i = 0; call && i < sizeof(early) / sizeof(early[0]); i++)
		if (!strcmp(call, early[i]))
			return true;
	return false;
}

/* Where a member in collective @p other on the same communicator stands against a rank in
 * collective @p mine: collectives on one communicator are called in the same order by
 * every member, so one of the two came first. A member can be in a later one only after
 * returning early from the earlier: that one must let members leave early and the later
 * one not (else both readings are possible). */
enum order { BEHIND, AHEAD, UNKNOWN };

static enum order collective_order(const char *mine, const char *other)
{
	bool m = leaves_early(mine), o = leaves_early(other);
	if (m && !o)
		return AHEAD;  /* it returned early from mine and went on into its own */
	if (o && !m)
		return BEHIND; /* it is still in the earlier one, which I returned early from */
	return UNKNOWN;
}

static void add_collective_edge(json_t *edges, int from, int to, const char *call, const char *comm,
				const char *assumption)
{
	json_t *e = json_pack("{s:i, s:i, s:b, s:b, s:{s:s, s:i, s:s, s:s}}", "from", from, "to", to, "waits", 1,
			      "wildcard", 0, "op", "kind", "collective", "rank", from, "call", call, "comm", comm);
	if (assumption) {
		json_object_set_new(e, "assumed", json_true());
		json_object_set_new(e, "assumption", cq_json_str(assumption));
	}
	json_array_append_new(edges, e);
}

/* A rank whose collective's communicator is only guessed (or not known) takes, as a guess
 * still, the one a member in the same call is known to be on, when it is a member of it and
 * no other such communicator exists: QE's rank 2, dead in its MPI_Bcast with no request
 * left in its queues, and its pool partner rank 3 in MPI_Bcast on their 2-rank pool
 * communicator (read from its collective traffic). More likely than MPI_COMM_WORLD: one
 * collective call on a communicator both belong to, one rank of it seen there. */
static void share_known_comm(struct job *j)
{
	for (size_t v = 0; v < j->npresent; v++) {
		struct calls *c = &j->calls[v];
		if (!c->collective || c->comm_dropped || (c->collective_comm >= 0 && !c->comm_assumed))
			continue;
		int found = -1, from = -1;
		bool several = false;
		for (size_t u = 0; u < j->npresent; u++) {
			const struct calls *o = &j->calls[u];
			if (u == v || !o->collective || strcmp(o->collective, c->collective) || o->collective_comm < 0 ||
			    o->comm_assumed || !json_array_size(j->comms[o->collective_comm].group) ||
			    !in_group(j, o->collective_comm, j->present[v]))
				continue;
			several |= found >= 0 && found != o->collective_comm;
			if (found < 0) {
				found = o->collective_comm;
				from = j->present[u];
			}
		}
		/* (never MPI_COMM_WORLD where the argument says it is another) */
		if (found < 0 || several ||
		    (c->arg_comm && !json_object_get(c->arg_comm, "name") &&
		     !strcmp(j->comms[found].name ?: "", "MPI_COMM_WORLD")))
			continue;
		snprintf(c->comm_why, sizeof(c->comm_why),
			 "assumed the communicator of rank %d's %s (known), which the rank belongs to: the call's "
			 "communicator argument is not recovered from the stack", from, c->collective);
		c->collective_comm = found;
		c->comm_assumed = true;
		c->comm_source = c->comm_why;
	}
}

/* Where guessing MPI_COMM_WORLD (collective_comm) makes the program one that cannot work,
 * the guess is dropped: two members of one communicator in different collectives, neither
 * of which lets members leave early, cannot both be there (QE's ranks, each in a collective
 * on one of its 62 communicators, all "assumed" on WORLD made mismatches out of a correct
 * program). Where both communicators were read, it is a true mismatch and stays. One pass
 * gathers the distinct (communicator, call) pairs, one compares them pairwise (few). */
static void drop_impossible(struct job *j)
{
	struct pair {
		int comm;
		const char *call;
		bool assumed;
		int rank; /* a member, for what is said */
		bool drop;
	} *pairs = NULL;
	size_t np = 0;
	for (size_t v = 0; v < j->npresent; v++) {
		const struct calls *c = &j->calls[v];
		if (!c->collective || c->collective_comm < 0)
			continue;
		size_t k;
		for (k = 0; k < np && (pairs[k].comm != c->collective_comm || strcmp(pairs[k].call, c->collective)); k++)
			;
		if (k == np) {
			struct pair *n = realloc(pairs, (np + 1) * sizeof(*n));
			if (!n)
				break;
			pairs = n;
			pairs[np++] = (struct pair){c->collective_comm, c->collective, false, j->present[v], false};
		}
		pairs[k].assumed |= c->comm_assumed;
	}
	for (size_t a = 0; a < np; a++)
		for (size_t b = a + 1; b < np; b++)
			if (pairs[a].comm == pairs[b].comm && (pairs[a].assumed || pairs[b].assumed) &&
			    collective_order(pairs[a].call, pairs[b].call) == UNKNOWN) {
				pairs[a].drop |= pairs[a].assumed;
				pairs[b].drop |= pairs[b].assumed;
				if (pairs[a].assumed)
					pairs[a].rank = pairs[b].rank; /* the other side, named below */
				else
					pairs[b].rank = pairs[a].rank;
			}
	for (size_t v = 0; v < j->npresent; v++) {
		struct calls *c = &j->calls[v];
		if (!c->collective || c->collective_comm < 0 || !c->comm_assumed)
			continue;
		for (size_t k = 0; k < np; k++) {
			if (!pairs[k].drop || pairs[k].comm != c->collective_comm || strcmp(pairs[k].call, c->collective))
				continue;
			int other = node(j, pairs[k].rank);
			snprintf(c->comm_why, sizeof(c->comm_why),
				 "not known: the call's communicator argument is not recovered, and MPI_COMM_WORLD would put "
				 "it with rank %d's %s, which a correct program cannot do", pairs[k].rank,
				 other >= 0 && j->calls[other].collective ? j->calls[other].collective : "collective");
			c->comm_source = c->comm_why;
			c->collective_comm = -1;
			c->comm_assumed = false;
			c->comm_dropped = true;
		}
	}
	free(pairs);
}

/* Ranks inside a collective wait for every member of its communicator that has not reached
 * it: outside MPI, in point-to-point, in a collective on another communicator, or in an
 * earlier collective on this one. A member in a later collective there (it returned early
 * from this one) is ahead, not waited for. The collectives, with the members elsewhere (a
 * mismatch when a member is inside a blocking call other than a collective on another
 * communicator that cannot come before or after). */
static json_t *collectives(struct job *j, json_t *edges, bool *blocked)
{
	json_t *out = json_array(), *doc;
	size_t i;
	if (!j->calls)
		return out;
	json_array_foreach(j->ranks, i, doc) {
		int v = node(j, j->rank_of ? j->rank_of[i] : -1);
		if (v >= 0 && j->calls[v].collective && j->present[v] == j->rank_of[i])
			collective_comm(j, v, doc);
	}
	share_known_comm(j);
	drop_impossible(j);
	for (size_t v = 0; v < j->npresent; v++) {
		const struct calls *c = &j->calls[v];
		if (c->collective && c->collective_comm < 0 && c->comm_dropped) {
			/* its communicator is not known: listed, waiting on nobody known */
			json_t *entry = NULL, *e;
			size_t k;
			json_array_foreach(out, k, e)
				if (json_is_null(json_object_get(e, "comm")) &&
				    !strcmp(json_string_value(json_object_get(e, "call")), c->collective))
					entry = e;
			if (!entry) {
				entry = json_pack("{s:s, s:I, s:n, s:o, s:s, s:b, s:o, s:o, s:b}", "call", c->collective,
						  "comm_index", (json_int_t)-1, "comm", "ranks", json_array(), "comm_source",
						  c->comm_source, "comm_assumed", 0, "elsewhere", json_array(), "ahead",
						  json_array(), "mismatch", 0);
				json_array_append_new(out, entry);
			}
			json_array_append_new(json_object_get(entry, "ranks"), json_integer(j->present[v]));
			continue;
		}
		if (!c->collective || c->collective_comm < 0)
			continue;
		int comm = c->collective_comm, rank = j->present[v];
		/* the entry of this communicator and call */
		json_t *entry = NULL, *e;
		size_t k;
		json_array_foreach(out, k, e)
			if (json_integer_value(json_object_get(e, "comm_index")) == comm &&
			    !strcmp(json_string_value(json_object_get(e, "call")), c->collective))
				entry = e;
		bool fresh = !entry;
		if (fresh) {
			entry = json_pack("{s:s, s:I, s:s, s:o, s:s, s:b, s:o, s:o, s:b}", "call", c->collective,
					  "comm_index", (json_int_t)comm, "comm", comm_name(j, comm), "ranks", json_array(),
					  "comm_source", c->comm_source, "comm_assumed", 0, "elsewhere", json_array(),
					  "ahead", json_array(), "mismatch", 0);
			json_array_append_new(out, entry);
		}
		json_array_append_new(json_object_get(entry, "ranks"), json_integer(rank));
		/* Its DLL lists the library's own operations, the job's collectives run over them,
		 * and none of its own is pending: its part is done, it is on its way out (a rank
		 * that left a barrier may already be in the next call): waiting on nobody. */
		bool done = j->internal_seen && c->internal_listed && !c->internal_pending;
		if (done) {
			json_t *list = json_object_get(entry, "exchanges_done");
			if (!list)
				json_object_set_new(entry, "exchanges_done", list = json_array());
			json_array_append_new(list, json_integer(rank));
		}
		char assumption[160];
		if (c->comm_assumed) {
			snprintf(assumption, sizeof(assumption), "rank %d's %s is on %s", rank, c->collective,
				 comm_name(j, comm));
			json_object_set_new(entry, "comm_assumed", json_true());
			/* which of its ranks it is a guess for (others may have it read) */
			json_t *list = json_object_get(entry, "assumed_ranks");
			if (!list)
				json_object_set_new(entry, "assumed_ranks", list = json_array());
			json_array_append_new(list, json_integer(rank));
		} else if (!fresh && json_object_get(entry, "assumed_ranks")) {
			/* how it is known, from a rank it is not a guess for */
			json_object_set_new(entry, "comm_source", cq_json_str(c->comm_source));
		}
		json_t *m;
		/* where the DLL lists the library's own operations and some of the rank's are
		 * pending on this communicator, it waits now on their peers only: a member that
		 * already did its part and left (its message to this rank in flight) is not waited
		 * on (a rank stopped inside MPI_Allreduce, its neighbours already in the next halo
		 * exchange). A peer inside the same collective is waited on too, by an edge
		 * `within` it: the library's exchange, which never makes a cycle of its own (two
		 * members each with a message in flight to the other would) */
		bool precise = c->internal_listed && c->nipeer > 0 && comm == c->internal_comm && !done;

		json_array_foreach(j->comms[comm].group, k, m) {
			int to = intval(m, -1), w = node(j, to);
			if (to < 0 || to == rank)
				continue;
			const struct calls *tc = w >= 0 ? &j->calls[w] : NULL;
			bool there = tc && tc->collective && tc->collective_comm == comm;
			bool peer = false;
			for (int x = 0; precise && x < c->nipeer; x++)
				peer |= c->ipeer[x] == to;
			if (there && !strcmp(tc->collective, c->collective)) {
				if (peer && w >= 0) {
					add_collective_edge(edges, rank, to, c->collective, comm_name(j, comm), NULL);
					json_object_set_new(json_array_get(edges, json_array_size(edges) - 1), "within", json_true());
					blocked[v] = true;
				}
				continue; /* in it too */
			}
			enum order ord = there ? collective_order(c->collective, tc->collective) : BEHIND;
			const char *st = rank_state(j, w);
			if (ord == AHEAD) {
				if (fresh)
					json_array_append_new(json_object_get(entry, "ahead"),
							      json_pack("{s:i, s:s}", "rank", to, "in", st));
				continue;
			}
			blocked[v] |= !done;
			/* an order neither call decides is a guess too: both members' edges rest on it */
			char unknown[200];
			if (ord == UNKNOWN)
				snprintf(unknown, sizeof(unknown), "rank %d's %s on %s comes before rank %d's %s", to,
					 tc->collective, comm_name(j, comm), rank, c->collective);
			const char *why = c->comm_assumed ? assumption :
					  ord == UNKNOWN && leaves_early(c->collective) ? unknown : NULL;
			/* A member in a blocking point-to-point call may be past this collective
			 * already (it did its part and left, its message to this rank in flight,
			 * which no core shows: the next iteration's halo exchange): decided once it
			 * is known who does not run (settle_passable) */
			bool passable = !why && !there && tc && tc->known && !tc->stopped && !tc->died &&
					cq_mpi_call_waits(st) != CQ_MPI_WAITS_NOTHING && cq_mpi_call_waits(st) != CQ_MPI_WAITS_COLLECTIVE;
			if (w >= 0 && !done) {
				add_collective_edge(edges, rank, to, c->collective, comm_name(j, comm), why);
				if (passable)
					json_object_set_new(json_array_get(edges, json_array_size(edges) - 1), "passable",
							    json_pack("{s:I, s:s}", "comm", (json_int_t)comm, "in", st));
			}
			if (!fresh)
				continue; /* the members elsewhere are listed once per entry */
			json_array_append_new(json_object_get(entry, "elsewhere"),
					      json_pack("{s:i, s:s}", "rank", to, "in", st));
			/* a member in a blocking call that is not an earlier collective here; one in
			 * a collective on another communicator (or on one not known) comes here
			 * once that one completes: a chain of waits, not a mismatch (ScaLAPACK's
			 * row and column broadcasts) */
			if (there && ord == UNKNOWN)
				json_object_set_new(entry, "mismatch", json_true());
		}
	}
	json_array_foreach(out, i, doc)
		json_object_del(doc, "comm_index");
	return out;
}

/* Why rank @p rank does not progress its MPI operations: "died" (its core is a crash's),
 * "stopped" (by a signal), "outside MPI" (no thread in a blocking MPI call: no library
 * runs there without a progress thread); NULL when it runs inside MPI, or when nothing is
 * known of it (no document, no stacks). */
static const char *not_progressing(const struct job *j, int rank)
{
	int v = node(j, rank);
	if (!j->calls || v < 0 || !j->calls[v].known)
		return NULL;
	const struct calls *c = &j->calls[v];
	if (c->died)
		return "died";
	if (c->stopped)
		return "stopped";
	return cq_mpi_call_waits(rank_state(j, v)) == CQ_MPI_WAITS_NOTHING ? "outside MPI" : NULL;
}

/* The wait of pending operation @p o on rank @p to as an edge (@p ref: the operation, taken);
 * with @p assumption, an edge resting on it (never a DEADLOCK). */
static void add_wait_edge(json_t *edges, const struct op *o, int to, json_t *ref, const char *assumption)
{
	json_t *e = json_pack("{s:i, s:i, s:b, s:b, s:o}", "from", o->rank, "to", to, "waits", 1, "wildcard", 0,
			      "op", ref);
	if (assumption) {
		json_object_set_new(e, "assumed", json_true());
		json_object_set_new(e, "assumption", cq_json_str(assumption));
	}
	json_array_append_new(edges, e);
}

/* Whether a thread of the rank of @p c is inside MPI call @p call (a C name). */
static bool in_call(const struct calls *c, const char *call)
{
	json_t *x;
	size_t k;
	json_array_foreach(c->list, k, x)
		if (!strcmp(json_string_value(json_object_get(x, "call")) ?: "", call))
			return true;
	return false;
}

/* Whether rank @p rank runs inside MPI by its stacks: a thread in a blocking MPI call, its
 * process neither stopped nor dead (not_progressing()). */
static bool running_in_mpi(const struct job *j, int rank)
{
	int v = node(j, rank);
	return j->calls && v >= 0 && j->calls[v].known && !not_progressing(j, rank);
}

static void add_unseen(struct job *j, const struct op *o, enum unseen_kind kind)
{
	struct unseen *n = realloc(j->unseen, (j->nunseen + 1) * sizeof(*n));
	if (!n)
		return;
	j->unseen = n;
	n[j->nunseen++] = (struct unseen){(size_t)(o - j->ops), kind};
}

/* The wait edges as distinct (from, to) pairs of nodes, sorted: how many ranks wait directly
 * on a rank, and whether one waits on another, in one sort (a job's halo exchanges give an
 * unseen send per neighbour: no walk of every edge per send). */
struct waits {
	struct cq_graph_edge *e;
	size_t n;
	int *indeg; /* per node: distinct ranks waiting on it */
};

static int cmp_edge(const void *a, const void *b)
{
	const struct cq_graph_edge *x = a, *y = b;
	return x->from != y->from ? (x->from > y->from) - (x->from < y->from) : (x->to > y->to) - (x->to < y->to);
}

static bool waits_init(const struct job *j, json_t *edges, struct waits *w)
{
	json_t *e;
	size_t i;
	w->n = 0;
	w->e = malloc((json_array_size(edges) + 1) * sizeof(*w->e));
	w->indeg = calloc(j->npresent + 1, sizeof(int));
	if (!w->e || !w->indeg)
		return false;
	json_array_foreach(edges, i, e) {
		int from = node(j, (int)json_integer_value(json_object_get(e, "from")));
		int to = node(j, (int)json_integer_value(json_object_get(e, "to")));
		/* the waits known: a guess tells nothing of who is not running, nor a collective's
		 * wait on a member that may have passed it, unless the rank's own pending
		 * operations of the collective are with that member */
		bool own = false;
		const struct calls *fc = from >= 0 ? &j->calls[from] : NULL;
		for (int x = 0; fc && fc->internal_listed && x < fc->nipeer; x++)
			own |= to >= 0 && fc->ipeer[x] == j->present[to];
		if (from >= 0 && to >= 0 && from != to && json_is_true(json_object_get(e, "waits")) &&
		    !json_is_true(json_object_get(e, "wildcard")) && !json_is_true(json_object_get(e, "assumed")) &&
		    (!json_object_get(e, "passable") || own))
			w->e[w->n++] = (struct cq_graph_edge){from, to};
	}
	qsort(w->e, w->n, sizeof(*w->e), cmp_edge);
	size_t k = 0;
	for (i = 0; i < w->n; i++)
		if (!k || cmp_edge(&w->e[k - 1], &w->e[i]))
			w->e[k++] = w->e[i];
	w->n = k;
	for (i = 0; i < w->n; i++)
		w->indeg[w->e[i].to]++;
	return true;
}

static bool waits_on(const struct waits *w, int from, int to)
{
	struct cq_graph_edge key = {from, to};
	return from >= 0 && to >= 0 && bsearch(&key, w->e, w->n, sizeof(key), cmp_edge);
}

/* Which rank of each unseen send has not run (struct unseen)
 * (the receiver where its receive matched it, else the one other ranks wait on: a
 * rank that does not run becomes the end of everyone's waits; both when as many wait on
 * each). A rank found not running waits on nobody: its edges go (as a stopped one's), and
 * a sender still running waits on its receiver. The sends are listed (`unseen_sends`). */
static void resolve_unseen(struct job *j, json_t *edges, json_t *list)
{
	static const char *const kinds[] = {"matched", "absent"};
	int *pick = malloc((j->nunseen + 1) * sizeof(int));
	struct waits w = {0};
	if (!pick || !waits_init(j, edges, &w)) {
		free(pick);
		free(w.e);
		free(w.indeg);
		return;
	}
	for (int pass = 0; pass < 2; pass++)
	for (size_t k = 0; k < j->nunseen; k++) {
		const struct op *o = &j->ops[j->unseen[k].op];
		int s = o->rank, r = o->peer;
		/* the second pass: two that tied, where one was found not running by another send */
		if (pass) {
			int vs = node(j, s), vr = node(j, r);
			if (pick[k] >= 0)
				continue;
			pick[k] = vs >= 0 && j->calls[vs].not_running ? s : vr >= 0 && j->calls[vr].not_running ? r : -1;
			continue;
		}
		if (j->unseen[k].kind == UNSEEN_MATCHED)
			pick[k] = r;
		else {
			/* ranks other than the two that wait on each */
			int ns = node(j, s), nr = node(j, r);
			int ws = ns >= 0 ? w.indeg[ns] - waits_on(&w, nr, ns) : 0;
			int wr = nr >= 0 ? w.indeg[nr] - waits_on(&w, ns, nr) : 0;
			pick[k] = ws > wr ? s : wr > ws ? r : -1;
		}
		int v = node(j, pick[k]);
		struct calls *c = v >= 0 ? &j->calls[v] : NULL;
		if (c && !c->not_running) {
			if (pick[k] == s)
				snprintf(c->nr_why, sizeof(c->nr_why), "not running: its send to rank %d (tag %d, %lld bytes) is no "
					 "longer waiting there, and it has not seen that (stopped, or starved of CPU)", r, o->tag,
					 (long long)o->length);
			else
				snprintf(c->nr_why, sizeof(c->nr_why), "not running: rank %d's send to it (tag %d, %lld bytes) "
					 "is %s (stopped, or starved of CPU)", s, o->tag, (long long)o->length,
					 j->unseen[k].kind == UNSEEN_MATCHED ? "matched by its pending receive, not taken"
									     : "neither received nor queued there: in flight in "
									       "its shared memory, not taken");
			c->not_running = c->nr_why;
		}
	}
	/* the edges of ranks that do not run go; where neither of two is known to be the one,
	 * the waits between them (the pairs sorted, each edge looked up) */
	struct cq_graph_edge *ties = malloc((j->nunseen + 1) * sizeof(*ties));
	size_t nt = 0;
	for (size_t k = 0; ties && k < j->nunseen; k++) {
		const struct op *o = &j->ops[j->unseen[k].op];
		if (pick[k] < 0)
			ties[nt++] = (struct cq_graph_edge){o->rank < o->peer ? o->rank : o->peer,
							    o->rank < o->peer ? o->peer : o->rank};
	}
	if (ties)
		qsort(ties, nt, sizeof(*ties), cmp_edge);
	json_t *keep = json_array(), *e;
	size_t i;
	json_array_foreach(edges, i, e) {
		int from = (int)json_integer_value(json_object_get(e, "from"));
		int to = (int)json_integer_value(json_object_get(e, "to"));
		int v = node(j, from);
		struct cq_graph_edge key = {from < to ? from : to, from < to ? to : from};
		bool drop = (v >= 0 && j->calls[v].not_running) ||
			    (ties && nt && bsearch(&key, ties, nt, sizeof(key), cmp_edge));
		if (!drop)
			json_array_append(keep, e);
	}
	free(ties);
	json_array_clear(edges);
	json_array_extend(edges, keep);
	json_decref(keep);
	for (size_t k = 0; k < j->nunseen; k++) {
		const struct op *o = &j->ops[j->unseen[k].op];
		json_t *ref = op_ref(j, o);
		json_object_set_new(ref, "case", json_string(kinds[j->unseen[k].kind]));
		json_object_set_new(ref, "not_running", pick[k] >= 0 ? json_integer(pick[k]) : json_null());
		if (pick[k] < 0)
			json_object_set_new(ref, "one_of", json_pack("[i, i]", o->rank, o->peer));
		/* a sender that runs waits on a receiver that does not */
		int vs = node(j, o->rank);
		if (pick[k] == o->peer && vs >= 0 && !j->calls[vs].not_running) {
			json_t *wref = op_ref(j, o);
			json_object_set_new(wref, "peer_not_progressing", json_string("not running"));
			add_wait_edge(edges, o, o->peer, wref, NULL);
		}
		json_array_append_new(list, ref);
	}
	free(pick);
	free(w.e);
	free(w.indeg);
}

/* The waits of ranks in a collective on members in point-to-point (`passable` edges): such
 * a member has not passed the collective where a running member inside it still has one of
 * the library's own operations pending with it (its part is not yet there); where the DLL
 * lists those and none is, it may have done its part and left (its message in flight to a
 * rank that does not run): no wait. Where they are not listed (Open MPI's DLL, no queues)
 * the wait is a guess, said. A rank's waits `within` its collective (on a peer of its own
 * pending operations inside it) stay only where it waits on no member outside. */
static void settle_passable(struct job *j, json_t *edges)
{
	json_t *keep = json_array(), *e;
	size_t i;
	bool *outside = calloc(j->npresent + 1, sizeof(bool)); /* a rank keeps a wait on a member outside */
	json_array_foreach(edges, i, e) {
		json_t *pa = json_object_get(e, "passable");
		int from = (int)json_integer_value(json_object_get(e, "from"));
		int to = (int)json_integer_value(json_object_get(e, "to"));
		int vf = node(j, from);
		if (pa && vf >= 0) {
			const struct calls *c = &j->calls[vf];
			int comm = (int)json_integer_value(json_object_get(pa, "comm"));
			if (j->internal_seen && c->internal_listed) {
				bool pending = false;
				for (size_t v = 0; v < j->npresent && !pending; v++) {
					const struct calls *z = &j->calls[v];
					if (!z->collective || z->collective_comm != comm || strcmp(z->collective, c->collective) ||
					    z->not_running || z->stopped || z->died)
						continue;
					for (int x = 0; x < z->nipeer; x++)
						pending |= z->ipeer[x] == to;
				}
				if (!pending)
					continue; /* it may be past it: no wait */
			} else {
				char why[224];
				snprintf(why, sizeof(why), "rank %d, in %s, has not yet passed rank %d's %s on %s", to,
					 json_string_value(json_object_get(pa, "in")), from, c->collective, comm_name(j, comm));
				json_object_set_new(e, "assumed", json_true());
				json_object_set_new(e, "assumption", cq_json_str(why));
			}
		}
		json_object_del(e, "passable");
		if (outside && vf >= 0 && !json_is_true(json_object_get(e, "within")) &&
		    !strcmp(json_string_value(json_object_get(json_object_get(e, "op"), "kind")) ?: "", "collective"))
			outside[vf] = true;
		json_array_append(keep, e);
	}
	json_array_clear(edges);
	json_array_foreach(keep, i, e) {
		int vf = node(j, (int)json_integer_value(json_object_get(e, "from")));
		if (json_is_true(json_object_get(e, "within")) && outside && vf >= 0 && outside[vf])
			continue;
		json_array_append(edges, e);
	}
	json_decref(keep);
	free(outside);
}

/* A member in point-to-point is on its way into a collective once its own waits end (the
 * halo exchange before a residual's MPI_Allreduce): no mismatch, unless it waits (a
 * definite edge of @p edges, as finally resolved) on a member inside the collective, which
 * cannot answer before it returns, and that member waits on it for sure too (else what it
 * waits for may be in flight: OpenFOAM's rank caught with its neighbour's halo message not
 * yet taken); one found not running answers nothing either way. */
static void p2p_mismatches(const struct job *j, json_t *colls, json_t *edges)
{
	json_t *doc, *x, *e, *r;
	size_t i, k, m, q;
	json_array_foreach(colls, i, doc) {
		json_array_foreach(json_object_get(doc, "elsewhere"), k, x) {
			json_int_t who = json_integer_value(json_object_get(x, "rank"));
			enum cq_mpi_wait w = cq_mpi_call_waits(json_string_value(json_object_get(x, "in")));
			if (w == CQ_MPI_WAITS_NOTHING || w == CQ_MPI_WAITS_COLLECTIVE)
				continue;
			json_array_foreach(edges, m, e) {
				json_int_t to = json_integer_value(json_object_get(e, "to"));
				int vt = node(j, (int)to);
				if (json_integer_value(json_object_get(e, "from")) != who || json_is_true(json_object_get(e, "assumed")) ||
				    json_is_true(json_object_get(e, "wildcard")) || (vt >= 0 && j->calls[vt].not_running) ||
				    !strcmp(json_string_value(json_object_get(json_object_get(e, "op"), "kind")) ?: "", "collective"))
					continue;
				/* and the member inside waits back on it for sure: a small message the
				 * member sent before it entered may still be in flight to a rank that has
				 * not run since (stopped, starved of CPU), its send complete and gone */
				bool back = false, guess = false;
				json_t *b;
				size_t z;
				json_array_foreach(edges, z, b) {
					if (json_integer_value(json_object_get(b, "from")) != to ||
					    json_integer_value(json_object_get(b, "to")) != who)
						continue;
					if (json_is_true(json_object_get(b, "assumed")))
						guess = true;
					else
						back = true;
				}
				/* (where that wait back is itself a guess, so is the mismatch: said) */
				json_array_foreach(json_object_get(doc, "ranks"), q, r) {
					if (json_integer_value(r) != to || !(back || guess))
						continue;
					bool had = json_is_true(json_object_get(doc, "mismatch")) &&
						   !json_is_true(json_object_get(doc, "mismatch_assumed"));
					json_object_set_new(doc, "mismatch", json_true());
					if (back || had)
						json_object_del(doc, "mismatch_assumed");
					else
						json_object_set_new(doc, "mismatch_assumed", json_true());
				}
			}
		}
	}
}

/* Per rank: what its threads are inside, and where the job view took its waits from. */
static json_t *rank_calls(const struct job *j)
{
	json_t *out = json_array();
	for (size_t v = 0; j->calls && v < j->npresent; v++) {
		const struct calls *c = &j->calls[v];
		json_t *list = json_array(), *e;
		size_t k;
		json_array_foreach(c->list, k, e) {
			json_t *t = json_pack("{s:O, s:O, s:O}", "tid", json_object_get(e, "tid"), "call",
					      json_object_get(e, "call"), "waits", json_object_get(e, "waits"));
			/* the requests an MPI_Waitall names, where its arguments were read */
			if (json_is_array(json_object_get(e, "requests")))
				json_object_set_new(t, "requests_read",
						    json_integer((json_int_t)json_array_size(json_object_get(e, "requests"))));
			json_array_append_new(list, t);
		}
		json_array_append_new(out, json_pack("{s:i, s:s, s:b, s:s, s:o}", "rank", j->present[v], "in",
						     rank_state(j, (int)v), "from_stacks", c->known, "waits_from",
						     c->known ? "stacks" : "queues (no stacks in the document: every "
									   "pending operation taken as waited on)",
						     "threads", list));
		if (c->died)
			json_object_set_new(json_array_get(out, json_array_size(out) - 1), "died", cq_json_str(c->died));
		if (c->not_running)
			json_object_set_new(json_array_get(out, json_array_size(out) - 1), "not_running",
					    cq_json_str(c->not_running));
	}
	return out;
}

/* The ranks' stacks (their documents' "stacks") as one tree, a stack per rank numbered by
 * its rank, the ranks of each deadlock cycle marked; NULL when no document has stacks. */
static json_t *stack_tree(const struct job *j, json_t *cycles)
{
	struct cq_tree *t = cq_tree_create(CQ_TREE_BY_FUNCTION, false);
	json_t *doc, *tree = NULL, *c;
	size_t i, added = 0;
	if (!t)
		return NULL;
	json_array_foreach(j->ranks, i, doc) {
		json_t *bt = json_object_get(doc, "stacks");
		if (!j->rank_of || j->rank_of[i] < 0 || !json_is_object(bt))
			continue; /* failed, refused or given twice: its rank is not this one's */
		json_t *copy = json_copy(bt); /* shallow: only the task changes */
		if (!copy)
			continue;
		json_object_set_new(copy, "task", json_integer(j->rank_of[i]));
		const char *rs = json_string_value(json_object_get(doc, "rank_source"));
		json_object_set_new(copy, "task_source", rs ? json_sprintf("MPI_COMM_WORLD rank (%s)", rs)
							    : json_string("MPI_COMM_WORLD rank (MQD)"));
		struct cq_error *err = cq_tree_add_bt(t, copy, json_string_value(json_object_get(doc, "core")) ?: "rank");
		added += !err;
		cq_error_destroy(err); /* a refused stack document is not in the tree: its rank's count says so */
		json_decref(copy);
	}
	if (added)
		tree = cq_tree_json(t);
	cq_tree_destroy(t);
	json_array_foreach(cycles, i, c) {
		struct cq_ranges set;
		cq_ranges_init(&set);
		json_t *r;
		size_t k;
		json_array_foreach(json_object_get(c, "ranks"), k, r)
			cq_error_destroy(cq_ranges_add(&set, (uint64_t)json_integer_value(r), (uint64_t)json_integer_value(r)));
		char *text = cq_ranges_format(&set), name[32];
		if (json_array_size(cycles) > 1)
			snprintf(name, sizeof(name), "deadlock %zu", i + 1);
		else
			snprintf(name, sizeof(name), "deadlock");
		if (tree && text)
			cq_error_destroy(cq_tree_mark(tree, name, text));
		free(text);
		cq_ranges_deinit(&set);
	}
	return tree;
}

json_t *cq_waitfor_job(json_t *ranks)
{
	struct job j = {.ranks = ranks};
	collect(&j);
	label_comms(&j);
	match(&j);
	json_t *edges = json_array(), *unmatched_s = json_array(), *unmatched_r = json_array();
	json_t *matched = json_array(), *stalls = json_array(), *posted = json_array(), *satisfied = json_array();
	json_t *unseen = json_array();
	bool *blocked = calloc(j.npresent + 1, sizeof(bool)), *has_ops = calloc(j.npresent + 1, sizeof(bool));
	if (!blocked || !has_ops || !j.rank_of || !j.why_not || !j.present) {
		free(blocked);
		free(has_ops);
		blocked = has_ops = NULL;
		j.nops = 0; /* out of memory: report what needs no per-rank table */
	}
	for (size_t i = 0; i < j.nops; i++) {
		struct op *o = &j.ops[i];
		if (o->cls == UNEXPECTED || !o->pending)
			continue;
		/* a process stopped by a signal, or dead, waits on nobody: it does not run. What
		 * it would wait on once resumed is not known (a message to it may be in flight,
		 * in no queue): others waiting on it end there */
		int vo = node(&j, o->rank);
		const struct calls *self = j.calls && vo >= 0 ? &j.calls[vo] : NULL;
		bool down = self && (self->stopped || self->died);
		if (o->match >= 0) {
			const struct op *m = &j.ops[o->match];
			if (o->cls == SEND)
				json_array_append_new(matched, json_pack("{s:o, s:o}", "send", op_ref(&j, o),
									 "receive", op_ref(&j, m)));
			/* matched, but the transfer needs both ends to run their MPI library (a
			 * rendezvous send completes only once its receiver progresses): a peer that
			 * died, is stopped or computes outside MPI is waited on */
			const char *np = not_progressing(&j, m->rank);
			/* a small send matched by a posted receive that is still pending: its data
			 * was there to take, so the receiver has not run its library since */
			if (!np && !down && o->cls == SEND && o->length >= 0 && o->length <= EAGER_MAX && running_in_mpi(&j, o->rank) &&
			    running_in_mpi(&j, m->rank)) {
				add_unseen(&j, o, UNSEEN_MATCHED);
				continue;
			}
			if (np && !down && waited_on(&j, o)) {
				json_t *ref = op_ref(&j, o);
				json_object_set_new(ref, "peer_not_progressing", json_string(np));
				blocked[vo] = true;
				add_wait_edge(edges, o, m->rank, ref, NULL);
			}
			continue;
		}
		int u = o->cls == RECV ? arrival(&j, o) : -1;
		if (u >= 0) {
			/* the message is there: not waiting on its sender. A rank inside a blocking
			 * receive with its message there (in flight: not yet seen by its library) is
			 * not running: stopped, or starved of CPU */
			json_t *ref = op_ref(&j, o), *msg = op_ref(&j, &j.ops[u]);
			if (j.ops[u].in_flight)
				json_object_set_new(msg, "in_flight", json_true());
			json_object_set_new(ref, "message", msg);
			json_array_append_new(satisfied, ref);
			continue;
		}
		json_t *ref = op_ref(&j, o);
		/* the message is at the receiver, which posted no receive taking it */
		bool at_peer = o->cls == SEND && delivered(&j, o);
		if (at_peer)
			json_object_set_new(ref, "arrived", json_true());
		if (down) {
			json_object_set_new(ref, self->died ? "rank_died" : "rank_stopped", json_true());
			json_array_append_new(posted, ref);
			continue;
		}
		if (!waited_on(&j, o)) {
			json_array_append_new(posted, ref);
			continue;
		}
		/* A send both of whose ranks run inside MPI, pending although its message is not
		 * waiting for a receive (unseen.h's cases): one of the two has not run its library
		 * since; which one is decided once every wait is known (resolve_unseen). A small
		 * one arrived at the receiver (the sender has not seen it taken), or not at the
		 * receiver at all: not taken (in flight in its shared memory, which no core
		 * shows), or taken and completed there. A large one that is not at the receiver
		 * where its unexpected queue is listed: likewise (its rendezvous header would be
		 * there). */
		if (o->cls == SEND && o->peer != ANY && running_in_mpi(&j, o->rank) && running_in_mpi(&j, o->peer)) {
			int vp = node(&j, o->peer);
			bool small = o->length >= 0 && o->length <= EAGER_MAX;
			/* (a synchronous send waits for its receive whatever its size: MPI_Ssend
			 * is not taken so where the receiver's unexpected queue is not listed) */
			if (!at_peer && (j.calls[vp].unexpected_known || (small && !in_call(&j.calls[vo], "MPI_Ssend")))) {
				json_decref(ref);
				add_unseen(&j, o, UNSEEN_ABSENT);
				continue;
			}
		}
		/* a request whose status the DLL cannot tell, taken as pending: a guess */
		char why[224];
		const char *assume = NULL;
		if (o->pending_by_stack) {
			snprintf(why, sizeof(why), "rank %d's %s (peer %d, tag %d) is still pending: the DLL's status of it is "
				 "unreliable", o->rank, o->cls == SEND ? "send" : "receive", o->peer, o->tag);
			assume = why;
		}
		blocked[vo] = true;
		json_array_append_new(o->cls == SEND ? unmatched_s : unmatched_r, ref);
		if (o->peer != ANY) {
			add_wait_edge(edges, o, o->peer, op_ref(&j, o), assume);
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
	json_t *colls = blocked ? collectives(&j, edges, blocked) : json_array();
	if (blocked) {
		resolve_unseen(&j, edges, unseen);
		settle_passable(&j, edges);
		p2p_mismatches(&j, colls, edges);
		/* who waits, once the waits are final */
		memset(blocked, 0, (j.npresent + 1) * sizeof(bool));
		json_t *e;
		size_t x;
		json_array_foreach(edges, x, e)
			if (json_is_true(json_object_get(e, "waits")) && node(&j, (int)json_integer_value(json_object_get(e, "from"))) >= 0)
				blocked[node(&j, (int)json_integer_value(json_object_get(e, "from")))] = true;
	}
	json_t *no_state = json_array(), *failed = json_array(), *rank_problems = json_array(), *doc;
	size_t i;
	for (size_t k = 0; k < j.nops; k++)
		has_ops[node(&j, j.ops[k].rank)] = true;
	json_array_foreach(ranks, i, doc) {
		int r = j.rank_of ? j.rank_of[i] : -1;
		if (r < 0) {
			/* why the rank is unknown: the document's error, else its first problem (a
			 * missing type donor leaves a document with problems and no rank) */
			const char *why = j.why_not && j.why_not[i] ? j.why_not[i] :
					  json_string_value(json_object_get(doc, "error"));
			/* the missing types say what to do (--types); else the first problem */
			json_t *p0 = json_array_get(json_object_get(doc, "problems"), 0), *pk;
			size_t x;
			json_array_foreach(json_object_get(doc, "problems"), x, pk)
				if (!strcmp(json_string_value(json_object_get(pk, "item")) ?: "", "types"))
					p0 = pk;
			const char *pm = json_string_value(json_object_get(p0, "message"));
			json_t *e = json_pack("{s:s?}", "core", json_string_value(json_object_get(doc, "core")));
			if (why)
				json_object_set_new(e, "error", cq_json_str(why));
			else if (pm)
				json_object_set_new(e, "error", json_sprintf("the rank in MPI_COMM_WORLD is unknown: %s", pm));
			else
				json_object_set_new(e, "error", json_string("the rank in MPI_COMM_WORLD is unknown"));
			json_array_append_new(failed, e);
		} else {
			/* an analyzed rank's own missing pieces (a type of ob1's queues not found
			 * leaves its unexpected queue unknown): the job view is made without them */
			json_t *pk;
			size_t x;
			json_array_foreach(json_object_get(doc, "problems"), x, pk) {
				const char *item = json_string_value(json_object_get(pk, "item"));
				const char *msg = json_string_value(json_object_get(pk, "message"));
				json_array_append_new(rank_problems, json_pack("{s:i, s:o, s:o}", "rank", r, "item",
									       cq_json_str(item ? item : "?"), "message",
									       cq_json_str(msg ? msg : "?")));
			}
		}
		/* without its queues, nothing is known of its operations: not "none" */
		if (r >= 0 && has_ops && !has_ops[node(&j, r)] && !blocked[node(&j, r)] &&
		    !json_is_true(json_object_get(doc, "communicators_assumed")))
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
			int v = node(&j, to);
			if (v >= 0 && !blocked[v] && has_ops[v])
				all = false;
		}
		if (all)
			json_array_append_new(stalls, json_pack("{s:o, s:o, s:s}", "receive", op_ref(&j, o), "senders", who,
								"why", "every other member of the communicator is itself waiting or has no pending MPI operation"));
		else
			json_decref(who);
	}
	json_t *cycles = find_cycles(&j, edges, false), *possible = possible_cycles(&j, edges, cycles);
	json_t *blocked_ranks = json_array();
	for (size_t v = 0; blocked && v < j.npresent; v++)
		if (blocked[v])
			json_array_append_new(blocked_ranks, json_integer(j.present[v]));
	json_t *comms = json_array();
	for (size_t c = 0; c < j.ncomms; c++)
		json_array_append_new(comms, json_pack("{s:I, s:s, s:O}", "id", j.comms[c].id,
						       "name", raw_name(&j, (int)c), "group", j.comms[c].group));
	json_t *out = json_pack("{s:s, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
				"schema", "coreq-mqd-job/1", "nranks", (json_int_t)j.nranks,
				"deadlocks", cycles, "wildcard_stalls", stalls,
				"unmatched_sends", unmatched_s, "unmatched_receives", unmatched_r,
				"matched", matched, "blocked", blocked_ranks, "no_mpi_state", no_state,
				"failed", failed, "communicators", comms, "wait_for", edges);
	json_object_set_new(out, "problems", j.problems);
	json_object_set_new(out, "rank_problems", rank_problems);
	json_object_set_new(out, "posted", posted);
	json_object_set_new(out, "satisfied_receives", satisfied);
	json_object_set_new(out, "unseen_sends", unseen);
	json_object_set_new(out, "collectives", colls);
	json_object_set_new(out, "possible_deadlocks", possible);
	json_object_set_new(out, "calls", rank_calls(&j));
	json_t *tree = stack_tree(&j, cycles);
	if (tree)
		json_object_set_new(out, "stack_tree", tree);
	/* no rank analyzed: there is no job view to speak of, and the reason is the first
	 * rank's (never "no deadlock found") */
	if (!j.npresent && j.nranks) {
		json_t *f0 = json_array_get(failed, 0);
		json_object_set_new(out, "error", json_sprintf("no rank could be analyzed (%zu of %zu failed); the first, %s: %s",
							     json_array_size(failed), j.nranks,
							     json_string_value(json_object_get(f0, "core")) ?: "?",
							     json_string_value(json_object_get(f0, "error")) ?: "?"));
	}
	json_object_set(out, "ranks", ranks);
	/* the first thing said: on whom the waits end, and where those ranks are; the stack
	 * tree marks them (after the deadlock marks: the tree's marks keep their order) */
	json_t *verdict = j.npresent ? cq_job_verdict(out) : NULL;
	if (verdict) {
		/* the ranks of a cycle are marked as the deadlock already */
		struct cq_ranges outside;
		cq_ranges_init(&outside);
		json_t *b;
		json_array_foreach(json_object_get(verdict, "blocking"), i, b)
			if (!json_is_true(json_object_get(b, "cycle")))
				cq_error_destroy(cq_ranges_add(&outside, (uint64_t)json_integer_value(json_object_get(b, "rank")),
							       (uint64_t)json_integer_value(json_object_get(b, "rank"))));
		char *br = cq_ranges_count(&outside) ? cq_ranges_format(&outside) : NULL;
		if (tree && br)
			cq_error_destroy(cq_tree_mark(tree, "blocking", br));
		free(br);
		cq_ranges_deinit(&outside);
		json_object_set_new(out, "verdict", verdict);
	}
	free(blocked);
	free(has_ops);
	for (size_t k = 0; j.why_not && k < j.nranks; k++)
		free(j.why_not[k]);
	free(j.why_not);
	free(j.present);
	free(j.rank_of);
	free(j.calls);
	free(j.unseen);
	for (size_t c = 0; c < j.ncomms; c++)
		free(j.comms[c].label);
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

char *cq_waitfor_dot(json_t *job)
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
		/* the ranks the waits end on (the verdict's blocking set), outside a cycle */
		bool blocking = false;
		json_array_foreach(json_object_get(json_object_get(job, "verdict"), "blocking"), k, r)
			blocking |= json_integer_value(json_object_get(r, "rank")) == json_integer_value(rank);
		const char *color = json_object_get(in_cycle, key) ? "red" : blocking ? "purple" : blocked ? "orange" :
				    idle ? "gray" : "black";
		fprintf(f, "  r%s [label=\"rank %s\\npid %lld%s", key, key,
			(long long)json_integer_value(json_object_get(doc, "pid")), idle ? "\\nno MPI operation" : "");
		json_t *cl;
		json_array_foreach(json_object_get(job, "calls"), k, cl)
			if (json_integer_value(json_object_get(cl, "rank")) == json_integer_value(rank) &&
			    json_is_true(json_object_get(cl, "from_stacks"))) {
				fputs("\\n", f);
				dot_string(f, json_string_value(json_object_get(cl, "in")));
			}
		bool straggler = blocking && !json_object_get(in_cycle, key); /* a cycle's ranks are red already */
		fprintf(f, "%s\", color=%s%s];\n", straggler ? "\\nBLOCKING" : "", color, straggler ? ", penwidth=3" : "");
	}
	json_t *e;
	json_array_foreach(json_object_get(job, "wait_for"), i, e) {
		json_t *op = json_object_get(e, "op"), *tag = json_object_get(op, "tag");
		const char *call = json_string_value(json_object_get(op, "call"));
		char t[96];
		if (!strcmp(json_string_value(json_object_get(op, "kind")) ?: "", "collective") && call)
			snprintf(t, sizeof(t), "in %s", call); /* waits for a member outside its collective */
		else if (json_is_integer(tag))
			snprintf(t, sizeof(t), "%s tag %lld", json_string_value(json_object_get(op, "kind")) ?: "?",
				 (long long)json_integer_value(tag));
		else
			snprintf(t, sizeof(t), "%s tag any", json_string_value(json_object_get(op, "kind")) ?: "?");
		fprintf(f, "  r%lld -> r%lld [label=\"",
			(long long)json_integer_value(json_object_get(e, "from")),
			(long long)json_integer_value(json_object_get(e, "to")));
		dot_string(f, t);
		fputs("\\n", f);
		dot_string(f, json_string_value(json_object_get(op, "comm")));
		fprintf(f, "\"%s];\n", json_is_true(json_object_get(e, "wildcard")) ? ", style=dashed" :
			json_is_true(json_object_get(e, "assumed")) ? ", style=dotted" : "");
	}
	fprintf(f, "}\n");
	fclose(f);
	json_decref(in_cycle);
	return buf;
}
