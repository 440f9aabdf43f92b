/* SPDX-License-Identifier: MIT */
/* Reading the recorder's rings (events.h). The layout comes from the header in the core:
 * offsets of the header's own members are those of recorder/coreq_rec_format.h (fixed
 * sizes, no padding that depends on the writer), record fields are found by name.
 *
 * A ring is read as its header, then the slots written so far (one read: a ring that has
 * wrapped is read whole), into one buffer kept for every ring. Every slot is checked, which
 * costs a load each: the kept and torn counts. Records are in order along the ring from
 * the slot after the newest (a sane writer's): the last N are found walking back from the
 * newest, and only they are decoded; a ring out of that order (damage) is sorted. */
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "corelib/image.h"
#include "events.h"
#include "fields.h"
#include "lookup.h"
#include "recorder/coreq_rec_format.h"

/* What a hostile or damaged header may claim before it is believed. */
#define MAX_RING_RECORDS (1u << 20)
#define MAX_RINGS 65536u
#define MAX_RECORD 4096u
#define MAX_RING_BYTES (UINT64_C(64) << 20)

struct layout {
	bool big;
	unsigned record_size, ring_records, ring_header_size, max_rings, nkinds;
	/* offset and size of the record fields coreq knows by name (size 0: absent) */
	struct {
		unsigned off, size;
	} seq, time, kind, flags, a, b, c, d, codeptr;
	char kinds[CQ_REC_MAX_KINDS][CQ_REC_NAME + 1];
};

static uint64_t load(const struct layout *l, const uint8_t *p, unsigned size)
{
	/* the sizes of every record field: a load, swapped when the writer's order is not ours */
	bool swap = l->big != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__);
	if (size == 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		return swap ? __builtin_bswap64(v) : v;
	}
	if (size == 4) {
		uint32_t v;
		memcpy(&v, p, 4);
		return swap ? __builtin_bswap32(v) : v;
	}
	uint64_t v = 0;
	for (unsigned i = 0; i < size; i++)
		v |= (uint64_t)p[l->big ? size - 1 - i : i] << (8 * i);
	return v;
}

#define HDR(member) offsetof(struct cq_rec_header, member)
#define HDR_U(buf, member) load(&l, (buf) + HDR(member), sizeof(((struct cq_rec_header *)0)->member))

static json_t *hex(uint64_t v)
{
	return cq_json_hex(v);
}

/* The field of a record, or 0 if the layout has none. */
static uint64_t field(const struct layout *l, const uint8_t *rec, unsigned off, unsigned size)
{
	return size ? load(l, rec + off, size) : 0;
}

