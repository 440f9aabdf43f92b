/* SPDX-License-Identifier: MIT */
/* Values a frame holds, read from its DWARF with its registers during the walk: an
 * argument of the call it is making (internal.h: cq_stack_call_argument), and the integer
 * variables of the loops around its pc (cq_stack_loop_variables).
 *
 * Optimizing compilers describe each call they make (DWARF 5's DW_TAG_call_site, GCC's
 * DW_TAG_GNU_call_site before it): at which return address, and for each argument passed
 * in a register an expression for its value in terms of the caller's own state at the
 * return address (DW_AT_call_value): "the value is in rbp", "it is the CFA - 52", "load it
 * from rbx + 8". Those registers are the ones a call preserves, which the unwinder
 * recovered for the caller's frame; so the argument is readable after the callee ran, and
 * without any debug information for the callee (a distribution's libmpi has none).
 *
 * The expressions are evaluated by a deliberately small evaluator: constants, addresses,
 * registers (plus an offset), the frame base and the CFA, loads, additions. That is what
 * GCC and LLVM emit for arguments that live in a preserved register, a stack slot or a
 * global; anything else (an entry value, a piece, a branch) is said to be unknown, never
 * guessed. No library evaluates DWARF location expressions against a frame: libdw decodes
 * them (dwarf_getlocation), libdwfl's evaluator is internal to its CFI code. */
#include <dwarf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "corelib/image.h"
#include "internal.h"

/* GCC's tags and attributes before DWARF 5 (dwarf.h of libdw 0.188 has them; kept here
 * under their own names for the older headers) */
#ifndef DW_TAG_GNU_call_site
#define DW_TAG_GNU_call_site 0x4109
#endif
#ifndef DW_TAG_GNU_call_site_parameter
#define DW_TAG_GNU_call_site_parameter 0x410a
#endif
#ifndef DW_AT_GNU_call_site_value
#define DW_AT_GNU_call_site_value 0x2111
#endif

/* Bounds: DIEs searched for the call site in one function (a large function has a few
 * thousand), operations in an expression and its stack (real ones have 1 to 4). */
#define MAX_DIES 200000
#define MAX_OPS 64
#define MAX_STACK 16

struct eval {
	const struct cq_stack_ctx *ctx;
	Dwfl_Frame *state;
	const struct cq_stack_regs *same; /* preserved registers libdwfl lost (internal.h), or NULL */
	uint64_t bias;          /* the module's: DW_OP_addr is a link-time address */
	bool has_cfa;
	uint64_t cfa;
	Dwarf_Die *function;    /* its DW_AT_frame_base for DW_OP_fbreg */
	unsigned depth;         /* of frame-base evaluation (it may not name itself) */
	char *why;
	size_t why_size;
};

static bool reg(struct eval *e, uint64_t regno, uint64_t *v)
{
	Dwarf_Word x;
	if (regno < CQ_STACK_NREGS && e->same && dwfl_frame_reg(e->state, (unsigned)regno, &x) != 0 &&
	    cq_stack_reg(e->same, (int)regno, v))
		return true;
	if (regno >= CQ_STACK_NREGS || dwfl_frame_reg(e->state, (unsigned)regno, &x) != 0) {
		snprintf(e->why, e->why_size, "DWARF register %" PRIu64 " is not known in this frame (not one a call "
			 "preserves)", regno);
		return false;
	}
	*v = x;
	return true;
}

static bool eval_ops(struct eval *e, const Dwarf_Op *ops, size_t n, uint64_t *ret);

/* The frame base of e->function (DW_AT_frame_base): the CFA, or a register plus offset. */
static bool frame_base(struct eval *e, uint64_t *v)
{
	Dwarf_Attribute a;
	Dwarf_Op *ops;
	size_t n;
	if (e->depth > 0 || !dwarf_attr(e->function, DW_AT_frame_base, &a) || dwarf_getlocation(&a, &ops, &n) != 0) {
		snprintf(e->why, e->why_size, "the function's frame base is not a single expression");
		return false;
	}
	e->depth++;
	/* a frame base "in a register" is that register's value */
	bool ok = n == 1 && ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31 ? reg(e, ops[0].atom - DW_OP_reg0, v)
										     : eval_ops(e, ops, n, v);
	e->depth--;
	return ok;
}

/* The value of expression @p ops: DWARF's stack machine over the subset described at the
 * top; the result is the top of the stack (DW_AT_call_value is a value, not a location). */
