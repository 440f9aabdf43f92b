/* SPDX-License-Identifier: MIT */
/* The child side of an MQD run: load the DLL, check that it can address the target, walk
 * communicators and their three queues, write one JSON record per line. Every call into
 * the DLL is announced first (cq_isolate_calling), so a crash or hang names it. */
#include <dlfcn.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "callbacks.h"
#include "corelib/image.h"
#include "plugin/isolate.h"
#include "corelib/types.h"
#include "query.h"
#include "mpich.h"

#define MAX_COMMS 65536     /* communicators listed at most (a DLL looping is cut) */
#define MAX_OPS 100000      /* operations per queue */
#define MAX_GROUP (1 << 22) /* ranks per communicator group */

struct q {
	struct cq_core *core;
	struct cq_mqs_api api;
	unsigned width;
	FILE *out;
	char call[200];
	const struct cq_isolate_deaths *skip;
	cq_mqs_image *image;
	cq_mqs_process *process;
	/* the communicator whose queues are being listed: its members' world ranks (NULL when
	 * unknown), for the operations whose DLL gives no world rank (MPICH's gives -1) */
	const json_t *group;
};

static void emit(struct q *q, json_t *rec)
{
	char *text = json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER);
	cq_isolate_record(q->out, text);
	free(text);
	json_decref(rec);
}

