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
#include "hold.h"
#include "procfs.h"

/* Threads read per process at most (the hold's own table bounds them all). */
#define MAX_THREADS 16384

/* A job's ranks are held together (cq_process_hold): none is stopped anew once the hold
 * has ended (the bound), so that one cut is never mixed with a second. */
static bool keep_held, job_begun;

/* The pages read, logged where the plugins' isolated children (forked from coreq,
 * reading through the same /proc/PID/mem descriptor) log theirs too: a shared anonymous
 * mapping, appended to with an atomic index, merged into sorted ranges when asked
 * (cq_process_pages). What OMPD's and MQD's plugins read belongs in a snapshot as much as
 * what the stack walk reads. */
#define LOG_MAX (1u << 20) /* ranges logged: 16 MiB of address space, touched as used */
struct page_log {
	uint32_t n;      /* entries claimed (atomically; past LOG_MAX: lost, and said) */
	uint32_t failed_once; /* set by the first read that failed, which fills first_* */
	/* every read of the memory, coreq's and its children's (atomically): a snapshot whose
	 * reads all failed holds nothing of the process, and must not pass for one */
	uint64_t reads_ok, reads_failed, bytes_ok, bytes_failed;
	uint64_t first_addr;
	int32_t first_errno; /* 0: the kernel gave nothing there (a read of 0 bytes) */
	uint32_t pad;
	struct cq_mem_range r[LOG_MAX];
};

/* The pages that small reads fell in, kept while the process is held: a model's reads of
 * a held process are mostly of a few dozen bytes (program headers one by one, link maps,
 * notes, a frame's words), and each pread of /proc/PID/mem costs a walk of the target's
 * page tables. While held, the stopped threads leave the memory as it is, so a page once
 * read serves every later small read of it (a thread that did not stop, in D state or a
 * vfork, may still write; read again or not, a page then gives its later reads one moment
 * of it). Direct-mapped by page number: 64 pages, 256 KiB, freed with the model. */
#define CACHE_PAGE 4096u
#define CACHE_SLOTS 64u
struct page_cache {
	uint64_t page[CACHE_SLOTS]; /* the page's address + 1 (0: the slot is empty) */
	uint8_t data[CACHE_SLOTS][CACHE_PAGE];
};

