/* SPDX-License-Identifier: MIT */
/* The per-process worker pool (pool.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pool.h"

json_t *cq_pool_run(int n, const bool *wanted, int workers, cq_pool_fn fn, void *arg, const char *what,
		    const char *unit)
{
	char dir[] = "/tmp/coreq-job-XXXXXX";
	int todo[2], done[2];
	json_t *docs = json_array();
	if (!docs || !mkdtemp(dir)) {
		json_decref(docs);
		return NULL;
	}
	if (pipe(todo)) {
		rmdir(dir);
		json_decref(docs);
		return NULL;
	}
	if (pipe(done)) {
		close(todo[0]);
		close(todo[1]);
		rmdir(dir);
		json_decref(docs);
		return NULL;
	}
	int total = 0;
	for (int i = 0; i < n; i++)
		total += wanted[i];
	if (workers > total)
		workers = total;
	fflush(NULL); /* nothing buffered is written twice by the children */
	for (int w = 0; w < workers; w++) {
		pid_t pid = fork();
		if (pid == 0) {
			close(todo[1]);
			close(done[0]);
			int i;
			while (read(todo[0], &i, sizeof(i)) == (ssize_t)sizeof(i)) {
				json_t *doc = fn(arg, i);
				char path[64];
				snprintf(path, sizeof(path), "%s/%d.json", dir, i);
				if (doc)
					json_dump_file(doc, path, JSON_COMPACT);
				json_decref(doc);
				char b = 1;
				if (write(done[1], &b, 1) < 0)
					_exit(1);
			}
			_exit(0);
		}
	}
	/* the indices after the workers start: more than a pipe holds would block otherwise */
	for (int i = 0; i < n; i++)
		if (wanted[i] && write(todo[1], &i, sizeof(i)) != (ssize_t)sizeof(i))
			break;
	close(todo[1]);
	close(todo[0]);
	close(done[1]);
	bool tty = isatty(2);
	char b;
	for (int finished = 0; read(done[0], &b, 1) == 1;) {
		finished++;
		if (tty)
			fprintf(stderr, "\r%s: %d/%d %s", what, finished, total, unit);
	}
	if (tty && total)
		fputc('\n', stderr);
	close(done[0]);
	while (wait(NULL) > 0 || errno == EINTR)
		;
	for (int i = 0; i < n; i++) {
		json_t *doc = NULL;
		if (wanted[i]) {
			char path[64];
			json_error_t jerr;
			snprintf(path, sizeof(path), "%s/%d.json", dir, i);
			doc = json_load_file(path, 0, &jerr);
			unlink(path);
		}
		json_array_append_new(docs, doc ? doc : json_null());
	}
	rmdir(dir);
	return docs;
}
