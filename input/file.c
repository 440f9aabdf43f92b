/* SPDX-License-Identifier: MIT */
#include "file.h"
#include "decompress.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int make_temp_file(void)
{
	const char *dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	/* Filesystems without O_TMPFILE: create and unlink at once. */
	char *tmpl;
	if (asprintf(&tmpl, "%s/coreq-XXXXXX", dir) < 0)
		return -1;
	fd = mkostemp(tmpl, O_CLOEXEC);
	if (fd >= 0)
		unlink(tmpl);
	free(tmpl);
	return fd;
}

static const char *file_kind(mode_t m)
{
	return S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device" :
	       S_ISSOCK(m) ? "a socket" : S_ISDIR(m) ? "a directory" : "not a plain file";
}

/* cq_open_regular(), and the opened file's status into *@p st_ret (its size and identity:
 * the caller needs no fstat of its own). */
static struct cq_error *open_regular(const char *path, const char *what, int *fd_ret, struct stat *st_ret)
{
	const char *sep = what && *what ? " " : "";
	what = what ? what : "";
	*fd_ret = -1;
	int pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return cq_error_errno(errno, "%s%s%s", what, sep, path);
	struct stat st;
	if (fstat(pfd, &st) < 0) {
		int e = errno;
		close(pfd);
		return cq_error_errno(e, "%s%s%s", what, sep, path);
	}
	if (!S_ISREG(st.st_mode)) {
		close(pfd);
		return cq_error_create(CQ_ERR_IO, "%s%s%s: not a regular file (%s)", what, sep, path, file_kind(st.st_mode));
	}
	/* "/proc/self/fd/N" without snprintf (its first call cost as much as the open) */
	char proc[32] = "/proc/self/fd/", digits[12];
	int nd = 0;
	for (unsigned v = (unsigned)pfd; nd == 0 || v; v /= 10)
		digits[nd++] = (char)('0' + v % 10);
	for (size_t k = strlen(proc); nd;)
		proc[k++] = digits[--nd], proc[k] = 0;
	int fd = open(proc, O_RDONLY | O_CLOEXEC);
	bool nonblock = false;
	if (fd < 0 && errno == ENOENT) {
		/* no /proc: O_NONBLOCK keeps a FIFO swapped in since the check from blocking */
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		nonblock = true;
	}
	int e = errno;
	close(pfd);
	if (fd < 0)
		return cq_error_errno(e, "%s%s%s", what, sep, path);
	if (fstat(fd, st_ret) < 0 || st_ret->st_dev != st.st_dev || st_ret->st_ino != st.st_ino ||
	    !S_ISREG(st_ret->st_mode)) {
		close(fd);
		return cq_error_create(CQ_ERR_IO, "%s%s%s changed while it was opened: not read", what, sep, path);
	}
	int fl = nonblock ? fcntl(fd, F_GETFL) : -1;
	if (fl >= 0 && (fl & O_NONBLOCK))
		(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	*fd_ret = fd;
	return NULL;
}

struct cq_error *cq_open_regular(const char *path, const char *what, int *fd_ret)
{
	struct stat st;
	return open_regular(path, what, fd_ret, &st);
}

/* An apport report's core into a temporary file, in place of the report; a text file
 * that turns out to be no report is left as it is. */
static struct cq_error *open_report(struct cq_file *f, uint64_t max_inflated)
{
	int tmp = make_temp_file(), scratch = tmp >= 0 ? make_temp_file() : -1;
	if (scratch < 0) {
		struct cq_error *err = cq_error_errno(errno, "%s: cannot create a temporary file to decode the "
						      "apport report into (set TMPDIR)", f->path);
		if (tmp >= 0)
			close(tmp);
		return err;
	}
	uint64_t size = 0;
	bool not_report;
	struct cq_apport *a = NULL;
	struct cq_error *err = cq_apport_extract(f->fd, scratch, tmp, f->path, max_inflated, &size, &not_report, &a);
	close(scratch);
	if (err || not_report) {
		close(tmp);
		/* no report: read from the start as what it is */
		if (!err && lseek(f->fd, 0, SEEK_SET) < 0)
			err = cq_error_errno(errno, "%s", f->path);
		return err;
	}
	close(f->fd);
	f->fd = tmp;
	f->size = size;
	f->compressed = true;
	f->apport = a;
	return NULL;
}

struct cq_error *cq_file_of_memory(uint8_t *buf, size_t size, const char *name, struct cq_file **ret)
{
	struct cq_file *f = calloc(1, sizeof(*f));
	if (!f || !(f->path = strdup(name))) {
		free(f);
		free(buf);
		return &cq_error_nomem;
	}
	f->fd = -1;
	f->mem = buf;
	f->size = size;
	*ret = f;
	return NULL;
}

/* Process-wide: set once by the tool before any input is opened (and inherited by the
 * worker processes it forks), read by every open that has no bound of its own. */
static uint64_t default_max_inflated = CQ_FILE_DEFAULT_MAX_INFLATED;

void cq_file_set_max_inflated(uint64_t max_inflated)
{
	default_max_inflated = max_inflated ? max_inflated : CQ_FILE_DEFAULT_MAX_INFLATED;
}

struct cq_error *cq_file_open(const char *path, uint64_t max_inflated, struct cq_file **ret)
{
	if (!max_inflated)
		max_inflated = default_max_inflated;
	int fd;
	struct stat st;
	struct cq_error *oerr = open_regular(path, NULL, &fd, &st);
	if (oerr)
		return oerr;
	struct cq_file *f = calloc(1, sizeof(*f));
	if (!f || !(f->path = strdup(path))) {
		free(f);
		close(fd);
		return &cq_error_nomem;
	}
	f->fd = fd;
	f->size = (uint64_t)st.st_size;
	f->dev = (uint64_t)st.st_dev;
	f->ino = (uint64_t)st.st_ino;
	unsigned char magic[CQ_APPORT_MAGIC];
	ssize_t nm = pread(fd, magic, sizeof(magic), 0);
	enum cq_compression comp = cq_compression_of(magic, nm > 0 ? (size_t)nm : 0);
	if (comp == CQ_COMPRESSION_NONE && cq_apport_maybe(magic, nm > 0 ? (size_t)nm : 0)) {
		struct cq_error *err = open_report(f, max_inflated);
		if (err) {
			cq_file_close(f);
			return err;
		}
	} else if (comp != CQ_COMPRESSION_NONE) {
		int tmp = make_temp_file();
		if (tmp < 0) {
			struct cq_error *err = cq_error_errno(errno, "%s: cannot create a temporary file to inflate into (set TMPDIR)", path);
			cq_file_close(f);
			return err;
		}
		uint64_t size = 0;
		struct cq_error *err = cq_decompress(comp, fd, tmp, path, max_inflated, &size);
		/* Two bytes are weak evidence of zlib ("x^" starts text): a stream that yields
		 * nothing was not compressed data; the raw file is checked as it is. */
		if (err && err->code == CQ_ERR_COMPRESSED && size == 0 && comp == CQ_COMPRESSION_ZLIB) {
			cq_error_destroy(err);
			close(tmp);
			*ret = f;
			return NULL;
		}
		close(fd);
		f->fd = tmp;
		if (err) {
			cq_file_close(f);
			return err;
		}
		f->size = size;
		f->compressed = true;
	}
	*ret = f;
	return NULL;
}

void cq_file_close(struct cq_file *f)
{
	if (!f)
		return;
	if (f->fd >= 0)
		close(f->fd);
	free(f->mem);
	free(f->cache);
	cq_apport_destroy(f->apport);
	free(f->path);
	free(f);
}

static struct cq_error *read_exact(struct cq_file *f, void *buf, size_t len, uint64_t offset,
				   const char *what);

/* A read that fits in one page, through the page cache. */
static struct cq_error *read_cached(struct cq_file *f, void *buf, size_t len, uint64_t offset,
				    const char *what)
{
	uint64_t page = offset / CQ_FILE_PAGE;
	for (unsigned i = 0; i < CQ_FILE_CACHE_PAGES; i++)
		if (f->cache_tag[i] == page + 1) {
			memcpy(buf, f->cache + (size_t)i * CQ_FILE_PAGE + offset % CQ_FILE_PAGE, len);
			return NULL;
		}
	uint64_t start = page * CQ_FILE_PAGE;
	size_t n = f->size - start < CQ_FILE_PAGE ? (size_t)(f->size - start) : CQ_FILE_PAGE;
	bool again = false;
	for (unsigned i = 0; i < CQ_FILE_CACHE_PAGES && !again; i++)
		again = f->cache_gone[i] == page + 1;
	unsigned slot;
	if (again) {
		slot = CQ_FILE_CACHE_NEW + f->kept_next++ % (CQ_FILE_CACHE_PAGES - CQ_FILE_CACHE_NEW);
	} else {
		slot = f->cache_next++ % CQ_FILE_CACHE_NEW;
		if (f->cache_tag[slot]) /* it leaves the first slots: remembered, without its bytes */
			f->cache_gone[f->gone_next++ % CQ_FILE_CACHE_PAGES] = f->cache_tag[slot];
	}
	f->cache_tag[slot] = 0;
	struct cq_error *err = read_exact(f, f->cache + (size_t)slot * CQ_FILE_PAGE, n, start, what);
	if (err)
		return err;
	f->cache_tag[slot] = page + 1;
	memcpy(buf, f->cache + (size_t)slot * CQ_FILE_PAGE + offset % CQ_FILE_PAGE, len);
	return NULL;
}

struct cq_error *cq_file_read(struct cq_file *f, void *buf, size_t len, uint64_t offset,
			      const char *what)
{
	if (offset > f->size || len > f->size - offset)
		return cq_error_create(CQ_ERR_MALFORMED,
				       "%s: %s at file offset 0x%llx+0x%zx lies past the end of the file (0x%llx bytes): truncated?",
				       f->path, what, (unsigned long long)offset, len,
				       (unsigned long long)f->size);
	if (f->mem) {
		memcpy(buf, f->mem + offset, len);
		return NULL;
	}
	if (len && len <= 256 && offset / CQ_FILE_PAGE == (offset + len - 1) / CQ_FILE_PAGE) {
		if (!f->cache)
			f->cache = malloc((size_t)CQ_FILE_CACHE_PAGES * CQ_FILE_PAGE);
		if (f->cache)
			return read_cached(f, buf, len, offset, what);
	}
	return read_exact(f, buf, len, offset, what);
}

static struct cq_error *read_exact(struct cq_file *f, void *buf, size_t len, uint64_t offset,
				   const char *what)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = pread(f->fd, (char *)buf + done, len - done, (off_t)(offset + done));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return cq_error_errno(errno, "%s: reading %s", f->path, what);
		}
		if (n == 0)
			return cq_error_create(CQ_ERR_MALFORMED, "%s: %s: file shrank while reading",
					       f->path, what);
		done += (size_t)n;
	}
	return NULL;
}
