/* SPDX-License-Identifier: MIT */
/* Which compilation unit holds a frame's address, and which unit holds its scopes
 * (internal.h: cq_stack_unit_at, cq_stack_scope_unit). */
#include <dwarf.h>
#include <stdlib.h>

#include "elf/cu_map.h"
#include "internal.h"

/* The address -> unit maps made so far, by Dwarf (open addressing, a power of two of
 * slots, at most half used). */
struct cq_stack_units {
	struct { Dwarf *dw; struct cq_cu_map *map; } *slots;
	size_t mask, used;
};

struct cq_stack_units *cq_stack_units_create(void)
{
	struct cq_stack_units *u = calloc(1, sizeof(*u));
	if (u && !(u->slots = calloc(16, sizeof(*u->slots)))) {
		free(u);
		return NULL;
	}
	if (u)
		u->mask = 15;
	return u;
}

void cq_stack_units_destroy(struct cq_stack_units *u)
{
	if (!u)
		return;
	for (size_t k = 0; k <= u->mask; k++)
		cq_cu_map_destroy(u->slots[k].map);
	free(u->slots);
	free(u);
}

static size_t slot_of(const struct cq_stack_units *u, const Dwarf *dw)
{
	size_t k = (size_t)(((uintptr_t)dw >> 4) * 0x9e3779b97f4a7c15u >> 32) & u->mask;
	while (u->slots[k].dw && u->slots[k].dw != dw)
		k = (k + 1) & u->mask;
	return k;
}

/* @p dw's map, made on first use; NULL when out of memory. */
static const struct cq_cu_map *map_of(struct cq_stack_units *u, Dwarf *dw)
{
	size_t k = slot_of(u, dw);
	if (u->slots[k].dw)
		return u->slots[k].map;
	if (2 * (u->used + 1) > u->mask + 1) {
		struct cq_stack_units big = {calloc(2 * (u->mask + 1), sizeof(*u->slots)), 2 * u->mask + 1, u->used};
		if (!big.slots)
			return NULL;
		for (size_t j = 0; j <= u->mask; j++)
			if (u->slots[j].dw)
				big.slots[slot_of(&big, u->slots[j].dw)] = u->slots[j];
		free(u->slots);
		*u = big;
		k = slot_of(u, dw);
	}
	struct cq_cu_map *m = cq_cu_map_create(dw);
	if (!m)
		return NULL; /* tried again next time */
	u->slots[k].dw = dw;
	u->slots[k].map = m;
	u->used++;
	return m;
}

/* Whether @p cu says by its own ranges that @p addr is not its. */
static bool outside(Dwarf_Die *cu, Dwarf_Addr addr)
{
	return (dwarf_hasattr(cu, DW_AT_ranges) || dwarf_hasattr(cu, DW_AT_low_pc)) && dwarf_haspc(cu, addr) == 0;
}

Dwarf_Die *cq_stack_unit_at(struct cq_stack_units *u, Dwfl_Module *mod, Dwarf_Addr at, Dwarf_Addr *bias,
			    Dwarf_Die *mem)
{
	/* the aranges first: where they answer, no map is made (gcc's modules) */
	Dwarf_Die *cu = dwfl_module_addrdie(mod, at, bias);
	/* libdwfl 0.188 answers an address in a gap between a CU's ranges (a crt1.o _start
	 * between main in .text.startup and the CU's .text) with that CU: not the CU's when
	 * its ranges say so (gdb has no line there either) */
	if (cu && !outside(cu, at - *bias)) {
		*mem = *cu;
		return mem;
	}
	Dwarf *dw = u ? dwfl_module_getdwarf(mod, bias) : NULL;
	const struct cq_cu_map *m = dw ? map_of(u, dw) : NULL;
	return m && cq_cu_map_find(m, at - *bias, mem) ? mem : NULL;
}

Dwarf_Die *cq_stack_scope_unit(Dwarf_Die *cu, Dwarf_Die *mem)
{
	uint8_t type;
	if (dwarf_cu_info(cu->cu, NULL, &type, NULL, mem, NULL, NULL, NULL) == 0 && type == DW_UT_skeleton &&
	    dwarf_tag(mem) == DW_TAG_compile_unit)
		return mem;
	return cu;
}
