/* SPDX-License-Identifier: MIT */
/* Compressed-row graphs and their strongly connected components (graph.h). */
#include <stdlib.h>

#include "graph.h"

static int cmp_edge(const void *a, const void *b)
{
	const struct cq_graph_edge *x = a, *y = b;
	return x->from != y->from ? (x->from > y->from) - (x->from < y->from) : (x->to > y->to) - (x->to < y->to);
}

bool cq_graph_init(struct cq_graph *g, int n, struct cq_graph_edge *edges, size_t nedges)
{
	size_t un = n > 0 ? (size_t)n : 0;
	g->n = n;
	g->first = calloc(un + 1, sizeof(int));
	g->to = malloc((nedges + 1) * sizeof(int));
	g->index = malloc((un + 1) * sizeof(int));
	g->low = malloc((un + 1) * sizeof(int));
	g->stack = malloc((un + 1) * sizeof(int));
	g->comp = malloc((un + 1) * sizeof(int));
	g->next = malloc((un + 1) * sizeof(int));
	g->on = calloc(un + 1, sizeof(bool));
	if (!g->first || !g->to || !g->index || !g->low || !g->stack || !g->comp || !g->next || !g->on)
		return false;
	qsort(edges, nedges, sizeof(*edges), cmp_edge);
	for (size_t k = 0; k < nedges; k++) {
		g->to[k] = edges[k].to;
		g->first[edges[k].from + 1]++;
	}
	for (size_t v = 0; v < un; v++)
		g->first[v + 1] += g->first[v];
	for (size_t v = 0; v < un; v++)
		g->index[v] = -1;
	return true;
}

void cq_graph_free(struct cq_graph *g)
{
	free(g->first);
	free(g->to);
	free(g->index);
	free(g->low);
	free(g->stack);
	free(g->comp);
	free(g->next);
	free(g->on);
}

void cq_graph_strong(struct cq_graph *g)
{
	int counter = 0, sp = 0;
	int *call = malloc((size_t)g->n * sizeof(int)); /* the explicit call stack */
	if (!call)
		return;
	for (int root = 0; root < g->n; root++) {
		if (g->index[root] >= 0)
			continue;
		int depth = 0;
		call[depth++] = root;
		g->index[root] = g->low[root] = counter++;
		g->stack[sp++] = root;
		g->on[root] = true;
		g->next[root] = g->first[root];
		while (depth) {
			int v = call[depth - 1];
			if (g->next[v] < g->first[v + 1]) {
				int w = g->to[g->next[v]++];
				if (g->index[w] < 0) {
					g->index[w] = g->low[w] = counter++;
					g->stack[sp++] = w;
					g->on[w] = true;
					g->next[w] = g->first[w];
					call[depth++] = w;
				} else if (g->on[w] && g->index[w] < g->low[v]) {
					g->low[v] = g->index[w];
				}
				continue;
			}
			if (g->low[v] == g->index[v]) {
				int w;
				do {
					w = g->stack[--sp];
					g->on[w] = false;
					g->comp[w] = g->ncomp;
				} while (w != v);
				g->ncomp++;
			}
			depth--;
			if (depth && g->low[v] < g->low[call[depth - 1]])
				g->low[call[depth - 1]] = g->low[v];
		}
	}
	free(call);
}
