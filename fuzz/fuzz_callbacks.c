/* SPDX-License-Identifier: MIT */
/* fuzz_callbacks: the callbacks coreq gives debugger plugins, driven the way a buggy or
 * hostile plugin could drive them, over fuzzed target memory.
 *
 * Bases (fuzz_base.h): x86_64 and s390x OpenMP bundles, i386 and s390x MPI bundles (these
 * carry type donors, so MQD's find_type/field_offset/sizeof have DWARF to answer from).
 * Regions patched: everything fuzz_tls patches plus the runtime's variables the plugins
 * start from (ompd_dll_locations, __kmp_threads, MPIR_dll_name, ...).
 *
 * Input: u8 base, u8 number of patch records, the records, then operations until the
 * input ends (at most MAX_OPS). Each operation is an opcode byte and its arguments:
 * OpenMP 5.1 table (cq_ompd_callbacks): read_memory, read_string (fuzzed nbytes: the
 * buffer given is exactly min(nbytes, 1 MiB), what the callback promises not to pass),
 * symbol_addr_lookup (with/without thread context and file name), device_to_host /
 * host_to_device (fuzzed unit size and count), get_thread_context_for_thread_id (fuzzed
 * kind, id size and id), sizeof_type, alloc/free, print_string; the TR 2.001 table
 * (signed byte counts, int unit sizes, ids in target byte order); the MQD tables of
 * either width: fetch_data, find_symbol/find_function, find_type, field_offset, sizeof,
 * target_to_host, malloc, errorstring, image/process info. Buffers are heap blocks of
 * the exact size the call may use, so ASan sees any overrun. A call that accepts a request
 * it must refuse (a count whose byte size overflows) aborts the run as a finding. */
#include "fuzz_base.h"
#include "mqd/callbacks.h"
#include "ompd/plugin.h"
#include "ompd/tr.h"

#define MAX_OPS 64
#define MAX_BUF 4096
#define MAX_STRING_BUF (1u << 20)

static struct fz_base bases[] = {
	{.file = "omp-x86_64.bundle.gz"}, {.file = "omp-s390x.bundle.gz"},
	{.file = "mpi-i386.bundle.gz"}, {.file = "mpi-s390x.bundle.gz"},
};
#define NBASES (sizeof(bases) / sizeof(bases[0]))

#define NNAMES 96
static char names[NBASES][NNAMES][64]; /* symbol names to look up */
static unsigned nnames[NBASES];
static uint64_t addrs[NBASES][64];     /* addresses to read at */
static unsigned naddrs[NBASES];

static const char *const runtime_vars[] = {
	"ompd_dll_locations", "ompd_state", "__kmp_threads", "__kmp_root", "__kmp_team_pool",
	"__kmp_thread_pool", "__kmp_all_nth", "__kmp_gtid", "ompd_sizeof____kmp_gtid",
	"MPIR_dll_name", "MPIR_being_debugged", "ompi_mpi_comm_world", "ompi_comm_array",
	"mca_pml_ob1", "ompi_mpi_communicators", "mca_pml",
};
static const char *const type_names[] = {
	"int", "opal_list_t", "opal_list_item_t", "ompi_communicator_t", "struct ompi_group_t",
	"mca_pml_base_request_t", "mca_pml_ob1_comm_t", "mca_pml_ob1_comm_proc_t",
	"ompi_request_t", "opal_object_t", "opal_pointer_array_t", "mca_pml_base_send_request_t",
};
static const char *const field_names[] = {
	"super", "obj_class", "opal_list_sentinel", "opal_list_length", "c_name", "c_contextid",
	"c_my_rank", "c_local_group", "grp_proc_count", "req_tag", "req_peer", "req_comm",
	"size", "addr", "number_free", "opal_list_next",
};

