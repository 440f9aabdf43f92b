/* SPDX-License-Identifier: MIT */
/* apport reports through cq_file_open: CoreDump lines of every length (each its own
 * base64 text, padded or not), a sparse core staying sparse, the kept fields, text that is
 * no report read as it is, and damage said with the line. The real-core side is
 * tests/fixture/apport.py. */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "input/apport.h"
#include "input/file.h"

static char dir[] = "/tmp/coreq-test-apport-XXXXXX";

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* one base64 line of @p n bytes, as Python's b64encode writes it */
static void put_line(FILE *f, const unsigned char *p, size_t n)
{
	fputs("\n ", f);
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
		fputc(b64[v >> 18 & 63], f);
		fputc(b64[v >> 12 & 63], f);
		fputc(i + 1 < n ? b64[v >> 6 & 63] : '=', f);
		fputc(i + 2 < n ? b64[v & 63] : '=', f);
	}
}

/* A report whose CoreDump is @p data gzip-compressed, cut into lines of 1, 2, 3, ...
 * bytes (every padding case, lines across read buffers). */
static char *write_report(const char *name, const char *fields, const unsigned char *data, size_t len)
{
	char *path;
	if (asprintf(&path, "%s/%s", dir, name) < 0)
		return NULL;
	uLong bound = compressBound((uLong)len) + 64;
	unsigned char *gz = malloc(bound);
	z_stream zs = {0};
	deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
	zs.next_in = (unsigned char *)data;
	zs.avail_in = (uInt)len;
	zs.next_out = gz;
	zs.avail_out = (uInt)bound;
	deflate(&zs, Z_FINISH);
	size_t n = zs.total_out;
	deflateEnd(&zs);
	FILE *f = fopen(path, "w");
	fputs(fields, f);
	fputs("CoreDump: base64", f);
	size_t step = 1;
	for (size_t i = 0; i < n; i += step, step = step % 700 + 1)
		put_line(f, gz + i, i + step <= n ? step : n - i);
	fputs("\n", f);
	fclose(f);
	free(gz);
	return path;
}

static char *write_text(const char *name, const char *text)
{
	char *path;
	if (asprintf(&path, "%s/%s", dir, name) < 0)
		return NULL;
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	return path;
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	CHECK(cq_apport_maybe((const unsigned char *)"ProblemType: Crash\n", 19));
	CHECK(cq_apport_maybe((const unsigned char *)"ProcEnviron:\n x", 15));
	CHECK(!cq_apport_maybe((const unsigned char *)"\177ELF\2\1\1", 7));
	CHECK(!cq_apport_maybe((const unsigned char *)"Key:value", 9));
	CHECK(!cq_apport_maybe((const unsigned char *)": x", 3));

	/* 4 MiB, mostly zeros: the holes keep it sparse */
	size_t len = 4 << 20;
	unsigned char *core = calloc(1, len);
	memcpy(core, "\177ELF", 4);
	for (size_t i = 0; i < 5000; i++)
		core[len / 2 + i] = (unsigned char)(i * 7 + 1);
	core[len - 1] = 0x5a;
	char *p = write_report("a.crash",
			       "ProblemType: Crash\nExecutablePath: /usr/bin/prog\nProcCmdline: prog --x\n"
			       "ProcEnviron:\n LANG=C.UTF-8\n SHELL=/bin/sh\nSignal: 11\nUserGroups: \n",
			       core, len);
	struct cq_file *f = NULL;
	struct cq_error *err = cq_file_open(p, 0, &f);
	CHECK(err == NULL);
	if (f) {
		CHECK(f->compressed && f->apport);
		CHECK_U64(f->size, len);
		unsigned char *back = malloc(len);
		CHECK(back && cq_file_read(f, back, len, 0, "all") == NULL && memcmp(back, core, len) == 0);
		free(back);
		struct stat st;
		CHECK(fstat(f->fd, &st) == 0 && (uint64_t)st.st_blocks * 512 < len / 4);
		if (f->apport) {
			CHECK_STR(f->apport->executable_path.value, "/usr/bin/prog");
			CHECK_STR(f->apport->proc_cmdline.value, "prog --x");
			CHECK_STR(f->apport->signal.value, "11");
			CHECK_STR(f->apport->problem_type.value, "Crash");
			CHECK(f->apport->package.value == NULL && !f->apport->proc_cmdline.cut);
			CHECK_STR(f->apport->compression, "gzip");
		}
		cq_file_close(f);
	}
	/* under a bound smaller than the core: refused, the report named */
	err = cq_file_open(p, len / 2, &f);
	CHECK(err && err->code == CQ_ERR_COMPRESSED && strstr(err->message, p) && strstr(err->message, "--max-inflate"));
	cq_error_destroy(err);

	/* a multi-line kept value, and a repeated field: the first counts */
	char *q = write_report("b.crash", "ProblemType: Crash\nProcCmdline:\n one\n two\nSignal: 6\nSignal: 9\n",
			       core, 4096);
	err = cq_file_open(q, 0, &f);
	CHECK(err == NULL);
	if (f) {
		CHECK_STR(f->apport->proc_cmdline.value, "one\ntwo");
		CHECK_STR(f->apport->signal.value, "6");
		CHECK(f->apport->executable_path.value == NULL);
		cq_file_close(f);
	}

	/* text that is no report: read as it is (then not a core, which is for cq_core_open) */
	char *t = write_text("notes.txt", "Subject: hello\nBody: no core\n");
	err = cq_file_open(t, 0, &f);
	CHECK(err == NULL);
	if (f) {
		char buf[8];
		CHECK(!f->compressed && !f->apport && f->size == 29);
		CHECK(cq_file_read(f, buf, 7, 0, "start") == NULL && !memcmp(buf, "Subject", 7));
		cq_file_close(f);
	}
	/* ...but a report it is when it says so */
	char *r = write_text("nocore.crash", "ProblemType: Crash\nSignal: 11\n");
	err = cq_file_open(r, 0, &f);
	CHECK(err && err->code == CQ_ERR_FORMAT && strstr(err->message, "without a CoreDump field"));
	cq_error_destroy(err);
	/* damage said with its line */
	char *d = write_text("bad.crash", "ProblemType: Crash\nCoreDump: base64\n H4sI\n AB!A\n");
	err = cq_file_open(d, 0, &f);
	CHECK(err && err->code == CQ_ERR_COMPRESSED && strstr(err->message, "line 4") && strstr(err->message, "'!'"));
	cq_error_destroy(err);
	char *e = write_text("nl.crash", "ProblemType: Crash\nCoreDump: base64\n\x01\n");
	err = cq_file_open(e, 0, &f);
	CHECK(err && err->code == CQ_ERR_FORMAT && strstr(err->message, "line 3") && strstr(err->message, "Key: value"));
	cq_error_destroy(err);

	const char *all[] = {p, q, t, r, d, e};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		unlink(all[i]);
		free((char *)all[i]);
	}
	free(core);
	rmdir(dir);
	return check_report("test_apport");
}
