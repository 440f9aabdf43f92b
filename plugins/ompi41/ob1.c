/* SPDX-License-Identifier: MIT */
/* ob1's unexpected-message queue (Open MPI 4.1), which Open MPI's own DLL does not show.
 *
 * Per communicator, c_pml_comm is a mca_pml_ob1_comm_t with one mca_pml_ob1_comm_proc_t
 * per peer (procs[num_procs], created lazily: NULL until the peer sent or was received
 * from). A message that arrived before a matching receive was posted waits there as a
 * mca_pml_ob1_recv_frag_t:
 *   unexpected_frags   opal_list_t, in arrival (= matching) order;
 *   frags_cant_match   frags that arrived ahead of their sequence number (out of order):
 *                      a ring of frags linked through their list items, each possibly
 *                      heading a second ring ("range") of frags with consecutive numbers.
 * A frag holds a copy of the match header (hdr) and, in segments[0], the whole first
 * fragment as received: the header again, then the data that came with it. Eager
 * messages (MATCH) carry all their data; a rendezvous (RNDV) carries the total length in
 * its header and perhaps a first part of the data; RGET carries none (the receiver would
 * fetch it from the sender's memory).
 * 4.1 has no "custom match" variant of these structures (that came with Open MPI 5).
 */
#include <string.h>

#include "ompi41.h"

/* Header types: MCA_BTL_TAG_PML (0x40) + 1, 2, 3 (pml_ob1_hdr.h). */
#define HDR_MATCH 0x41
#define HDR_RNDV 0x42
#define HDR_RGET 0x43
#define HDR_FLAGS_NBO 2 /* header in network byte order (heterogeneous builds only) */

void ob1_reset(struct process_info *p)
{
	dll_free(p->frags);
	p->frags = NULL;
	p->nfrags = p->next_frag = 0;
	p->frag_steps = 0;
}

/* Whether the object at @p a is an instance of the class at @p cls (0: not checkable). */
static bool is_a(struct process_info *p, taddr_t a, taddr_t cls)
{
	taddr_t c;
	if (!a || rd_ptr(p, a + (taddr_t)p->ii->L.obj_class, &c) != CQ_MQS_OK)
		return false;
	return !cls || c == cls;
}

static int add(struct process_info *p, int *cap, taddr_t frag, bool ooo, uint16_t expected)
{
	/* a bound on the links followed for one queue, whatever the lists look like */
	if (++p->frag_steps > MAX_FRAG_STEPS)
		return CQ_MQS_END_OF_LIST;
	if (!is_a(p, frag, p->class_ob1_frag))
		return CQ_MQS_OK; /* not a frag: a corrupt link, left out */
	if (p->nfrags >= MAX_FRAGS)
		return CQ_MQS_END_OF_LIST;
	if (p->nfrags == *cap) {
		int ncap = *cap ? 2 * *cap : 16;
		struct frag_ref *n = dll_calloc((size_t)ncap, sizeof(*n));
		if (!n)
			return ERR_NO_STORE;
		if (p->nfrags)
			memcpy(n, p->frags, (size_t)p->nfrags * sizeof(*n));
		dll_free(p->frags);
		p->frags = n;
		*cap = ncap;
	}
	p->frags[p->nfrags++] = (struct frag_ref){frag, ooo, expected};
	return CQ_MQS_OK;
}

