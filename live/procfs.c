/* SPDX-License-Identifier: MIT */
/* What live/ reads of /proc (procfs.h). */
#include "procfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *cq_live_slurp(const char *path, size_t max, size_t *len)
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

/* The fields after the command's ")" in /proc/PID[/task/TID]/stat, into @p buf. */
static const char *stat_fields(int pid, pid_t tid, char *buf, size_t n)
{
	char path[96];
	if (tid == pid)
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	else
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	ssize_t r = read(fd, buf, n - 1);
	close(fd);
	if (r <= 0)
		return NULL;
	buf[r] = 0;
	const char *p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p + 2 : NULL;
}

char cq_live_task_state(int pid, pid_t tid)
{
	char buf[1024];
	const char *f = stat_fields(pid, tid, buf, sizeof(buf));
	return f ? f[0] : 0;
}

bool cq_live_kernel_thread(int pid)
{
	char buf[1024];
	const char *f = stat_fields(pid, pid, buf, sizeof(buf));
	unsigned long flags = 0;
	/* state ppid pgrp session tty_nr tpgid flags */
	if (!f || sscanf(f, "%*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
		return false;
	return flags & 0x00200000; /* PF_KTHREAD */
}

pid_t cq_live_reader_tid(int pid)
{
	char state = cq_live_task_state(pid, pid);
	if (state && state != 'Z' && state != 'X')
		return pid;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	DIR *d = opendir(path);
	if (!d)
		return -1;
	pid_t found = -1;
	struct dirent *e;
	while (found < 0 && (e = readdir(d))) {
		pid_t tid = (pid_t)atoi(e->d_name);
		state = tid > 0 ? cq_live_task_state(pid, tid) : 0;
		if (state && state != 'Z' && state != 'X')
			found = tid;
	}
	closedir(d);
	return found;
}

/* The numbers after @p key in /proc status text @p s, up to @p max of them. */
static int status_ids(const char *s, const char *key, long *v, int max)
{
	const char *p = s ? strstr(s, key) : NULL;
	int n = 0;
	if (!p)
		return 0;
	p += strlen(key);
	while (n < max) {
		char *end;
		long x = strtol(p, &end, 10);
		if (end == p)
			break;
		v[n++] = x;
		p = end;
	}
	return n;
}

static char *task_status(int pid, pid_t tid)
{
	char path[96];
	size_t len;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, (int)tid);
	return cq_live_slurp(path, 1 << 16, &len);
}

void cq_live_comm(int pid, char *buf, size_t n)
{
	char path[64];
	size_t len;
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	char *c = cq_live_slurp(path, 256, &len);
	snprintf(buf, n, "%s", c && len ? c : "?");
	buf[strcspn(buf, "\n")] = 0;
	for (char *q = buf; *q; q++)
		if ((unsigned char)*q < 0x20 || (unsigned char)*q >= 0x7f)
			*q = '?';
	free(c);
}

struct cq_error *cq_live_why_not(int pid, pid_t tid, int err)
{
	if (err == ESRCH)
		return cq_error_create(CQ_ERR_PROCESS, "process %d: no such process", pid);
	char *status = task_status(pid, tid);
	long tracer[1] = {0}, uid[4] = {-1, -1, -1, -1};
	status_ids(status, "\nTracerPid:", tracer, 1);
	status_ids(status, "\nUid:", uid, 4);
	free(status);
	int scope = -1;
	size_t len;
	char *ys = cq_live_slurp("/proc/sys/kernel/yama/ptrace_scope", 64, &len);
	if (ys) {
		scope = atoi(ys);
		free(ys);
	}
	char who[64];
	char thread[48] = "";
	if (tid != pid)
		snprintf(thread, sizeof(thread), " (its thread %d)", (int)tid);
	/* the thread the kernel refused: another tracer holds it (coreq's own seize of the
	 * other threads is not the reason) */
	if (tracer[0] > 0 && tracer[0] != getpid()) {
		cq_live_comm((int)tracer[0], who, sizeof(who));
		return cq_error_create(CQ_ERR_PROCESS, "process %d%s: already traced by process %ld (%s): one tracer at a "
				       "time", pid, thread, tracer[0], who);
	}
	if (uid[1] >= 0 && (uid_t)uid[1] != geteuid() && geteuid() != 0)
		return cq_error_create(CQ_ERR_PROCESS, "process %d: belongs to uid %ld, not to you (uid %d): only "
				       "its owner or root may trace it", pid, uid[1], (int)geteuid());
	if (scope >= 1 && geteuid() != 0)
		return cq_error_create(CQ_ERR_PROCESS,
				       "process %d: Yama's ptrace_scope is %d: %s", pid, scope,
				       scope == 1 ? "only a process's ancestors may trace it: run coreq as root, or start the "
						    "program under coreq's parent, or set kernel.yama.ptrace_scope=0"
				       : scope == 2 ? "only root (CAP_SYS_PTRACE) may trace" : "no process may be traced");
	if (scope == 3)
		return cq_error_create(CQ_ERR_PROCESS, "process %d: Yama's ptrace_scope is 3: no process may be traced", pid);
	char why[160];
	if (!cq_live_dumpable(pid, why, sizeof(why)))
		return cq_error_create(CQ_ERR_PROCESS, "process %d: %s: only root may trace it", pid, why);
	return cq_error_create(CQ_ERR_PROCESS, "process %d%s: the kernel does not let you trace it (%s)", pid, thread,
			       strerror(err));
}

bool cq_live_dumpable(int pid, char *why, size_t n)
{
	char path[64];
	/* a file of it: the kernel gives a file the owner when it is looked up (the directory
	 * keeps the one it had) */
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	struct stat st;
	char *status = task_status(pid, pid);
	long uid[4] = {-1, -1, -1, -1}, gid[4] = {-1, -1, -1, -1};
	int nu = status_ids(status, "\nUid:", uid, 4), ng = status_ids(status, "\nGid:", gid, 4);
	free(status);
	if (stat(path, &st) != 0 || nu != 4 || ng != 4)
		return true; /* gone, or unreadable: the stop says why */
	/* the kernel makes a non-dumpable process's /proc files root's (task_dump_owner),
	 * a dumpable one's its effective uid's */
	if (st.st_uid != (uid_t)uid[1]) {
		snprintf(why, n, "not dumpable (its /proc files belong to uid %u, not to its uid %ld: PR_SET_DUMPABLE 0, or "
			 "credentials it changed)", (unsigned)st.st_uid, uid[1]);
		return false;
	}
	/* a setuid or setgid program (root's, where ownership tells nothing): credentials
	 * changed by exec make it non-dumpable */
	if (uid[0] != uid[1] || uid[2] != uid[1] || gid[0] != gid[1] || gid[2] != gid[1]) {
		snprintf(why, n, "not dumpable (a setuid or setgid program: real uid %ld, effective %ld, real gid %ld, "
			 "effective %ld)", uid[0], uid[1], gid[0], gid[1]);
		return false;
	}
	return true;
}

void cq_live_thread_where(int pid, pid_t tid, char *buf, size_t n)
{
	char path[96], wchan[128] = "", *s;
	size_t len;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/wchan", pid, (int)tid);
	if ((s = cq_live_slurp(path, 256, &len))) {
		snprintf(wchan, sizeof(wchan), "%s", s);
		free(s);
	}
	for (char *q = wchan; *q; q++)
		if ((unsigned char)*q <= 0x20 || (unsigned char)*q >= 0x7f)
			*q = '?';
	long nr = -2;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, (int)tid);
	if ((s = cq_live_slurp(path, 512, &len))) {
		if (strncmp(s, "running", 7))
			nr = strtol(s, NULL, 10);
		free(s);
	}
	char state = cq_live_task_state(pid, tid);
	int k = snprintf(buf, n, "state %c", state ? state : '?');
	if (k > 0 && (size_t)k < n && wchan[0] && strcmp(wchan, "0"))
		k += snprintf(buf + k, n - (size_t)k, ", in the kernel at %s", wchan);
	if (k > 0 && (size_t)k < n && nr >= 0)
		snprintf(buf + k, n - (size_t)k, ", system call %ld", nr);
}
