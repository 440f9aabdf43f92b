/* SPDX-License-Identifier: MIT */
/* A stopped live process as the model's source (process.h). */
#include "process.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/decode.h"
#include "corelib/core_write.h"
#include "corelib/source.h"

/* Threads held stopped at most, over every process held (a job's ranks together). */
#define MAX_TIDS 16384
/* Rounds of listing /proc/PID/task for threads made while the others were being stopped. */
#define MAX_ROUNDS 64

/* What the signal handlers need to resume the processes held: kept in plain static storage,
 * read by them with nothing but system calls (async-signal-safe). An entry is written
 * before nheld counts it; resume_pid compacts the list with the signals blocked. */
static pid_t held_tids[MAX_TIDS];
static pid_t held_pid[MAX_TIDS];         /* the process each belongs to (a job holds several) */
static int held_signal[MAX_TIDS];        /* the signal a thread was about to take, handed back */
static volatile sig_atomic_t nheld;
static bool keep_held;                   /* cq_process_hold: closing a model does not resume it */
static volatile sig_atomic_t expired;    /* the --max-stop bound passed: resumed */
static struct sigaction saved[NSIG];
static const int fatal_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

/* Resume every held thread: PTRACE_DETACH with the signal it had been about to take. */
static void resume_all(void)
{
	sig_atomic_t n = nheld;
	nheld = 0;
	for (sig_atomic_t i = 0; i < n; i++)
		ptrace(PTRACE_DETACH, held_tids[i], NULL, (void *)(long)held_signal[i]);
}

/* Resume the threads of process @p pid only (the others stay held), with the signals that
 * end coreq blocked meanwhile: their handler must not see the list half compacted. */
