/* SPDX-License-Identifier: MIT */
/* Files fetched by build-id through libdebuginfod (debuginfod.h). */
#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cq_libdebuginfod_path.h" /* CQ_LIBDEBUGINFOD_PATH, written by the Makefile */
#include "debuginfod.h"
#include "base/decode.h"
#include "plugin/plugin_load.h"
#include "base/text.h"

static struct {
	debuginfod_client *(*begin)(void);
	int (*find_debuginfo)(debuginfod_client *, const unsigned char *, int, char **);
	int (*find_executable)(debuginfod_client *, const unsigned char *, int, char **);
	void (*set_progressfn)(debuginfod_client *, debuginfod_progressfn_t);
	void (*set_verbose_fd)(debuginfod_client *, int);
	const char *(*get_url)(debuginfod_client *);
} api;
static debuginfod_client *client;
static char load_why[1024];

/* One request at a time: a client is not to be used by two threads at once, and the
 * progress state below belongs to the request under way. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char failed[600]; /* set after a failure that is not a miss: no server asked again */
static struct {
	const char *what;
	struct timespec start;
	long maxsize;      /* 0: libdebuginfod's own (DEBUGINFOD_MAXSIZE set) */
	long maxtime;      /* seconds, likewise */
	bool tty, shown;
	char abort[200];   /* why the progress function stopped the transfer */
} cur;

const char *cq__debuginfod_urls(void)
{
	const char *u = getenv(DEBUGINFOD_URLS_ENV_VAR);
	return u ? u : "";
}

bool cq__debuginfod_enabled(void)
{
	const char *u = cq__debuginfod_urls();
	return u[strspn(u, " \t\n")] != 0;
}

/* libdebuginfod's progress callback: coreq's bounds, and progress on a terminal. */
static int progress(debuginfod_client *c, long got, long total)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	double secs = (double)(now.tv_sec - cur.start.tv_sec) + (now.tv_nsec - cur.start.tv_nsec) / 1e9;
	if (cur.maxtime && secs >= (double)cur.maxtime) {
		snprintf(cur.abort, sizeof(cur.abort),
			 "no complete answer within %ld s (DEBUGINFOD_MAXTIME sets another bound)", cur.maxtime);
		return 1;
	}
	if (cur.maxsize && (got > cur.maxsize || total > cur.maxsize)) {
		snprintf(cur.abort, sizeof(cur.abort),
			 "the file is larger than %ld MiB (DEBUGINFOD_MAXSIZE sets another bound)",
			 cur.maxsize >> 20);
		return 1;
	}
	if (cur.tty) {
		if (total > 0)
			fprintf(stderr, "\rcoreq: fetching %s from debuginfod: %ld/%ld KiB\033[K", cur.what,
				got >> 10, total >> 10);
		else
			fprintf(stderr, "\rcoreq: fetching %s from debuginfod: %ld KiB\033[K", cur.what, got >> 10);
		cur.shown = true;
	}
	return 0;
}

static void load(void)
{
	/* the path is coreq's own (fixed at build time), as for libbfd (bfd_lib.c); its
	 * dependencies (libcurl and what it needs) are checked and loaded by coreq */
	char lwhy[512];
	void *h = cq_plugin_load_fixed(CQ_LIBDEBUGINFOD_PATH, lwhy, sizeof(lwhy));
	if (!h) {
		snprintf(load_why, sizeof(load_why), "libdebuginfod (%s) cannot be loaded: %s",
			 CQ_LIBDEBUGINFOD_PATH, lwhy);
		return;
	}
#define SYM(var, name)                                                                     \
	if (!(*(void **)&api.var = dlsym(h, name))) {                                     \
		snprintf(load_why, sizeof(load_why), "libdebuginfod (%s) has no " name,  \
			 CQ_LIBDEBUGINFOD_PATH);                                          \
		return;                                                                   \
	}
	SYM(begin, "debuginfod_begin");
	SYM(find_debuginfo, "debuginfod_find_debuginfo");
	SYM(find_executable, "debuginfod_find_executable");
	SYM(set_progressfn, "debuginfod_set_progressfn");
	SYM(get_url, "debuginfod_get_url");
	SYM(set_verbose_fd, "debuginfod_set_verbose_fd");
#undef SYM
	if (!(client = api.begin())) {
		snprintf(load_why, sizeof(load_why), "libdebuginfod: debuginfod_begin failed");
		return;
	}
	api.set_progressfn(client, progress);
	/* libdebuginfod 0.188 writes some messages with dprintf() to its verbose descriptor
	 * even when there is none (-1: a transfer over DEBUGINFOD_MAXTIME), and glibc's
	 * dprintf leaks its buffer on a bad descriptor: unless the user asked for its
	 * messages (DEBUGINFOD_VERBOSE), they go nowhere, through a descriptor that works */
	if (!getenv(DEBUGINFOD_VERBOSE_ENV_VAR)) {
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (null >= 0)
			api.set_verbose_fd(client, null);
	}
}