static bool eval_ops(struct eval *e, const Dwarf_Op *ops, size_t n, uint64_t *ret)
{
	uint64_t st[MAX_STACK], v, a, b;
	size_t sp = 0;
	unsigned word = e->ctx->core->target->elf_class == ELFCLASS64 ? 8 : 4;
	if (n == 0 || n > MAX_OPS) {
		snprintf(e->why, e->why_size, "an expression of %zu operations", n);
		return false;
	}
	/* a lone register operation: the value is that register's */
	if (n == 1 && ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31)
		return reg(e, ops[0].atom - DW_OP_reg0, ret);
	if (n == 1 && ops[0].atom == DW_OP_regx)
		return reg(e, ops[0].number, ret);
	for (size_t i = 0; i < n; i++) {
		const Dwarf_Op *o = &ops[i];
		uint8_t at = o->atom;
		if (at == DW_OP_stack_value)
			break; /* the top is the value: as here always */
		bool push = true;
		if (at >= DW_OP_lit0 && at <= DW_OP_lit31) {
			v = at - DW_OP_lit0;
		} else if (at >= DW_OP_breg0 && at <= DW_OP_breg31) {
			if (!reg(e, at - DW_OP_breg0, &v))
				return false;
			v += o->number;
		} else {
			switch (at) {
			case DW_OP_addr: v = o->number + e->bias; break;
			case DW_OP_const1u: case DW_OP_const2u: case DW_OP_const4u: case DW_OP_const8u:
			case DW_OP_const1s: case DW_OP_const2s: case DW_OP_const4s: case DW_OP_const8s:
			case DW_OP_constu: case DW_OP_consts:
				v = o->number;
				break;
			case DW_OP_bregx:
				if (!reg(e, o->number, &v))
					return false;
				v += o->number2;
				break;
			case DW_OP_fbreg:
				if (!frame_base(e, &v))
					return false;
				v += o->number;
				break;
			case DW_OP_call_frame_cfa:
				if (!e->has_cfa) {
					snprintf(e->why, e->why_size, "the frame's CFA is not known");
					return false;
				}
				v = e->cfa;
				break;
			case DW_OP_deref: case DW_OP_deref_size: {
				unsigned size = at == DW_OP_deref ? word : (unsigned)o->number;
				if (!sp || size == 0 || size > 8) {
					snprintf(e->why, e->why_size, "a load of %u bytes", size);
					return false;
				}
				a = st[--sp];
				struct cq_error *err = cq_core_read_uint(e->ctx->core, a, size, &v);
				if (err) {
					snprintf(e->why, e->why_size, "%s", err->message);
					cq_error_destroy(err);
					return false;
				}
				break;
			}
			case DW_OP_plus_uconst:
				if (!sp)
					goto underflow;
				st[sp - 1] += o->number;
				push = false;
				break;
			case DW_OP_plus: case DW_OP_minus:
				if (sp < 2)
					goto underflow;
				b = st[--sp];
				a = st[sp - 1];
				st[sp - 1] = at == DW_OP_plus ? a + b : a - b;
				push = false;
				break;
			default:
				snprintf(e->why, e->why_size, "the operation 0x%02x is not evaluated (only constants, "
					 "registers, the frame base, loads and sums)", at);
				return false;
			}
		}
		if (push) {
			if (sp == MAX_STACK) {
				snprintf(e->why, e->why_size, "an expression deeper than %u values", MAX_STACK);
				return false;
			}
			st[sp++] = v;
		}
	}
	if (!sp)
		goto underflow;
	*ret = word == 4 ? st[sp - 1] & 0xffffffffu : st[sp - 1];
	return true;
underflow:
	snprintf(e->why, e->why_size, "a malformed expression (its stack runs empty)");
	return false;
}

/* Whether @p die is a call site returning to module address @p ret. */
static bool call_site_at(Dwarf_Die *die, Dwarf_Addr ret)
{
	int tag = dwarf_tag(die);
	Dwarf_Attribute a;
	Dwarf_Addr v;
	if (tag == DW_TAG_call_site)
		return dwarf_attr(die, DW_AT_call_return_pc, &a) && dwarf_formaddr(&a, &v) == 0 && v == ret;
	if (tag == DW_TAG_GNU_call_site)
		return dwarf_lowpc(die, &v) == 0 && v == ret;
	return false;
}

/* The call site under @p parent returning to @p ret, depth-first, at most *@p budget DIEs;
 * into *@p out. */
