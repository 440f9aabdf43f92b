/* SPDX-License-Identifier: MIT */
/* The threads coreq holds stopped, and the bound they are held under (hold.h). */
#include "hold.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "procfs.h"

/* Threads held at most, over every process held (a job's ranks together). */
#define MAX_TIDS 16384
/* Threads seized that never stopped, waiting to be detached once they do. */
#define MAX_PENDING 4096
/* Processes of one hold (a job's ranks). */
#define MAX_PROCS 4096
/* Rounds of listing /proc/PID/task for threads made while the others were being stopped. */
#define MAX_ROUNDS 64
/* How often seized threads that did not stop are polled, to detach them once they stop. */
#define PENDING_POLL_MS 10

enum { ST_SEIZED, ST_STOPPED };

static pid_t h_tid[MAX_TIDS];
static pid_t h_pid[MAX_TIDS];
static int h_sig[MAX_TIDS];             /* the signal a thread was about to take, handed back */
static unsigned char h_state[MAX_TIDS];
static volatile sig_atomic_t nheld;

static pid_t pend_tid[MAX_PENDING];
static volatile sig_atomic_t npend;

/* The processes of the hold: when each was stopped and resumed. */
static struct {
	int pid;
	struct timespec at, real, resumed; /* resumed: 0 while held */
	char state;                        /* its /proc state letter before coreq stopped it */
} procs[MAX_PROCS];
static volatile sig_atomic_t nprocs;

static volatile sig_atomic_t ended;     /* enum cq_hold_end */
static volatile sig_atomic_t ended_sig; /* the signal that stopped coreq */
static volatile sig_atomic_t holding;   /* a hold is running (begun, not released) */
static struct timespec deadline;        /* of the running hold, CLOCK_MONOTONIC */
static pid_t watchdog = -1;
static int watchdog_fd = -1;            /* its pipe: a byte (or coreq's end) releases it */

static struct sigaction saved[NSIG];
static const int fatal_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
static const int stop_signals[] = {SIGTSTP, SIGTTIN, SIGTTOU};

static long ms_between(const struct timespec *a, const struct timespec *b)
{
	return (long)(b->tv_sec - a->tv_sec) * 1000 + (b->tv_nsec - a->tv_nsec) / 1000000;
}

static struct timespec after_ms(struct timespec t, unsigned ms)
{
	t.tv_sec += ms / 1000;
	t.tv_nsec += (long)(ms % 1000) * 1000000;
	if (t.tv_nsec >= 1000000000) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000;
	}
	return t;
}

/* The signals whose handlers read the table, blocked while the main code changes it. */
static void block(sigset_t *old)
{
	sigset_t all;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, old);
}

static void unblock(const sigset_t *old)
{
	sigprocmask(SIG_SETMASK, old, NULL);
}

/* The timer: every PENDING_POLL_MS while threads wait to be detached, else at the deadline
 * while holding, else off. */
static void arm_timer(void)
{
	struct itimerval tv = {{0, 0}, {0, 0}};
	if (npend) {
		tv.it_value.tv_usec = PENDING_POLL_MS * 1000;
	} else if (holding) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long ms = ms_between(&now, &deadline);
		if (ms < 1)
			ms = 1;
		tv.it_value.tv_sec = ms / 1000;
		tv.it_value.tv_usec = (ms % 1000) * 1000;
	}
	setitimer(ITIMER_REAL, &tv, NULL);
}

/* A thread's stop, if it has stopped: 1 and its signal (0 for a ptrace event stop, a
 * group-stop included), 0 when it has not, -1 when it is gone. Never blocks. */
static int poll_stop(pid_t tid, int *sig)
{
	for (;;) {
		int st;
		pid_t r = waitpid(tid, &st, WNOHANG | __WALL);
		if (r == 0)
			return 0;
		if (r < 0)
			return errno == EINTR ? 0 : -1;
		if (WIFEXITED(st) || WIFSIGNALED(st))
			return -1;
		if (!WIFSTOPPED(st))
			continue;
		if ((st >> 16) == PTRACE_EVENT_STOP) {
			*sig = 0;
			return 1;
		}
		if ((st >> 16) == 0) {
			*sig = WSTOPSIG(st); /* a signal on its way: given back on detach */
			return 1;
		}
		/* another ptrace event (not asked for): look again */
	}
}

