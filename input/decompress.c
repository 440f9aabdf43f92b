/* SPDX-License-Identifier: MIT */
/* Compressed inputs by magic, expanded by each format's own library (decompress.h). */
#include "decompress.h"

#include <errno.h>
#include <lz4frame.h>
#include <lzma.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

/* Input and output go in chunks this large; output chunks that are all zero become holes. */
#define CHUNK (64 * 1024)
/* Memory a decoder may take for a hostile header's sake: xz's dictionary, zstd's window
 * (2^27: what `zstd --long` writes; systemd's cores use far less). */
#define XZ_MEMLIMIT (UINT64_C(256) << 20)
#define ZSTD_WINDOW_LOG_MAX 27

enum cq_compression cq_compression_of(const unsigned char *m, size_t n)
{
	if (n >= 2 && m[0] == 0x1f && m[1] == 0x8b)
		return CQ_COMPRESSION_GZIP;
	if (n >= 4 && m[0] == 0x28 && m[1] == 0xb5 && m[2] == 0x2f && m[3] == 0xfd)
		return CQ_COMPRESSION_ZSTD;
	if (n >= 6 && !memcmp(m, "\xfd" "7zXZ\0", 6))
		return CQ_COMPRESSION_XZ;
	if (n >= 4 && m[0] == 0x04 && m[1] == 0x22 && m[2] == 0x4d && m[3] == 0x18)
		return CQ_COMPRESSION_LZ4;
	/* zlib: CMF 0x78 and a header checksum divisible by 31 */
	if (n >= 2 && m[0] == 0x78 && ((m[0] << 8) | m[1]) % 31 == 0)
		return CQ_COMPRESSION_ZLIB;
	return CQ_COMPRESSION_NONE;
}

const char *cq_compression_name(enum cq_compression c)
{
	static const char *const names[] = {"none", "gzip", "zlib", "zstd", "xz", "lz4"};
	return (unsigned)c < sizeof(names) / sizeof(names[0]) ? names[c] : "?";
}

