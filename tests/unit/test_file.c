/* SPDX-License-Identifier: MIT */
/* Transparent inflation of compressed inputs: round trip, sparse output, bounds, damage. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "input/file.h"

static char dir[] = "/tmp/coreq-test-file-XXXXXX";

static char *write_gz(const char *name, const uint8_t *data, size_t len, size_t repeat)
{
	char *path;
	if (asprintf(&path, "%s/%s", dir, name) < 0)
		return NULL;
	gzFile gz = gzopen(path, "wb9");
	for (size_t i = 0; i < repeat; i++)
		gzwrite(gz, data, (unsigned)len);
	gzclose(gz);
	return path;
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	static uint8_t block[1 << 20];
	for (size_t i = 0; i < sizeof(block); i++)
		block[i] = i % 3 ? 0 : (uint8_t)i;
	memset(block + 4096, 0, 200000); /* a zero run that becomes a hole */

	char *p = write_gz("ok.gz", block, sizeof(block), 3);
	struct cq_file *f = NULL;
	struct cq_error *err = cq_file_open(p, 0, &f);
	CHECK(err == NULL);
	if (f) {
		CHECK(f->compressed);
		CHECK_U64(f->size, 3 * sizeof(block));
		uint8_t buf[64];
		CHECK(cq_file_read(f, buf, sizeof(buf), sizeof(block) + 999, "x") == NULL);
		CHECK(memcmp(buf, block + 999, sizeof(buf)) == 0);
		err = cq_file_read(f, buf, 2, f->size - 1, "tail");
		CHECK(err && err->code == CQ_ERR_MALFORMED && strstr(err->message, "tail"));
		cq_error_destroy(err);
		cq_file_close(f);
	}

	/* Over the expansion bound: refused with a message naming the option. */
	err = cq_file_open(p, 1 << 20, &f);
	CHECK(err && err->code == CQ_ERR_COMPRESSED && strstr(err->message, "--max-inflate"));
	cq_error_destroy(err);

	/* Truncated and corrupted streams. */
	int fd = open(p, O_RDONLY);
	uint8_t gz[8192];
	ssize_t n = read(fd, gz, sizeof(gz));
	close(fd);
	char *t;
	if (asprintf(&t, "%s/trunc.gz", dir) >= 0 && n > 100) {
		fd = open(t, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		CHECK(write(fd, gz, (size_t)n / 2) == n / 2);
		close(fd);
		err = cq_file_open(t, 0, &f);
		CHECK(err && err->code == CQ_ERR_COMPRESSED);
		cq_error_destroy(err);
		gz[40] ^= 0xff;
		gz[41] ^= 0x5a;
		fd = open(t, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		CHECK(write(fd, gz, (size_t)n) == n);
		close(fd);
		err = cq_file_open(t, 0, &f);
		CHECK(err && err->code == CQ_ERR_COMPRESSED);
		cq_error_destroy(err);
		unlink(t);
	}
	free(t);

	/* The small-read cache: a walk over many pages read a few times each (a stack page per
	 * thread) stays in the first slots; a page read again after leaving them is kept. */
	err = cq_file_open(p, 0, &f);
	CHECK(err == NULL);
	if (f) {
		uint8_t buf[16];
		bool ok = true;
		for (uint64_t pg = 0; pg < 100; pg++)
			for (int k = 0; k < 3; k++)
				ok &= cq_file_read(f, buf, 8, pg * CQ_FILE_PAGE + 64 * (uint64_t)k, "x") == NULL &&
				      memcmp(buf, block + pg * CQ_FILE_PAGE + 64 * k, 8) == 0;
		CHECK(ok);
		unsigned used = 0;
		for (unsigned i = 0; i < CQ_FILE_CACHE_PAGES; i++)
			used += f->cache_tag[i] != 0;
		CHECK_U64(used, CQ_FILE_CACHE_NEW);
		CHECK_U64(f->cache_tag[99 % CQ_FILE_CACHE_NEW], 99 + 1); /* the last page, in turn */
		/* page 50 left the first slots: read again, it takes one of the others and stays
		 * while new pages pass */
		CHECK(cq_file_read(f, buf, 8, 50 * CQ_FILE_PAGE + 8, "x") == NULL &&
		      memcmp(buf, block + 50 * CQ_FILE_PAGE + 8, 8) == 0);
		CHECK_U64(f->cache_tag[CQ_FILE_CACHE_NEW], 50 + 1);
		for (uint64_t pg = 100; pg < 120; pg++)
			CHECK(cq_file_read(f, buf, 8, pg * CQ_FILE_PAGE, "x") == NULL);
		CHECK_U64(f->cache_tag[CQ_FILE_CACHE_NEW], 50 + 1);
		cq_file_close(f);
	}

	/* Missing file: I/O error with the path and errno text. */
	err = cq_file_open("/nonexistent/core", 0, &f);
	CHECK(err && err->code == CQ_ERR_IO && strstr(err->message, "/nonexistent/core") &&
	      strstr(err->message, "No such file"));
	cq_error_destroy(err);

	unlink(p);
	free(p);
	rmdir(dir);
	return check_report("test_file");
}
