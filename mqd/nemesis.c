/* SPDX-License-Identifier: MIT */
/* Messages in flight in MPICH's nemesis shared memory (nemesis.h). */
#include "nemesis.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "corelib/image.h"
#include "corelib/types.h"
#include "callbacks.h"
#include "targets/target.h"

/* Bounds on what a core may claim: local processes of one node, cells in one queue (a
 * node's nemesis has 64 cells per local process), a cell's data (64 KiB cells). */
#define MAX_LOCAL 4096
#define MAX_PROCS (1 << 20)
#define MAX_CELLS 65536
#define CELL_LEN 65536

/* The offsets and constants of one libmpi, from its DWARF. */
struct layout {
	unsigned w;                 /* pointer size */
	int64_t region_num_local, region_num_procs, region_local_procs, region_local_rank, region_in,
		region_recvq;
	int64_t q_head, q_my_head; /* q_my_head is also the cache line: a fastbox's cell offset */
	int64_t cell_next, cell_source, cell_datalen, cell_seqno, cell_payload;
	int64_t pkt_size, type_size;
	int64_t send_match, send_data_sz, short_data_sz, rts_match, rts_data_sz;
	int64_t m_tag, m_rank, m_context;
	int64_t pg_vct, process_my_pg, vc_size, vc_recv_active;
	/* packet types (MPIDI_CH3_Pkt_type_t: their values depend on the configuration) */
	int64_t t_eager, t_short, t_sync, t_ready, t_rts, t_lmt_rts;
	int64_t control[8];
	size_t ncontrol;
};

struct cell {
	int source;        /* world rank */
	unsigned dist;     /* sequence distance from the next one the receiver takes */
	uint64_t addr;
	int64_t datalen;
	const char *where;
};

static int64_t off(struct cq_core *core, const char *type, const char *field)
{
	const struct cq_type *t;
	struct cq_error *err = cq__mqd_find_type(core, type, &t);
	int64_t o = err ? -1 : field ? cq_type_field_offset(t, field) : cq_type_size(t);
	cq_error_destroy(err);
	return o;
}

/* The offset of @p inner_type's @p inner inside @p type's member @p field, -1 if unknown. */
static int64_t nested(struct cq_core *core, const char *type, const char *field, const char *inner_type,
		      const char *inner)
{
	int64_t a = off(core, type, field), b = off(core, inner_type, inner);
	return a < 0 || b < 0 ? -1 : a + b;
}

static int64_t enumerator(struct cq_core *core, const char *name)
{
	const struct cq_type *t;
	int64_t v = -1;
	struct cq_error *err = cq__mqd_find_type(core, "MPIDI_CH3_Pkt_type_t", &t);
	if (err || !cq_type_enumerator(t, name, &v))
		v = -1;
	cq_error_destroy(err);
	return v;
}

