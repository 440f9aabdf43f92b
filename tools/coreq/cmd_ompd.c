/* SPDX-License-Identifier: MIT */
/* `coreq ompd`: the OpenMP runtime's view of a core, through its OMPD plugin. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "job/ompjoin.h"
#include "stack/stack.h"
#include "events/events.h"
#include "ompd/host.h"

static const char *str(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_string(v) ? cq_esc(json_string_value(v)) : NULL; /* escaped for the terminal */
}

static const char *sym_or_addr(json_t *code)
{
	if (!json_is_object(code))
		return "-";
	const char *s = str(code, "symbol");
	return s ? s : str(code, "address");
}

static void print_icvs(const char *indent, json_t *icvs)
{
	const char *name;
	json_t *v;
	json_object_foreach(icvs, name, v) {
		printf("%s%-28s ", indent, name);
		if (json_is_integer(v))
			printf("%lld\n", (long long)json_integer_value(v));
		else if (json_is_string(v))
			printf("\"%s\"\n", cq_esc(json_string_value(v)));
		else if (json_object_get(v, "rc"))
			printf("(%s)\n", str(v, "rc"));
		else
			printf("%lld \"%s\"\n", (long long)json_integer_value(json_object_get(v, "value")),
			       str(v, "string"));
	}
}

/* What an OMPT tool keeps for a thread, region or task (ompd_get_tool_data), when a tool
 * set anything: no line for the zeros a process without a tool has. */
static void print_tool_data(const char *indent, json_t *td)
{
	/* ompt_data_t is a union of the word and the pointer: one value, shown as the pointer */
	json_int_t v = json_integer_value(json_object_get(td, "value"));
	const char *p = str(td, "ptr");
	if (td && (v || (p && strcmp(p, "0x0"))))
		printf("%stool data: %s\n", indent, p ? p : "?");
}

static void print_task(const char *indent, const char *label, json_t *t)
{
	printf("%s%s: %s", indent, label, sym_or_addr(json_object_get(t, "function")));
	if (str(t, "function_rc"))
		printf("(%s)", str(t, "function_rc"));
	json_t *ex = json_object_get(t, "exit_frame"), *en = json_object_get(t, "enter_frame");
	if (json_is_object(ex))
		printf("  exit frame %s  enter frame %s", str(ex, "address"), str(en, "address"));
	else if (str(t, "frames_rc"))
		printf("  frames: %s", str(t, "frames_rc"));
	json_t *td = json_object_get(t, "tool_data");
	json_int_t v = json_integer_value(json_object_get(td, "value"));
	if (td && (v || strcmp(str(td, "ptr") ?: "0x0", "0x0")))
		printf("  tool data %s", str(td, "ptr"));
	printf("\n");
}

