/* SPDX-License-Identifier: MIT */
/* Target reads for the Open MPI 4.1 DLL: scalars of the target's width and byte order,
 * bounded walks of opal lists and free lists, and the layouts asked from the debugger. */
#include <stdio.h>
#include <string.h>

#include "ompi41.h"

const cq_mqs_basic_callbacks *dll_cb;

void *dll_malloc(size_t size)
{
	return dll_cb ? dll_cb->mqs_malloc_fp(size) : NULL;
}

void dll_free(void *p)
{
	if (p && dll_cb)
		dll_cb->mqs_free_fp(p);
}

void *dll_calloc(size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	void *p = dll_malloc(n * size != 0 ? n * size : 1);
	if (p)
		memset(p, 0, n * size);
	return p;
}

/* ---- scalars ---- */

int rd_bytes(struct process_info *p, taddr_t a, int n, void *buf)
{
	if (!a || n < 0)
		return ERR_MEMORY;
	return p->pcb->mqs_fetch_data_fp(p->proc, a, n, buf) == CQ_MQS_OK ?
		       CQ_MQS_OK : ERR_MEMORY;
}

int rd_u(struct process_info *p, taddr_t a, int size, uint64_t *v)
{
	unsigned char raw[8], host[8];
	if (size != 1 && size != 2 && size != 4 && size != 8)
		return ERR_SIZES;
	if (rd_bytes(p, a, size, raw) != CQ_MQS_OK)
		return ERR_MEMORY;
	/* one scalar at a time: the debugger swaps units of exactly this size */
	p->pcb->mqs_target_to_host_fp(p->proc, raw, host, size);
	switch (size) {
	case 1: *v = host[0]; break;
	case 2: { uint16_t x; memcpy(&x, host, 2); *v = x; break; }
	case 4: { uint32_t x; memcpy(&x, host, 4); *v = x; break; }
	default: memcpy(v, host, 8); break;
	}
	return CQ_MQS_OK;
}

int rd_s(struct process_info *p, taddr_t a, int size, int64_t *v)
{
	uint64_t u;
	int rc = rd_u(p, a, size, &u);
	if (rc != CQ_MQS_OK)
		return rc;
	/* sign-extend from the target's width: MPI_ANY_SOURCE stays -1, not 4294967295 */
	if (size < 8 && (u >> (8 * size - 1)) & 1)
		u |= ~UINT64_C(0) << (8 * size);
	*v = (int64_t)u;
	return CQ_MQS_OK;
}

int rd_ptr(struct process_info *p, taddr_t a, taddr_t *v)
{
	return rd_u(p, a, p->sz.pointer_size, v);
}

int rd_int(struct process_info *p, taddr_t a, int64_t *v)
{
	return rd_s(p, a, p->sz.int_size, v);
}

int rd_size(struct process_info *p, taddr_t a, uint64_t *v)
{
	return rd_u(p, a, p->size_t_size, v);
}

/* ---- lists ---- */

static taddr_t next_of(struct process_info *p, taddr_t item)
{
	taddr_t n;
	return rd_ptr(p, item + (taddr_t)p->ii->L.li_next, &n) == CQ_MQS_OK ? n : 0;
}

void list_begin(struct process_info *p, struct list_iter *it, taddr_t list)
{
	memset(it, 0, sizeof(*it));
	it->sentinel = list + (taddr_t)p->ii->L.l_sentinel;
	it->cur = next_of(p, it->sentinel);
	it->lim = 1;
}

void ring_begin(struct process_info *p, struct list_iter *it, taddr_t start)
{
	memset(it, 0, sizeof(*it));
	it->sentinel = start;
	it->cur = start ? next_of(p, start) : 0;
	it->lim = 1;
}

bool list_next(struct process_info *p, struct list_iter *it, taddr_t *item)
{
	if (!it->cur || it->cur == it->sentinel || it->n >= MAX_LIST_ITEMS)
		return false;
	*item = it->cur;
	it->n++;
	it->cur = next_of(p, it->cur);
	/* Brent: a loop that does not pass the sentinel meets the saved mark again */
	if (it->cur && it->cur == it->mark) {
		it->cur = 0;
	} else if (++it->steps == it->lim) {
		it->mark = it->cur;
		it->lim *= 2;
		it->steps = 0;
	}
	return true;
}

