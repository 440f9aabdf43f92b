/* SPDX-License-Identifier: MIT */
/**
 * @file crash.h
 * What a core says of its process's death: the signal, its si_code by name (Linux's
 * asm-generic/siginfo.h numbering), who sent it or where it faulted.
 */
#ifndef COREQ_ANALYSIS_CRASH_H
#define COREQ_ANALYSIS_CRASH_H

#include <jansson.h>

#include "corelib/core.h"
#include "targets/target.h"

/** A siginfo's si_code by name for signal @p sig ("SEGV_MAPERR", "SI_TKILL"), or NULL. */
const char *cq_signal_code_name(const struct cq_target *t, int sig, int code);

enum cq_signal_origin {
	CQ_SIGNAL_SENT,  /**< sent by a process (si_code <= 0): si_pid and si_uid say who */
	CQ_SIGNAL_FAULT, /**< a fault (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP): si_addr is where */
	CQ_SIGNAL_OTHER, /**< from the kernel otherwise: neither */
};

/** What the rest of a siginfo means for signal @p sig with code @p code. */
enum cq_signal_origin cq_signal_origin(const struct cq_target *t, int sig, int code);

/**
 * What a core the kernel wrote for a process that died of a signal says of its death:
 * {signal (its name by the target's numbering, else "signal N"), number, tid (the thread
 * that took it), code_name?, sender: {pid}? (a signal a process sent), origin: "fault",
 * "self" (abort, raise), "sent" (by another process), "kernel" or "unknown"}, for the job view
 * (job/verdict.h says a dead rank first); NULL when no thread crashed (a live process's
 * core: gcore, a snapshot).
 */
json_t *cq_crash_json(const struct cq_core *core);

#endif
