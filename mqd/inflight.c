/* SPDX-License-Identifier: MIT */
/* Messages in flight in a rank's report (inflight.h). */
#include "inflight.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/text.h"
#include "mpich.h"
#include "nemesis.h"

/* MPI_COMM_WORLD's context id in the core (MPICH's builtin handle), or -1. */
static long long world_context(struct cq_core *core)
{
	uint64_t addr, ctx;
	const char *name;
	if (!cq_mpich_comm_handle(core, 0x44000000, &addr, &name) || !cq_mpich_comm_context(core, addr, &ctx))
		return -1;
	return (long long)ctx;
}

/* The communicator of @p doc whose id is context @p ctx (@p *internal: its collectives'
 * context, the id + 1), or NULL. */
static json_t *communicator(json_t *doc, unsigned ctx, bool *internal)
{
	json_t *c;
	size_t i;
	json_array_foreach(json_object_get(doc, "communicators"), i, c) {
		json_t *id = json_object_get(c, "id");
		if (!json_is_integer(id) || json_integer_value(id) < 0)
			continue;
		*internal = json_integer_value(id) + 1 == (json_int_t)ctx;
		if (json_integer_value(id) == (json_int_t)ctx || *internal)
			return c;
	}
	*internal = false;
	return NULL;
}

/* @p m as an operation of its communicator's unexpected queue. */
static void place(json_t *comm, const struct cq_nemesis_message *m, bool internal)
{
	json_t *queues = json_object_get(comm, "queues");
	if (!json_is_object(queues))
		json_object_set_new(comm, "queues", queues = json_object());
	json_t *q = json_object_get(queues, "unexpected");
	if (!json_is_object(q))
		json_object_set_new(queues, "unexpected", q = json_pack("{s:s}", "state", "listed"));
	json_t *ops = json_object_get(q, "operations");
	if (!json_is_array(ops))
		json_object_set_new(q, "operations", ops = json_array());
	char extra[120], from[80];
	snprintf(extra, sizeof(extra), "in flight: %s, in the rank's %s, not yet taken by MPI", m->kind, m->where);
	snprintf(from, sizeof(from), "the core: MPICH nemesis shared memory (%s)", m->where);
	json_t *op = json_pack("{s:s, s:i, s:i, s:i, s:I, s:b, s:[s], s:s}", "status", "pending", "peer", m->sender,
			       "peer_global", m->source, "tag", m->tag, "length", (json_int_t)m->length, "in_flight", 1,
			       "extra", extra, "from", from);
	if (op && internal)
		json_object_set_new(op, "internal", json_true());
	json_array_append_new(ops, op);
}

void cq_inflight_add(struct cq_core *core, json_t *doc)
{
	struct cq_nemesis_report r;
	struct cq_error *err = cq_nemesis_in_flight(core, &r);
	if (err && err->code == CQ_ERR_NOT_FOUND) {
		cq_error_destroy(err);
		cq_nemesis_report_free(&r);
		return; /* not MPICH's nemesis, or no types: nothing to say */
	}
	long long world = world_context(core);
	json_t *list = json_array();
	for (size_t i = 0; i < r.n; i++) {
		const struct cq_nemesis_message *m = &r.messages[i];
		bool internal = false;
		json_t *comm = communicator(doc, m->context, &internal), *name = NULL;
		if (comm)
			name = json_incref(json_object_get(comm, "name"));
		else if (world >= 0 && (m->context == world || m->context == world + 1)) {
			name = json_string("MPI_COMM_WORLD");
			internal = m->context == world + 1;
		}
		json_array_append_new(list, json_pack("{s:i, s:i, s:i, s:I, s:s, s:s, s:i, s:o, s:b, s:o}", "source", m->source,
						      "peer", m->sender, "tag", m->tag, "length", (json_int_t)m->length,
						      "kind", m->kind, "where", m->where, "context", (int)m->context,
						      "communicator", name ? name : json_null(), "internal", internal,
						      "cell", cq_json_hex(m->cell)));
		if (comm)
			place(comm, m, internal);
	}
	json_t *o = json_pack("{s:o, s:i, s:i, s:s}", "messages", list, "control_packets", (int)r.control, "unread_cells",
			      (int)r.unread, "from",
			      "the core: MPICH nemesis shared memory (fastboxes and the shared receive queue): sent to "
			      "this rank, not yet taken by its MPI library, in no queue a DLL lists");
	if (err) {
		json_object_set_new(o, "error", cq_json_str(err->message));
		json_t *p = json_object_get(doc, "problems");
		if (json_is_array(p))
			cq_json_problem(p, "messages in flight", "%s", err->message ? err->message : "read failed");
	}
	json_object_set_new(doc, "in_flight", o);
	cq_error_destroy(err);
	cq_nemesis_report_free(&r);
}