static bool load_layout(struct cq_core *core, struct layout *l)
{
	l->w = cq_target_ptr_size(core->target);
	l->region_num_local = off(core, "MPID_nem_mem_region_t", "num_local");
	l->region_num_procs = off(core, "MPID_nem_mem_region_t", "num_procs");
	l->region_local_procs = off(core, "MPID_nem_mem_region_t", "local_procs");
	l->region_local_rank = off(core, "MPID_nem_mem_region_t", "local_rank");
	l->region_in = nested(core, "MPID_nem_mem_region_t", "mailboxes", "MPID_nem_fbox_arrays_t", "in");
	l->region_recvq = off(core, "MPID_nem_mem_region_t", "my_recvQ");
	l->q_head = off(core, "MPID_nem_queue_t", "head");
	l->q_my_head = off(core, "MPID_nem_queue_t", "my_head");
	l->cell_next = off(core, "MPID_nem_cell_t", "next");
	l->cell_payload = off(core, "MPID_nem_cell_t", "payload");
	l->cell_source = nested(core, "MPID_nem_cell_t", "header", "MPID_nem_pkt_header_t", "source");
	l->cell_datalen = nested(core, "MPID_nem_cell_t", "header", "MPID_nem_pkt_header_t", "datalen");
	l->cell_seqno = nested(core, "MPID_nem_cell_t", "header", "MPID_nem_pkt_header_t", "seqno");
	l->pkt_size = off(core, "MPIDI_CH3_Pkt_t", NULL);
	l->type_size = off(core, "MPIDI_CH3_Pkt_type_t", NULL);
	l->send_match = off(core, "MPIDI_CH3_Pkt_send_t", "match");
	l->send_data_sz = off(core, "MPIDI_CH3_Pkt_send_t", "data_sz");
	l->short_data_sz = off(core, "MPIDI_CH3_Pkt_eagershort_send_t", "data_sz");
	l->rts_match = off(core, "MPID_nem_pkt_lmt_rts_t", "match");
	l->rts_data_sz = off(core, "MPID_nem_pkt_lmt_rts_t", "data_sz");
	l->m_tag = nested(core, "MPIDI_Message_match", "parts", "MPIDI_Message_match_parts_t", "tag");
	l->m_rank = nested(core, "MPIDI_Message_match", "parts", "MPIDI_Message_match_parts_t", "rank");
	l->m_context = nested(core, "MPIDI_Message_match", "parts", "MPIDI_Message_match_parts_t", "context_id");
	l->process_my_pg = off(core, "MPIDI_Process_t", "my_pg");
	l->pg_vct = off(core, "MPIDI_PG_t", "vct");
	l->vc_size = off(core, "MPIDI_VC_t", NULL);
	l->vc_recv_active = nested(core, "MPIDI_VC_t", "ch", "MPIDI_CH3I_VC", "recv_active");
	l->t_eager = enumerator(core, "MPIDI_CH3_PKT_EAGER_SEND");
	l->t_short = enumerator(core, "MPIDI_CH3_PKT_EAGERSHORT_SEND"); /* only with USE_EAGER_SHORT */
	l->t_sync = enumerator(core, "MPIDI_CH3_PKT_EAGER_SYNC_SEND");
	l->t_ready = enumerator(core, "MPIDI_CH3_PKT_READY_SEND");
	l->t_rts = enumerator(core, "MPIDI_CH3_PKT_RNDV_REQ_TO_SEND");
	l->t_lmt_rts = enumerator(core, "MPIDI_NEM_PKT_LMT_RTS");
	/* packets that carry no data of their own beyond what fits their cell */
	static const char *const control[] = {"MPIDI_CH3_PKT_EAGER_SYNC_ACK", "MPIDI_CH3_PKT_RNDV_CLR_TO_SEND",
					      "MPIDI_CH3_PKT_CANCEL_SEND_REQ", "MPIDI_CH3_PKT_CANCEL_SEND_RESP",
					      "MPIDI_NEM_PKT_LMT_CTS", "MPIDI_NEM_PKT_LMT_DONE",
					      "MPIDI_NEM_PKT_LMT_COOKIE", "MPIDI_CH3_PKT_CLOSE"};
	for (size_t i = 0; i < sizeof(control) / sizeof(control[0]); i++)
		if ((l->control[l->ncontrol] = enumerator(core, control[i])) >= 0)
			l->ncontrol++;
	const int64_t need[] = {l->region_num_local, l->region_num_procs, l->region_local_procs, l->region_local_rank,
				l->region_in, l->region_recvq, l->q_head, l->q_my_head, l->cell_next, l->cell_payload,
				l->cell_source, l->cell_datalen, l->cell_seqno, l->pkt_size, l->type_size, l->send_match,
				l->send_data_sz, l->m_tag, l->m_rank, l->m_context, l->process_my_pg, l->pg_vct,
				l->vc_size, l->vc_recv_active, l->t_eager, l->t_sync, l->t_ready, l->t_rts};
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (need[i] < 0)
			return false;
	/* a cache line; a type of at most 8 bytes */
	return l->q_my_head >= 16 && l->q_my_head <= 1024 && l->type_size > 0 && l->type_size <= 8 &&
	       l->pkt_size > 0 && l->pkt_size < CELL_LEN;
}

/* Append @p c to the list (capacity doubling: a queue may hold MAX_CELLS). */
static bool push_cell(struct cell **cells, size_t *n, size_t *cap, struct cell c)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		struct cell *g = realloc(*cells, nc * sizeof(*g));
		if (!g)
			return false;
		*cells = g;
		*cap = nc;
	}
	(*cells)[(*n)++] = c;
	return true;
}

static int cmp_cell(const void *a, const void *b)
{
	const struct cell *x = a, *y = b;
	if (x->source != y->source)
		return (x->source > y->source) - (x->source < y->source);
	return (x->dist > y->dist) - (x->dist < y->dist);
}

/* A ch3 packet type's kind of message, NULL when it is no message. */
static const char *message_kind(const struct layout *l, int64_t type)
{
	if (type == l->t_eager || (l->t_short >= 0 && type == l->t_short))
		return "eager";
	if (type == l->t_sync)
		return "synchronous eager";
	if (type == l->t_ready)
		return "ready";
	if (type == l->t_rts || (l->t_lmt_rts >= 0 && type == l->t_lmt_rts))
		return "rendezvous request";
	return NULL;
}

static bool is_control(const struct layout *l, int64_t type)
{
	for (size_t i = 0; i < l->ncontrol; i++)
		if (type == l->control[i])
			return true;
	return false;
}

struct reader {
	struct cq_core *core;
	struct cq_error *err; /* the first read that failed */
};

