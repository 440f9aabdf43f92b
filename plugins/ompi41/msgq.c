/* SPDX-License-Identifier: MIT */
/* The MQD entry points of coreq's Open MPI 4.1 DLL: setup, communicators and their groups
 * as MPI_COMM_WORLD ranks, pending sends and receives from the PML's request free lists.
 * The unexpected-message queue is ob1.c's. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ompi41.h"

/* Every entry point with the prototype coreq's host expects, and only these exported. */
#pragma GCC visibility push(default)
#define DECLARE(name, ret, args) ret name args;
CQ_MQS_FUNCTIONS(DECLARE)
#undef DECLARE
#pragma GCC visibility pop

/* Constants of Open MPI 4.1 that DWARF cannot give (enums and macros of its headers). */
#define OMPI_REQUEST_INVALID 0  /* ompi_request_state_t */
#define OMPI_REQUEST_PML 0      /* ompi_request_type_t */
#define PML_REQUEST_SEND 1      /* mca_pml_base_request_type_t: SEND, RECV, IPROBE, */
#define PML_REQUEST_RECV 2      /* PROBE, IMPROBE, MPROBE follow */
#define PML_REQUEST_MPROBE 6
#define REQUEST_COMPLETED 1     /* req_complete: (void *)1; 0 pending, else a waiter's sync */
#define MPI_ANY_TAG_ (-1)
#define OMPI_COMM_INTER 0x1     /* c_flags */
#define OMPI_GROUP_DENSE 0x4    /* grp_flags: grp_proc_pointers lists every member */

static struct image_info *iinfo(cq_mqs_image *image)
{
	return dll_cb && image ? (struct image_info *)dll_cb->mqs_get_image_info_fp(image) : NULL;
}

static struct process_info *pinfo(cq_mqs_process *process)
{
	struct process_info *p = dll_cb && process ? (struct process_info *)dll_cb->mqs_get_process_info_fp(process) : NULL;
	if (p)
		p->proc = process;
	return p;
}

void set_text(mqs_op *op, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(op->extra_text[line], sizeof(op->extra_text[line]), fmt, ap);
	va_end(ap);
}

/* ---- setup ---- */

void mqs_setup_basic_callbacks(const cq_mqs_basic_callbacks *cb)
{
	dll_cb = cb;
}

char *mqs_version_string(void)
{
	return (char *)"coreq MQD DLL for Open MPI 4.1 (ob1) 1.0: communicators, sends, receives, "
		       "unexpected messages; 64-bit addresses on every host";
}

int mqs_version_compatibility(void)
{
	return CQ_MQS_COMPAT_MIN; /* MQS_INTERFACE_COMPATIBILITY 2: the MQD 1.0 interface */
}

int mqs_dll_taddr_width(void)
{
	return (int)sizeof(taddr_t);
}

char *mqs_dll_error_string(int code)
{
	switch (code) {
	case ERR_NO_STORE: return (char *)"out of memory (the debugger's mqs_malloc failed)";
	case ERR_MISSING_TYPE: return (char *)"an Open MPI type or field is not in the debugger's DWARF (type donor missing?)";
	case ERR_NO_SYMBOL: return (char *)"ompi_mpi_communicators or the PML request free lists not found: not an Open MPI 4.1 process";
	case ERR_SIZES: return (char *)"the target's type sizes are not usable";
	case ERR_NO_COMM: return (char *)"no current communicator";
	case ERR_BAD_CLASS: return (char *)"unknown operation class";
	case ERR_MEMORY: return (char *)"target memory needed for the answer is not readable";
	case ERR_DONOR: return (char *)"the type layouts do not fit the target's pointer size: a type donor built for another architecture?";
	case ERR_IGNORE_QUEUES: return (char *)"MPIR_Ignore_queues is defined: the runtime asks debuggers not to show queues";
	}
	return (char *)"unknown error";
}

int mqs_setup_image(cq_mqs_image *image, const void *image_callbacks)
{
	if (!dll_cb || !image || !image_callbacks)
		return ERR_NO_STORE;
	struct image_info *ii = dll_calloc(1, sizeof(*ii));
	if (!ii)
		return ERR_NO_STORE;
	ii->icb = image_callbacks;
	dll_cb->mqs_put_image_info_fp(image, (cq_mqs_image_info *)ii);
	return CQ_MQS_OK;
}

