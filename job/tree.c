/* SPDX-License-Identifier: MIT */
/* The stack prefix tree (tree.h): built from bt documents and merged trees, written back as
 * a coreq-stacks/1 document. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "ranges.h"
#include "tree.h"

struct node {
	char *label;
	/* the raw name of the function it is labelled by (a mangled or versioned symbol) where
	 * that differs from the label's name, as the first frame that reached it has it; NULL */
	char *function;
	struct cq_ranges tasks, ends; /* that reached it; whose stack ends here */
	uint64_t threads, end_threads;
	struct node **kids;
	size_t nkids, cap;
	json_t *index; /* label -> position in kids, once there are INDEX_FROM of them */
};

/* Children are found by a scan while few, by a hash table from this many on: a node with
 * 100,000 distinct children (--by line over ranks stopped on different lines) took a
 * quadratic 35-80 s to build. */
#define INDEX_FROM 16

enum source { SOURCE_NONE, SOURCE_ORDER, SOURCE_RANK };

struct cq_tree {
	enum cq_tree_label by;
	bool all_threads;
	struct node root;
	enum source source;
	uint64_t next_order; /* the next task id by input order */
	json_t *rank_from;   /* the variables ranks came from (bt's "task_source"), distinct */
	json_t *problems;
};

static const char *const by_names[] = {"function", "line", "module"};
static const char *const source_names[] = {"none", "order", "rank"};

/* A path keeps at most this many frames, the outermost (bt's --max-frames goes to 100,000;
 * real stacks are tens deep): the tree is walked recursively, and its JSON nests two levels
 * per frame, which jansson reads to a depth of 2048. Deeper trees are refused when read. */
#define MAX_DEPTH 1000

struct cq_tree *cq_tree_create(enum cq_tree_label by, bool all_threads)
{
	struct cq_tree *t = calloc(1, sizeof(*t));
	if (!t || !(t->root.label = strdup("/")) || !(t->problems = json_array()) || !(t->rank_from = json_array())) {
		if (t) {
			free(t->root.label);
			json_decref(t->problems);
		}
		free(t);
		return NULL;
	}
	t->by = by;
	t->all_threads = all_threads;
	return t;
}

static void node_free(struct node *n)
{
	/* recursion as deep as the tree: at most MAX_DEPTH */
	for (size_t i = 0; i < n->nkids; i++) {
		node_free(n->kids[i]);
		free(n->kids[i]);
	}
	free(n->kids);
	json_decref(n->index);
	free(n->label);
	free(n->function);
	cq_ranges_deinit(&n->tasks);
	cq_ranges_deinit(&n->ends);
}

void cq_tree_destroy(struct cq_tree *t)
{
	if (!t)
		return;
	node_free(&t->root);
	json_decref(t->problems);
	json_decref(t->rank_from);
	free(t);
}

/* The child of @p n labelled @p label, made when missing (with @p function, the raw name,
 * or NULL); NULL when out of memory. */
static struct node *child(struct node *n, const char *label, const char *function)
{
	if (n->index) {
		json_t *at = json_object_get(n->index, label);
		if (at)
			return n->kids[json_integer_value(at)];
	} else {
		for (size_t i = 0; i < n->nkids; i++)
			if (!strcmp(n->kids[i]->label, label))
				return n->kids[i];
	}
	if (n->nkids == n->cap) {
		size_t cap = n->cap ? n->cap * 2 : 2;
		struct node **k = realloc(n->kids, cap * sizeof(*k));
		if (!k)
			return NULL;
		n->kids = k;
		n->cap = cap;
	}
	struct node *c = calloc(1, sizeof(*c));
	if (!c || !(c->label = strdup(label)) || (function && !(c->function = strdup(function)))) {
		if (c)
			free(c->label);
		free(c);
		return NULL;
	}
	n->kids[n->nkids++] = c;
	/* labels are the core's bytes, not always UTF-8: the table takes them unchecked */
	if (!n->index && n->nkids >= INDEX_FROM && (n->index = json_object()))
		for (size_t i = 0; i + 1 < n->nkids; i++)
			json_object_set_new_nocheck(n->index, n->kids[i]->label, json_integer((json_int_t)i));
	if (n->index)
		json_object_set_new_nocheck(n->index, label, json_integer((json_int_t)(n->nkids - 1)));
	return c;
}

