/* SPDX-License-Identifier: MIT */
/* Documents and graphs the job commands read and write (cli.h): per-process JSON given by
 * the user, DOT and SVG outputs. */
#include "cli.h" /* first: signal.h defines si_addr, a member name in corelib/core.h */
#include "input/file.h"
#include "output/output.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

bool cq_is_json_input(const char *path)
{
	size_t n = strlen(path);
	return n > 5 && strcmp(path + n - 5, ".json") == 0;
}

json_t *cq_load_doc(const char *path, char **why_ret)
{
	int fd;
	struct stat st;
	json_error_t jerr;
	*why_ret = NULL;
	struct cq_error *err = cq_open_regular(path, NULL, &fd);
	if (err) {
		*why_ret = strdup(err->message);
		cq_error_destroy(err);
		return NULL;
	}
	json_t *doc = NULL;
	if (fstat(fd, &st) == 0 && (uint64_t)st.st_size > MAX_DOC_BYTES) {
		if (asprintf(why_ret, "%s: %lld bytes, more than a per-rank document can be (%u MiB): not read", path,
			     (long long)st.st_size, MAX_DOC_BYTES >> 20) < 0)
			*why_ret = NULL;
	} else {
		/* read whole, then parsed: json_loadfd reads one byte per system call (5,000 per
		 * bt document: most of merging a thousand of them) */
		size_t cap = (size_t)st.st_size + 1, len = 0;
		char *text = malloc(cap);
		ssize_t n = 0;
		while (text && (n = read(fd, text + len, cap - len)) != 0) {
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				break;
			len += (size_t)n;
			if (len == cap) { /* grew since fstat: read on, within the bound */
				char *t = cap <= MAX_DOC_BYTES ? realloc(text, cap * 2) : NULL;
				if (!t)
					break;
				text = t;
				cap *= 2;
			}
		}
		if (!text || n < 0 || len > MAX_DOC_BYTES) {
			if (asprintf(why_ret, "%s: cannot read it whole (%s)", path,
				     !text ? "out of memory" : n < 0 ? strerror(errno) : "more than the bound") < 0)
				*why_ret = NULL;
		} else if (!(doc = json_loadb(text, len, 0, &jerr))) {
			if (asprintf(why_ret, "%s: not JSON (line %d: %s)", path, jerr.line, jerr.text) < 0)
				*why_ret = NULL;
		}
		free(text);
	}
	close(fd);
	return doc;
}

/* graphviz's dot lays out a large graph in minutes (a 2 MB stack tree: over two): it runs
 * bounded, and a picture not made in time is said, not waited for. */
#define SVG_TIMEOUT_S 60

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Render DOT @p text as SVG into @p fd with graphviz's dot, run directly (no shell: the
 * output name never reaches a command line), within @p limit_s seconds for writing its
 * input and its run (killed after). CQ_EXIT_OK, or why not on stderr. */
static int render_svg(const char *text, int fd, const char *svg, unsigned limit_s)
{
	int in[2];
	if (pipe2(in, O_CLOEXEC) != 0) {
		fprintf(stderr, "coreq: no SVG: %s\n", strerror(errno));
		return CQ_EXIT_INTERNAL;
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, fd, 1);
	char *argv[] = {"dot", "-Tsvg", NULL};
	extern char **environ;
	pid_t pid;
	int e = posix_spawnp(&pid, "dot", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(in[0]);
	if (e) {
		close(in[1]);
		if (e == ENOENT) {
			fprintf(stderr, "coreq: no SVG: graphviz's dot is not installed (apt-get install graphviz); the DOT text is in --dot\n");
			return CQ_EXIT_PARTIAL;
		}
		fprintf(stderr, "coreq: no SVG: cannot run dot: %s\n", strerror(e));
		return CQ_EXIT_INTERNAL;
	}
	double deadline = now_s() + limit_s;
	size_t len = strlen(text), off = 0;
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);
	/* non-blocking: a dot that stops reading must not hold coreq past the limit */
	(void)fcntl(in[1], F_SETFL, O_NONBLOCK);
	while (off < len && now_s() < deadline) {
		struct pollfd p = {.fd = in[1], .events = POLLOUT};
		if (poll(&p, 1, 100) <= 0)
			continue;
		ssize_t n = write(in[1], text + off, len - off);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	close(in[1]);
	signal(SIGPIPE, old);
	int status = 0;
	pid_t w;
	while ((w = waitpid(pid, &status, WNOHANG)) == 0 && now_s() < deadline) {
		struct timespec ms10 = {0, 10 * 1000 * 1000};
		nanosleep(&ms10, NULL);
	}
	if (w == 0) {
		kill(pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		fprintf(stderr, "coreq: no SVG: dot took longer than %u s on this graph (%zu bytes of DOT) and was stopped; the DOT text is in --dot (--svg-timeout SECS)\n",
			limit_s, len);
		return CQ_EXIT_PARTIAL;
	}
	if (off < len || w < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "coreq: dot -Tsvg failed for %s\n", svg);
		return CQ_EXIT_IO;
	}
	return CQ_EXIT_OK;
}

int cq_write_graph(struct cq_cli *cli, char *text)
{
	const char *dot = cli->dot, *svg = cli->svg;
	if (!text)
		return CQ_EXIT_INTERNAL;
	const char **inputs = calloc((size_t)cli->nargs + 66, sizeof(char *));
	char *donors = cli->opts.type_donors ? strdup(cli->opts.type_donors) : NULL;
	size_t n = 0;
	if (!inputs) {
		free(text);
		free(donors);
		return CQ_EXIT_INTERNAL;
	}
	for (int i = 0; i < cli->nargs; i++)
		inputs[n++] = cli->args[i];
	inputs[n++] = cli->opts.exe;
	for (char *save = NULL, *d = donors ? strtok_r(donors, ":", &save) : NULL; d && n < (size_t)cli->nargs + 65;
	     d = strtok_r(NULL, ":", &save))
		inputs[n++] = d;
	int rc = CQ_EXIT_OK;
	for (int g = 0; g < 2; g++) {
		const char *path = g ? svg : dot;
		if (!path)
			continue;
		struct cq_output out;
		struct cq_error *err = cq_output_begin(path, g ? "--svg" : "--dot", inputs, n, &out);
		int grc = CQ_EXIT_OK;
		if (err) {
			grc = err->code == CQ_ERR_USAGE ? CQ_EXIT_USAGE : CQ_EXIT_IO;
			fprintf(stderr, "coreq: %s\n", cq_esc(err->message));
			cq_error_destroy(err);
		} else {
			if (g) {
				grc = render_svg(text, out.fd, svg, cli->svg_timeout_s ? cli->svg_timeout_s : SVG_TIMEOUT_S);
			} else {
				if ((err = cq_output_write(&out, text, strlen(text)))) {
					fprintf(stderr, "coreq: %s\n", cq_esc(err->message));
					cq_error_destroy(err);
					grc = CQ_EXIT_IO;
				}
			}
			if (grc == CQ_EXIT_OK) {
				if ((err = cq_output_commit(&out))) {
					fprintf(stderr, "coreq: %s\n", cq_esc(err->message));
					cq_error_destroy(err);
					grc = CQ_EXIT_IO;
				}
			} else {
				cq_output_abort(&out);
			}
		}
		if (grc > rc)
			rc = grc;
	}
	free(inputs);
	free(donors);
	free(text);
	return rc;
}