static struct cq_error *parse_header(struct cq_core *core, uint64_t at, struct layout *lo,
				     json_t **ret)
{
	uint8_t h[sizeof(struct cq_rec_header)];
	struct cq_error *err = cq_core_read(core, at, h, sizeof(h));
	if (err)
		return cq_error_wrap(err, "reading the recorder header coreq_rec");
	if (memcmp(h + HDR(magic), CQ_REC_MAGIC, 8) != 0)
		return cq_error_create(CQ_ERR_MALFORMED, "coreq_rec at 0x%" PRIx64 " has no COREQREC magic", at);
	struct layout l = {0};
	const uint8_t *bo = h + HDR(byte_order);
	if (bo[0] == 1 && bo[1] == 2 && bo[2] == 3 && bo[3] == 4)
		l.big = true;
	else if (!(bo[0] == 4 && bo[1] == 3 && bo[2] == 2 && bo[3] == 1))
		return cq_error_create(CQ_ERR_MALFORMED, "coreq_rec at 0x%" PRIx64 ": byte-order mark %02x%02x%02x%02x is neither order",
				       at, bo[0], bo[1], bo[2], bo[3]);
	uint32_t version = (uint32_t)HDR_U(h, version);
	if (version != CQ_REC_VERSION)
		return cq_error_create(CQ_ERR_UNSUPPORTED, "coreq_rec at 0x%" PRIx64 ": recorder format version %u; this coreq reads version %d",
				       at, version, CQ_REC_VERSION);
	l.record_size = (unsigned)HDR_U(h, record_size);
	l.ring_records = (unsigned)HDR_U(h, ring_records);
	l.ring_header_size = (unsigned)HDR_U(h, ring_header_size);
	l.max_rings = (unsigned)HDR_U(h, max_rings);
	unsigned nfields = (unsigned)HDR_U(h, nfields);
	l.nkinds = (unsigned)HDR_U(h, nkinds);
	unsigned word = (unsigned)HDR_U(h, word_size);
	if (l.record_size < 16 || l.record_size > MAX_RECORD || !l.ring_records ||
	    l.ring_records > MAX_RING_RECORDS || (l.ring_records & (l.ring_records - 1)) ||
	    l.ring_header_size < sizeof(struct cq_rec_ring) || l.ring_header_size > MAX_RECORD ||
	    l.max_rings > MAX_RINGS || nfields > CQ_REC_MAX_FIELDS || l.nkinds > CQ_REC_MAX_KINDS ||
	    (word != 4 && word != 8))
		return cq_error_create(CQ_ERR_MALFORMED, "coreq_rec at 0x%" PRIx64 ": implausible layout (record %u bytes, %u per ring, ring header %u, %u rings, %u fields, %u kinds, word %u)",
				       at, l.record_size, l.ring_records, l.ring_header_size, l.max_rings,
				       nfields, l.nkinds, word);
	json_t *fields = json_object();
	for (unsigned i = 0; i < nfields; i++) {
		const uint8_t *f = h + HDR(fields) + i * sizeof(struct cq_rec_field);
		char name[CQ_REC_NAME + 1];
		memcpy(name, f, CQ_REC_NAME);
		name[CQ_REC_NAME] = 0;
		unsigned off = (unsigned)load(&l, f + offsetof(struct cq_rec_field, offset), 2);
		unsigned size = (unsigned)load(&l, f + offsetof(struct cq_rec_field, size), 2);
		if ((size != 4 && size != 8) || off + size > l.record_size)
			continue; /* not believed: left out */
		json_object_set_new(fields, name, json_pack("{s:i, s:i}", "offset", off, "size", size));
#define KNOWN(n, member) if (!strcmp(name, n)) { l.member.off = off; l.member.size = size; }
		KNOWN("seq", seq) KNOWN("time_ns", time) KNOWN("kind", kind) KNOWN("flags", flags)
		KNOWN("a", a) KNOWN("b", b) KNOWN("c", c) KNOWN("d", d) KNOWN("codeptr", codeptr)
#undef KNOWN
	}
	if (!l.seq.size || !l.kind.size) {
		json_decref(fields);
		return cq_error_create(CQ_ERR_MALFORMED, "coreq_rec at 0x%" PRIx64 ": the record layout has no seq or kind field", at);
	}
	json_t *kinds = json_array();
	for (unsigned k = 0; k < l.nkinds; k++) {
		memcpy(l.kinds[k], h + HDR(kinds) + k * CQ_REC_NAME, CQ_REC_NAME);
		l.kinds[k][CQ_REC_NAME] = 0;
		json_array_append_new(kinds, cq_json_str(l.kinds[k]));
	}
	char producer[33];
	memcpy(producer, h + HDR(producer), 32);
	producer[32] = 0;
	*lo = l;
	*ret = json_pack("{s:o, s:i, s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:o, s:o, s:o, s:o}",
			 "address", hex(at), "version", version, "byte_order", l.big ? "big" : "little",
			 "word_size", word, "record_size", l.record_size, "ring_records", l.ring_records,
			 "max_rings", l.max_rings, "rings_in_use", (int)HDR_U(h, nrings),
			 "lost_threads", (int)HDR_U(h, lost_threads), "producer", cq_json_str(producer),
			 "fields", fields, "kinds", kinds, "rings_address", hex(HDR_U(h, rings)));
	json_object_set_new(*ret, "start_time_ns", json_integer((json_int_t)HDR_U(h, start_time_ns)));
	return NULL;
}

/* A ring table slot and the ring address it holds. */
struct slot_at {
	uint64_t at;
	unsigned slot;
};