static void resume_pid(pid_t pid)
{
	sigset_t all, old;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	sig_atomic_t k = 0;
	for (sig_atomic_t i = 0; i < nheld; i++) {
		if (held_pid[i] == pid) {
			ptrace(PTRACE_DETACH, held_tids[i], NULL, (void *)(long)held_signal[i]);
			continue;
		}
		held_tids[k] = held_tids[i];
		held_pid[k] = held_pid[i];
		held_signal[k] = held_signal[i];
		k++;
	}
	nheld = k;
	if (!nheld) {
		struct itimerval off = {{0, 0}, {0, 0}};
		setitimer(ITIMER_REAL, &off, NULL);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
}

static void on_fatal(int sig)
{
	int saved_errno = errno;
	resume_all();
	/* then as if coreq had not caught it: the previous action, delivered again */
	sigaction(sig, &saved[sig], NULL);
	raise(sig);
	errno = saved_errno;
}

static void on_alarm(int sig)
{
	(void)sig;
	int saved_errno = errno;
	expired = 1;
	resume_all();
	errno = saved_errno;
}

static void at_exit(void)
{
	resume_all();
}

static void install_handlers(void)
{
	static bool done;
	if (done)
		return;
	done = true;
	struct sigaction sa = {0};
	sa.sa_handler = on_fatal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++) {
		struct sigaction old;
		if (sigaction(fatal_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue; /* ignored (nohup): stays ignored */
		sigaction(fatal_signals[i], &sa, &saved[fatal_signals[i]]);
	}
	struct sigaction al = {0};
	al.sa_handler = on_alarm; /* no SA_RESTART: a wait for a thread that does not stop ends */
	sigemptyset(&al.sa_mask);
	sigaction(SIGALRM, &al, &saved[SIGALRM]);
	atexit(at_exit);
}

/* The pages read, logged where the plugins' isolated children (forked from coreq,
 * reading through the same /proc/PID/mem descriptor) log theirs too: a shared anonymous
 * mapping, appended to with an atomic index, merged into sorted ranges when asked
 * (cq_process_pages). What OMPD's and MQD's plugins read belongs in a snapshot as much as
 * what the stack walk reads. */
#define LOG_MAX (1u << 20) /* ranges logged: 16 MiB of address space, touched as used */
struct page_log {
	uint32_t n;      /* entries claimed (atomically; past LOG_MAX: lost, and said) */
	uint32_t pad;
	struct cq_mem_range r[LOG_MAX];
};

struct live {
	int pid;
	int mem_fd;
	struct timespec stopped_at;
	char name[32];
	struct page_log *log; /* shared with the children */
	uint64_t last_start, last_end; /* this process's last logged range (repeats skipped) */
	struct cq_mem_range *pages;   /* the log merged (cq_process_pages) */
	size_t npages;
	bool held;                    /* its threads are in held_tids */
};

static void record(struct live *l, uint64_t start, uint64_t end)
{
	const uint64_t pg = 4096;
	start &= ~(pg - 1);
	end = (end + pg - 1) & ~(pg - 1);
	if (!l->log || (start >= l->last_start && end <= l->last_end))
		return;
	l->last_start = start;
	l->last_end = end;
	uint32_t i = __atomic_fetch_add(&l->log->n, 1, __ATOMIC_RELAXED);
	if (i < LOG_MAX)
		l->log->r[i] = (struct cq_mem_range){start, end};
}

static int range_cmp(const void *a, const void *b)
{
	const struct cq_mem_range *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

static uint64_t live_held(const struct cq_core *core, const struct cq_segment *s)
{
	return s->filesz;
}

static struct cq_error *live_read(struct cq_core *core, const struct cq_segment *s, uint64_t addr, void *buf,
				  size_t len, size_t *got)
{
	struct live *l = core->source_data;
	if (expired || !l->held)
		return cq_error_fault(addr, "cannot read memory of process %d at 0x%llx: the process runs again (%s)",
				      l->pid, (unsigned long long)addr,
				      expired ? "it was stopped for longer than --max-stop" : "resumed");
	uint64_t avail = s->filesz - (addr - s->vaddr);
	size_t n = len < avail ? len : (size_t)avail;
	ssize_t r = pread(l->mem_fd, buf, n, (off_t)addr);
	if (r <= 0)
		return cq_error_fault(addr, "cannot read memory of process %d at 0x%llx: %s", l->pid,
				      (unsigned long long)addr, r < 0 ? strerror(errno) : "nothing there");
	*got = (size_t)r;
	record(l, addr, addr + (uint64_t)r);
	return NULL;
}

static void live_close(struct cq_core *core)
{
	struct live *l = core->source_data;
	if (l && !keep_held)
		resume_pid(l->pid);
	if (l && l->mem_fd >= 0)
		close(l->mem_fd);
	if (l) {
		free(l->pages);
		if (l->log)
			munmap(l->log, sizeof(*l->log));
	}
	free(l);
	core->source_data = NULL;
}

static const struct cq_source live_source = {"process", live_held, live_read, live_close};

/* The whole of a small /proc file (at most @p max bytes) into a new buffer; NULL with
 * errno. */
static char *slurp(const char *path, size_t max, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t cap = 4096, n = 0;
	char *b = malloc(cap + 1);
	while (b) {
		if (n == cap) {
			if (cap >= max)
				break;
			char *nb = realloc(b, 2 * cap + 1);
			if (!nb) {
				free(b);
				b = NULL;
				break;
			}
			b = nb;
			cap *= 2;
		}
		ssize_t r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	int e = errno;
	close(fd);
	if (b) {
		b[n] = 0;
		*len = n;
	}
	errno = e;
	return b;
}

/* Why the kernel refuses to let this user trace @p pid, in one line. */
static struct cq_error *why_not(int pid, int err)
{
	char path[64], *status;
	size_t len;
	if (err == ESRCH)
		return cq_error_create(CQ_ERR_PROCESS, "process %d: no such process", pid);
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	status = slurp(path, 1 << 16, &len);
	long tracer = 0, uid = -1;
	if (status) {
		const char *t = strstr(status, "\nTracerPid:"), *u = strstr(status, "\nUid:");
		if (t)
			tracer = strtol(t + 11, NULL, 10);
		if (u)
			uid = strtol(u + 5, NULL, 10);
		free(status);
	}
	int scope = -1;
	char *ys = slurp("/proc/sys/kernel/yama/ptrace_scope", 64, &len);
	if (ys) {
		scope = atoi(ys);
		free(ys);
	}
	if (tracer > 0)
		return cq_error_create(CQ_ERR_PROCESS, "process %d: already traced by process %ld (a debugger?): "
				       "one tracer at a time", pid, tracer);
	if (uid >= 0 && (uid_t)uid != geteuid() && geteuid() != 0)
		return cq_error_create(CQ_ERR_PROCESS, "process %d: belongs to uid %ld, not to you (uid %d): only "
				       "its owner or root may trace it", pid, uid, (int)geteuid());
	if (scope >= 1)
		return cq_error_create(CQ_ERR_PROCESS,
				       "process %d: Yama's ptrace_scope is %d: %s", pid, scope,
				       scope == 1 ? "only a process's ancestors may trace it: run coreq as root, or start the "
						    "program under coreq's parent, or set kernel.yama.ptrace_scope=0"
				       : scope == 2 ? "only root (CAP_SYS_PTRACE) may trace" : "no process may be traced");
	return cq_error_create(CQ_ERR_PROCESS, "process %d: the kernel does not let you trace it (%s; a "
			       "setuid or non-dumpable program needs root)", pid, strerror(err));
}

static bool pid_held(pid_t pid)
{
	for (sig_atomic_t i = 0; i < nheld; i++)
		if (held_pid[i] == pid)
			return true;
	return false;
}

static bool is_held(pid_t tid)
{
	for (sig_atomic_t i = 0; i < nheld; i++)
		if (held_tids[i] == tid)
			return true;
	return false;
}

/* Wait for thread @p tid to stop after PTRACE_INTERRUPT: its ptrace-stop, or the signal it
 * was about to take (kept, handed back on detach). False when it is gone. */
static bool wait_stop(pid_t tid, int *sig)
{
	for (;;) {
		int st;
		pid_t r = waitpid(tid, &st, __WALL);
		if (r < 0 && errno == EINTR && !expired)
			continue;
		if (r < 0)
			return false;
		if (WIFEXITED(st) || WIFSIGNALED(st))
			return false;
		if (!WIFSTOPPED(st))
			continue;
		if ((st >> 16) == PTRACE_EVENT_STOP) {
			*sig = 0; /* stopped (a group-stop, too: detaching leaves it stopped) */
			return true;
		}
		if ((st >> 16) == 0) {
			*sig = WSTOPSIG(st); /* a signal on its way: given back on detach */
			return true;
		}
		/* another ptrace event: not asked for; wait on */
	}
}

/* Whether thread @p tid of @p pid is gone or exiting (state Z or X in its stat). */
static bool exiting(int pid, pid_t tid)
{
	char path[96], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return true;
	buf[n] = 0;
	const char *p = strrchr(buf, ')');
	return !p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X';
}

/* Stop every thread of @p pid; the tids into held_tids (the main thread first). */
static struct cq_error *stop_all(int pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	for (int round = 0; round < MAX_ROUNDS; round++) {
		DIR *d = opendir(path);
		if (!d)
			return errno == ENOENT ? cq_error_create(CQ_ERR_PROCESS, "process %d: no such process", pid)
					       : cq_error_errno(errno, "process %d: %s", pid, path);
		bool added = false;
		struct dirent *e;
		/* the main thread first (pass 0): the one a core's first NT_PRSTATUS names */
		for (int pass = 0; pass < 2; pass++) {
			rewinddir(d);
			while ((e = readdir(d))) {
				pid_t tid = (pid_t)atoi(e->d_name);
				if (tid <= 0 || (pass == 0) != (tid == pid) || is_held(tid))
					continue;
				if (nheld == MAX_TIDS) {
					closedir(d);
					return cq_error_create(CQ_ERR_PROCESS, "process %d: more than %d threads", pid,
							       MAX_TIDS);
				}
				if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) != 0) {
					int err = errno;
					/* the thread ended meanwhile: gone (ESRCH), or exiting, which the
					 * kernel refuses to attach with EPERM */
					if (tid != pid && (err == ESRCH || (err == EPERM && exiting(pid, tid))))
						continue;
					closedir(d);
					return why_not(pid, err);
				}
				int sig = 0;
				/* held from here: the handlers detach it too (a detach that comes
				 * before its stop fails, and the stop then ends with coreq) */
				held_signal[nheld] = 0;
				held_tids[nheld] = tid;
				held_pid[nheld] = pid;
				nheld++;
				if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) != 0 || !wait_stop(tid, &sig)) {
					if (expired)
						break;
					nheld--; /* gone before it stopped: a seized thread that exits needs no detach */
					continue;
				}
				held_signal[nheld - 1] = sig;
				added = true;
			}
		}
		closedir(d);
		if (expired)
			return cq_error_create(CQ_ERR_PROCESS, "process %d: its threads did not all stop within --max-stop: "
					       "resumed", pid);
		if (!added)
			return pid_held(pid) ? NULL : cq_error_create(CQ_ERR_PROCESS, "process %d: no thread could be "
								      "stopped (it exited?)", pid);
	}
	return cq_error_create(CQ_ERR_PROCESS, "process %d: still making threads after %d rounds of stopping them",
			       pid, MAX_ROUNDS);
}

