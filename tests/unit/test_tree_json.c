/* SPDX-License-Identifier: MIT */
/* The stack tree's JSON text streamed from the tree (job/tree.h: cq_tree_write_json) against
 * the document of it (cq_tree_json) as cq_emit_json writes it: the same bytes for trees of
 * real depth (names that need escaping, raw function names, leaf classes, marks, members
 * added after the tree's), the same content for a tree 1,000 frames deep whose indentation
 * stops at 128 spaces, and the length measured without writing equal to what is written. */
#include <stdlib.h>

#include "check.h"
#include "job/tree.h"

#define OUT_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER)

/* A frame: @p fn and, when not NULL, its raw name @p raw. */
static json_t *frame(const char *fn, const char *raw)
{
	/* the bytes as they are, invalid UTF-8 too (a document made in the process) */
	json_t *f = json_pack("{s:o, s:s, s:s}", "function", json_string_nocheck(raw ? raw : fn), "module", "prog", "pc",
			      "0x1000");
	if (raw)
		json_object_set_new(f, "demangled", json_string_nocheck(fn));
	return f;
}

/* A bt document of task @p task (-1: none) whose one thread is @p frames (innermost first). */
static json_t *bt(int task, json_t *frames)
{
	json_t *d = json_pack("{s:s, s:[{s:i, s:o}]}", "schema", "coreq-bt/2", "threads", "tid", 10, "frames", frames);
	if (task >= 0) {
		json_object_set_new(d, "task", json_integer(task));
		json_object_set_new(d, "task_source", json_string("OMPI_COMM_WORLD_RANK"));
	}
	return d;
}

/* The streamed text (caller frees); its length in *@p len, NULL when it failed. */
static char *stream(const struct cq_tree *t, const json_t *extra, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	uint64_t written = 0, measured = 0;
	FILE *f = open_memstream(&buf, &n);
	struct cq_error *e1 = f ? cq_tree_write_json(t, extra, f, &written) : NULL;
	struct cq_error *e2 = cq_tree_write_json(t, extra, NULL, &measured);
	if (f)
		fclose(f);
	CHECK(f && !e1 && !e2);
	CHECK_U64(written, n);
	CHECK_U64(measured, n); /* measured without writing: what is written */
	cq_error_destroy(e1);
	cq_error_destroy(e2);
	*len = n;
	return buf;
}

/* cq_tree_json's document with @p extra's members, as cq_emit_json writes it. */
static char *dumped(const struct cq_tree *t, const json_t *extra, json_t **doc_ret)
{
	json_t *doc = cq_tree_json(t);
	CHECK(doc && (!extra || !json_object_update(doc, (json_t *)extra)));
	char *s = doc ? json_dumps(doc, OUT_FLAGS) : NULL, *out = NULL;
	if (s && asprintf(&out, "%s\n", s) < 0)
		out = NULL;
	free(s);
	*doc_ret = doc;
	return out;
}

/* Ranks 0-5 over two paths and a shorter one, names that need escaping, a raw name, every
 * kind of member the document has. */
static struct cq_tree *shallow(void)
{
	struct cq_tree *t = cq_tree_create(CQ_TREE_BY_FUNCTION, false);
	const char *odd = "we\"ird\\name\x1b[31m\t\x7f caf\xc3\xa9 \xff\xfe";
	for (int r = 0; r < 6; r++) {
		json_t *fr = json_pack("[o, o, o, o, o]", frame(r % 2 ? "MPI_Recv" : odd, NULL),
				       frame("solve(int)", "_Z5solvei"), frame("step", NULL), frame("main", NULL),
				       frame("__libc_start_main", "__libc_start_main@@GLIBC_2.34"));
		if (r == 5)
			json_array_remove(fr, 0); /* ends in solve, inside the other paths */
		json_t *d = bt(r, fr);
		if (r == 2)
			json_object_set_new(d, "problems", json_pack("[{s:s, s:s}]", "item", "images", "message", "a \"lib\""));
		struct cq_error *err = cq_tree_add_bt(t, d, "rank");
		if (err)
			printf("# %s\n", err->message);
		CHECK(!err);
		cq_error_destroy(err);
		json_decref(d);
	}
	return t;
}

/* @p node and those below it without their marks. */
static void unmark(json_t *node)
{
	json_object_del(node, "marks");
	size_t i;
	json_t *k;
	json_array_foreach(json_object_get(node, "children"), i, k)
		unmark(k);
}