static bool find_call_site(Dwarf_Die *parent, Dwarf_Addr ret, Dwarf_Die *out, unsigned *budget, unsigned depth)
{
	Dwarf_Die c;
	if (depth > 64 || dwarf_child(parent, &c) != 0)
		return false;
	do {
		if (!(*budget)--)
			return false;
		if (call_site_at(&c, ret)) {
			*out = c;
			return true;
		}
		int tag = dwarf_tag(&c);
		if ((tag == DW_TAG_lexical_block || tag == DW_TAG_inlined_subroutine) &&
		    find_call_site(&c, ret, out, budget, depth + 1))
			return true;
	} while (dwarf_siblingof(&c, &c) == 0);
	return false;
}

/* A frame's scopes (function_at). */
struct scopes {
	Dwarf_Die *die;
	int n;
	Dwarf_Die lines_unit; /* the unit with the line table (a split unit's skeleton) */
};

/* The physical function (DW_TAG_subprogram) holding module address @p at into
 * *@p function, and the module's bias; with @p out, the concrete scopes at @p at too,
 * innermost first (the caller frees out->die). False when @p at has no DWARF function. */
static bool function_at(const struct cq_stack_ctx *ctx, uint64_t at, Dwarf_Addr *bias, Dwarf_Die *function,
			struct scopes *out)
{
	Dwfl_Module *mod = dwfl_addrmodule(ctx->dwfl, at);
	Dwarf_Die cu_mem, split_mem;
	const struct cq_image *img = cq_core_image_at(ctx->core, at);
	*bias = 0;
	Dwarf_Die *cu = mod ? cq_stack_unit_at(ctx->units, ctx->core, img, mod, at, bias, &cu_mem) : NULL;
	Dwarf_Die *su = cu ? cq_stack_scope_unit(ctx->units, ctx->core, img, cu, &split_mem) : NULL;
	Dwarf_Die *scopes = NULL;
	int n = su ? cq_stack_concrete_scopes(su, at - *bias, &scopes) : 0;
	bool found = false;
	for (int i = 0; i < n; i++)
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram) {
			*function = scopes[i]; /* the outermost: the physical function */
			found = true;
		}
	if (out && found) {
		out->die = scopes;
		out->n = n;
		out->lines_unit = *cu;
	} else {
		free(scopes);
	}
	return found;
}

bool cq_stack_call_argument(const struct cq_stack_ctx *ctx, Dwfl_Frame *state, const struct cq_stack_regs *same,
			    const struct cq_frame *f, unsigned arg, uint64_t *value, char *why, size_t why_size)
{
	const struct cq_target *t = ctx->core->target;
	if (arg >= t->ndwarf_args) {
		/* GCC and clang describe only the arguments passed in registers (an MPI_Reduce's
		 * communicator, its seventh, is pushed on x86_64) */
		if (t->ndwarf_args)
			snprintf(why, why_size, "argument %u is passed on the stack, which call sites do not describe",
				 arg + 1);
		else
			snprintf(why, why_size, "coreq does not know where %s passes arguments", t->name);
		return false;
	}
	/* the call is the instruction before the return address */
	uint64_t at = f->pc - 1;
	Dwarf_Addr bias = 0;
	Dwarf_Die function;
	if (!function_at(ctx, at, &bias, &function, NULL)) {
		snprintf(why, why_size, "no DWARF for the calling function (built without -g?)");
		return false;
	}
	Dwarf_Die site;
	unsigned budget = MAX_DIES;
	if (!find_call_site(&function, f->pc - bias, &site, &budget, 0)) {
		snprintf(why, why_size, "its DWARF describes no call at this return address (built without "
			 "optimization, or by a compiler that does not say)");
		return false;
	}
	unsigned want = t->dwarf_args[arg];
	Dwarf_Die p;
	if (dwarf_child(&site, &p) == 0) {
		do {
			int tag = dwarf_tag(&p);
			if (tag != DW_TAG_call_site_parameter && tag != DW_TAG_GNU_call_site_parameter)
				continue;
			Dwarf_Attribute la, va;
			Dwarf_Op *lops, *vops;
			size_t nl, nv;
			if (!dwarf_attr(&p, DW_AT_location, &la) || dwarf_getlocation(&la, &lops, &nl) != 0 || nl != 1)
				continue;
			unsigned r = lops[0].atom >= DW_OP_reg0 && lops[0].atom <= DW_OP_reg31 ? (unsigned)(lops[0].atom - DW_OP_reg0)
				   : lops[0].atom == DW_OP_regx ? (unsigned)lops[0].number : UINT32_MAX;
			if (r != want)
				continue;
			if ((!dwarf_attr(&p, DW_AT_call_value, &va) && !dwarf_attr(&p, DW_AT_GNU_call_site_value, &va)) ||
			    dwarf_getlocation(&va, &vops, &nv) != 0) {
				snprintf(why, why_size, "the call site gives no value for argument %u", arg + 1);
				return false;
			}
			struct eval e = {.ctx = ctx, .state = state, .same = same, .bias = bias, .has_cfa = f->has_cfa,
					 .cfa = f->cfa, .function = &function, .why = why, .why_size = why_size};
			return eval_ops(&e, vops, nv, value);
		} while (dwarf_siblingof(&p, &p) == 0);
	}
	snprintf(why, why_size, "the call site says nothing of argument %u (its value was not kept)", arg + 1);
	return false;
}

