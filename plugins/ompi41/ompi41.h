/* SPDX-License-Identifier: MIT */
/*
 * coreq's own MQD DLL for Open MPI 4.1 with the ob1 PML: the parts shared by
 *   msgq.c   the MQD entry points, communicators and groups, send/receive requests
 *   walk.c   target reads (one scalar at a time, target width and byte order),
 *            bounded list walks, the type layouts asked from the debugger
 *   ob1.c    ob1's unexpected-message queues (unexpected_frags, frags_cant_match)
 *
 * Addresses and words are 64-bit whatever the host (mqs_dll_taddr_width() == 8), so a
 * 32-bit debugger can drive it against a 64-bit core. Nothing here knows the target: sizes
 * come from mqs_get_type_sizes, layouts from mqs_find_type/mqs_field_offset/mqs_sizeof
 * (DWARF of type donors: Debian's libmpi has none), bytes from mqs_fetch_data converted by
 * mqs_target_to_host. Facts about Open MPI 4.1.4 (what lives where, which constants) come
 * from its sources; the code is ours.
 */
#ifndef COREQ_OMPI41_H
#define COREQ_OMPI41_H

#include <stdbool.h>
#include <stdint.h>

#include "mqd/mqs_abi.h"

/* Only the MQD entry points are exported (msgq.c marks them default). */
#pragma GCC visibility push(hidden)

typedef uint64_t taddr_t;
typedef int64_t tword_t;
typedef cq_mqs_communicator8 mqs_comm;
typedef cq_mqs_pending_operation8 mqs_op;

/* Our error codes (mqs_dll_error_string). */
enum {
	ERR_NO_STORE = CQ_MQS_FIRST_USER_CODE,
	ERR_MISSING_TYPE,   /* a type or field the DLL needs is not in the debugger's DWARF */
	ERR_NO_SYMBOL,      /* ompi_mpi_communicators or a request free list not found */
	ERR_SIZES,          /* the target's type sizes are not ones Open MPI can have */
	ERR_NO_COMM,        /* no current communicator */
	ERR_BAD_CLASS,      /* unknown operation class */
	ERR_MEMORY,         /* target memory needed for the answer could not be read */
	ERR_IGNORE_QUEUES,  /* MPIR_Ignore_queues is set: the runtime asks for no display */
	ERR_DONOR,          /* the layouts are not of this target's ABI (donor of another arch) */
};

/* ---- layouts (walk.c) ---- */

/* Offsets of the fields we read, -1 where the debugger has no such field; sizes 0 if
 * unknown. Filled once per image from the tables in walk.c. */
struct layout {
	/* opal classes */
	int obj_class;                        /* opal_object_t */
	int li_next, li_prev;                 /* opal_list_item_t */
	int l_sentinel;                       /* opal_list_t */
	int fli_size;                         /* sizeof(opal_free_list_item_t) */
	int fl_allocations, fl_frag_class, fl_frag_size, fl_frag_alignment, fl_num_per_alloc,
	    fl_num_allocated;                 /* opal_free_list_t */
	int pa_size, pa_number_free, pa_addr; /* opal_pointer_array_t */
	int proc_name, name_jobid, name_vpid; /* opal_proc_t, opal_process_name_t (optional) */
	/* communicators, groups, datatypes */
	int c_name, c_contextid, c_my_rank, c_flags, c_local_group, c_remote_group, c_pml_comm;
	int grp_proc_count, grp_flags, grp_proc_pointers;
	int dt_super, dt_name, odt_size;      /* ompi_datatype_t, opal_datatype_t */
	/* requests */
	int req_type, req_status, req_complete, req_state; /* ompi_request_t */
	int st_source, st_tag, st_ucount;     /* ompi_status_public_t */
	int b_addr, b_count, b_peer, b_tag, b_comm, b_datatype, b_type, b_pml_complete;
	int s_addr, s_bytes_packed, s_send_mode; /* mca_pml_base_send_request_t */
	int r_bytes_packed;                   /* mca_pml_base_recv_request_t */
	/* ob1 (unexpected queue only) */
	int oc_procs, oc_num_procs;           /* mca_pml_ob1_comm_t */
	int op_expected_sequence, op_frags_cant_match, op_unexpected_frags; /* ..._comm_proc_t */
	int f_hdr, f_range, f_segments;       /* mca_pml_ob1_recv_frag_t */
	int h_type, h_flags;                  /* mca_pml_ob1_common_hdr_t */
	int m_common, m_ctx, m_src, m_tag, m_seq, m_padding; /* mca_pml_ob1_match_hdr_t */
	int rv_msg_length, rv_size;           /* mca_pml_ob1_rendezvous_hdr_t */
	int seg_addr, seg_len;                /* mca_btl_base_segment_t */
};

struct image_info {
	const cq_mqs_image_callbacks8 *icb;
	struct layout L;
	bool have_base, have_ob1, have_names;
	char message[256]; /* mqs_image_has_queues' message (at most one %s) */
};