/* A bound from the environment is libdebuginfod's business; coreq's applies otherwise. */
static long bound(const char *var, long dflt)
{
	return getenv(var) ? 0 : dflt;
}

void cq__debuginfod_file_deinit(struct cq_debuginfod_file *f)
{
	free(f->path);
	free(f->origin);
	cq_elf_close(f->elf);
	memset(f, 0, sizeof(*f));
}

/* Open what the server sent and check that it is what was asked for. */
static char *verify(const char *path, const char *origin, const uint8_t *bid, size_t len,
		    struct cq_elf **ret)
{
	char *why = NULL;
	struct cq_elf *e = NULL;
	struct cq_error *err = cq_elf_open(path, &e);
	if (err) {
		if (asprintf(&why, "%s sent %s: %s: not used", origin, path, err->message) < 0)
			why = NULL;
		cq_error_destroy(err);
		return why ? why : strdup("debuginfod sent an unusable file");
	}
	if (e->build_id_len != len || memcmp(e->build_id, bid, len) != 0) {
		char *have = cq_hex_string(e->build_id, e->build_id_len), *want = cq_hex_string(bid, len);
		if (asprintf(&why, "%s sent %s with build-id %s, not the %s asked for: not used", origin,
			     path, have && *have ? have : "(none)", want ? want : "?") < 0)
			why = NULL;
		free(have);
		free(want);
		cq_elf_close(e);
		return why ? why : strdup("debuginfod sent a file with another build-id");
	}
	*ret = e;
	return NULL;
}

/* The cache directory libdebuginfod 0.188 uses (debuginfod-client.c): DEBUGINFOD_CACHE_PATH,
 * else ~/.cache/debuginfod_client if it exists, else XDG_CACHE_HOME's (or ~/.cache's)
 * debuginfod_client. NULL when out of memory. */
static char *cache_dir(void)
{
	const char *env = getenv(DEBUGINFOD_CACHE_PATH_ENV_VAR), *home = getenv("HOME"), *xdg = getenv("XDG_CACHE_HOME");
	char *dir = NULL;
	struct stat st;
	if (env && *env)
		return strdup(env);
	if (asprintf(&dir, "%s/.cache/debuginfod_client", home ? home : "/") < 0)
		return NULL;
	if (stat(dir, &st) == 0 || !xdg || !*xdg)
		return dir;
	free(dir);
	return asprintf(&dir, "%s/debuginfod_client", xdg) < 0 ? NULL : dir;
}

/* Remove @p path, a file libdebuginfod put in its cache that coreq refused: only a regular
 * file (not followed through a link) below the cache directory. */
static void forget(const char *path)
{
	char *dir = cache_dir();
	size_t n = dir ? strlen(dir) : 0;
	struct stat st;
	if (n && !strncmp(path, dir, n) && path[n] == '/' && !strstr(path + n, "/../") && lstat(path, &st) == 0 &&
	    S_ISREG(st.st_mode))
		unlink(path);
	free(dir);
}

/* Held while libdebuginfod looks a file up: coreq's processes that share a cache (`coreq
 * mqd`'s workers, one per rank) take turns. libdebuginfod 0.188 run by two processes at
 * once on one cache lost a file now and then: one process answered "not found" for a file
 * the other was downloading (1 run in 30 of two workers, each rank's libmpi). -1 when no
 * lock could be had: the lookup runs as it would without. */
