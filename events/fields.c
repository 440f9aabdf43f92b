/* SPDX-License-Identifier: MIT */
/* Named fields of a recorder event (fields.h): the one table of recorder/kind_fields.h
 * applied to a record, the values as the document shows them (JSON and text print them as
 * they are). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/text.h"
#include "fields.h"
#include "recorder/kind_fields.h"

static const char *name_of(const struct cq_rec_value_name *names, uint64_t v)
{
	for (size_t i = 0; names && names[i].name; i++)
		if (names[i].value == v)
			return names[i].name;
	return NULL;
}

static void set_str(struct cq_event_field *f, const char *s)
{
	f->type = s ? CQ_EVENT_STR : CQ_EVENT_NULL;
	f->s = s;
}

static void set_int(struct cq_event_field *f, int64_t v)
{
	f->type = CQ_EVENT_INT;
	f->i = v;
}

static void set_number_text(struct cq_event_field *f, char *text, uint64_t v)
{
	snprintf(text, CQ_FIELD_TEXT, "%" PRIu64, v);
	set_str(f, text);
}

static void set_hex(struct cq_event_field *f, char *text, uint64_t v)
{
	set_str(f, cq_hex_str(text, v));
}

static void set_enum(struct cq_event_field *f, char *text, const struct cq_rec_value_name *names, uint64_t v)
{
	const char *n = name_of(names, v);
	if (n)
		set_str(f, n);
	else
		set_number_text(f, text, v);
}

/* "league|invoker_program"; bits without a name in hex; 0 by its name if it has one. */
static void set_flags(struct cq_event_field *f, char *buf, const struct cq_rec_value_name *names, uint64_t v)
{
	if (v == 0) {
		const char *n = name_of(names, 0);
		set_str(f, n ? n : "0");
		return;
	}
	size_t len = 0, size = 512;
	buf[0] = 0;
	uint64_t rest = v;
	for (size_t i = 0; names && names[i].name; i++) {
		uint64_t bit = names[i].value;
		if (bit && (v & bit) == bit) {
			len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? "|" : "", names[i].name);
			rest &= ~bit;
			if (len >= size) {
				set_str(f, "?"); /* cannot happen with the table's names */
				return;
			}
		}
	}
	if (rest)
		snprintf(buf + len, size - len, "%s0x%" PRIx64, len ? "|" : "", rest);
	set_str(f, buf);
}

static void value(struct cq_lookup *lk, const char (*kinds)[CQ_REC_NAME + 1], unsigned nkinds,
		  const struct cq_rec_field_desc *d, uint64_t v, struct cq_event_field *f, char *text)
{
	switch (d->show) {
	case CQ_SHOW_KIND:
		if (!v)
			set_str(f, NULL);
		else if (v < nkinds && kinds[v][0])
			set_str(f, kinds[v]);
		else
			set_number_text(f, text, v);
		return;
	case CQ_SHOW_HEX:
		set_hex(f, text, v);
		return;
	case CQ_SHOW_UINT:
		/* a count; one past what a JSON reader keeps exactly is still given exactly */
		if (v <= INT64_MAX)
			set_int(f, (int64_t)v);
		else
			set_hex(f, text, v);
		return;
	case CQ_SHOW_INT:
		set_int(f, (int64_t)v);
		return;
	case CQ_SHOW_ENUM:
		set_enum(f, text, d->names, v);
		return;
	case CQ_SHOW_FLAGS:
		set_flags(f, text, d->names, v);
		return;
	case CQ_SHOW_STRING:
		set_str(f, v ? cq__lookup(lk, CQ_LOOKUP_STRING, v) : NULL);
		return;
	case CQ_SHOW_CODE: {
		const char *s = v ? cq__lookup(lk, CQ_LOOKUP_SYMBOL_IMG, v) : NULL;
		if (s)
			set_str(f, s);
		else if (v)
			set_hex(f, text, v);
		else
			set_str(f, NULL);
		return;
	}
	}
	set_str(f, NULL);
}

/* The field named @p name: a name set again keeps its place, as in a JSON object. */
static struct cq_event_field *field_named(struct cq_event *e, const char *name)
{
	for (unsigned i = 0; i < e->nfields; i++)
		if (e->fields[i].name == name || (e->fields[i].name[0] == name[0] && !strcmp(e->fields[i].name, name)))
			return &e->fields[i];
	if (e->nfields >= CQ_EVENT_MAX_FIELDS)
		return NULL; /* cannot happen: a kind has at most 7, and 3 more */
	struct cq_event_field *f = &e->fields[e->nfields++];
	f->name = name;
	return f;
}

void cq__events_fields(struct cq_lookup *lk, unsigned kind, const char (*kinds)[CQ_REC_NAME + 1],
		       unsigned nkinds, uint32_t flags, const uint64_t slot[5], bool touch,
		       struct cq_event *e, char (*text)[CQ_FIELD_TEXT])
{
	e->named = false;
	e->nfields = 0;
	const char *kind_name = kind < nkinds ? kinds[kind] : NULL;
	const struct cq_rec_kind_desc *d = NULL;
	if (kind < CQ_REC_KIND_USER_FIRST) {
		if (cq_rec_kind_names[kind] && kind_name && !strcmp(kind_name, cq_rec_kind_names[kind]))
			d = &cq_rec_kind_descs[kind];
	} else if (kind < nkinds && kind < CQ_REC_MAX_KINDS) {
		d = &cq_rec_kind_descs[CQ_REC_KIND_USER_FIRST];
	}
	if (!d)
		return;
	bool ompt = cq_rec_kind_is_ompt(kind);
	unsigned phase = flags & 3;
	for (size_t i = 0; i < sizeof(d->f) / sizeof(d->f[0]) && d->f[i].name; i++) {
		const struct cq_rec_field_desc *fd = &d->f[i];
		if (fd->phases && !(fd->phases & (1u << phase)))
			continue;
		uint64_t v = slot[fd->slot] >> fd->shift;
		if (fd->bits && fd->bits < 64)
			v &= (UINT64_C(1) << fd->bits) - 1;
		if (touch) {
			/* what reads the core: the strings and the code a record names */
			if (v && fd->show == CQ_SHOW_STRING)
				cq__lookup(lk, CQ_LOOKUP_STRING, v);
			else if (v && fd->show == CQ_SHOW_CODE)
				cq__lookup(lk, CQ_LOOKUP_SYMBOL_IMG, v);
			continue;
		}
		struct cq_event_field *f = field_named(e, fd->name);
		if (!f)
			continue;
		value(lk, kinds, nkinds, fd, v, f, text[f - e->fields]);
		if (!ompt && fd->name[0] == 'f' && !strcmp(fd->name, "file")) {
			uint32_t line = (flags >> CQ_REC_LINE_SHIFT) & CQ_REC_LINE_MAX;
			if ((f = field_named(e, "line"))) {
				if (line)
					set_int(f, line);
				else
					set_str(f, NULL);
			}
		}
	}
	if (touch)
		return;
	e->named = true;
	struct cq_event_field *f;
	if (ompt && (flags & CQ_REC_F_BEGINEND) && (f = field_named(e, "endpoint")))
		set_str(f, "beginend");
	if (ompt && (flags & CQ_REC_F_STATE) && (f = field_named(e, "state")))
		set_enum(f, text[f - e->fields], cq_rec_state_names, (flags >> CQ_REC_STATE_SHIFT) & 0xffff);
}
