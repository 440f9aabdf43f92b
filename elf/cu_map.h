/* SPDX-License-Identifier: MIT */
/**
 * @file cu_map.h
 * Which compilation unit holds an address, from the units' own ranges (DW_AT_low_pc /
 * DW_AT_high_pc / DW_AT_ranges), for the DWARF that has no .debug_aranges: LLVM-based
 * compilers (clang, flang-new, icx, AOCC, CCE) and Go emit none by default, and libdw
 * 0.188 (dwarf_addrdie, dwfl_module_addrdie) finds a unit only through that table, so
 * such a program's frames had no line and no inlined call. gdb builds the same map.
 *
 * Built once per Dwarf when an address is not found through the aranges; a unit whose
 * DIE carries no range at all is mapped by the ranges of the functions under it.
 * Reads only what libdw parses; bounded by CQ_CU_MAP_MAX_RANGES whatever the input says.
 */
#ifndef COREQ_ELF_CU_MAP_H
#define COREQ_ELF_CU_MAP_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>

/** At most this many ranges are mapped per Dwarf (crafted range lists could name more). */
#define CQ_CU_MAP_MAX_RANGES (1u << 22)

struct cq_cu_map;

/** The map of @p dw's units (a map of none where @p dw has no unit with ranges); NULL
 * only when out of memory. */
struct cq_cu_map *cq_cu_map_create(Dwarf *dw);
void cq_cu_map_destroy(struct cq_cu_map *m);

/** The unit whose ranges hold @p addr (a DWARF address: the module's bias taken off)
 * into *@p ret; false when none does. Where ranges overlap, the unit that starts last
 * before @p addr. */
bool cq_cu_map_find(const struct cq_cu_map *m, Dwarf_Addr addr, Dwarf_Die *ret);

/** How many ranges @p m holds (tests, diagnostics). */
size_t cq_cu_map_size(const struct cq_cu_map *m);

#endif
