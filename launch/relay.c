/* SPDX-License-Identifier: MIT */
/* The per-node coreq's lines to the front end, and the front end's reading of them (relay.h). */
#include "relay.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "base/base64.h"
#include "base/text.h"

/* The zstd level of a node's files: cores of stopped processes are mostly zero pages and
 * pointers; level 3 takes a few ms per MiB and a tenth of the bytes on the way. */
#define ZLEVEL 3

static void send_base64(FILE *f, const char *verb, const uint8_t *p, size_t n)
{
	char line[CQ_RELAY_LINE + 1];
	const size_t piece = CQ_RELAY_LINE / 4 * 3;
	for (size_t at = 0; at < n; at += piece) {
		size_t k = n - at < piece ? n - at : piece;
		cq_base64_encode(p + at, k, line);
		fprintf(f, "CQ1 %s %s\n", verb, line);
	}
}

struct cq_error *cq_relay_send_file(FILE *f, unsigned sample, const char *name, const char *path)
{
	FILE *in = fopen(path, "rb");
	if (!in)
		return cq_error_errno(errno, "%s", path);
	uint8_t *buf = NULL;
	size_t n = 0, cap = 0;
	struct cq_error *err = NULL;
	for (;;) {
		if (n == cap) {
			cap = cap ? 2 * cap : 1 << 20;
			uint8_t *nb = cap <= CQ_RELAY_FILE_MAX ? realloc(buf, cap) : NULL;
			if (!nb) {
				err = cap > CQ_RELAY_FILE_MAX ? cq_error_create(CQ_ERR_IO, "%s: past %llu bytes: not sent", path,
									 (unsigned long long)CQ_RELAY_FILE_MAX)
							  : &cq_error_nomem;
				break;
			}
			buf = nb;
		}
		size_t k = fread(buf + n, 1, cap - n, in);
		n += k;
		if (k == 0)
			break;
	}
	if (!err && ferror(in))
		err = cq_error_errno(EIO, "%s", path);
	fclose(in);
	size_t zcap = ZSTD_compressBound(n);
	uint8_t *z = err ? NULL : malloc(zcap ? zcap : 1);
	if (!err && !z)
		err = &cq_error_nomem;
	size_t zn = err ? 0 : ZSTD_compress(z, zcap, buf, n, ZLEVEL);
	if (!err && ZSTD_isError(zn))
		err = cq_error_create(CQ_ERR_INTERNAL, "%s: zstd: %s", path, ZSTD_getErrorName(zn));
	if (!err) {
		fprintf(f, "CQ1 file %u %s %zu %zu\n", sample, name, n, zn);
		send_base64(f, "data", z, zn);
		fprintf(f, "CQ1 eof\n");
	}
	free(z);
	free(buf);
	return err;
}

void cq_relay_send_doc(FILE *f, const json_t *doc)
{
	char *text = json_dumps(doc, JSON_COMPACT);
	if (text)
		send_base64(f, "doc", (const uint8_t *)text, strlen(text));
	fprintf(f, "CQ1 docend\n");
	free(text);
}

void cq_relay_task_free(struct cq_relay_task *t)
{
	if (t->receiving)
		cq_output_abort(&t->out);
	free(t->node);
	free(t->ranks);
	free(t->pids);
	free(t->z);
	free(t->docbuf);
	json_decref(t->doc);
	*t = (struct cq_relay_task){.rc = -1};
}

/* A file name a node may send: rankR.core, or a document NAME.json (letters, digits, '_',
 * '-', '.', not first): nothing that names a path or a hidden file. */