/* Loop variables: at most this many per frame, and children looked at per block. */
#define MAX_LOOP_VARS CQ_STACK_MAX_LOOP_VARS
#define MAX_BLOCK_CHILDREN 256

/* The integer base type of variable @p var behind typedefs and qualifiers: its size and
 * whether it is signed; false for anything else. */
static bool int_type(Dwarf_Die *var, int *size, bool *is_signed)
{
	Dwarf_Attribute a;
	Dwarf_Die t;
	if (!dwarf_attr_integrate(var, DW_AT_type, &a) || !dwarf_formref_die(&a, &t))
		return false;
	for (int hops = 0; hops < 16; hops++) {
		int tag = dwarf_tag(&t);
		if (tag == DW_TAG_typedef || tag == DW_TAG_const_type || tag == DW_TAG_volatile_type) {
			if (!dwarf_attr(&t, DW_AT_type, &a) || !dwarf_formref_die(&a, &t))
				return false;
			continue;
		}
		Dwarf_Word enc;
		int sz = dwarf_bytesize(&t);
		if (tag != DW_TAG_base_type || !dwarf_attr(&t, DW_AT_encoding, &a) || dwarf_formudata(&a, &enc) != 0 ||
		    sz < 1 || sz > 8)
			return false;
		if (enc == DW_ATE_signed || enc == DW_ATE_signed_char)
			*is_signed = true;
		else if (enc == DW_ATE_unsigned || enc == DW_ATE_unsigned_char)
			*is_signed = false;
		else
			return false;
		*size = sz;
		return true;
	}
	return false;
}

/* The value of integer variable @p var at module address @p addr: its location there
 * (a location list entry, or the one expression), evaluated; a register's or a computed
 * value as it is, else the address the variable's @p size bytes are read from. */
static bool var_value(struct eval *e, Dwarf_Die *var, Dwarf_Addr addr, int size, bool is_signed, int64_t *out)
{
	Dwarf_Attribute a;
	Dwarf_Op *ops;
	size_t n;
	if (!dwarf_attr_integrate(var, DW_AT_location, &a) || dwarf_getlocation_addr(&a, addr, &ops, &n, 1) != 1 || !n)
		return false; /* no location here: optimized out at this pc */
	bool is_value = (n == 1 && ((ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31) || ops[0].atom == DW_OP_regx)) ||
			ops[n - 1].atom == DW_OP_stack_value;
	uint64_t v;
	if (!eval_ops(e, ops, n, &v))
		return false;
	if (!is_value) {
		struct cq_error *err = cq_core_read_uint(e->ctx->core, v, (unsigned)size, &v);
		if (err) {
			cq_error_destroy(err);
			return false;
		}
	}
	if (size < 8) {
		v &= (UINT64_C(1) << (8 * size)) - 1;
		if (is_signed && (v >> (8 * size - 1)) & 1)
			v |= ~((UINT64_C(1) << (8 * size)) - 1);
	}
	*out = (int64_t)v;
	return true;
}

/* What one walk found and spent (internal.h: struct cq_stack_loops). Every frame of a
 * recursion, and every thread parked in one call, stands at the same lookup address in the
 * same blocks: their scopes and each block's loop variables are found once; only the
 * values, which are each frame's own, are read per frame. */
struct loop_var {
	Dwarf_Die die;
	const char *name; /* libdw's string: valid while the walk's Dwarf is */
	int size;
	bool is_signed;
};

struct block {
	uint64_t key;           /* the block DIE's place in the debug data (0: a free slot) */
	bool cut;               /* the budget ran out before its line rows were all seen */
	unsigned n;
	struct loop_var *vars;  /* its loop variables, in declaration order */
};