static void add_name(size_t b, const char *n)
{
	if (nnames[b] < NNAMES)
		snprintf(names[b][nnames[b]++], 64, "%s", n);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	for (size_t b = 0; b < NBASES; b++) {
		struct cq_core *core = fz_base_load(&bases[b]);
		fz_base_tls_regions(&bases[b], core);
		for (size_t i = 0; i < sizeof(runtime_vars) / sizeof(runtime_vars[0]); i++) {
			fz_base_symbol_region(&bases[b], core, runtime_vars[i], 256);
			add_name(b, runtime_vars[i]);
		}
		char tls[8][64];
		unsigned ntls = fz_tls_names(core, tls, 8);
		for (unsigned i = 0; i < ntls; i++)
			add_name(b, tls[i]);
		/* Some data objects of every image: the names plugins ask for look like these. */
		for (size_t i = 0; i < core->nimages; i++) {
			struct cq_elf *e = cq_image_symbol_file(&core->images[i]);
			if (!e || cq_elf_load_symbols(e))
				continue;
			unsigned taken = 0;
			for (size_t k = 0; k < e->nsyms && taken < 12; k += 1 + e->nsyms / 64)
				if (e->syms[k].type == STT_OBJECT && e->syms[k].name[0]) {
					add_name(b, e->syms[k].name);
					taken++;
				}
		}
		for (unsigned i = 0; i < bases[b].nregions && naddrs[b] < 40; i++)
			addrs[b][naddrs[b]++] = bases[b].regions[i].vaddr;
		for (size_t i = 0; i < core->nthreads && naddrs[b] < 60; i++) {
			addrs[b][naddrs[b]++] = core->threads[i].sp;
			addrs[b][naddrs[b]++] = core->threads[i].tp;
		}
		addrs[b][naddrs[b]++] = 0;
		addrs[b][naddrs[b]++] = UINT64_MAX - 7;
		cq_core_close(core);
		if (getenv("FUZZ_VERBOSE"))
			fprintf(stderr, "%s: %u regions, %u names, %u addresses\n", bases[b].file,
				bases[b].nregions, nnames[b], naddrs[b]);
	}
	return 0;
}

/* Per-run state: the core, the tables, the thread context the plugin last got. */
struct run {
	size_t b;
	struct cq_core *core;
	const ompd_callbacks_t *cb;
	const cq_tr_callbacks *tr;
	ompd_address_space_context_t *as;
	ompd_thread_context_t *tctx;
	struct cq_mqd_tables mqd;
	unsigned width;
	cq_mqs_image *image;
	cq_mqs_process *process;
	const struct cq_type *type;
	char str[256];
};

static uint64_t pick_addr(struct run *r, struct fz_in *in)
{
	uint64_t a = addrs[r->b][fz_u8(in) % naddrs[r->b]];
	return a + (uint64_t)(int64_t)(int16_t)fz_u16(in);
}

static const char *pick_name(struct run *r, struct fz_in *in)
{
	uint8_t k = fz_u8(in);
	if (k == 0xff)
		return fz_str(in, r->str, sizeof(r->str));
	return names[r->b][k % nnames[r->b]];
}

/* A unit size: usually a valid one, sometimes anything. */
static uint64_t pick_unit(struct fz_in *in)
{
	static const uint64_t units[] = {1, 2, 4, 8, 16, 3, 0, 32};
	uint8_t k = fz_u8(in);
	return k < 0xf0 ? units[k % 8] : fz_u64(in);
}

static void *fill(struct fz_in *in, size_t n)
{
	uint8_t *p = malloc(n ? n : 1);
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 31 + 7);
	size_t take = n < in->n ? n : in->n;
	memcpy(p, in->p, take < 16 ? take : 16);
	return p;
}

static void must(bool ok, const char *what)
{
	if (!ok)
		fz_die("callback contract broken: %s", what);
}

