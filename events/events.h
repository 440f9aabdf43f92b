/* SPDX-License-Identifier: MIT */
/**
 * @file events.h
 * The flight recorder read back from a core: the per-thread rings of runtime events (OMPT,
 * GASP) that coreq's recorder library (recorder/) keeps in the process, in the
 * self-describing format of recorder/coreq_rec_format.h. Any architecture, any host: the
 * byte order, word size, record layout and event names come from the rings' header in the
 * core, not from the host.
 *
 * A record is shown only if its commit marker (seq) says it was written completely; torn
 * records (the process died while writing one) and foreign slots are counted, never
 * decoded. Everything is bounded: ring sizes, record sizes and counts are checked against
 * limits before anything is read. Of a ring only its header and the slots written so far
 * are read (all of them once it has wrapped): `coreq snapshot` copies exactly those
 * (cq_events_touch()), so a snapshot reads as the process does.
 *
 * Three ways in, one reader: a cursor over the rings and their events, decoded into
 * reused storage (no allocation per event; symbols and strings looked up once per
 * address); the "coreq-events/1" document (doc/json-schema.md) written as it is read
 * (cq_events_write_json(): memory bounded by one ring, whatever the number of events), or
 * as a JSON tree (cq_events_read(), for a few events per thread).
 */
#ifndef COREQ_EVENTS_H
#define COREQ_EVENTS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "corelib/core.h"

/** Events shown per thread unless asked otherwise. */
#define CQ_EVENTS_DEFAULT_LAST 16

/** An open recording: its header and ring table read (cq_events_open()). */
struct cq_events;

/** A value of a named field: JSON null, an integer or a string. */
enum cq_event_value { CQ_EVENT_NULL, CQ_EVENT_INT, CQ_EVENT_STR };

/** One named field of an event (recorder/kind_fields.h applied). */
struct cq_event_field {
	const char *name;
	enum cq_event_value type;
	int64_t i;        /**< CQ_EVENT_INT */
	const char *s;    /**< CQ_EVENT_STR: the bytes as found (escape them for output) */
};

/** Named fields an event can have: a kind's seven, line, endpoint, state. */
#define CQ_EVENT_MAX_FIELDS 10

/** One complete record, decoded. Strings are the reader's: valid until the next event. */
struct cq_event {
	uint64_t seq;            /**< sequence number in its ring, from 0 */
	uint64_t time_ns;        /**< since the recording started (0 if before) */
	uint64_t kind;
	const char *kind_name;   /**< the header's name of kind, NULL: none (shown as number) */
	const char *phase;       /**< "begin", "end" or "atomic" */
	int64_t flags;
	uint64_t a, b, c, d, code;
	const char *symbol;      /**< of code, NULL: none (or code 0) */
	bool named;              /**< fields[] hold the kind's named fields (else raw slots only) */
	unsigned nfields;
	struct cq_event_field fields[CQ_EVENT_MAX_FIELDS];
};

/** One ring as read by cq_events_ring(). */
struct cq_events_ring {
	uint64_t address;
	unsigned slot;           /**< in the ring table */
	const char *error;       /**< not read: why (the reader's; valid until the next ring) */
	bool has_ids;            /**< tid, thread_data and head were read */
	uint64_t tid, thread_data, head; /**< head: records ever written ("recorded") */
	uint64_t kept, torn;     /**< complete records in the ring; torn or foreign slots */
	uint64_t bytes;          /**< of the core read for it */
};

/**
 * Find the recorder in @p core (the symbol coreq_rec), read and check its header and ring
 * table. CQ_ERR_NOT_FOUND if the core has no recorder; a damaged header is
 * CQ_ERR_MALFORMED naming the address (a version other than this reader's:
 * CQ_ERR_UNSUPPORTED); a damaged ring table is a problem (cq_events_problems()).
 */
struct cq_error *cq_events_open(struct cq_core *core, struct cq_events **ret);

/** Release @p ev (NULL allowed). */
void cq_events_close(struct cq_events *ev);

/** The document's "recorder" object (the header, where it is, its image); @p ev's. */
json_t *cq_events_recorder(struct cq_events *ev);

/** The rings to read, in ring table order (slots naming a ring another slot names: once). */
size_t cq_events_nrings(const struct cq_events *ev);

/**
 * Read ring @p i (< cq_events_nrings()) into @p ret, and make its last @p last complete
 * records (0: all) the events cq_events_next() returns, oldest first. The ring's records
 * are checked (every slot written so far: the kept and torn counts) but only those
 * events are decoded. A ring that cannot be read has @p ret->error, and is a problem.
 */
void cq_events_ring(struct cq_events *ev, size_t i, unsigned last, struct cq_events_ring *ret);

/** The next event of the ring last read, or NULL after its last. Valid until the next call. */
const struct cq_event *cq_events_next(struct cq_events *ev);

/** The document's "problems" array so far (complete once every ring is read); @p ev's. */
json_t *cq_events_problems(struct cq_events *ev);

/**
 * The "coreq-events/1" document of @p core's recorder with each ring's last @p last events
 * (0: all) written to @p out as cq_events_read() would build it and `coreq ... --json`
 * print it (2-space indent), while the rings are read: memory is one ring and the
 * symbols and strings the events name, however many events. Errors of cq_events_open()
 * are returned before anything is written; *@p nproblems: entries of "problems".
 */
struct cq_error *cq_events_write_json(struct cq_core *core, unsigned last, FILE *out, size_t *nproblems);

/**
 * The recorder's rings in @p core as a "coreq-events/1" document (doc/json-schema.md): the
 * header, then per ring its thread and the last @p last events in order (0: all), with
 * code addresses symbolized. Errors as cq_events_open(); a damaged ring is a problem in
 * the document, the other rings are still read. A tree: for a few events per thread
 * (cq_events_write_json() streams any number).
 */
struct cq_error *cq_events_read(struct cq_core *core, unsigned last, json_t **ret);

/** What cq_events_touch() reads at most: rings, bytes (ring records and strings). */
#define CQ_EVENTS_TOUCH_MAX_RINGS 4096u
#define CQ_EVENTS_TOUCH_MAX_BYTES ((uint64_t)128 << 20)

/**
 * Read from @p core exactly what `coreq events` (any --last) reads of it: the header, the
 * ring table, each ring's header and the records written so far, the strings the events
 * point at and the code they name, without decoding the events into a document. For a
 * live process being snapshotted: those reads are what the snapshot copies, in a time of
 * the order of the rings' bytes. Bounded by CQ_EVENTS_TOUCH_MAX_RINGS rings and
 * CQ_EVENTS_TOUCH_MAX_BYTES bytes: *@p capped (caller frees) then says what was left out,
 * else it is NULL. *@p bytes: of the core read. Errors as cq_events_open().
 */
struct cq_error *cq_events_touch(struct cq_core *core, uint64_t *bytes, char **capped);

#endif
