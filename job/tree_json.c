/* SPDX-License-Identifier: MIT */
/* The stack prefix tree written (tree.h): as a coreq-stacks/1 document (cq_tree_json, which
 * the text tree, DOT and the job view read) and as that document's JSON text streamed from
 * the tree (cq_tree_write_json, what `coreq stacks --json` prints). The two walk the tree in
 * one order (kids_in_order) and say the same; tests/unit/test_tree_json.c compares them. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "tree_internal.h"

/* ---- what both writers share ---- */

/* A child in output order: most tasks first, then by label. */
struct kid {
	const struct cq_tree_node *n;
	uint64_t count;
};

static int kid_order(const void *a, const void *b)
{
	const struct kid *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->n->label, y->n->label);
}

/* @p n's children in output order (caller frees); NULL for none, or out of memory with
 * *@p failed set. */
static struct kid *kids_in_order(const struct cq_tree_node *n, bool *failed)
{
	struct kid *order = n->nkids ? malloc(n->nkids * sizeof(*order)) : NULL;
	if (!order) {
		*failed |= n->nkids > 0;
		return NULL;
	}
	for (size_t i = 0; i < n->nkids; i++)
		order[i] = (struct kid){n->kids[i], cq_ranges_count(&n->kids[i]->tasks)};
	if (n->nkids > 1)
		qsort(order, n->nkids, sizeof(*order), kid_order);
	return order;
}

/* How many of a class's innermost labels its JSON repeats (the text shows as many): the
 * whole path is the chain of nodes to "node", which a reader follows in the tree. */
#define CLASS_LAST 3

/* The marks of @p n (cq_tree_mark_tasks), NULL for none; @p live: the markings still
 * followed, one bit each, cleared for those @p n has none of: as cq_tree_mark(), which
 * descends no further than a node no marked task reached. */
static json_t *node_marks(const struct cq_tree *t, const struct cq_tree_node *n, unsigned *live, bool *failed)
{
	json_t *marks = NULL;
	for (unsigned i = 0; i < t->nmarks; i++) {
		if (!(*live & 1u << i))
			continue;
		struct cq_ranges both;
		cq_ranges_init(&both);
		struct cq_error *err = cq_ranges_intersect(&both, &n->tasks, &t->marks[i].set);
		char *text = !err && both.n ? cq_ranges_format(&both) : NULL;
		if (!err && !both.n)
			*live &= ~(1u << i);
		else if (!text || (!marks && !(marks = json_object())) ||
			 json_object_set_new(marks, t->marks[i].name, json_string(text)))
			*failed = true;
		free(text);
		cq_error_destroy(err);
		cq_ranges_deinit(&both);
	}
	return marks;
}

/* ---- the document ---- */

/* Leaf classes: most tasks first, then in the tree's order (node ids are preorder). */
static int by_class(const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	json_int_t cx = json_integer_value(json_object_get(x, "task_count"));
	json_int_t cy = json_integer_value(json_object_get(y, "task_count"));
	if (cx != cy)
		return cx > cy ? -1 : 1;
	json_int_t ix = json_integer_value(json_object_get(x, "node"));
	json_int_t iy = json_integer_value(json_object_get(y, "node"));
	return (ix > iy) - (ix < iy);
}

/* @p arr sorted by @p cmp (jansson has no sort). */
static json_t *sorted(json_t *arr, int (*cmp)(const void *, const void *))
{
	size_t n = json_array_size(arr);
	json_t **v = n > 1 ? malloc(n * sizeof(*v)) : NULL;
	if (!v)
		return arr; /* nothing to sort, or out of memory: left as it is */
	for (size_t i = 0; i < n; i++)
		v[i] = json_incref(json_array_get(arr, i));
	qsort(v, n, sizeof(*v), cmp);
	json_array_clear(arr);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, v[i]);
	free(v);
	return arr;
}

static json_t *ranges_json(const struct cq_ranges *r)
{
	char *s = cq_ranges_format(r);
	json_t *j = s ? json_string(s) : NULL;
	free(s);
	return j;
}

/* The walk that writes the document: node ids in preorder, and the labels of the path
 * from the root's child down to the node being written (as pointers into the tree: a path
 * is never copied, so memory stays linear in the nodes however deep the leaves are). */
struct walk {
	const struct cq_tree *t;
	json_t *classes;
	const char **labels; /* CQ_TREE_MAX_DEPTH + 1 */
	json_int_t next_id;
	bool failed;
};