struct pc {
	uint64_t at1;           /* the lookup address + 1 (0: a free slot) */
	bool dwarf;             /* a DWARF function holds it (else nothing to find) */
	Dwarf_Addr bias;
	Dwarf_Die function;
	struct scopes sc;
};

struct cq_stack_loops {
	json_t *problems;
	uint64_t frame_budget, walk_budget, walk_left;
	struct pc *pcs;         /* open addressing by lookup address */
	size_t pcs_cap, npcs;
	struct block *blocks;   /* open addressing by block DIE */
	size_t blocks_cap, nblocks;
	unsigned cut_frames;
	char first_cut[200];    /* the first frame cut short, for the problem */
};

/* The tables grow to these many entries at most (then a frame's finds are not kept, and
 * the budgets still bound what it costs). */
#define MAX_CACHED_PCS 8192
#define MAX_CACHED_BLOCKS 32768

/* A test's smaller budgets: COREQ_TEST_LOOP_BUDGET=FRAME[:PROCESS]. */
static void test_budgets(struct cq_stack_loops *l)
{
	const char *e = getenv("COREQ_TEST_LOOP_BUDGET");
	char *end;
	unsigned long long fr = e && *e ? strtoull(e, &end, 10) : 0, wk;
	if (!fr || (*end && *end != ':'))
		return;
	wk = *end == ':' ? strtoull(end + 1, &end, 10) : fr * 10;
	if (*end || !wk)
		return;
	l->frame_budget = fr;
	l->walk_budget = l->walk_left = wk;
}

struct cq_stack_loops *cq_stack_loops_create(json_t *problems)
{
	struct cq_stack_loops *l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->problems = problems;
	l->frame_budget = CQ_STACK_LOOP_FRAME_BUDGET;
	l->walk_budget = l->walk_left = CQ_STACK_LOOP_WALK_BUDGET;
	test_budgets(l);
	return l;
}

void cq_stack_loops_destroy(struct cq_stack_loops *l)
{
	if (!l)
		return;
	if (l->cut_frames && l->problems)
		cq_json_problem(l->problems, "loop variables",
				"the search for loop variables stopped at its budget (%" PRIu64 " DIEs and line-table "
				"rows per frame, %" PRIu64 " per process) in %u frame(s), first %s: the loops it did not "
				"reach are not shown", l->frame_budget, l->walk_budget, l->cut_frames, l->first_cut);
	for (size_t i = 0; i < l->pcs_cap; i++)
		free(l->pcs[i].sc.die);
	for (size_t i = 0; i < l->blocks_cap; i++)
		free(l->blocks[i].vars);
	free(l->pcs);
	free(l->blocks);
	free(l);
}

static size_t hash_of(uint64_t k, size_t cap)
{
	k ^= k >> 33;
	k *= UINT64_C(0xff51afd7ed558ccd);
	k ^= k >> 33;
	return (size_t)k & (cap - 1);
}

/* The key of a table's entry: its first member, a uint64_t (0: a free slot). */
static uint64_t key_at(const char *entry)
{
	uint64_t k;
	memcpy(&k, entry, sizeof(k));
	return k;
}

/* Makes room for one more entry in a table of *@p cap entries of @p size bytes, @p n of
 * them used (doubling it, kept at most half full), up to @p max entries; false when it is
 * full or memory is out. */
static bool grow(void **table, size_t *cap, size_t n, size_t size, size_t max)
{
	if (n + 1 <= *cap / 2)
		return true;
	size_t ncap = *cap ? *cap * 2 : 64;
	if (ncap > 2 * max)
		return false;
	char *t = calloc(ncap, size), *old = *table;
	if (!t)
		return false;
	for (size_t i = 0; i < *cap; i++) {
		uint64_t k = key_at(old + i * size);
		if (!k)
			continue;
		size_t j = hash_of(k, ncap);
		while (key_at(t + j * size))
			j = (j + 1) & (ncap - 1);
		memcpy(t + j * size, old + i * size, size);
	}
	free(old);
	*table = t;
	*cap = ncap;
	return true;
}

/* The scopes at lookup address @p at: the table's entry, or *@p tmp (the caller frees its
 * scopes) when the table is full. */