static bool all_zero(const unsigned char *p, size_t n)
{
	return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

/* Where the output goes: bounded, zero chunks as holes. */
struct sink {
	int out;
	uint64_t total, max;
	const char *path, *fmt;
};

static struct cq_error *put(struct sink *s, const unsigned char *p, size_t n)
{
	if (n > s->max - s->total)
		return cq_error_create(CQ_ERR_COMPRESSED, "%s: %s: expands to more than %llu bytes; raise --max-inflate if "
				       "this file is genuine", s->path, s->fmt, (unsigned long long)s->max);
	if (all_zero(p, n)) {
		if (n && lseek(s->out, (off_t)n, SEEK_CUR) < 0)
			return cq_error_errno(errno, "%s: temporary file", s->path);
	} else {
		size_t done = 0;
		while (done < n) {
			ssize_t w = write(s->out, p + done, n - done);
			if (w <= 0)
				return cq_error_errno(w < 0 ? errno : ENOSPC, "%s: writing the expanded copy", s->path);
			done += (size_t)w;
		}
	}
	s->total += n;
	return NULL;
}

/* Where the input comes from. */
struct source {
	int in;
	unsigned char *buf;
	size_t len, pos;
	bool eof;
};

static struct cq_error *refill(struct source *r, const char *path)
{
	ssize_t n;
	do
		n = read(r->in, r->buf, CHUNK);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return cq_error_errno(errno, "%s: read", path);
	r->len = (size_t)n;
	r->pos = 0;
	r->eof = n == 0;
	return NULL;
}

/* After a complete stream: the rest of the input is zero padding (accepted) or more
 * data (false). */
static struct cq_error *only_padding(struct source *r, const char *path, bool *padding)
{
	*padding = true;
	for (;;) {
		if (!all_zero(r->buf + r->pos, r->len - r->pos)) {
			*padding = false;
			return NULL;
		}
		struct cq_error *err = refill(r, path);
		if (err || r->eof)
			return err;
	}
}

static struct cq_error *truncated(const struct sink *s)
{
	return cq_error_create(CQ_ERR_COMPRESSED, "%s: compressed stream ends early (%s, truncated after %llu bytes of output)",
			       s->path, s->fmt, (unsigned long long)s->total);
}

static struct cq_error *corrupt(const struct sink *s, const char *why)
{
	return cq_error_create(CQ_ERR_COMPRESSED, "%s: corrupt compressed data (%s) after %llu bytes of output (%s)", s->path,
			       s->fmt, (unsigned long long)s->total, why);
}

/* gzip members or one zlib stream */
static struct cq_error *run_zlib(struct source *r, struct sink *s, unsigned char *obuf)
{
	z_stream zs = {0};
	struct cq_error *err = NULL;
	if (inflateInit2(&zs, 15 + 32) != Z_OK)
		return cq_error_create(CQ_ERR_INTERNAL, "%s: zlib inflateInit failed", s->path);
	for (;;) {
		if (zs.avail_in == 0 && !r->eof) {
			if ((err = refill(r, s->path)))
				break;
			zs.next_in = r->buf;
			zs.avail_in = (uInt)r->len;
		}
		zs.next_out = obuf;
		zs.avail_out = CHUNK;
		int rc = inflate(&zs, Z_NO_FLUSH);
		size_t have = CHUNK - zs.avail_out;
		if (rc != Z_OK && rc != Z_STREAM_END && !(rc == Z_BUF_ERROR && have)) {
			err = rc == Z_BUF_ERROR && r->eof ? truncated(s) : corrupt(s, zs.msg ? zs.msg : "zlib error");
			break;
		}
		if ((err = put(s, obuf, have)))
			break;
		if (rc == Z_STREAM_END) {
			/* concatenated gzip members continue; trailing zero padding is accepted */
			r->pos = r->len - zs.avail_in;
			if (zs.avail_in == 0 && !r->eof) {
				if ((err = refill(r, s->path)))
					break;
			}
			bool padding;
			if ((err = only_padding(r, s->path, &padding)) || padding)
				break;
			zs.next_in = r->buf + r->pos;
			zs.avail_in = (uInt)(r->len - r->pos);
			inflateReset(&zs);
		} else if (rc == Z_BUF_ERROR && r->eof && zs.avail_in == 0 && have == 0) {
			err = truncated(s);
			break;
		}
	}
	inflateEnd(&zs);
	return err;
}

/* zstd frames (ZSTD_decompressStream goes from one frame to the next by itself) */
static struct cq_error *run_zstd(struct source *r, struct sink *s, unsigned char *obuf)
{
	ZSTD_DStream *ds = ZSTD_createDStream();
	struct cq_error *err = NULL;
	if (!ds)
		return &cq_error_nomem;
	ZSTD_DCtx_setParameter(ds, ZSTD_d_windowLogMax, ZSTD_WINDOW_LOG_MAX);
	size_t last = 0;       /* 0: at a frame boundary, everything flushed */
	bool more_out = false; /* the last call filled the output: it may hold more */
	for (;;) {
		if (r->pos == r->len && !more_out) {
			if (r->eof || (err = refill(r, s->path)))
				break;
			if (r->eof && !last)
				break;
		}
		if (!last && !more_out && r->pos < r->len && r->buf[r->pos] == 0) {
			bool padding; /* zeros where a frame would start: padding to the end, or corrupt */
			if ((err = only_padding(r, s->path, &padding)) || padding)
				break;
		}
		ZSTD_inBuffer ib = {r->buf, r->len, r->pos};
		ZSTD_outBuffer ob = {obuf, CHUNK, 0};
		size_t before = r->pos;
		size_t rc = ZSTD_decompressStream(ds, &ob, &ib);
		if (ZSTD_isError(rc)) {
			err = ZSTD_getErrorCode(rc) == ZSTD_error_frameParameter_windowTooLarge
				      ? cq_error_create(CQ_ERR_COMPRESSED, "%s: zstd frame needs a window over 2^%d bytes: refused",
							s->path, ZSTD_WINDOW_LOG_MAX)
				      : corrupt(s, ZSTD_getErrorName(rc));
			break;
		}
		r->pos = ib.pos;
		if ((err = put(s, obuf, ob.pos)))
			break;
		/* a call that neither read nor wrote says only what the next frame would need */
		if (ob.pos || ib.pos != before)
			last = rc;
		else if (before < r->len && !more_out) {
			err = corrupt(s, "the decoder takes no more input"); /* never loop on it */
			break;
		}
		more_out = ob.pos == ob.size && rc; /* 0: the frame is done and flushed */
		if (r->eof && r->pos == r->len && !more_out)
			break; /* nothing more comes out of what was read */
	}
	if (!err && last)
		err = truncated(s);
	ZSTD_freeDStream(ds);
	return err;
}

/* xz streams (LZMA_CONCATENATED: one after another, with the format's own padding) */
static struct cq_error *run_xz(struct source *r, struct sink *s, unsigned char *obuf)
{
	lzma_stream st = LZMA_STREAM_INIT;
	struct cq_error *err = NULL;
	if (lzma_stream_decoder(&st, XZ_MEMLIMIT, LZMA_CONCATENATED) != LZMA_OK)
		return cq_error_create(CQ_ERR_INTERNAL, "%s: liblzma's decoder did not start", s->path);
	for (;;) {
		if (st.avail_in == 0 && !r->eof) {
			if ((err = refill(r, s->path)))
				break;
			st.next_in = r->buf;
			st.avail_in = r->len;
		}
		st.next_out = obuf;
		st.avail_out = CHUNK;
		lzma_ret rc = lzma_code(&st, r->eof ? LZMA_FINISH : LZMA_RUN);
		if ((err = put(s, obuf, CHUNK - st.avail_out)))
			break;
		if (rc == LZMA_STREAM_END)
			break;
		if (rc == LZMA_OK)
			continue;
		if (rc == LZMA_MEMLIMIT_ERROR)
			err = cq_error_create(CQ_ERR_COMPRESSED, "%s: xz stream needs more than %llu MiB of memory to "
					      "decode: refused", s->path, (unsigned long long)(XZ_MEMLIMIT >> 20));
		else if (rc == LZMA_BUF_ERROR)
			err = truncated(s);
		else
			err = corrupt(s, rc == LZMA_FORMAT_ERROR ? "not the xz format" :
					 rc == LZMA_OPTIONS_ERROR ? "unsupported options" :
					 rc == LZMA_DATA_ERROR ? "data error" : rc == LZMA_MEM_ERROR ? "out of memory" : "liblzma error");
		break;
	}
	lzma_end(&st);
	return err;
}

/* lz4 frames (the decompression context starts the next frame by itself) */
static struct cq_error *run_lz4(struct source *r, struct sink *s, unsigned char *obuf)
{
	LZ4F_dctx *dc;
	struct cq_error *err = NULL;
	if (LZ4F_isError(LZ4F_createDecompressionContext(&dc, LZ4F_VERSION)))
		return &cq_error_nomem;
	size_t hint = 1; /* 0: a frame just ended */
	bool started = false, more_out = false;
	for (;;) {
		if (r->pos == r->len && !more_out) {
			if (r->eof || (err = refill(r, s->path)))
				break;
			if (r->eof && (!hint || !started))
				break;
		}
		if (started && !hint && !more_out && r->pos < r->len && r->buf[r->pos] == 0) {
			bool padding;
			if ((err = only_padding(r, s->path, &padding)) || padding)
				break;
		}
		size_t in = r->len - r->pos, out = CHUNK;
		size_t rc = LZ4F_decompress(dc, obuf, &out, r->buf + r->pos, &in, NULL);
		if (LZ4F_isError(rc)) {
			err = corrupt(s, LZ4F_getErrorName(rc));
			break;
		}
		if (in || out) /* a call that neither read nor wrote: the next frame's needs only */
			hint = rc;
		else if (r->pos < r->len && !more_out) {
			err = corrupt(s, "the decoder takes no more input"); /* never loop on it */
			break;
		}
		started = true;
		r->pos += in;
		if ((err = put(s, obuf, out)))
			break;
		more_out = out == CHUNK && rc; /* 0: the frame is done and flushed */
		if (r->eof && r->pos == r->len && !more_out)
			break;
	}
	if (!err && hint)
		err = truncated(s);
	LZ4F_freeDecompressionContext(dc);
	return err;
}

struct cq_error *cq_decompress(enum cq_compression c, int in, int out, const char *path, uint64_t max,
			       uint64_t *size_ret)
{
	unsigned char *buf = malloc(2 * CHUNK);
	struct sink s = {.out = out, .max = max, .path = path, .fmt = cq_compression_name(c)};
	struct source r = {.in = in, .buf = buf};
	struct cq_error *err;
	*size_ret = 0;
	if (!buf)
		return &cq_error_nomem;
	switch (c) {
	case CQ_COMPRESSION_GZIP:
	case CQ_COMPRESSION_ZLIB: err = run_zlib(&r, &s, buf + CHUNK); break;
	case CQ_COMPRESSION_ZSTD: err = run_zstd(&r, &s, buf + CHUNK); break;
	case CQ_COMPRESSION_XZ: err = run_xz(&r, &s, buf + CHUNK); break;
	case CQ_COMPRESSION_LZ4: err = run_lz4(&r, &s, buf + CHUNK); break;
	default: err = cq_error_create(CQ_ERR_INTERNAL, "%s: not compressed", path); break;
	}
	free(buf);
	/* the holes at the end are part of the output */
	if (!err && ftruncate(out, (off_t)s.total) < 0)
		err = cq_error_errno(errno, "%s: temporary file", path);
	*size_ret = s.total;
	return err;
}
