/* SPDX-License-Identifier: MIT */
#include "error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cq_error cq_error_nomem = {
	.code = CQ_ERR_NOMEM,
	.message = (char *)"out of memory",
};

static struct cq_error *error_vcreate(enum cq_error_code code, const char *fmt, va_list ap)
{
	struct cq_error *err = calloc(1, sizeof(*err));
	if (!err)
		return &cq_error_nomem;
	if (vasprintf(&err->message, fmt, ap) < 0) {
		free(err);
		return &cq_error_nomem;
	}
	err->code = code;
	return err;
}

struct cq_error *cq_error_create(enum cq_error_code code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	struct cq_error *err = error_vcreate(code, fmt, ap);
	va_end(ap);
	return err;
}

struct cq_error *cq_error_fault(uint64_t address, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	struct cq_error *err = error_vcreate(CQ_ERR_FAULT, fmt, ap);
	va_end(ap);
	if (err != &cq_error_nomem) {
		err->address = address;
		err->has_address = true;
	}
	return err;
}

struct cq_error *cq_error_errno(int errnum, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	struct cq_error *err = error_vcreate(CQ_ERR_IO, fmt, ap);
	va_end(ap);
	if (err == &cq_error_nomem)
		return err;
	char *msg;
	if (asprintf(&msg, "%s: %s", err->message, strerror(errnum)) < 0) {
		cq_error_destroy(err);
		return &cq_error_nomem;
	}
	free(err->message);
	err->message = msg;
	err->errnum = errnum;
	return err;
}

struct cq_error *cq_error_wrap(struct cq_error *err, const char *fmt, ...)
{
	if (!err || err == &cq_error_nomem)
		return err;
	char *prefix, *msg;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&prefix, fmt, ap);
	va_end(ap);
	if (n < 0)
		return err; /* keep the original message rather than lose it */
	if (asprintf(&msg, "%s: %s", prefix, err->message) >= 0) {
		free(err->message);
		err->message = msg;
	}
	free(prefix);
	return err;
}

void cq_error_destroy(struct cq_error *err)
{
	if (!err || err == &cq_error_nomem)
		return;
	free(err->message);
	free(err);
}

const char *cq_error_code_name(enum cq_error_code code)
{
	switch (code) {
	case CQ_ERR_NOMEM: return "nomem";
	case CQ_ERR_IO: return "io";
	case CQ_ERR_FORMAT: return "format";
	case CQ_ERR_UNSUPPORTED: return "unsupported";
	case CQ_ERR_MALFORMED: return "malformed";
	case CQ_ERR_COMPRESSED: return "compressed";
	case CQ_ERR_PROCESS: return "process";
	case CQ_ERR_JOB: return "job";
	case CQ_ERR_FAULT: return "fault";
	case CQ_ERR_NOT_FOUND: return "not_found";
	case CQ_ERR_MISSING: return "missing";
	case CQ_ERR_USAGE: return "usage";
	case CQ_ERR_INTERNAL: return "internal";
	case CQ_ERR_PLUGIN: return "plugin";
	}
	return "unknown";
}
