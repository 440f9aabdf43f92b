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

/**
 * @p name as people read it: demangled (as cq_demangle()) and without the symbol version
 * a .symtab name may carry ("__libc_start_main@@GLIBC_2.34" -> "__libc_start_main",
 * "_ZNSt6thread4joinEv@@GLIBCXX_3.4.11" -> "std::thread::join()"), a flang-new procedure by
 * its modules and hosts ("_QMgridPrelax" -> "grid::relax"). NULL when that is
 * @p name itself (or on allocation failure). Caller frees.
 */
char *cq_display_name(const char *name, bool params);

#endif
