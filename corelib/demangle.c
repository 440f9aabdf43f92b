/* SPDX-License-Identifier: MIT */
/* Demangling through libbfd (demangle.h), loaded on first use (bfd_lib.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bfd_lib.h"
#include "demangle.h"

/* libiberty's demangle.h options, which bfd.h does not carry */
#define CQ_DMGL_PARAMS (1 << 0)
#define CQ_DMGL_ANSI (1 << 1)

/* The manglings libiberty knows on ELF start with _Z (C++, legacy Rust), _R (Rust v0) or
 * _D (D), after a ppc64 ELFv1 dot: anything else is a plain name, and loading libbfd for
 * it would cost more than the whole lookup. */
static bool mangled(const char *name)
{
	if (*name == '.')
		name++;
	return name[0] == '_' && (name[1] == 'Z' || name[1] == 'R' || name[1] == 'D');
}

char *cq_demangle(const char *name, bool params)
{
	if (!mangled(name))
		return NULL;
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

char *cq_display_name(const char *name, bool params)
{
	/* a version follows the name's first '@' (never its first character) */
	const char *at = *name ? strchr(name + 1, '@') : NULL;
	if (!at)
		return cq_demangle(name, params);
	char *base = strndup(name, (size_t)(at - name));
	char *d = base ? cq_demangle(base, params) : NULL;
	if (d) {
		free(base);
		return d;
	}
	return base;
}