static struct pc *pc_of(struct cq_stack_loops *l, const struct cq_stack_ctx *ctx, uint64_t at, struct pc *tmp)
{
	size_t i = 0;
	if (l->pcs_cap) {
		for (i = hash_of(at + 1, l->pcs_cap); l->pcs[i].at1; i = (i + 1) & (l->pcs_cap - 1))
			if (l->pcs[i].at1 == at + 1)
				return &l->pcs[i];
	}
	struct pc p = {.at1 = at + 1};
	p.dwarf = function_at(ctx, at, &p.bias, &p.function, &p.sc);
	if (!grow((void **)&l->pcs, &l->pcs_cap, l->npcs, sizeof(*l->pcs), MAX_CACHED_PCS)) {
		*tmp = p;
		return tmp;
	}
	for (i = hash_of(at + 1, l->pcs_cap); l->pcs[i].at1; i = (i + 1) & (l->pcs_cap - 1))
		;
	l->pcs[i] = p;
	l->npcs++;
	return &l->pcs[i];
}

/* One unit of the search's budget (a DIE or a line-table row looked at): false when
 * none is left. */
static bool spend(uint64_t *left)
{
	if (!*left)
		return false;
	--*left;
	return true;
}

/* Block @p block's integer loop variables into *@p out, at most *@p left DIEs and rows
 * looked at (out->cut when they did not suffice). DWARF does not mark loops; the line table
 * shows them: a C loop's variable is declared on the `for` line, whose statements (the
 * increment and the condition that jumps back) begin again after the body's, where a
 * declaration at the top of an `if` block begins its statement once, before the block's
 * later ones. So: within one of the block's ranges, a statement of a later line of the
 * variable's file, then a statement on its declaring line. Only rows that begin statements
 * count (is_stmt): the compiler also attributes scheduled and rematerialized code to a
 * declaration's line. @p lines_unit has the line table; at most 64 ranges looked at. The
 * rows are read once for all the block's variables (per variable, a deep nest of large
 * blocks read its function's rows hundreds of times per frame). */
static void find_block_vars(Dwarf_Die *lines_unit, Dwarf_Die *block, uint64_t *left, struct block *out)
{
	struct cand {
		struct loop_var v;
		int decl;
		unsigned file;  /* index into files */
		bool loop;
	} *cand = NULL;
	const char *files[MAX_BLOCK_CHILDREN];
	unsigned nc = 0, nfiles = 0, seen = 0;
	Dwarf_Die c;
	out->cut = false;
	out->n = 0;
	out->vars = NULL;
	if (dwarf_child(block, &c) != 0)
		return;
	if (!(cand = malloc(MAX_BLOCK_CHILDREN * sizeof(*cand))))
		return;
	do {
		if (!spend(left)) {
			out->cut = true;
			free(cand);
			return;
		}
		struct cand *k = &cand[nc];
		const char *file;
		if (dwarf_tag(&c) != DW_TAG_variable || !(k->v.name = dwarf_diename(&c)) ||
		    !int_type(&c, &k->v.size, &k->v.is_signed) || dwarf_decl_line(&c, &k->decl) != 0 ||
		    !(file = dwarf_decl_file(&c)))
			continue;
		k->v.die = c;
		k->loop = false;
		for (k->file = 0; k->file < nfiles && strcmp(files[k->file], file); k->file++)
			;
		if (k->file == nfiles)
			files[nfiles++] = file;
		nc++;
	} while (++seen < MAX_BLOCK_CHILDREN && dwarf_siblingof(&c, &c) == 0);
	Dwarf_Lines *lines;
	size_t nl;
	if (!nc || dwarf_getsrclines(lines_unit, &lines, &nl) != 0) {
		free(cand);
		return;
	}
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;
	for (int r = 0; r < 64 && (off = dwarf_ranges(block, off, &base, &start, &end)) > 0; r++) {
		/* the highest line of each file seen in the range so far (statements only) */
		int high[MAX_BLOCK_CHILDREN];
		for (unsigned f = 0; f < nfiles; f++)
			high[f] = INT_MIN;
		/* libdw sorts a unit's rows by address: the first at or after start, by halves */
		size_t lo = 0, hi = nl;
		while (lo < hi) {
			if (!spend(left))
				goto cut;
			size_t mid = lo + (hi - lo) / 2;
			Dwarf_Addr a;
			if (dwarf_lineaddr(dwarf_onesrcline(lines, mid), &a) == 0 && a < start)
				lo = mid + 1;
			else
				hi = mid;
		}
		const char *last_src = NULL;
		unsigned last_file = nfiles;
		for (size_t i = lo; i < nl; i++) {
			if (!spend(left))
				goto cut;
			Dwarf_Line *l = dwarf_onesrcline(lines, i);
			Dwarf_Addr a;
			int line;
			bool stmt;
			const char *src;
			if (l && dwarf_lineaddr(l, &a) == 0 && a >= end)
				break;
			if (!l || dwarf_lineaddr(l, &a) != 0 || a < start || a >= end || dwarf_lineno(l, &line) != 0 ||
			    dwarf_linebeginstatement(l, &stmt) != 0 || !stmt || !(src = dwarf_linesrc(l, NULL, NULL)))
				continue;
			if (src != last_src) { /* rows name their file by the same few strings */
				for (last_file = 0; last_file < nfiles && strcmp(files[last_file], src); last_file++)
					;
				last_src = src;
			}
			if (last_file == nfiles)
				continue;
			/* a statement on a declaring line after one of a later line: that variable's loop */
			if (high[last_file] > line)
				for (unsigned k = 0; k < nc; k++)
					cand[k].loop |= cand[k].file == last_file && cand[k].decl == line;
			if (line > high[last_file])
				high[last_file] = line;
		}
	}
	unsigned n = 0;
	for (unsigned k = 0; k < nc; k++)
		n += cand[k].loop;
	if (n && (out->vars = malloc(n * sizeof(*out->vars))))
		for (unsigned k = 0; k < nc; k++)
			if (cand[k].loop)
				out->vars[out->n++] = cand[k].v;
	free(cand);
	return;
cut:
	out->cut = true;
	free(cand);
}