static bool name_ok(const char *name)
{
	char *end;
	size_t len = strlen(name);
	if (len > 5 && !strcmp(name + len - 5, ".json")) {
		if (!((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z') ||
		      (name[0] >= '0' && name[0] <= '9')))
			return false;
		return strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == len &&
		       !strstr(name, "..");
	}
	if (strncmp(name, "rank", 4) || name[4] < '0' || name[4] > '9')
		return false;
	long r = strtol(name + 4, &end, 10);
	return r >= 0 && r < (1L << 30) && !strcmp(end, ".core");
}

static struct cq_error *bad(struct cq_relay_task *t, const char *what)
{
	if (t->receiving) {
		cq_output_abort(&t->out);
		t->receiving = false;
	}
	free(t->z);
	t->z = NULL;
	return cq_error_create(CQ_ERR_JOB, "node %s: %s", t->node ? t->node : "(not named yet)", what);
}

/* The ranks of a "node" line's list "R:PID,R:PID" into @p t. */
static bool parse_ranks(struct cq_relay_task *t, const char *list, size_t n)
{
	t->ranks = calloc(n ? n : 1, sizeof(int));
	t->pids = calloc(n ? n : 1, sizeof(int));
	if (!t->ranks || !t->pids)
		return false;
	const char *p = list;
	for (size_t i = 0; i < n; i++) {
		int r, pid, used;
		if (sscanf(p, "%d:%d%n", &r, &pid, &used) != 2 || r < 0 || pid <= 0)
			return false;
		t->ranks[i] = r;
		t->pids[i] = pid;
		p += used;
		if (*p == ',')
			p++;
	}
	t->nranks = n;
	return true;
}

static struct cq_error *file_end(struct cq_relay_task *t, struct cq_relay_event *ev)
{
	if (t->zhave != t->zsize)
		return bad(t, "a file ended before its bytes did");
	uint8_t *raw = malloc(t->size ? t->size : 1);
	if (!raw)
		return bad(t, "no memory for its file");
	size_t got = ZSTD_decompress(raw, t->size, t->z, t->zsize);
	if (ZSTD_isError(got) || got != t->size) {
		free(raw);
		return bad(t, "a file's zstd bytes are not the file it said");
	}
	struct cq_error *err = cq_output_write(&t->out, raw, t->size);
	free(raw);
	t->receiving = false;
	err = err ? (cq_output_abort(&t->out), err) : cq_output_commit(&t->out);
	free(t->z);
	t->z = NULL;
	if (err)
		return err;
	ev->what = CQ_RELAY_FILE;
	ev->sample = t->sample;
	snprintf(ev->text, sizeof(ev->text), "%s", t->name);
	return NULL;
}

struct cq_error *cq_relay_take(struct cq_relay_task *t, const char *line, const struct cq_outdir *dir,
			       const struct cq_outdir *subdirs, unsigned nsamples, struct cq_relay_event *ev)
{
	*ev = (struct cq_relay_event){CQ_RELAY_NONE, 0, 0, ""};
	if (strncmp(line, "CQ1 ", 4))
		return NULL;
	const char *w = line + 4;
	size_t vlen = strcspn(w, " ");
	const char *arg = w[vlen] ? w + vlen + 1 : w + vlen;
#define IS(v) (vlen == strlen(v) && !strncmp(w, v, vlen))
	if (IS("data")) {
		size_t len = strlen(arg);
		if (!t->receiving || len > CQ_RELAY_LINE || t->zhave + len / 4 * 3 > t->zsize + 2)
			return bad(t, "file bytes outside a file, or past its size");
		size_t n;
		if (!cq_base64_decode(arg, len, t->z + t->zhave, &n) || t->zhave + n > t->zsize)
			return bad(t, "a file's piece is not base64, or runs past its size");
		t->zhave += n;
		return NULL;
	}
	if (IS("file")) {
		unsigned sample;
		unsigned long long size, zsize;
		char name[64];
		if (t->receiving || sscanf(arg, "%u %63s %llu %llu", &sample, name, &size, &zsize) != 4 ||
		    !name_ok(name) || size > CQ_RELAY_FILE_MAX || zsize > ZSTD_compressBound(CQ_RELAY_FILE_MAX) ||
		    sample > nsamples || (nsamples > 1 && sample == 0))
			return bad(t, "a file line that is not one (its name must be rankR.core or NAME.json)");
		const struct cq_outdir *into = nsamples > 1 ? &subdirs[sample - 1] : dir;
		char path[PATH_MAX], shown[PATH_MAX];
		cq_outdir_file(into, name, path, sizeof(path), shown, sizeof(shown));
		/* a rank's core the job has already (two nodes say one rank) is not replaced */
		if (faccessat(into->fd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
			return bad(t, "it sent a file that is there already (two nodes with one rank?)");
		struct cq_error *err = cq_output_begin_mode(path, "snapshot", NULL, 0, 0600, &t->out);
		if (err)
			return err;
		t->receiving = true;
		t->sample = sample;
		snprintf(t->name, sizeof(t->name), "%s", name);
		t->size = size;
		t->zsize = zsize;
		t->zhave = 0;
		free(t->z);
		t->z = malloc(zsize + 3);
		if (!t->z)
			return bad(t, "no memory for its file");
		return NULL;
	}
	if (IS("eof")) {
		if (!t->receiving)
			return bad(t, "an end of file outside a file");
		return file_end(t, ev);
	}
	if (IS("doc")) {
		size_t len = strlen(arg);
		if (len > CQ_RELAY_LINE || t->doclen + len > (64u << 20))
			return bad(t, "its document is past 64 MiB");
		char *nb = realloc(t->docbuf, t->doclen + len + 1);
		if (!nb)
			return bad(t, "no memory for its document");
		t->docbuf = nb;
		memcpy(t->docbuf + t->doclen, arg, len + 1);
		t->doclen += len;
		return NULL;
	}
	if (IS("docend")) {
		/* each piece was whole base64: decoded piece by piece */
		char *text = malloc(t->doclen / 4 * 3 + 4);
		size_t n = 0;
		bool ok = text != NULL;
		for (size_t at = 0; ok && at < t->doclen; at += CQ_RELAY_LINE) {
			size_t k = t->doclen - at < CQ_RELAY_LINE ? t->doclen - at : CQ_RELAY_LINE, got;
			ok = cq_base64_decode(t->docbuf + at, k, (uint8_t *)text + n, &got);
			n += got;
		}
		json_error_t je;
		json_decref(t->doc);
		t->doc = ok ? json_loadb(text, n, 0, &je) : NULL;
		free(text);
		free(t->docbuf);
		t->docbuf = NULL;
		t->doclen = 0;
		if (!t->doc)
			return bad(t, "its document is not JSON");
		ev->what = CQ_RELAY_DOC;
		return NULL;
	}
	if (IS("node")) {
		char name[256];
		size_t n;
		int used = 0;
		if (t->node || sscanf(arg, "%255s %zu %n", name, &n, &used) < 2 || n > (1u << 20) ||
		    !parse_ranks(t, arg + used, n))
			return bad(t, "a node line that is not one");
		t->node = cq_utf8_escape(name);
		ev->what = CQ_RELAY_NODE;
		return NULL;
	}
	if (IS("error")) {
		ev->what = CQ_RELAY_ERROR;
		snprintf(ev->text, sizeof(ev->text), "%s", arg);
		return NULL;
	}
	if (IS("read") || IS("resumed")) {
		unsigned k;
		long long ms = 0;
		if (sscanf(arg, "%u %lld", &k, &ms) < 1 || k == 0 || k > nsamples)
			return bad(t, "a sample line that is not one");
		ev->what = IS("read") ? CQ_RELAY_READ : CQ_RELAY_RESUMED;
		ev->sample = k;
		ev->value = ms;
		return NULL;
	}
	if (IS("done")) {
		int rc;
		if (sscanf(arg, "%d", &rc) != 1)
			return bad(t, "a done line that is not one");
		t->rc = rc;
		ev->what = CQ_RELAY_DONE;
		ev->value = rc;
		return NULL;
	}
#undef IS
	return NULL;
}
