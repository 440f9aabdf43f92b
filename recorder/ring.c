/* SPDX-License-Identifier: MIT */
/*
 * The recording's header (the symbol coreq_rec) and the per-thread rings.
 *
 * The header is complete in the library's data from load time (magic, layout, field and
 * kind tables are static), so a core taken at any moment describes itself; the
 * constructor only sizes the rings (COREQ_REC_RECORDS, COREQ_REC_MAX_RINGS) and points
 * `rings` at the ring table before any ring exists. Rings are mmap'ed (never malloc: the
 * GASP malloc wrappers record through this code) and never freed, so the last events of
 * threads that already ended stay in the core.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ring.h"

#define CQ_REC_RECORDS_DEFAULT 256u
#define CQ_REC_RECORDS_MIN 8u
#define CQ_REC_RECORDS_MAX (1u << 24)
#define CQ_REC_MAX_RINGS_DEFAULT 1024u
#define CQ_REC_MAX_RINGS_MAX (1u << 20)

#define FIELD(n, m) { n, offsetof(struct cq_rec_record, m), sizeof(((struct cq_rec_record *)0)->m), 0 }

/* Kind names: CQ_REC_KIND_NAMES (kinds.h). What the fields mean per kind: kind_fields.h. */
CQ_REC_EXPORT __attribute__((aligned(64))) struct cq_rec_header coreq_rec = {
	.magic = CQ_REC_MAGIC,
	.version = CQ_REC_VERSION,
	.byte_order = CQ_REC_BYTE_ORDER,
	.word_size = sizeof(void *),
	.header_size = sizeof(struct cq_rec_header),
	.record_size = sizeof(struct cq_rec_record),
	.nfields = 9,
	.ring_records = CQ_REC_RECORDS_DEFAULT,
	.ring_header_size = sizeof(struct cq_rec_ring),
	.max_rings = 0, /* set with `rings` by the constructor */
	.nkinds = CQ_REC_KIND_USER_FIRST,
	.producer = "coreq recorder 1",
	.fields = {
		FIELD("seq", seq), FIELD("time_ns", time_ns), FIELD("kind", kind),
		FIELD("flags", flags), FIELD("a", a), FIELD("b", b), FIELD("c", c),
		FIELD("codeptr", codeptr), FIELD("d", d),
	},
	.kinds = {
#define KIND_NAME(k, n) [k] = n,
		CQ_REC_KIND_NAMES(KIND_NAME)
#undef KIND_NAME
	},
};

_Static_assert(sizeof(struct cq_rec_record) == 64, "record layout");
_Static_assert(sizeof(struct cq_rec_ring) == 64, "ring header layout");
_Static_assert(CQ_REC_KIND_USER_FIRST <= CQ_REC_MAX_KINDS, "kinds");

__thread struct cq_rec_tls cq_rec_tls __attribute__((tls_model("initial-exec")));
uint32_t cq_rec_mask = CQ_REC_RECORDS_DEFAULT - 1;

static uint64_t *ring_table;       /* coreq_rec.rings */
static uint32_t thread_count;      /* thread numbers handed out */
static int init_state;             /* 0 no, 1 running, 2 done */
static size_t ring_bytes;

static CQ_REC_NOINSTR uint32_t env_u32(const char *name, uint32_t dflt, uint32_t lo, uint32_t hi)
{
	const char *s = getenv(name);
	if (s == NULL || *s == '\0')
		return dflt;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || *end != '\0' || v == 0)
		return dflt;
	if (v < lo)
		v = lo;
	if (v > hi)
		v = hi;
	return (uint32_t)v;
}

static CQ_REC_NOINSTR void atfork_child(void)
{
	/* The forking thread's ring is now the child's copy: give it the child's tid. */
	struct cq_rec_ring *r = cq_rec_tls.ring;
	if (r != NULL)
		cq_rec_store64(&r->tid, (uint64_t)syscall(SYS_gettid), __ATOMIC_RELAXED);
}

/* Idempotent; from the constructor, or from the first event if one comes before it
 * (another library's constructor calling an instrumented function). */