/* Announce a DLL call; true if an earlier run died in this very call (then skipped). */
static bool calling(struct q *q, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool calling(struct q *q, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(q->call, sizeof(q->call), fmt, ap);
	va_end(ap);
	return cq_isolate_calling_unless_died(q->skip, q->call);
}

/* Not an mqs result code: the call was skipped because an earlier run died in it. */
#define RC_SKIPPED (-1000)
#define CALL(q, call, ...) (calling(q, __VA_ARGS__) ? RC_SKIPPED : (call))

/* The DLL's text for @p rc ("" if it has none). */
static json_t *rc_json(struct q *q, int rc)
{
	if (rc == RC_SKIPPED)
		return cq_json_str("skipped: the DLL died in this call in an earlier run");
	if (rc == CQ_MQS_NO_INFORMATION)
		return cq_json_str("mqs_no_information");
	if (rc == CQ_MQS_END_OF_LIST)
		return cq_json_str("mqs_end_of_list");
	char *s = NULL;
	if (!calling(q, "mqs_dll_error_string(%d)", rc))
		s = q->api.mqs_dll_error_string(rc);
	char buf[256];
	snprintf(buf, sizeof(buf), "%d: %.200s", rc, s ? s : "(no text)");
	return cq_json_str(buf);
}

/* The DLL's printf-style message with the image (or process) name put in. */
static json_t *message_json(const char *msg, const char *name)
{
	if (!msg)
		return json_null();
	char buf[512];
	const char *p = strstr(msg, "%s");
	if (p && !strstr(p + 2, "%") && !memchr(msg, '%', (size_t)(p - msg)))
		snprintf(buf, sizeof(buf), "%.*s%s%s", (int)(p - msg), msg, name, p + 2);
	else
		snprintf(buf, sizeof(buf), "%s", msg);
	return cq_json_str(buf);
}

static json_t *hex(uint64_t v)
{
	char b[24];
	snprintf(b, sizeof(b), "0x%" PRIx64, v);
	return cq_json_str(b);
}

/* One operation, from the DLL's struct of either width. */
struct op {
	int status, tag_wild, system_buffer;
	int64_t desired_local_rank, desired_global_rank, desired_tag, desired_length;
	uint64_t buffer;
	int64_t actual_local_rank, actual_global_rank, actual_tag, actual_length;
	char extra_text[5][64];
};

#define COPY_OP(dst, src)                                                                    \
	do {                                                                                 \
		(dst)->status = (src)->status;                                               \
		(dst)->tag_wild = (src)->tag_wild;                                           \
		(dst)->system_buffer = (src)->system_buffer;                                 \
		(dst)->desired_local_rank = (src)->desired_local_rank;                       \
		(dst)->desired_global_rank = (src)->desired_global_rank;                     \
		(dst)->desired_tag = (src)->desired_tag;                                     \
		(dst)->desired_length = (src)->desired_length;                               \
		(dst)->buffer = (src)->buffer;                                               \
		(dst)->actual_local_rank = (src)->actual_local_rank;                         \
		(dst)->actual_global_rank = (src)->actual_global_rank;                       \
		(dst)->actual_tag = (src)->actual_tag;                                       \
		(dst)->actual_length = (src)->actual_length;                                 \
		memcpy((dst)->extra_text, (src)->extra_text, sizeof((dst)->extra_text));     \
	} while (0)

/* Known Open MPI 4.1 DLL bug: ranks and tags are C ints in the target, but the DLL puts
 * them into its (wider) words without sign extension: MPI_ANY_SOURCE (-1) comes back as
 * 4294967295. coreq restores the sign and says so. Lengths are not touched (a length
 * may really be that large). */
static int64_t fix_int(struct q *q, int64_t v, json_t *flags, const char *field)
{
	if (q->width != 8 || q->core->target->ctypes[CQ_CTYPE_INT].size != 4)
		return v;
	if (v >= INT64_C(0x80000000) && v <= INT64_C(0xffffffff)) {
		if (flags) {
			char b[200];
			snprintf(b, sizeof(b), "%s: the DLL did not sign-extend the 32-bit int %" PRId32 " (it gave %" PRId64 "); coreq corrected it",
				 field, (int32_t)(uint32_t)v, v);
			json_array_append_new(flags, cq_json_str(b));
		}
		return (int32_t)(uint32_t)v;
	}
	return v;
}

/* A rank: a number, or "any" for MPI_ANY_SOURCE (-1 in Open MPI, reported as such). */
static json_t *rank_json(int64_t v)
{
	return v < 0 ? cq_json_str("any") : json_integer(v);
}

/* The world rank of an operation's peer: the DLL's @p global, or where the DLL gives -1
 * for a peer it names by local rank @p local (MPICH's DLL does for every operation), the
 * member of the communicator's group at @p local, flagged; null when that group is
 * unknown: -1 then means "not known", not MPI_ANY_SOURCE. */
static json_t *peer_global(struct q *q, int64_t local, int64_t global, json_t *flags, const char *which)
{
	if (global >= 0 || local < 0)
		return rank_json(global);
	const json_t *m = json_array_get(q->group, (size_t)local);
	char b[160];
	if (json_is_integer(m)) {
		snprintf(b, sizeof(b), "%s_global_rank: the DLL gave -1 for local rank %" PRId64 "; the world rank is the "
			 "communicator's member %" PRId64, which, local, local);
		json_array_append_new(flags, cq_json_str(b));
		return json_integer(json_integer_value(m));
	}
	snprintf(b, sizeof(b), "%s_global_rank: the DLL gave -1 for local rank %" PRId64 " and the communicator's "
		 "group is unknown: the world rank is not known", which, local);
	json_array_append_new(flags, cq_json_str(b));
	return json_null();
}

static json_t *op_json(struct q *q, const struct op *o, int cls)
{
	static const char *const status[] = {"pending", "matched", "complete"};
	json_t *j = json_object(), *flags = json_array();
	json_object_set_new(j, "status", o->status >= 0 && o->status < 3 ?
				 cq_json_str(status[o->status]) : json_integer(o->status));
	int64_t lr = fix_int(q, o->desired_local_rank, flags, "desired_local_rank");
	int64_t gr = fix_int(q, o->desired_global_rank, flags, "desired_global_rank");
	int64_t tag = o->tag_wild ? 0 : fix_int(q, o->desired_tag, flags, "desired_tag");
	json_object_set_new(j, "peer", rank_json(lr));
	json_object_set_new(j, "peer_global", peer_global(q, lr, gr, flags, "desired"));
	json_object_set_new(j, "tag", o->tag_wild ? cq_json_str("any") : json_integer(tag));
	/* MPI's tags are nonnegative (MPI-4.0 3.2.3): a negative one other than MPI_ANY_TAG is
	 * the library's own, a collective's point-to-point traffic (coreq's DLL lists them) */
	if (!o->tag_wild && tag < 0)
		json_object_set_new(j, "internal", json_true());
	json_object_set_new(j, "length", json_integer(o->desired_length));
	json_object_set_new(j, "buffer", hex(o->buffer));
	json_object_set_new(j, "system_buffer", json_boolean(o->system_buffer));
	/* the actual_* fields mean something only for sends and matched messages */
	if (cls == CQ_MQS_PENDING_SENDS || o->status >= CQ_MQS_ST_MATCHED) {
		json_t *a = json_object();
		json_object_set_new(a, "peer", rank_json(fix_int(q, o->actual_local_rank, flags, "actual_local_rank")));
		json_object_set_new(a, "peer_global",
				    peer_global(q, fix_int(q, o->actual_local_rank, NULL, "actual_local_rank"),
						fix_int(q, o->actual_global_rank, flags, "actual_global_rank"), flags, "actual"));
		json_object_set_new(a, "tag", json_integer(fix_int(q, o->actual_tag, flags, "actual_tag")));
		json_object_set_new(a, "length", json_integer(o->actual_length));
		json_object_set_new(j, "actual", a);
	}
	json_t *extra = json_array();
	for (int i = 0; i < 5; i++) {
		char t[65];
		memcpy(t, o->extra_text[i], 64);
		t[64] = 0;
		if (t[0])
			json_array_append_new(extra, cq_json_str(t));
	}
	json_object_set_new(j, "extra", extra);
	if (json_array_size(flags))
		json_object_set_new(j, "flags", flags);
	else
		json_decref(flags);
	return j;
}

/* The operations of class @p cls in the current communicator: {"state": "listed",
 * "operations": [...]}, or "no_information" (the DLL cannot tell: distinct from an empty
 * list), or "error". */
static json_t *queue_json(struct q *q, int cls, const char *comm)
{
	static const char *const names[] = {"sends", "receives", "unexpected"};
	json_t *j = json_object();
	int rc = CALL(q, q->api.mqs_setup_operation_iterator(q->process, cls),
		      "mqs_setup_operation_iterator(%s, %s)", comm, names[cls]);
	if (rc == CQ_MQS_NO_INFORMATION) {
		json_object_set_new(j, "state", cq_json_str("no_information"));
		return j;
	}
	if (rc != CQ_MQS_OK) {
		json_object_set_new(j, "state", cq_json_str("error"));
		json_object_set_new(j, "error", rc_json(q, rc));
		return j;
	}
	json_t *ops = json_array();
	for (int n = 0;; n++) {
		if (n >= MAX_OPS) {
			json_object_set_new(j, "cut", cq_json_str("more than 100000 operations: the rest are not listed"));
			break;
		}
		union {
			cq_mqs_pending_operation4 w4;
			cq_mqs_pending_operation8 w8;
		} raw;
		memset(&raw, 0, sizeof(raw));
		rc = CALL(q, q->api.mqs_next_operation(q->process, &raw), "mqs_next_operation(%s, %s, %d)",
			  comm, names[cls], n);
		if (rc != CQ_MQS_OK) {
			if (rc != CQ_MQS_END_OF_LIST && rc != CQ_MQS_NO_INFORMATION)
				json_object_set_new(j, "error", rc_json(q, rc));
			break;
		}
		struct op o;
		if (q->width == 4)
			COPY_OP(&o, &raw.w4);
		else
			COPY_OP(&o, &raw.w8);
		json_array_append_new(ops, op_json(q, &o, cls));
	}
	json_object_set_new(j, "state", cq_json_str("listed"));
	json_object_set_new(j, "operations", ops);
	return j;
}

/* Without mqs_get_comm_group: the members MPI itself gives a communicator of @p name and
 * @p size into @p j ("group", "group_from"): MPI_COMM_WORLD's (and MPICH's internal copy
 * of it, MPI_ICOMM_WORLD) are the world ranks in order, MPI_COMM_SELF's the process
 * itself (its world rank: MPI_COMM_WORLD's local rank, which MPICH lists first). */
static bool semantic_group(struct q *q, json_t *j, const char *name, int64_t size)
{
	json_t *g = json_array();
	if (!strcmp(name, "MPI_COMM_WORLD") || !strcmp(name, "MPI_ICOMM_WORLD")) {
		for (int64_t i = 0; i < size; i++)
			json_array_append_new(g, json_integer(i));
	} else if (!strcmp(name, "MPI_COMM_SELF") && size == 1 && q->process->global_rank >= 0) {
		json_array_append_new(g, json_integer(q->process->global_rank));
	} else {
		/* another of MPICH's: its members from ch3's connection table (mpich.h) */
		int *ranks = size > 0 && size <= MAX_GROUP ? calloc((size_t)size, sizeof(int)) : NULL;
		const char *addr = json_string_value(json_object_get(j, "address"));
		bool ok = ranks && addr && cq_mpich_comm_group(q->core, strtoull(addr, NULL, 16), size, ranks);
		for (int64_t i = 0; ok && i < size; i++)
			json_array_append_new(g, json_integer(ranks[i]));
		free(ranks);
		if (!ok) {
			json_decref(g);
			return false;
		}
		json_object_set_new(j, "group", g);
		json_object_set_new(j, "group_from", json_string("the core: MPIR_Comm's ch3 connection table (vcr_table[i]->pg_rank)"));
		return true;
	}
	json_object_set_new(j, "group", g);
	json_object_set_new(j, "group_from", json_string("MPI (the DLL has no mqs_get_comm_group)"));
	return true;
}

static void query_communicators(struct q *q)
{
	int rc = CALL(q, q->api.mqs_update_communicator_list(q->process), "mqs_update_communicator_list");
	if (rc != CQ_MQS_OK) {
		emit(q, json_pack("{s:s, s:s, s:o}", "record", "error", "message",
				  "mqs_update_communicator_list failed", "rc", rc_json(q, rc)));
		return;
	}
	rc = CALL(q, q->api.mqs_setup_communicator_iterator(q->process), "mqs_setup_communicator_iterator");
	for (int n = 0; rc == CQ_MQS_OK && n < MAX_COMMS; n++) {
		char what[64];
		snprintf(what, sizeof(what), "communicator %d", n);
		union {
			cq_mqs_communicator4 w4;
			cq_mqs_communicator8 w8;
		} c;
		memset(&c, 0, sizeof(c));
		rc = CALL(q, q->api.mqs_get_communicator(q->process, &c), "mqs_get_communicator(%s)", what);
		if (rc != CQ_MQS_OK)
			break;
		uint64_t id = q->width == 4 ? c.w4.unique_id : c.w8.unique_id, ctx;
		/* MPICH's DLL names a communicator by its address, which differs between ranks:
		 * its context id is the same in every member (mqd/mpich.h) */
		bool mpich = cq_mpich_comm_context(q->core, id, &ctx);
		json_t *cflags = json_array();
		int64_t rank = fix_int(q, q->width == 4 ? c.w4.local_rank : c.w8.local_rank, cflags, "local_rank");
		int64_t size = q->width == 4 ? c.w4.size : c.w8.size;
		char name[65];
		memcpy(name, q->width == 4 ? c.w4.name : c.w8.name, 64);
		name[64] = 0;
		json_t *j = json_object();
		json_object_set_new(j, "record", cq_json_str("communicator"));
		json_object_set_new(j, "index", json_integer(n));
		json_object_set_new(j, "id", json_integer((json_int_t)(mpich ? ctx : id)));
		if (mpich) {
			char a[24];
			snprintf(a, sizeof(a), "0x%" PRIx64, id);
			json_object_set_new(j, "address", json_string(a));
			json_object_set_new(j, "id_from", json_string("context_id (MPIR_Comm at the DLL's unique_id)"));
		}
		json_object_set_new(j, "name", cq_json_str(name));
		json_object_set_new(j, "size", json_integer(size));
		json_object_set_new(j, "local_rank", json_integer(rank));
		/* the process's world rank, for mqs_get_global_rank from here on */
		if (!strcmp(name, "MPI_COMM_WORLD") && rank >= 0 && rank <= INT32_MAX)
			q->process->global_rank = (int)rank;
		if (json_array_size(cflags))
			json_object_set_new(j, "flags", json_incref(cflags));
		json_decref(cflags);
		if (size == 0) {
			json_object_set_new(j, "group", json_array());
		} else if (size > 0 && size <= MAX_GROUP) {
			int *ranks = q->api.mqs_get_comm_group ? calloc((size_t)size, sizeof(int)) : NULL;
			int grc = ranks ? CALL(q, q->api.mqs_get_comm_group(q->process, ranks),
					       "mqs_get_comm_group(%s)", what) : RC_SKIPPED;
			if (grc == CQ_MQS_OK) {
				json_t *g = json_array();
				for (int64_t i = 0; i < size; i++)
					json_array_append_new(g, json_integer(ranks[i]));
				json_object_set_new(j, "group", g);
			} else if (!q->api.mqs_get_comm_group && semantic_group(q, j, name, size)) {
				/* MPI_COMM_WORLD's and MPI_COMM_SELF's members follow from MPI itself */
			} else {
				json_object_set_new(j, "group", json_null());
				json_object_set_new(j, "group_error",
						    q->api.mqs_get_comm_group ? rc_json(q, grc)
						    : cq_json_str("the DLL has no mqs_get_comm_group (optional)"));
			}
			free(ranks);
		} else {
			json_object_set_new(j, "group", json_null());
			json_object_set_new(j, "group_error", cq_json_str("implausible communicator size"));
		}
		snprintf(what, sizeof(what), "communicator %d (%.40s)", n, name);
		q->group = json_object_get(j, "group");
		json_t *queues = json_object();
		json_object_set_new(queues, "sends", queue_json(q, CQ_MQS_PENDING_SENDS, what));
		json_object_set_new(queues, "receives", queue_json(q, CQ_MQS_PENDING_RECEIVES, what));
		json_object_set_new(queues, "unexpected", queue_json(q, CQ_MQS_UNEXPECTED_MESSAGES, what));
		json_object_set_new(j, "queues", queues);
		q->group = NULL;
		emit(q, j);
		rc = CALL(q, q->api.mqs_next_communicator(q->process), "mqs_next_communicator(%d)", n);
	}
}

static void emit_callbacks(struct q *q, const struct cq_mqd_stats *s)
{
	json_t *sym = json_array(), *types = json_array(), *fields = json_array();
	for (unsigned i = 0; i < s->nmissing_symbols; i++)
		json_array_append_new(sym, cq_json_str(s->missing_symbols[i]));
	for (unsigned i = 0; i < s->nmissing_types; i++)
		json_array_append_new(types, cq_json_str(s->missing_types[i]));
	for (unsigned i = 0; i < s->nmissing_fields; i++)
		json_array_append_new(fields, cq_json_str(s->missing_fields[i]));
	emit(q, json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o, s:o, s:s}", "record", "callbacks",
			  "fetches", (json_int_t)s->fetches, "fetch_faults", (json_int_t)s->fetch_faults,
			  "lookups", (json_int_t)s->lookups, "types", (json_int_t)s->types,
			  "allocs", (json_int_t)s->allocs, "refused_allocs", (json_int_t)s->refused_allocs,
			  "missing_symbols", sym, "missing_types", types, "missing_fields", fields,
			  "type_sources", cq_core_type_sources(q->core)));
}

