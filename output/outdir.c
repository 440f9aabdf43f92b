/* SPDX-License-Identifier: MIT */
/* Directories written into, checked on their descriptors (outdir.h). */
#include "outdir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* @p fd (named @p shown) is a directory of the user's, else why not. */
static struct cq_error *check_dir(int fd, const char *shown)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return cq_error_errno(errno, "-o %s", shown);
	if (!S_ISDIR(st.st_mode))
		return cq_error_create(CQ_ERR_USAGE, "-o %s: not a directory", shown);
	if (st.st_uid != geteuid())
		return cq_error_create(CQ_ERR_USAGE, "-o %s: a directory of uid %u, not yours (uid %u): what is planted in "
				       "it would be followed; give a directory of your own", shown, (unsigned)st.st_uid,
				       (unsigned)geteuid());
	return NULL;
}

static struct cq_error *finish(int fd, const char *shown, struct cq_outdir *ret)
{
	struct cq_error *err = check_dir(fd, shown);
	if (!err && !(ret->display = strdup(shown)))
		err = &cq_error_nomem;
	if (err) {
		close(fd);
		return err;
	}
	ret->fd = fd;
	return NULL;
}

struct cq_error *cq_outdir_open(const char *path, struct cq_outdir *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->fd = -1;
	if (mkdir(path, 0700) != 0 && errno != EEXIST)
		return cq_error_errno(errno, "-o %s: cannot make the directory", path);
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ELOOP) {
		/* a symlink: only the user's own, to a directory of the user's (checked on the
		 * descriptor the link led to) */
		struct stat ls;
		if (lstat(path, &ls) != 0 || ls.st_uid != geteuid())
			return cq_error_create(CQ_ERR_USAGE, "-o %s: a symlink of uid %u, not yours: not followed", path,
					       (unsigned)ls.st_uid);
		fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (fd < 0)
		return errno == ENOTDIR ? cq_error_create(CQ_ERR_USAGE, "-o %s: not a directory", path)
					: cq_error_errno(errno, "-o %s", path);
	return finish(fd, path, ret);
}

struct cq_error *cq_outdir_sub(const struct cq_outdir *dir, const char *name, struct cq_outdir *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->fd = -1;
	char shown[4096];
	snprintf(shown, sizeof(shown), "%s/%s", dir->display, name);
	if (mkdirat(dir->fd, name, 0700) != 0 && errno != EEXIST)
		return cq_error_errno(errno, "-o %s: cannot make the directory", shown);
	/* O_NOFOLLOW with O_DIRECTORY says ENOTDIR of a symlink: tell it apart first */
	struct stat ls;
	if (fstatat(dir->fd, name, &ls, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(ls.st_mode))
		return cq_error_create(CQ_ERR_USAGE, "-o %s: a symlink: not followed (remove it)", shown);
	int fd = openat(dir->fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ELOOP ? cq_error_create(CQ_ERR_USAGE, "-o %s: a symlink: not followed (remove it)", shown)
		       : errno == ENOTDIR ? cq_error_create(CQ_ERR_USAGE, "-o %s: not a directory", shown)
					  : cq_error_errno(errno, "-o %s", shown);
	return finish(fd, shown, ret);
}

void cq_outdir_file(const struct cq_outdir *dir, const char *name, char *buf, size_t n, char *shown, size_t nshown)
{
	snprintf(buf, n, "/proc/self/fd/%d/%s", dir->fd, name);
	snprintf(shown, nshown, "%s/%s", dir->display, name);
}

void cq_outdir_close(struct cq_outdir *dir)
{
	if (dir->fd >= 0)
		close(dir->fd);
	free(dir->display);
	dir->fd = -1;
	dir->display = NULL;
}
