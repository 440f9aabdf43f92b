/* SPDX-License-Identifier: MIT */
/* Demangling through libbfd (demangle.h), loaded on first use (bfd_lib.h). */
#include <stdio.h>

#include "bfd_lib.h"
#include "demangle.h"

/* libiberty's demangle.h options, which bfd.h does not carry */
#define CQ_DMGL_PARAMS (1 << 0)
#define CQ_DMGL_ANSI (1 << 1)

char *cq_demangle(const char *name, bool params)
{
	const char *why;
	const struct cq_bfd *b = cq__bfd(&why);
	if (!b) {
		static bool said;
		if (!__atomic_exchange_n(&said, true, __ATOMIC_RELAXED))
			fprintf(stderr, "coreq: %s: names are shown mangled\n", why);
		return NULL;
	}
	/* no bfd: no leading underscore to strip (ELF targets have none) */
	return b->demangle(NULL, name, params ? CQ_DMGL_PARAMS | CQ_DMGL_ANSI : 0);
}