static int finish(struct q *q)
{
	cq_isolate_calling(NULL);
	emit(q, json_pack("{s:s}", "record", "done"));
	return 0;
}

static int fail(struct q *q, json_t *rec)
{
	emit(q, rec);
	return finish(q);
}

int cq__mqd_child(void *arg, const struct cq_isolate_deaths *skip, FILE *out)
{
	const struct cq__mqd_job *job = arg;
	struct q q = {.core = job->core, .out = out, .skip = skip};
	struct cq_mqd_stats stats = {.log = stderr};
	calling(&q, "dlopen(%s)", job->dll);
	const char *why;
	void *dl = cq_plugin_load_dlopen(job->load, &why);
	if (!dl)
		return fail(&q, json_pack("{s:s, s:o}", "record", "error", "message", cq_json_str(why)));
	json_t *missing = json_array();
	/* mqs_get_comm_group is optional: MPICH's DLL (4.0.2) has none; a communicator's group
	 * is then unknown (null, with why) */
#define CQ_MQS_LOAD(name, ret, args)                                                         \
	if (!(q.api.name = (ret(*) args)dlsym(dl, #name)) && strcmp(#name, "mqs_get_comm_group")) \
		json_array_append_new(missing, cq_json_str(#name));
	CQ_MQS_FUNCTIONS(CQ_MQS_LOAD)
#undef CQ_MQS_LOAD
	if (json_array_size(missing))
		return fail(&q, json_pack("{s:s, s:s, s:o}", "record", "error", "message",
					  "the DLL lacks MQD entry points", "missing", missing));
	json_decref(missing);

	char *version = calling(&q, "mqs_version_string") ? NULL : q.api.mqs_version_string();
	int compat = CALL(&q, q.api.mqs_version_compatibility(), "mqs_version_compatibility");
	int width = CALL(&q, q.api.mqs_dll_taddr_width(), "mqs_dll_taddr_width");
	json_t *dll = json_pack("{s:s, s:s?, s:i, s:i}", "record", "dll", "version", version,
				"compatibility", compat, "taddr_width", width);
	emit(&q, dll);
	unsigned tptr = cq_target_ptr_size(q.core->target);
	if (compat < CQ_MQS_COMPAT_MIN || compat > CQ_MQS_COMPAT_MAX)
		return fail(&q, json_pack("{s:s, s:s, s:i}", "record", "error", "message",
					  "the DLL's interface compatibility level is not 2 or 3 (MQS_INTERFACE_COMPATIBILITY of the MQD 1.0 interface): refused",
					  "compatibility", compat));
	if (width != 4 && width != 8)
		return fail(&q, json_pack("{s:s, s:s, s:i}", "record", "error", "message",
					  "the DLL's mqs_taddr_t is neither 4 nor 8 bytes: refused", "taddr_width", width));
	if ((unsigned)width < tptr) {
		char *m;
		if (asprintf(&m, "the DLL's addresses are %d bytes (mqs_dll_taddr_width) but the target's are %u: it cannot address this core; use a DLL built for the host with 64-bit mqs_taddr_t (e.g. coreq's own Open MPI DLL) or a 64-bit coreq with the target's DLL", width, tptr) < 0)
			m = NULL;
		json_t *rec = json_pack("{s:s, s:s}", "record", "error", "message", m ? m : "DLL narrower than the target");
		free(m);
		return fail(&q, rec);
	}
	q.width = (unsigned)width;
	struct cq_mqd_tables tables = cq__mqd_callbacks(q.core, q.width, &stats, &q.image, &q.process);
	if (!calling(&q, "mqs_setup_basic_callbacks"))
		q.api.mqs_setup_basic_callbacks(tables.basic);

	const char *exe = q.core->nimages ? q.core->images[0].name : q.core->name;
	int rc = CALL(&q, q.api.mqs_setup_image(q.image, tables.image), "mqs_setup_image");
	json_t *img = json_pack("{s:s, s:o}", "record", "image", "setup_rc", rc == CQ_MQS_OK ? cq_json_str("mqs_ok") : rc_json(&q, rc));
	if (rc == CQ_MQS_OK) {
		char *msg = NULL;
		rc = CALL(&q, q.api.mqs_image_has_queues(q.image, &msg), "mqs_image_has_queues");
		json_object_set_new(img, "has_queues", json_boolean(rc == CQ_MQS_OK));
		json_object_set_new(img, "has_queues_rc", rc == CQ_MQS_OK ? cq_json_str("mqs_ok") : rc_json(&q, rc));
		json_object_set_new(img, "message", message_json(msg, exe));
	}
	emit(&q, img);
	if (rc != CQ_MQS_OK) {
		emit_callbacks(&q, &stats);
		return finish(&q);
	}
	rc = CALL(&q, q.api.mqs_setup_process(q.process, tables.process), "mqs_setup_process");
	json_t *proc = json_pack("{s:s, s:o}", "record", "process", "setup_rc", rc == CQ_MQS_OK ? cq_json_str("mqs_ok") : rc_json(&q, rc));
	if (rc == CQ_MQS_OK) {
		char *msg = NULL;
		rc = CALL(&q, q.api.mqs_process_has_queues(q.process, &msg), "mqs_process_has_queues");
		json_object_set_new(proc, "has_queues", json_boolean(rc == CQ_MQS_OK));
		json_object_set_new(proc, "has_queues_rc", rc == CQ_MQS_OK ? cq_json_str("mqs_ok") : rc_json(&q, rc));
		json_object_set_new(proc, "message", message_json(msg, exe));
	}
	emit(&q, proc);
	if (rc == CQ_MQS_OK)
		query_communicators(&q);
	emit_callbacks(&q, &stats);
	return finish(&q);
}
