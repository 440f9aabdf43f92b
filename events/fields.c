/* SPDX-License-Identifier: MIT */
/* Named fields of a recorder event (fields.h): the one table of recorder/kind_fields.h
 * turned into JSON, which text output prints as it is. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corelib/image.h"
#include "base/text.h"
#include "fields.h"
#include "recorder/kind_fields.h"

/* A string a record points at (GASP file names, function signatures): at most this long. */
#define MAX_STRING 1024

static const char *name_of(const struct cq_rec_value_name *names, uint64_t v)
{
	for (size_t i = 0; names && names[i].name; i++)
		if (names[i].value == v)
			return names[i].name;
	return NULL;
}

static json_t *enum_json(const struct cq_rec_value_name *names, uint64_t v)
{
	const char *n = name_of(names, v);
	if (n)
		return json_string(n);
	return json_sprintf("%" PRIu64, v);
}

/* "league|invoker_program"; bits without a name in hex; 0 by its name if it has one. */
static json_t *flags_json(const struct cq_rec_value_name *names, uint64_t v)
{
	if (v == 0) {
		const char *n = name_of(names, 0);
		return json_string(n ? n : "0");
	}
	char buf[512];
	size_t len = 0;
	uint64_t rest = v;
	for (size_t i = 0; names && names[i].name; i++) {
		uint64_t bit = names[i].value;
		if (bit && (v & bit) == bit) {
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", len ? "|" : "", names[i].name);
			rest &= ~bit;
			if (len >= sizeof(buf))
				return json_string("?"); /* cannot happen with the table's names */
		}
	}
	if (rest)
		snprintf(buf + len, sizeof(buf) - len, "%s0x%" PRIx64, len ? "|" : "", rest);
	return json_string(buf);
}

static json_t *value_json(struct cq_core *core, const char (*kinds)[CQ_REC_NAME + 1], unsigned nkinds,
			  const struct cq_rec_field_desc *f, uint64_t v)
{
	switch (f->show) {
	case CQ_SHOW_KIND:
		if (!v)
			return json_null();
		if (v < nkinds && kinds[v][0])
			return cq_json_str(kinds[v]);
		return json_sprintf("%" PRIu64, v);
	case CQ_SHOW_HEX:
		return cq_json_hex(v);
	case CQ_SHOW_UINT:
		/* a count; one past what a JSON reader keeps exactly is still given exactly */
		return v <= INT64_MAX ? json_integer((json_int_t)v) : cq_json_hex(v);
	case CQ_SHOW_INT:
		return json_integer((json_int_t)(int64_t)v);
	case CQ_SHOW_ENUM:
		return enum_json(f->names, v);
	case CQ_SHOW_FLAGS:
		return flags_json(f->names, v);
	case CQ_SHOW_STRING: {
		char *s = NULL;
		struct cq_error *err = v ? cq_core_read_string(core, v, MAX_STRING, &s) : NULL;
		if (err) {
			cq_error_destroy(err);
			return json_null();
		}
		json_t *j = s ? cq_json_str(s) : json_null();
		free(s);
		return j;
	}
	case CQ_SHOW_CODE: {
		if (!v)
			return json_null();
		char *s = cq_core_symbol_name(core, v, true);
		json_t *j = s ? cq_json_str(s) : cq_json_hex(v);
		free(s);
		return j;
	}
	}
	return json_null();
}

json_t *cq__events_fields(struct cq_core *core, unsigned kind, const char (*kinds)[CQ_REC_NAME + 1],
			  unsigned nkinds, uint32_t flags, const uint64_t slot[5])
{
	const char *kind_name = kind < nkinds ? kinds[kind] : NULL;
	const struct cq_rec_kind_desc *d = NULL;
	if (kind < CQ_REC_KIND_USER_FIRST) {
		if (cq_rec_kind_names[kind] && kind_name && !strcmp(kind_name, cq_rec_kind_names[kind]))
			d = &cq_rec_kind_descs[kind];
	} else if (kind < nkinds && kind < CQ_REC_MAX_KINDS) {
		d = &cq_rec_kind_descs[CQ_REC_KIND_USER_FIRST];
	}
	if (!d)
		return NULL;
	bool ompt = cq_rec_kind_is_ompt(kind);
	unsigned phase = flags & 3;
	json_t *o = json_object();
	for (size_t i = 0; i < sizeof(d->f) / sizeof(d->f[0]) && d->f[i].name; i++) {
		const struct cq_rec_field_desc *f = &d->f[i];
		if (f->phases && !(f->phases & (1u << phase)))
			continue;
		uint64_t v = slot[f->slot] >> f->shift;
		if (f->bits && f->bits < 64)
			v &= (UINT64_C(1) << f->bits) - 1;
		json_object_set_new(o, f->name, value_json(core, kinds, nkinds, f, v));
		if (!ompt && !strcmp(f->name, "file")) {
			uint32_t line = (flags >> CQ_REC_LINE_SHIFT) & CQ_REC_LINE_MAX;
			json_object_set_new(o, "line", line ? json_integer(line) : json_null());
		}
	}
	if (ompt && (flags & CQ_REC_F_BEGINEND))
		json_object_set_new(o, "endpoint", json_string("beginend"));
	if (ompt && (flags & CQ_REC_F_STATE))
		json_object_set_new(o, "state", enum_json(cq_rec_state_names, (flags >> CQ_REC_STATE_SHIFT) & 0xffff));
	return o;
}