static const char *jstr(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* The label of one bt frame (caller frees), and in *@p raw its function's raw name where
 * the label names it otherwise (demangled, without a symbol version), else NULL. */
static char *frame_label(const struct cq_tree *t, const json_t *f, const char **raw)
{
	const char *fn = jstr(f, "demangled") ?: jstr(f, "function");
	*raw = t->by != CQ_TREE_BY_MODULE && fn && jstr(f, "function") && strcmp(fn, jstr(f, "function"))
		       ? jstr(f, "function") : NULL;
	const char *mod = jstr(f, "module"), *moff = jstr(f, "module_offset"), *pc = jstr(f, "pc");
	const char *file = jstr(f, "file");
	char *s = NULL;
	int r;
	if (t->by == CQ_TREE_BY_MODULE || !fn)
		r = mod ? asprintf(&s, "%s+%s", mod, moff ? moff : "?") : asprintf(&s, "%s", pc ? pc : "?");
	else if (t->by == CQ_TREE_BY_LINE && file)
		r = asprintf(&s, "%s (%s:%" JSON_INTEGER_FORMAT ")", fn, file, json_integer_value(json_object_get(f, "line")));
	else
		r = asprintf(&s, "%s", fn);
	return r < 0 ? NULL : s;
}

/* Note @p var (where a rank came from) once. */
static void rank_from(struct cq_tree *t, const char *var)
{
	size_t i;
	json_t *v;
	if (!var)
		return;
	json_array_foreach(t->rank_from, i, v)
		if (!strcmp(json_string_value(v) ?: "", var))
			return;
	if (json_array_size(t->rank_from) < 16) /* a tree read back may list many */
		json_array_append_new(t->rank_from, cq_json_str(var));
}

static struct cq_error *source_check(struct cq_tree *t, enum source s, const char *name)
{
	if (t->source == SOURCE_NONE)
		t->source = s;
	if (t->source != s)
		return cq_error_create(CQ_ERR_USAGE, "%s: its tasks are numbered by %s, the inputs before it by %s: "
				       "give every input MPI ranks, or none", name, source_names[s], source_names[t->source]);
	return NULL;
}

/* One thread's frames (innermost first) as a path from the root, for task @p task: the
 * outermost MAX_DEPTH of them. */
static struct cq_error *add_path(struct cq_tree *t, const json_t *frames, uint64_t task)
{
	struct node *n = &t->root;
	struct cq_error *err = cq_ranges_add(&n->tasks, task, task);
	n->threads++;
	size_t nf = json_array_size(frames), stop = nf > MAX_DEPTH ? nf - MAX_DEPTH : 0;
	for (size_t i = nf; !err && i-- > stop;) {
		const json_t *f = json_array_get(frames, i);
		const char *raw;
		char *label = frame_label(t, f, &raw);
		if (!label)
			return &cq_error_nomem;
		n = child(n, label, raw);
		free(label);
		if (!n)
			return &cq_error_nomem;
		err = cq_ranges_add(&n->tasks, task, task);
		n->threads++;
	}
	if (!err && !(err = cq_ranges_add(&n->ends, task, task)))
		n->end_threads++;
	return err;
}

struct cq_error *cq_tree_add_bt(struct cq_tree *t, const json_t *bt, const char *name)
{
	const char *schema = jstr(bt, "schema");
	if (!schema || strcmp(schema, "coreq-bt/2"))
		return cq_error_create(CQ_ERR_FORMAT, "%s: not a coreq-bt/2 document (made by coreq bt --json)", name);
	const json_t *threads = json_object_get(bt, "threads");
	if (!json_is_array(threads))
		return cq_error_create(CQ_ERR_FORMAT, "%s: no \"threads\" array", name);
	const json_t *tj = json_object_get(bt, "task");
	uint64_t task;
	struct cq_error *err;
	if (tj && (!json_is_integer(tj) || json_integer_value(tj) < 0 || (uint64_t)json_integer_value(tj) >= CQ_TASK_MAX))
		return cq_error_create(CQ_ERR_FORMAT, "%s: \"task\" is not a task id (0 to 2^48)", name);
	size_t i, k;
	const json_t *th, *f;
	/* checked whole first: a document refused adds nothing */
	json_array_foreach(threads, i, th) {
		const json_t *frames = json_object_get(th, "frames");
		if (!json_is_array(frames))
			return cq_error_create(CQ_ERR_FORMAT, "%s: thread %zu has no \"frames\" array", name, i);
		json_array_foreach(frames, k, f)
			if (!json_is_object(f))
				return cq_error_create(CQ_ERR_FORMAT, "%s: thread %zu: frame %zu is not an object", name, i, k);
		if (!t->all_threads)
			break;
	}
	if (tj) {
		task = (uint64_t)json_integer_value(tj);
		if ((err = source_check(t, SOURCE_RANK, name)))
			return err;
		rank_from(t, jstr(bt, "task_source"));
	} else {
		if ((err = source_check(t, SOURCE_ORDER, name)))
			return err;
		if (t->next_order >= CQ_TASK_MAX)
			return cq_error_create(CQ_ERR_USAGE, "%s: more than 2^48 tasks", name);
		task = t->next_order++;
	}
	json_array_foreach(threads, i, th) {
		const json_t *frames = json_object_get(th, "frames");
		if (json_array_size(frames) > MAX_DEPTH)
			cq_json_problem(t->problems, name, "thread %zu: %zu frames, the outermost %u kept", i,
					json_array_size(frames), MAX_DEPTH);
		if ((err = add_path(t, frames, task)))
			return err;
		if (!t->all_threads)
			break; /* the first thread: the crashing one when there is one */
	}
	if (!json_array_size(threads))
		cq_json_problem(t->problems, name, "no threads: the process is counted at the root only");
	if (!json_array_size(threads) && (err = cq_ranges_add(&t->root.tasks, task, task)))
		return err;
	const json_t *p;
	json_array_foreach(json_object_get(bt, "problems"), i, p)
		cq_json_problem(t->problems, name, "%s: %s", jstr(p, "item") ?: "?", jstr(p, "message") ?: "?");
	return NULL;
}

/* ---- merged trees read back ---- */

static struct cq_error *count_of(const json_t *n, const char *key, const char *name, uint64_t *v)
{
	const json_t *j = json_object_get(n, key);
	if (!json_is_integer(j) || json_integer_value(j) < 0 || (uint64_t)json_integer_value(j) >= CQ_TASK_MAX)
		return cq_error_create(CQ_ERR_FORMAT, "%s: a node's \"%s\" is not a count", name, key);
	*v = (uint64_t)json_integer_value(j);
	return NULL;
}

/* @p in's task set, shifted by @p offset, added to @p out. */
static struct cq_error *ranges_of(const json_t *n, const char *key, uint64_t offset, const char *name,
				  struct cq_ranges *out)
{
	const char *text = jstr(n, key);
	if (!text)
		return cq_error_create(CQ_ERR_FORMAT, "%s: a node has no \"%s\" string", name, key);
	struct cq_ranges r;
	cq_ranges_init(&r);
	struct cq_error *err = cq_ranges_parse(text, &r);
	for (size_t i = 0; !err && i < r.n; i++)
		err = r.r[i].hi + offset >= CQ_TASK_MAX
			      ? cq_error_create(CQ_ERR_FORMAT, "%s: task ids beyond 2^48 (numbered after the inputs "
						"before it)", name)
			      : cq_ranges_add(out, r.r[i].lo + offset, r.r[i].hi + offset);
	cq_ranges_deinit(&r);
	if (err && err->code == CQ_ERR_FORMAT) {
		struct cq_error *e2 = cq_error_create(CQ_ERR_FORMAT, "%s: %s", name, err->message);
		cq_error_destroy(err);
		return e2;
	}
	return err;
}

/* Merge node @p j into @p n, or with @p n NULL only check it (a tree refused adds nothing:
 * it is checked whole before it is merged). */
/* @p a + @p b within the bound every count keeps (CQ_TASK_MAX - 1): a sum over many
 * inputs must not wrap (it was printed negative); *@p capped says when it was held. */
static uint64_t add_count(uint64_t a, uint64_t b, bool *capped)
{
	if (a + b >= CQ_TASK_MAX || a + b < a) {
		*capped = true;
		return CQ_TASK_MAX - 1;
	}
	return a + b;
}

/* @p own, when not NULL (the check of the root), receives the node's own task set as
 * parsed, shifted by @p offset: the root's set is parsed once for the check and once for
 * the merge, not a third time for the order's next id. */
static struct cq_error *merge_node(struct node *n, const json_t *j, uint64_t offset, const char *name,
				   unsigned depth, bool *capped, struct cq_ranges *own)
{
	if (depth > MAX_DEPTH)
		return cq_error_create(CQ_ERR_FORMAT, "%s: deeper than %u frames", name, MAX_DEPTH);
	if (!json_is_object(j))
		return cq_error_create(CQ_ERR_FORMAT, "%s: a node is not an object", name);
	uint64_t threads, end_threads;
	struct cq_error *err;
	struct cq_ranges scratch_tasks, scratch_ends;
	cq_ranges_init(&scratch_tasks);
	cq_ranges_init(&scratch_ends);
	if (!(err = ranges_of(j, "tasks", offset, name, n ? &n->tasks : own ? own : &scratch_tasks)) &&
	    !(err = ranges_of(j, "ends", offset, name, n ? &n->ends : &scratch_ends)) &&
	    !(err = count_of(j, "thread_count", name, &threads)))
		err = count_of(j, "end_thread_count", name, &end_threads);
	cq_ranges_deinit(&scratch_tasks);
	cq_ranges_deinit(&scratch_ends);
	if (err)
		return err;
	if (n) {
		n->threads = add_count(n->threads, threads, capped);
		n->end_threads = add_count(n->end_threads, end_threads, capped);
	}
	const json_t *kids = json_object_get(j, "children"), *k;
	if (!json_is_array(kids))
		return cq_error_create(CQ_ERR_FORMAT, "%s: a node has no \"children\" array", name);
	size_t i;
	json_array_foreach(kids, i, k) {
		const char *label = jstr(k, "label");
		if (!label)
			return cq_error_create(CQ_ERR_FORMAT, "%s: a node has no \"label\" string", name);
		struct node *c = n ? child(n, label, jstr(k, "function")) : NULL;
		if (n && !c)
			return &cq_error_nomem;
		if ((err = merge_node(c, k, offset, name, depth + 1, capped, NULL)))
			return err;
	}
	return NULL;
}

struct cq_error *cq_tree_add_tree(struct cq_tree *t, const json_t *tree, const char *name)
{
	const char *schema = jstr(tree, "schema"), *by = jstr(tree, "by"), *src = jstr(tree, "task_source");
	if (!schema || strcmp(schema, "coreq-stacks/1"))
		return cq_error_create(CQ_ERR_FORMAT, "%s: not a coreq-stacks/1 document (made by coreq stacks --json)",
				       name);
	if (!by || strcmp(by, by_names[t->by]) || json_is_true(json_object_get(tree, "all_threads")) != t->all_threads)
		return cq_error_create(CQ_ERR_FORMAT, "%s: a tree by %s of %s, this merge is by %s of %s: "
				       "merge trees made with the same --by and --threads", name, by ? by : "?",
				       json_is_true(json_object_get(tree, "all_threads")) ? "all threads" : "one stack per process",
				       by_names[t->by], t->all_threads ? "all threads" : "one stack per process");
	enum source s = src && !strcmp(src, "rank") ? SOURCE_RANK : src && !strcmp(src, "order") ? SOURCE_ORDER
												    : SOURCE_NONE;
	const json_t *root = json_object_get(tree, "root");
	/* tasks by order continue after the ones already added; checked with that offset */
	uint64_t offset = s == SOURCE_ORDER ? t->next_order : 0;
	bool capped = false;
	struct cq_ranges own;
	cq_ranges_init(&own);
	struct cq_error *err = merge_node(NULL, root, offset, name, 0, &capped, &own);
	uint64_t next = own.n ? own.r[own.n - 1].hi + 1 : t->next_order; /* offset included */
	cq_ranges_deinit(&own);
	if (err)
		return err;
	if (s == SOURCE_NONE) {
		if (src && strcmp(src, "none"))
			return cq_error_create(CQ_ERR_FORMAT, "%s: unknown task_source", name);
	} else if ((err = source_check(t, s, name))) {
		return err;
	}
	if (s == SOURCE_ORDER)
		t->next_order = next;
	if ((err = merge_node(&t->root, root, offset, name, 0, &capped, NULL)))
		return err;
	if (capped)
		cq_json_problem(t->problems, name, "thread counts above 2^48 - 1 in total: held at 2^48 - 1 (the counts "
				"of this tree and those merged before it)");
	const json_t *p;
	size_t i;
	json_array_foreach(json_object_get(tree, "problems"), i, p)
		json_array_append(t->problems, (json_t *)p);
	json_array_foreach(json_object_get(tree, "rank_from"), i, p)
		rank_from(t, json_string_value(p));
	return NULL;
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

/* A child in output order: most tasks first, then by label. */
struct kid {
	const struct node *n;
	uint64_t count;
};

static int kid_order(const void *a, const void *b)
{
	const struct kid *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->n->label, y->n->label);
}

/* The walk that writes the document: node ids in preorder, and the labels of the path
 * from the root's child down to the node being written (as pointers into the tree: a path
 * is never copied, so memory stays linear in the nodes however deep the leaves are). */
struct walk {
	json_t *classes;
	const char **labels; /* MAX_DEPTH + 1 */
	json_int_t next_id;
	bool failed;
};

/* How many of a class's innermost labels its JSON repeats (the text shows as many): the
 * whole path is the chain of nodes to "node", which a reader follows in the tree. */
#define CLASS_LAST 3

/* The JSON of @p n at @p depth (the root's is 0); its leaf class, if any, appended to the
 * walk's classes. NULL when out of memory. */
static json_t *node_json(const struct node *n, unsigned depth, struct walk *w)
{
	json_int_t id = w->next_id++;
	json_t *kids = json_array();
	json_t *o = json_pack("{s:I, s:o, s:o, s:I, s:I, s:o, s:I}", "id", id, "label", cq_json_str(n->label),
			      "tasks", ranges_json(&n->tasks), "task_count", (json_int_t)cq_ranges_count(&n->tasks),
			      "thread_count", (json_int_t)n->threads, "ends", ranges_json(&n->ends),
			      "end_thread_count", (json_int_t)n->end_threads);
	struct kid *order = n->nkids ? malloc(n->nkids * sizeof(*order)) : NULL;
	if (!o || !kids || (n->nkids && !order)) {
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
	for (size_t i = 0; i < n->nkids; i++)
		order[i] = (struct kid){n->kids[i], cq_ranges_count(&n->kids[i]->tasks)};
	if (n->nkids > 1)
		qsort(order, n->nkids, sizeof(*order), kid_order);
	for (size_t i = 0; i < n->nkids && !w->failed; i++) {
		json_t *k = node_json(order[i].n, depth + 1, w);
		if (!k || json_array_append_new(kids, k))
			w->failed = true;
	}
	free(order);
	json_object_set_new(o, "children", kids);
	return o;
}

json_t *cq_tree_json(const struct cq_tree *t)
{
	struct walk w = {.classes = json_array(), .labels = calloc(MAX_DEPTH + 1, sizeof(*w.labels))};
	json_t *root = w.classes && w.labels ? node_json(&t->root, 0, &w) : NULL;
	free(w.labels);
	if (!root || w.failed) {
		json_decref(root);
		json_decref(w.classes);
		return NULL;
	}
	sorted(w.classes, by_class);
	return json_pack("{s:s, s:s, s:b, s:s, s:O, s:O, s:O, s:O, s:o, s:o, s:O}", "schema", "coreq-stacks/1", "by",
			 by_names[t->by], "all_threads", t->all_threads, "task_source", source_names[t->source],
			 "rank_from", t->rank_from,
			 "tasks", json_object_get(root, "tasks"), "task_count", json_object_get(root, "task_count"),
			 "thread_count", json_object_get(root, "thread_count"), "root", root, "classes", w.classes,
			 "problems", t->problems);
}
