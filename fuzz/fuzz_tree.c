/* SPDX-License-Identifier: MIT */
/* fuzz_tree: the stack tree's inputs (job/tree.h: `coreq stacks BT.json|TREE.json...`), any
 * mix of coreq-bt/2 documents and coreq-stacks/1 trees, made from the input bytes by a
 * small generator rather than parsed from JSON text: most mutations of JSON text are not
 * JSON, and what the tree's bounds are about (wide nodes, deep paths, large and reversed
 * task sets, counts near 2^48, labels that collide, members of the wrong type) are shapes,
 * not spellings. fuzz_jobjson covers the JSON text itself.
 *
 * Input: u8 mode (bits 0-1: labels by function, line or module; bit 2: every thread;
 * bit 3: colours; bit 4: the document read back as a tree and merged again; bit 5: ranks
 * marked), u8 document count, then per document a u8 kind and its parts (below). The
 * cursor yields zeros once the input is used up, so every input is a complete program.
 *
 * The harness's limits (fuzz/run.sh: -timeout=5, -rss_limit_mb=768 for this target) are
 * the tree's bounds made checkable: with at most NODE_BUDGET nodes and 64 KiB of input,
 * anything quadratic (a sibling scan per child, a memmove per task id, a path copied per
 * class) is a timeout or an out-of-memory finding. */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "job/tree.h"

#define NODE_BUDGET 40000 /* nodes and frames one input may make in all */
#define MAX_DOCS 24

struct gen {
	const uint8_t *p;
	size_t n, at;
	size_t budget;
};

static unsigned u8(struct gen *g)
{
	return g->at < g->n ? g->p[g->at++] : 0;
}

static unsigned u16(struct gen *g)
{
	unsigned a = u8(g);
	return a | u8(g) << 8;
}

static bool spend(struct gen *g, size_t n)
{
	if (g->budget < n)
		return false;
	g->budget -= n;
	return true;
}

/* Names that collide once demangled or unversioned, escapes, a long one, an empty one. */
static const char *const names[] = {
	"main", "_start", "__libc_start_main", "__libc_start_main@@GLIBC_2.34", "_ZN9LAMMPS_NS9PairLJCut7computeEii",
	"LAMMPS_NS::PairLJCut::compute(int, int)", "PMPI_Send", "PMPI_Barrier", "opal_progress", "start_thread",
	"clone3", "", "we\"ird\\name\x1b[31m", "\xff\xfe not utf-8", "f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7",
	"_ZSt4endlIcSt11char_traitsIcEERSt13basic_ostreamIT_T0_ES6_", "__kmp_launch_thread", "/", "?", "0x0",
};
#define NNAMES (sizeof(names) / sizeof(names[0]))

static json_t *name(struct gen *g)
{
	unsigned c = u8(g);
	if (c == 0xff && spend(g, 16)) { /* a long label: 4 KiB, as much memory as 16 nodes */
		static char big[4097];
		if (!big[0])
			memset(big, 'x', sizeof(big) - 1);
		return json_string_nocheck(big);
	}
	if (c >= 0xf0) { /* a numbered one: many distinct siblings */
		char b[32];
		snprintf(b, sizeof(b), "fn%u", u16(g));
		return json_string(b);
	}
	return json_stringn_nocheck(names[c % NNAMES], strlen(names[c % NNAMES]));
}

/* A task id: small, near 2^48, or beyond it. */
static uint64_t task_id(struct gen *g)
{
	unsigned c = u8(g);
	switch (c >> 6) {
	case 0: return c & 63;
	case 1: return u16(g);
	case 2: return (UINT64_C(1) << 48) - 1 - (c & 63);
	default: return (UINT64_C(1) << 48) + (c & 63); /* refused */
	}
}

/* A task set as text: ranges in any order, overlapping, reversed, or not ranges at all. */
static json_t *task_set(struct gen *g)
{
	unsigned n = u8(g);
	if (n == 0xff)
		return json_integer(7); /* the wrong type */
	if (n == 0xfe)
		return json_string("1-0,x"); /* not ranges */
	n %= 48;
	size_t cap = 16 + n * 48, len = 0;
	char *s = malloc(cap);
	if (!s)
		return NULL;
	s[0] = 0;
	if (n == 47 && spend(g, 2000)) { /* 2000 ids in decreasing order */
		json_t *j;
		free(s);
		cap = 2000 * 12;
		if (!(s = malloc(cap)))
			return NULL;
		for (int i = 2000; i-- > 0;)
			len += (size_t)snprintf(s + len, cap - len, "%s%d", len ? "," : "", i * 3);
		j = json_string(s);
		free(s);
		return j;
	}
	for (unsigned i = 0; i < n; i++) {
		uint64_t lo = task_id(g), hi = (u8(g) & 1) ? task_id(g) : lo;
		len += (size_t)snprintf(s + len, cap - len, "%s%llu", i ? "," : "", (unsigned long long)lo);
		if (hi != lo)
			len += (size_t)snprintf(s + len, cap - len, "-%llu", (unsigned long long)hi);
	}
	json_t *j = json_string(s);
	free(s);
	return j;
}