static void print_text(json_t *doc, int width)
{
	json_t *plugin = json_object_get(doc, "plugin"), *proc = json_object_get(doc, "process");
	printf("core:     %s (%s)\n", str(doc, "core"), str(doc, "arch"));
	printf("plugin:   %s (%s; %s)\n", str(plugin, "path"), str(plugin, "abi"),
	       str(plugin, "source"));
	printf("          %s, %s\n",
	       str(plugin, "version_string") ? str(plugin, "version_string") : "no version string",
	       str(json_object_get(plugin, "run"), "ended"));
	printf("runtime:  %s\n", str(json_object_get(doc, "runtime"), "image") ?
	       str(json_object_get(doc, "runtime"), "image") : "-");
	if (proc) {
		json_t *v = json_object_get(proc, "omp_version");
		if (json_is_integer(v))
			printf("OpenMP:   %lld %s\n", (long long)json_integer_value(v),
			       str(proc, "omp_version_string") ? str(proc, "omp_version_string") : "");
		else
			printf("OpenMP:   version unknown (the plugin does not say)\n");
		printf("address-space ICVs:\n");
		print_icvs("  ", json_object_get(proc, "icvs"));
		json_t *dcv = json_object_get(proc, "display_control_vars");
		if (json_is_array(dcv)) {
			printf("display control variables:\n");
			size_t i;
			json_t *s;
			json_array_foreach(dcv, i, s)
				printf("  %s\n", cq_esc(json_string_value(s)));
		}
	}
	printf("threads:  %lld OpenMP of %zu\n",
	       (long long)json_integer_value(json_object_get(doc, "openmp_threads")),
	       json_array_size(json_object_get(doc, "threads")));
	size_t i;
	json_t *th;
	json_array_foreach(json_object_get(doc, "threads"), i, th) {
		long long tid = (long long)json_integer_value(json_object_get(th, "tid"));
		json_t *tm = json_object_get(th, "team_member");
		if (!json_is_true(json_object_get(th, "openmp")) && tm) {
			/* made by the runtime, not started: its state through its team's handle */
			json_t *st = json_object_get(tm, "state");
			printf("thread %lld: member %lld of parallel region #%lld, not started (its own handle: %s); state %s (through the region's handle)\n",
			       tid, (long long)json_integer_value(json_object_get(tm, "thread_num")),
			       (long long)json_integer_value(json_object_get(tm, "region")), str(th, "rc"),
			       str(st, "name") ? str(st, "name") : str(st, "rc") ? str(st, "rc") : "?");
			print_tool_data("  ", json_object_get(tm, "tool_data"));
			continue;
		}
		if (!json_is_true(json_object_get(th, "openmp"))) {
			printf("thread %lld: not an OpenMP thread (%s)\n", tid, str(th, "rc"));
			continue;
		}
		json_t *st = json_object_get(th, "state");
		printf("thread %lld: state %s", tid, str(st, "name") ? str(st, "name") : str(st, "rc") ? str(st, "rc") : "?");
		if (str(st, "wait_id"))
			printf(" wait_id %s", str(st, "wait_id"));
		printf("\n");
		json_t *tasks = json_object_get(doc, "tasks");
		json_t *cur = json_object_get(th, "current_task");
		size_t k;
		json_t *t;
		if (json_is_integer(cur)) {
			char label[32];
			snprintf(label, sizeof(label), "task #%lld", (long long)json_integer_value(cur));
			print_task("  ", label, json_array_get(tasks, (size_t)json_integer_value(cur)));
			json_array_foreach(json_object_get(th, "generating_chain"), k, t) {
				snprintf(label, sizeof(label), "generated by #%lld", (long long)json_integer_value(t));
				print_task("    ", label, json_array_get(tasks, (size_t)json_integer_value(t)));
			}
		} else if (str(th, "current_task_rc")) {
			printf("  task: %s\n", str(th, "current_task_rc"));
		}
		printf("  parallel regions (innermost first):");
		json_array_foreach(json_object_get(th, "parallel_chain"), k, t)
			printf(" #%lld", (long long)json_integer_value(t));
		printf("\n");
		print_tool_data("  ", json_object_get(th, "tool_data"));
		printf("  ICVs:\n");
		print_icvs("    ", json_object_get(th, "icvs"));
		/* the thread's stack, each frame the runtime's or a task's (job/ompjoin.h) */
		json_t *bt = json_object_get(doc, "stacks"), *bth;
		size_t b;
		json_array_foreach(json_object_get(bt, "threads"), b, bth)
			if (json_integer_value(json_object_get(bth, "tid")) == tid) {
				printf("  stack:\n");
				cq_print_omp_stack(bt, bth, width);
			}
		if (json_object_get(th, "recent_events")) {
			printf("  recent events (flight recorder):\n");
			json_t *ring = json_pack("{s:O}", "events", json_object_get(th, "recent_events"));
			cq_events_print_thread(ring, "    ");
			json_decref(ring);
		}
	}
	printf("parallel regions: %zu\n", json_array_size(json_object_get(doc, "parallel_regions")));
	json_t *t;
	json_array_foreach(json_object_get(doc, "parallel_regions"), i, t) {
		json_t *sz = json_object_get(t, "team_size"), *lv = json_object_get(t, "level");
		printf("  #%lld %s, team of %lld, level %lld, threads",
		       (long long)json_integer_value(json_object_get(t, "id")),
		       sym_or_addr(json_object_get(t, "function")),
		       json_is_integer(sz) ? (long long)json_integer_value(sz) : -1LL,
		       json_is_integer(lv) ? (long long)json_integer_value(lv) : -1LL);
		size_t m;
		json_t *mem;
		json_array_foreach(json_object_get(t, "team"), m, mem) {
			json_t *id = json_object_get(mem, "tid");
			if (json_is_integer(id))
				printf(" %lld%s", (long long)json_integer_value(id), str(mem, "flag") ? "(!)" : "");
			else
				printf(" ?");
		}
		printf("\n");
		print_tool_data("    ", json_object_get(t, "tool_data"));
	}
	json_t *problems = json_object_get(doc, "problems");
	if (json_array_size(problems)) {
		printf("\nproblems (%zu):\n", json_array_size(problems));
		json_t *p;
		json_array_foreach(problems, i, p)
			printf("  %s: %s\n", str(p, "item"), str(p, "message"));
	}
}