int main(void)
{
	json_t *extra = json_pack("{s:[{s:s, s:s}], s:[{s:i, s:{s:[i, i]}, s:[]}]}", "failed", "input", "x.json", "error",
				  "x.json: not JSON", "progress", "task", 3, "nested", "a", 1, 2, "empty");
	struct cq_tree *t = shallow();
	CHECK(cq_tree_ranked(t));
	CHECK_U64(cq_tree_problem_count(t), 1);
	size_t n;
	json_t *doc;
	char *text = stream(t, extra, &n), *want = dumped(t, extra, &doc);
	CHECK_STR(text, want); /* byte for byte: shallow trees are written as jansson writes them */
	CHECK(text && strstr(text, "\"function\": \"_Z5solvei\""));
	free(text);
	free(want);

	/* marks on the tree: what cq_tree_mark() makes of the document, in the text as well */
	CHECK(!cq_tree_mark(doc, "progressing", "1-3"));
	CHECK(!cq_tree_mark(doc, "deadlock", "4"));
	char *s = json_dumps(doc, OUT_FLAGS);
	want = NULL;
	if (s && asprintf(&want, "%s\n", s) < 0)
		want = NULL;
	free(s);
	json_decref(doc);
	CHECK(!cq_tree_mark_tasks(t, "progressing", "1-3"));
	CHECK(!cq_tree_mark_tasks(t, "deadlock", "4"));
	CHECK(!cq_tree_mark_tasks(t, "nobody", ""));
	text = stream(t, extra, &n);
	CHECK_STR(text, want);
	CHECK(text && strstr(text, "\"marks\": {\n"));
	free(text);
	free(want);
	char *again = dumped(t, extra, &doc);
	json_decref(doc);
	text = stream(t, extra, &n);
	CHECK_STR(again, text); /* cq_tree_json honours the tree's marks too */
	free(again);
	struct cq_error *bad = cq_tree_mark_tasks(t, "bad", "3-");
	CHECK(bad && bad->code == CQ_ERR_FORMAT);
	cq_error_destroy(bad);

	/* what was written merges again: the same tree (marks and the added members are the
	 * writer's, not the tree's) */
	json_t *read = text ? json_loads(text, 0, NULL) : NULL;
	struct cq_tree *t2 = cq_tree_create(CQ_TREE_BY_FUNCTION, false);
	CHECK(read && !cq_tree_add_tree(t2, read, "tree"));
	json_t *d2 = cq_tree_json(t2);
	unmark(json_object_get(read, "root"));
	json_object_del(read, "failed");
	json_object_del(read, "progress");
	CHECK(d2 && read && json_equal(read, d2));
	json_decref(d2);
	json_decref(read);
	cq_tree_destroy(t2);
	free(text);
	cq_tree_destroy(t);

	/* an empty tree: no threads, no classes */
	t = cq_tree_create(CQ_TREE_BY_LINE, true);
	json_t *d = json_pack("{s:s, s:[]}", "schema", "coreq-bt/2", "threads");
	CHECK(!cq_tree_add_bt(t, d, "empty"));
	json_decref(d);
	text = stream(t, NULL, &n);
	want = dumped(t, NULL, &doc);
	CHECK_STR(text, want);
	json_decref(doc);
	free(text);
	free(want);
	cq_tree_destroy(t);

	/* 1,000 frames deep, 60 leaves at the bottom and one ending on the way: the same
	 * document, indented no deeper than 128 spaces, a fraction of jansson's size */
	t = cq_tree_create(CQ_TREE_BY_FUNCTION, true);
	for (int leaf = 0; leaf < 61; leaf++) {
		json_t *fr = json_array();
		char name[32];
		snprintf(name, sizeof(name), "leaf%d", leaf);
		if (leaf < 60)
			json_array_append_new(fr, frame(name, NULL));
		for (int depth = 999; depth >= (leaf < 60 ? 1 : 500); depth--) {
			snprintf(name, sizeof(name), "f%d", depth);
			json_array_append_new(fr, frame(name, NULL));
		}
		d = bt(-1, fr);
		CHECK(!cq_tree_add_bt(t, d, "deep"));
		json_decref(d);
	}
	CHECK(!cq_tree_mark_tasks(t, "some", "3-7"));
	text = stream(t, extra, &n);
	json_t *doc2;
	want = dumped(t, extra, &doc2);
	read = text ? json_loads(text, 0, NULL) : NULL;
	CHECK(read && json_equal(read, doc2));
	size_t widest = 0;
	for (const char *p = text ? text : ""; *p;) {
		size_t sp = strspn(p, " ");
		widest = sp > widest ? sp : widest;
		p = strchr(p, '\n');
		if (!p)
			break;
		p++;
	}
	CHECK_U64(widest, 128);
	CHECK(want && n * 10 < strlen(want)); /* jansson's: 4 spaces more for each frame */
	printf("deep tree: %zu bytes streamed, %zu as jansson writes it\n", n, want ? strlen(want) : 0);
	json_decref(read);
	json_decref(doc2);
	free(text);
	free(want);
	cq_tree_destroy(t);
	json_decref(extra);
	return check_report("test_tree_json");
}
