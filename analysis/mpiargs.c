/* SPDX-License-Identifier: MIT */
/* A rank's MPI calls with what their parameters name, and the reads a snapshot makes for
 * the MPI view (mpiargs.h). */
/* first: <signal.h> (through the headers below) has a macro si_addr, a field of core.h */
#include "corelib/core.h"
#include "mpiargs.h"
#include "btdoc.h"
#include "crash.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "corelib/image.h"
#include "job/mpicall.h"
#include "mqd/commarg.h"
#include "mqd/host.h"
#include "mqd/inflight.h"
#include "mqd/mpich.h"
#include "stack/stack.h"

/* A string member of a document, as it is (NULL when absent). */
static const char *str(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* The frame of the C entry point of the MPI call whose outermost MPI frame is @p frame in
 * thread @p tid of @p bt: that frame for a call through the C binding, the PMPI_Barrier a
 * Fortran mpi_barrier_ calls; the outermost frame at or inside @p frame named PMPI_* or
 * MPI_*, -1 when none. */
static json_int_t c_entry_frame(const json_t *bt, json_int_t tid, json_int_t frame)
{
	json_t *t, *f;
	size_t i, k;
	json_array_foreach(json_object_get(bt, "threads"), i, t) {
		if (json_integer_value(json_object_get(t, "tid")) != tid)
			continue;
		json_int_t best = -1;
		json_array_foreach(json_object_get(t, "frames"), k, f) {
			const char *fn = str(f, "function");
			if ((json_int_t)k > frame)
				break;
			if (fn && (!strncmp(fn, "MPI_", 4) || !strncmp(fn, "PMPI_", 5)))
				best = (json_int_t)k;
		}
		return best;
	}
	return -1;
}

/* For each thread in a collective, the communicator it was called on (mqd/commarg.h), read
 * by a walk of that thread to its MPI call (the registers the value is in exist only
 * during a walk), from the first of:
 *   1. the C entry point's own parameter `comm` (Open MPI's name for it in every C
 *      binding), where libmpi's DWARF is found (its debug file: --debug-dir, debuginfod);
 *      a Fortran call's too, through the PMPI_ function it calls;
 *   2. the argument of the call the program's frame makes, from its call site (the
 *      program built with -g and optimization; C binding only: Fortran passes a handle's
 *      address).
 * What keeps it unknown is said in the call ("communicator_unknown", both reasons). */
static void call_communicators(struct cq_core *core, const json_t *bt, json_t *calls, const char *no_types)
{
	json_t *c;
	size_t i;
	json_array_foreach(calls, i, c) {
		const char *call = str(c, "call"), *fn = str(c, "function");
		int arg = cq_mpi_call_comm_arg(call);
		json_int_t frame = json_integer_value(json_object_get(c, "frame"));
		json_int_t tid = json_integer_value(json_object_get(c, "tid"));
		if (arg < 0 || !fn || frame < 0 || frame > 100000)
			continue;
		bool c_binding = !strncmp(fn, "MPI_", 4) || !strncmp(fn, "PMPI_", 5);
		json_int_t entry = c_entry_frame(bt, tid, frame);
		if (!c_binding && entry < 0)
			continue;
		struct cq_stack_arg a = {.tid = (int32_t)tid, .frame = c_binding ? (unsigned)frame + 1 : UINT_MAX,
					 .arg = (unsigned)arg, .param = entry >= 0 ? "comm" : NULL,
					 .param_frame = (unsigned)entry};
		struct cq_stack_options opt = {.tid = a.tid, .max_frames = (unsigned)frame + 2, .arg = &a};
		struct cq_stacks *st = NULL;
		struct cq_error *err = cq_stack_walk_frames(core, &opt, &st);
		cq_stacks_free(st);
		if (err) {
			json_object_set_new(c, "communicator_unknown", cq_json_str(err->message));
			cq_error_destroy(err);
		} else if (a.param_found) {
			json_object_set_new(c, "communicator", cq_mqd_call_communicator(core, a.param_value, "parameter",
										       no_types));
		} else if (a.found) {
			json_object_set_new(c, "communicator", cq_mqd_call_communicator(core, a.value, "argument", no_types));
		} else {
			char why[480];
			snprintf(why, sizeof(why), "%s%s%s%s", a.param ? "libmpi's parameter: " : "",
				 a.param ? (a.param_why[0] ? a.param_why : "its frame was not reached") : "",
				 a.param && c_binding ? "; the caller's argument: " : "",
				 c_binding ? (a.why[0] ? a.why : "the calling frame was not reached") : "");
			json_object_set_new(c, "communicator_unknown", cq_json_str(why));
		}
	}
}

/* Parameter @p name of the function of frame @p entry of thread @p tid (the C entry point,
 * from libmpi's DWARF: its location at the frame's pc), by a walk to it; with @p argno
 * other than UINT_MAX, else what the caller's call site says it passed as that argument
 * (DW_AT_call_value: a value the callee keeps only as its entry value). True with *@p value. */
static bool entry_argument(struct cq_core *core, json_int_t tid, json_int_t entry, const char *name, unsigned argno,
			   uint64_t *value)
{
	bool caller = argno != UINT_MAX;
	struct cq_stack_arg a = {.tid = (int32_t)tid, .frame = caller ? (unsigned)entry + 1 : UINT_MAX, .arg = argno,
				 .param = name, .param_frame = (unsigned)entry};
	struct cq_stack_options opt = {.tid = a.tid, .max_frames = (unsigned)entry + 3, .arg = &a};
	struct cq_stacks *st = NULL;
	struct cq_error *err = cq_stack_walk_frames(core, &opt, &st);
	cq_stacks_free(st);
	cq_error_destroy(err);
	*value = a.param_found ? a.param_value : a.value;
	return !err && (a.param_found || (caller && a.found));
}

/* MPICH's MPI_Waitall: the requests it waits on, from its arguments (PMPI_Waitall's
 * `count` and `array_of_requests`: libmpi's DWARF, else the call site's values in the
 * program's), each handle's MPIR_Request read (mqd/mpich.h): "requests" in the call, the
 * pending ones, [{kind, peer, tag, communicator}] with MPI_COMM_WORLD named by its context
 * id. What the job view takes when no message queue could be read (a 32-bit DLL and a
 * 64-bit core). */
static void waitall_requests(struct cq_core *core, json_t *c, json_int_t tid, json_int_t entry)
{
	uint64_t count, handles, world, wctx;
	const char *wname;
	if (!entry_argument(core, tid, entry, "count", 0, &count) ||
	    !entry_argument(core, tid, entry, "array_of_requests", 1, &handles) || (int32_t)count <= 0 ||
	    count > 4096 || !cq_mpich_comm_handle(core, 0x44000000u, &world, &wname) ||
	    !cq_mpich_comm_context(core, world, &wctx))
		return;
	json_t *reqs = json_array();
	for (uint64_t k = 0; k < count; k++) {
		uint64_t h, at;
		struct cq_mpich_request r;
		struct cq_error *err = cq_core_read_uint(core, handles + k * 4, 4, &h); /* MPI_Request: an int */
		bool ok = !err && cq_mpich_request_handle(core, h, &at) && cq_mpich_request(core, at, &r);
		cq_error_destroy(err);
		if (!ok || !r.pending)
			continue;
		json_t *comm = r.context == wctx ? json_pack("{s:s}", "name", "MPI_COMM_WORLD")
						 : json_pack("{s:I}", "id", (json_int_t)r.context);
		json_array_append_new(reqs, json_pack("{s:s, s:o, s:o, s:o}", "kind", r.send ? "send" : "receive", "peer",
						      r.peer == -2 ? json_string("any") : json_integer(r.peer), "tag",
						      r.tag == -1 ? json_string("any") : json_integer(r.tag), "communicator", comm));
	}
	json_object_set_new(c, "requests", reqs);
}

/* For each thread in a blocking point-to-point call (MPI_Send, MPI_Ssend, MPI_Recv ...),
 * its peer and tag from the C entry point's parameters (`dest` or `source`, `tag`: the
 * MPI standard's names, which Open MPI's and MPICH's bindings use), where libmpi's DWARF
 * has them: "peer" and "tag" in the call ("any" for MPI_ANY_SOURCE and MPI_ANY_TAG). What
 * a blocking call waits on is then known even where the DLL lists no operation for it
 * (MPICH's lists the requests of non-blocking sends only, not a blocking MPI_Send's).
 * MPICH's MPI_Waitall gets its requests (waitall_requests), where its types can be had
 * (not @p no_types). */
static void call_peers(struct cq_core *core, const json_t *bt, json_t *calls, const char *no_types)
{
	json_t *c;
	size_t i;
	json_array_foreach(calls, i, c) {
		const char *w = str(c, "waits") ?: "";
		bool send = !strcmp(w, "send"), recv = !strcmp(w, "receive");
		json_int_t frame = json_integer_value(json_object_get(c, "frame"));
		json_int_t tid = json_integer_value(json_object_get(c, "tid"));
		if (!strcmp(w, "requests") && !strcmp(str(c, "call") ?: "", "MPI_Waitall") && frame >= 0 &&
		    frame <= 100000 && cq_mpich_library(core)) {
			json_int_t entry = c_entry_frame(bt, tid, frame);
			if (entry >= 0 && !no_types)
				waitall_requests(core, c, tid, entry);
			continue;
		}
		if ((!send && !recv) || frame < 0 || frame > 100000)
			continue;
		json_int_t entry = c_entry_frame(bt, tid, frame);
		uint64_t peer, tag;
		if (entry < 0 || !entry_argument(core, tid, entry, send ? "dest" : "source", UINT_MAX, &peer) ||
		    !entry_argument(core, tid, entry, "tag", UINT_MAX, &tag))
			continue;
		/* C ints, signed; MPI_ANY_SOURCE and MPI_PROC_NULL are the library's own numbers
		 * (MPICH: -2 and -1, Open MPI: -1 and -2; mqd/mpich.h), MPI_ANY_TAG is -1 */
		int32_t p = (int32_t)(uint32_t)peer, t = (int32_t)(uint32_t)tag;
		bool mpich = cq_mpich_library(core);
		if (p == (mpich ? -1 : -2))
			continue; /* MPI_PROC_NULL: such a call does not block */
		json_object_set_new(c, "peer", p == (mpich ? -2 : -1) ? json_string("any") : json_integer(p));
		json_object_set_new(c, "tag", t == -1 ? json_string("any") : json_integer(t));
		uint64_t comm;
		if (!json_object_get(c, "communicator") && entry_argument(core, tid, entry, "comm", UINT_MAX, &comm))
			json_object_set_new(c, "communicator", cq_mqd_call_communicator(core, comm, "parameter", no_types));
	}
}

/* A blocking send the rank's queues do not list (MPICH's DLL lists only non-blocking
 * sends) added to its communicator's sends from the call's parameters (call_peers): the
 * operation the thread is blocked in, pending by definition, "from" saying where it came
 * from. Only where the communicator and its group are known. */
static void stack_sends(json_t *doc)
{
	json_t *c, *comm, *op;
	size_t i, k, m;
	json_array_foreach(json_object_get(doc, "mpi_calls"), i, c) {
		json_t *arg = json_object_get(c, "communicator");
		if (strcmp(str(c, "waits") ?: "", "send") || !json_is_integer(json_object_get(c, "peer")) || !arg)
			continue;
		json_int_t peer = json_integer_value(json_object_get(c, "peer")), tag = json_integer_value(json_object_get(c, "tag"));
		json_array_foreach(json_object_get(doc, "communicators"), k, comm) {
			bool same = str(arg, "name") ? !strcmp(str(comm, "name") ?: "", str(arg, "name"))
				    : json_is_integer(json_object_get(arg, "id")) &&
					      json_equal(json_object_get(arg, "id"), json_object_get(comm, "id"));
			json_t *group = json_object_get(comm, "group"), *sends = json_object_get(json_object_get(comm, "queues"), "sends");
			if (!same || peer < 0 || (size_t)peer >= json_array_size(group) || !json_is_object(sends))
				continue;
			bool listed = false;
			json_array_foreach(json_object_get(sends, "operations"), m, op)
				listed |= json_equal(json_object_get(op, "peer"), json_object_get(c, "peer")) &&
					  json_equal(json_object_get(op, "tag"), json_object_get(c, "tag"));
			if (listed)
				break;
			json_t *ops = json_object_get(sends, "operations");
			if (!json_is_array(ops)) {
				ops = json_array();
				json_object_set_new(sends, "operations", ops);
			}
			char from[96];
			snprintf(from, sizeof(from), "stack: %s's parameters (dest, tag, comm)", str(c, "function") ?: "the call");
			json_array_append_new(ops, json_pack("{s:s, s:I, s:O, s:I, s:n, s:s}", "status", "pending", "peer", peer,
							     "peer_global", json_array_get(group, (size_t)peer), "tag", tag,
							     "length", "from", from));
			break;
		}
	}
}

/* The rank's stacks (coreq-bt/2) and the MPI call each thread is in (job/mpicall.h) into
 * its document: what the job view takes its waits from. A walk that fails is said, and
 * the job view then takes every pending operation as waited on. With @p no_types (why the
 * MPI library's types cannot be had: mqd/host.h) no type is searched for. */
static void add_stacks(const struct cq_rank_analysis *o, struct cq_core *core, json_t *doc, const char *no_types)
{
	json_t *bt = NULL;
	json_t *crash = cq_crash_json(core);
	if (crash)
		json_object_set_new(doc, "crash", crash);
	/* loop variables: where ranks stopped at one line stand in their loops (verdict.h) */
	struct cq_stack_options opt = {.max_frames = o->max_frames, .loop_variables = true};
	struct cq_error *err = cq_bt_document(core, &opt, false, &bt);
	if (err) {
		json_object_set_new(doc, "stacks_error", cq_json_str(err->message));
		cq_error_destroy(err);
		return;
	}
	/* a loop-variable search its budget cut short (stack/internal.h) is the rank's problem:
	 * the job view's ordering of ranks at one line may lack those loops */
	json_t *problems = json_object_get(doc, "problems"), *p;
	size_t i;
	json_array_foreach(json_object_get(bt, "problems"), i, p)
		if (json_is_array(problems) && !strcmp(str(p, "item") ?: "", "loop variables"))
			json_array_append(problems, p);
	json_t *calls = cq_mpi_calls(bt);
	call_communicators(core, bt, calls, no_types);
	call_peers(core, bt, calls, no_types);
	json_object_set_new(doc, "mpi_calls", calls);
	json_object_set_new(doc, "stacks", bt);
	stack_sends(doc);
}

void cq_mqd_add_stacks(const struct cq_rank_analysis *o, struct cq_core *core, json_t *doc)
{
	add_stacks(o, core, doc, NULL);
}

bool cq_mqd_snapshot_reads(const struct cq_rank_analysis *o, struct cq_core *core, char *why, size_t why_size)
{
	struct cq_symref ref;
	struct cq_error *err = cq_core_lookup(core, "MPIR_dll_name", NULL, &ref);
	*why = 0;
	if (err) {
		snprintf(why, why_size, "%s", err->message ? err->message : "not an MPI process");
		cq_error_destroy(err);
		return false;
	}
	/* without the library's types the DLL reads no queue and no communicator's id is read:
	 * their search, seconds for a job held meanwhile, is not made (mqd/host.h) */
	bool typed = cq_mqd_types_available(core, why, why_size), view = false;
	json_t *doc = NULL;
	if (typed) {
		if (!(err = cq_mqd_report(core, o->mqd, &doc)))
			view = true;
		else
			snprintf(why, why_size, "%s", err->message ? err->message : "the message queues could not be read");
		cq_error_destroy(err);
		json_decref(doc);
	}
	/* MPICH's messages in flight in the node's shared memory (mqd/inflight.h, which needs
	 * its types), and what the MPI calls' parameters name (a communicator handle's object,
	 * MPI_Waitall's requests): their pages too, so the job view of the snapshots reads what
	 * it would read of the process */
	if ((doc = json_pack("{s:[], s:[]}", "communicators", "problems"))) {
		if (typed)
			cq_inflight_add(core, doc);
		add_stacks(o, core, doc, typed ? NULL : why);
	}
	json_decref(doc);
	return view;
}

