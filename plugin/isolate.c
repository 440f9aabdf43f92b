/* SPDX-License-Identifier: MIT */
#include "isolate.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Records and plugin output are bounded: a plugin that spams cannot exhaust memory. */
#define MAX_RECORD_BYTES (64u << 20)
#define MAX_OUTPUT_BYTES (64u << 10)

static char *shared_call; /* the page shared with the parent, in the child */

void cq_isolate_calling(const char *what)
{
	if (!shared_call)
		return;
	if (!what) {
		shared_call[0] = 0;
		return;
	}
	/* Written while the parent may read: keep it terminated at every moment. */
	shared_call[0] = 0;
	strncpy(shared_call + 1, what, 254);
	shared_call[255] = 0;
	__atomic_store_n(&shared_call[0], what[0] ? what[0] : ' ', __ATOMIC_RELEASE);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

struct sink {
	char *buf;
	size_t len, cap, limit;
	bool truncated;
};

static void sink_add(struct sink *s, const char *p, size_t n)
{
	if (s->len + n > s->limit) {
		n = s->limit > s->len ? s->limit - s->len : 0;
		s->truncated = true;
	}
	if (s->len + n + 1 > s->cap) {
		size_t cap = s->cap ? s->cap : 4096;
		while (cap < s->len + n + 1)
			cap *= 2;
		char *b = realloc(s->buf, cap);
		if (!b) {
			s->truncated = true;
			return;
		}
		s->buf = b;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, p, n);
	s->len += n;
	s->buf[s->len] = 0;
}

static void child(cq_isolate_fn fn, void *arg, int rec_fd, int out_fd)
{
	/* A fatal signal of the foreign code must end the child as that signal, whatever
	 * handlers the host installed (a sanitizer runtime, say). */
	static const int fatal[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGTRAP};
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		signal(fatal[i], SIG_DFL);
	/* Everything the foreign code prints goes to the capture pipe, never to our
	 * stdout; stdin is closed so nothing can wait on it. */
	dup2(out_fd, STDOUT_FILENO);
	dup2(out_fd, STDERR_FILENO);
	close(out_fd);
	int null = open("/dev/null", O_RDONLY);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		close(null);
	}
	FILE *out = fdopen(rec_fd, "w");
	if (!out)
		_exit(125);
	int rc = fn(arg, out);
	cq_isolate_calling(NULL); /* returned normally: no foreign call in progress */
	fflush(NULL); /* _exit does not flush: keep what the plugin printed */
	_exit(rc);
}

struct cq_error *cq_isolate_run(cq_isolate_fn fn, void *arg, unsigned timeout_ms,
				struct cq_isolate_result *ret)
{
	memset(ret, 0, sizeof(*ret));
	char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return cq_error_errno(errno, "isolation: shared page");
	page[0] = 0;
	int rec[2], outp[2];
	if (pipe2(rec, O_CLOEXEC) < 0) {
		munmap(page, 4096);
		return cq_error_errno(errno, "isolation: pipe");
	}
	if (pipe2(outp, O_CLOEXEC) < 0) {
		close(rec[0]);
		close(rec[1]);
		munmap(page, 4096);
		return cq_error_errno(errno, "isolation: pipe");
	}
	fflush(stdout);
	fflush(stderr);
	double start = now();
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(rec[0]);
		close(rec[1]);
		close(outp[0]);
		close(outp[1]);
		munmap(page, 4096);
		return cq_error_errno(e, "isolation: fork");
	}
	if (pid == 0) {
		close(rec[0]);
		close(outp[0]);
		shared_call = page;
		child(fn, arg, rec[1], outp[1]);
	}
	close(rec[1]);
	close(outp[1]);
	struct sink records = {.limit = MAX_RECORD_BYTES}, output = {.limit = MAX_OUTPUT_BYTES};
	struct pollfd fds[2] = {{rec[0], POLLIN, 0}, {outp[0], POLLIN, 0}};
	int open_fds = 2;
	bool timed_out = false;
	char buf[65536];
	while (open_fds > 0) {
		int wait_ms = -1;
		if (timeout_ms) {
			double left = timeout_ms / 1000.0 - (now() - start);
			if (left <= 0) {
				timed_out = true;
				break;
			}
			wait_ms = (int)(left * 1000) + 1;
		}
		int n = poll(fds, 2, wait_ms);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		for (int i = 0; i < 2; i++) {
			if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			ssize_t k = read(fds[i].fd, buf, sizeof(buf));
			if (k <= 0) {
				close(fds[i].fd);
				fds[i].fd = -1;
				open_fds--;
				continue;
			}
			sink_add(i == 0 ? &records : &output, buf, (size_t)k);
		}
	}
	if (timed_out)
		kill(pid, SIGKILL);
	for (int i = 0; i < 2; i++)
		if (fds[i].fd >= 0)
			close(fds[i].fd);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	ret->seconds = now() - start;
	if (page[0])
		memcpy(ret->call, page + 1, sizeof(ret->call) - 1);
	munmap(page, 4096);
	if (timed_out) {
		ret->end = CQ_ISOLATE_TIMEOUT;
		ret->status = (int)(timeout_ms / 1000);
	} else if (WIFSIGNALED(status)) {
		ret->end = CQ_ISOLATE_SIGNAL;
		ret->status = WTERMSIG(status);
	} else {
		ret->status = WEXITSTATUS(status);
		ret->end = ret->status == 0 ? CQ_ISOLATE_OK : CQ_ISOLATE_EXIT;
	}
	/* Keep complete lines only: a record cut by a crash is not half-parsed. */
	for (char *p = records.buf; p && *p;) {
		char *nl = strchr(p, '\n');
		if (!nl)
			break;
		*nl = 0;
		char **r = realloc(ret->records, (ret->nrecords + 1) * sizeof(*r));
		if (!r)
			break;
		ret->records = r;
		if (!(r[ret->nrecords] = strdup(p)))
			break;
		ret->nrecords++;
		p = nl + 1;
	}
	free(records.buf);
	ret->output = output.buf;
	return NULL;
}