/* The architecture of @p pid from its executable's ELF header. */
static struct cq_error *target_of(int pid, const struct cq_target **ret)
{
	char path[64], exe[4096];
	unsigned char h[20];
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	/* a qemu-user guest: the process the kernel knows is qemu, whose registers and stacks
	 * are the emulator's, not the guest's */
	ssize_t len = readlink(path, exe, sizeof(exe) - 1);
	if (len > 0) {
		exe[len] = 0;
		const char *base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
		if (!strncmp(base, "qemu-", 5))
			return cq_error_create(CQ_ERR_PROCESS, "process %d runs under %s: a qemu-user guest cannot be traced "
					       "as a guest (its threads are the emulator's); take a core of it instead "
					       "(qemu writes one on a fatal signal, or gdb's gcore through qemu's gdbstub, -g PORT)",
					       pid, base);
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? cq_error_create(CQ_ERR_PROCESS, "process %d: no such process", pid)
		       : errno == EACCES || errno == EPERM ? why_not(pid, EPERM)
		       : cq_error_errno(errno, "process %d: %s", pid, path);
	ssize_t n = read(fd, h, sizeof(h));
	close(fd);
	if (n != (ssize_t)sizeof(h) || memcmp(h, ELFMAG, SELFMAG))
		return cq_error_create(CQ_ERR_FORMAT, "process %d: its executable is not an ELF file", pid);
	bool le = h[EI_DATA] == ELFDATA2LSB;
	uint16_t machine = le ? (uint16_t)(h[18] | h[19] << 8) : (uint16_t)(h[18] << 8 | h[19]);
	*ret = cq_target_find(machine, h[EI_CLASS], le);
	if (!*ret)
		return cq_error_create(CQ_ERR_UNSUPPORTED, "process %d: e_machine %u is no architecture coreq reads", pid,
				       machine);
	if (cq_target_ptr_size(*ret) > sizeof(void *))
		return cq_error_create(CQ_ERR_PROCESS, "process %d is a 64-bit %s process: the 32-bit coreq cannot "
				       "trace it (use the 64-bit coreq)", pid, (*ret)->name);
	return NULL;
}

/* The mappings of /proc/PID/maps as segments (readable ones held) and the file map. */
static struct cq_error *read_maps(struct cq_core *core, int pid)
{
	char path[64];
	size_t len;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	char *text = slurp(path, 64 << 20, &len);
	if (!text)
		return cq_error_errno(errno, "process %d: %s", pid, path);
	size_t cap = 64, nsegs = 0, nmaps = 0;
	struct cq_segment *segs = malloc(cap * sizeof(*segs));
	struct cq_file_map *maps = malloc(cap * sizeof(*maps));
	struct cq_error *err = segs && maps ? NULL : &cq_error_nomem;
	for (char *line = text, *next; !err && line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		unsigned long long start, end, off;
		char perms[8];
		int name_at = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &off, &name_at) < 4 || end <= start)
			continue;
		const char *name = name_at ? line + name_at : "";
		if (nsegs == cap) {
			cap *= 2;
			struct cq_segment *ns = realloc(segs, cap * sizeof(*segs));
			struct cq_file_map *nm = ns ? realloc(maps, cap * sizeof(*maps)) : NULL;
			if (ns)
				segs = ns;
			if (nm)
				maps = nm;
			if (!ns || !nm) {
				err = &cq_error_nomem;
				break;
			}
		}
		uint32_t flags = (perms[0] == 'r' ? PF_R : 0) | (perms[1] == 'w' ? PF_W : 0) | (perms[2] == 'x' ? PF_X : 0);
		/* held: what /proc/PID/mem gives (readable, and not the kernel's own pages) */
		bool held = (flags & PF_R) && strcmp(name, "[vvar]") && strcmp(name, "[vsyscall]");
		segs[nsegs++] = (struct cq_segment){start, end - start, 0, held ? end - start : 0, flags};
		if (name[0] == '/') {
			char *p = strdup(name);
			if (!p) {
				err = &cq_error_nomem;
				break;
			}
			maps[nmaps++] = (struct cq_file_map){start, end, off, p};
		}
	}
	free(text);
	if (err) {
		for (size_t i = 0; i < nmaps; i++)
			free(maps[i].path);
		free(maps);
		free(segs);
		return err;
	}
	if ((err = cq_core_set_segments(core, segs, nsegs, core->name))) {
		for (size_t i = 0; i < nmaps; i++)
			free(maps[i].path);
		free(maps);
		return err;
	}
	cq_core_set_file_maps(core, maps, nmaps, (uint64_t)sysconf(_SC_PAGESIZE));
	return NULL;
}