static uint64_t rd(struct reader *r, uint64_t addr, unsigned size)
{
	uint64_t v = 0;
	if (r->err)
		return 0;
	r->err = cq_core_read_uint(r->core, addr, size, &v);
	return r->err ? 0 : v;
}

static int64_t sext(uint64_t v, unsigned size)
{
	return size >= 8 ? (int64_t)v : (int64_t)(v << (64 - 8 * size)) >> (64 - 8 * size);
}

/* Decode the header cell @p c into *@p m: false when it is no message. */
static bool decode(struct reader *r, const struct layout *l, const struct cell *c, int64_t type,
		   struct cq_nemesis_message *m)
{
	const char *kind = message_kind(l, type);
	if (!kind)
		return false;
	uint64_t p = c->addr + (uint64_t)l->cell_payload;
	bool rts = l->t_lmt_rts >= 0 && type == l->t_lmt_rts;
	int64_t match = rts ? l->rts_match : l->send_match, dsz = rts ? l->rts_data_sz
								: l->t_short >= 0 && type == l->t_short ? l->short_data_sz
													: l->send_data_sz;
	if (match < 0 || dsz < 0)
		return false;
	*m = (struct cq_nemesis_message){
		.source = c->source,
		.tag = (int32_t)(uint32_t)rd(r, p + (uint64_t)(match + l->m_tag), 4),
		.sender = (int16_t)(uint16_t)rd(r, p + (uint64_t)(match + l->m_rank), 2),
		.context = (unsigned)rd(r, p + (uint64_t)(match + l->m_context), 2),
		.length = sext(rd(r, p + (uint64_t)dsz, l->w), l->w),
		.kind = kind, .where = c->where, .cell = c->addr};
	return !r->err && m->length >= 0;
}

/* Walk one sender's cells (in the order the receiver takes them) into @p ret. */
static void walk_source(struct reader *r, const struct layout *l, const struct cell *cells, size_t n, bool active,
			struct cq_nemesis_report *ret, size_t *cap)
{
	int64_t rest = 0; /* data of the last message still to come in further cells */
	bool stop = active;
	for (size_t i = 0; i < n && !r->err; i++) {
		const struct cell *c = &cells[i];
		if (stop || c->datalen < 0 || c->datalen > CELL_LEN) {
			ret->unread++;
			stop = true;
			continue;
		}
		if (rest > 0) {
			rest -= c->datalen;
			continue;
		}
		int64_t type = sext(rd(r, c->addr + (uint64_t)l->cell_payload, (unsigned)l->type_size), (unsigned)l->type_size);
		struct cq_nemesis_message m;
		if (!r->err && decode(r, l, c, type, &m)) {
			if (ret->n == *cap) {
				size_t nc = *cap ? *cap * 2 : 16;
				struct cq_nemesis_message *grown = realloc(ret->messages, nc * sizeof(*grown));
				if (!grown)
					return;
				ret->messages = grown;
				*cap = nc;
			}
			ret->messages[ret->n++] = m;
			/* an eager message's data beyond its first cell follows in the next ones */
			if (strcmp(m.kind, "rendezvous request") && !(l->t_short >= 0 && type == l->t_short))
				rest = m.length - (c->datalen - l->pkt_size);
		} else if (!r->err && is_control(l, type)) {
			ret->control++;
		} else if (!r->err) {
			ret->unread++;
			stop = true; /* what follows its data is not known */
		}
	}
}