int mqs_image_has_queues(cq_mqs_image *image, char **message)
{
	struct image_info *ii = iinfo(image);
	if (message)
		*message = NULL;
	if (!ii)
		return ERR_NO_STORE;
	taddr_t a;
	if (ii->icb->mqs_find_symbol_fp(image, (char *)"MPIR_Ignore_queues", &a) == CQ_MQS_OK)
		return ERR_IGNORE_QUEUES;
	layout_resolve(ii, image);
	if (message && ii->message[0])
		*message = ii->message;
	return ii->have_base ? CQ_MQS_OK : ERR_MISSING_TYPE;
}

void mqs_destroy_image_info(cq_mqs_image_info *info)
{
	dll_free(info);
}

int mqs_setup_process(cq_mqs_process *process, const void *process_callbacks)
{
	if (!dll_cb || !process || !process_callbacks)
		return ERR_NO_STORE;
	struct process_info *p = dll_calloc(1, sizeof(*p));
	if (!p)
		return ERR_NO_STORE;
	p->proc = process;
	p->pcb = process_callbacks;
	p->image = p->pcb->mqs_get_image_fp(process);
	p->ii = iinfo(p->image);
	if (!p->ii) {
		dll_free(p);
		return ERR_NO_STORE;
	}
	p->ii->icb->mqs_get_type_sizes_fp(process, &p->sz);
	/* size_t is pointer-sized on every ABI Open MPI 4.1 runs on (ILP32, LP64) */
	p->size_t_size = p->sz.pointer_size;
	dll_cb->mqs_put_process_info_fp(process, (cq_mqs_process_info *)p);
	if ((p->sz.int_size != 2 && p->sz.int_size != 4 && p->sz.int_size != 8) ||
	    (p->sz.pointer_size != 4 && p->sz.pointer_size != 8))
		return ERR_SIZES;
	/* opal_list_next and opal_list_prev are adjacent pointers: a cheap check that the
	 * DWARF describes this target's ABI and not another architecture's build */
	const struct layout *L = &p->ii->L;
	if (p->ii->have_base && L->li_prev - L->li_next != p->sz.pointer_size)
		return ERR_DONOR;
	return CQ_MQS_OK;
}

static taddr_t symbol(struct process_info *p, const char *name)
{
	taddr_t a = 0;
	if (p->ii->icb->mqs_find_symbol_fp(p->image, (char *)name, &a) != CQ_MQS_OK)
		return 0;
	return a;
}

int mqs_process_has_queues(cq_mqs_process *process, char **message)
{
	struct process_info *p = pinfo(process);
	if (message)
		*message = NULL;
	if (!p)
		return ERR_NO_STORE;
	if (!p->ii->have_base)
		return ERR_MISSING_TYPE;
	p->commlist = symbol(p, "ompi_mpi_communicators");
	p->sendreqs = symbol(p, "mca_pml_base_send_requests");
	p->recvreqs = symbol(p, "mca_pml_base_recv_requests");
	if (!p->commlist || !p->sendreqs || !p->recvreqs)
		return ERR_NO_SYMBOL;
	/* MPI_COMM_NULL sits in the communicator array but is no communicator to show */
	p->comm_null = symbol(p, "ompi_mpi_comm_null");
	/* ob1's class objects: they tell that c_pml_comm and its members really are ob1's
	 * (only in mca_pml_ob1.so, which is loaded only when ob1 is the PML) */
	if (p->ii->have_ob1) {
		p->class_ob1_comm = symbol(p, "mca_pml_ob1_comm_t_class");
		p->class_ob1_proc = symbol(p, "mca_pml_ob1_comm_proc_t_class");
		p->class_ob1_frag = symbol(p, "mca_pml_ob1_recv_frag_t_class");
	}
	return CQ_MQS_OK;
}