/* The identity a core's NT_PRPSINFO gives: pid, ppid, uid, gid, command and arguments. */
static void read_identity(struct cq_core *core, int pid)
{
	char path[64], *s;
	size_t len;
	core->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if ((s = slurp(path, 1 << 16, &len))) {
		char *open_paren = strchr(s, '('), *close_paren = strrchr(s, ')');
		if (open_paren && close_paren && close_paren > open_paren) {
			size_t n = (size_t)(close_paren - open_paren - 1);
			memcpy(core->fname, open_paren + 1, n < 16 ? n : 16);
			core->fname[n < 16 ? n : 16] = 0;
			char state;
			int ppid;
			if (sscanf(close_paren + 1, " %c %d", &state, &ppid) == 2)
				core->ppid = ppid;
		}
		free(s);
	}
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if ((s = slurp(path, 1 << 16, &len))) {
		const char *u = strstr(s, "\nUid:"), *g = strstr(s, "\nGid:");
		if (u)
			core->uid = (uint32_t)strtoul(u + 5, NULL, 10);
		if (g)
			core->gid = (uint32_t)strtoul(g + 5, NULL, 10);
		free(s);
	}
	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	if ((s = slurp(path, 4096, &len))) {
		/* the arguments NUL-separated: spaces, as the kernel writes psargs (80 bytes) */
		size_t n = len < 80 ? len : 80;
		for (size_t i = 0; i < n; i++)
			core->psargs[i] = s[i] ? s[i] : ' ';
		while (n > 0 && core->psargs[n - 1] == ' ')
			n--;
		core->psargs[n] = 0;
		free(s);
	}
	core->has_psinfo = true;
}