static CQ_REC_NOINSTR void rec_init(void)
{
	int expected = 0;
	if (!__atomic_compare_exchange_n(&init_state, &expected, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		while (__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) != 2)
			sched_yield();
		return;
	}
	uint32_t records = env_u32("COREQ_REC_RECORDS", CQ_REC_RECORDS_DEFAULT, CQ_REC_RECORDS_MIN, CQ_REC_RECORDS_MAX);
	uint32_t pow2 = CQ_REC_RECORDS_MIN;
	while (pow2 < records)
		pow2 <<= 1; /* a power of two, rounded up */
	uint32_t max_rings = env_u32("COREQ_REC_MAX_RINGS", CQ_REC_MAX_RINGS_DEFAULT, 1, CQ_REC_MAX_RINGS_MAX);

	void *table = mmap(NULL, (size_t)max_rings * sizeof(uint64_t), PROT_READ | PROT_WRITE,
	                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (table == MAP_FAILED) {
		max_rings = 0; /* every thread is then lost, and counted */
		table = NULL;
	}
	ring_table = table;
	cq_rec_mask = pow2 - 1;
	ring_bytes = sizeof(struct cq_rec_ring) + (size_t)pow2 * sizeof(struct cq_rec_record);
	coreq_rec.ring_records = pow2;
	coreq_rec.start_time_ns = cq_rec_now();
	coreq_rec.rings = CQ_REC_PTR(table);
	__atomic_store_n(&coreq_rec.max_rings, max_rings, __ATOMIC_RELEASE);
	pthread_atfork(NULL, NULL, atfork_child);
	__atomic_store_n(&init_state, 2, __ATOMIC_RELEASE);
}

__attribute__((constructor)) static CQ_REC_NOINSTR void rec_constructor(void)
{
	rec_init();
}

uint32_t cq_rec_thread_no(void)
{
	struct cq_rec_tls *t = &cq_rec_tls;
	if (t->thread_no == 0)
		t->thread_no = __atomic_add_fetch(&thread_count, 1, __ATOMIC_RELAXED);
	return t->thread_no;
}

struct cq_rec_ring *cq_rec_ring_acquire(void)
{
	struct cq_rec_tls *t = &cq_rec_tls;
	if (t->state != CQ_TLS_NEW)
		return t->ring; /* NULL: none to be had, or a signal handler while acquiring */
	int init = __atomic_load_n(&init_state, __ATOMIC_ACQUIRE);
	if (init == 1)
		return NULL; /* an event from inside rec_init (its pthread_atfork may malloc): dropped */
	t->state = CQ_TLS_ACQUIRING;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (init == 0)
		rec_init();
	uint32_t no = cq_rec_thread_no();

	/* A slot: nrings only grows, and never past max_rings. */
	uint32_t idx = __atomic_load_n(&coreq_rec.nrings, __ATOMIC_RELAXED);
	do {
		if (idx >= coreq_rec.max_rings) {
			__atomic_add_fetch(&coreq_rec.lost_threads, 1, __ATOMIC_RELAXED);
			t->state = CQ_TLS_NO_RING;
			return NULL;
		}
	} while (!__atomic_compare_exchange_n(&coreq_rec.nrings, &idx, idx + 1, 1, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));

	struct cq_rec_ring *r = mmap(NULL, ring_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED) {
		/* the slot stays 0 (unused); the thread is lost */
		__atomic_add_fetch(&coreq_rec.lost_threads, 1, __ATOMIC_RELAXED);
		t->state = CQ_TLS_NO_RING;
		return NULL;
	}
	r->magic = CQ_REC_RING_MAGIC;
	r->record_size = sizeof(struct cq_rec_record);
	r->tid = (uint64_t)syscall(SYS_gettid);
	r->head = 0;
	r->thread_data = no;
	/* published complete: a reader finds the ring only after its header is written */
	cq_rec_store64(&ring_table[idx], CQ_REC_PTR(r), __ATOMIC_RELEASE);
	t->ring = r;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->state = CQ_TLS_RING;
	return r;
}

static pthread_mutex_t meta_lock = PTHREAD_MUTEX_INITIALIZER;

void cq_rec_producer_add(const char *side)
{
	pthread_mutex_lock(&meta_lock);
	char *p = coreq_rec.producer;
	size_t len = strlen(p);
	if (strstr(p, side) == NULL && len + strlen(side) + 4 < sizeof coreq_rec.producer) {
		/* "coreq recorder 1 (OMPT)", then "coreq recorder 1 (OMPT, GASP)" */
		if (p[len - 1] == ')') {
			p[len - 1] = '\0';
			strcat(p, ", ");
		} else {
			strcat(p, " (");
		}
		strcat(p, side);
		strcat(p, ")");
	}
	pthread_mutex_unlock(&meta_lock);
}

int cq_rec_kind_add(const char *name)
{
	pthread_mutex_lock(&meta_lock);
	uint32_t k = coreq_rec.nkinds;
	if (k >= CQ_REC_MAX_KINDS) {
		pthread_mutex_unlock(&meta_lock);
		return -1;
	}
	char *dst = coreq_rec.kinds[k];
	size_t n = name ? strnlen(name, CQ_REC_NAME - 1) : 0;
	if (n == 0) {
		name = "gasp_user_event";
		n = strlen(name);
	}
	memcpy(dst, name, n);
	memset(dst + n, 0, CQ_REC_NAME - n);
	/* the name is in place before the kind counts as in use */
	__atomic_store_n(&coreq_rec.nkinds, k + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&meta_lock);
	return (int)k;
}
