/* SPDX-License-Identifier: MIT */
/* The parent side of an MQD run: choose the DLL, run it isolated, assemble the
 * "coreq-mqd/1" document from the child's records and say what is missing and why. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "corelib/image.h"
#include "corelib/types.h"
#include "callbacks.h"
#include "elf/elf_file.h"
#include "elf/find.h"
#include "plugin/isolate.h"
#include "discover.h"
#include "donors.h"
#include "host.h"
#include "query.h"


static void free_choice(struct cq_mqd_choice *c)
{
	free(c->path);
	cq_plugin_load_deinit(&c->load);
	free(c->named);
	free(c->mpi_image);
	free(c->refused);
	free(c->instead_of);
}

/* Whether image @p img has DWARF where corelib's type search would read it (types.c): its
 * debug file, else its own file, else a debug file found for it. */
static bool image_has_dwarf(struct cq_core *core, const struct cq_image *img)
{
	if (img->debug)
		return img->debug->has_dwarf;
	if (img->debug_path)
		return true; /* not opened here: the search would read it */
	if (!img->elf || !img->found_path)
		return false;
	if (img->elf->has_dwarf)
		return true;
	struct cq_search_paths paths = {core->opts.sysroot, core->opts.solib_search_path, core->opts.debug_dir};
	char *dbg = cq_find_debug_file(&paths, img->found_path, img->elf);
	bool found = dbg != NULL;
	free(dbg);
	return found;
}

bool cq_mqd_types_available(struct cq_core *core, char *why, size_t why_size)
{
	if ((core->opts.type_donors && *core->opts.type_donors) || core->nbundled_donors)
		return true;
	struct cq_symref ref;
	struct cq_error *err = cq_core_load_images(core);
	if (!err)
		err = cq_core_lookup(core, "MPIR_dll_name", NULL, &ref);
	const struct cq_image *img = err ? NULL : ref.image;
	cq_error_destroy(err);
	if (img && image_has_dwarf(core, img))
		return true;
	struct cq_mqd_donor donor = {0};
	err = cq_mqd_pick_donor(core, &donor);
	bool ok = !err && donor.dir;
	if (!ok)
		snprintf(why, why_size, "no type donor (--types) and no DWARF of the MPI library%s%s: %s",
			 img ? " " : "", img ? img->name : "", err ? err->message : donor.why_none ? donor.why_none : "?");
	cq_error_destroy(err);
	cq_mqd_donor_deinit(&donor);
	return ok;
}

/* Names in a JSON array, comma-separated (for messages); caller frees. */
static char *joined(json_t *a)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);
	if (!f)
		return NULL;
	for (size_t i = 0; i < json_array_size(a); i++)
		fprintf(f, "%s%s", i ? ", " : "", json_string_value(json_array_get(a, i)));
	fclose(f);
	return s;
}

/* Known DLL limits said where they apply, so that an empty or odd answer is not taken for
 * the truth: Open MPI 4.1's DLL has no unexpected queue, and on big-endian targets reads
 * req_complete as one byte of a pointer. */
static void flag(json_t *op, const char *text)
{
	json_t *flags = json_object_get(op, "flags");
	if (!flags)
		json_object_set_new(op, "flags", flags = json_array());
	json_array_append_new(flags, json_string(text));
}

/* MPICH 4.0's DLL gives a send's or a receive's length as its element count (the request's
 * user_count: dll_mpich.c says "Count, not bytes"), and an unexpected message's as the
 * user_count of the request that holds it, 0 until a receive takes it: the count is kept
 * as `count`, the length in bytes is not known (null), and each says why. */
static void mpich_lengths(json_t *doc)
{
	json_t *c, *op;
	size_t i, k;
	json_array_foreach(json_object_get(doc, "communicators"), i, c) {
		const char *q;
		json_t *queue;
		json_object_foreach(json_object_get(c, "queues"), q, queue) {
			bool unexpected = !strcmp(q, "unexpected");
			json_array_foreach(json_object_get(queue, "operations"), k, op) {
				if (json_object_get(op, "from") || !json_is_integer(json_object_get(op, "length")))
					continue; /* coreq's own (from a stack, in flight): bytes */
				if (!unexpected)
					json_object_set(op, "count", json_object_get(op, "length"));
				json_object_set_new(op, "length", json_null());
				flag(op, unexpected ? "length unknown: MPICH's DLL gives an unexpected message the user_count of the "
						      "request holding it, 0 until a receive takes it"
						    : "length in bytes unknown: MPICH's DLL gives the element count (the request's "
						      "user_count), kept as count");
				json_t *a = json_object_get(op, "actual");
				if (json_is_integer(json_object_get(a, "length"))) {
					if (!unexpected)
						json_object_set(a, "count", json_object_get(a, "length"));
					json_object_set_new(a, "length", json_null());
				}
			}
		}
	}
}

