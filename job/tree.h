/* SPDX-License-Identifier: MIT */
/**
 * @file tree.h
 * The stack prefix tree of a job (STAT's 2D view, from cores): the stacks of many
 * processes, or of all their threads, merged by call prefix from the outermost frame in.
 * A node is a frame, labelled by its function, its function and source line, or its
 * module and offset (which needs no symbols); it carries the set of tasks that reached it
 * (ranges.h), how many processes and threads, and the tasks whose stack ends there (the
 * leaf classes: tasks sharing one path).
 *
 * Documents in, documents out: stacks come as `coreq bt --json` documents (coreq-bt/2),
 * trees as coreq-stacks/1 documents (doc/json-schema.md), so a job merges in steps under
 * whatever launcher runs them (tree + tree -> tree). Task ids are MPI ranks where the
 * input says so ("task" in a bt document), else input order; a merge never mixes the two.
 */
#ifndef COREQ_JOB_TREE_H
#define COREQ_JOB_TREE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/error.h"

enum cq_tree_label {
	CQ_TREE_BY_FUNCTION, /**< the (demangled) function, else module+offset */
	CQ_TREE_BY_LINE,     /**< the function and file:line where there is one */
	CQ_TREE_BY_MODULE,   /**< module+offset: no symbols needed */
};

struct cq_tree;

/** An empty tree; @p all_threads: every thread's stack, else one per process (the
 * crashing thread, else the first). NULL when out of memory. */
struct cq_tree *cq_tree_create(enum cq_tree_label by, bool all_threads);
void cq_tree_destroy(struct cq_tree *t);

/** Add the stacks of one process, a coreq-bt/2 document; @p name says where it came from
 * (for errors). Its task id is its "task" member when it has one, else the next in input
 * order. Errors of the two adders: CQ_ERR_FORMAT for a document that is refused whole
 * (nothing of it added; the merge goes on), CQ_ERR_USAGE when the inputs cannot be merged
 * together at all (ranks mixed with input order, more than 2^48 tasks), CQ_ERR_NOMEM. */
struct cq_error *cq_tree_add_bt(struct cq_tree *t, const json_t *bt, const char *name);

/** Add a merged tree, a coreq-stacks/1 document made with the same labels and thread mode;
 * tasks numbered by input order continue after those already added. */
struct cq_error *cq_tree_add_tree(struct cq_tree *t, const json_t *tree, const char *name);

/** The tree as a coreq-stacks/1 document (children by descending task count, then label;
 * nodes numbered in that preorder; the leaf classes by descending task count, then node,
 * each naming its node by number rather than repeating its path). NULL when out of
 * memory. */
json_t *cq_tree_json(const struct cq_tree *t);

/** cq_tree_json()'s document, then @p extra's members after its own (NULL: none), written to
 * @p out as JSON text made from the tree itself rather than from a document of it: memory
 * stays the tree's however long the text. The layout is cq_emit_json()'s (jansson's, 2
 * spaces per level, a line feed after the document) to a nesting of 64 levels (nodes 31
 * frames deep); deeper lines are indented no further (2 spaces per level, a tree 1,000
 * frames deep with 6,000 leaves was 264 MB, nearly all of it spaces, and its text 540 MB of
 * memory). With @p out NULL nothing is written: *@p size_ret is then the text's length in
 * bytes (to check a bound before writing any), else what was written. CQ_ERR_NOMEM; write
 * errors are the stream's (ferror). */
struct cq_error *cq_tree_write_json(const struct cq_tree *t, const json_t *extra, FILE *out, uint64_t *size_ret);

/** Mark, in the documents cq_tree_json() and cq_tree_write_json() make, the nodes that tasks
 * of @p ranks (text as "0-3,5") reached, as cq_tree_mark() marks a document (each such node
 * gains "marks": {@p name: the tasks of both}, after its "children"); at most 16 names.
 * CQ_ERR_FORMAT for ranges that do not parse. */
struct cq_error *cq_tree_mark_tasks(struct cq_tree *t, const char *name, const char *ranks);

/** Whether the tree's tasks are MPI ranks (its document's "task_source" is "rank"). */
bool cq_tree_ranked(const struct cq_tree *t);

/** How many problems its document lists. */
size_t cq_tree_problem_count(const struct cq_tree *t);

/** Mark the nodes of a coreq-stacks/1 document @p doc that tasks of @p ranks (text as
 * "0-3,5") reached: each such node gains "marks": {@p name: the tasks of both}, which
 * the text tree and DOT show (a deadlock cycle's ranks, say). CQ_ERR_FORMAT for ranges
 * that do not parse. */
struct cq_error *cq_tree_mark(json_t *doc, const char *name, const char *ranks);

/** A coreq-stacks/1 document as an indented text tree; @p color: ANSI colors (a terminal
 * without NO_COLOR). Strings from cores are escaped. */
void cq_tree_print(const json_t *doc, FILE *out, bool color);

/** A coreq-stacks/1 document in DOT, in STAT's conventions (node label: the frame; edge
 * label: "count:[ranges]"); caller frees; NULL when out of memory. */
char *cq_tree_dot(const json_t *doc);

#endif
