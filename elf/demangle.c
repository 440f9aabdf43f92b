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

/* flang-new's names of procedures (flang's internal name uniquing): "_Q", then modules
 * ("M" name) and host procedures ("F" name), then the procedure ("P" name), each name in
 * lower case (Fortran's are case-blind, flang lowers them): "_QMgridPrelax" is grid::relax,
 * "_QMgridFrelaxPverify" grid::relax::verify, "_QPfoo" foo. NULL for any other name
 * (the main program _QQmain, common blocks, types). */
static char *flang_name(const char *name)
{
	if (strncmp(name, "_Q", 2))
		return NULL;
	size_t len = strlen(name);
	char *out = malloc(2 * len + 1), *o = out;
	if (!out)
		return NULL;
	const char *p = name + 2;
	bool proc = false;
	while (*p && !proc) {
		char tag = *p++;
		if (tag != 'M' && tag != 'F' && tag != 'P')
			break;
		size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789_$");
		if (!n)
			break;
		if (o != out) {
			memcpy(o, "::", 2);
			o += 2;
		}
		memcpy(o, p, n);
		o += n;
		p += n;
		proc = tag == 'P';
	}
	*o = 0;
	if (!proc || *p) {
		free(out);
		return NULL;
	}
	return out;
}

char *cq_display_name(const char *name, bool params)
{
	char *flang = flang_name(name);
	if (flang)
		return flang;
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