/* The recorder's last events of each thread next to what the plugin says about it. */
static void merge_events(json_t *doc, json_t *events, struct cq_error *err)
{
	if (err) {
		if (err->code != CQ_ERR_NOT_FOUND)
			json_array_append_new(json_object_get(doc, "problems"), json_pack("{s:s, s:o}",
				"item", "recorder", "message", cq_json_str(err->message ? err->message : "unreadable")));
		cq_error_destroy(err);
		return;
	}
	json_t *th, *ring;
	size_t i, k;
	json_array_foreach(json_object_get(doc, "threads"), i, th) {
		json_array_foreach(json_object_get(events, "threads"), k, ring)
			if (json_equal(json_object_get(ring, "tid"), json_object_get(th, "tid")))
				json_object_set(th, "recent_events", json_object_get(ring, "events"));
	}
	json_object_set(doc, "recorder", json_object_get(events, "recorder"));
	json_decref(events);
}

int cq_cmd_ompd(struct cq_cli *cli)
{
	struct cq_core *core;
	int rc = cq_open_core(cli, true, &core);
	if (rc)
		return rc;
	json_t *doc;
	struct cq_error *err = cq_ompd_report(core, &cli->ompd, &doc);
	json_t *events = NULL;
	struct cq_error *eerr = cq_events_read(core, cli->last ? cli->last : 8, &events);
	if (err) {
		/* no OMPD (e.g. a distribution's stripped runtime): the recorder may still tell */
		if (!eerr) {
			const char *m = err->message ? err->message : "no OMPD";
			struct cq_error *hint = strstr(m, "`coreq events`") ?
				cq_error_create(err->code, "%s (this core has the recorder's rings)", m) :
				cq_error_create(err->code, "%s; the core has coreq's flight recorder: `coreq events` shows the last runtime events of every thread", m);
			cq_error_destroy(err);
			err = hint;
		}
		json_decref(events);
		cq_error_destroy(eerr);
		cq_core_close(core);
		return cq_fail(err);
	}
	merge_events(doc, events, eerr);
	/* each thread's stack joined with the tasks' frames, continued out to the initial task */
	json_t *bt = NULL;
	struct cq_stack_options sopt = {.max_frames = cli->max_frames};
	struct cq_error *serr = cq_bt_document(core, &sopt, false, &bt);
	if (serr) {
		json_array_append_new(json_object_get(doc, "problems"),
				      json_pack("{s:s, s:o}", "item", "stacks", "message", cq_json_str(serr->message)));
		cq_error_destroy(serr);
	} else {
		cq_omp_join(bt, doc, NULL, true);
		json_object_set_new(doc, "stacks", bt);
	}
	/* --pid: a process that ran again (the bound) or died while read is not shown */
	if ((err = cq_process_check(core))) {
		json_decref(doc);
		cq_core_close(core);
		return cq_fail(err);
	}
	/* The core's own problems (missing libraries...) belong to the answer too. */
	json_t *problems = json_object_get(doc, "problems");
	for (size_t i = 0; i < core->nproblems; i++)
		json_array_append_new(problems, json_pack("{s:o, s:o}", "item", cq_json_str(core->problems[i].item),
							  "message", cq_json_str(core->problems[i].message)));
	rc = json_array_size(problems) ? CQ_EXIT_PARTIAL : CQ_EXIT_OK;
	if (rc)
		fprintf(stderr, "coreq: analysis incomplete: %zu problem(s), listed in the output\n",
			json_array_size(problems));
	if (cli->json) {
		cq_emit_json(doc);
	} else {
		print_text(doc, (int)cq_target_ptr_size(core->target) * 2);
		json_decref(doc);
	}
	cq_core_close(core);
	return rc;
}