/* Detach the seized threads that stopped since; drop those gone. */
static void poll_pending(void)
{
	sig_atomic_t k = 0;
	for (sig_atomic_t i = 0; i < npend; i++) {
		int sig = 0, r = poll_stop(pend_tid[i], &sig);
		if (r > 0)
			ptrace(PTRACE_DETACH, pend_tid[i], NULL, (void *)(long)sig);
		if (r == 0)
			pend_tid[k++] = pend_tid[i];
	}
	npend = k;
}

/* Resume entry @p i: detached if stopped (or stopped by now), else left pending. */
static void release_entry(sig_atomic_t i)
{
	int sig = h_sig[i], r = 1;
	if (h_state[i] == ST_SEIZED)
		r = poll_stop(h_tid[i], &sig);
	if (r > 0)
		ptrace(PTRACE_DETACH, h_tid[i], NULL, (void *)(long)sig);
	else if (r == 0 && npend < MAX_PENDING)
		pend_tid[npend++] = h_tid[i];
	/* a full list: the thread is detached by coreq's exit (the kernel) */
}

static void mark_resumed(int pid)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	for (sig_atomic_t i = 0; i < nprocs; i++)
		if ((pid < 0 || procs[i].pid == pid) && !procs[i].resumed.tv_sec && !procs[i].resumed.tv_nsec)
			procs[i].resumed = now;
}

/* The hold is over: the watchdog told, the timer set for what is pending. */
static void end_hold(void)
{
	holding = 0;
	if (watchdog_fd >= 0) {
		if (write(watchdog_fd, "x", 1) < 0) {
			/* the watchdog is gone already: nothing to tell */
		}
		close(watchdog_fd);
		watchdog_fd = -1;
	}
	arm_timer();
}

/* The process that holds: a child forked from it (a plugin's isolated run) inherits the
 * handlers and a copy of the table, and must neither detach nor tell the watchdog. */
static pid_t owner;

/* Everything held resumed: async-signal-safe. */
static void resume_everything(void)
{
	if (getpid() != owner)
		return;
	sig_atomic_t n = nheld;
	nheld = 0;
	for (sig_atomic_t i = 0; i < n; i++)
		release_entry(i);
	mark_resumed(-1);
	end_hold();
}

static void on_fatal(int sig)
{
	int saved_errno = errno;
	resume_everything();
	/* then as if coreq had not caught it: the previous action, delivered again */
	sigaction(sig, &saved[sig], NULL);
	raise(sig);
	errno = saved_errno;
}

/* SIGTSTP, SIGTTIN, SIGTTOU: coreq is about to stop; what it holds runs first. */
static void on_stop(int sig)
{
	int saved_errno = errno;
	if (holding || nheld) {
		ended = CQ_HOLD_STOPPED;
		ended_sig = sig;
		resume_everything();
	}
	struct sigaction dfl = {0}, mine;
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, &mine);
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	sigprocmask(SIG_UNBLOCK, &s, NULL);
	raise(sig); /* stops here, until SIGCONT */
	sigaction(sig, &mine, NULL);
	errno = saved_errno;
}

static void on_alarm(int sig)
{
	(void)sig;
	int saved_errno = errno;
	if (getpid() != owner)
		return;
	if (holding) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (ms_between(&now, &deadline) <= 0) {
			ended = CQ_HOLD_BOUND;
			resume_everything();
		}
	}
	poll_pending();
	arm_timer();
	errno = saved_errno;
}

static void at_exit(void)
{
	resume_everything();
}