static void free_comms(struct process_info *p)
{
	for (int i = 0; i < p->ncomms; i++) {
		if (p->comms[i].remote.world != p->comms[i].local.world)
			dll_free(p->comms[i].remote.world);
		dll_free(p->comms[i].local.world);
	}
	dll_free(p->comms);
	p->comms = NULL;
	p->ncomms = p->cur = 0;
	dll_free(p->world_ptr);
	dll_free(p->world_name);
	p->world_ptr = NULL;
	p->world_name = NULL;
	p->nworld = 0;
}

void mqs_destroy_process_info(cq_mqs_process_info *info)
{
	struct process_info *p = (struct process_info *)info;
	if (!p)
		return;
	free_comms(p);
	ob1_reset(p);
	dll_free(p);
}

/* ---- groups ---- */

/* The name of a group member, from the pointer a group holds for it: Open MPI 4.1 puts a
 * "sentinel" (the name, tagged with bit 0) where no ompi_proc_t exists yet, and replaces
 * it in a group once the process is looked up, so two groups may hold different values
 * for one process. */
static struct pname member_name(struct process_info *p, taddr_t v)
{
	struct pname n = {0};
	if (v & 1) {
		if (p->sz.pointer_size == 8) { /* bit 0 tag, 1-15 local jobid, 16-31 family, 32-63 vpid */
			n.jobid = (uint32_t)(((v >> 16) & 0xffff) << 16 | ((v >> 1) & 0x7fff));
			n.vpid = (uint32_t)(v >> 32);
			n.jobid_known = true;
		} else { /* 32-bit: the vpid only, of the own job */
			n.vpid = (uint32_t)((v >> 1) & 0x7fffffff);
		}
		n.valid = true;
	} else if (v && p->ii->have_names) { /* an ompi_proc_t: its opal_proc_t comes first */
		uint64_t j, k;
		taddr_t name = v + (taddr_t)p->ii->L.proc_name;
		if (rd_u(p, name + (taddr_t)p->ii->L.name_jobid, 4, &j) == CQ_MQS_OK &&
		    rd_u(p, name + (taddr_t)p->ii->L.name_vpid, 4, &k) == CQ_MQS_OK) {
			n.jobid = (uint32_t)j;
			n.vpid = (uint32_t)k;
			n.valid = n.jobid_known = true;
		}
	}
	return n;
}

static bool same_process(struct pname a, struct pname b)
{
	return a.valid && b.valid && a.vpid == b.vpid && (!a.jobid_known || !b.jobid_known || a.jobid == b.jobid);
}

static int by_ptr(const void *a, const void *b)
{
	const struct wptr *x = a, *y = b;
	return x->ptr < y->ptr ? -1 : x->ptr > y->ptr;
}

/* The MPI_COMM_WORLD rank of the member held as @p v: the same pointer in the world group
 * (what Open MPI's DLL does), else the same process name. */
static int to_world(struct process_info *p, taddr_t v)
{
	struct wptr key = {v, 0}, *hit;
	if (!v)
		return -1;
	if (p->world_ptr && (hit = bsearch(&key, p->world_ptr, (size_t)p->nworld, sizeof(key), by_ptr)))
		return hit->rank;
	struct pname n = member_name(p, v);
	if (!n.valid || !p->world_name)
		return -1;
	if (n.vpid < (uint32_t)p->nworld && same_process(n, p->world_name[n.vpid]))
		return (int)n.vpid; /* the usual case: world rank == vpid */
	for (int j = 0; j < p->nworld && j < 65536; j++) /* bounded: O(members x world) */
		if (same_process(n, p->world_name[j]))
			return j;
	return -1;
}

/* The member pointers of a group: one read of the array, converted one pointer at a time
 * (a corrupt member count then costs one failed read, not millions). */
static taddr_t *member_ptrs(struct process_info *p, taddr_t procs, int n)
{
	int ps = p->sz.pointer_size;
	unsigned char *raw = dll_malloc((size_t)n * (size_t)ps);
	taddr_t *v = dll_calloc((size_t)n, sizeof(taddr_t));
	if (raw && v && rd_bytes(p, procs, n * ps, raw) == CQ_MQS_OK) {
		for (int i = 0; i < n; i++) {
			unsigned char host[8];
			p->pcb->mqs_target_to_host_fp(p->proc, raw + (size_t)i * (size_t)ps, host, ps);
			if (ps == 4) {
				uint32_t x;
				memcpy(&x, host, 4);
				v[i] = x;
			} else {
				memcpy(&v[i], host, 8);
			}
		}
		dll_free(raw);
		return v;
	}
	dll_free(raw);
	dll_free(v);
	return NULL;
}