/* The JSON of @p n at @p depth (the root's is 0); its leaf class, if any, appended to the
 * walk's classes. NULL when out of memory. */
static json_t *node_json(const struct cq_tree_node *n, unsigned depth, unsigned live, struct walk *w)
{
	json_int_t id = w->next_id++;
	json_t *kids = json_array();
	json_t *o = json_pack("{s:I, s:o, s:o, s:I, s:I, s:o, s:I}", "id", id, "label", cq_json_str(n->label),
			      "tasks", ranges_json(&n->tasks), "task_count", (json_int_t)cq_ranges_count(&n->tasks),
			      "thread_count", (json_int_t)n->threads, "ends", ranges_json(&n->ends),
			      "end_thread_count", (json_int_t)n->end_threads);
	struct kid *order = kids_in_order(n, &w->failed);
	if (!o || !kids || w->failed) {
		json_decref(o);
		json_decref(kids);
		free(order);
		return NULL;
	}
	if (n->function)
		json_object_set_new(o, "function", cq_json_str(n->function));
	if (depth)
		w->labels[depth - 1] = n->label;
	if (n->ends.n) {
		json_t *last = json_array();
		for (unsigned k = depth > CLASS_LAST ? depth - CLASS_LAST : 0; last && k < depth; k++)
			json_array_append_new(last, cq_json_str(w->labels[k]));
		json_t *c = last ? json_pack("{s:I, s:I, s:o, s:o, s:I, s:I}", "node", id, "depth", (json_int_t)depth,
					     "last", last, "tasks", ranges_json(&n->ends), "task_count",
					     (json_int_t)cq_ranges_count(&n->ends), "thread_count",
					     (json_int_t)n->end_threads)
				 : NULL;
		if (!c || json_array_append_new(w->classes, c))
			w->failed = true;
	}
	json_t *marks = node_marks(w->t, n, &live, &w->failed);
	for (size_t i = 0; i < n->nkids && !w->failed; i++) {
		json_t *k = node_json(order[i].n, depth + 1, live, w);
		if (!k || json_array_append_new(kids, k))
			w->failed = true;
	}
	free(order);
	json_object_set_new(o, "children", kids);
	if (marks)
		json_object_set_new(o, "marks", marks);
	return o;
}

json_t *cq_tree_json(const struct cq_tree *t)
{
	struct walk w = {.t = t, .classes = json_array(), .labels = calloc(CQ_TREE_MAX_DEPTH + 1, sizeof(*w.labels))};
	json_t *root = w.classes && w.labels ? node_json(&t->root, 0, ~0u, &w) : NULL;
	free(w.labels);
	if (!root || w.failed) {
		json_decref(root);
		json_decref(w.classes);
		return NULL;
	}
	sorted(w.classes, by_class);
	return json_pack("{s:s, s:s, s:b, s:s, s:O, s:O, s:O, s:O, s:o, s:o, s:O}", "schema", "coreq-stacks/1", "by",
			 cq_tree_by_names[t->by], "all_threads", t->all_threads, "task_source",
			 cq_tree_source_names[t->source], "rank_from", t->rank_from, "tasks", json_object_get(root, "tasks"),
			 "task_count", json_object_get(root, "task_count"), "thread_count",
			 json_object_get(root, "thread_count"), "root", root, "classes", w.classes, "problems", t->problems);
}

/* ---- the document's text, streamed ---- */

/* Lines are indented 2 spaces per level of nesting, as jansson does, to this many levels
 * and no further: a node d frames deep is 2d + 2 levels in, so the trees of real stacks
 * (tens of frames) are written as jansson writes them. */
#define INDENT_LEVELS 64

/* The leaf class of one node, until the classes are written after the tree. */
struct class_of {
	const struct cq_tree_node *n;
	json_int_t id;
	unsigned depth, nlast;
	const char *last[CLASS_LAST];
	uint64_t count;
};