/* The status of an operation Open MPI's DLL lists, read whole: the DLL reads the
 * pointer-sized req_complete as one byte, so a request a thread waits on in MPI_Wait*
 * (the word then holds the waiter's ompi_wait_sync_t address) shows as complete. The DLL
 * names the request in its first extra line ("Send: 0x...", "Receive: 0x..."); with
 * ompi_request_t from a type donor coreq reads the word: REQUEST_COMPLETED (1) is
 * complete, anything else pending. False when it cannot be read (the DLL's stays). */
static bool reread_status(struct cq_core *core, json_t *op, int64_t off)
{
	const char *x = json_string_value(json_array_get(json_object_get(op, "extra"), 0));
	unsigned long long at;
	uint64_t word;
	if (off < 0 || !x || (sscanf(x, "Send: %llx", &at) != 1 && sscanf(x, "Receive: %llx", &at) != 1) || !at)
		return false;
	struct cq_error *err = cq_core_read_ptr(core, at + (uint64_t)off, &word);
	if (err) {
		cq_error_destroy(err);
		return false;
	}
	const char *was = json_string_value(json_object_get(op, "status"));
	const char *now = word == 1 ? "complete" : "pending";
	if (was && strcmp(was, now))
		json_object_set_new(op, "dll_status", json_string(was));
	json_object_set_new(op, "status", json_string(now));
	json_object_set_new(op, "status_from", json_string("the request's req_complete, read whole by coreq (Open MPI's "
							   "DLL reads one byte of it)"));
	return true;
}

static void known_limits(struct cq_core *core, json_t *doc, json_t *problems)
{
	const char *version = json_string_value(json_object_get(json_object_get(doc, "dll"), "version"));
	if (version && !strncmp(version, "MPICH message queue support", 27))
		mpich_lengths(doc);
	/* Open MPI's own DLL (not coreq's, whose version string names Open MPI too) */
	bool ompi = version && strncmp(version, "Open MPI message queue support", 30) == 0;
	if (!ompi)
		return;
	bool be = cq_target_needs_bswap(core->target) != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__);
	json_t *comms = json_object_get(doc, "communicators"), *c;
	size_t i;
	bool any_unexpected = false, any_ops = false;
	const struct cq_type *rt;
	struct cq_error *terr = cq__mqd_find_type(core, "ompi_request_t", &rt);
	int64_t req_off = terr ? -1 : cq_type_field_offset(rt, "req_complete");
	cq_error_destroy(terr);
	json_array_foreach(comms, i, c) {
		json_t *u = json_object_get(json_object_get(c, "queues"), "unexpected");
		if (!strcmp(json_string_value(json_object_get(u, "state")) ?: "", "no_information")) {
			any_unexpected = true;
			json_object_set_new(u, "why", cq_json_str(
				"known DLL limit: Open MPI 4.1's DLL does not implement the unexpected-message queue"));
		}
		const char *q;
		json_t *queue;
		json_object_foreach(json_object_get(c, "queues"), q, queue) {
			json_t *op;
			size_t k;
			json_array_foreach(json_object_get(queue, "operations"), k, op) {
				if (strcmp(q, "unexpected") && reread_status(core, op, req_off))
					continue;
				any_ops = true;
				bool complete = !strcmp(json_string_value(json_object_get(op, "status")) ?: "", "complete");
				if (!be && !complete)
					continue;
				/* for the job view: the status is not to be taken as it stands (job/waitfor.h) */
				json_object_set_new(op, "status_reliable", json_false());
				flag(op, be ?
					"status unreliable: Open MPI 4.1's DLL reads req_complete as one byte of a pointer (wrong on big-endian targets)" :
					"status may be wrong: Open MPI 4.1's DLL reads req_complete as one byte of a pointer, so a request a thread waits on (MPI_Wait*) shows as complete; coreq's DLL (the default) reads it whole");
			}
		}
	}
	if (any_unexpected)
		cq_json_problem(problems, "unexpected queue",
			"Open MPI 4.1's DLL does not implement the unexpected-message queue (mqs_no_information): messages that arrived unmatched are not shown");
	if (be && any_ops)
		cq_json_problem(problems, "operation status",
			"big-endian target: Open MPI 4.1's DLL reads req_complete as one byte of a pointer, so the status of each operation is unreliable (flagged)");
}