static void op_ompd(struct run *r, uint8_t op, struct fz_in *in)
{
	ompd_address_t a = {0, pick_addr(r, in)};
	switch (op % 8) {
	case 0: { /* read_memory */
		size_t n = fz_u16(in) % (MAX_BUF + 1);
		void *buf = malloc(n ? n : 1);
		ompd_rc_t rc = r->cb->read_memory(r->as, (fz_u8(in) & 1) ? r->tctx : NULL, &a, n, buf);
		must(rc == ompd_rc_ok || rc == ompd_rc_error, "read_memory rc");
		free(buf);
		break;
	}
	case 1: { /* read_string with any nbytes */
		uint64_t n = fz_u8(in) & 1 ? fz_u64(in) : fz_u16(in);
		size_t cap = n > MAX_STRING_BUF ? MAX_STRING_BUF : (size_t)n;
		char *buf = malloc(cap ? cap : 1);
		ompd_rc_t rc = r->cb->read_string(r->as, r->tctx, &a, n, buf);
		if (rc == ompd_rc_ok)
			must(memchr(buf, 0, cap) != NULL, "read_string ok without a NUL in the buffer");
		free(buf);
		break;
	}
	case 2: { /* symbol_addr_lookup */
		const char *name = pick_name(r, in);
		uint8_t f = fz_u8(in);
		const char *file = NULL;
		char fbuf[64];
		if (f & 1)
			file = r->core->nimages ? r->core->images[f % r->core->nimages].name : "x";
		else if (f & 2)
			file = fz_str(in, fbuf, sizeof(fbuf));
		ompd_address_t out;
		(void)r->cb->symbol_addr_lookup(r->as, (f & 4) ? r->tctx : NULL, name, &out, file);
		break;
	}
	case 3: { /* device_to_host / host_to_device */
		uint64_t unit = pick_unit(in), count = fz_u8(in) & 1 ? fz_u64(in) : fz_u16(in) % 512;
		bool inplace = count & 1, to_host = fz_u8(in) & 1;
		ompd_rc_t (*conv)(ompd_address_space_context_t *, const void *, ompd_size_t,
				  ompd_size_t, void *) =
			to_host ? r->cb->device_to_host : r->cb->host_to_device;
		if (unit && count > SIZE_MAX / unit) {
			uint8_t small[16] = {0}, out[16];
			must(conv(r->as, small, unit, count, out) != ompd_rc_ok,
			     "device_to_host accepted a byte count that overflows");
		} else if (unit * count <= MAX_BUF) {
			size_t n = (size_t)(unit * count);
			uint8_t *src = fill(in, n), *dst = inplace ? src : malloc(n ? n : 1);
			(void)conv(r->as, src, unit, count, dst);
			if (dst != src)
				free(dst);
			free(src);
		}
		break;
	}
	case 4: { /* get_thread_context_for_thread_id */
		ompd_thread_id_t kind = fz_u8(in) % 4;
		size_t n = fz_u8(in) % 17;
		uint8_t *id = malloc(n ? n : 1);
		uint64_t v;
		uint8_t how = fz_u8(in);
		if (how % 3 == 0 && r->core->nthreads)
			v = (uint32_t)r->core->threads[how % r->core->nthreads].tid;
		else if (how % 3 == 1)
			v = addrs[r->b][how % naddrs[r->b]];
		else
			v = fz_u64(in);
		for (size_t i = 0; i < n; i++)
			id[i] = (uint8_t)(v >> (8 * (i % 8)));
		ompd_thread_context_t *t = NULL;
		if (r->cb->get_thread_context_for_thread_id(r->as, kind, n, id, &t) == ompd_rc_ok) {
			must(t != NULL, "thread context ok but NULL");
			r->tctx = t;
		}
		free(id);
		break;
	}
	case 5: { /* sizeof_type, alloc/free, print */
		ompd_device_type_sizes_t s;
		(void)r->cb->sizeof_type(r->as, &s);
		uint64_t n = fz_u8(in) & 1 ? fz_u64(in) : fz_u16(in);
		void *p = NULL;
		if (n <= (1u << 20) || n > (UINT64_C(256) << 20))
			if (r->cb->alloc_memory(n, &p) == ompd_rc_ok)
				r->cb->free_memory(p);
		(void)r->cb->print_string(fz_str(in, r->str, sizeof(r->str)), 0);
		(void)r->cb->write_memory(r->as, r->tctx, &a, 4, "abcd");
		break;
	}
	case 6: { /* TR: signed byte counts, int unit sizes */
		int64_t n = (int64_t)fz_u64(in);
		if (n > MAX_BUF)
			n %= MAX_BUF;
		size_t cap = n > 0 ? (size_t)n : 1;
		void *buf = malloc(cap);
		(void)r->tr->t_read_memory(r->as, r->tctx, &a, n, buf);
		free(buf);
		int unit = (int)fz_u32(in), count = (int)fz_u32(in) % 1024;
		if (unit > 0 && count >= 0 && (uint64_t)unit * (uint64_t)count <= MAX_BUF) {
			size_t bytes = (size_t)unit * (size_t)count;
			uint8_t *src = fill(in, bytes);
			(void)r->tr->target_to_host(r->as, src, unit, count, src);
			free(src);
		} else if (unit <= 0 || count < 0) {
			uint8_t small[16] = {0};
			must(r->tr->target_to_host(r->as, small, unit, count, small) != ompd_rc_ok,
			     "TR target_to_host accepted a negative size");
		}
		break;
	}
	case 7: { /* TR: thread context from an OS thread id in target order */
		uint64_t size = fz_u8(in) % 12;
		uint8_t *id = fill(in, (size_t)size);
		ompd_thread_context_t *t = NULL;
		if (r->tr->get_thread_context_for_osthread(r->as, fz_u8(in) % 3, size, id, &t) ==
		    ompd_rc_ok)
			r->tctx = t;
		free(id);
		ompd_address_space_context_t *as2;
		if (r->tctx)
			must(r->tr->get_address_space_context_for_thread(r->tctx, &as2) == ompd_rc_ok,
			     "TR aspace of a thread");
		ompd_address_t out;
		(void)r->tr->t_symbol_addr_lookup(r->as, r->tctx, pick_name(r, in), &out);
		break;
	}
	}
}

