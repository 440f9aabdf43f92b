/* SPDX-License-Identifier: MIT */
/**
 * @file environ.h
 * The process's environment as the kernel laid it out at exec, read from the core: its
 * initial stack holds argv[], envp[] and the auxiliary vector one after another, and the
 * NT_AUXV note is a copy of that vector. So the vector is found on the stack (below the
 * AT_EXECFN string, within CQ_ENVIRON_MAX_SCAN bytes), and envp[] is the run of pointers
 * before it back to argv's NULL. What a process later did with setenv() is not seen: it
 * is the environment it was started with, which is what a launcher's rank variables are.
 */
#ifndef COREQ_ENVIRON_H
#define COREQ_ENVIRON_H

#include <stddef.h>

#include "core.h"

/** How far below AT_EXECFN the auxiliary vector is looked for (the kernel's limit on
 * argument and environment strings is a quarter of the stack rlimit: 2 MB by default). */
#define CQ_ENVIRON_MAX_SCAN (8u << 20)
/** At most this many variables, each at most this long, are read. */
#define CQ_ENVIRON_MAX_VARS 100000
#define CQ_ENVIRON_MAX_STRING (128u << 10)

/**
 * The value of the first of @p names (in that order) the environment sets; *@p which
 * the index of that name. NULL error and *@p value_ret NULL when none is set; an error
 * (CQ_ERR_MISSING, CQ_ERR_FAULT) when the environment cannot be found in the core (no
 * auxv note, the stack not in the core). Caller frees *@p value_ret.
 */
struct cq_error *cq_core_getenv(struct cq_core *core, const char *const *names, size_t nnames, size_t *which,
				char **value_ret);

#endif