/* A count: small, at the cap, beyond it, negative, or not a number. */
static json_t *count(struct gen *g)
{
	unsigned c = u8(g);
	switch (c >> 5) {
	case 0: case 1: case 2: case 3: return json_integer(c & 31);
	case 4: return json_integer((json_int_t)((UINT64_C(1) << 48) - 1 - (c & 7)));
	case 5: return json_integer((json_int_t)(UINT64_C(1) << 48));
	case 6: return json_integer(-(json_int_t)(c & 31) - 1);
	default: return json_string("3");
	}
}

/* One frame of a bt document. */
static json_t *frame(struct gen *g)
{
	unsigned f = u8(g);
	json_t *o = json_object();
	if (f & 1)
		json_object_set_new(o, "function", name(g));
	if (f & 2)
		json_object_set_new(o, "demangled", name(g));
	if (f & 4) {
		json_object_set_new(o, "file", name(g));
		json_object_set_new(o, "line", json_integer((json_int_t)u16(g) - (f & 128 ? 70000 : 0)));
	}
	if (f & 8) {
		json_object_set_new(o, "module", name(g));
		json_object_set_new(o, "module_offset", json_string(f & 16 ? "0x10" : "0x2f"));
	}
	if (f & 32)
		json_object_set_new(o, "pc", json_string("0x401000"));
	return o;
}

static json_t *bt_doc(struct gen *g, unsigned kind)
{
	json_t *d = json_pack("{s:s}", "schema", (kind & 0x80) ? "coreq-bt/1" : "coreq-bt/2");
	switch (kind >> 1 & 3) {
	case 1: json_object_set_new(d, "task", json_integer((json_int_t)task_id(g))); break;
	case 2: json_object_set_new(d, "task", json_integer(-1)); break;
	case 3: json_object_set_new(d, "task", json_integer((json_int_t)u8(g)));
		json_object_set_new(d, "task_source", json_string(u8(g) & 1 ? "OMPI_COMM_WORLD_RANK" : "PMI_RANK"));
		break;
	}
	json_t *threads = json_array();
	unsigned nt = u8(g) % 17;
	for (unsigned i = 0; i < nt; i++) {
		unsigned nf = u8(g);
		/* from 0x80 on: a deep stack, beyond the kept 1000 frames at the top */
		size_t depth = nf & 0x80 ? 900 + (size_t)(nf & 0x7f) * 2 : nf % 48;
		if (!spend(g, depth + 1))
			break;
		json_t *frames = json_array();
		/* a deep stack repeats a few frames; a short one has its own */
		json_t *pattern[4] = {frame(g), frame(g), frame(g), frame(g)};
		for (size_t k = 0; k < depth; k++)
			json_array_append_new(frames, depth > 48 ? json_deep_copy(pattern[k % 4]) : frame(g));
		for (int k = 0; k < 4; k++)
			json_decref(pattern[k]);
		if ((nf & 0x7f) == 0x7f)
			json_array_append_new(frames, json_integer(1)); /* a frame that is not an object */
		json_array_append_new(threads, json_pack("{s:o}", "frames", frames));
	}
	json_object_set_new(d, "threads", threads);
	if (kind & 0x40)
		json_object_set_new(d, "problems", json_pack("[{s:s, s:s}]", "item", "x\x1b", "message", "m"));
	return d;
}