/* ---- free lists ----
 * opal_free_list_t keeps no index of its items: fl_allocations lists the malloc'ed chunks,
 * each an opal_free_list_item_t header followed (aligned to fl_frag_alignment) by items
 * fl_frag_size rounded up to that alignment apart. Chunks hold fl_num_per_alloc items,
 * except the first (the initial allocation), whose count is not recorded: like Open MPI's
 * DLL we take it as fl_num_allocated modulo fl_num_per_alloc. Every item must carry the
 * list's class (opal_object_t.obj_class == fl_frag_class), which rejects whatever lies
 * past a chunk whose count was guessed wrong. */

static taddr_t align_up(taddr_t a, uint64_t align)
{
	return (a + align - 1) & ~(taddr_t)(align - 1);
}

static bool next_chunk(struct process_info *p)
{
	struct flist_iter *f = &p->fl;
	taddr_t chunk;
	if (!list_next(p, &f->chunks, &chunk))
		return false;
	uint64_t n = f->per_alloc < f->total ? f->per_alloc : f->total;
	if (f->first_chunk) {
		f->first_chunk = false;
		if (f->total <= f->per_alloc)
			n = f->total;
		else if (f->total % f->per_alloc)
			n = f->total % f->per_alloc;
	}
	f->item = align_up(chunk + (taddr_t)p->ii->L.fli_size, f->align);
	f->end = f->item + n * f->stride;
	return true;
}

void flist_begin(struct process_info *p, taddr_t list)
{
	const struct layout *L = &p->ii->L;
	struct flist_iter *f = &p->fl;
	uint64_t size = 0;
	memset(f, 0, sizeof(*f));
	f->done = true;
	if (rd_size(p, list + (taddr_t)L->fl_frag_size, &size) != CQ_MQS_OK ||
	    rd_size(p, list + (taddr_t)L->fl_frag_alignment, &f->align) != CQ_MQS_OK ||
	    rd_size(p, list + (taddr_t)L->fl_num_per_alloc, &f->per_alloc) != CQ_MQS_OK ||
	    rd_size(p, list + (taddr_t)L->fl_num_allocated, &f->total) != CQ_MQS_OK ||
	    rd_ptr(p, list + (taddr_t)L->fl_frag_class, &f->frag_class) != CQ_MQS_OK)
		return;
	if (f->align == 0)
		f->align = 1;
	/* implausible numbers: a corrupt list, not something to scan */
	if ((f->align & (f->align - 1)) || f->align > 65536 || size == 0 || size > (1 << 24) ||
	    f->per_alloc == 0 || f->per_alloc > MAX_FREE_ITEMS)
		return;
	f->stride = align_up(size, f->align);
	if (f->total > MAX_FREE_ITEMS)
		f->total = MAX_FREE_ITEMS;
	list_begin(p, &f->chunks, list + (taddr_t)L->fl_allocations);
	f->first_chunk = true;
	f->done = !next_chunk(p);
}

bool flist_next(struct process_info *p, taddr_t *item)
{
	struct flist_iter *f = &p->fl;
	while (!f->done) {
		if (f->item >= f->end) {
			if (!next_chunk(p))
				f->done = true;
			continue;
		}
		taddr_t it = f->item, cls;
		f->item += f->stride;
		if (++f->seen > f->total) {
			f->done = true;
			break;
		}
		if (rd_ptr(p, it + (taddr_t)p->ii->L.obj_class, &cls) != CQ_MQS_OK) {
			f->item = f->end; /* unreadable chunk: go on with the next */
			continue;
		}
		if (cls != f->frag_class)
			continue;
		*item = it;
		return true;
	}
	return false;
}

/* ---- layouts ---- */

enum need { BASE, OB1, NAMES, OPTIONAL };

struct field_desc {
	const char *type, *field; /* field NULL: the type's size */
	size_t member;            /* offsetof(struct layout, ...) */
	enum need need;
};