static void install_handlers(void)
{
	static bool done;
	if (done)
		return;
	done = true;
	owner = getpid();
	struct sigaction sa = {0};
	sigemptyset(&sa.sa_mask);
	for (size_t k = 0; k < 2; k++) {
		const int *sigs = k ? stop_signals : fatal_signals;
		size_t n = k ? sizeof(stop_signals) / sizeof(*stop_signals) : sizeof(fatal_signals) / sizeof(*fatal_signals);
		sa.sa_handler = k ? on_stop : on_fatal;
		for (size_t i = 0; i < n; i++) {
			struct sigaction old;
			if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
				continue; /* ignored (nohup, a shell without job control): stays ignored */
			sigaction(sigs[i], &sa, &saved[sigs[i]]);
		}
	}
	/* SA_RESTART: the timer polls pending threads every 10 ms, which must not break
	 * coreq's reads and writes; nothing waits on a signal to end a wait (waits poll) */
	struct sigaction al = {0};
	al.sa_handler = on_alarm;
	al.sa_flags = SA_RESTART;
	sigemptyset(&al.sa_mask);
	sigaction(SIGALRM, &al, &saved[SIGALRM]);
	atexit(at_exit);
}

/* The watchdog: a process of its own (a SIGSTOP to coreq stops every thread of coreq), that
 * kills coreq if the hold is not released by the bound plus a grace; the kernel then
 * resumes every thread coreq held. Released by a byte on its pipe, or by the pipe's end. */
static void start_watchdog(unsigned max_stop_ms)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) != 0)
		return; /* no watchdog: the timer still holds the bound while coreq runs */
	pid_t coreq = getpid();
	pid_t w = fork();
	if (w < 0) {
		close(p[0]);
		close(p[1]);
		return;
	}
	if (w == 0) {
		close(p[1]);
		struct sigaction dfl = {0};
		dfl.sa_handler = SIG_DFL;
		for (int s = 1; s < NSIG; s++)
			sigaction(s, &dfl, NULL);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		/* a grace past the bound: the timer in coreq releases first whenever coreq runs */
		int wait_ms = (int)(max_stop_ms + 250 + max_stop_ms / 10);
		struct pollfd pf = {p[0], POLLIN, 0};
		struct timespec t0, now;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (;;) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			long left = wait_ms - ms_between(&t0, &now);
			if (left <= 0)
				break;
			int r = poll(&pf, 1, (int)left);
			if (r > 0 || (r < 0 && errno != EINTR))
				_exit(0); /* released, or coreq gone */
		}
		if (getppid() != coreq)
			_exit(0);
		char msg[256];
		int n = snprintf(msg, sizeof(msg), "coreq: watchdog: coreq (pid %d) could not run at its --max-stop bound "
			       "(%u ms; stopped?): killed, so that the kernel resumes what it held\n", (int)coreq, max_stop_ms);
		if (n > 0 && write(2, msg, (size_t)n) < 0)
			_exit(1);
		kill(coreq, SIGKILL);
		_exit(0);
	}
	close(p[0]);
	watchdog = w;
	watchdog_fd = p[1];
}

/* The watchdog of the last hold, gone once told: reaped (never blocking in a handler). */
static void reap_watchdog(bool wait)
{
	if (watchdog > 0 && waitpid(watchdog, NULL, wait ? 0 : WNOHANG) != 0)
		watchdog = -1;
}

void cq_hold_begin(unsigned max_stop_ms)
{
	install_handlers();
	if (holding || nheld)
		return;
	reap_watchdog(true);
	sigset_t old;
	block(&old);
	nprocs = 0;
	ended = CQ_HOLD_HELD;
	ended_sig = 0;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	deadline = after_ms(now, max_stop_ms);
	start_watchdog(max_stop_ms);
	holding = 1;
	arm_timer();
	unblock(&old);
}

static bool tid_known(pid_t tid)
{
	for (sig_atomic_t i = 0; i < nheld; i++)
		if (h_tid[i] == tid)
			return true;
	return false;
}

/* Take @p tid from the pending list (seized by an earlier hold, not stopped yet). */
static bool take_pending(pid_t tid)
{
	for (sig_atomic_t i = 0; i < npend; i++)
		if (pend_tid[i] == tid) {
			pend_tid[i] = pend_tid[npend - 1];
			npend--;
			return true;
		}
	return false;
}