/* The frags of one peer: unexpected ones, then those that cannot match yet. */
static int collect_peer(struct process_info *p, taddr_t proc, int *cap)
{
	const struct layout *L = &p->ii->L;
	struct list_iter it;
	taddr_t f, head, range;
	int rc = CQ_MQS_OK;
	list_begin(p, &it, proc + (taddr_t)L->op_unexpected_frags);
	while (rc == CQ_MQS_OK && list_next(p, &it, &f))
		rc = add(p, cap, f, false, 0);
	uint64_t expected = 0;
	if (rc != CQ_MQS_OK || rd_ptr(p, proc + (taddr_t)L->op_frags_cant_match, &head) != CQ_MQS_OK || !head)
		return rc;
	(void)rd_u(p, proc + (taddr_t)L->op_expected_sequence, 2, &expected);
	/* the ring of out-of-order frags, and the range ring behind each */
	struct list_iter ring, sub;
	ring_begin(p, &ring, head);
	for (f = head; rc == CQ_MQS_OK;) {
		rc = add(p, cap, f, true, (uint16_t)expected);
		if (rc == CQ_MQS_OK && rd_ptr(p, f + (taddr_t)L->f_range, &range) == CQ_MQS_OK && range) {
			taddr_t r = range;
			ring_begin(p, &sub, range);
			do
				rc = add(p, cap, r, true, (uint16_t)expected);
			while (rc == CQ_MQS_OK && list_next(p, &sub, &r));
		}
		if (!list_next(p, &ring, &f))
			break;
	}
	return rc;
}

int ob1_setup_unexpected(struct process_info *p, const struct comm *c)
{
	const struct layout *L = &p->ii->L;
	ob1_reset(p);
	/* without ob1's types, or when ob1 is not the PML (its component, and with it its
	 * class objects, is not loaded), we cannot tell: not the same as an empty queue */
	if (!p->ii->have_ob1 || !p->class_ob1_comm)
		return CQ_MQS_NO_INFORMATION;
	if (!c->pml_comm)
		return CQ_MQS_OK; /* the PML has no state for it: nothing can have arrived */
	if (!is_a(p, c->pml_comm, p->class_ob1_comm))
		return CQ_MQS_NO_INFORMATION;
	taddr_t procs;
	uint64_t n;
	if (rd_ptr(p, c->pml_comm + (taddr_t)L->oc_procs, &procs) != CQ_MQS_OK ||
	    rd_size(p, c->pml_comm + (taddr_t)L->oc_num_procs, &n) != CQ_MQS_OK)
		return ERR_MEMORY;
	if (n > MAX_GROUP)
		return ERR_MEMORY;
	if (c->remote.n > 0 && n > (uint64_t)c->remote.n)
		n = (uint64_t)c->remote.n; /* one entry per peer: more is corruption */
	int cap = 0, rc = CQ_MQS_OK;
	for (uint64_t i = 0; i < n && rc == CQ_MQS_OK; i++) {
		taddr_t proc;
		if (rd_ptr(p, procs + i * (taddr_t)p->sz.pointer_size, &proc) != CQ_MQS_OK)
			return ERR_MEMORY;
		if (proc && is_a(p, proc, p->class_ob1_proc))
			rc = collect_peer(p, proc, &cap);
	}
	return rc == CQ_MQS_END_OF_LIST ? CQ_MQS_OK : rc; /* past MAX_FRAGS: the first ones */
}

/* Bytes of the header at the start of a MATCH fragment: OMPI_PML_OB1_MATCH_HDR_LEN, which
 * is the header without its trailing pad (14 of 16 bytes), or with the explicit pad of
 * heterogeneous builds (16). */
static uint64_t match_hdr_len(const struct layout *L)
{
	return L->m_padding >= 0 ? (uint64_t)L->m_padding + 2 : (uint64_t)L->m_seq + 2;
}

