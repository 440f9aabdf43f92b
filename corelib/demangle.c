/* SPDX-License-Identifier: MIT */
/* Demangling through libbfd (demangle.h). */
#define PACKAGE "coreq"
#define PACKAGE_VERSION "0"
#include <bfd.h>

#include "demangle.h"

/* libiberty's demangle.h options, which bfd.h does not carry */
#define CQ_DMGL_PARAMS (1 << 0)
#define CQ_DMGL_ANSI (1 << 1)

char *cq_demangle(const char *name, bool params)
{
	/* no bfd: no leading underscore to strip (ELF targets have none) */
	return bfd_demangle(NULL, name, params ? CQ_DMGL_PARAMS | CQ_DMGL_ANSI : 0);
}