/* The rank in MPI_COMM_WORLD: the local rank in the communicator of that name. */
static json_t *world_rank(json_t *comms)
{
	json_t *c;
	size_t i;
	json_array_foreach(comms, i, c)
		if (!strcmp(json_string_value(json_object_get(c, "name")) ?: "", "MPI_COMM_WORLD"))
			return json_incref(json_object_get(c, "local_rank"));
	return json_null();
}

struct cq_error *cq_mqd_report(struct cq_core *core, const struct cq_mqd_options *opts,
			       json_t **ret)
{
	static const struct cq_mqd_options none;
	if (!opts)
		opts = &none;
	struct cq_error *err = cq_core_load_images(core);
	if (err)
		return err;
	struct cq_mqd_choice choice;
	if ((err = cq__mqd_find_dll(core, opts, &choice))) {
		free_choice(&choice);
		return err;
	}
	json_t *doc = json_object(), *problems = json_array(), *comms = json_array();
	json_object_set_new(doc, "schema", cq_json_str("coreq-mqd/1"));
	json_object_set_new(doc, "core", cq_json_str(core->name));
	json_object_set_new(doc, "arch", cq_json_str(core->target->name));
	json_object_set_new(doc, "pid", core->has_psinfo ? json_integer(core->pid) : json_null());
	json_object_set_new(doc, "executable", core->nimages ? cq_json_str(core->images[0].name) : json_null());
	json_t *dll = json_pack("{s:o, s:s, s:o?, s:o?}", "path", cq_json_str(choice.path), "source", choice.source,
				"named_by_core", cq_json_str(choice.named), "mpi_image", cq_json_str(choice.mpi_image));
	if (choice.instead_of)
		json_object_set_new(dll, "instead_of", json_pack("{s:o, s:s}", "dll", cq_json_str(choice.instead_of), "why",
			"coreq's own DLL for Open MPI 4.1 shows the unexpected queue, reads ranks, tags and request status right on every target and serves any host; --mqd-vendor uses the one the core names"));
	json_object_set_new(doc, "dll", dll);
	/* No donor given or bundled: an installed one that fits the core's libmpi is the
	 * last place types are looked for (donors.h); the report says which, or why none. */
	struct cq_mqd_donor donor = {0};
	bool pick = !(core->opts.type_donors && *core->opts.type_donors) && !core->nbundled_donors;
	if (pick && (err = cq_mqd_pick_donor(core, &donor))) {
		json_decref(doc);
		json_decref(problems);
		json_decref(comms);
		free_choice(&choice);
		return err;
	}
	if (pick)
		json_object_set_new(doc, "installed_donor", cq_mqd_donor_json(&donor));
	if (choice.refused)
		cq_json_problem(problems, "dll trust",
			"not loaded: %s lies outside the trusted directories (allow it with --mqd-allow-untrusted or --mqd-trusted-dir); %s was used instead",
			choice.refused, choice.path);

	struct cq__mqd_job job = {core, choice.path, &choice.load};
	struct cq_isolate_result r;
	struct cq_isolate_deaths died;
	unsigned limit = opts->timeout_ms ? opts->timeout_ms : CQ_MQD_DEFAULT_TIMEOUT_MS;
	if ((err = cq_isolate_run_retrying(cq__mqd_child, &job, limit, &r, &died))) {
		json_decref(doc);
		json_decref(problems);
		json_decref(comms);
		free_choice(&choice);
		cq_mqd_donor_deinit(&donor);
		return err;
	}
	json_t *deaths = json_array();
	for (size_t i = 0; i < died.n; i++) {
		json_array_append_new(deaths, json_pack("{s:o, s:o}", "call", cq_json_str(died.call[i]), "how", cq_json_str(died.how[i])));
		cq_json_problem(problems, "dll", "%s %s; the call was skipped in a new run", choice.path, died.how[i]);
	}
	cq_isolate_deaths_deinit(&died);
	json_object_set_new(dll, "skipped_calls", deaths);

	bool done = false;
	for (size_t i = 0; i < r.nrecords; i++) {
		json_t *rec = json_loads(r.records[i], 0, NULL);
		const char *kind = json_string_value(json_object_get(rec, "record"));
		if (!kind) {
			json_decref(rec);
			continue;
		}
		char k[32];
		snprintf(k, sizeof(k), "%s", kind);
		json_object_del(rec, "record");
		if (!strcmp(k, "dll")) {
			json_object_update(dll, rec);
		} else if (!strcmp(k, "image") || !strcmp(k, "process")) {
			json_object_set(doc, k, rec);
			json_t *m = json_object_get(rec, "message");
			if (json_object_get(rec, "has_queues") == json_false() || json_object_get(rec, "has_queues") == NULL)
				cq_json_problem(problems, k, "the DLL reports no message queues for this %s: %s", k,
					json_is_string(m) ? json_string_value(m) :
					json_string_value(json_object_get(rec, "has_queues_rc")) ?:
					json_string_value(json_object_get(rec, "setup_rc")) ?: "?");
		} else if (!strcmp(k, "communicator")) {
			json_array_append(comms, rec);
		} else if (!strcmp(k, "callbacks")) {
			json_object_set(doc, "callbacks", rec);
		} else if (!strcmp(k, "error")) {
			char *names = joined(json_object_get(rec, "missing"));
			cq_json_problem(problems, "dll", "%s: %s%s%s", choice.path,
				json_string_value(json_object_get(rec, "message")),
				names && *names ? ": " : "", names ? names : "");
			free(names);
		} else if (!strcmp(k, "done")) {
			done = true;
		}
		json_decref(rec);
	}
	char *how = cq_isolate_describe(&r);
	json_object_set_new(dll, "run", json_pack("{s:o, s:f}", "ended", cq_json_str(how ? how : "?"), "seconds", r.seconds));
	if (!done)
		cq_json_problem(problems, "dll", "%s %s; everything reported before that is shown", choice.path,
			how ? how : "ended early");
	free(how);
	if (r.output && *r.output)
		json_object_set_new(dll, "output", cq_json_str(r.output));
	cq_isolate_result_deinit(&r);

	json_object_set_new(doc, "rank", world_rank(comms));
	json_object_set_new(doc, "communicators", comms);
	/* What the DLL asked for and did not get, named with where coreq looked. */
	json_t *cb = json_object_get(doc, "callbacks");
	json_t *mt = json_object_get(cb, "missing_types");
	if (json_array_size(mt)) {
		char *names = joined(mt);
		if (pick && !donor.dir)
			cq_json_problem(problems, "types",
				"the DLL asked for type(s) %s, not found: searched %s; %s",
				names ? names : "?", json_string_value(json_object_get(cb, "type_sources")) ?: "?",
				donor.why_none ? donor.why_none : "give --types FILE");
		else
			cq_json_problem(problems, "types",
				"the DLL asked for type(s) %s, not found: searched %s; give a type donor built for the target from the MPI library's headers (--types FILE; `coreq donor` builds one for Open MPI)",
				names ? names : "?", json_string_value(json_object_get(cb, "type_sources")) ?: "?");
		free(names);
	}
	/* MPIR_Ignore_queues is an opt-out flag: its absence is the normal case */
	json_t *ms = json_deep_copy(json_object_get(cb, "missing_symbols")), *sv;
	size_t si;
	json_array_foreach(ms, si, sv)
		if (!strcmp(json_string_value(sv) ?: "", "MPIR_Ignore_queues"))
			json_array_remove(ms, si--);
	if (json_array_size(ms) && !json_array_size(json_object_get(doc, "communicators"))) {
		char *names = joined(ms);
		cq_json_problem(problems, "symbols", "the DLL asked for symbol(s) %s, not found in the core's images",
			names ? names : "?");
		free(names);
	}
	json_decref(ms);
	known_limits(core, doc, problems);
	/* a coreq snapshot holds only the pages its own analyses read when it was taken: a DLL
	 * or a type donor other than the snapshot's reads elsewhere */
	json_int_t faults = json_integer_value(json_object_get(cb, "fetch_faults"));
	if (core->file && core->taken_ns && faults > 0)
		cq_json_problem(problems, "snapshot",
			"%s is a coreq snapshot: it holds only the memory coreq's analyses read when it was taken, and the "
			"DLL read %lld time(s) where it holds nothing: take the snapshot with this analysis's options "
			"(--types, --mqd-plugin, --mqd-vendor, --mqd-trusted-dir)", core->name, (long long)faults);
	/* coreq's DLL lists the library's own requests (a collective's traffic): the job view
	 * may then read "nothing of its own pending" as "not waiting in its collective" */
	const char *ver = json_string_value(json_object_get(json_object_get(doc, "dll"), "version"));
	if (ver && !strncmp(ver, "coreq MQD DLL for Open MPI 4.1", 30))
		json_object_set_new(doc, "internal_ops_listed", json_true());
	json_object_set_new(doc, "problems", problems);
	free_choice(&choice);
	cq_mqd_donor_deinit(&donor);
	*ret = doc;
	return NULL;
}
