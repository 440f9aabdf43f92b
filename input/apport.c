/* SPDX-License-Identifier: MIT */
/* apport reports: one streaming pass over the text (apport.h). The CoreDump field's
 * base64 is decoded line by line into a scratch file, which cq_decompress() then expands
 * like any compressed input: the same formats, bounds, holes and messages. Nothing of the
 * report is held in memory but the few kept fields, each bounded. */
#include "apport.h"
#include "decompress.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base64.h"

#define CHUNK (64 * 1024)
/* apport's keys are short words ("ExecutablePath", "Dependencies"); a longer "key" is not
 * a report's */
#define KEY_MAX 128

enum state {
	S_LINE,      /* at the start of a line */
	S_KEY,       /* in a key */
	S_COLON,     /* just after "Key:" */
	S_VALUE,     /* the value on the key's own line */
	S_CONT,      /* a continuation line (after its leading space) */
};

struct parser {
	const char *path;
	struct cq_apport *a;
	bool problem_type;  /* the file starts with "ProblemType:": a report for sure */
	bool have_key;      /* a field has started (continuation lines belong to it) */
	bool have_core;
	uint64_t line;      /* 1-based */
	enum state st;
	char key[KEY_MAX + 1];
	size_t klen;
	/* the field being read: kept (value), the core, or skipped */
	struct cq_apport_field *field;
	size_t vlen;
	bool vstarted;      /* the kept value has a line already: the next one adds "\n" */
	bool in_core;
	char head[8];       /* the CoreDump field's own-line value: must be "base64" */
	size_t hlen;
	bool head_long;
	/* base64 of the current CoreDump line */
	uint32_t quad;
	int nq, npad;
	bool closed;        /* padding ended the line's data */
	/* decoded bytes on their way to the scratch file */
	int scratch;
	unsigned char *obuf;
	size_t olen;
	uint64_t decoded;
};

bool cq_apport_maybe(const unsigned char *m, size_t n)
{
	size_t i = 0;
	while (i < n && i < KEY_MAX && ((m[i] >= 'A' && m[i] <= 'Z') || (m[i] >= 'a' && m[i] <= 'z') ||
					(m[i] >= '0' && m[i] <= '9') || m[i] == '_' || m[i] == '.' || m[i] == '-'))
		i++;
	return i > 0 && i + 1 < n && m[i] == ':' && (m[i + 1] == ' ' || m[i + 1] == '\n');
}

static bool key_char(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
	       c == '.' || c == '-';
}

/* "'x'" for a printable byte, "byte 0x01" for others: the message stays one clean line */
static const char *show(unsigned char c, char buf[16])
{
	if (c > 0x20 && c < 0x7f)
		snprintf(buf, 16, "'%c'", c);
	else
		snprintf(buf, 16, "byte 0x%02x", c);
	return buf;
}

static struct cq_error *bad_line(struct parser *p, const char *why)
{
	return cq_error_create(CQ_ERR_FORMAT, "%s: apport report, line %llu: %s", p->path,
			       (unsigned long long)p->line, why);
}

static struct cq_error *bad_base64(struct parser *p, const char *why, unsigned char c)
{
	char b[16];
	return cq_error_create(CQ_ERR_COMPRESSED, "%s: apport report, line %llu: CoreDump field: %s%s%s", p->path,
			       (unsigned long long)p->line, why, c ? " " : "", c ? show(c, b) : "");
}

