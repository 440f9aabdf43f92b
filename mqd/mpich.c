/* SPDX-License-Identifier: MIT */
/* MPICH's communicators as the core holds them (mpich.h). */
#include "mpich.h"

#include "base/error.h"
#include "corelib/image.h"
#include "corelib/types.h"
#include "callbacks.h"
#include "targets/target.h"

/* MPICH's libmpi: its builtin communicators' array, by symbol (cheap: no DWARF is
 * searched for a type another MPI library does not have) */
static bool is_mpich(struct cq_core *core, struct cq_symref *ref)
{
	struct cq_error *err = cq_core_lookup(core, "MPIR_Comm_builtin", NULL, ref);
	cq_error_destroy(err);
	return !err;
}

/* The offset of @p field in type @p type, -1 if either is unknown. */
static int64_t offset_of(struct cq_core *core, const char *type, const char *field)
{
	const struct cq_type *t;
	struct cq_error *err = cq__mqd_find_type(core, type, &t);
	int64_t off = err ? -1 : cq_type_field_offset(t, field);
	cq_error_destroy(err);
	return off;
}

/* Whether @p name is not a symbol of the core (*@p ref: where it is). */
static bool missing_symbol(struct cq_core *core, const char *name, struct cq_symref *ref)
{
	struct cq_error *err = cq_core_lookup(core, name, NULL, ref);
	bool missing = err != NULL;
	cq_error_destroy(err);
	return missing;
}

/* Whether the object at @p addr is the one @p handle names: MPICH's objects begin with
 * their own handle (MPIR_OBJECT_HEADER), a check no crafted index passes by chance. */
static bool names(struct cq_core *core, const char *type, uint64_t addr, uint64_t handle)
{
	int64_t off = offset_of(core, type, "handle");
	uint64_t h;
	struct cq_error *err = off < 0 ? NULL : cq_core_read_uint(core, addr + (uint64_t)off, 4, &h);
	bool ok = off >= 0 && !err && h == handle;
	cq_error_destroy(err);
	return ok;
}

/* The object of @p type in block @p blk, index @p idx of the indirect blocks of the
 * allocator (MPIR_Object_alloc_t) at @p mem: the blocks MPICH allocates once the direct
 * array is used up (src/include/mpir_handlemem.h). */
static bool indirect(struct cq_core *core, const char *type, uint64_t mem, uint64_t blk, uint64_t idx,
		     uint64_t *ret)
{
	const struct cq_type *t;
	struct cq_error *err = cq__mqd_find_type(core, type, &t);
	int64_t size = err ? -1 : cq_type_size(t), nb = offset_of(core, "MPIR_Object_alloc_t", "indirect_size"),
		blocks = offset_of(core, "MPIR_Object_alloc_t", "indirect");
	unsigned w = cq_target_ptr_size(core->target);
	uint64_t n = 0, arr = 0, block = 0;
	if (!err && size > 0 && nb >= 0 && blocks >= 0 && idx < 4096)
		err = cq_core_read_uint(core, mem + (uint64_t)nb, 4, &n);
	else if (!err)
		err = cq_error_create(CQ_ERR_NOT_FOUND, "no allocator types");
	if (!err && blk < n)
		err = cq_core_read_uint(core, mem + (uint64_t)blocks, w, &arr);
	if (!err && arr)
		err = cq_core_read_uint(core, arr + blk * w, w, &block);
	bool ok = !err && block;
	cq_error_destroy(err);
	if (ok)
		*ret = block + idx * (uint64_t)size;
	return ok;
}

bool cq_mpich_library(struct cq_core *core)
{
	struct cq_symref ref;
	return is_mpich(core, &ref);
}