#define F(t, f, m, n) {t, f, offsetof(struct layout, m), n}
static const struct field_desc fields[] = {
	F("opal_object_t", "obj_class", obj_class, OPTIONAL), /* first member: 0 if not found */
	F("opal_list_item_t", "opal_list_next", li_next, BASE),
	F("opal_list_item_t", "opal_list_prev", li_prev, BASE),
	F("opal_list_t", "opal_list_sentinel", l_sentinel, BASE),
	F("opal_free_list_item_t", NULL, fli_size, BASE),
	F("opal_free_list_t", "fl_allocations", fl_allocations, BASE),
	F("opal_free_list_t", "fl_frag_class", fl_frag_class, BASE),
	F("opal_free_list_t", "fl_frag_size", fl_frag_size, BASE),
	F("opal_free_list_t", "fl_frag_alignment", fl_frag_alignment, BASE),
	F("opal_free_list_t", "fl_num_per_alloc", fl_num_per_alloc, BASE),
	F("opal_free_list_t", "fl_num_allocated", fl_num_allocated, BASE),
	F("opal_pointer_array_t", "size", pa_size, BASE),
	F("opal_pointer_array_t", "number_free", pa_number_free, BASE),
	F("opal_pointer_array_t", "addr", pa_addr, BASE),
	F("ompi_communicator_t", "c_name", c_name, BASE),
	F("ompi_communicator_t", "c_contextid", c_contextid, BASE),
	F("ompi_communicator_t", "c_my_rank", c_my_rank, BASE),
	F("ompi_communicator_t", "c_flags", c_flags, BASE),
	F("ompi_communicator_t", "c_local_group", c_local_group, BASE),
	F("ompi_communicator_t", "c_remote_group", c_remote_group, BASE),
	F("ompi_communicator_t", "c_pml_comm", c_pml_comm, OB1),
	F("ompi_group_t", "grp_proc_count", grp_proc_count, BASE),
	F("ompi_group_t", "grp_flags", grp_flags, BASE),
	F("ompi_group_t", "grp_proc_pointers", grp_proc_pointers, BASE),
	F("ompi_datatype_t", "super", dt_super, BASE),
	F("ompi_datatype_t", "name", dt_name, BASE),
	F("opal_datatype_t", "size", odt_size, BASE),
	F("ompi_request_t", "req_type", req_type, BASE),
	F("ompi_request_t", "req_status", req_status, BASE),
	F("ompi_request_t", "req_complete", req_complete, BASE),
	F("ompi_request_t", "req_state", req_state, BASE),
	F("ompi_status_public_t", "MPI_SOURCE", st_source, BASE),
	F("ompi_status_public_t", "MPI_TAG", st_tag, BASE),
	F("ompi_status_public_t", "_ucount", st_ucount, BASE),
	F("mca_pml_base_request_t", "req_addr", b_addr, BASE),
	F("mca_pml_base_request_t", "req_count", b_count, BASE),
	F("mca_pml_base_request_t", "req_peer", b_peer, BASE),
	F("mca_pml_base_request_t", "req_tag", b_tag, BASE),
	F("mca_pml_base_request_t", "req_comm", b_comm, BASE),
	F("mca_pml_base_request_t", "req_datatype", b_datatype, BASE),
	F("mca_pml_base_request_t", "req_type", b_type, BASE),
	F("mca_pml_base_request_t", "req_pml_complete", b_pml_complete, BASE),
	F("mca_pml_base_send_request_t", "req_addr", s_addr, BASE),
	F("mca_pml_base_send_request_t", "req_bytes_packed", s_bytes_packed, BASE),
	F("mca_pml_base_send_request_t", "req_send_mode", s_send_mode, BASE),
	F("mca_pml_base_recv_request_t", "req_bytes_packed", r_bytes_packed, BASE),
	/* process names: world ranks of members held as different pointers (ob1 donor) */
	F("opal_proc_t", "proc_name", proc_name, NAMES),
	F("opal_process_name_t", "jobid", name_jobid, NAMES),
	F("opal_process_name_t", "vpid", name_vpid, NAMES),
	/* ob1's matching state (ob1 donor) */
	F("mca_pml_ob1_comm_t", "procs", oc_procs, OB1),
	F("mca_pml_ob1_comm_t", "num_procs", oc_num_procs, OB1),
	F("mca_pml_ob1_comm_proc_t", "expected_sequence", op_expected_sequence, OB1),
	F("mca_pml_ob1_comm_proc_t", "frags_cant_match", op_frags_cant_match, OB1),
	F("mca_pml_ob1_comm_proc_t", "unexpected_frags", op_unexpected_frags, OB1),
	F("mca_pml_ob1_recv_frag_t", "hdr", f_hdr, OB1),
	F("mca_pml_ob1_recv_frag_t", "range", f_range, OB1),
	F("mca_pml_ob1_recv_frag_t", "segments", f_segments, OB1),
	F("mca_pml_ob1_common_hdr_t", "hdr_type", h_type, OB1),
	F("mca_pml_ob1_common_hdr_t", "hdr_flags", h_flags, OB1),
	F("mca_pml_ob1_match_hdr_t", "hdr_common", m_common, OB1),
	F("mca_pml_ob1_match_hdr_t", "hdr_ctx", m_ctx, OB1),
	F("mca_pml_ob1_match_hdr_t", "hdr_src", m_src, OB1),
	F("mca_pml_ob1_match_hdr_t", "hdr_tag", m_tag, OB1),
	F("mca_pml_ob1_match_hdr_t", "hdr_seq", m_seq, OB1),
	/* only with OPAL_ENABLE_HETEROGENEOUS_SUPPORT: then the header is 16 bytes, not 14 */
	F("mca_pml_ob1_match_hdr_t", "hdr_padding", m_padding, OPTIONAL),
	F("mca_pml_ob1_rendezvous_hdr_t", "hdr_msg_length", rv_msg_length, OB1),
	F("mca_pml_ob1_rendezvous_hdr_t", NULL, rv_size, OB1),
	F("mca_btl_base_segment_t", "seg_addr", seg_addr, OB1),
	F("mca_btl_base_segment_t", "seg_len", seg_len, OB1),
};
#undef F

