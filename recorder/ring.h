/* SPDX-License-Identifier: MIT */
/**
 * @file ring.h
 * The recorder's per-thread rings (internal to libcoreq_rec.so): cq_rec_put() appends one
 * record to the calling thread's ring with the write protocol of coreq_rec_format.h.
 * One writer per ring: the ring is reached only through the owner's thread-local state.
 * Cost per event: a thread-local load, a CLOCK_MONOTONIC read (vDSO, no system call) and
 * nine stores; the first event of a thread maps its ring (one mmap).
 */
#ifndef COREQ_REC_RING_H
#define COREQ_REC_RING_H

#include <stdint.h>
#include <time.h>

#include "coreq_rec_format.h"
#include "kinds.h"

#define CQ_REC_HIDDEN __attribute__((visibility("hidden")))
#define CQ_REC_EXPORT __attribute__((visibility("default")))
#define CQ_REC_NOINSTR __attribute__((no_instrument_function))

/** Per-thread state. Initial-exec TLS: no __tls_get_addr call on the event path. */
struct cq_rec_tls {
	struct cq_rec_ring *ring;  /**< this thread's ring, NULL before the first event */
	uint64_t next_id;          /**< parallel/task ids handed out by this thread */
	uint32_t thread_no;        /**< 1, 2, ... in order of first event; 0 before */
	uint8_t state;             /**< CQ_TLS_* */
	uint8_t busy;              /**< a record is being written (a signal handler's event is dropped) */
	uint8_t gasp_off;          /**< gasp_control(ctx, 0) was called on this thread */
};
enum { CQ_TLS_NEW = 0, CQ_TLS_ACQUIRING, CQ_TLS_RING, CQ_TLS_NO_RING };

extern __thread struct cq_rec_tls cq_rec_tls CQ_REC_HIDDEN __attribute__((tls_model("initial-exec")));
/** ring_records - 1, fixed before the first ring is handed out */
extern uint32_t cq_rec_mask CQ_REC_HIDDEN;

/** The slow path of the first event of a thread: its ring, or NULL (none to be had). */
struct cq_rec_ring *cq_rec_ring_acquire(void) CQ_REC_HIDDEN CQ_REC_NOINSTR;
/** This thread's number (assigned on first use, also without a ring). */
uint32_t cq_rec_thread_no(void) CQ_REC_HIDDEN CQ_REC_NOINSTR;
/** Says which side is active in the header's producer string ("OMPT", "GASP"). */
void cq_rec_producer_add(const char *side) CQ_REC_HIDDEN CQ_REC_NOINSTR;
/** Names kind k (k >= CQ_REC_KIND_USER_FIRST) after a user event; -1 if none is free. */
int cq_rec_kind_add(const char *name) CQ_REC_HIDDEN CQ_REC_NOINSTR;

/* 64-bit stores a crash cannot tear where the target has them (every 64-bit target, i386,
 * armv7); elsewhere (ppc32) two 32-bit stores, high half first: a torn seq is then
 * hi << 32, which names slot ring_records-1 of an older lap, so a record can be misread
 * only after 2^32 records of one thread and only in that slot. */
#if __GCC_ATOMIC_LLONG_LOCK_FREE == 2
#define cq_rec_store64(p, v, order) __atomic_store_n((p), (uint64_t)(v), order)
#else
static inline CQ_REC_NOINSTR void cq_rec_store64_split(uint64_t *p, uint64_t v, int order)
{
	uint32_t *w = (uint32_t *)p;
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	__atomic_store_n(&w[0], (uint32_t)(v >> 32), order);
	__atomic_store_n(&w[1], (uint32_t)v, order);
#else
	__atomic_store_n(&w[1], (uint32_t)(v >> 32), order);
	__atomic_store_n(&w[0], (uint32_t)v, order);
#endif
}
#define cq_rec_store64(p, v, order) cq_rec_store64_split((p), (uint64_t)(v), order)
#endif

static inline CQ_REC_NOINSTR uint64_t cq_rec_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/** Appends a record to the calling thread's ring (drops it if the thread has none). */
static inline CQ_REC_NOINSTR void cq_rec_put(uint32_t kind, uint32_t flags, uint64_t a, uint64_t b,
                                             uint64_t c, uint64_t codeptr, uint64_t d)
{
#ifdef CQ_REC_BENCH_NOOP
	/* benchmark baseline only (bench-recorder.sh): the callbacks without the recording */
	return;
#endif
	struct cq_rec_tls *t = &cq_rec_tls;
	struct cq_rec_ring *r = t->ring;
	if (__builtin_expect(r == NULL, 0)) {
		r = cq_rec_ring_acquire();
		if (r == NULL)
			return;
	}
	if (t->busy)
		return; /* a signal handler interrupted a record of this thread: one writer only */
	t->busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);

	uint64_t now = cq_rec_now();
	uint64_t n = r->head; /* only this thread stores head */
	struct cq_rec_record *rec = (struct cq_rec_record *)(r + 1) + (n & cq_rec_mask);
	cq_rec_store64(&rec->seq, 0, __ATOMIC_RELAXED);       /* 1. torn from here on */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	rec->time_ns = now;                                   /* 2. payload */
	rec->kind = kind;
	rec->flags = flags;
	rec->a = a;
	rec->b = b;
	rec->c = c;
	rec->codeptr = codeptr;
	rec->d = d;
	cq_rec_store64(&rec->seq, n + 1, __ATOMIC_RELEASE);   /* 3. complete */
	cq_rec_store64(&r->head, n + 1, __ATOMIC_RELEASE);    /* 4. counted */

	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->busy = 0;
}

/** A process-unique id: (thread number << 40) | counter of this thread. */
static inline CQ_REC_NOINSTR uint64_t cq_rec_new_id(void)
{
	struct cq_rec_tls *t = &cq_rec_tls;
	uint32_t no = t->thread_no ? t->thread_no : cq_rec_thread_no();
	return ((uint64_t)no << 40) | (++t->next_id & 0xffffffffffull);
}

#define CQ_REC_PTR(p) ((uint64_t)(uintptr_t)(p))

#endif
