/* SPDX-License-Identifier: MIT */
/* Reading the recorder's rings (events.h). The layout comes from the header in the core:
 * offsets of the header's own members are those of recorder/coreq_rec_format.h (fixed
 * sizes, no padding that depends on the writer), record fields are found by name. */
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "corelib/image.h"
#include "events.h"
#include "fields.h"
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
	uint64_t v = 0;
	for (unsigned i = 0; i < size; i++)
		v |= (uint64_t)p[l->big ? size - 1 - i : i] << (8 * i);
	return v;
}

#define HDR(member) offsetof(struct cq_rec_header, member)
#define HDR_U(buf, member) load(&l, (buf) + HDR(member), sizeof(((struct cq_rec_header *)0)->member))

static json_t *hex(uint64_t v)
{
	char b[24];
	snprintf(b, sizeof(b), "0x%" PRIx64, v);
	return cq_json_str(b);
}

/* The field of a record, or 0 if the layout has none. */
static uint64_t field(const struct layout *l, const uint8_t *rec, unsigned off, unsigned size)
{
	return size ? load(l, rec + off, size) : 0;
}

static json_t *code_json(struct cq_core *core, uint64_t a)
{
	json_t *o = json_pack("{s:o}", "address", hex(a));
	char *s = a ? cq_core_symbol_name(core, a, false) : NULL;
	json_object_set_new(o, "symbol", s ? cq_json_str(s) : json_null());
	free(s);
	return o;
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

struct rec {
	uint64_t seq;
	const uint8_t *p;
};

static int by_seq(const void *x, const void *y)
{
	const struct rec *a = x, *b = y;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* One ring: its thread and its last @p last complete records. */
static json_t *read_ring(struct cq_core *core, const struct layout *l, uint64_t at, unsigned last,
			 uint64_t t0)
{
	uint64_t bytes = (uint64_t)l->ring_header_size + (uint64_t)l->ring_records * l->record_size;
	json_t *r = json_pack("{s:o}", "address", hex(at));
	if (bytes > MAX_RING_BYTES) {
		json_object_set_new(r, "error", cq_json_str("ring larger than 64 MiB: not read"));
		return r;
	}
	uint8_t *buf = malloc((size_t)bytes);
	struct cq_error *err = buf ? cq_core_read(core, at, buf, (size_t)bytes) : &cq_error_nomem;
	if (err) {
		json_object_set_new(r, "error", cq_json_str(err->message ? err->message : "unreadable"));
		if (err != &cq_error_nomem)
			cq_error_destroy(err);
		free(buf);
		return r;
	}
	uint32_t magic = (uint32_t)load(l, buf + offsetof(struct cq_rec_ring, magic), 4);
	uint32_t rsize = (uint32_t)load(l, buf + offsetof(struct cq_rec_ring, record_size), 4);
	uint64_t head = load(l, buf + offsetof(struct cq_rec_ring, head), 8);
	json_object_set_new(r, "tid", json_integer((json_int_t)load(l, buf + offsetof(struct cq_rec_ring, tid), 8)));
	json_object_set_new(r, "thread_data", json_integer((json_int_t)load(l, buf + offsetof(struct cq_rec_ring, thread_data), 8)));
	json_object_set_new(r, "head", json_integer((json_int_t)head));
	if (magic != CQ_REC_RING_MAGIC || rsize != l->record_size) {
		json_object_set_new(r, "error", cq_json_str("no RING magic or a record size other than the header's: not read"));
		free(buf);
		return r;
	}
	struct rec *recs = calloc(l->ring_records, sizeof(*recs));
	size_t n = 0, torn = 0;
	for (unsigned i = 0; recs && i < l->ring_records; i++) {
		const uint8_t *p = buf + l->ring_header_size + (size_t)i * l->record_size;
		uint64_t seq = field(l, p, l->seq.off, l->seq.size);
		if (seq == 0) {
			if (i < head) /* written before, now being rewritten: torn */
				torn++;
			continue;
		}
		if (((seq - 1) & (l->ring_records - 1)) != i || seq > head + 1) {
			torn++;
			continue;
		}
		recs[n++] = (struct rec){seq, p};
	}
	qsort(recs, n, sizeof(*recs), by_seq);
	size_t from = last && n > last ? n - last : 0;
	json_t *events = json_array();
	for (size_t i = from; i < n; i++) {
		const uint8_t *p = recs[i].p;
		uint64_t kind = field(l, p, l->kind.off, l->kind.size);
		uint64_t flags = field(l, p, l->flags.off, l->flags.size);
		uint64_t t = field(l, p, l->time.off, l->time.size);
		json_t *e = json_object();
		json_object_set_new(e, "seq", json_integer((json_int_t)(recs[i].seq - 1)));
		json_object_set_new(e, "time_ns", json_integer((json_int_t)(t >= t0 ? t - t0 : 0)));
		json_object_set_new(e, "kind", kind < l->nkinds && l->kinds[kind][0] ?
				    cq_json_str(l->kinds[kind]) : json_integer((json_int_t)kind));
		json_object_set_new(e, "phase", cq_json_str((flags & 3) == CQ_REC_BEGIN ? "begin" :
							   (flags & 3) == CQ_REC_END ? "end" : "atomic"));
		json_object_set_new(e, "flags", json_integer((json_int_t)flags));
		json_object_set_new(e, "a", hex(field(l, p, l->a.off, l->a.size)));
		json_object_set_new(e, "b", hex(field(l, p, l->b.off, l->b.size)));
		json_object_set_new(e, "c", hex(field(l, p, l->c.off, l->c.size)));
		json_object_set_new(e, "d", hex(field(l, p, l->d.off, l->d.size)));
		json_object_set_new(e, "code", code_json(core, field(l, p, l->codeptr.off, l->codeptr.size)));
		uint64_t slot[5] = {field(l, p, l->a.off, l->a.size), field(l, p, l->b.off, l->b.size),
				    field(l, p, l->c.off, l->c.size), field(l, p, l->d.off, l->d.size),
				    field(l, p, l->codeptr.off, l->codeptr.size)};
		json_t *named = kind < CQ_REC_MAX_KINDS ?
			cq__events_fields(core, (unsigned)kind, l->kinds, l->nkinds,
					  (uint32_t)flags, slot) : NULL;
		if (named)
			json_object_set_new(e, "fields", named);
		json_array_append_new(events, e);
	}
	json_object_set_new(r, "recorded", json_integer((json_int_t)head));
	json_object_set_new(r, "kept", json_integer((json_int_t)n));
	json_object_set_new(r, "torn", json_integer((json_int_t)torn));
	json_object_set_new(r, "events", events);
	free(recs);
	free(buf);
	return r;
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

struct cq_error *cq_events_read(struct cq_core *core, unsigned last, json_t **ret)
{
	struct cq_symref ref;
	struct cq_error *err = cq_core_load_images(core);
	cq_error_destroy(err);
	if ((err = cq_core_lookup(core, CQ_REC_SYMBOL, NULL, &ref)))
		return cq_error_wrap(err, "no flight recorder in the core (the recorder library defines coreq_rec: run the program with OMP_TOOL_LIBRARIES=libcoreq_rec.so, or link it for GASP events)");
	struct layout l;
	json_t *hdr = NULL;
	if ((err = parse_header(core, ref.address, &l, &hdr)))
		return err;
	json_object_set_new(hdr, "image", cq_json_str(ref.image->name));
	json_t *doc = json_object(), *rings = json_array(), *problems = json_array();
	json_object_set_new(doc, "schema", cq_json_str("coreq-events/1"));
	json_object_set_new(doc, "core", cq_json_str(core->name));
	json_object_set_new(doc, "arch", cq_json_str(core->target->name));
	json_object_set_new(doc, "recorder", hdr);
	uint64_t t0 = (uint64_t)json_integer_value(json_object_get(hdr, "start_time_ns"));
	uint64_t table = strtoull(json_string_value(json_object_get(hdr, "rings_address")), NULL, 16);
	uint8_t *addrs = l.max_rings ? malloc((size_t)l.max_rings * 8) : NULL;
	if (l.max_rings && !addrs) {
		json_decref(doc);
		json_decref(rings);
		json_decref(problems);
		return &cq_error_nomem;
	}
	err = l.max_rings ? cq_core_read(core, table, addrs, (size_t)l.max_rings * 8) : NULL;
	if (err) {
		json_array_append_new(problems, json_pack("{s:s, s:o}", "item", "recorder", "message",
							  cq_json_str(err->message ? err->message : "ring table unreadable")));
		cq_error_destroy(err);
	} else {
		/* Each thread has a ring of its own: a slot naming a ring another slot names (or
		 * one overlapping it) is a corrupt or crafted table. Read every ring once, so the
		 * work is bounded by the memory the core holds, not by slots x ring size (65,536
		 * slots on one 64 MiB ring took hours). */
		const char **dup = calloc(l.max_rings ? l.max_rings : 1, sizeof(*dup));
		struct slot_at *order = calloc(l.max_rings ? l.max_rings : 1, sizeof(*order));
		if (!dup || !order) {
			free(dup);
			free(order);
			free(addrs);
			json_decref(doc);
			json_decref(rings);
			json_decref(problems);
			return &cq_error_nomem;
		}
		size_t nused = 0;
		for (unsigned i = 0; i < l.max_rings; i++) {
			uint64_t at = load(&l, addrs + (size_t)i * 8, 8);
			if (at)
				order[nused++] = (struct slot_at){at, i};
		}
		qsort(order, nused, sizeof(*order), by_address);
		uint64_t ring_bytes = (uint64_t)l.ring_header_size + (uint64_t)l.ring_records * l.record_size;
		size_t nskipped = 0;
		for (size_t k = 1, keep = 0; k < nused; k++) {
			if (order[k].at - order[keep].at < ring_bytes) {
				dup[order[k].slot] = order[k].at == order[keep].at ? "the same ring as" : "a ring overlapping that of";
				nskipped++;
			} else {
				keep = k;
			}
		}
		if (nskipped)
			json_array_append_new(problems, json_pack("{s:s, s:o}", "item", "recorder",
								  "message", json_sprintf("%zu ring table slot(s) name a ring another slot names (or overlap one): each ring is read once; the table is corrupt",
											  nskipped)));
		free(order);
		for (unsigned i = 0; i < l.max_rings; i++) {
			uint64_t at = load(&l, addrs + (size_t)i * 8, 8);
			if (!at || dup[i])
				continue;
			json_t *r = read_ring(core, &l, at, last, t0);
			json_object_set_new(r, "slot", json_integer(i));
			if (json_object_get(r, "error"))
				json_array_append_new(problems, json_pack("{s:s, s:s}", "item", "recorder ring",
									  "message", json_string_value(json_object_get(r, "error"))));
			else if (json_integer_value(json_object_get(r, "torn")))
				json_array_append_new(problems, json_pack("{s:s, s:s}", "item", "torn records",
									  "message", "a record being written when the process died is left out (its commit marker is not set)"));
			json_array_append_new(rings, r);
		}
		free(dup);
	}
	free(addrs);
	json_object_set_new(doc, "threads", rings);
	json_object_set_new(doc, "problems", problems);
	*ret = doc;
	return NULL;
}