/* Block @p block's loop variables: the table's entry, found now within *@p left if it is
 * new; or *@p tmp (the caller frees its vars) when the table is full. */
static struct block *block_of(struct cq_stack_loops *l, Dwarf_Die *lines_unit, Dwarf_Die *block, uint64_t *left,
			      struct block *tmp)
{
	uint64_t key = (uintptr_t)block->addr;
	size_t i;
	if (l->blocks_cap) {
		for (i = hash_of(key, l->blocks_cap); l->blocks[i].key; i = (i + 1) & (l->blocks_cap - 1))
			if (l->blocks[i].key == key)
				return &l->blocks[i];
	}
	struct block b = {.key = key};
	find_block_vars(lines_unit, block, left, &b);
	if (!grow((void **)&l->blocks, &l->blocks_cap, l->nblocks, sizeof(*l->blocks), MAX_CACHED_BLOCKS)) {
		*tmp = b;
		return tmp;
	}
	for (i = hash_of(key, l->blocks_cap); l->blocks[i].key; i = (i + 1) & (l->blocks_cap - 1))
		;
	l->blocks[i] = b;
	l->nblocks++;
	return &l->blocks[i];
}

json_t *cq_stack_loop_variables(const struct cq_stack_ctx *ctx, Dwfl_Frame *state, const struct cq_stack_regs *same,
				const struct cq_frame *f, uint64_t at, unsigned nframes)
{
	/* a walk without its own finds (ctx->loops): this frame's, kept for this frame only */
	struct cq_stack_loops *own = ctx->loops ? NULL : cq_stack_loops_create(NULL), *l = ctx->loops ? ctx->loops : own;
	struct pc tmp_pc = {0};
	struct pc *p = nframes && l ? pc_of(l, ctx, at, &tmp_pc) : NULL;
	if (!p || !p->dwarf) {
		free(tmp_pc.sc.die);
		cq_stack_loops_destroy(own);
		return NULL;
	}
	char why[8];
	struct eval e = {.ctx = ctx, .state = state, .same = same, .bias = p->bias, .has_cfa = f->has_cfa, .cfa = f->cfa,
			 .function = &p->function, .why = why, .why_size = sizeof(why)};
	uint64_t left = l->frame_budget < l->walk_left ? l->frame_budget : l->walk_left, had = left;
	bool cut = false;
	json_t *out = json_array(), *cur = json_array();
	/* innermost scope first: the blocks of one logical frame (an inlined call, then the
	 * function) up to its own DIE; each outer block's variables go first, and once a frame
	 * has MAX_LOOP_VARS an outer block adds none (nor is it searched) */
	for (int i = 0; i < p->sc.n && out && cur; i++) {
		int tag = dwarf_tag(&p->sc.die[i]);
		if (tag == DW_TAG_lexical_block && json_array_size(cur) < MAX_LOOP_VARS) {
			struct block tmp_b = {0}, *b = block_of(l, &p->sc.lines_unit, &p->sc.die[i], &left, &tmp_b);
			cut |= b->cut;
			size_t pos = 0;
			for (unsigned k = 0; k < b->n; k++) {
				struct loop_var *v = &b->vars[k];
				int64_t val;
				if (json_array_size(cur) < MAX_LOOP_VARS &&
				    var_value(&e, &v->die, at - p->bias, v->size, v->is_signed, &val))
					json_array_insert_new(cur, pos++, json_pack("{s:s, s:I}", "name", v->name, "value",
										    (json_int_t)val));
			}
			free(tmp_b.vars);
		} else if (tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram) {
			json_array_append_new(out, json_array_size(cur) ? cur : (json_decref(cur), json_null()));
			cur = json_array();
			if (tag == DW_TAG_subprogram || json_array_size(out) == nframes)
				break;
		}
	}
	json_decref(cur);
	l->walk_left -= had - left;
	if (cut && !l->cut_frames++) {
		const char *fn = dwarf_diename(&p->function);
		if (f->info && f->info->file && f->info->line > 0)
			snprintf(l->first_cut, sizeof(l->first_cut), "in %s (%s:%d)", fn ? fn : "?", f->info->file,
				 f->info->line);
		else
			snprintf(l->first_cut, sizeof(l->first_cut), "in %s", fn ? fn : "a function without a name");
	}
	free(tmp_pc.sc.die);
	cq_stack_loops_destroy(own);
	return out;
}

