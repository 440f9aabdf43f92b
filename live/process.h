/* SPDX-License-Identifier: MIT */
/**
 * @file process.h
 * A running process, stopped, as the core model's second source (corelib/source.h): what
 * `coreq bt --pid` reads instead of a core file, and what a snapshot will write out.
 *
 * Opening stops every thread without sending a signal: PTRACE_SEIZE, then
 * PTRACE_INTERRUPT, thread by thread, until /proc/PID/task lists no thread not yet
 * stopped (hold.h: the bound, threads that cannot stop, every path that resumes). The
 * program may still see the stop: a wait it is in (epoll_wait, sigtimedwait, semtimedop,
 * an inotify read) returns EINTR once, as under gdb -p. A process whose main thread
 * exited while others run is read through a live thread's /proc entries. Then the model is filled as from a core: the registers of every thread
 * (PTRACE_GETREGSET NT_PRSTATUS, the layout of the kernel's core notes; the thread area
 * of an i386 thread), the auxv (/proc/PID/auxv), the mappings as segments and the file
 * map (/proc/PID/maps), the identity (/proc/PID/stat, status, cmdline). Memory is read
 * through /proc/PID/mem, only while the process is stopped; nothing is ever written to it.
 *
 * The process is resumed exactly as it was (PTRACE_DETACH of every thread, with the
 * signal a thread was about to take when it stopped, so none is lost; a process that was
 * stopped stays stopped) on every path hold.h lists: cq_core_close, coreq's exit, the
 * signals that end or stop coreq, and the bound on how long it may stay stopped
 * (--max-stop), held by a watchdog when coreq cannot run: then the reads that follow fail,
 * saying so, and cq_process_check says the process ran again. If coreq is killed outright,
 * the kernel resumes the threads (a ptrace-stop ends with its tracer).
 *
 * Only a process the user may trace is stopped: when the kernel says no, the reason is
 * said in one line (another user's process, Yama's ptrace_scope, a thread traced already
 * and by whom, not dumpable, a kernel thread). The 32-bit coreq refuses a 64-bit process.
 *
 * For tests only, COREQ_TEST_LIVE_HOLD_MS=N holds the process stopped N ms more once it is
 * read (what happens to signals sent to it, to coreq killed, to --max-stop meanwhile), and
 * COREQ_TEST_LIVE_MEM_FAIL=N makes every read of its memory from the Nth on (0: all, by
 * coreq and its plugins' children alike) fail with EIO, as the kernel's refusal would (a
 * snapshot that could read nothing must say so: cq_process_reads).
 */
#ifndef COREQ_LIVE_PROCESS_H
#define COREQ_LIVE_PROCESS_H

#include <sys/types.h>

#include "corelib/core.h"

/** The default bound on how long a process stays stopped, in milliseconds. */
#define CQ_LIVE_MAX_STOP_MS 3000

struct cq_live_options {
	/** The longest the process stays stopped, in ms (0: CQ_LIVE_MAX_STOP_MS). */
	unsigned max_stop_ms;
};

/** Stop process @p pid and open it as a model (*@p ret; cq_core_close resumes it). */
struct cq_error *cq_process_open(int pid, const struct cq_core_options *opts, const struct cq_live_options *lo,
				 struct cq_core **ret);

/** The pages of memory read so far, by coreq and by the plugins' isolated children (sorted,
 * merged ranges into *@p ret, *@p n of them; valid until the next call or the close):
 * what a snapshot writes. An error for another source's model, or when the log overflowed. */
struct cq_mem_range;
struct cq_error *cq_process_pages(struct cq_core *core, const struct cq_mem_range **ret, size_t *n);

/** Whether the process of the live model @p core is still there, held: NULL, or a
 * CQ_ERR_PROCESS saying it exited (killed, say) or ran again (the bound, coreq stopped,
 * with the true stop time) while coreq read it, so that what was read is not taken for its
 * state. NULL for another source's model. */
struct cq_error *cq_process_check(const struct cq_core *core);

/** Stop every thread of process @p pid now and keep it held (a job's consistent cut: every
 * rank stopped before any is read); cq_process_open then reads it without stopping it
 * again. The --max-stop bound runs from the first process stopped. */
struct cq_error *cq_process_stop(int pid, const struct cq_live_options *lo);

/** With @p on, closing a live model does not resume its process: the job's ranks are all
 * resumed together by cq_process_resume_all. */
void cq_process_hold(bool on);

/** Resume every process held. */
void cq_process_resume_all(void);

/** How long the process has been stopped, in ms: so far, or until it ran again (the bound,
 * coreq stopped); 0 for another source's model. */
unsigned cq_process_stopped_ms(const struct cq_core *core);

/** How long process @p pid of the last hold was held stopped, from its stop to its resume
 * (cq_process_resume_all: a job's ranks stay stopped past their reading), in ms into
 * *@p ms; false while it is held or when it was not of the last hold. */
bool cq_process_held_ms(int pid, unsigned *ms);

/** Whether the kernel would write a core of process @p pid: false, with why in @p why
 * (@p n bytes), for one that is not dumpable (PR_SET_DUMPABLE 0, a setuid program's
 * changed credentials; a root process's PR_SET_DUMPABLE 0 cannot be told from /proc). */
bool cq_process_dumpable(int pid, char *why, size_t n);

/** What the reads of a live model's memory gave so far, coreq's and its plugins' children's
 * (cq_process_reads): a read that failed is one the kernel refused (EIO: a page past the end
 * of its file, a device's) of a mapping the process may read. */
struct cq_live_reads {
	uint64_t ok, failed;             /**< reads that gave bytes, reads that failed */
	uint64_t ok_bytes, failed_bytes; /**< the bytes of each */
	uint64_t first_addr;             /**< where the first failed read was, when one did */
	int first_errno;                 /**< its errno; 0: the kernel gave nothing there */
	char path[64];                   /**< what was read: /proc/PID/task/TID/mem */
};

/** What reading the memory of the live model @p core gave so far, into *@p ret (all 0 for
 * another source's model). */
void cq_process_reads(const struct cq_core *core, struct cq_live_reads *ret);

/** How many of the process's threads did not stop (vfork, D state) and were not read (their
 * tids into *@p tids when not NULL, valid until the close): each is a problem of the model;
 * a snapshot without them is not complete. */
size_t cq_process_unstopped(const struct cq_core *core, const pid_t **tids);

#endif
