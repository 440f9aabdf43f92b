/* SPDX-License-Identifier: MIT */
/* The parent side of an OMPD run: choose the plugin, run it isolated, assemble the
 * records into the report and say plainly what is missing and why. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "base/decode.h"
#include "corelib/image.h"
#include "plugin/isolate.h"
#include "discover.h"
#include "host.h"
#include "query.h"


/* A thread the plugin has no handle for (the runtime made it and it has not started: its
 * own handle is unavailable) may still be a member of a region's team, whose handles give
 * its state: "team_member" {region, thread_num, state, tool_data?} on the thread. */
static void team_members(json_t *threads, json_t *regions)
{
	json_t *t, *r, *m;
	size_t i, k, x;
	json_array_foreach(threads, i, t) {
		if (json_is_true(json_object_get(t, "openmp")))
			continue;
		json_array_foreach(regions, k, r)
			json_array_foreach(json_object_get(r, "team"), x, m)
				if (json_is_integer(json_object_get(m, "tid")) &&
				    json_equal(json_object_get(m, "tid"), json_object_get(t, "tid")) &&
				    !json_object_get(t, "team_member")) {
					json_t *o = json_pack("{s:O, s:O, s:O}", "region", json_object_get(r, "id"),
							      "thread_num", json_object_get(m, "thread_num"), "state",
							      json_object_get(m, "state") ?: json_null());
					if (json_object_get(m, "tool_data"))
						json_object_set(o, "tool_data", json_object_get(m, "tool_data"));
					json_object_set_new(t, "team_member", o);
				}
	}
}

static bool any_rc(json_t *v, const char *rc)
{
	if (json_is_string(v))
		return strcmp(json_string_value(v), rc) == 0;
	const char *k;
	json_t *x;
	size_t i;
	if (json_is_object(v)) {
		json_object_foreach(v, k, x)
			if (any_rc(x, rc))
				return true;
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, x)
			if (any_rc(x, rc))
				return true;
	}
	return false;
}

