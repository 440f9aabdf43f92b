/* SPDX-License-Identifier: MIT */
/* A coreq-stacks/1 document as a text tree and as DOT (tree.h). Both read the document,
 * so a tree merged elsewhere and saved prints the same. */
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "ranges.h"
#include "tree.h"

static const char *jstr(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static json_int_t jint(const json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

struct printer {
	FILE *out;
	bool color, all_threads;
	char prefix[2 * 1000 * 3 + 1]; /* "|  " per level */
	size_t plen;
};

/* "[3: 0-2]", or with every thread "[3 tasks: 0-2, 12 threads]" */
static void counts(const struct printer *p, const json_t *n, const char *tasks_key, const char *count_key,
		   const char *threads_key)
{
	char *r = cq_text_escape(jstr(n, tasks_key) ?: "");
	long long tasks = (long long)jint(n, count_key), threads = (long long)jint(n, threads_key);
	fprintf(p->out, "  %s[%lld%s: %s", p->color ? "\033[36m" : "", tasks,
		!p->all_threads ? "" : tasks == 1 ? " task" : " tasks", r ? r : "?");
	if (p->all_threads)
		fprintf(p->out, ", %lld thread%s", threads, threads == 1 ? "" : "s");
	fprintf(p->out, "]%s", p->color ? "\033[0m" : "");
	free(r);
}

static void print_node(struct printer *p, const json_t *n, bool last, bool root)
{
	char *label = cq_text_escape(jstr(n, "label") ?: "?");
	fprintf(p->out, "%.*s%s%s%s%s", (int)p->plen, p->prefix, root ? "" : last ? "`- " : "+- ",
		p->color && json_array_size(json_object_get(n, "children")) != 1 ? "\033[1m" : "", label ? label : "?",
		p->color && json_array_size(json_object_get(n, "children")) != 1 ? "\033[0m" : "");
	free(label);
	counts(p, n, "tasks", "task_count", "thread_count");
	const char *mk;
	const json_t *mv;
	json_object_foreach((json_t *)json_object_get(n, "marks"), mk, mv) {
		char *m = cq_text_escape(mk), *r = cq_text_escape(json_string_value(mv) ?: "?");
		fprintf(p->out, "  %s%s [%s]%s", p->color ? "\033[31;1m" : "", m ? m : "?", r ? r : "?",
			p->color ? "\033[0m" : "");
		free(m);
		free(r);
	}
	if (jint(n, "end_thread_count") && json_array_size(json_object_get(n, "children")))
		fprintf(p->out, "  (%lld end here)", (long long)jint(n, "end_thread_count"));
	fputc('\n', p->out);
	size_t saved = p->plen;
	if (!root && p->plen + 3 < sizeof(p->prefix)) {
		memcpy(p->prefix + p->plen, last ? "   " : "|  ", 3);
		p->plen += 3;
	}
	const json_t *kids = json_object_get(n, "children"), *k;
	size_t i;
	json_array_foreach(kids, i, k)
		print_node(p, k, i + 1 == json_array_size(kids), false);
	p->plen = saved;
}

void cq_tree_print(const json_t *doc, FILE *out, bool color)
{
	struct printer p = {.out = out, .color = color, .all_threads = json_is_true(json_object_get(doc, "all_threads"))};
	const char *src = jstr(doc, "task_source") ?: "order";
	char *tasks = cq_text_escape(jstr(doc, "tasks") ?: "");
	fprintf(out, "%lld processes (tasks %s, numbered by %s", (long long)jint(doc, "task_count"), tasks ? tasks : "?",
		!strcmp(src, "rank") ? "MPI rank" : "input order");
	const json_t *v;
	size_t vi;
	json_array_foreach(json_object_get(doc, "rank_from"), vi, v) {
		char *e = cq_text_escape(json_string_value(v) ?: "?");
		fprintf(out, "%s%s", vi ? ", " : ": ", e ? e : "?");
		free(e);
	}
	fprintf(out, "), %s, by %s\n", p.all_threads ? "every thread" : "one stack per process", jstr(doc, "by") ?: "?");
	free(tasks);
	print_node(&p, json_object_get(doc, "root"), true, true);
	const json_t *classes = json_object_get(doc, "classes"), *c;
	size_t i;
	if (json_array_size(classes))
		fprintf(out, "\n%zu classes (tasks sharing one path):\n", json_array_size(classes));
	json_array_foreach(classes, i, c) {
		counts(&p, c, "tasks", "task_count", "thread_count");
		/* the innermost labels the class repeats; "..." when the path is longer */
		const json_t *last = json_object_get(c, "last");
		size_t n = json_array_size(last);
		fputs((size_t)jint(c, "depth") > n ? " ... " : " ", out);
		for (size_t k = 0; k < n; k++) {
			char *l = cq_text_escape(json_string_value(json_array_get(last, k)) ?: "?");
			fprintf(out, "%s%s", l ? l : "?", k + 1 < n ? " > " : "");
			free(l);
		}
		fputc('\n', out);
	}
	const json_t *pr;
	json_array_foreach(json_object_get(doc, "problems"), i, pr) {
		char *item = cq_text_escape(jstr(pr, "item") ?: "?"), *msg = cq_text_escape(jstr(pr, "message") ?: "?");
		fprintf(out, "%s  %s: %s\n", i ? "" : "\nproblems:\n", item ? item : "?", msg ? msg : "?");
		free(item);
		free(msg);
	}
}

/* ---- marks ---- */

static struct cq_error *mark_node(json_t *n, const char *name, const struct cq_ranges *set)
{
	struct cq_ranges tasks, both;
	cq_ranges_init(&tasks);
	cq_ranges_init(&both);
	struct cq_error *err = cq_ranges_parse(jstr(n, "tasks") ?: "", &tasks);
	if (!err)
		err = cq_ranges_intersect(&both, &tasks, set);
	if (!err && both.n) {
		char *text = cq_ranges_format(&both);
		json_t *marks = json_object_get(n, "marks");
		if (!json_is_object(marks)) {
			marks = json_object();
			json_object_set_new(n, "marks", marks);
		}
		if (!text || json_object_set_new(marks, name, json_string(text)))
			err = cq_error_create(CQ_ERR_NOMEM, "out of memory marking the stack tree");
		free(text);
	}
	bool hit = both.n > 0;
	cq_ranges_deinit(&tasks);
	cq_ranges_deinit(&both);
	/* a node no marked task reached has no marked child either */
	json_t *k;
	size_t i;
	if (!err && !hit)
		return NULL;
	json_array_foreach(json_object_get(n, "children"), i, k)
		if (!err)
			err = mark_node(k, name, set);
	return err;
}

struct cq_error *cq_tree_mark(json_t *doc, const char *name, const char *ranks)
{
	struct cq_ranges set;
	cq_ranges_init(&set);
	struct cq_error *err = cq_ranges_parse(ranks, &set);
	if (!err && set.n)
		err = mark_node(json_object_get(doc, "root"), name, &set);
	cq_ranges_deinit(&set);
	return err;
}

/* ---- DOT ---- */

/* @p s inside a DOT string: escaped as text (controls, invalid UTF-8), then quotes */
static void put_quoted(FILE *f, const char *s)
{
	char *e = cq_text_escape(s ? s : "?");
	fputc('"', f);
	for (const char *p = e ? e : "?"; *p; p++) {
		if (*p == '"')
			fputc('\\', f);
		fputc(*p, f);
	}
	fputc('"', f);
	free(e);
}

static void dot_node(FILE *f, const json_t *n, unsigned long *next)
{
	unsigned long id = (*next)++;
	fprintf(f, "  n%lu [label=", id);
	put_quoted(f, jstr(n, "label"));
	fputs(json_object_size(json_object_get(n, "marks")) ? ", color=red, penwidth=2];\n" : "];\n", f);
	const json_t *k;
	size_t i;
	json_array_foreach(json_object_get(n, "children"), i, k) {
		unsigned long kid = *next;
		dot_node(f, k, next);
		char *r = NULL;
		if (asprintf(&r, "%lld:[%s]", (long long)jint(k, "task_count"), jstr(k, "tasks") ?: "") < 0)
			r = NULL;
		fprintf(f, "  n%lu -> n%lu [label=", id, kid);
		put_quoted(f, r ? r : "?");
		fputs("];\n", f);
		free(r);
	}
}

char *cq_tree_dot(const json_t *doc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	unsigned long next = 0;
	fputs("digraph stacks {\n  node [shape=box, fontname=\"monospace\"];\n", f);
	dot_node(f, json_object_get(doc, "root"), &next);
	fputs("}\n", f);
	if (ferror(f)) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	return buf;
}