bool cq_mpich_comm_context(struct cq_core *core, uint64_t addr, uint64_t *ret)
{
	struct cq_symref ref;
	if (!is_mpich(core, &ref))
		return false;
	const struct cq_type *t;
	struct cq_error *err = cq__mqd_find_type(core, "MPIR_Comm", &t);
	int64_t off = err ? -1 : cq_type_field_offset(t, "context_id");
	if (!err && off >= 0)
		err = cq_core_read_uint(core, addr + (uint64_t)off, 2, ret); /* MPIR_Context_id_t: uint16_t */
	bool ok = !err && off >= 0;
	cq_error_destroy(err);
	return ok;
}

bool cq_mpich_comm_handle(struct cq_core *core, uint64_t handle, uint64_t *ret, const char **name)
{
	/* MPICH's handles (src/include/mpir_objects.h): bits 31-30 the kind (1 builtin, 2 direct,
	 * 3 indirect), bits 29-26 the object type (1: communicator), the rest the index */
	static const char *const builtin[] = {"MPI_COMM_WORLD", "MPI_COMM_SELF", "MPI_ICOMM_WORLD"};
	unsigned kind = (unsigned)(handle >> 30) & 3, type = (unsigned)(handle >> 26) & 0xf;
	uint64_t index = handle & 0x3ffffff;
	*name = NULL;
	struct cq_symref ref;
	if (handle > 0xffffffffu || type != 1 || kind == 0 || !is_mpich(core, &ref))
		return false;
	if (kind == 3) /* indirect: block in bits 25-12, index in 11-0 */
		return !missing_symbol(core, "MPIR_Comm_mem", &ref) &&
		       indirect(core, "MPIR_Comm", ref.address, index >> 12, index & 0xfff, ret) &&
		       names(core, "MPIR_Comm", *ret, handle);
	const struct cq_type *t;
	struct cq_error *err = cq__mqd_find_type(core, "MPIR_Comm", &t);
	int64_t size = err ? -1 : cq_type_size(t);
	if (!err)
		err = cq_core_lookup(core, kind == 1 ? "MPIR_Comm_builtin" : "MPIR_Comm_direct", NULL, &ref);
	bool ok = !err && size > 0 && index < 1024;
	cq_error_destroy(err);
	if (!ok)
		return false;
	if (kind == 1 && index < sizeof(builtin) / sizeof(builtin[0]))
		*name = builtin[index];
	*ret = ref.address + index * (uint64_t)size;
	return names(core, "MPIR_Comm", *ret, handle);
}

bool cq_mpich_comm_group(struct cq_core *core, uint64_t addr, int64_t size, int *ranks)
{
	struct cq_symref ref;
	if (size <= 0 || !is_mpich(core, &ref))
		return false;
	int64_t dev = offset_of(core, "MPIR_Comm", "dev"), vcrt = offset_of(core, "MPIDI_CH3I_comm_t", "vcrt"),
		tsize = offset_of(core, "MPIDI_VCRT", "size"), table = offset_of(core, "MPIDI_VCRT", "vcr_table"),
		pg_rank = offset_of(core, "MPIDI_VC_t", "pg_rank");
	if (dev < 0 || vcrt < 0 || tsize < 0 || table < 0 || pg_rank < 0)
		return false;
	unsigned w = cq_target_ptr_size(core->target);
	uint64_t t, n, vc, r;
	struct cq_error *err = cq_core_read_uint(core, addr + (uint64_t)(dev + vcrt), w, &t);
	if (!err)
		err = cq_core_read_uint(core, t + (uint64_t)tsize, 4, &n);
	/* one connection per member, in local rank order: a communicator of the first members
	 * of another, in order, shares that one's table (ch3u_comm.c's dup_vcrt), which is then
	 * longer than its group */
	bool ok = !err && n >= (uint64_t)size && n <= (1u << 30);
	for (int64_t i = 0; ok && i < size; i++) {
		err = cq_core_read_uint(core, t + (uint64_t)table + (uint64_t)i * w, w, &vc);
		if (!err)
			err = cq_core_read_uint(core, vc + (uint64_t)pg_rank, 4, &r);
		ok = !err && r < (1u << 30);
		if (ok)
			ranks[i] = (int)r;
	}
	cq_error_destroy(err);
	return ok;
}

