/* SPDX-License-Identifier: MIT */
/* zstd, xz and lz4 inputs (input/decompress.h), made here by each format's own library:
 * round trip through cq_file_open, concatenated frames, trailing zero padding, the
 * expansion bound, truncated and damaged streams, and the zero runs left as holes. */
#include <fcntl.h>
#include <lz4frame.h>
#include <lzma.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "check.h"
#include "input/decompress.h"
#include "input/file.h"

static char dir[] = "/tmp/coreq-test-decompress-XXXXXX";

#define PLAIN (3u << 20)
static uint8_t plain[PLAIN];

/* @p data compressed as @p c into a new buffer; *@p len its size. */
static uint8_t *compress(enum cq_compression c, const uint8_t *data, size_t n, size_t *len)
{
	size_t cap = n + n / 2 + (1 << 16);
	uint8_t *out = malloc(cap);
	if (!out)
		return NULL;
	*len = 0;
	if (c == CQ_COMPRESSION_ZSTD) {
		size_t r = ZSTD_compress(out, cap, data, n, 3);
		*len = ZSTD_isError(r) ? 0 : r;
	} else if (c == CQ_COMPRESSION_XZ) {
		size_t pos = 0;
		if (lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64, NULL, data, n, out, &pos, cap) == LZMA_OK)
			*len = pos;
	} else if (c == CQ_COMPRESSION_LZ4) {
		size_t r = LZ4F_compressFrame(out, cap, data, n, NULL);
		*len = LZ4F_isError(r) ? 0 : r;
	}
	return out;
}

static char *put_file(const char *name, const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
	char *path;
	if (asprintf(&path, "%s/%s", dir, name) < 0)
		return NULL;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && write(fd, a, na) == (ssize_t)na && (!nb || write(fd, b, nb) == (ssize_t)nb));
	close(fd);
	return path;
}

/* @p path opens to @p want bytes that are plain[] over and over. */
static void opens_to(const char *path, uint64_t want, const char *what)
{
	struct cq_file *f = NULL;
	struct cq_error *err = cq_file_open(path, 0, &f);
	CHECK(err == NULL);
	if (err)
		printf("# %s: %s\n", what, err->message);
	cq_error_destroy(err);
	if (!f)
		return;
	CHECK(f->compressed);
	CHECK_U64(f->size, want);
	uint8_t buf[256];
	for (uint64_t off = 0; off + sizeof(buf) <= want; off += want / 7 + 1) {
		CHECK(cq_file_read(f, buf, sizeof(buf), off, what) == NULL);
		int ok = 1;
		for (size_t i = 0; i < sizeof(buf); i++)
			ok &= buf[i] == plain[(off + i) % PLAIN];
		CHECK(ok);
	}
	/* the zero run is a hole: fewer blocks than bytes */
	struct stat st;
	CHECK(fstat(f->fd, &st) == 0 && (uint64_t)st.st_blocks * 512 < want);
	cq_file_close(f);
}

/* @p path fails with CQ_ERR_COMPRESSED and a message holding @p words */
static void fails(const char *path, uint64_t max, const char *words, const char *what)
{
	struct cq_file *f = NULL;
	struct cq_error *err = cq_file_open(path, max, &f);
	CHECK(err && err->code == CQ_ERR_COMPRESSED && strstr(err->message, words) && strstr(err->message, path));
	if (!err || !strstr(err->message, words))
		printf("# %s: %s\n", what, err ? err->message : "opened");
	cq_error_destroy(err);
	cq_file_close(f);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	for (size_t i = 0; i < PLAIN; i++)
		plain[i] = i % 5 ? (uint8_t)(i * 7) : 0;
	memset(plain + 65536, 0, 1 << 20); /* a zero run of 16 chunks: holes */

	static const enum cq_compression formats[] = {CQ_COMPRESSION_ZSTD, CQ_COMPRESSION_XZ, CQ_COMPRESSION_LZ4};
	for (size_t k = 0; k < 3; k++) {
		enum cq_compression c = formats[k];
		const char *name = cq_compression_name(c);
		size_t len;
		uint8_t *z = compress(c, plain, PLAIN, &len);
		CHECK(z && len > 100);
		if (!z || len <= 100)
			continue;
		CHECK(cq_compression_of(z, len) == c);
		char fname[64];
		snprintf(fname, sizeof(fname), "one.%s", name);
		char *p = put_file(fname, z, len, NULL, 0);
		opens_to(p, PLAIN, name);
		/* over the bound: said with the option to raise it */
		fails(p, PLAIN / 2, "--max-inflate", name);
		free(p);
		/* two streams one after the other, as concatenated files are */
		snprintf(fname, sizeof(fname), "two.%s", name);
		p = put_file(fname, z, len, z, len);
		opens_to(p, 2 * PLAIN, name);
		free(p);
		/* zero padding after the stream (xz's own padding is 4-byte multiples) */
		static const uint8_t zeros[4096];
		snprintf(fname, sizeof(fname), "pad.%s", name);
		p = put_file(fname, z, len, zeros, sizeof(zeros));
		opens_to(p, PLAIN, name);
		free(p);
		/* cut short: truncated, with how much came out */
		snprintf(fname, sizeof(fname), "cut.%s", name);
		p = put_file(fname, z, len - len / 3, NULL, 0);
		fails(p, 0, "truncated after", name);
		free(p);
		/* damaged in the middle (lz4 and zstd check their content checksums only where the
		 * frame has them: damage in a block header is what every format catches) */
		z[len / 2] ^= 0xff;
		z[len / 2 + 1] ^= 0x55;
		z[20] ^= 0xff;
		snprintf(fname, sizeof(fname), "bad.%s", name);
		p = put_file(fname, z, len, NULL, 0);
		struct cq_file *f = NULL;
		struct cq_error *err = cq_file_open(p, 0, &f);
		/* either refused as corrupt, or (a damaged literal) different bytes: never a crash */
		CHECK((err && err->code == CQ_ERR_COMPRESSED && strstr(err->message, name)) || (!err && f));
		cq_error_destroy(err);
		cq_file_close(f);
		free(p);
		/* garbage after the magic */
		uint8_t junk[64];
		memcpy(junk, z, 6);
		memset(junk + 6, 0x5a, sizeof(junk) - 6);
		snprintf(fname, sizeof(fname), "junk.%s", name);
		p = put_file(fname, junk, sizeof(junk), NULL, 0);
		f = NULL;
		err = cq_file_open(p, 0, &f);
		CHECK(err && err->code == CQ_ERR_COMPRESSED && strstr(err->message, name));
		cq_error_destroy(err);
		cq_file_close(f);
		free(p);
		free(z);
	}
	/* magic alone: the format, or none */
	CHECK(cq_compression_of((const uint8_t *)"\x28\xb5\x2f\xfd", 4) == CQ_COMPRESSION_ZSTD);
	CHECK(cq_compression_of((const uint8_t *)"\xfd" "7zXZ\0", 6) == CQ_COMPRESSION_XZ);
	CHECK(cq_compression_of((const uint8_t *)"\xfd" "7zXZ", 5) == CQ_COMPRESSION_NONE);
	CHECK(cq_compression_of((const uint8_t *)"\x04\x22\x4d\x18", 4) == CQ_COMPRESSION_LZ4);
	CHECK(cq_compression_of((const uint8_t *)"\x1f\x8b", 2) == CQ_COMPRESSION_GZIP);
	CHECK(cq_compression_of((const uint8_t *)"\x7f" "ELF", 4) == CQ_COMPRESSION_NONE);
	rmdir(dir);
	return check_report("test_decompress");
}
