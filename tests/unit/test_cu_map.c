/* SPDX-License-Identifier: MIT */
/* The address -> unit map (elf/cu_map.h) against libdw's own lookup through .debug_aranges,
 * on this test's DWARF (gcc emits aranges): every function's first and last byte, and the
 * byte past it, find the unit that aranges find; where aranges find none (a unit they leave
 * out: the ASan build has such), a unit the map finds holds the address by its own ranges;
 * addresses below and above all code find none. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <unistd.h>

#include "check.h"
#include "elf/cu_map.h"

static void same_unit(Dwarf *dw, const struct cq_cu_map *m, Dwarf_Addr a)
{
	Dwarf_Die by_aranges, by_map;
	bool want = dwarf_addrdie(dw, a, &by_aranges) != NULL;
	/* aranges may answer for a gap between a unit's ranges; the map does not */
	if (want && dwarf_haspc(&by_aranges, a) != 1)
		want = false;
	bool got = cq_cu_map_find(m, a, &by_map);
	if (want && !got) {
		check_failed++;
		printf("not ok - 0x%" PRIx64 ": aranges find a unit, the map none\n", (uint64_t)a);
		return;
	}
	if (want)
		CHECK_U64(dwarf_dieoffset(&by_map), dwarf_dieoffset(&by_aranges));
	else if (got) /* a unit the aranges leave out (what the map is for): its ranges hold a */
		CHECK(dwarf_haspc(&by_map, a) == 1);
	else
		check_passed++;
}

int main(void)
{
	int fd = open("/proc/self/exe", O_RDONLY);
	Dwarf *dw = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : NULL;
	CHECK(dw != NULL);
	if (!dw)
		return 1;
	struct cq_cu_map *m = cq_cu_map_create(dw);
	CHECK(m && cq_cu_map_size(m) > 0);
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie, child;
	uint8_t type;
	unsigned functions = 0;
	Dwarf_Addr lowest = (Dwarf_Addr)-1, highest = 0;
	while (m && dwarf_get_units(dw, cu, &cu, NULL, &type, &cudie, NULL) == 0) {
		if (dwarf_child(&cudie, &child) != 0)
			continue;
		do {
			Dwarf_Addr lo, hi;
			if (dwarf_tag(&child) != DW_TAG_subprogram || dwarf_lowpc(&child, &lo) != 0 ||
			    dwarf_highpc(&child, &hi) != 0 || hi <= lo || !lo)
				continue;
			functions++;
			lowest = lo < lowest ? lo : lowest;
			highest = hi > highest ? hi : highest;
			same_unit(dw, m, lo);
			same_unit(dw, m, hi - 1);
			same_unit(dw, m, hi);
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	CHECK(functions >= 5); /* this test's and elf/cu_map.c's: two units */
	Dwarf_Die d;
	CHECK(m && !cq_cu_map_find(m, lowest - 1, &d));
	CHECK(m && !cq_cu_map_find(m, highest + 0x100000, &d));
	CHECK(!cq_cu_map_find(NULL, lowest, &d));
	cq_cu_map_destroy(m);
	dwarf_end(dw);
	close(fd);
	printf("test_cu_map: %d passed, %d failed\n", check_passed, check_failed);
	return check_failed != 0;
}