struct cq_error *cq_nemesis_in_flight(struct cq_core *core, struct cq_nemesis_report *ret)
{
	memset(ret, 0, sizeof(*ret));
	struct cq_symref region, base, seqno, process;
	struct cq_error *err = cq_core_lookup(core, "MPID_nem_mem_region", NULL, &region);
	if (!err)
		err = cq_core_lookup(core, "MPID_nem_asymm_base_addr", NULL, &base);
	if (!err)
		err = cq_core_lookup(core, "MPID_nem_recv_seqno", NULL, &seqno);
	if (!err)
		err = cq_core_lookup(core, "MPIDI_Process", NULL, &process);
	if (err)
		return err;
	struct layout l = {0};
	if (!load_layout(core, &l))
		return cq_error_create(CQ_ERR_NOT_FOUND, "MPICH's nemesis types are not in the DWARF of %s",
				       cq_core_type_sources(core));
	struct reader r = {core, NULL};
	uint64_t R = region.address;
	int64_t nlocal = sext(rd(&r, R + (uint64_t)l.region_num_local, 4), 4),
		nprocs = sext(rd(&r, R + (uint64_t)l.region_num_procs, 4), 4),
		me = sext(rd(&r, R + (uint64_t)l.region_local_rank, 4), 4);
	uint64_t procs = rd(&r, R + (uint64_t)l.region_local_procs, l.w), in = rd(&r, R + (uint64_t)l.region_in, l.w),
		 q = rd(&r, R + (uint64_t)l.region_recvq, l.w), asymm = rd(&r, base.address, l.w),
		 seqs = rd(&r, seqno.address, l.w), pg = rd(&r, process.address + (uint64_t)l.process_my_pg, l.w),
		 vct = pg ? rd(&r, pg + (uint64_t)l.pg_vct, l.w) : 0;
	if (r.err)
		return r.err;
	if (nlocal < 1 || nlocal > MAX_LOCAL || nprocs < nlocal || nprocs > MAX_PROCS || me < 0 || me >= nlocal || !q ||
	    !seqs || !vct)
		return cq_error_create(CQ_ERR_MALFORMED,
				       "MPID_nem_mem_region at 0x%llx is not set up (%lld local of %lld processes, local "
				       "rank %lld): the rank did not finish MPI_Init, or the core is corrupt",
				       (unsigned long long)R, (long long)nlocal, (long long)nprocs, (long long)me);
	struct cell *cells = NULL;
	size_t ncells = 0, cap = 0;
	/* the fastboxes: one cell each, from the local rank of its index */
	for (int64_t i = 0; i < nlocal && !r.err; i++) {
		uint64_t fb = i == me ? 0 : rd(&r, in + (uint64_t)i * l.w, l.w);
		if (!fb || r.err || rd(&r, fb, 4) != 1)
			continue;
		uint64_t c = fb + (uint64_t)l.q_my_head;
		int64_t src = sext(rd(&r, c + (uint64_t)l.cell_source, 4), 4);
		if (r.err || src < 0 || src >= nlocal)
			continue;
		int64_t world = sext(rd(&r, procs + (uint64_t)src * 4, 4), 4);
		if (!push_cell(&cells, &ncells, &cap,
			       (struct cell){(int)world, (unsigned)rd(&r, c + (uint64_t)l.cell_seqno, 2), c,
					     sext(rd(&r, c + (uint64_t)l.cell_datalen, l.w), l.w), "fastbox"}))
			break;
	}
	/* the shared receive queue: from the receiver's private head, else the shared one */
	uint64_t rel = r.err ? 0 : rd(&r, q + (uint64_t)l.q_my_head, l.w);
	if (!rel)
		rel = rd(&r, q + (uint64_t)l.q_head, l.w);
	size_t walked = 0;
	for (; rel && !r.err && walked < MAX_CELLS; walked++) {
		uint64_t c = asymm + rel;
		if (!push_cell(&cells, &ncells, &cap,
			       (struct cell){(int)sext(rd(&r, c + (uint64_t)l.cell_source, 4), 4),
					     (unsigned)rd(&r, c + (uint64_t)l.cell_seqno, 2), c,
					     sext(rd(&r, c + (uint64_t)l.cell_datalen, l.w), l.w), "receive queue"}))
			break;
		rel = rd(&r, c + (uint64_t)l.cell_next, l.w);
	}
	if (!r.err && rel)
		r.err = cq_error_create(CQ_ERR_MALFORMED, "the nemesis receive queue at 0x%llx has more than %d cells: "
					"a loop, or the core is corrupt; the first %d were read",
					(unsigned long long)q, MAX_CELLS, MAX_CELLS);
	/* each sender's cells in the order the receiver takes them: from the sequence number
	 * it expects next; a cell before it (a full fastbox) was taken already */
	size_t kept = 0;
	for (size_t i = 0; i < ncells && !r.err; i++) {
		if (cells[i].source < 0 || cells[i].source >= nprocs) {
			ret->unread++;
			continue;
		}
		unsigned want = (unsigned)rd(&r, seqs + (uint64_t)cells[i].source * 2, 2);
		cells[i].dist = (cells[i].dist - want) & 0xffff;
		if (cells[i].dist < 0x8000)
			cells[kept++] = cells[i];
	}
	if (!r.err)
		ncells = kept;
	else
		ncells = 0;
	if (ncells)
		qsort(cells, ncells, sizeof(*cells), cmp_cell);
	size_t mcap = 0;
	for (size_t i = 0, j; i < ncells && !r.err; i = j) {
		for (j = i; j < ncells && cells[j].source == cells[i].source;)
			j++;
		/* the receiver was taking a message from this sender: the first cells continue it */
		bool active = rd(&r, vct + (uint64_t)cells[i].source * (uint64_t)l.vc_size + (uint64_t)l.vc_recv_active, l.w);
		walk_source(&r, &l, cells + i, j - i, active, ret, &mcap);
	}
	free(cells);
	return r.err;
}

void cq_nemesis_report_free(struct cq_nemesis_report *r)
{
	free(r->messages);
	memset(r, 0, sizeof(*r));
}