/* Read the group at @p g; @p world: this is MPI_COMM_WORLD's, remember its members. */
static int read_group(struct process_info *p, taddr_t g, struct group *out, bool world)
{
	const struct layout *L = &p->ii->L;
	int64_t n;
	uint64_t flags;
	taddr_t procs, *v = NULL;
	out->n = 0;
	out->world = NULL;
	if (!g || rd_int(p, g + (taddr_t)L->grp_proc_count, &n) != CQ_MQS_OK ||
	    rd_u(p, g + (taddr_t)L->grp_flags, 4, &flags) != CQ_MQS_OK ||
	    rd_ptr(p, g + (taddr_t)L->grp_proc_pointers, &procs) != CQ_MQS_OK)
		return ERR_MEMORY;
	if (n < 0 || n > MAX_GROUP)
		return ERR_MEMORY;
	out->n = (int)n;
	if (!(out->world = dll_calloc(n ? (size_t)n : 1, sizeof(int))))
		return ERR_NO_STORE;
	for (int i = 0; i < n; i++)
		out->world[i] = -1;
	/* sparse groups (strided, bitmap, sporadic) keep no pointer per member: like Open
	 * MPI's DLL we do not resolve them */
	if (!n || !(flags & OMPI_GROUP_DENSE) || !(v = member_ptrs(p, procs, (int)n)))
		return CQ_MQS_OK;
	if (world) {
		p->world_ptr = dll_calloc((size_t)n, sizeof(struct wptr));
		p->world_name = dll_calloc((size_t)n, sizeof(struct pname));
		if (!p->world_ptr || !p->world_name) {
			dll_free(v);
			return ERR_NO_STORE;
		}
		for (int i = 0; i < n; i++) {
			p->world_ptr[i] = (struct wptr){v[i], i};
			p->world_name[i] = member_name(p, v[i]);
			out->world[i] = i;
		}
		p->nworld = (int)n;
		qsort(p->world_ptr, (size_t)n, sizeof(struct wptr), by_ptr);
	} else {
		for (int i = 0; i < n; i++)
			out->world[i] = to_world(p, v[i]);
	}
	dll_free(v);
	return CQ_MQS_OK;
}

int world_rank(const struct group *g, int64_t local)
{
	return local >= 0 && local < g->n ? g->world[local] : -1;
}

/* ---- communicators ---- */

static int by_cid(const void *a, const void *b)
{
	const struct comm *x = a, *y = b;
	return x->cid < y->cid ? -1 : x->cid > y->cid;
}

static int read_comm(struct process_info *p, taddr_t addr, struct comm *c, bool world)
{
	const struct layout *L = &p->ii->L;
	uint64_t cid, flags;
	taddr_t lg, rg;
	memset(c, 0, sizeof(*c));
	c->addr = addr;
	if (rd_u(p, addr + (taddr_t)L->c_contextid, 4, &cid) != CQ_MQS_OK ||
	    rd_int(p, addr + (taddr_t)L->c_my_rank, &c->local_rank) != CQ_MQS_OK ||
	    rd_u(p, addr + (taddr_t)L->c_flags, 4, &flags) != CQ_MQS_OK ||
	    rd_ptr(p, addr + (taddr_t)L->c_local_group, &lg) != CQ_MQS_OK ||
	    rd_ptr(p, addr + (taddr_t)L->c_remote_group, &rg) != CQ_MQS_OK)
		return ERR_MEMORY;
	c->cid = (uint32_t)cid;
	c->inter = flags & OMPI_COMM_INTER;
	if (rd_bytes(p, addr + (taddr_t)L->c_name, (int)sizeof(c->name), c->name) != CQ_MQS_OK)
		c->name[0] = 0;
	c->name[sizeof(c->name) - 1] = 0;
	if (L->c_pml_comm >= 0 && rd_ptr(p, addr + (taddr_t)L->c_pml_comm, &c->pml_comm) != CQ_MQS_OK)
		c->pml_comm = 0;
	int rc = read_group(p, lg, &c->local, world);
	if (rc != CQ_MQS_OK)
		return rc;
	/* peers (req_peer, hdr_src) of an intercommunicator are ranks of the remote group */
	if (c->inter && rg && rg != lg)
		return read_group(p, rg, &c->remote, false);
	c->remote = c->local;
	return CQ_MQS_OK;
}

