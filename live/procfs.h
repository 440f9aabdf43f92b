/* SPDX-License-Identifier: MIT */
/**
 * @file procfs.h
 * What live/ reads of /proc about a process before and while it holds it: small files
 * whole, a thread's state, why the kernel refuses to let this user trace it, whether the
 * kernel would write a core of it. Used by live/ and by launch/ (a job's processes).
 */
#ifndef COREQ_LIVE_PROCFS_H
#define COREQ_LIVE_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/error.h"

/** The whole of a /proc file (at most @p max bytes) into a new NUL-terminated buffer, its
 * length into *@p len; NULL with errno. */
char *cq_live_slurp(const char *path, size_t max, size_t *len);

/** The state letter of thread @p tid of @p pid (its /proc stat), 0 when unreadable. */
char cq_live_task_state(int pid, pid_t tid);

/** Why the kernel refused to let this user trace thread @p tid of process @p pid (errno
 * @p err of PTRACE_SEIZE), in one line: gone, traced already by another tracer (named),
 * another user's, Yama's ptrace_scope, or not dumpable. */
struct cq_error *cq_live_why_not(int pid, pid_t tid, int err);

/** The command name of @p pid (its /proc comm, bytes outside printable ASCII as '?'; "?"
 * when gone) into @p buf. */
void cq_live_comm(int pid, char *buf, size_t n);

/** Whether @p pid is a kernel thread (PF_KTHREAD): no user space to read. */
bool cq_live_kernel_thread(int pid);

/** A thread of @p pid whose /proc entries still have the process's memory: the main
 * thread, or the first live thread when the main thread exited (a zombie) while the others
 * run; -1 when none. */
pid_t cq_live_reader_tid(int pid);

/**
 * Whether the kernel would write a core of @p pid: not when it is not dumpable
 * (PR_SET_DUMPABLE 0, or credentials changed as a setuid program's: the kernel then makes
 * its /proc files root's). False with the reason in @p why (@p n bytes) otherwise.
 */
bool cq_live_dumpable(int pid, char *why, size_t n);

/** Where thread @p tid of @p pid is, for a thread that did not stop: "state D, in the
 * kernel at WCHAN, system call N" (what /proc tells), into @p buf. */
void cq_live_thread_where(int pid, pid_t tid, char *buf, size_t n);

#endif
