/* SPDX-License-Identifier: MIT */
/* Output files written beside their final name and renamed into place (output.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output.h"

bool cq_same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	return a && b && stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

struct cq_error *cq_output_begin(const char *path, const char *what, const char *const *inputs,
				 size_t ninputs, struct cq_output *ret)
{
	return cq_output_begin_mode(path, what, inputs, ninputs, 0666, ret);
}

struct cq_error *cq_output_begin_mode(const char *path, const char *what, const char *const *inputs,
				      size_t ninputs, mode_t mode, struct cq_output *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->fd = -1;
	what = what ? what : "output";
	for (size_t i = 0; i < ninputs; i++)
		if (cq_same_file(path, inputs[i]))
			return cq_error_create(CQ_ERR_USAGE, "%s %s is an input file (%s): write it elsewhere", what, path,
					       inputs[i]);
	struct stat st;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return cq_error_create(CQ_ERR_USAGE, "%s %s exists and is not a regular file: write it elsewhere", what,
				       path);
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path) + 1 : 0;
	const char *base = slash ? slash + 1 : path;
	if (!*base)
		return cq_error_create(CQ_ERR_USAGE, "%s %s names a directory, not a file", what, path);
	/* A dot name in the same directory: rename() stays within one file system, and the
	 * name is new (O_EXCL), so nothing planted there is followed or overwritten. */
	if (asprintf(&ret->tmp, "%.*s.%s.tmp-XXXXXX", dirlen, path, base) < 0) {
		ret->tmp = NULL;
		return &cq_error_nomem;
	}
	ret->fd = mkostemp(ret->tmp, O_CLOEXEC);
	if (ret->fd < 0) {
		struct cq_error *err = cq_error_errno(errno, "%s %s: cannot create a temporary file beside it", what, path);
		free(ret->tmp);
		ret->tmp = NULL;
		return err;
	}
	/* mkostemp makes it 0600: give the output the mode a plain creat() with @p mode would
	 * (never wider than 0600 while it is written, so never wider than asked) */
	mode_t mask = umask(0);
	umask(mask);
	(void)fchmod(ret->fd, mode & 0666 & ~mask);
	if (!(ret->path = strdup(path))) {
		cq_output_abort(ret);
		return &cq_error_nomem;
	}
	return NULL;
}

void cq_output_abort(struct cq_output *o)
{
	if (o->fd >= 0)
		close(o->fd);
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	free(o->path);
	memset(o, 0, sizeof(*o));
	o->fd = -1;
}

struct cq_error *cq_output_write(struct cq_output *o, const void *p, size_t n)
{
	const char *c = p;
	for (size_t done = 0; done < n;) {
		ssize_t w = write(o->fd, c + done, n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return cq_error_errno(w < 0 ? errno : EIO, "cannot write %s", o->path);
		done += (size_t)w;
	}
	return NULL;
}

struct cq_error *cq_output_commit(struct cq_output *o)
{
	struct cq_error *err = NULL;
	int fd = o->fd;
	o->fd = -1;
	if (fd >= 0 && close(fd) != 0)
		err = cq_error_errno(errno, "writing %s", o->path);
	if (!err && rename(o->tmp, o->path) != 0)
		err = cq_error_errno(errno, "renaming %s to %s", o->tmp, o->path);
	if (!err) {
		free(o->tmp);
		o->tmp = NULL; /* renamed: nothing to remove */
	}
	cq_output_abort(o);
	return err;
}
