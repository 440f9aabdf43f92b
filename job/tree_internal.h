/* SPDX-License-Identifier: MIT */
/**
 * @file tree_internal.h
 * The stack prefix tree's structure, shared by the files of job/ that build it (tree.c) and
 * write it (tree_json.c). Not for other rooms: tree.h is the interface.
 */
#ifndef COREQ_JOB_TREE_INTERNAL_H
#define COREQ_JOB_TREE_INTERNAL_H

#include <stdint.h>

#include "ranges.h"
#include "tree.h"

struct cq_tree_node {
	char *label;
	/* the raw name of the function it is labelled by (a mangled or versioned symbol) where
	 * that differs from the label's name, as the first frame that reached it has it; NULL */
	char *function;
	struct cq_ranges tasks, ends; /* that reached it; whose stack ends here */
	uint64_t threads, end_threads;
	struct cq_tree_node **kids;
	size_t nkids, cap;
	json_t *index; /* label -> position in kids, once there are INDEX_FROM of them */
};

enum cq_tree_source { CQ_TREE_SOURCE_NONE, CQ_TREE_SOURCE_ORDER, CQ_TREE_SOURCE_RANK };

/** A set of tasks whose nodes the written tree marks (cq_tree_mark_tasks). */
struct cq_tree_marking {
	char *name;
	struct cq_ranges set;
};

/** At most this many markings (a document carries one or two). */
#define CQ_TREE_MAX_MARKS 16

struct cq_tree {
	enum cq_tree_label by;
	bool all_threads;
	struct cq_tree_node root;
	enum cq_tree_source source;
	uint64_t next_order; /* the next task id by input order */
	json_t *rank_from;   /* the variables ranks came from (bt's "task_source"), distinct */
	json_t *problems;
	struct cq_tree_marking marks[CQ_TREE_MAX_MARKS];
	unsigned nmarks;
};

/** The names of enum cq_tree_label and enum cq_tree_source, as documents spell them. */
extern const char *const cq_tree_by_names[3], *const cq_tree_source_names[3];

/** A path keeps at most this many frames, the outermost (bt's --max-frames goes to 100,000;
 * real stacks are tens deep): the tree is walked recursively, and its JSON nests two levels
 * per frame, which jansson reads to a depth of 2048. Deeper trees are refused when read. */
#define CQ_TREE_MAX_DEPTH 1000

#endif
