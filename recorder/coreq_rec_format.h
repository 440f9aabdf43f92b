/* SPDX-License-Identifier: MIT */
/**
 * @file coreq_rec_format.h
 * The flight-recorder format, version 1: per-thread rings of runtime events (OMPT, GASP)
 * kept in the traced process's memory, written by the recorder library (recorder/) and
 * read back from a core by `coreq events` (events/). This header is the contract between
 * the two; the reader never includes the writer's code.
 *
 * Self-describing, so a core of any architecture can be read on any host: the header says
 * the writer's byte order (byte_order holds 0x01020304 as the writer stored it), its word
 * size, its own size, the record size, the ring size, the offset and size of every record
 * field by name, and the name of every event kind. Every record field is a 32- or 64-bit
 * unsigned integer in the writer's byte order, whatever its word size.
 *
 * Where it is: the global object `coreq_rec` (CQ_REC_SYMBOL) of the recorder library, a
 * struct cq_rec_header; its `rings` member holds the address of an array of max_rings
 * 64-bit ring addresses (0: slot unused). A ring is a struct cq_rec_ring followed by
 * ring_records records of record_size bytes.
 *
 * Writing a record (the thread that owns the ring is its only writer, so no locks):
 *   1. store seq = 0 in the slot (the slot is being written: "torn" if the process dies now)
 *   2. store the payload fields
 *   3. store seq = n + 1 with release order (n: the record's sequence number, from 0)
 *   4. store head = n + 1 with release order
 * The slot of record n is n & (ring_records - 1). A reader takes a slot as valid only if
 * its seq is not 0, its slot matches (seq - 1) & (ring_records - 1), and seq <= head + 1
 * (a crash between steps 3 and 4 leaves a complete record one past head). Anything else is
 * a torn or foreign slot, counted and never shown.
 */
#ifndef COREQ_REC_FORMAT_H
#define COREQ_REC_FORMAT_H

#include <stdint.h>

#define CQ_REC_SYMBOL "coreq_rec"
#define CQ_REC_MAGIC "COREQREC"    /* 8 bytes, no NUL */
#define CQ_REC_VERSION 1
#define CQ_REC_BYTE_ORDER 0x01020304u
#define CQ_REC_RING_MAGIC 0x474e4952u /* "RING" in the writer's order */
#define CQ_REC_MAX_FIELDS 16
#define CQ_REC_MAX_KINDS 64
#define CQ_REC_NAME 24               /* bytes of a field or kind name, NUL-padded */

/** A record field: name, byte offset in the record, size (4 or 8). */
struct cq_rec_field {
	char name[CQ_REC_NAME];
	uint16_t offset;
	uint16_t size;
	uint32_t reserved;
};

/** The header, at the symbol coreq_rec. */
struct cq_rec_header {
	char magic[8];               /**< CQ_REC_MAGIC */
	uint32_t version;            /**< CQ_REC_VERSION */
	uint32_t byte_order;         /**< CQ_REC_BYTE_ORDER as the writer stores it */
	uint16_t word_size;          /**< sizeof(void *) of the writer */
	uint16_t header_size;        /**< sizeof(struct cq_rec_header) */
	uint16_t record_size;        /**< bytes per record */
	uint16_t nfields;            /**< entries of fields[] in use */
	uint32_t ring_records;       /**< records per ring, a power of two */
	uint32_t ring_header_size;   /**< bytes of struct cq_rec_ring before the records */
	uint32_t max_rings;          /**< entries in the rings array */
	uint32_t nrings;             /**< rings handed out so far */
	uint32_t lost_threads;       /**< threads that got no ring (all max_rings in use) */
	uint32_t nkinds;             /**< entries of kinds[] in use */
	uint64_t rings;              /**< address of uint64_t[max_rings]: ring addresses */
	uint64_t start_time_ns;      /**< CLOCK_MONOTONIC when recording started */
	char producer[32];           /**< e.g. "coreq recorder 1 (OMPT)" */
	struct cq_rec_field fields[CQ_REC_MAX_FIELDS];
	char kinds[CQ_REC_MAX_KINDS][CQ_REC_NAME]; /**< name of event kind k, "" if unused */
};

/** A ring's header; ring_records records follow at ring_header_size. */
struct cq_rec_ring {
	uint32_t magic;              /**< CQ_REC_RING_MAGIC */
	uint32_t record_size;        /**< the header's, repeated (a check) */
	uint64_t tid;                /**< kernel thread id of the owner */
	uint64_t head;               /**< records ever written (release-stored after each) */
	uint64_t thread_data;        /**< the tool's thread id (OMPT thread_data, GASP thread) */
	uint64_t reserved[4];
};

/** The record of version 1 (the fields are also described in the header by name). */
struct cq_rec_record {
	uint64_t seq;      /**< 1 + sequence number, 0 while being written */
	uint64_t time_ns;  /**< CLOCK_MONOTONIC */
	uint32_t kind;     /**< index into kinds[] */
	uint32_t flags;    /**< CQ_REC_BEGIN / CQ_REC_END / CQ_REC_ATOMIC, kind-specific bits */
	uint64_t a;        /**< kind-specific: parallel id, task id, mutex wait id, event tag, ... */
	uint64_t b;
	uint64_t c;
	uint64_t codeptr;  /**< code address (codeptr_ra, function address): symbolized */
	uint64_t d;
};

enum { CQ_REC_ATOMIC = 0, CQ_REC_BEGIN = 1, CQ_REC_END = 2 };

#endif