static int by_class_of(const void *a, const void *b)
{
	const struct class_of *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

struct text {
	const struct cq_tree *t;
	FILE *out; /* NULL: counted only */
	uint64_t size;
	bool failed; /* out of memory */
	const char **labels; /* the path's, as struct walk's */
	json_int_t next_id;
	struct class_of *classes;
	size_t nclasses, cap;
};

static void put(struct text *x, const char *s, size_t n)
{
	x->size += n;
	if (x->out && n)
		fwrite(s, 1, n, x->out);
}

static void put_lit(struct text *x, const char *s)
{
	put(x, s, strlen(s));
}

/* A line feed and the indentation of @p level. */
static void newline(struct text *x, unsigned level)
{
#define SPACES_16 "                "
	static const char line[] = "\n" SPACES_16 SPACES_16 SPACES_16 SPACES_16 SPACES_16 SPACES_16 SPACES_16 SPACES_16;
	_Static_assert(sizeof(line) == 2 + 2 * INDENT_LEVELS, "a line feed and the deepest indentation");
	put(x, line, 1 + 2 * (size_t)(level < INDENT_LEVELS ? level : INDENT_LEVELS));
}

/* jansson's text of a value, re-indented from @p level on: the spaces that begin each of
 * its lines are its layout (JSON text has no raw line feed inside a string). */
struct reindent {
	struct text *x;
	unsigned level, spaces;
	bool line_start;
};

static int reindent_sink(const char *buf, size_t size, void *data)
{
	struct reindent *r = data;
	size_t i = 0;
	while (i < size) {
		if (r->line_start) {
			while (i < size && buf[i] == ' ')
				r->spaces++, i++;
			if (i == size)
				break;
			newline(r->x, r->level + r->spaces / 2);
			r->line_start = false;
		}
		const char *nl = memchr(buf + i, '\n', size - i);
		size_t end = nl ? (size_t)(nl - buf) : size;
		put(r->x, buf + i, end - i);
		i = end + (nl != NULL);
		if (nl) {
			r->line_start = true;
			r->spaces = 0;
		}
	}
	return 0;
}

/* @p v (any JSON value; NULL: out of memory) as cq_emit_json lays it out, at @p level. */
static void put_value(struct text *x, const json_t *v, unsigned level)
{
	struct reindent r = {.x = x, .level = level};
	if (!v || json_dump_callback(v, reindent_sink, &r, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY))
		x->failed = true;
	else if (r.line_start)
		newline(x, level + r.spaces / 2);
}

/* A string from a core, escaped as cq_json_str() and jansson escape it. */
static void put_str(struct text *x, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\')
		p++;
	if (!*p) { /* what jansson writes as it is: nearly every name */
		put(x, "\"", 1);
		put(x, s, (size_t)(p - (const unsigned char *)s));
		put(x, "\"", 1);
		return;
	}
	json_t *j = cq_json_str(s);
	put_value(x, j, 0);
	json_decref(j);
}

static void put_int(struct text *x, json_int_t v)
{
	char b[32];
	put(x, b, (size_t)snprintf(b, sizeof(b), "%" JSON_INTEGER_FORMAT, v));
}

/* A task set: digits, commas and dashes, nothing to escape. */
static void put_ranges(struct text *x, const struct cq_ranges *r)
{
	char *s = cq_ranges_format(r);
	if (!s) {
		x->failed = true;
		return;
	}
	put(x, "\"", 1);
	put_lit(x, s);
	put(x, "\"", 1);
	free(s);
}

/* The key of an object's member at @p level: after "{" for the first, else ",". */
static void key(struct text *x, bool *first, unsigned level, const char *k)
{
	put(x, *first ? "{" : ",", 1);
	*first = false;
	newline(x, level);
	put_str(x, k);
	put(x, ": ", 2);
}

/* Node @p n, @p depth frames deep, whose object is at @p level. */
static void node_text(struct text *x, const struct cq_tree_node *n, unsigned depth, unsigned level, unsigned live)
{
	json_int_t id = x->next_id++;
	bool first = true;
	key(x, &first, level + 1, "id");
	put_int(x, id);
	key(x, &first, level + 1, "label");
	put_str(x, n->label);
	key(x, &first, level + 1, "tasks");
	put_ranges(x, &n->tasks);
	key(x, &first, level + 1, "task_count");
	put_int(x, (json_int_t)cq_ranges_count(&n->tasks));
	key(x, &first, level + 1, "thread_count");
	put_int(x, (json_int_t)n->threads);
	key(x, &first, level + 1, "ends");
	put_ranges(x, &n->ends);
	key(x, &first, level + 1, "end_thread_count");
	put_int(x, (json_int_t)n->end_threads);
	if (n->function) {
		key(x, &first, level + 1, "function");
		put_str(x, n->function);
	}
	if (depth)
		x->labels[depth - 1] = n->label;
	if (n->ends.n) {
		if (x->nclasses == x->cap) {
			size_t cap = x->cap ? 2 * x->cap : 64;
			struct class_of *c = realloc(x->classes, cap * sizeof(*c));
			if (!c) {
				x->failed = true;
				return;
			}
			x->classes = c;
			x->cap = cap;
		}
		struct class_of *c = &x->classes[x->nclasses++];
		*c = (struct class_of){.n = n, .id = id, .depth = depth, .count = cq_ranges_count(&n->ends)};
		for (unsigned k = depth > CLASS_LAST ? depth - CLASS_LAST : 0; k < depth; k++)
			c->last[c->nlast++] = x->labels[k];
	}
	json_t *marks = node_marks(x->t, n, &live, &x->failed);
	key(x, &first, level + 1, "children");
	struct kid *order = kids_in_order(n, &x->failed);
	if (!n->nkids)
		put(x, "[]", 2);
	for (size_t i = 0; i < n->nkids && !x->failed; i++) {
		put(x, i ? "," : "[", 1);
		newline(x, level + 2);
		node_text(x, order[i].n, depth + 1, level + 2, live);
	}
	free(order);
	if (n->nkids) {
		newline(x, level + 1);
		put(x, "]", 1);
	}
	if (marks) {
		key(x, &first, level + 1, "marks");
		put_value(x, marks, level + 1);
		json_decref(marks);
	}
	newline(x, level);
	put(x, "}", 1);
}

static void class_text(struct text *x, const struct class_of *c, unsigned level)
{
	bool first = true;
	key(x, &first, level + 1, "node");
	put_int(x, c->id);
	key(x, &first, level + 1, "depth");
	put_int(x, (json_int_t)c->depth);
	key(x, &first, level + 1, "last");
	if (!c->nlast)
		put(x, "[]", 2);
	for (unsigned k = 0; k < c->nlast; k++) {
		put(x, k ? "," : "[", 1);
		newline(x, level + 2);
		put_str(x, c->last[k]);
	}
	if (c->nlast) {
		newline(x, level + 1);
		put(x, "]", 1);
	}
	key(x, &first, level + 1, "tasks");
	put_ranges(x, &c->n->ends);
	key(x, &first, level + 1, "task_count");
	put_int(x, (json_int_t)c->count);
	key(x, &first, level + 1, "thread_count");
	put_int(x, (json_int_t)c->n->end_threads);
	newline(x, level);
	put(x, "}", 1);
}

struct cq_error *cq_tree_write_json(const struct cq_tree *t, const json_t *extra, FILE *out, uint64_t *size_ret)
{
	struct text x = {.t = t, .out = out, .labels = calloc(CQ_TREE_MAX_DEPTH + 1, sizeof(*x.labels))};
	bool first = true;
	*size_ret = 0;
	if (!x.labels)
		return &cq_error_nomem;
	key(&x, &first, 1, "schema");
	put_lit(&x, "\"coreq-stacks/1\"");
	key(&x, &first, 1, "by");
	put_str(&x, cq_tree_by_names[t->by]);
	key(&x, &first, 1, "all_threads");
	put_lit(&x, t->all_threads ? "true" : "false");
	key(&x, &first, 1, "task_source");
	put_str(&x, cq_tree_source_names[t->source]);
	key(&x, &first, 1, "rank_from");
	put_value(&x, t->rank_from, 1);
	key(&x, &first, 1, "tasks");
	put_ranges(&x, &t->root.tasks);
	key(&x, &first, 1, "task_count");
	put_int(&x, (json_int_t)cq_ranges_count(&t->root.tasks));
	key(&x, &first, 1, "thread_count");
	put_int(&x, (json_int_t)t->root.threads);
	key(&x, &first, 1, "root");
	node_text(&x, &t->root, 0, 1, ~0u);
	key(&x, &first, 1, "classes");
	if (!x.failed && x.nclasses > 1)
		qsort(x.classes, x.nclasses, sizeof(*x.classes), by_class_of);
	if (!x.nclasses)
		put(&x, "[]", 2);
	for (size_t i = 0; i < x.nclasses && !x.failed; i++) {
		put(&x, i ? "," : "[", 1);
		newline(&x, 2);
		class_text(&x, &x.classes[i], 2);
	}
	if (x.nclasses) {
		newline(&x, 1);
		put(&x, "]", 1);
	}
	key(&x, &first, 1, "problems");
	put_value(&x, t->problems, 1);
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)extra, k, v) {
		key(&x, &first, 1, k);
		put_value(&x, v, 1);
	}
	put(&x, "\n}\n", 3);
	free(x.labels);
	free(x.classes);
	*size_ret = x.size;
	return x.failed ? &cq_error_nomem : NULL;
}
