/* SPDX-License-Identifier: MIT */
/**
 * @file graph.h
 * A directed graph over nodes 0..n-1 in compressed rows, and its strongly connected
 * components (Tarjan's algorithm, iterative: a chain of 100,000 waiting ranks must not
 * overflow the stack). Rows are in ascending order, so components and any walk over them
 * are the same whatever order the edges came in. Used by the job view's wait-for graph
 * (waitfor.h) and its verdict (verdict.h).
 */
#ifndef COREQ_JOB_GRAPH_H
#define COREQ_JOB_GRAPH_H

#include <stdbool.h>
#include <stddef.h>

struct cq_graph_edge {
	int from, to;
};

struct cq_graph {
	int n;
	int *first, *to; /**< row v: to[first[v] .. first[v + 1]) */
	int *index, *low, *stack, *next;
	int *comp;       /**< after cq_graph_strong: the component of each node */
	bool *on;
	int ncomp;       /**< after cq_graph_strong: how many components */
};

/** Build @p g (zeroed before) over @p n nodes from @p edges (sorted in place; every node
 * in 0..n-1). False when out of memory; cq_graph_free in either case. */
bool cq_graph_init(struct cq_graph *g, int n, struct cq_graph_edge *edges, size_t nedges);

/** The strongly connected components: comp[] and ncomp (a component is numbered only
 * after every component it reaches). */
void cq_graph_strong(struct cq_graph *g);

void cq_graph_free(struct cq_graph *g);

#endif
