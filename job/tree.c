/* SPDX-License-Identifier: MIT */
/* The stack prefix tree (tree.h): built from bt documents and merged trees; written back as
 * a coreq-stacks/1 document by tree_json.c. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "tree_internal.h"

/* Children are found by a scan while few, by a hash table from this many on: a node with
 * 100,000 distinct children (--by line over ranks stopped on different lines) took a
 * quadratic 35-80 s to build. */
#define INDEX_FROM 16

const char *const cq_tree_by_names[3] = {"function", "line", "module"};
const char *const cq_tree_source_names[3] = {"none", "order", "rank"};

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

static void node_free(struct cq_tree_node *n)
{
	/* recursion as deep as the tree: at most CQ_TREE_MAX_DEPTH */
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
	for (unsigned i = 0; i < t->nmarks; i++) {
		free(t->marks[i].name);
		cq_ranges_deinit(&t->marks[i].set);
	}
	free(t);
}

/* The child of @p n labelled @p label, made when missing (with @p function, the raw name,
 * or NULL); NULL when out of memory. */
static struct cq_tree_node *child(struct cq_tree_node *n, const char *label, const char *function)
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
		struct cq_tree_node **k = realloc(n->kids, cap * sizeof(*k));
		if (!k)
			return NULL;
		n->kids = k;
		n->cap = cap;
	}
	struct cq_tree_node *c = calloc(1, sizeof(*c));
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

static struct cq_error *source_check(struct cq_tree *t, enum cq_tree_source s, const char *name)
{
	if (t->source == CQ_TREE_SOURCE_NONE)
		t->source = s;
	if (t->source != s)
		return cq_error_create(CQ_ERR_USAGE, "%s: its tasks are numbered by %s, the inputs before it by %s: "
				       "give every input MPI ranks, or none", name, cq_tree_source_names[s], cq_tree_source_names[t->source]);
	return NULL;
}

/* One thread's frames (innermost first) as a path from the root, for task @p task: the
 * outermost CQ_TREE_MAX_DEPTH of them. */
static struct cq_error *add_path(struct cq_tree *t, const json_t *frames, uint64_t task)
{
	struct cq_tree_node *n = &t->root;
	struct cq_error *err = cq_ranges_add(&n->tasks, task, task);
	n->threads++;
	size_t nf = json_array_size(frames), stop = nf > CQ_TREE_MAX_DEPTH ? nf - CQ_TREE_MAX_DEPTH : 0;
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
		if ((err = source_check(t, CQ_TREE_SOURCE_RANK, name)))
			return err;
		rank_from(t, jstr(bt, "task_source"));
	} else {
		if ((err = source_check(t, CQ_TREE_SOURCE_ORDER, name)))
			return err;
		if (t->next_order >= CQ_TASK_MAX)
			return cq_error_create(CQ_ERR_USAGE, "%s: more than 2^48 tasks", name);
		task = t->next_order++;
	}
	json_array_foreach(threads, i, th) {
		const json_t *frames = json_object_get(th, "frames");
		if (json_array_size(frames) > CQ_TREE_MAX_DEPTH)
			cq_json_problem(t->problems, name, "thread %zu: %zu frames, the outermost %u kept", i,
					json_array_size(frames), CQ_TREE_MAX_DEPTH);
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
static struct cq_error *merge_node(struct cq_tree_node *n, const json_t *j, uint64_t offset, const char *name,
				   unsigned depth, bool *capped, struct cq_ranges *own)
{
	if (depth > CQ_TREE_MAX_DEPTH)
		return cq_error_create(CQ_ERR_FORMAT, "%s: deeper than %u frames", name, CQ_TREE_MAX_DEPTH);
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
		struct cq_tree_node *c = n ? child(n, label, jstr(k, "function")) : NULL;
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
	if (!by || strcmp(by, cq_tree_by_names[t->by]) || json_is_true(json_object_get(tree, "all_threads")) != t->all_threads)
		return cq_error_create(CQ_ERR_FORMAT, "%s: a tree by %s of %s, this merge is by %s of %s: "
				       "merge trees made with the same --by and --threads", name, by ? by : "?",
				       json_is_true(json_object_get(tree, "all_threads")) ? "all threads" : "one stack per process",
				       cq_tree_by_names[t->by], t->all_threads ? "all threads" : "one stack per process");
	enum cq_tree_source s = src && !strcmp(src, "rank") ? CQ_TREE_SOURCE_RANK : src && !strcmp(src, "order") ? CQ_TREE_SOURCE_ORDER
												    : CQ_TREE_SOURCE_NONE;
	const json_t *root = json_object_get(tree, "root");
	/* tasks by order continue after the ones already added; checked with that offset */
	uint64_t offset = s == CQ_TREE_SOURCE_ORDER ? t->next_order : 0;
	bool capped = false;
	struct cq_ranges own;
	cq_ranges_init(&own);
	struct cq_error *err = merge_node(NULL, root, offset, name, 0, &capped, &own);
	uint64_t next = own.n ? own.r[own.n - 1].hi + 1 : t->next_order; /* offset included */
	cq_ranges_deinit(&own);
	if (err)
		return err;
	if (s == CQ_TREE_SOURCE_NONE) {
		if (src && strcmp(src, "none"))
			return cq_error_create(CQ_ERR_FORMAT, "%s: unknown task_source", name);
	} else if ((err = source_check(t, s, name))) {
		return err;
	}
	if (s == CQ_TREE_SOURCE_ORDER)
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

/* ---- what the document will say ---- */

struct cq_error *cq_tree_mark_tasks(struct cq_tree *t, const char *name, const char *ranks)
{
	if (t->nmarks == CQ_TREE_MAX_MARKS)
		return cq_error_create(CQ_ERR_USAGE, "more than %u markings of one stack tree", CQ_TREE_MAX_MARKS);
	struct cq_tree_marking *m = &t->marks[t->nmarks];
	cq_ranges_init(&m->set);
	struct cq_error *err = cq_ranges_parse(ranks, &m->set);
	if (!err && m->set.n && !(m->name = strdup(name)))
		err = &cq_error_nomem;
	if (err || !m->set.n) { /* an empty set marks nothing (as cq_tree_mark) */
		cq_ranges_deinit(&m->set);
		return err;
	}
	t->nmarks++;
	return NULL;
}

bool cq_tree_ranked(const struct cq_tree *t)
{
	return t->source == CQ_TREE_SOURCE_RANK;
}

size_t cq_tree_problem_count(const struct cq_tree *t)
{
	return json_array_size(t->problems);
}