static int frag_op(struct process_info *p, const struct comm *c, const struct frag_ref *fr, mqs_op *op)
{
	const struct layout *L = &p->ii->L;
	/* hdr is a union whose every member opens with the match header */
	taddr_t hdr = fr->frag + (taddr_t)L->f_hdr, seg = fr->frag + (taddr_t)L->f_segments;
	uint64_t type, flags, ctx, seq, seg_len, msg_len = 0;
	int64_t src, tag;
	taddr_t data;
	if (rd_u(p, hdr + (taddr_t)L->m_common + (taddr_t)L->h_type, 1, &type) != CQ_MQS_OK ||
	    rd_u(p, hdr + (taddr_t)L->m_common + (taddr_t)L->h_flags, 1, &flags) != CQ_MQS_OK ||
	    rd_u(p, hdr + (taddr_t)L->m_ctx, 2, &ctx) != CQ_MQS_OK ||
	    rd_s(p, hdr + (taddr_t)L->m_src, 4, &src) != CQ_MQS_OK ||
	    rd_s(p, hdr + (taddr_t)L->m_tag, 4, &tag) != CQ_MQS_OK ||
	    rd_u(p, hdr + (taddr_t)L->m_seq, 2, &seq) != CQ_MQS_OK ||
	    rd_ptr(p, seg + (taddr_t)L->seg_addr, &data) != CQ_MQS_OK ||
	    rd_u(p, seg + (taddr_t)L->seg_len, 8, &seg_len) != CQ_MQS_OK)
		return ERR_MEMORY;
	if (tag < 0)
		return CQ_MQS_NO_INFORMATION; /* the library's own (collectives), like its requests */
	uint64_t hlen = 0;
	const char *kind;
	switch (type) {
	case HDR_MATCH:
		kind = "eager";
		hlen = match_hdr_len(L);
		break;
	case HDR_RNDV:
		kind = "rendezvous";
		hlen = (uint64_t)L->rv_size;
		break;
	case HDR_RGET:
		kind = "rendezvous (RDMA get)";
		hlen = seg_len; /* header plus registration handle: no data here */
		break;
	default:
		kind = "unknown header";
		hlen = seg_len;
	}
	uint64_t here = seg_len > hlen ? seg_len - hlen : 0;
	if (type == HDR_RNDV || type == HDR_RGET) {
		if (rd_u(p, hdr + (taddr_t)L->rv_msg_length, 8, &msg_len) != CQ_MQS_OK)
			return ERR_MEMORY;
	} else {
		msg_len = here;
	}
	memset(op, 0, sizeof(*op));
	op->status = CQ_MQS_ST_PENDING;
	op->desired_local_rank = op->actual_local_rank = src;
	op->desired_global_rank = op->actual_global_rank = world_rank(&c->remote, src);
	op->desired_tag = op->actual_tag = tag;
	op->desired_length = op->actual_length = (tword_t)msg_len;
	op->system_buffer = 1; /* the library's copy, not a user buffer */
	op->buffer = here ? data + hlen : 0;
	if (fr->out_of_order)
		set_text(op, 0, "Out of order (frags_cant_match) 0x%llx", (unsigned long long)fr->frag);
	else
		set_text(op, 0, "Unexpected 0x%llx", (unsigned long long)fr->frag);
	if (type == HDR_MATCH)
		set_text(op, 1, "eager: all %llu bytes arrived", (unsigned long long)msg_len);
	else
		set_text(op, 1, "%s: %llu of %llu bytes arrived", kind, (unsigned long long)here,
			 (unsigned long long)msg_len);
	if (fr->out_of_order)
		set_text(op, 2, "sequence %u, waiting for %u first", (unsigned)seq, (unsigned)fr->expected);
	else
		set_text(op, 2, "sequence %u", (unsigned)seq);
	if (ctx != (c->cid & 0xffff))
		set_text(op, 3, "header names context %u, not this communicator's", (unsigned)ctx);
	if (flags & HDR_FLAGS_NBO)
		set_text(op, 4, "header in network byte order: values may be swapped");
	return CQ_MQS_OK;
}

int ob1_next_unexpected(struct process_info *p, const struct comm *c, mqs_op *op)
{
	while (p->next_frag < p->nfrags) {
		int rc = frag_op(p, c, &p->frags[p->next_frag++], op);
		if (rc == CQ_MQS_OK)
			return rc;
		/* an unreadable or internal frag is skipped, not the queue */
	}
	return CQ_MQS_END_OF_LIST;
}