/* An i386 thread's TLS entries of the GDT (PTRACE_GET_THREAD_AREA, as the kernel writes
 * them into NT_386_TLS: struct user_desc, 16 bytes each), whose base is the thread
 * pointer %gs selects. */
static struct cq_error *thread_area(struct cq_core *core, struct cq_thread *th)
{
	/* GDT_ENTRY_TLS_MIN: 12 under a 64-bit kernel, 6 under a 32-bit one; 3 entries */
	static const int first[] = {12, 6};
	enum { TLS_ENTRIES = 3 };
	uint32_t desc[TLS_ENTRIES][4];
	for (size_t f = 0; f < sizeof(first) / sizeof(first[0]); f++) {
		int k = 0;
		while (k < TLS_ENTRIES && ptrace(PTRACE_GET_THREAD_AREA, th->tid, (void *)(long)(first[f] + k), desc[k]) == 0)
			k++;
		if (k == TLS_ENTRIES)
			return cq_core_set_thread_tls(core, th, 0x200 /* NT_386_TLS */, (const uint8_t *)desc, sizeof(desc));
	}
	return NULL; /* none: the thread pointer stays unknown, as in a core without the note */
}

/* The hex signal set after @p key ("\nSigPnd:") in /proc status text @p s, 0 if absent. */
static uint64_t sigset_of(const char *s, const char *key)
{
	const char *p = s ? strstr(s, key) : NULL;
	return p ? strtoull(p + strlen(key), NULL, 16) : 0;
}

