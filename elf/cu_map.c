/* SPDX-License-Identifier: MIT */
/* The address -> compilation unit map of a Dwarf (cu_map.h). */
#include <dwarf.h>
#include <stdint.h>
#include <stdlib.h>

#include "cu_map.h"

struct cu_range {
	Dwarf_Addr low, high;
	Dwarf_Die cu;
};

struct cq_cu_map {
	struct cu_range *r; /* sorted by low */
	/* reach[i]: the highest end of r[0..i], so that a search stops going back as soon as
	 * no earlier range can hold the address (ranges of several units may overlap) */
	Dwarf_Addr *reach;
	size_t n, cap;
	bool full;
};

static bool add(struct cq_cu_map *m, Dwarf_Addr low, Dwarf_Addr high, const Dwarf_Die *cu)
{
	/* an empty range, or one at 0: where the linker left the code of a discarded function
	 * (its tombstone), which no pc of a process is in */
	if (low >= high || low == 0)
		return true;
	if (m->n == CQ_CU_MAP_MAX_RANGES) {
		m->full = true;
		return true;
	}
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 64;
		struct cu_range *r = realloc(m->r, cap * sizeof(*r));
		if (!r)
			return false;
		m->r = r;
		m->cap = cap;
	}
	m->r[m->n++] = (struct cu_range){low, high, *cu};
	return true;
}

/* @p die's own ranges into @p m for unit @p cu; *@p any set when it has one. False when
 * out of memory. */
static bool add_ranges(struct cq_cu_map *m, Dwarf_Die *die, const Dwarf_Die *cu, bool *any)
{
	Dwarf_Addr base, low, high;
	ptrdiff_t off = 0;
	while (!m->full && (off = dwarf_ranges(die, off, &base, &low, &high)) > 0) {
		*any = true;
		if (!add(m, low, high, cu))
			return false;
	}
	return true;
}

/* A unit without ranges of its own: the ranges of the functions in it, looking into the
 * namespaces, modules and classes that hold functions (depth-bounded). */
static bool add_functions(struct cq_cu_map *m, Dwarf_Die *parent, const Dwarf_Die *cu, int depth)
{
	Dwarf_Die child;
	if (depth > 16 || dwarf_child(parent, &child) != 0)
		return true;
	do {
		bool any = false;
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
			if (!add_ranges(m, &child, cu, &any))
				return false;
			break;
		case DW_TAG_namespace: case DW_TAG_module: case DW_TAG_class_type:
		case DW_TAG_structure_type: case DW_TAG_union_type:
			if (!add_functions(m, &child, cu, depth + 1))
				return false;
			break;
		default:
			break;
		}
	} while (!m->full && dwarf_siblingof(&child, &child) == 0);
	return true;
}

static int by_low(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;
	if (x->low != y->low)
		return x->low < y->low ? -1 : 1;
	return x->high < y->high ? -1 : x->high > y->high;
}

struct cq_cu_map *cq_cu_map_create(Dwarf *dw)
{
	struct cq_cu_map *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	uint8_t type;
	/* dwarf_get_units gives skeleton units (split DWARF) as they are: their ranges are the
	 * skeleton's, which is what the lookup returns (its split unit is found from it) */
	while (!m->full && dwarf_get_units(dw, cu, &cu, NULL, &type, &cudie, NULL) == 0) {
		if (type != DW_UT_compile && type != DW_UT_skeleton && type != DW_UT_partial)
			continue;
		bool any = false;
		if (!add_ranges(m, &cudie, &cudie, &any) || (!any && !add_functions(m, &cudie, &cudie, 0))) {
			cq_cu_map_destroy(m);
			return NULL;
		}
	}
	if (m->n) {
		qsort(m->r, m->n, sizeof(*m->r), by_low);
		if (!(m->reach = malloc(m->n * sizeof(*m->reach)))) {
			cq_cu_map_destroy(m);
			return NULL;
		}
		for (size_t i = 0; i < m->n; i++)
			m->reach[i] = i && m->reach[i - 1] > m->r[i].high ? m->reach[i - 1] : m->r[i].high;
	}
	return m;
}

void cq_cu_map_destroy(struct cq_cu_map *m)
{
	if (!m)
		return;
	free(m->r);
	free(m->reach);
	free(m);
}

bool cq_cu_map_find(const struct cq_cu_map *m, Dwarf_Addr addr, Dwarf_Die *ret)
{
	/* the last range that starts at or before addr, then back while one could reach it:
	 * a few steps in real DWARF; bounded, for crafted ranges that all overlap one huge one */
	size_t lo = 0, hi = m ? m->n : 0, steps = 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->r[mid].low <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0 && m->reach[i] > addr && steps++ < 256;)
		if (addr < m->r[i].high) {
			*ret = m->r[i].cu;
			return true;
		}
	return false;
}

size_t cq_cu_map_size(const struct cq_cu_map *m)
{
	return m ? m->n : 0;
}