void cq_isolate_result_deinit(struct cq_isolate_result *r)
{
	for (size_t i = 0; i < r->nrecords; i++)
		free(r->records[i]);
	free(r->records);
	free(r->output);
	memset(r, 0, sizeof(*r));
}

char *cq_isolate_describe(const struct cq_isolate_result *r)
{
	char *s = NULL;
	const char *in = r->call[0] ? " in " : "";
	int n = -1;
	switch (r->end) {
	case CQ_ISOLATE_OK:
		n = asprintf(&s, "completed");
		break;
	case CQ_ISOLATE_EXIT:
		n = asprintf(&s, "exited with status %d%s%s", r->status, in, r->call);
		break;
	case CQ_ISOLATE_SIGNAL:
		n = sigabbrev_np(r->status) ?
			asprintf(&s, "killed by SIG%s%s%s", sigabbrev_np(r->status), in, r->call) :
			asprintf(&s, "killed by signal %d%s%s", r->status, in, r->call);
		break;
	case CQ_ISOLATE_TIMEOUT:
		n = asprintf(&s, "no answer within %d s%s%s (killed)", r->status, in, r->call);
		break;
	}
	return n < 0 ? NULL : s;
}

struct retry {
	cq_isolate_retry_fn fn;
	void *arg;
	const struct cq_isolate_deaths *deaths;
};

static int run_retry(void *arg, FILE *out)
{
	const struct retry *r = arg;
	return r->fn(r->arg, r->deaths, out);
}

struct cq_error *cq_isolate_run_retrying(cq_isolate_retry_fn fn, void *arg, unsigned timeout_ms,
					 struct cq_isolate_result *ret,
					 struct cq_isolate_deaths *deaths)
{
	memset(deaths, 0, sizeof(*deaths));
	struct retry r = {fn, arg, deaths};
	for (unsigned run = 0;; run++) {
		struct cq_error *err = cq_isolate_run(run_retry, &r, timeout_ms, ret);
		if (err) {
			cq_isolate_deaths_deinit(deaths);
			return err;
		}
		/* an exit with a foreign call in progress is the foreign code calling exit() */
		bool died = ret->end == CQ_ISOLATE_SIGNAL || ret->end == CQ_ISOLATE_TIMEOUT ||
			    (ret->end == CQ_ISOLATE_EXIT && ret->call[0]);
		if (!died || !ret->call[0] || run + 1 >= CQ_ISOLATE_MAX_RUNS ||
		    (ret->end == CQ_ISOLATE_TIMEOUT && run >= 1))
			return NULL;
		char *call = strdup(ret->call), *how = cq_isolate_describe(ret);
		if (!call || !how) {
			free(call);
			free(how);
			return NULL; /* keep this run's result */
		}
		deaths->call[deaths->n] = call;
		deaths->how[deaths->n++] = how;
		cq_isolate_result_deinit(ret);
	}
}

void cq_isolate_deaths_deinit(struct cq_isolate_deaths *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->call[i]);
		free(d->how[i]);
	}
	d->n = 0;
}

bool cq_isolate_calling_unless_died(const struct cq_isolate_deaths *skip, const char *call)
{
	for (size_t i = 0; skip && i < skip->n; i++)
		if (strcmp(skip->call[i], call) == 0)
			return true;
	cq_isolate_calling(call);
	return false;
}

void cq_isolate_record(FILE *out, const char *text)
{
	if (text)
		fputs(text, out);
	fputc('\n', out);
	fflush(out);
}
