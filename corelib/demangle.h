/* SPDX-License-Identifier: MIT */
/**
 * @file demangle.h
 * Demangled names (C++, Rust, D) through libbfd's bfd_demangle(), which is libiberty's
 * demangler: coreq links libbfd already, on every host, so no demangler of its own.
 */
#ifndef COREQ_DEMANGLE_H
#define COREQ_DEMANGLE_H

#include <stdbool.h>

/**
 * @p name demangled; with @p params the parameter list too ("f(int)"), without it the
 * plain name ("f"). NULL when @p name is not a mangled name (or on allocation failure).
 * Caller frees.
 */
char *cq_demangle(const char *name, bool params);

#endif
