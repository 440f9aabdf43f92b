/* SPDX-License-Identifier: MIT */
/* Transparent inflation of compressed inputs: round trip, sparse output, bounds, damage. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "corelib/file.h"

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