/* A tree node and its children, @p depth below the root. */
static json_t *tree_node(struct gen *g, unsigned depth, bool root)
{
	unsigned shape = u8(g);
	json_t *o = json_object();
	json_object_set_new(o, "label", root ? json_string("/") : (shape & 0xc0) == 0xc0 ? json_integer(1) : name(g));
	if (shape & 1)
		json_object_set_new(o, "function", name(g));
	json_object_set_new(o, "tasks", task_set(g));
	json_object_set_new(o, "ends", (shape & 2) ? task_set(g) : json_string(""));
	json_object_set_new(o, "thread_count", count(g));
	json_object_set_new(o, "end_thread_count", count(g));
	json_t *kids = json_array();
	unsigned nk = shape >> 2 & 7;
	if (nk == 7)
		nk = 17 + u8(g) % 64; /* past the hash index's threshold */
	if (depth >= 1001)
		nk = 0;
	/* a chain: one child per level, to the depth limit and past it */
	if (nk == 6 && (shape & 0x80)) {
		unsigned chain = 990 + u8(g) % 16;
		json_t *leaf = NULL;
		if (spend(g, chain)) {
			/* one task id, not a task_set(): a set shared by every node of the chain
			 * would be a thousand copies of itself for the tree (a 2000-id set: 2
			 * million ranges from 20 bytes of input), beyond what the budget counts */
			char id[24];
			snprintf(id, sizeof(id), "%llu", (unsigned long long)task_id(g));
			json_t *label = name(g), *tasks = json_string(id);
			for (unsigned k = 0; k < chain; k++) {
				json_t *kk = json_array();
				if (leaf)
					json_array_append_new(kk, leaf);
				leaf = json_pack("{s:O, s:O, s:s, s:i, s:i, s:o}", "label", label, "tasks", tasks, "ends", "",
						 "thread_count", 1, "end_thread_count", 0, "children", kk);
			}
			json_decref(label);
			json_decref(tasks);
			json_array_append_new(kids, leaf);
		}
		nk = 0;
	}
	for (unsigned i = 0; i < nk && spend(g, 1); i++)
		json_array_append_new(kids, tree_node(g, depth + 1, false));
	json_object_set_new(o, "children", (shape & 0xe0) == 0x20 && depth ? json_object() : kids);
	if ((shape & 0xe0) == 0x20 && depth)
		json_decref(kids);
	return o;
}

static const char *const by_names[] = {"function", "line", "module"};

static json_t *tree_doc(struct gen *g, unsigned kind, unsigned mode)
{
	static const char *const sources[] = {"order", "rank", "none", "bogus"};
	bool all = (kind & 0x40) ? !(mode & 4) : (mode & 4);
	return json_pack("{s:s, s:s, s:b, s:s, s:[s], s:[], s:[], s:o}", "schema",
			 (kind & 0x80) ? "coreq-stacks/0" : "coreq-stacks/1", "by",
			 by_names[((mode & 3) + (kind >> 5 & 1)) % 3], "all_threads", all, "task_source",
			 sources[kind >> 1 & 3], "rank_from", "OMPI_COMM_WORLD_RANK", "problems", "classes", "root",
			 tree_node(g, 0, true));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int verbose = -1; /* FUZZ_VERBOSE=1: what each document did (replaying a finding) */
	if (verbose < 0)
		verbose = getenv("FUZZ_VERBOSE") != NULL;
	struct gen g = {.p = data, .n = size, .budget = NODE_BUDGET};
	unsigned mode = u8(&g), ndocs = 1 + u8(&g) % MAX_DOCS;
	enum cq_tree_label by = (enum cq_tree_label)((mode & 3) % 3);
	struct cq_tree *t = cq_tree_create(by, mode & 4);
	if (!t)
		return 0;
	for (unsigned i = 0; i < ndocs && g.budget; i++) {
		unsigned kind = u8(&g);
		json_t *doc = (kind & 1) ? tree_doc(&g, kind, mode) : bt_doc(&g, kind);
		struct cq_error *err = (kind & 1) ? cq_tree_add_tree(t, doc, "doc") : cq_tree_add_bt(t, doc, "doc");
		if (verbose)
			fprintf(stderr, "fuzz_tree: %s %u: %s\n", (kind & 1) ? "tree" : "bt", i,
				err ? err->message : "merged");
		cq_error_destroy(err);
		json_decref(doc);
	}
	json_t *out = cq_tree_json(t);
	cq_tree_destroy(t);
	if (!out)
		return 0;
	if (verbose)
		fprintf(stderr, "fuzz_tree: %lld tasks, %zu classes, %zu bytes of input used, %zu of the budget left\n",
			(long long)json_integer_value(json_object_get(out, "task_count")),
			json_array_size(json_object_get(out, "classes")), g.at, g.budget);
	static FILE *null;
	if (!null)
		null = fopen("/dev/null", "w");
	if (mode & 32) {
		char ranks[32];
		snprintf(ranks, sizeof(ranks), "%u-%u", u8(&g), u8(&g) + 3);
		cq_error_destroy(cq_tree_mark(out, "marked", ranks));
	}
	if (null)
		cq_tree_print(out, null, mode & 8);
	free(cq_tree_dot(out));
	if (mode & 16) { /* read back, as the next merge's input, and merged with itself */
		struct cq_tree *t2 = cq_tree_create(by, mode & 4);
		if (t2) {
			cq_error_destroy(cq_tree_add_tree(t2, out, "tree"));
			cq_error_destroy(cq_tree_add_tree(t2, out, "tree"));
			json_decref(cq_tree_json(t2));
			cq_tree_destroy(t2);
		}
	}
	json_decref(out);
	return 0;
}