int mqs_update_communicator_list(cq_mqs_process *process)
{
	struct process_info *p = pinfo(process);
	if (!p || !p->commlist)
		return ERR_NO_SYMBOL;
	const struct layout *L = &p->ii->L;
	int64_t size;
	taddr_t addr;
	free_comms(p);
	if (rd_int(p, p->commlist + (taddr_t)L->pa_size, &size) != CQ_MQS_OK ||
	    rd_ptr(p, p->commlist + (taddr_t)L->pa_addr, &addr) != CQ_MQS_OK)
		return ERR_MEMORY;
	if (size < 0 || size > MAX_COMMS)
		return ERR_MEMORY;
	if (!(p->comms = dll_calloc(size ? (size_t)size : 1, sizeof(struct comm))))
		return ERR_NO_STORE;
	/* MPI_COMM_WORLD is always at index 0: read first, its group maps to world ranks */
	for (int64_t i = 0; i < size; i++) {
		taddr_t c;
		if (rd_ptr(p, addr + (taddr_t)i * (taddr_t)p->sz.pointer_size, &c) != CQ_MQS_OK)
			return ERR_MEMORY;
		if (!c || c == p->comm_null)
			continue;
		int rc = read_comm(p, c, &p->comms[p->ncomms], i == 0);
		if (rc == CQ_MQS_NO_INFORMATION || rc == ERR_NO_STORE)
			return rc;
		if (rc == CQ_MQS_OK)
			p->ncomms++; /* an unreadable communicator is left out, not the list */
		else {
			dll_free(p->comms[p->ncomms].local.world);
			if (p->comms[p->ncomms].remote.world != p->comms[p->ncomms].local.world)
				dll_free(p->comms[p->ncomms].remote.world);
		}
	}
	qsort(p->comms, (size_t)p->ncomms, sizeof(struct comm), by_cid);
	return CQ_MQS_OK;
}

int mqs_setup_communicator_iterator(cq_mqs_process *process)
{
	struct process_info *p = pinfo(process);
	if (!p)
		return ERR_NO_STORE;
	p->cur = 0;
	return p->ncomms ? CQ_MQS_OK : CQ_MQS_END_OF_LIST;
}

static struct comm *current(struct process_info *p)
{
	return p && p->cur >= 0 && p->cur < p->ncomms ? &p->comms[p->cur] : NULL;
}

int mqs_get_communicator(cq_mqs_process *process, void *communicator)
{
	struct comm *c = current(pinfo(process));
	if (!c || !communicator)
		return ERR_NO_COMM;
	mqs_comm *out = communicator;
	memset(out, 0, sizeof(*out));
	out->unique_id = c->cid;
	out->local_rank = c->local_rank;
	out->size = c->local.n;
	memcpy(out->name, c->name, sizeof(out->name));
	return CQ_MQS_OK;
}

int mqs_get_comm_group(cq_mqs_process *process, int *ranks)
{
	struct comm *c = current(pinfo(process));
	if (!c || !ranks)
		return ERR_NO_COMM;
	if (c->local.n)
		memcpy(ranks, c->local.world, (size_t)c->local.n * sizeof(int));
	return CQ_MQS_OK;
}

int mqs_next_communicator(cq_mqs_process *process)
{
	struct process_info *p = pinfo(process);
	if (!p)
		return ERR_NO_STORE;
	if (p->cur < p->ncomms)
		p->cur++;
	return p->cur < p->ncomms ? CQ_MQS_OK : CQ_MQS_END_OF_LIST;
}