static void drop_entry(sig_atomic_t i)
{
	for (sig_atomic_t k = i + 1; k < nheld; k++) {
		h_tid[k - 1] = h_tid[k];
		h_pid[k - 1] = h_pid[k];
		h_sig[k - 1] = h_sig[k];
		h_state[k - 1] = h_state[k];
	}
	nheld--;
}

/* Wait until every seized thread of @p pid stopped, or @p until: polled, never blocking. */
static void wait_stops(int pid, const struct timespec *until)
{
	long nap_us = 20;
	for (;;) {
		bool waiting = false;
		sigset_t old;
		block(&old);
		for (sig_atomic_t i = 0; i < nheld; i++) {
			if (h_pid[i] != pid || h_state[i] != ST_SEIZED)
				continue;
			int sig = 0, r = poll_stop(h_tid[i], &sig);
			if (r > 0) {
				h_state[i] = ST_STOPPED;
				h_sig[i] = sig;
			} else if (r < 0) {
				drop_entry(i--); /* gone before it stopped: a seized thread that exits needs no detach */
			} else {
				waiting = true;
			}
		}
		unblock(&old);
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (!waiting || ended || ms_between(&now, until) <= 0 || ms_between(&now, &deadline) <= 0)
			return;
		struct timespec nap = {0, nap_us * 1000};
		nanosleep(&nap, NULL);
		if (nap_us < 1000)
			nap_us *= 2;
	}
}

/* Whether thread @p tid of @p pid is gone or exiting (state Z or X). */
static bool exiting(int pid, pid_t tid)
{
	char state = cq_live_task_state(pid, tid);
	return !state || state == 'Z' || state == 'X';
}

struct cq_error *cq_hold_stop(int pid, unsigned stop_wait_ms)
{
	install_handlers();
	sigset_t old;
	if (nprocs < MAX_PROCS) {
		block(&old);
		sig_atomic_t k = nprocs;
		procs[k].pid = pid;
		/* before it is stopped here: a process someone else stopped (SIGSTOP) is not
		 * running, whatever its stacks say (the job view says so) */
		procs[k].state = cq_live_task_state(pid, pid);
		clock_gettime(CLOCK_MONOTONIC, &procs[k].at);
		clock_gettime(CLOCK_REALTIME, &procs[k].real);
		procs[k].resumed = (struct timespec){0, 0};
		nprocs = k + 1;
		unblock(&old);
	}
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	struct timespec until = after_ms(start, stop_wait_ms);
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	struct cq_error *err = NULL;
	for (int round = 0; round < MAX_ROUNDS && !err; round++) {
		DIR *d = opendir(path);
		if (!d) {
			err = errno == ENOENT ? cq_error_create(CQ_ERR_PROCESS, "process %d: no such process", pid)
					      : cq_error_errno(errno, "process %d: %s", pid, path);
			break;
		}
		bool added = false;
		struct dirent *e;
		/* the main thread first (pass 0): the one a core's first NT_PRSTATUS names */
		for (int pass = 0; pass < 2 && !err && !ended; pass++) {
			rewinddir(d);
			while (!err && !ended && (e = readdir(d))) {
				pid_t tid = (pid_t)atoi(e->d_name);
				if (tid <= 0 || (pass == 0) != (tid == pid) || tid_known(tid))
					continue;
				if (nheld == MAX_TIDS) {
					err = cq_error_create(CQ_ERR_PROCESS, "process %d: more than %d threads", pid, MAX_TIDS);
					break;
				}
				block(&old);
				bool ours = take_pending(tid); /* seized before, never stopped: ours still */
				unblock(&old);
				if (!ours && ptrace(PTRACE_SEIZE, tid, NULL, NULL) != 0) {
					int e2 = errno;
					/* the thread ended meanwhile: gone (ESRCH), or exiting (a main thread
					 * that returned while others run is a zombie), which the kernel
					 * refuses to attach with EPERM */
					if (e2 == ESRCH || (e2 == EPERM && exiting(pid, tid)))
						continue;
					err = cq_live_why_not(pid, tid, e2);
					break;
				}
				if (!ours && ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) != 0)
					continue; /* gone before it was interrupted */
				/* held from here: the handlers release it too */
				block(&old);
				h_sig[nheld] = 0;
				h_state[nheld] = ST_SEIZED;
				h_tid[nheld] = tid;
				h_pid[nheld] = pid;
				nheld++;
				unblock(&old);
				added = true;
			}
		}
		closedir(d);
		if (err || ended)
			break;
		wait_stops(pid, &until);
		if (ended)
			break;
		if (!added) {
			if (!cq_hold_has(pid))
				err = cq_error_create(CQ_ERR_PROCESS, "process %d: no thread could be stopped (it exited?)", pid);
			return err;
		}
	}
	if (!err && ended) {
		int sig;
		err = cq_hold_released(&sig) == CQ_HOLD_STOPPED
			      ? cq_error_create(CQ_ERR_PROCESS, "process %d: coreq was stopped (%s) while it stopped the "
						"process: resumed", pid, sigabbrev_np(sig) ? sigabbrev_np(sig) : "?")
			      : cq_error_create(CQ_ERR_PROCESS, "process %d: its threads did not all stop within "
						"--max-stop: resumed", pid);
	}
	if (!err)
		err = cq_error_create(CQ_ERR_PROCESS, "process %d: still making threads after %d rounds of stopping them",
				      pid, MAX_ROUNDS);
	cq_hold_resume_pid(pid);
	return err;
}