bool cq_mpich_request(struct cq_core *core, uint64_t addr, struct cq_mpich_request *ret)
{
	struct cq_symref ref;
	if (!is_mpich(core, &ref))
		return false;
	int64_t kind = offset_of(core, "MPIR_Request", "kind"), cc = offset_of(core, "MPIR_Request", "cc"),
		dev = offset_of(core, "MPIR_Request", "dev"), match = offset_of(core, "MPIDI_Request", "match"),
		parts = offset_of(core, "MPIDI_Message_match", "parts"),
		tag = offset_of(core, "MPIDI_Message_match_parts_t", "tag"),
		rank = offset_of(core, "MPIDI_Message_match_parts_t", "rank"),
		ctx = offset_of(core, "MPIDI_Message_match_parts_t", "context_id");
	if (kind < 0 || cc < 0 || dev < 0 || match < 0 || parts < 0 || tag < 0 || rank < 0 || ctx < 0)
		return false;
	uint64_t m = addr + (uint64_t)(dev + match + parts), k, c, t, r, x;
	struct cq_error *err = cq_core_read_uint(core, addr + (uint64_t)kind, 4, &k);
	if (!err)
		err = cq_core_read_uint(core, addr + (uint64_t)cc, 4, &c);
	if (!err)
		err = cq_core_read_uint(core, m + (uint64_t)tag, 4, &t);
	if (!err) /* MPIDI_Rank_t: int16_t; MPIR_Context_id_t: uint16_t */
		err = cq_core_read_uint(core, m + (uint64_t)rank, 2, &r);
	if (!err)
		err = cq_core_read_uint(core, m + (uint64_t)ctx, 2, &x);
	bool ok = !err && (k == 1 || k == 2); /* MPIR_REQUEST_KIND__SEND, __RECV (mpir_request.h) */
	cq_error_destroy(err);
	if (ok)
		*ret = (struct cq_mpich_request){.send = k == 1, .pending = c != 0, .peer = (int16_t)(uint16_t)r,
						 .tag = (int32_t)(uint32_t)t, .context = (unsigned)x};
	return ok;
}

bool cq_mpich_request_handle(struct cq_core *core, uint64_t handle, uint64_t *ret)
{
	/* kind 2 (direct) or 3 (indirect), object type 0xb (request), the index in the low
	 * bits; an indirect one's pool (one per VCI) in bits 25-20, its block in 19-12, its
	 * index in 11-0 (src/include/mpir_request.h) */
	struct cq_symref ref;
	uint64_t index = handle & 0x3ffffff;
	unsigned kind = (unsigned)(handle >> 30) & 3;
	if (handle > 0xffffffffu || (kind != 2 && kind != 3) || (handle >> 26 & 0xf) != 0xb || !is_mpich(core, &ref))
		return false;
	if (kind == 3) {
		const struct cq_type *t;
		struct cq_error *err = cq__mqd_find_type(core, "MPIR_Object_alloc_t", &t);
		int64_t asize = err ? -1 : cq_type_size(t);
		if (!err)
			err = cq_core_lookup(core, "MPIR_Request_mem", NULL, &ref);
		bool ok = !err && asize > 0 &&
			  indirect(core, "MPIR_Request", ref.address + (index >> 20) * (uint64_t)asize, index >> 12 & 0xff,
				   index & 0xfff, ret) &&
			  names(core, "MPIR_Request", *ret, handle);
		cq_error_destroy(err);
		return ok;
	}
	if (index >= 1024)
		return false;
	const struct cq_type *t;
	struct cq_error *err = cq__mqd_find_type(core, "MPIR_Request", &t);
	int64_t size = err ? -1 : cq_type_size(t);
	if (!err)
		err = cq_core_lookup(core, "MPIR_Request_direct", NULL, &ref);
	bool ok = !err && size > 0;
	cq_error_destroy(err);
	if (ok)
		*ret = ref.address + index * (uint64_t)size;
	return ok && names(core, "MPIR_Request", *ret, handle);
}