/* ---- process state ---- */

/* An opal_list_t walk, bounded and cycle-checked (Brent): a corrupt list ends the walk. */
struct list_iter {
	taddr_t sentinel, cur, mark;
	uint64_t steps, lim, n;
};


/* A process name (jobid, vpid): how a group member is recognised in MPI_COMM_WORLD when
 * the two groups hold different pointers for it (a sentinel in one, the ompi_proc_t in
 * the other). jobid_known false: a 32-bit sentinel, which carries the vpid only. */
struct pname {
	bool valid, jobid_known;
	uint32_t jobid, vpid;
};

struct group {
	int n;
	int *world; /* world rank per local rank, -1 unknown */
};

struct comm {
	taddr_t addr, pml_comm;
	uint32_t cid;
	int64_t local_rank;
	bool inter;
	char name[64];
	struct group local, remote; /* remote: peers of an intercommunicator (else = local) */
};

/* One pending item of the current queue. */
struct frag_ref {
	taddr_t frag;
	bool out_of_order;
	uint16_t expected; /* the peer's next expected sequence number (out of order only) */
};

struct process_info {
	cq_mqs_process *proc; /* the debugger's handle, renewed at every entry point */
	const cq_mqs_process_callbacks8 *pcb;
	cq_mqs_image *image;
	struct image_info *ii;
	cq_mqs_target_type_sizes sz;
	int size_t_size;
	taddr_t commlist, sendreqs, recvreqs, comm_null;
	taddr_t class_ob1_comm, class_ob1_proc, class_ob1_frag; /* 0: symbol not found */
	/* MPI_COMM_WORLD's members, for world ranks: names by rank, pointers sorted */
	int nworld;
	struct wptr {
		taddr_t ptr;
		int rank;
	} *world_ptr;
	struct pname *world_name;
	/* communicators, sorted by context id; cur indexes the iterator */
	struct comm *comms;
	int ncomms, cur;
	/* the operation iterator */
	int op_class;
	struct flist_iter {
		struct list_iter chunks; /* fl_allocations: one item per malloc'ed chunk */
		taddr_t item, end, frag_class;
		uint64_t align, stride, per_alloc, seen, total;
		bool first_chunk, done;
	} fl;
	struct frag_ref *frags;
	int nfrags, next_frag;
	uint64_t frag_steps;
};

/* ---- walk.c: target reads ---- */

/* The debugger's basic callbacks (mqs_setup_basic_callbacks) and its allocator. */
extern const cq_mqs_basic_callbacks *dll_cb;
void *dll_malloc(size_t size);
void dll_free(void *p);
void *dll_calloc(size_t n, size_t size);

int rd_u(struct process_info *p, taddr_t a, int size, uint64_t *v);   /* unsigned, 1..8 bytes */
int rd_s(struct process_info *p, taddr_t a, int size, int64_t *v);    /* signed: sign-extended */
int rd_ptr(struct process_info *p, taddr_t a, taddr_t *v);
int rd_int(struct process_info *p, taddr_t a, int64_t *v);           /* a C int of the target */
int rd_size(struct process_info *p, taddr_t a, uint64_t *v);         /* a size_t */
int rd_bytes(struct process_info *p, taddr_t a, int n, void *buf);

void list_begin(struct process_info *p, struct list_iter *it, taddr_t list);
/* A ring without sentinel (ob1's out-of-order frags): the items after @p start, up to it. */
void ring_begin(struct process_info *p, struct list_iter *it, taddr_t start);
bool list_next(struct process_info *p, struct list_iter *it, taddr_t *item);

/* The items of an opal_free_list_t (every request ever allocated, in chunk order). */
void flist_begin(struct process_info *p, taddr_t list);
bool flist_next(struct process_info *p, taddr_t *item);

/* Resolve all layouts for @p ii; fills ii->message on failure. */
void layout_resolve(struct image_info *ii, cq_mqs_image *image);

/* ---- msgq.c ---- */
int world_rank(const struct group *g, int64_t local);
void set_text(mqs_op *op, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- ob1.c ---- */
int ob1_setup_unexpected(struct process_info *p, const struct comm *c);
int ob1_next_unexpected(struct process_info *p, const struct comm *c, mqs_op *op);
void ob1_reset(struct process_info *p);

/* Caps: a corrupt or hostile core must not make us loop or allocate without bound. */
#define MAX_LIST_ITEMS 100000   /* items followed in one list */
#define MAX_COMMS 65536         /* communicators in ompi_mpi_communicators */
#define MAX_GROUP (1 << 22)     /* members of one group */
#define MAX_FRAGS 100000        /* unexpected fragments listed per communicator */
#define MAX_FREE_ITEMS 1000000 /* requests scanned per free list */
#define MAX_FRAG_STEPS 400000  /* list links followed for one communicator's unexpected queue */

#pragma GCC visibility pop

#endif