/* What NT_PRSTATUS holds beside the registers, as the kernel fills it: the CPU times (the
 * leader's are the whole process's), the pending and the blocked signals. A signal sent
 * to the process (ShdPnd) is pending for each of its threads until one takes it, so each
 * thread's set includes it. What /proc no longer has (the thread went) stays 0. */
static void thread_status(int pid, struct cq_thread *th)
{
	char path[64], *s;
	size_t len;
	if (th->tid == pid)
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	else
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, (int)th->tid);
	long hz = sysconf(_SC_CLK_TCK);
	if ((s = slurp(path, 1 << 16, &len))) {
		const char *p = strrchr(s, ')');
		unsigned long long ut, st;
		/* after ")": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
		if (p && hz > 0 && sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) == 2) {
			th->utime_us = ut * 1000000 / (unsigned long long)hz;
			th->stime_us = st * 1000000 / (unsigned long long)hz;
		}
		free(s);
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, (int)th->tid);
	if ((s = slurp(path, 1 << 16, &len))) {
		th->sigpend = sigset_of(s, "\nSigPnd:") | sigset_of(s, "\nShdPnd:");
		th->sighold = sigset_of(s, "\nSigBlk:");
		free(s);
	}
}

/* Every held thread's registers into the model, as NT_PRSTATUS would give them. */
static struct cq_error *read_threads(struct cq_core *core)
{
	const struct cq_target *t = core->target;
	uint8_t *regs = calloc(1, t->reg_block_size);
	if (!regs)
		return &cq_error_nomem;
	struct cq_error *err = NULL;
	int pid = ((struct live *)core->source_data)->pid;
	for (sig_atomic_t i = 0; i < nheld && !err; i++) {
		if (held_pid[i] != pid)
			continue;
		struct iovec iov = {regs, t->reg_block_size};
		memset(regs, 0, t->reg_block_size);
		if (ptrace(PTRACE_GETREGSET, held_tids[i], (void *)(long)NT_PRSTATUS, &iov) != 0) {
			err = cq_error_errno(errno, "process %d: the registers of thread %d", ((struct live *)core->source_data)->pid,
					     (int)held_tids[i]);
			break;
		}
		struct cq_thread *th;
		err = cq_core_add_thread(core, held_tids[i], 0, regs, iov.iov_len, core->name, &th);
		if (!err && t->tp_source == CQ_TP_NOTE_386_TLS)
			err = thread_area(core, th);
		/* the floating-point registers as NT_FPREGSET holds them (for a snapshot) */
		uint8_t fp[4096];
		struct iovec fiov = {fp, sizeof(fp)};
		if (!err && ptrace(PTRACE_GETREGSET, held_tids[i], (void *)(long)NT_PRFPREG, &fiov) == 0)
			err = cq_core_set_thread_fpregs(th, fp, fiov.iov_len, true);
		if (!err)
			thread_status(pid, th);
	}
	free(regs);
	return err;
}

static bool stopped_at(int pid, struct timespec *at, struct timespec *real, char *state);

struct cq_error *cq_process_open(int pid, const struct cq_core_options *opts, const struct cq_live_options *lo,
				 struct cq_core **ret)
{
	const struct cq_target *target = NULL;
	struct cq_error *err;
	if (pid <= 0)
		return cq_error_create(CQ_ERR_USAGE, "--pid %d: not a process id", pid);
	if ((err = target_of(pid, &target)))
		return err;
	struct live *l = calloc(1, sizeof(*l));
	struct cq_core *core = l ? cq_core_new(opts, target, &live_source) : NULL;
	if (!core) {
		free(l);
		return &cq_error_nomem;
	}
	l->pid = pid;
	l->mem_fd = -1;
	l->log = mmap(NULL, sizeof(*l->log), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (l->log == MAP_FAILED)
		l->log = NULL; /* no snapshot then: cq_process_pages says so */
	snprintf(l->name, sizeof(l->name), "process %d", pid);
	core->source_data = l;
	core->name = l->name;
	unsigned ms = lo && lo->max_stop_ms ? lo->max_stop_ms : CQ_LIVE_MAX_STOP_MS;
	/* stopped already (cq_process_stop, a job's cut), else now */
	if (!pid_held(pid) && (err = cq_process_stop(pid, lo)))
		goto fail;
	struct timespec real;
	if (!stopped_at(pid, &l->stopped_at, &real, &core->state)) {
		clock_gettime(CLOCK_MONOTONIC, &l->stopped_at);
		clock_gettime(CLOCK_REALTIME, &real);
	}
	core->taken_ns = (uint64_t)real.tv_sec * 1000000000u + (uint64_t)real.tv_nsec;
	l->held = true;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	if ((l->mem_fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		err = cq_error_errno(errno, "process %d: %s", pid, path);
		goto fail;
	}
	size_t len;
	snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
	char *auxv = slurp(path, 1 << 16, &len);
	if (!auxv) {
		err = cq_error_errno(errno, "process %d: %s", pid, path);
		goto fail;
	}
	err = cq_core_set_auxv(core, (const uint8_t *)auxv, len);
	free(auxv);
	if (err || (err = read_maps(core, pid)) || (err = read_threads(core)))
		goto fail;
	read_identity(core, pid);
	/* tests only: hold the process stopped this long (signals sent to it meanwhile,
	 * coreq killed, --max-stop passing: tests/fixture/live.py) */
	const char *hold = getenv("COREQ_TEST_LIVE_HOLD_MS");
	if (hold) {
		struct timespec ts = {atoi(hold) / 1000, (long)(atoi(hold) % 1000) * 1000000};
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !expired)
			;
	}
	if (expired) {
		err = cq_error_create(CQ_ERR_PROCESS, "process %d: stopped for longer than --max-stop %u ms while it was "
				      "read: resumed, nothing shown", pid, ms);
		goto fail;
	}
	/* a snapshot of a running process: no thread took a fatal signal (as gcore's core) */
	core->crash_thread = 0;
	core->crashed = false;
	*ret = core;
	return NULL;
fail:
	cq_core_close(core);
	return err;
}

struct cq_error *cq_process_check(const struct cq_core *core)
{
	const struct live *l = core->source != &live_source ? NULL : core->source_data;
	if (!l || !l->held)
		return NULL;
	/* a held process cannot run, but SIGKILL still ends it: then it is a zombie (Z), dead
	 * (X), or reaped and gone */
	char path[64], state = 0, *s;
	size_t len;
	snprintf(path, sizeof(path), "/proc/%d/stat", l->pid);
	if ((s = slurp(path, 1 << 16, &len))) {
		const char *p = strrchr(s, ')');
		if (p)
			sscanf(p + 1, " %c", &state);
		free(s);
	}
	if (state && state != 'Z' && state != 'X')
		return NULL;
	return cq_error_create(CQ_ERR_PROCESS, "process %d exited while coreq read it (killed?): what was read is not "
			       "its state (nothing shown, no snapshot written)", l->pid);
}

unsigned cq_process_stopped_ms(const struct cq_core *core)
{
	const struct live *l = core->source != &live_source ? NULL : core->source_data;
	if (!l || !l->held)
		return 0;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (unsigned)((now.tv_sec - l->stopped_at.tv_sec) * 1000 + (now.tv_nsec - l->stopped_at.tv_nsec) / 1000000);
}

struct cq_error *cq_process_pages(struct cq_core *core, const struct cq_mem_range **ret, size_t *n)
{
	struct live *l = core->source != &live_source ? NULL : core->source_data;
	*ret = NULL;
	*n = 0;
	if (!l || !l->log)
		return cq_error_create(CQ_ERR_USAGE, "%s: not a live process's model", core->name);
	struct cq_error *gone = cq_process_check(core);
	if (gone)
		return gone;
	uint32_t logged = __atomic_load_n(&l->log->n, __ATOMIC_RELAXED);
	if (logged > LOG_MAX)
		return cq_error_create(CQ_ERR_PROCESS, "%s: more than %u reads logged: the pages read are not all known",
				       core->name, LOG_MAX);
	struct cq_mem_range *r = malloc((logged ? logged : 1) * sizeof(*r));
	if (!r)
		return &cq_error_nomem;
	memcpy(r, l->log->r, logged * sizeof(*r));
	qsort(r, logged, sizeof(*r), range_cmp);
	size_t m = 0;
	for (size_t i = 0; i < logged; i++) {
		if (m && r[i].start <= r[m - 1].end) {
			if (r[i].end > r[m - 1].end)
				r[m - 1].end = r[i].end;
		} else {
			r[m++] = r[i];
		}
	}
	free(l->pages);
	l->pages = r;
	l->npages = m;
	*ret = r;
	*n = m;
	return NULL;
}

/* When each held process was stopped (a job's ranks are read after all of them stopped). */
#define MAX_STOPS 4096
static struct {
	int pid;
	struct timespec at, real; /* CLOCK_MONOTONIC (how long it is held), CLOCK_REALTIME (the note) */
	char state;               /* its /proc state letter before coreq stopped it ('T': stopped) */
} stops[MAX_STOPS];
static size_t nstops;

static bool stopped_at(int pid, struct timespec *at, struct timespec *real, char *state)
{
	for (size_t i = 0; i < nstops; i++)
		if (stops[i].pid == pid) {
			*at = stops[i].at;
			*real = stops[i].real;
			*state = stops[i].state;
			return true;
		}
	return false;
}

/* The state letter of /proc/PID/stat (0 when unreadable). */
static char proc_state(int pid)
{
	char path[64], *s, state = 0;
	size_t len;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if ((s = slurp(path, 1 << 16, &len))) {
		char *p = strrchr(s, ')');
		if (!p || sscanf(p + 1, " %c", &state) != 1)
			state = 0;
		free(s);
	}
	return state;
}

struct cq_error *cq_process_stop(int pid, const struct cq_live_options *lo)
{
	install_handlers();
	if (!nheld)
		nstops = 0;
	if (nstops < MAX_STOPS) {
		stops[nstops].pid = pid;
		/* before it is stopped here: a process someone else stopped (SIGSTOP) is not
		 * running, whatever its stacks say (the job view says so) */
		stops[nstops].state = proc_state(pid);
		clock_gettime(CLOCK_MONOTONIC, &stops[nstops].at);
		clock_gettime(CLOCK_REALTIME, &stops[nstops].real);
		nstops++;
	}
	if (!nheld) {
		/* the bound on the stop, from before the first thread of the hold stops */
		unsigned ms = lo && lo->max_stop_ms ? lo->max_stop_ms : CQ_LIVE_MAX_STOP_MS;
		expired = 0;
		struct itimerval tv = {{0, 0}, {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000}};
		setitimer(ITIMER_REAL, &tv, NULL);
	}
	struct cq_error *err = stop_all(pid);
	if (err)
		resume_pid(pid);
	return err;
}

void cq_process_hold(bool on)
{
	keep_held = on;
}

void cq_process_resume_all(void)
{
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	resume_all();
}