/* ---- sends and receives ---- */

int mqs_setup_operation_iterator(cq_mqs_process *process, int op_class)
{
	struct process_info *p = pinfo(process);
	struct comm *c = current(p);
	if (!c)
		return ERR_NO_COMM;
	p->op_class = op_class;
	switch (op_class) {
	case CQ_MQS_PENDING_SENDS:
		flist_begin(p, p->sendreqs);
		return CQ_MQS_OK;
	case CQ_MQS_PENDING_RECEIVES:
		flist_begin(p, p->recvreqs);
		return CQ_MQS_OK;
	case CQ_MQS_UNEXPECTED_MESSAGES:
		return ob1_setup_unexpected(p, c);
	}
	return ERR_BAD_CLASS;
}

static const char *send_mode(int64_t m)
{
	static const char *const names[] = {"synchronous", "complete", "buffered", "ready", "standard"};
	return m >= 0 && m < 5 ? names[m] : "unknown mode";
}

static const char *recv_kind(int64_t t)
{
	static const char *const names[] = {"Receive", "MPI_Iprobe", "MPI_Probe", "MPI_Improbe", "MPI_Mprobe"};
	return t >= PML_REQUEST_RECV && t <= PML_REQUEST_MPROBE ? names[t - PML_REQUEST_RECV] : "Request";
}

/* The request at @p r as an operation if it is a live user request of communicator @p c
 * in the list being walked: CQ_MQS_OK, or CQ_MQS_NO_INFORMATION to skip it. */