/* A parameter's value: DW_OP_entry_value (DWARF 5) and GCC's DW_OP_GNU_entry_value before
 * it, said apart from the operations the evaluator does not take. */
#ifndef DW_OP_GNU_entry_value
#define DW_OP_GNU_entry_value 0xf3
#endif

bool cq_stack_frame_parameter(const struct cq_stack_ctx *ctx, Dwfl_Frame *state, const struct cq_stack_regs *same,
			      const struct cq_frame *f, uint64_t at, unsigned nth, const char *name, uint64_t *value,
			      char *why, size_t why_size)
{
	Dwarf_Addr bias;
	Dwarf_Die function;
	struct scopes sc = {0};
	if (!function_at(ctx, at, &bias, &function, &sc)) {
		snprintf(why, why_size, "no DWARF for the function (no debug file found for its module: --debug-dir, "
			 "DEBUGINFOD_URLS)");
		return false;
	}
	/* the nth logical frame's DIE: the inlined calls innermost first, then the function */
	Dwarf_Die *fn = NULL;
	for (int i = 0, k = 0; i < sc.n && !fn; i++) {
		int tag = dwarf_tag(&sc.die[i]);
		if ((tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram) && (unsigned)k++ == nth)
			fn = &sc.die[i];
	}
	bool ok = false;
	Dwarf_Die p;
	unsigned seen = 0;
	snprintf(why, why_size, "its function has no parameter '%s'", name);
	if (fn && dwarf_child(fn, &p) == 0) {
		do {
			const char *pn = dwarf_diename(&p);
			if (dwarf_tag(&p) != DW_TAG_formal_parameter || !pn || strcmp(pn, name))
				continue;
			Dwarf_Attribute a;
			Dwarf_Op *ops;
			size_t n;
			if (!dwarf_attr(&p, DW_AT_location, &a) || dwarf_getlocation_addr(&a, at - bias, &ops, &n, 1) != 1 ||
			    !n) {
				snprintf(why, why_size, "'%s' is optimized out at this pc", name);
				break;
			}
			if (ops[0].atom == DW_OP_entry_value || ops[0].atom == DW_OP_GNU_entry_value) {
				/* the caller's call site has it, if anyone does (cq_stack_call_argument) */
				snprintf(why, why_size, "'%s' is known here only as its value at the function's entry "
					 "(DW_OP_entry_value)", name);
				break;
			}
			unsigned word = ctx->core->target->elf_class == ELFCLASS64 ? 8 : 4;
			bool is_value = (n == 1 && ((ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31) ||
						    ops[0].atom == DW_OP_regx)) || ops[n - 1].atom == DW_OP_stack_value;
			struct eval e = {.ctx = ctx, .state = state, .same = same, .bias = bias, .has_cfa = f->has_cfa,
					 .cfa = f->cfa, .function = &function, .why = why, .why_size = why_size};
			uint64_t v;
			if (!eval_ops(&e, ops, n, &v))
				break;
			struct cq_error *err = is_value ? NULL : cq_core_read_uint(ctx->core, v, word, &v);
			if (err) {
				snprintf(why, why_size, "'%s' at 0x%" PRIx64 ": %s", name, v, err->message);
				cq_error_destroy(err);
				break;
			}
			*value = v;
			ok = true;
			break;
		} while (++seen < MAX_BLOCK_CHILDREN && dwarf_siblingof(&p, &p) == 0);
	}
	free(sc.die);
	return ok;
}