static void op_mqd(struct run *r, uint8_t op, struct fz_in *in)
{
	const cq_mqs_basic_callbacks *basic = r->mqd.basic;
	const cq_mqs_image_callbacks8 *i8 = r->mqd.image;
	const cq_mqs_image_callbacks4 *i4 = r->mqd.image;
	const cq_mqs_process_callbacks8 *p8 = r->mqd.process;
	const cq_mqs_process_callbacks4 *p4 = r->mqd.process;
	switch (op % 6) {
	case 0: { /* fetch_data */
		uint64_t a = pick_addr(r, in);
		int size = (int)fz_u32(in);
		if (size > MAX_BUF)
			size %= MAX_BUF;
		void *buf = malloc(size > 0 ? (size_t)size : 1);
		int rc = r->width == 8 ? p8->mqs_fetch_data_fp(r->process, a, size, buf)
				       : p4->mqs_fetch_data_fp(r->process, (uint32_t)a, size, buf);
		if (size < 0)
			must(rc != CQ_MQS_OK, "fetch_data accepted a negative size");
		free(buf);
		break;
	}
	case 1: { /* find_symbol / find_function */
		char *name = (char *)pick_name(r, in);
		uint8_t f = fz_u8(in);
		uint64_t a8;
		uint32_t a4;
		if (r->width == 8)
			(void)(f & 1 ? i8->mqs_find_symbol_fp(r->image, name, &a8)
				     : i8->mqs_find_function_fp(r->image, name, 'c', f & 2 ? NULL : &a8));
		else
			(void)(f & 1 ? i4->mqs_find_symbol_fp(r->image, name, &a4)
				     : i4->mqs_find_function_fp(r->image, name, 'c', f & 2 ? NULL : &a4));
		break;
	}
	case 2: { /* find_type, field_offset, sizeof */
		uint8_t k = fz_u8(in);
		char buf[128];
		char *tname = k == 0xff ? (char *)fz_str(in, buf, sizeof(buf))
					: (char *)type_names[k % (sizeof(type_names) / sizeof(type_names[0]))];
		cq_mqs_type *t = i8->mqs_find_type_fp(r->image, tname, 'c');
		if (t)
			r->type = (const struct cq_type *)t;
		if (r->type) {
			uint8_t f = fz_u8(in);
			char fbuf[128];
			char *field = f == 0xff ? (char *)fz_str(in, fbuf, sizeof(fbuf))
						: (char *)field_names[f % (sizeof(field_names) / sizeof(field_names[0]))];
			(void)i8->mqs_field_offset_fp((cq_mqs_type *)r->type, field);
			(void)i8->mqs_sizeof_fp((cq_mqs_type *)r->type);
		}
		break;
	}
	case 3: { /* target_to_host with any size */
		int size = (int)fz_u32(in);
		if (size > 64 || size <= 0) {
			uint8_t small[1] = {0};
			p8->mqs_target_to_host_fp(r->process, small, small, size > 64 ? 0 : size);
		} else {
			uint8_t *src = fill(in, (size_t)size), *dst = malloc((size_t)size);
			p8->mqs_target_to_host_fp(r->process, src, fz_u8(in) & 1 ? src : dst, size);
			free(dst);
			free(src);
		}
		break;
	}
	case 4: { /* basic: malloc, errorstring, info */
		uint64_t n = fz_u8(in) & 1 ? fz_u64(in) : fz_u16(in);
		if (n <= (1u << 20) || n > (UINT64_C(256) << 20)) {
			void *p = basic->mqs_malloc_fp((size_t)n);
			basic->mqs_free_fp(p);
		}
		(void)basic->mqs_errorstring_fp((int)fz_u32(in));
		basic->mqs_put_image_info_fp(r->image, NULL);
		(void)basic->mqs_get_image_info_fp(r->image);
		basic->mqs_put_process_info_fp(r->process, NULL);
		(void)basic->mqs_get_process_info_fp(r->process);
		basic->mqs_dprints_fp(fz_str(in, r->str, sizeof(r->str)));
		break;
	}
	case 5: { /* process: rank, image, type sizes */
		cq_mqs_target_type_sizes s;
		i8->mqs_get_type_sizes_fp(r->process, &s);
		(void)p8->mqs_get_global_rank_fp(r->process);
		must(p8->mqs_get_image_fp(r->process) == r->image, "get_image");
		break;
	}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = {data, size};
	struct run r = {.b = fz_u8(&in) % NBASES};
	struct fz_base *b = &bases[r.b];
	fz_base_patch(b, &in, fz_u8(&in) % 32);
	struct cq_error *err = cq_core_open(b->mfd.path, &fz_core_opts, &r.core);
	fz_verbose_error("open", err);
	if (err) {
		cq_error_destroy(err);
		fz_base_restore(b);
		return 0;
	}
	static struct cq_ompd_stats ostats;
	static struct cq_mqd_stats mstats;
	memset(&ostats, 0, sizeof(ostats));
	memset(&mstats, 0, sizeof(mstats));
	r.width = fz_u8(&in) & 1 ? 4 : 8;
	r.tr = cq_ompd_tr_callbacks(r.core, &ostats);
	r.cb = cq_ompd_callbacks(r.core, &ostats); /* same contexts; the last call sets them */
	r.as = cq_ompd_aspace_context();
	r.mqd = cq__mqd_callbacks(r.core, r.width, &mstats, &r.image, &r.process);
	if (!r.cb || !r.tr)
		fz_die("%s", "no callback table");
	for (unsigned n = 0; n < MAX_OPS && in.n; n++) {
		uint8_t op = fz_u8(&in);
		if (op & 0x80)
			op_mqd(&r, op & 0x7f, &in);
		else
			op_ompd(&r, op, &in);
	}
	cq_core_close(r.core);
	fz_base_restore(b);
	return 0;
}