static int request_op(struct process_info *p, const struct comm *c, taddr_t r, bool send, mqs_op *op)
{
	const struct layout *L = &p->ii->L;
	int64_t state, otype, ptype, tag, peer;
	uint64_t complete, pml_complete, count, dsize = 0;
	taddr_t comm, buf, dt;
	if (rd_int(p, r + (taddr_t)L->req_state, &state) != CQ_MQS_OK || state == OMPI_REQUEST_INVALID ||
	    rd_ptr(p, r + (taddr_t)L->b_comm, &comm) != CQ_MQS_OK || comm != c->addr ||
	    rd_int(p, r + (taddr_t)L->req_type, &otype) != CQ_MQS_OK || otype != OMPI_REQUEST_PML ||
	    rd_int(p, r + (taddr_t)L->b_type, &ptype) != CQ_MQS_OK ||
	    (send ? ptype != PML_REQUEST_SEND : ptype < PML_REQUEST_RECV || ptype > PML_REQUEST_MPROBE) ||
	    rd_s(p, r + (taddr_t)L->b_tag, 4, &tag) != CQ_MQS_OK ||
	    rd_s(p, r + (taddr_t)L->b_peer, 4, &peer) != CQ_MQS_OK)
		return CQ_MQS_NO_INFORMATION;
	/* Negative tags other than MPI_ANY_TAG are the library's own: a collective's
	 * point-to-point traffic (coll/base's MCA_COLL_BASE_TAG_*). Open MPI's DLL hides them;
	 * this one lists them, marked in extra_text[4], because they say which communicator a
	 * rank's collective runs on and whom it waits for there (the host keeps them apart
	 * from the program's operations). */
	/* req_complete is a pointer: read all of it (its low byte is its first byte only on
	 * little-endian targets) */
	if (rd_ptr(p, r + (taddr_t)L->req_complete, &complete) != CQ_MQS_OK ||
	    rd_u(p, r + (taddr_t)L->b_pml_complete, 4, &pml_complete) != CQ_MQS_OK ||
	    rd_ptr(p, r + (taddr_t)L->b_addr, &buf) != CQ_MQS_OK ||
	    rd_size(p, r + (taddr_t)L->b_count, &count) != CQ_MQS_OK ||
	    rd_ptr(p, r + (taddr_t)L->b_datatype, &dt) != CQ_MQS_OK)
		return CQ_MQS_NO_INFORMATION;
	char dtname[64] = "";
	if (dt) {
		if (rd_size(p, dt + (taddr_t)L->dt_super + (taddr_t)L->odt_size, &dsize) != CQ_MQS_OK)
			dsize = 0;
		if (rd_bytes(p, dt + (taddr_t)L->dt_name, (int)sizeof(dtname), dtname) != CQ_MQS_OK)
			dtname[0] = 0;
		dtname[sizeof(dtname) - 1] = 0;
	}
	memset(op, 0, sizeof(*op));
	op->status = complete == REQUEST_COMPLETED ? CQ_MQS_ST_COMPLETE : CQ_MQS_ST_PENDING;
	op->desired_local_rank = peer;
	op->desired_global_rank = peer < 0 ? peer : world_rank(&c->remote, peer);
	op->tag_wild = tag == MPI_ANY_TAG_;
	op->desired_tag = tag;
	op->desired_length = (tword_t)(dsize * count);
	op->buffer = buf;
	set_text(op, 1, "Data: %llu x %.40s", (unsigned long long)count, dtname[0] ? dtname : "(unnamed datatype)");
	if (send) {
		uint64_t packed = 0;
		int64_t mode = -1;
		taddr_t user = 0;
		(void)rd_size(p, r + (taddr_t)L->s_bytes_packed, &packed);
		(void)rd_int(p, r + (taddr_t)L->s_send_mode, &mode);
		(void)rd_ptr(p, r + (taddr_t)L->s_addr, &user);
		/* a buffered send works from a copy: the request's buffer is not the user's */
		op->system_buffer = user && user != buf;
		op->actual_local_rank = peer;
		op->actual_global_rank = op->desired_global_rank;
		op->actual_tag = tag;
		op->actual_length = (tword_t)packed;
		set_text(op, 0, "Send 0x%llx (%s)", (unsigned long long)r, send_mode(mode));
	} else {
		int64_t stag = MPI_ANY_TAG_, ssrc = -1;
		uint64_t ucount = 0;
		set_text(op, 0, "%s 0x%llx", recv_kind(ptype), (unsigned long long)r);
		/* a receive's status.MPI_TAG stays MPI_ANY_TAG until a message matched it */
		if (rd_s(p, r + (taddr_t)L->req_status + (taddr_t)L->st_tag, 4, &stag) == CQ_MQS_OK &&
		    stag != MPI_ANY_TAG_) {
			(void)rd_s(p, r + (taddr_t)L->req_status + (taddr_t)L->st_source, 4, &ssrc);
			(void)rd_size(p, r + (taddr_t)L->req_status + (taddr_t)L->st_ucount, &ucount);
			if (op->status == CQ_MQS_ST_PENDING)
				op->status = CQ_MQS_ST_MATCHED;
			op->actual_local_rank = ssrc;
			op->actual_global_rank = ssrc < 0 ? ssrc : world_rank(&c->remote, ssrc);
			op->actual_tag = stag;
			op->actual_length = (tword_t)ucount;
		}
	}
	if (complete != REQUEST_COMPLETED && complete != 0)
		set_text(op, 2, "a thread waits for it (sync object 0x%llx)", (unsigned long long)complete);
	if (pml_complete)
		set_text(op, 3, "data transfer completed (PML done)");
	if (tag < 0 && tag != MPI_ANY_TAG_)
		set_text(op, 4, "library's own: collective traffic (tag %lld)", (long long)tag);
	return CQ_MQS_OK;
}

int mqs_next_operation(cq_mqs_process *process, void *operation)
{
	struct process_info *p = pinfo(process);
	struct comm *c = current(p);
	if (!c || !operation)
		return ERR_NO_COMM;
	mqs_op *op = operation;
	switch (p->op_class) {
	case CQ_MQS_PENDING_SENDS:
	case CQ_MQS_PENDING_RECEIVES: {
		taddr_t r;
		while (flist_next(p, &r))
			if (request_op(p, c, r, p->op_class == CQ_MQS_PENDING_SENDS, op) == CQ_MQS_OK)
				return CQ_MQS_OK;
		return CQ_MQS_END_OF_LIST;
	}
	case CQ_MQS_UNEXPECTED_MESSAGES:
		return ob1_next_unexpected(p, c, op);
	}
	return ERR_BAD_CLASS;
}