bool cq_hold_has(int pid)
{
	for (sig_atomic_t i = 0; i < nheld; i++)
		if (h_pid[i] == pid)
			return true;
	return false;
}

static size_t list_state(int pid, int state, pid_t *tids, size_t max)
{
	size_t n = 0;
	for (sig_atomic_t i = 0; i < nheld; i++)
		if (h_pid[i] == pid && h_state[i] == state) {
			if (n < max)
				tids[n] = h_tid[i];
			n++;
		}
	return n;
}

size_t cq_hold_threads(int pid, pid_t *tids, size_t max)
{
	return list_state(pid, ST_STOPPED, tids, max);
}

size_t cq_hold_unstopped(int pid, pid_t *tids, size_t max)
{
	return list_state(pid, ST_SEIZED, tids, max);
}

void cq_hold_resume_pid(int pid)
{
	sigset_t old;
	block(&old);
	sig_atomic_t k = 0;
	for (sig_atomic_t i = 0; i < nheld; i++) {
		if (h_pid[i] == pid) {
			release_entry(i);
			continue;
		}
		h_tid[k] = h_tid[i];
		h_pid[k] = h_pid[i];
		h_sig[k] = h_sig[i];
		h_state[k] = h_state[i];
		k++;
	}
	nheld = k;
	mark_resumed(pid);
	if (!nheld)
		end_hold();
	unblock(&old);
	reap_watchdog(false);
}

void cq_hold_resume_all(void)
{
	sigset_t old;
	block(&old);
	resume_everything();
	unblock(&old);
	reap_watchdog(true);
}

enum cq_hold_end cq_hold_released(int *sig)
{
	if (sig)
		*sig = ended_sig;
	return (enum cq_hold_end)ended;
}

bool cq_hold_resumed_at(int pid, struct timespec *ret)
{
	for (sig_atomic_t i = 0; i < nprocs; i++)
		if (procs[i].pid == pid && (procs[i].resumed.tv_sec || procs[i].resumed.tv_nsec)) {
			*ret = procs[i].resumed;
			return true;
		}
	return false;
}

bool cq_hold_stopped_at(int pid, struct timespec *at, struct timespec *real, char *state)
{
	for (sig_atomic_t i = 0; i < nprocs; i++)
		if (procs[i].pid == pid) {
			*at = procs[i].at;
			*real = procs[i].real;
			*state = procs[i].state;
			return true;
		}
	return false;
}