static int by_address(const void *x, const void *y)
{
	const struct slot_at *a = x, *b = y;
	return a->at != b->at ? (a->at > b->at) - (a->at < b->at) : (a->slot > b->slot) - (a->slot < b->slot);
}

static int by_slot(const void *x, const void *y)
{
	const struct slot_at *a = x, *b = y;
	return (a->slot > b->slot) - (a->slot < b->slot);
}

/* A complete record of a ring out of order: its sequence number and slot. */
struct rec {
	uint64_t seq;
	uint32_t slot;
};

static int by_seq(const void *x, const void *y)
{
	const struct rec *a = x, *b = y;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

struct cq_events {
	struct cq_core *core;
	struct layout l;
	json_t *recorder, *problems;
	uint64_t t0;
	struct slot_at *rings; /* to read, in slot order */
	size_t nrings;
	bool touch;            /* cq_events_touch(): look up what events name, decode nothing */
	uint64_t budget;       /* touch: bytes a ring may have; one with more is not read */
	bool over_budget;      /* the ring read last had more */
	struct cq_lookup lk;
	/* the ring read last: its header and slots [0, used) */
	uint8_t *buf;
	size_t cap;
	uint64_t used, start, head;
	char error[1024];
	/* its events still to return (left): along the ring from position k on, or (a ring out
	 * of order) recs[rec_i, nrecs) */
	uint64_t k, left;
	struct rec *recs;
	size_t nrecs, rec_i;
	struct cq_event ev;
	char text[CQ_EVENT_MAX_FIELDS][CQ_FIELD_TEXT];
};

struct cq_error *cq_events_open(struct cq_core *core, struct cq_events **ret)
{
	struct cq_symref ref;
	struct cq_error *err = cq_core_load_images(core);
	cq_error_destroy(err);
	if ((err = cq_core_lookup(core, CQ_REC_SYMBOL, NULL, &ref)))
		return cq_error_wrap(err, "no flight recorder in the core (the recorder library defines coreq_rec: run the program with OMP_TOOL_LIBRARIES=libcoreq_rec.so, or link it for GASP events)");
	struct cq_events *ev = calloc(1, sizeof(*ev));
	if (!ev)
		return &cq_error_nomem;
	ev->core = core;
	cq__lookup_init(&ev->lk, core);
	if ((err = parse_header(core, ref.address, &ev->l, &ev->recorder))) {
		cq_events_close(ev);
		return err;
	}
	const struct layout *l = &ev->l;
	json_object_set_new(ev->recorder, "image", cq_json_str(ref.image->name));
	ev->problems = json_array();
	ev->t0 = (uint64_t)json_integer_value(json_object_get(ev->recorder, "start_time_ns"));
	uint64_t table = strtoull(json_string_value(json_object_get(ev->recorder, "rings_address")), NULL, 16);
	size_t n = l->max_rings;
	uint8_t *addrs = malloc(n ? n * 8 : 1);
	ev->rings = calloc(n ? n : 1, sizeof(*ev->rings));
	if (!ev->problems || !addrs || !ev->rings) {
		free(addrs);
		cq_events_close(ev);
		return &cq_error_nomem;
	}
	err = n ? cq_core_read(core, table, addrs, n * 8) : NULL;
	if (err) {
		json_array_append_new(ev->problems, json_pack("{s:s, s:o}", "item", "recorder", "message",
							      cq_json_str(err->message ? err->message : "ring table unreadable")));
		cq_error_destroy(err);
		free(addrs);
		*ret = ev;
		return NULL;
	}
	/* Each thread has a ring of its own: a slot naming a ring another slot names (or one
	 * overlapping it) is a corrupt or crafted table. Read every ring once, so the work is
	 * bounded by the memory the core holds, not by slots x ring size (65,536 slots on one
	 * 64 MiB ring took hours). */
	size_t nused = 0;
	for (unsigned i = 0; i < n; i++) {
		uint64_t at = load(l, addrs + (size_t)i * 8, 8);
		if (at)
			ev->rings[nused++] = (struct slot_at){at, i};
	}
	free(addrs);
	qsort(ev->rings, nused, sizeof(*ev->rings), by_address);
	uint64_t ring_bytes = (uint64_t)l->ring_header_size + (uint64_t)l->ring_records * l->record_size;
	size_t nkept = nused ? 1 : 0;
	for (size_t k = 1, keep = 0; k < nused; k++) {
		if (ev->rings[k].at - ev->rings[keep].at >= ring_bytes) {
			keep = k;
			ev->rings[nkept++] = ev->rings[k];
		}
	}
	if (nused > nkept)
		json_array_append_new(ev->problems, json_pack("{s:s, s:o}", "item", "recorder",
							      "message", json_sprintf("%zu ring table slot(s) name a ring another slot names (or overlap one): each ring is read once; the table is corrupt",
										      nused - nkept)));
	qsort(ev->rings, nkept, sizeof(*ev->rings), by_slot);
	ev->nrings = nkept;
	*ret = ev;
	return NULL;
}

void cq_events_close(struct cq_events *ev)
{
	if (!ev)
		return;
	cq__lookup_deinit(&ev->lk);
	json_decref(ev->recorder);
	json_decref(ev->problems);
	free(ev->rings);
	free(ev->buf);
	free(ev->recs);
	free(ev);
}

json_t *cq_events_recorder(struct cq_events *ev)
{
	return ev->recorder;
}

size_t cq_events_nrings(const struct cq_events *ev)
{
	return ev->nrings;
}

json_t *cq_events_problems(struct cq_events *ev)
{
	return ev->problems;
}

/* The record in slot @p slot of the ring read last. */
static const uint8_t *record(const struct cq_events *ev, uint64_t slot)
{
	return ev->buf + ev->l.ring_header_size + (size_t)slot * ev->l.record_size;
}

/* Slot @p slot holds a complete record: its sequence number (from 1), else 0; @p torn
 * counts a slot written before and not now complete, or one holding another's record. */
static uint64_t complete(const struct cq_events *ev, uint64_t slot, uint64_t *torn)
{
	const struct layout *l = &ev->l;
	uint64_t seq = field(l, record(ev, slot), l->seq.off, l->seq.size);
	if (seq == 0) {
		if (slot < ev->head) /* written before, now being rewritten: torn */
			++*torn;
		return 0;
	}
	if (((seq - 1) & (l->ring_records - 1)) != slot || seq > ev->head + 1) {
		++*torn;
		return 0;
	}
	return seq;
}

/* Slot of the @p k-th position along the ring, from its oldest. */
static uint64_t along(const struct cq_events *ev, uint64_t k)
{
	return (ev->start + k) & (ev->l.ring_records - 1);
}

static void ring_error(struct cq_events *ev, struct cq_events_ring *r, const char *message)
{
	snprintf(ev->error, sizeof(ev->error), "%s", message);
	r->error = ev->error;
	json_array_append_new(ev->problems, json_pack("{s:s, s:o}", "item", "recorder ring", "message",
						      cq_json_str(ev->error)));
}

/* Read @p bytes at @p at into the buffer from @p off; false (and the ring's error) if not. */
static bool read_into(struct cq_events *ev, struct cq_events_ring *r, uint64_t at, size_t off, size_t bytes)
{
	if (off + bytes > ev->cap) {
		uint8_t *b = realloc(ev->buf, off + bytes);
		if (!b) {
			ring_error(ev, r, cq_error_nomem.message ? cq_error_nomem.message : "out of memory");
			return false;
		}
		ev->buf = b;
		ev->cap = off + bytes;
	}
	struct cq_error *err = cq_core_read(ev->core, at, ev->buf + off, bytes);
	if (err) {
		ring_error(ev, r, err->message ? err->message : "unreadable");
		cq_error_destroy(err);
		return false;
	}
	r->bytes += bytes;
	return true;
}

void cq_events_ring(struct cq_events *ev, size_t i, unsigned last, struct cq_events_ring *r)
{
	const struct layout *l = &ev->l;
	memset(r, 0, sizeof(*r));
	r->address = ev->rings[i].at;
	r->slot = ev->rings[i].slot;
	ev->left = 0;
	ev->nrecs = ev->rec_i = 0;
	uint64_t bytes = (uint64_t)l->ring_header_size + (uint64_t)l->ring_records * l->record_size;
	if (bytes > MAX_RING_BYTES) {
		ring_error(ev, r, "ring larger than 64 MiB: not read");
		return;
	}
	if (!read_into(ev, r, r->address, 0, l->ring_header_size))
		return;
	uint32_t magic = (uint32_t)load(l, ev->buf + offsetof(struct cq_rec_ring, magic), 4);
	uint32_t rsize = (uint32_t)load(l, ev->buf + offsetof(struct cq_rec_ring, record_size), 4);
	ev->head = load(l, ev->buf + offsetof(struct cq_rec_ring, head), 8);
	r->tid = load(l, ev->buf + offsetof(struct cq_rec_ring, tid), 8);
	r->thread_data = load(l, ev->buf + offsetof(struct cq_rec_ring, thread_data), 8);
	r->head = ev->head;
	if (magic != CQ_REC_RING_MAGIC || rsize != l->record_size) {
		r->has_ids = true;
		ring_error(ev, r, "no RING magic or a record size other than the header's: not read");
		return;
	}
	/* the slots written so far: record n is in slot n mod ring_records, and record head
	 * may be complete (the writer stopped between its commit and head) */
	uint64_t R = l->ring_records;
	ev->used = ev->head >= R ? R : ev->head + 1;
	ev->start = 0;
	if (ev->touch && r->bytes + ev->used * l->record_size > ev->budget) {
		ev->over_budget = true;
		return;
	}
	if (!read_into(ev, r, r->address + l->ring_header_size, l->ring_header_size,
		       (size_t)ev->used * l->record_size))
		return; /* as if the ring were not there: no ids */
	r->has_ids = true;
	/* a ring that has wrapped: its oldest record is in the slot after the newest, which is
	 * record head - 1 or (if complete) record head */
	uint64_t t = 0;
	if (ev->head >= R)
		ev->start = complete(ev, ev->head & (R - 1), &t) == ev->head + 1 ? (ev->head + 1) & (R - 1) :
			    ev->head & (R - 1);
	uint64_t kept = 0, torn = 0, prev = 0;
	bool in_order = true;
	for (uint64_t k = 0; k < ev->used; k++) {
		uint64_t seq = complete(ev, along(ev, k), &torn);
		if (!seq)
			continue;
		kept++;
		if (seq <= prev)
			in_order = false;
		prev = seq;
	}
	r->kept = kept;
	r->torn = torn;
	uint64_t want = last && kept > last ? last : kept;
	if (torn)
		json_array_append_new(ev->problems, json_pack("{s:s, s:s}", "item", "torn records", "message",
							      "a record being written when the process died is left out (its commit marker is not set)"));
	if (in_order) {
		/* the oldest of the last @p want: walking back from the newest */
		uint64_t k = ev->used, found = 0;
		while (found < want && k > 0)
			if (complete(ev, along(ev, --k), &t))
				found++;
		ev->k = k;
		ev->left = want;
		return;
	}
	struct rec *recs = realloc(ev->recs, (size_t)(kept ? kept : 1) * sizeof(*recs));
	if (!recs) {
		ev->left = 0;
		return; /* the counts stand; no events */
	}
	ev->recs = recs;
	for (uint64_t k = 0; k < ev->used; k++) {
		uint64_t slot = along(ev, k), seq = complete(ev, slot, &t);
		if (seq)
			recs[ev->nrecs++] = (struct rec){seq, (uint32_t)slot};
	}
	qsort(recs, ev->nrecs, sizeof(*recs), by_seq);
	ev->rec_i = ev->nrecs - want;
	ev->left = want;
}

/* The record of the next event and its sequence number (from 1), or NULL. */
static const uint8_t *next_record(struct cq_events *ev, uint64_t *seq)
{
	if (!ev->left)
		return NULL;
	ev->left--;
	if (ev->nrecs) {
		struct rec *x = &ev->recs[ev->rec_i++];
		*seq = x->seq;
		return record(ev, x->slot);
	}
	uint64_t t = 0;
	for (; ev->k < ev->used; ev->k++) {
		uint64_t slot = along(ev, ev->k);
		if ((*seq = complete(ev, slot, &t))) {
			ev->k++;
			return record(ev, slot);
		}
	}
	ev->left = 0; /* cannot happen: the scan counted them */
	return NULL;
}

const struct cq_event *cq_events_next(struct cq_events *ev)
{
	const struct layout *l = &ev->l;
	uint64_t seq;
	const uint8_t *p = next_record(ev, &seq);
	if (!p)
		return NULL;
	cq__lookup_next(&ev->lk);
	struct cq_event *e = &ev->ev;
	uint64_t kind = field(l, p, l->kind.off, l->kind.size);
	uint64_t flags = field(l, p, l->flags.off, l->flags.size);
	uint64_t t = field(l, p, l->time.off, l->time.size);
	e->seq = seq - 1;
	e->time_ns = t >= ev->t0 ? t - ev->t0 : 0;
	e->kind = kind;
	e->kind_name = kind < l->nkinds && l->kinds[kind][0] ? l->kinds[kind] : NULL;
	e->phase = (flags & 3) == CQ_REC_BEGIN ? "begin" : (flags & 3) == CQ_REC_END ? "end" : "atomic";
	e->flags = (int64_t)flags;
	e->a = field(l, p, l->a.off, l->a.size);
	e->b = field(l, p, l->b.off, l->b.size);
	e->c = field(l, p, l->c.off, l->c.size);
	e->d = field(l, p, l->d.off, l->d.size);
	e->code = field(l, p, l->codeptr.off, l->codeptr.size);
	e->symbol = e->code ? cq__lookup(&ev->lk, CQ_LOOKUP_SYMBOL, e->code) : NULL;
	uint64_t slot[5] = {e->a, e->b, e->c, e->d, e->code};
	e->named = false;
	e->nfields = 0;
	if (kind < CQ_REC_MAX_KINDS)
		cq__events_fields(&ev->lk, (unsigned)kind, l->kinds, l->nkinds, (uint32_t)flags, slot, ev->touch,
				  e, ev->text);
	return e;
}

struct cq_error *cq_events_touch(struct cq_core *core, uint64_t *bytes, char **capped)
{
	*bytes = 0;
	*capped = NULL;
	struct cq_events *ev;
	struct cq_error *err = cq_events_open(core, &ev);
	if (err)
		return err;
	ev->touch = true;
	const struct layout *l = &ev->l;
	uint64_t total = sizeof(struct cq_rec_header) + (uint64_t)l->max_rings * 8;
	size_t done = 0; /* rings read whole, with what their events name */
	const char *why = NULL;
	for (size_t i = 0; i < ev->nrings; i++) {
		if (i >= CQ_EVENTS_TOUCH_MAX_RINGS || total + ev->lk.read_bytes >= CQ_EVENTS_TOUCH_MAX_BYTES) {
			why = i >= CQ_EVENTS_TOUCH_MAX_RINGS ? "rings" : "bytes";
			break;
		}
		struct cq_events_ring r;
		ev->budget = CQ_EVENTS_TOUCH_MAX_BYTES - (total + ev->lk.read_bytes);
		cq_events_ring(ev, i, 0, &r);
		total += r.bytes;
		while (ev->lk.read_bytes + total <= CQ_EVENTS_TOUCH_MAX_BYTES && cq_events_next(ev))
			;
		if (ev->over_budget || ev->left) {
			why = "bytes";
			break;
		}
		done++;
	}
	*bytes = total + ev->lk.read_bytes;
	if (why && asprintf(capped, "the flight recorder holds more than a snapshot copies of it (%u rings, %" PRIu64
			    " MiB; over in %s): %zu of its %zu rings copied whole, `coreq events` on the snapshot "
			    "reports what is missing", CQ_EVENTS_TOUCH_MAX_RINGS, CQ_EVENTS_TOUCH_MAX_BYTES >> 20, why,
			    done, ev->nrings) < 0)
		*capped = NULL;
	cq_events_close(ev);
	return NULL;
}
