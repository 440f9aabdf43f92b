/* SPDX-License-Identifier: MIT */
/* fuzz_jobjson: the input is the per-rank documents of an MPI job as the job view reads
 * them (`coreq mqd RANK.json...`: made elsewhere, so as hostile as a core): JSON texts
 * separated by NUL bytes. Each that parses becomes one document of the job; the job view
 * (matching, wait-for graph, cycles, stalls; job/waitfor.c) and its DOT text are made. The
 * same documents go to a stack tree (job/tree.h: `coreq stacks BT.json|TREE.json...`),
 * whose JSON, text and DOT are made too; and the first two documents are joined as a
 * process's stacks and its OMPD report (job/ompjoin.h). */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "job/ompjoin.h"
#include "job/tree.h"
#include "job/waitfor.h"

#define MAX_DOCS 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *docs = json_array();
	size_t at = 0;
	for (int n = 0; at < size && n < MAX_DOCS; n++) {
		const uint8_t *end = memchr(data + at, 0, size - at);
		size_t len = end ? (size_t)(end - (data + at)) : size - at;
		json_error_t jerr;
		json_t *doc = json_loadb((const char *)data + at, len, JSON_DECODE_ANY, &jerr);
		if (doc)
			json_array_append_new(docs, doc);
		at += len + 1;
	}
	if (json_array_size(docs) >= 2) {
		json_t *bt = json_deep_copy(json_array_get(docs, 0));
		cq_omp_join(bt, json_array_get(docs, 1), NULL, size & 16);
		json_decref(bt);
	}
	json_t *job = cq_waitfor_job(docs);
	char *dot = cq_waitfor_dot(job);
	free(dot);
	json_decref(job);

	static FILE *null;
	if (!null)
		null = fopen("/dev/null", "w");
	struct cq_tree *t = cq_tree_create(size % 3 == 0 ? CQ_TREE_BY_FUNCTION : size % 3 == 1 ? CQ_TREE_BY_LINE
											: CQ_TREE_BY_MODULE,
					    size & 4);
	json_t *d;
	size_t i;
	json_array_foreach(docs, i, d) {
		const char *schema = json_string_value(json_object_get(d, "schema"));
		struct cq_error *err = schema && !strcmp(schema, "coreq-stacks/1") ? cq_tree_add_tree(t, d, "doc")
										   : cq_tree_add_bt(t, d, "doc");
		cq_error_destroy(err);
	}
	json_t *tree = t ? cq_tree_json(t) : NULL;
	cq_tree_destroy(t);
	if (tree) {
		free(cq_tree_dot(tree));
		if (null)
			cq_tree_print(tree, null, size & 8);
		/* and read back, as a tree input of the next merge */
		struct cq_tree *t2 = cq_tree_create(size % 3 == 0 ? CQ_TREE_BY_FUNCTION : size % 3 == 1 ? CQ_TREE_BY_LINE
												: CQ_TREE_BY_MODULE,
						    size & 4);
		if (t2) {
			cq_error_destroy(cq_tree_add_tree(t2, tree, "tree"));
			json_decref(cq_tree_json(t2));
			cq_tree_destroy(t2);
		}
	}
	json_decref(tree);
	json_decref(docs);
	return 0;
}