struct cq_error *cq_ompd_report(struct cq_core *core, const struct cq_ompd_options *opts,
				json_t **ret)
{
	static const struct cq_ompd_options none;
	if (!opts)
		opts = &none;
	struct cq_error *err = cq_core_load_images(core);
	if (err)
		return err;
	struct cq_ompd_choice choice;
	if ((err = cq__ompd_find_plugin(core, opts, &choice))) {
		free(choice.runtime);
		free(choice.refused);
		return err;
	}
	json_t *doc = json_object(), *problems = json_array(), *threads = json_array();
	json_t *regions = json_array(), *tasks = json_array();
	json_object_set_new(doc, "schema", cq_json_str("coreq-ompd/1"));
	json_object_set_new(doc, "core", cq_json_str(core->name));
	json_object_set_new(doc, "arch", cq_json_str(core->target->name));
	/* "abi" comes from the child, which tells the ABI by the plugin's entry points */
	json_t *plugin = json_pack("{s:o, s:s, s:n}", "path", cq_json_str(choice.path), "source", choice.source,
				   "abi");
	json_object_set_new(doc, "plugin", plugin);
	if (choice.refused)
		cq_json_problem(problems, "plugin trust",
			"not loaded: %s lies outside the trusted directories (allow it with --ompd-allow-untrusted or --ompd-trusted-dir); %s was used instead",
			choice.refused, choice.path);
	struct cq_image *rt = choice.runtime ? cq_core_image_named(core, choice.runtime) : NULL;
	/* No ompd_dll_locations (a stripped runtime): name the likely runtime all the same. */
	for (size_t i = 0; !rt && i < core->nimages; i++) {
		const char *base = strrchr(core->images[i].name, '/');
		base = base ? base + 1 : core->images[i].name;
		if (!strncmp(base, "libomp.", 7) || !strncmp(base, "libiomp", 7) || !strncmp(base, "libgomp.", 8))
			rt = &core->images[i];
	}
	if (rt && !choice.runtime)
		choice.runtime = strdup(rt->name);
	json_t *runtime = json_object();
	json_object_set_new(runtime, "image", choice.runtime ? cq_json_str(choice.runtime) : json_null());
	if (rt) {
		char *bid = cq_hex_string(rt->build_id, rt->build_id_len);
		json_object_set_new(runtime, "build_id", bid && *bid ? cq_json_str(bid) : json_null());
		free(bid);
		json_object_set_new(runtime, "status", cq_json_str(cq_image_status_name(rt->status)));
		json_object_set_new(runtime, "file", rt->found_path ? cq_json_str(rt->found_path) : json_null());
	}
	json_object_set_new(doc, "runtime", runtime);

	/* A plugin that dies in a call is run again with that call skipped, so one bad
	 * answer does not hide all the others; each death is reported. */
	struct cq__ompd_job job = {core, choice.path, &choice.load};
	struct cq_isolate_result r;
	struct cq_isolate_deaths died;
	unsigned limit = opts->timeout_ms ? opts->timeout_ms : CQ_OMPD_DEFAULT_TIMEOUT_MS;
	if ((err = cq_isolate_run_retrying(cq__ompd_child, &job, limit, &r, &died))) {
		json_decref(doc);
		json_decref(problems);
		json_decref(threads);
		json_decref(regions);
		json_decref(tasks);
		free(choice.path);
		cq_plugin_load_deinit(&choice.load);
		free(choice.runtime);
		free(choice.refused);
		return err;
	}
	json_t *deaths = json_array();
	for (size_t i = 0; i < died.n; i++) {
		json_array_append_new(deaths, json_pack("{s:o, s:o}", "call", cq_json_str(died.call[i]), "how", cq_json_str(died.how[i])));
		cq_json_problem(problems, "plugin", "%s %s; the call was skipped in a new run", choice.path,
			died.how[i]);
	}
	cq_isolate_deaths_deinit(&died);
	json_object_set_new(plugin, "skipped_calls", deaths);
	bool done = false;
	for (size_t i = 0; i < r.nrecords; i++) {
		json_t *rec = json_loads(r.records[i], 0, NULL);
		json_t *kind_v = json_incref(json_object_get(rec, "record"));
		const char *kind = json_string_value(kind_v);
		if (!kind) {
			json_decref(kind_v);
			json_decref(rec);
			continue;
		}
		json_object_del(rec, "record"); /* kind stays valid: we hold a reference */
		if (!strcmp(kind, "plugin")) {
			json_object_update(plugin, rec);
		} else if (!strcmp(kind, "process")) {
			json_object_set(doc, "process", rec);
		} else if (!strcmp(kind, "thread")) {
			json_array_append(threads, rec);
		} else if (!strcmp(kind, "parallel")) {
			json_array_append(regions, rec);
		} else if (!strcmp(kind, "task")) {
			json_array_append(tasks, rec);
		} else if (!strcmp(kind, "callbacks")) {
			json_object_set(doc, "callbacks", rec);
		} else if (!strcmp(kind, "error")) {
			/* "missing": entry points the plugin lacks, named in the message */
			json_t *miss = json_object_get(rec, "missing");
			char *names = NULL;
			size_t len = 0;
			FILE *f = json_array_size(miss) ? open_memstream(&names, &len) : NULL;
			for (size_t k = 0; f && k < json_array_size(miss); k++)
				fprintf(f, "%s%s", k ? ", " : ": ",
					json_string_value(json_array_get(miss, k)));
			if (f)
				fclose(f);
			cq_json_problem(problems, "plugin", "%s: %s%s", choice.path,
				json_string_value(json_object_get(rec, "message")), names ? names : "");
			free(names);
		} else if (!strcmp(kind, "done")) {
			done = true;
		}
		json_decref(kind_v);
		json_decref(rec);
	}
	char *how = cq_isolate_describe(&r);
	json_object_set_new(plugin, "run", json_pack("{s:o, s:f}", "ended", cq_json_str(how ? how : "?"),
						      "seconds", r.seconds));
	if (!done)
		cq_json_problem(problems, "plugin", "%s %s; everything reported before that is shown",
			choice.path, how ? how : "failed");
	free(how);
	if (r.output && *r.output)
		json_object_set_new(plugin, "output", cq_json_str(r.output));
	json_object_set_new(doc, "threads", threads);
	json_object_set_new(doc, "parallel_regions", regions);
	json_object_set_new(doc, "tasks", tasks);

	/* Say why things are missing, once, in words. */
	json_t *proc = json_object_get(doc, "process");
	json_t *miss = json_object_get(json_object_get(doc, "callbacks"), "missing_symbols");
	if (!miss)
		miss = json_object_get(proc, "missing_symbols");
	if (proc && strcmp(json_string_value(json_object_get(proc, "initialize_rc")), "ompd_rc_ok") != 0 &&
	    json_array_size(miss)) {
		char *bid = rt ? cq_hex_string(rt->build_id, rt->build_id_len) : NULL;
		cq_json_problem(problems, "runtime",
			"the plugin cannot use the runtime %s (build-id %s): %s; missing symbols: %s. The runtime is probably stripped: supply its symbols (set DEBUGINFOD_URLS to a debuginfod server with libomp's debug symbols, build-id %s; or --debug-dir with .build-id/xx/rest.debug; or analyze a bundle made where the unstripped runtime was available)",
			choice.runtime ? choice.runtime : "?", bid && *bid ? bid : "unknown",
			json_string_value(json_object_get(proc, "initialize_rc")),
			json_array_size(miss) ? json_string_value(json_array_get(miss, 0)) : "none reported",
			bid && *bid ? bid : "unknown");
		free(bid);
	}
	else if (proc && strcmp(json_string_value(json_object_get(proc, "initialize_rc")), "ompd_rc_ok") != 0)
		cq_json_problem(problems, "runtime", "ompd_process_initialize: %s: the plugin cannot handle this process",
			json_string_value(json_object_get(proc, "initialize_rc")));
	if (any_rc(threads, "ompd_rc_needs_state_tracking") || any_rc(tasks, "ompd_rc_needs_state_tracking"))
		cq_json_problem(problems, "state tracking",
			"states, task frames and task functions are unavailable: the program did not run with OMP_DEBUG=enabled (ompd_rc_needs_state_tracking)");
	size_t nomp = 0, i;
	json_t *t;
	json_array_foreach(threads, i, t)
		nomp += json_is_true(json_object_get(t, "openmp"));
	team_members(threads, regions);
	json_object_set_new(doc, "openmp_threads", json_integer((json_int_t)nomp));
	json_object_set_new(doc, "problems", problems);
	cq_isolate_result_deinit(&r);
	free(choice.path);
	cq_plugin_load_deinit(&choice.load);
	free(choice.runtime);
	free(choice.refused);
	*ret = doc;
	return NULL;
}