static int cache_lock(void)
{
	char *dir = cache_dir(), *path = NULL;
	if (!dir)
		return -1;
	(void)mkdir(dir, 0700); /* as libdebuginfod makes it */
	int fd = asprintf(&path, "%s/.coreq-fetch.lock", dir) < 0 ? -1 :
		 open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	free(path);
	free(dir);
	if (fd >= 0 && flock(fd, LOCK_EX) != 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

enum cq_debuginfod_result cq__debuginfod_fetch(enum cq_debuginfod_kind kind, const uint8_t *build_id,
					       size_t len, const char *what,
					       struct cq_debuginfod_file *ret, char **why_ret)
{
	memset(ret, 0, sizeof(*ret));
	*why_ret = NULL;
	if (!cq__debuginfod_enabled())
		return CQ_DEBUGINFOD_OFF;
	if (len < 2 || len > 64) {
		*why_ret = strdup("no build-id to ask debuginfod for");
		return CQ_DEBUGINFOD_NOT_FOUND;
	}
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, load);
	if (!client) {
		*why_ret = strdup(load_why);
		return CQ_DEBUGINFOD_FAILED;
	}
	pthread_mutex_lock(&lock);
	enum cq_debuginfod_result res;
	if (failed[0]) {
		/* the first file's problem has the reason */
		*why_ret = strdup("debuginfod not asked: it failed for an earlier file");
		res = CQ_DEBUGINFOD_SKIPPED;
		goto out;
	}
	/* an image's name comes from the core: escaped before it reaches a terminal */
	char *shown = cq_text_escape(what);
	cur.what = shown ? shown : "a file";
	clock_gettime(CLOCK_MONOTONIC, &cur.start);
	cur.maxsize = bound(DEBUGINFOD_MAXSIZE_ENV_VAR, CQ_DEBUGINFOD_MAXSIZE);
	cur.maxtime = bound(DEBUGINFOD_MAXTIME_ENV_VAR, CQ_DEBUGINFOD_MAXTIME);
	cur.tty = isatty(STDERR_FILENO);
	cur.shown = false;
	cur.abort[0] = 0;
	char *path = NULL;
	int held = cache_lock();
	int fd = (kind == CQ_DEBUGINFOD_DEBUGINFO ? api.find_debuginfo : api.find_executable)(
		client, build_id, (int)len, &path);
	if (held >= 0)
		close(held); /* the file is in the cache now, or known missing */
	if (cur.shown)
		fprintf(stderr, "\r\033[K"); /* the progress line, gone: the report says what came */
	free(shown);
	cur.what = NULL;
	const char *url = api.get_url(client);
	char *origin = NULL;
	if (fd >= 0) {
		close(fd); /* the file is opened again by path, as any other (cq_elf_open) */
		if (asprintf(&origin, "debuginfod %s", url ? url : "cache") < 0)
			origin = NULL;
		char *why = origin && path ? verify(path, origin, build_id, len, &ret->elf) : strdup("out of memory");
		if (why) {
			/* a server that sent the wrong file (another build-id, no ELF, a bomb) is not
			 * asked again (each answer may take minutes and a gigabyte), and what it sent
			 * leaves the cache, where later runs would take it without asking an honest
			 * server */
			if (path)
				forget(path);
			snprintf(failed, sizeof(failed), "%s; not asked again", why);
			*why_ret = why;
			free(path);
			free(origin);
			res = CQ_DEBUGINFOD_FAILED;
			goto out;
		}
		ret->path = path;
		ret->origin = origin;
		res = CQ_DEBUGINFOD_FETCHED;
		goto out;
	}
	free(path);
	const char *urls = cq__debuginfod_urls();
	if (fd == -ENOENT && !cur.abort[0]) {
		if (asprintf(why_ret, "not on debuginfod (%s)", urls) < 0)
			*why_ret = NULL;
		res = CQ_DEBUGINFOD_NOT_FOUND;
		goto out;
	}
	const char *reason = cur.abort[0] ? cur.abort :
			     fd == -ETIME ? "no complete answer within DEBUGINFOD_MAXTIME" :
			     fd == -EFBIG ? "the file is larger than DEBUGINFOD_MAXSIZE" : strerror(-fd);
	snprintf(failed, sizeof(failed), "debuginfod (%s): %s; not asked again", urls, reason);
	*why_ret = strdup(failed);
	res = CQ_DEBUGINFOD_FAILED;
out:
	pthread_mutex_unlock(&lock);
	return res;
}
