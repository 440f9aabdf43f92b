/* SPDX-License-Identifier: MIT */
/* Names for people (elf/demangle.h cq_display_name): symbol versions dropped, C++
 * demangled through libbfd, flang-new's procedure names by their modules and hosts; a
 * plain name, or one that only looks like flang's, is left as it is (NULL). */
#include <stdlib.h>

#include "check.h"
#include "elf/demangle.h"

static void shown(const char *name, const char *want)
{
	char *d = cq_display_name(name, true);
	if (want)
		CHECK_STR(d, want);
	else if (d) {
		check_failed++;
		printf("not ok - %s shown as %s, expected as it is\n", name, d);
	} else {
		check_passed++;
	}
	free(d);
}

int main(void)
{
	shown("__libc_start_main@@GLIBC_2.34", "__libc_start_main");
	shown("memcpy@GLIBC_2.2.5", "memcpy");
	shown("_ZNSt6thread4joinEv@@GLIBCXX_3.4.11", "std::thread::join()");
	shown("_ZN9LAMMPS_NS9PairLJCut7computeEii", "LAMMPS_NS::PairLJCut::compute(int, int)");
	shown("_QMgridPrelax", "grid::relax");
	shown("_QMgridFrelaxPverify", "grid::relax::verify");
	shown("_QPfoo_bar2", "foo_bar2");
	shown("main", NULL);
	shown("@", NULL);
	shown("_QQmain", NULL);     /* the main program: flang keeps no name for it */
	shown("_QMgridP", NULL);    /* no procedure name */
	shown("_QMGridPrelax", NULL); /* flang writes names in lower case */
	shown("_QMgrid", NULL);     /* a module, not a procedure */
	shown("_QMgridPrelaxX", NULL);
	return check_report("test_demangle");
}