struct live {
	int pid;
	pid_t reader;                 /* the thread whose /proc entries give the memory (the main
					 thread, or a live one when the main thread exited) */
	int mem_fd;
	struct timespec stopped_at;
	char name[32];
	struct page_log *log; /* shared with the children */
	uint64_t last_start, last_end; /* this process's last logged range (repeats skipped) */
	struct cq_mem_range *pages;   /* the log merged (cq_process_pages) */
	size_t npages;
	bool held;                    /* its threads are held (hold.h) */
	unsigned max_stop_ms;         /* the bound it was held under */
	unsigned stop_wait_ms;        /* how long its threads were waited for */
	size_t unstopped;             /* its threads that did not stop (not read) */
	pid_t *unstopped_tids;
	long long fail_after;         /* tests only (COREQ_TEST_LIVE_MEM_FAIL): reads fail from
					 this many on; -1: never */
	struct page_cache *cache;     /* small reads' pages (NULL: none, every read the kernel's) */
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

/* A read of @p n bytes at @p addr that failed (errno @p e, 0: nothing there), counted, the
 * first one kept to be said. */
static void count_failure(struct live *l, uint64_t addr, size_t n, int e)
{
	if (!l->log)
		return;
	__atomic_fetch_add(&l->log->reads_failed, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&l->log->bytes_failed, (uint64_t)n, __ATOMIC_RELAXED);
	uint32_t unset = 0;
	if (__atomic_compare_exchange_n(&l->log->failed_once, &unset, 1, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
		l->log->first_addr = addr;
		l->log->first_errno = e;
	}
}


static unsigned max_stop(const struct cq_live_options *lo)
{
	return lo && lo->max_stop_ms ? lo->max_stop_ms : CQ_LIVE_MAX_STOP_MS;
}

/* How long a process's threads are waited for to stop: a quarter of the bound, at least
 * 20 ms (a thread busy in the kernel), at most 500 ms. One that takes longer is not
 * stopping (vfork, D state): the others are read without it, well within the bound. */
static unsigned stop_wait(unsigned max_stop_ms)
{
	unsigned w = max_stop_ms / 4;
	return w < 20 ? 20 : w > 500 ? 500 : w;
}

/* Why a held process runs again, for the reads that fail after it. */
static const char *released_why(void)
{
	int sig;
	switch (cq_hold_released(&sig)) {
	case CQ_HOLD_BOUND:
		return "it was stopped for longer than --max-stop";
	case CQ_HOLD_STOPPED:
		return "coreq itself was stopped meanwhile";
	default:
		return "resumed";
	}
}

static uint64_t live_held(const struct cq_core *core, const struct cq_segment *s)
{
	return s->filesz;
}

/* A read of @p n bytes at @p addr served from the page it falls in (read whole into the
 * cache first): true with *@p r the bytes given (to the page's end at most); false where
 * the read is not a small one inside a page of segment @p s, or the page could not be read
 * whole (the read is then the kernel's, and its failure said as one). */
static bool cached_read(struct live *l, const struct cq_segment *s, uint64_t addr, void *buf, size_t n, ssize_t *r)
{
	uint64_t page = addr & ~(uint64_t)(CACHE_PAGE - 1);
	if (n >= CACHE_PAGE / 2 || page < s->vaddr || page + CACHE_PAGE > s->vaddr + s->filesz)
		return false;
	if (!l->cache && !(l->cache = calloc(1, sizeof(*l->cache))))
		return false;
	unsigned slot = (unsigned)(page / CACHE_PAGE) % CACHE_SLOTS;
	if (l->cache->page[slot] != page + 1) {
		l->cache->page[slot] = 0;
		if (pread(l->mem_fd, l->cache->data[slot], CACHE_PAGE, (off_t)page) != (ssize_t)CACHE_PAGE)
			return false;
		l->cache->page[slot] = page + 1;
	}
	size_t off = (size_t)(addr - page), k = n < CACHE_PAGE - off ? n : CACHE_PAGE - off;
	memcpy(buf, l->cache->data[slot] + off, k);
	*r = (ssize_t)k;
	return true;
}

static struct cq_error *live_read(struct cq_core *core, const struct cq_segment *s, uint64_t addr, void *buf,
				  size_t len, size_t *got)
{
	struct live *l = core->source_data;
	if (!l->held || !cq_hold_has(l->pid))
		return cq_error_fault(addr, "cannot read memory of process %d at 0x%llx: the process runs again (%s)",
				      l->pid, (unsigned long long)addr, released_why());
	uint64_t avail = s->filesz - (addr - s->vaddr);
	size_t n = len < avail ? len : (size_t)avail;
	ssize_t r;
	if (l->fail_after >= 0 && l->log &&
	    (long long)(__atomic_load_n(&l->log->reads_ok, __ATOMIC_RELAXED) +
			__atomic_load_n(&l->log->reads_failed, __ATOMIC_RELAXED)) >= l->fail_after) {
		r = -1; /* tests only: as the kernel refuses a read */
		errno = EIO;
	} else if (cached_read(l, s, addr, buf, n, &r)) {
		/* served from (or read into) the page cache */
	} else {
		r = pread(l->mem_fd, buf, n, (off_t)addr);
	}
	if (r <= 0) {
		int e = r < 0 ? errno : 0;
		count_failure(l, addr, n, e);
		return cq_error_fault(addr, "cannot read memory of process %d at 0x%llx: %s", l->pid,
				      (unsigned long long)addr, e ? strerror(e) : "nothing there");
	}
	*got = (size_t)r;
	if (l->log) {
		__atomic_fetch_add(&l->log->reads_ok, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&l->log->bytes_ok, (uint64_t)r, __ATOMIC_RELAXED);
	}
	record(l, addr, addr + (uint64_t)r);
	return NULL;
}

static void live_close(struct cq_core *core)
{
	struct live *l = core->source_data;
	if (l && !keep_held)
		cq_hold_resume_pid(l->pid);
	if (l && l->mem_fd >= 0)
		close(l->mem_fd);
	if (l) {
		free(l->pages);
		free(l->cache);
		free(l->unstopped_tids);
		if (l->log)
			munmap(l->log, sizeof(*l->log));
	}
	free(l);
	core->source_data = NULL;
}

static const struct cq_source live_source = {"process", live_held, live_read, live_close};

/* The architecture of @p pid from its executable's ELF header. */
static struct cq_error *target_of(int pid, const struct cq_target **ret)
{
	char path[64], exe[4096];
	unsigned char h[20];
	if (cq_live_kernel_thread(pid)) {
		char comm[64];
		cq_live_comm(pid, comm, sizeof(comm));
		return cq_error_create(CQ_ERR_PROCESS, "process %d (%s) is a kernel thread: it has no user space to read", pid,
				       comm);
	}
	/* a process whose main thread exited while others run: its /proc entries have no
	 * memory any more; a live thread's do */
	pid_t reader = cq_live_reader_tid(pid);
	if (reader < 0)
		return cq_error_create(CQ_ERR_PROCESS, "process %d: no such process%s", pid,
				       cq_live_task_state(pid, pid) ? " (a zombie: it exited, and its parent has not reaped it)" : "");
	snprintf(path, sizeof(path), "/proc/%d/task/%d/exe", pid, (int)reader);
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
		       : errno == EACCES || errno == EPERM ? cq_live_why_not(pid, pid, EPERM)
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

/* The answer of mapped_file() for the mapping before: the same name, device and inode are
 * the same file (a library has four or five mappings). */
struct mapped_memo {
	const char *name;
	unsigned maj, min;
	unsigned long long ino;
	bool elsewhere;
};

/* Whether mapping [@p start, @p end) of thread @p tid's process, named @p name (device
 * @p maj:@p min, inode @p ino, as /proc/PID/maps says), is of a file the name no longer
 * leads to: deleted (the kernel's " (deleted)"), or the path now names another file than
 * the one mapped (an upgrade renamed a new build over it, another mount namespace). Then
 * the file is read at /proc/TID/map_files/START-END, the mapped file itself, returned (in
 * @p buf; through a thread that runs: a main thread that exited has no mappings); NULL
 * when the path is the mapped file, or when that cannot be told (the path is used as
 * before). One stat per file, not per mapping (*@p last). */
static const char *mapped_file(int tid, unsigned long long start, unsigned long long end, const char *name,
			       unsigned maj, unsigned min, unsigned long long ino, struct mapped_memo *last,
			       char *buf, size_t size)
{
	snprintf(buf, size, "/proc/%d/map_files/%llx-%llx", tid, start, end);
	if (last->name && !strcmp(last->name, name) && last->maj == maj && last->min == min && last->ino == ino)
		return last->elsewhere ? buf : NULL;
	*last = (struct mapped_memo){name, maj, min, ino, true};
	if (cq_file_map_name_len(name) != strlen(name))
		return buf;
	struct stat at_path, mapped;
	bool at = stat(name, &at_path) == 0;
	/* glibc's dev_t of major:minor (gnu_dev_makedev), as stat gives it */
	uint64_t dev = ((uint64_t)(maj & 0xfffu) << 8) | ((uint64_t)(maj & ~0xfffu) << 32) | (min & 0xffu) |
		       ((uint64_t)(min & ~0xffu) << 12);
	/* the numbers /proc/PID/maps shows may be another layer's (overlayfs): then the link's
	 * own target decides */
	last->elsewhere = !(at && at_path.st_ino == ino && (uint64_t)at_path.st_dev == dev) &&
			  stat(buf, &mapped) == 0 &&
			  !(at && at_path.st_dev == mapped.st_dev && at_path.st_ino == mapped.st_ino);
	return last->elsewhere ? buf : NULL;
}

/* The mappings of /proc/PID/maps as segments (readable ones held) and the file map. */
static struct cq_error *read_maps(struct cq_core *core, int pid)
{
	char path[64];
	size_t len;
	/* through the thread read (the main thread may have exited: its entry has no maps) */
	int reader = (int)((struct live *)core->source_data)->reader;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/maps", pid, reader);
	char *text = cq_live_slurp(path, 64 << 20, &len);
	if (!text)
		return cq_error_errno(errno, "process %d: %s", pid, path);
	size_t cap = 64, nsegs = 0, nmaps = 0;
	struct cq_segment *segs = malloc(cap * sizeof(*segs));
	struct cq_file_map *maps = malloc(cap * sizeof(*maps));
	struct cq_error *err = segs && maps ? NULL : &cq_error_nomem;
	struct mapped_memo memo = {0};
	for (char *line = text, *next; !err && line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		unsigned long long start, end, off, ino = 0;
		unsigned maj = 0, min = 0;
		char perms[8];
		int name_at = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off, &maj, &min, &ino,
			   &name_at) < 4 || end <= start)
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
		/* held: what /proc/PID/mem gives (readable, and not the kernel's own pages: [vvar],
		 * and on recent kernels [vvar_vclock] beside it, r--p but EIO to every read) */
		bool held = (flags & PF_R) && strncmp(name, "[vvar", 5) && strcmp(name, "[vsyscall]");
		segs[nsegs++] = (struct cq_segment){start, end - start, 0, held ? end - start : 0, flags};
		if (name[0] == '/') {
			/* the mapped file's own path after the name's NUL (cq_file_map.mapped) */
			char mf[96];
			const char *m = mapped_file(reader, start, end, name, maj, min, ino, &memo, mf, sizeof(mf));
			size_t nl = strlen(name) + 1, ml = m ? strlen(m) + 1 : 0;
			char *p = malloc(nl + ml);
			if (!p) {
				err = &cq_error_nomem;
				break;
			}
			memcpy(p, name, nl);
			if (m)
				memcpy(p + nl, m, ml);
			maps[nmaps++] = (struct cq_file_map){start, end, off, p, m ? p + nl : NULL};
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
static void read_identity(struct cq_core *core, int pid, pid_t reader)
{
	char path[64], *s;
	size_t len;
	core->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if ((s = cq_live_slurp(path, 1 << 16, &len))) {
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
	if ((s = cq_live_slurp(path, 1 << 16, &len))) {
		const char *u = strstr(s, "\nUid:"), *g = strstr(s, "\nGid:");
		if (u)
			core->uid = (uint32_t)strtoul(u + 5, NULL, 10);
		if (g)
			core->gid = (uint32_t)strtoul(g + 5, NULL, 10);
		free(s);
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%d/cmdline", pid, (int)reader);
	if ((s = cq_live_slurp(path, 4096, &len))) {
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
	if ((s = cq_live_slurp(path, 1 << 16, &len))) {
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
	if ((s = cq_live_slurp(path, 1 << 16, &len))) {
		th->sigpend = sigset_of(s, "\nSigPnd:") | sigset_of(s, "\nShdPnd:");
		th->sighold = sigset_of(s, "\nSigBlk:");
		free(s);
	}
}

/* Every held thread's registers into the model, as NT_PRSTATUS would give them. */
static struct cq_error *read_threads(struct cq_core *core)
{
	const struct cq_target *t = core->target;
	int pid = ((struct live *)core->source_data)->pid;
	uint8_t *regs = calloc(1, t->reg_block_size);
	pid_t *tids = malloc(MAX_THREADS * sizeof(*tids));
	if (!regs || !tids) {
		free(regs);
		free(tids);
		return &cq_error_nomem;
	}
	size_t n = cq_hold_threads(pid, tids, MAX_THREADS);
	struct cq_error *err = NULL;
	for (size_t i = 0; i < n && i < MAX_THREADS && !err; i++) {
		struct iovec iov = {regs, t->reg_block_size};
		memset(regs, 0, t->reg_block_size);
		if (ptrace(PTRACE_GETREGSET, tids[i], (void *)(long)NT_PRSTATUS, &iov) != 0) {
			err = cq_error_errno(errno, "process %d: the registers of thread %d", pid, (int)tids[i]);
			break;
		}
		struct cq_thread *th;
		err = cq_core_add_thread(core, tids[i], 0, regs, iov.iov_len, core->name, &th);
		if (!err && t->tp_source == CQ_TP_NOTE_386_TLS)
			err = thread_area(core, th);
		/* the floating-point registers as NT_FPREGSET holds them (for a snapshot) */
		uint8_t fp[4096];
		struct iovec fiov = {fp, sizeof(fp)};
		if (!err && ptrace(PTRACE_GETREGSET, tids[i], (void *)(long)NT_PRFPREG, &fiov) == 0)
			err = cq_core_set_thread_fpregs(th, fp, fiov.iov_len, true);
		if (!err)
			thread_status(pid, th);
	}
	/* threads that did not stop (vfork, D state): not read, and said; each is detached
	 * once it stops (hold.h) */
	size_t u = err ? 0 : cq_hold_unstopped(pid, tids, MAX_THREADS);
	for (size_t i = 0; i < u && i < MAX_THREADS; i++) {
		char where[256], item[48];
		cq_live_thread_where(pid, tids[i], where, sizeof(where));
		snprintf(item, sizeof(item), "thread %d", (int)tids[i]);
		cq_core_problem(core, item, "did not stop within %u ms (%s: waiting in vfork for a child, or in D state): "
				"its stack is not read; it is let go once it stops", ((struct live *)core->source_data)->stop_wait_ms,
				where);
	}
	struct live *l = core->source_data;
	l->unstopped = u < MAX_THREADS ? u : MAX_THREADS;
	if (u && (l->unstopped_tids = malloc(l->unstopped * sizeof(pid_t))))
		memcpy(l->unstopped_tids, tids, l->unstopped * sizeof(pid_t));
	else
		l->unstopped = 0;
	free(tids);
	free(regs);
	return err;
}

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
	const char *fail = getenv("COREQ_TEST_LIVE_MEM_FAIL");
	l->fail_after = fail && *fail ? atoll(fail) : -1;
	l->log = mmap(NULL, sizeof(*l->log), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (l->log == MAP_FAILED)
		l->log = NULL; /* no snapshot then: cq_process_pages says so */
	snprintf(l->name, sizeof(l->name), "process %d", pid);
	core->source_data = l;
	core->name = l->name;
	l->max_stop_ms = max_stop(lo);
	l->stop_wait_ms = stop_wait(l->max_stop_ms);
	/* stopped already (cq_process_stop, a job's cut), else now; a job whose hold ended
	 * (the bound) is not stopped again: its cut would be two */
	if (!cq_hold_has(pid) && (err = cq_process_stop(pid, lo)))
		goto fail;
	l->reader = cq_live_reader_tid(pid);
	if (l->reader < 0)
		l->reader = pid;
	struct timespec real;
	if (!cq_hold_stopped_at(pid, &l->stopped_at, &real, &core->state)) {
		clock_gettime(CLOCK_MONOTONIC, &l->stopped_at);
		clock_gettime(CLOCK_REALTIME, &real);
	}
	core->taken_ns = (uint64_t)real.tv_sec * 1000000000u + (uint64_t)real.tv_nsec;
	l->held = true;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/mem", pid, (int)l->reader);
	if ((l->mem_fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		err = cq_error_errno(errno, "process %d: %s", pid, path);
		goto fail;
	}
	size_t len;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/auxv", pid, (int)l->reader);
	char *auxv = cq_live_slurp(path, 1 << 16, &len);
	if (!auxv) {
		err = cq_error_errno(errno, "process %d: %s", pid, path);
		goto fail;
	}
	err = cq_core_set_auxv(core, (const uint8_t *)auxv, len);
	free(auxv);
	if (err || (err = read_maps(core, pid)) || (err = read_threads(core)))
		goto fail;
	read_identity(core, pid, l->reader);
	/* tests only: hold the process stopped this long (signals sent to it meanwhile,
	 * coreq killed, --max-stop passing: tests/fixture/live.py) */
	const char *hold = getenv("COREQ_TEST_LIVE_HOLD_MS");
	if (hold) {
		struct timespec ts = {atoi(hold) / 1000, (long)(atoi(hold) % 1000) * 1000000};
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR && cq_hold_has(pid))
			;
	}
	if ((err = cq_process_check(core)))
		goto fail;
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
	/* let go before coreq was done (the bound, coreq stopped): what was read is not all */
	if (!cq_hold_has(l->pid))
		return cq_error_create(CQ_ERR_PROCESS, "process %d ran again after %u ms, before coreq had read it (%s, "
				       "--max-stop %u ms): what was read is incomplete (nothing shown, no snapshot written)",
				       l->pid, cq_process_stopped_ms(core), released_why(), l->max_stop_ms);
	/* a held process cannot run, but SIGKILL still ends it: then it is a zombie (Z), dead
	 * (X), or reaped and gone; its main thread may have exited before (a zombie while
	 * the others run): the thread read through tells */
	char state = cq_live_task_state(l->pid, l->reader);
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
	/* the true stop: until it ran again, if it did */
	struct timespec now;
	if (!cq_hold_resumed_at(l->pid, &now))
		clock_gettime(CLOCK_MONOTONIC, &now);
	return (unsigned)((now.tv_sec - l->stopped_at.tv_sec) * 1000 + (now.tv_nsec - l->stopped_at.tv_nsec) / 1000000);
}

bool cq_process_held_ms(int pid, unsigned *ms)
{
	struct timespec at, real, resumed;
	char state;
	if (!cq_hold_stopped_at(pid, &at, &real, &state) || !cq_hold_resumed_at(pid, &resumed))
		return false;
	*ms = (unsigned)((resumed.tv_sec - at.tv_sec) * 1000 + (resumed.tv_nsec - at.tv_nsec) / 1000000);
	return true;
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
	size_t m = cq_mem_ranges_merge(r, logged);
	free(l->pages);
	l->pages = r;
	l->npages = m;
	*ret = r;
	*n = m;
	return NULL;
}

bool cq_process_dumpable(int pid, char *why, size_t n)
{
	return cq_live_dumpable(pid, why, n);
}

void cq_process_reads(const struct cq_core *core, struct cq_live_reads *ret)
{
	const struct live *l = core->source != &live_source ? NULL : core->source_data;
	memset(ret, 0, sizeof(*ret));
	if (!l || !l->log)
		return;
	ret->ok = __atomic_load_n(&l->log->reads_ok, __ATOMIC_RELAXED);
	ret->failed = __atomic_load_n(&l->log->reads_failed, __ATOMIC_RELAXED);
	ret->ok_bytes = __atomic_load_n(&l->log->bytes_ok, __ATOMIC_RELAXED);
	ret->failed_bytes = __atomic_load_n(&l->log->bytes_failed, __ATOMIC_RELAXED);
	if (__atomic_load_n(&l->log->failed_once, __ATOMIC_RELAXED)) {
		ret->first_addr = l->log->first_addr;
		ret->first_errno = l->log->first_errno;
	}
	snprintf(ret->path, sizeof(ret->path), "/proc/%d/task/%d/mem", l->pid, (int)l->reader);
}

size_t cq_process_unstopped(const struct cq_core *core, const pid_t **tids)
{
	const struct live *l = core->source != &live_source ? NULL : core->source_data;
	if (tids)
		*tids = l ? l->unstopped_tids : NULL;
	return l ? l->unstopped : 0;
}

struct cq_error *cq_process_stop(int pid, const struct cq_live_options *lo)
{
	unsigned ms = max_stop(lo);
	if (keep_held && job_begun && cq_hold_released(NULL) != CQ_HOLD_HELD)
		return cq_error_create(CQ_ERR_PROCESS, "process %d: the job's ranks were let go before it was stopped (%s): "
				       "not stopped", pid, released_why());
	/* the bound on the stop, from before the first thread of the hold stops (a job's: its
	 * first rank's) */
	if (!keep_held || !job_begun)
		cq_hold_begin(ms);
	job_begun = keep_held;
	return cq_hold_stop(pid, stop_wait(ms));
}

void cq_process_hold(bool on)
{
	keep_held = on;
	job_begun = false;
}

void cq_process_resume_all(void)
{
	cq_hold_resume_all();
}