void layout_resolve(struct image_info *ii, cq_mqs_image *image)
{
	const cq_mqs_image_callbacks8 *icb = ii->icb;
	bool missing[OPTIONAL + 1] = {false};
	char first[OPTIONAL + 1][96] = {{0}};
	const char *last_name = NULL;
	cq_mqs_type *t = NULL;
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const struct field_desc *d = &fields[i];
		int *out = (int *)((char *)&ii->L + d->member);
		if (!last_name || strcmp(last_name, d->type) != 0) { /* the table is grouped by type */
			t = icb->mqs_find_type_fp(image, (char *)d->type, CQ_MQS_LANG_C);
			last_name = d->type;
		}
		*out = !t ? -1 : d->field ? icb->mqs_field_offset_fp(t, (char *)d->field) : icb->mqs_sizeof_fp(t);
		if (!d->field && *out <= 0)
			*out = -1;
		if (*out < 0) {
			if (!missing[d->need])
				snprintf(first[d->need], sizeof(first[0]), "%s%s%s", d->type,
					 d->field ? "." : "", d->field ? d->field : "");
			missing[d->need] = true;
		}
	}
	if (ii->L.obj_class < 0)
		ii->L.obj_class = 0; /* opal_object_t opens every Open MPI object */
	ii->have_base = !missing[BASE];
	ii->have_ob1 = !missing[OB1];
	ii->have_names = !missing[NAMES];
	if (!ii->have_base)
		snprintf(ii->message, sizeof(ii->message),
			 "coreq Open MPI 4.1 DLL: no %.90s in the DWARF of %%s or the type donors (Debian's libmpi has none: give --types with the Open MPI type donor)",
			 first[BASE]);
	else if (!ii->have_ob1)
		snprintf(ii->message, sizeof(ii->message),
			 "coreq Open MPI 4.1 DLL: no %.90s for %%s: no unexpected-message queue (give the ob1 type donor with --types)",
			 first[OB1]);
	else
		ii->message[0] = 0;
}
