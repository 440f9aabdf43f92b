/* SPDX-License-Identifier: MIT */
/**
 * @file hold.h
 * The threads coreq holds stopped, over every process it holds (a job's ranks together),
 * and the one rule they live under: they are held no longer than the bound (--max-stop),
 * on every path. Internal to live/: process.c is its one user.
 *
 * A thread is seized (PTRACE_SEIZE) and interrupted (PTRACE_INTERRUPT); it is *held* once
 * it is in its ptrace-stop. A thread that does not stop within the stop wait (waiting in
 * vfork for a child that has not exec'd, in D state on a hung file system: the interrupt
 * wakes neither) is left out of what is read and stays *seized* until it stops: it is then
 * detached at once, whether coreq is reading, sleeping between samples or done (a 10 ms
 * timer polls such threads while there are any; coreq's exit detaches them too). Nothing
 * ever waits on a thread past the bound.
 *
 * Everything held is resumed (PTRACE_DETACH, with the signal a thread was about to take)
 * on every path: a normal release, coreq's exit, the signals that end coreq (SIGINT,
 * SIGTERM, SIGHUP, SIGQUIT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT: then re-raised),
 * the signals that stop coreq (SIGTSTP, SIGTTIN, SIGTTOU: resumed before coreq stops, the
 * reads after it continues fail), and the bound (SIGALRM at the deadline). A SIGSTOP to
 * coreq cannot be caught: a watchdog process, forked at the start of every hold, kills
 * coreq if the hold is not released by the bound plus a grace, so that the kernel resumes
 * the threads (a ptrace-stop ends with its tracer), and says so on stderr.
 *
 * The table is plain static storage, read and written by the handlers with nothing but
 * system calls (async-signal-safe); the main code changes it with those signals blocked.
 */
#ifndef COREQ_LIVE_HOLD_H
#define COREQ_LIVE_HOLD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include "base/error.h"

/** Why a hold ended before it was released (cq_hold_released). */
enum cq_hold_end {
	CQ_HOLD_HELD = 0,   /**< not ended early */
	CQ_HOLD_BOUND,      /**< the --max-stop bound passed */
	CQ_HOLD_STOPPED,    /**< coreq itself was stopped (SIGTSTP, SIGTTIN, SIGTTOU) */
};

/** Begin a hold (when none is running): the bound @p max_stop_ms from now, the timer,
 * the watchdog, the handlers. A hold already running keeps its own bound. */
void cq_hold_begin(unsigned max_stop_ms);

/**
 * Stop every thread of @p pid (the main thread first, then the others, round after round
 * while it makes new ones), waiting for their stops at most until @p stop_wait_ms after the
 * call or the bound, whichever is first. Threads that did not stop stay seized (see above)
 * and are counted in cq_hold_unstopped. An error (CQ_ERR_PROCESS) says why the process
 * cannot be traced, naming the thread the kernel refused; nothing of @p pid is held then.
 */
struct cq_error *cq_hold_stop(int pid, unsigned stop_wait_ms);

/** Whether threads of @p pid are held (stopped, or seized). */
bool cq_hold_has(int pid);

/** The held (stopped) threads of @p pid, the main thread first: up to @p max tids into
 * @p tids; returns how many there are. */
size_t cq_hold_threads(int pid, pid_t *tids, size_t max);

/** The threads of @p pid seized that did not stop: up to @p max tids; returns the count. */
size_t cq_hold_unstopped(int pid, pid_t *tids, size_t max);

/** Resume the threads of @p pid (the others stay held). */
void cq_hold_resume_pid(int pid);

/** Resume everything held and end the hold (the timer, the watchdog). */
void cq_hold_resume_all(void);

/** Why the hold ended early, CQ_HOLD_HELD while it did not; @p sig: the signal that stopped
 * coreq (CQ_HOLD_STOPPED). */
enum cq_hold_end cq_hold_released(int *sig);

/** When @p pid was stopped (CLOCK_MONOTONIC into @p at, CLOCK_REALTIME into @p real) and
 * its /proc state letter before (@p state: 'T' when someone else had stopped it); false
 * when it is not of this hold. */
bool cq_hold_stopped_at(int pid, struct timespec *at, struct timespec *real, char *state);

/** When @p pid was resumed (CLOCK_MONOTONIC), false while it is held or was never. */
bool cq_hold_resumed_at(int pid, struct timespec *ret);

#endif
