/* SPDX-License-Identifier: MIT */
/* Running the launcher's commands, bounded (run.h). */
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

long long cq_run_now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

struct cq_error *cq_run_start(char *const argv[], struct cq_run *r)
{
	int p[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}};
	*r = (struct cq_run){-1, -1, -1, -1};
	for (int i = 0; i < 3; i++)
		if (pipe2(p[i], O_CLOEXEC)) {
			int e = errno;
			for (int k = 0; k < i; k++) {
				close(p[k][0]);
				close(p[k][1]);
			}
			return cq_error_errno(e, "%s: pipe", argv[0]);
		}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[0][0], 0);
	posix_spawn_file_actions_adddup2(&fa, p[1][1], 1);
	posix_spawn_file_actions_adddup2(&fa, p[2][1], 2);
	/* the child takes default signal dispositions: coreq's hold handlers are not its */
	posix_spawnattr_t at;
	posix_spawnattr_init(&at);
	sigset_t all, none;
	sigfillset(&all);
	sigemptyset(&none);
	posix_spawnattr_setsigdefault(&at, &all);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
	pid_t pid;
	int rc = posix_spawnp(&pid, argv[0], &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(p[0][0]);
	close(p[1][1]);
	close(p[2][1]);
	if (rc) {
		close(p[0][1]);
		close(p[1][0]);
		close(p[2][0]);
		return cq_error_create(CQ_ERR_IO, "%s cannot be run: %s (is it on PATH?)", argv[0], strerror(rc));
	}
	/* a child that exits early must not kill coreq with SIGPIPE on its stdin */
	signal(SIGPIPE, SIG_IGN);
	*r = (struct cq_run){pid, p[0][1], p[1][0], p[2][0]};
	return NULL;
}

/* Wait for @p pid at most @p ms; true when it was reaped (status in *@p status). */
static bool wait_for(pid_t pid, unsigned ms, int *status)
{
	long long end = cq_run_now_ms() + ms;
	for (;;) {
		pid_t w = waitpid(pid, status, WNOHANG);
		if (w == pid || (w < 0 && errno != EINTR))
			return w == pid;
		if (cq_run_now_ms() >= end)
			return false;
		struct timespec ts = {0, 5 * 1000000};
		nanosleep(&ts, NULL);
	}
}

void cq_run_end(struct cq_run *r, unsigned grace_ms, int *status)
{
	int st = -1;
	for (int *fd = &r->in; fd <= &r->err; fd++)
		if (*fd >= 0) {
			close(*fd);
			*fd = -1;
		}
	if (r->pid > 0 && !wait_for(r->pid, grace_ms, &st)) {
		kill(r->pid, SIGTERM);
		if (!wait_for(r->pid, grace_ms, &st)) {
			kill(r->pid, SIGKILL);
			waitpid(r->pid, &st, 0);
		}
		st = -1;
	}
	r->pid = -1;
	if (status)
		*status = st;
}

struct cq_error *cq_run_capture(char *const argv[], unsigned timeout_ms, size_t max, char **out, char **first_err,
				int *status)
{
	*out = NULL;
	if (first_err)
		*first_err = NULL;
	*status = -1;
	struct cq_run r;
	struct cq_error *err = cq_run_start(argv, &r);
	if (err)
		return err;
	close(r.in);
	r.in = -1;
	size_t n = 0, ne = 0;
	char *buf = malloc(max + 1), ebuf[512];
	if (!buf) {
		cq_run_end(&r, 0, NULL);
		return &cq_error_nomem;
	}
	long long end = cq_run_now_ms() + timeout_ms;
	bool over = false, late = false;
	while (r.out >= 0 || r.err >= 0) {
		long long left = end - cq_run_now_ms();
		if (left <= 0) {
			late = true;
			break;
		}
		struct pollfd pf[2] = {{r.out, POLLIN, 0}, {r.err, POLLIN, 0}};
		if (poll(pf, 2, (int)left) < 0 && errno != EINTR)
			break;
		if (r.out >= 0 && pf[0].revents) {
			char tmp[4096];
			ssize_t k = read(r.out, tmp, sizeof(tmp));
			if (k <= 0) {
				close(r.out);
				r.out = -1;
			} else if (n + (size_t)k > max) {
				over = true;
				break;
			} else {
				memcpy(buf + n, tmp, (size_t)k);
				n += (size_t)k;
			}
		}
		if (r.err >= 0 && pf[1].revents) {
			ssize_t k = read(r.err, ebuf + ne, ne < sizeof(ebuf) - 1 ? sizeof(ebuf) - 1 - ne : 0);
			if (k <= 0 && ne < sizeof(ebuf) - 1) {
				close(r.err);
				r.err = -1;
			} else if (k > 0) {
				ne += (size_t)k;
			} else {
				char sink[4096]; /* the first line is kept; the rest is read and dropped */
				if (read(r.err, sink, sizeof(sink)) <= 0) {
					close(r.err);
					r.err = -1;
				}
			}
		}
	}
	buf[n] = 0;
	ebuf[ne] = 0;
	int st;
	cq_run_end(&r, late || over ? 0 : 2000, &st);
	if (over) {
		free(buf);
		return cq_error_create(CQ_ERR_IO, "%s: its output is past %zu bytes", argv[0], max);
	}
	*status = !late && st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	*out = buf;
	if (first_err) {
		ebuf[strcspn(ebuf, "\n")] = 0;
		*first_err = strdup(ebuf);
	}
	return NULL;
}