static struct cq_error *flush_out(struct parser *p)
{
	size_t done = 0;
	while (done < p->olen) {
		ssize_t w = write(p->scratch, p->obuf + done, p->olen - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return cq_error_errno(w < 0 ? errno : ENOSPC, "%s: writing the decoded CoreDump field", p->path);
		done += (size_t)w;
	}
	p->olen = 0;
	return NULL;
}

static struct cq_error *emit(struct parser *p, const unsigned char *b, size_t n)
{
	if (p->olen + n > CHUNK) {
		struct cq_error *err = flush_out(p);
		if (err)
			return err;
	}
	memcpy(p->obuf + p->olen, b, n);
	p->olen += n;
	p->decoded += n;
	return NULL;
}

/* One character of a CoreDump line. Each line is a whole base64 text of its own (apport
 * encodes chunk by chunk): padding may only end a line. */
static struct cq_error *core_char(struct parser *p, unsigned char c)
{
	if (p->closed)
		return bad_base64(p, "data after the line's '=' padding:", c);
	int v = cq_base64_value(c);
	if (c == '=') {
		if (p->nq < 2)
			return bad_base64(p, "'=' padding where data must be", 0);
		p->npad++;
		v = 0;
	} else if (v < 0) {
		return bad_base64(p, "not a base64 character:", c);
	} else if (p->npad) {
		return bad_base64(p, "data after '=' padding:", c);
	}
	p->quad = p->quad << 6 | (uint32_t)v;
	if (++p->nq < 4)
		return NULL;
	unsigned char b[3] = {(unsigned char)(p->quad >> 16), (unsigned char)(p->quad >> 8), (unsigned char)p->quad};
	p->nq = 0;
	p->quad = 0;
	if (p->npad)
		p->closed = true;
	return emit(p, b, 3 - (size_t)p->npad);
}

static void value_char(struct parser *p, char c)
{
	if (!p->field || p->field->cut)
		return;
	if (p->vlen == CQ_APPORT_FIELD_MAX) {
		p->field->cut = true;
		return;
	}
	p->field->value[p->vlen++] = c;
	p->field->value[p->vlen] = 0;
}

/* "Key:" read: which field follows. */
static struct cq_error *start_field(struct parser *p)
{
	static const struct {
		const char *key;
		size_t off;
	} kept[] = {
		{"ProblemType", offsetof(struct cq_apport, problem_type)},
		{"ExecutablePath", offsetof(struct cq_apport, executable_path)},
		{"ExecutableTimestamp", offsetof(struct cq_apport, executable_timestamp)},
		{"ProcCmdline", offsetof(struct cq_apport, proc_cmdline)},
		{"Signal", offsetof(struct cq_apport, signal)},
		{"Package", offsetof(struct cq_apport, package)},
	};
	p->key[p->klen] = 0;
	p->field = NULL;
	p->in_core = false;
	p->vlen = 0;
	p->vstarted = false;
	p->have_key = true;
	if (!strcmp(p->key, "CoreDump")) {
		if (p->have_core)
			return bad_line(p, "a second CoreDump field");
		p->have_core = p->in_core = true;
		p->hlen = 0;
		p->head_long = false;
		return NULL;
	}
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		if (!strcmp(p->key, kept[i].key)) {
			struct cq_apport_field *f = (struct cq_apport_field *)((char *)p->a + kept[i].off);
			if (f->value)
				return NULL; /* a repeated field: the first one counts */
			if (!(f->value = calloc(1, CQ_APPORT_FIELD_MAX + 1)))
				return &cq_error_nomem;
			p->field = f;
		}
	return NULL;
}

/* The end of a line (or of the file). */
static struct cq_error *end_line(struct parser *p)
{
	if (p->st == S_KEY)
		return bad_line(p, "not a 'Key: value' line");
	if (p->in_core && (p->st == S_VALUE || p->st == S_COLON)) {
		p->head[p->hlen] = 0;
		if (p->head_long || strcmp(p->head, "base64"))
			return bad_line(p, "the CoreDump field is not base64-encoded (apport writes 'CoreDump: base64')");
	}
	if (p->in_core && p->st == S_CONT && p->nq)
		return bad_base64(p, "a line whose base64 ends mid-group (apport encodes each line whole)", 0);
	if (p->st == S_VALUE || p->st == S_CONT)
		p->vstarted = true;
	p->st = S_LINE;
	return NULL;
}

static struct cq_error *step(struct parser *p, unsigned char c)
{
	switch (p->st) {
	case S_LINE:
		if (c == '\n')
			return NULL; /* an empty line: nothing */
		if (c == ' ') {
			if (!p->have_key)
				return bad_line(p, "a continuation line before any field");
			p->st = S_CONT;
			if (p->in_core) {
				p->nq = p->npad = 0;
				p->quad = 0;
				p->closed = false;
			} else if (p->vstarted) {
				value_char(p, '\n');
			}
			return NULL;
		}
		p->st = S_KEY;
		p->klen = 0;
		/* fall through */
	case S_KEY:
		if (c == ':') {
			if (!p->klen)
				return bad_line(p, "not a 'Key: value' line");
			p->st = S_COLON;
			return start_field(p);
		}
		if (!key_char(c) || p->klen == KEY_MAX)
			return bad_line(p, "not a 'Key: value' line");
		p->key[p->klen++] = (char)c;
		return NULL;
	case S_COLON:
		if (c != ' ')
			return bad_line(p, "not a 'Key: value' line (no space after the colon)");
		p->st = S_VALUE;
		return NULL;
	case S_VALUE:
		if (p->in_core) {
			if (p->hlen < sizeof(p->head) - 1)
				p->head[p->hlen++] = (char)c;
			else
				p->head_long = true;
		} else {
			value_char(p, (char)c);
		}
		return NULL;
	case S_CONT:
		if (p->in_core)
			return core_char(p, c);
		value_char(p, (char)c);
		return NULL;
	}
	return NULL;
}

/* The whole report, a buffer at a time. */
static struct cq_error *parse(struct parser *p, int in)
{
	unsigned char *buf = malloc(CHUNK);
	struct cq_error *err = NULL;
	if (!buf)
		return &cq_error_nomem;
	p->line = 1;
	bool first = true;
	for (;;) {
		ssize_t n = read(in, buf, CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = cq_error_errno(errno, "%s: read", p->path);
			break;
		}
		if (n == 0)
			break;
		if (first)
			p->problem_type = n >= 12 && !memcmp(buf, "ProblemType:", 12);
		first = false;
		for (ssize_t i = 0; i < n && !err; i++) {
			unsigned char c = buf[i];
			if (c == '\n') {
				err = end_line(p);
				p->line++;
			} else {
				err = step(p, c);
			}
		}
		if (err)
			break;
	}
	free(buf);
	if (!err && p->st != S_LINE)
		err = end_line(p); /* no newline at the end */
	return err;
}

void cq_apport_destroy(struct cq_apport *a)
{
	if (!a)
		return;
	free(a->problem_type.value);
	free(a->executable_path.value);
	free(a->executable_timestamp.value);
	free(a->proc_cmdline.value);
	free(a->signal.value);
	free(a->package.value);
	free(a);
}

struct cq_error *cq_apport_extract(int in, int scratch, int out, const char *path, uint64_t max,
				   uint64_t *size_ret, bool *not_report, struct cq_apport **ret)
{
	*size_ret = 0;
	*not_report = false;
	*ret = NULL;
	struct cq_apport *a = calloc(1, sizeof(*a));
	struct parser p = {.path = path, .a = a, .scratch = scratch, .obuf = malloc(CHUNK)};
	struct cq_error *err = NULL;
	if (!a || !p.obuf) {
		err = &cq_error_nomem;
		goto out;
	}
	err = parse(&p, in);
	/* Not starting with ProblemType, a file is a report only if it reads as one and has
	 * a core: any other text is left to be read as it is. */
	if (!p.problem_type && (err ? err->code == CQ_ERR_FORMAT && !p.have_core : !p.have_core)) {
		cq_error_destroy(err);
		err = NULL;
		*not_report = true;
		goto out;
	}
	if (err || (err = flush_out(&p)))
		goto out;
	if (!p.have_core) {
		/* apport keeps no core for some problems (a package's failure, a kernel oops) and
		 * drops one over its size limit */
		err = cq_error_create(CQ_ERR_FORMAT, "%s: apport report without a CoreDump field: no core in it "
				      "(ProblemType %s)", path, a->problem_type.value ? a->problem_type.value : "not given");
		goto out;
	}
	unsigned char magic[CQ_COMPRESSION_MAGIC];
	ssize_t nm = pread(scratch, magic, sizeof(magic), 0);
	enum cq_compression c = cq_compression_of(magic, nm > 0 ? (size_t)nm : 0);
	if (p.decoded == 0 || c == CQ_COMPRESSION_NONE) {
		err = cq_error_create(CQ_ERR_COMPRESSED, "%s: apport report: the CoreDump field %s", path,
				      p.decoded ? "decodes to neither gzip, zlib nor zstd data" : "is empty");
		goto out;
	}
	if (lseek(scratch, 0, SEEK_SET) < 0) {
		err = cq_error_errno(errno, "%s: temporary file", path);
		goto out;
	}
	a->compression = cq_compression_name(c);
	char *label;
	if (asprintf(&label, "%s: apport report, CoreDump field", path) < 0) {
		err = &cq_error_nomem;
		goto out;
	}
	err = cq_decompress(c, scratch, out, label, max, size_ret);
	free(label);
out:
	free(p.obuf);
	if (err || *not_report)
		cq_apport_destroy(a);
	else
		*ret = a;
	return err;
}
