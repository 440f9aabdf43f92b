/* SPDX-License-Identifier: MIT */
/* The value of an argument of a call a frame is making, from the caller's DWARF
 * (internal.h: cq_stack_call_argument).
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

bool cq_stack_call_argument(const struct cq_stack_ctx *ctx, Dwfl_Frame *state, const struct cq_frame *f,
			    unsigned arg, uint64_t *value, char *why, size_t why_size)
{
	const struct cq_target *t = ctx->core->target;
	if (!t->ndwarf_args || arg >= 32) {
		snprintf(why, why_size, "coreq does not know where %s passes argument %u", t->name, arg + 1);
		return false;
	}
	/* in a register, or past the registers in the outgoing stack slot at sp + 8 * k (both
	 * ABIs listed pass integer and pointer arguments so; MPI's are all such) */
	unsigned word = t->elf_class == ELFCLASS64 ? 8 : 4;
	int64_t slot = arg < t->ndwarf_args ? -1 : (int64_t)(arg - t->ndwarf_args) * word;
	/* the call is the instruction before the return address */
	uint64_t at = f->pc - 1;
	Dwfl_Module *mod = dwfl_addrmodule(ctx->dwfl, at);
	Dwarf_Addr bias = 0;
	Dwarf_Die cu_mem, split_mem;
	const struct cq_image *img = cq_core_image_at(ctx->core, at);
	Dwarf_Die *cu = mod ? cq_stack_unit_at(ctx->units, ctx->core, img, mod, at, &bias, &cu_mem) : NULL;
	Dwarf_Die *su = cu ? cq_stack_scope_unit(ctx->units, ctx->core, img, cu, &split_mem) : NULL;
	Dwarf_Die *scopes = NULL;
	int n = su ? cq_stack_concrete_scopes(su, at - bias, &scopes) : 0;
	Dwarf_Die function;
	bool found = false;
	for (int i = 0; i < n; i++)
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram) {
			function = scopes[i]; /* the outermost: the physical function */
			found = true;
		}
	free(scopes);
	if (!found) {
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
	unsigned want = slot < 0 ? t->dwarf_args[arg] : UINT32_MAX;
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
			/* a stack slot: the stack pointer plus the slot's offset */
			bool at_slot = slot >= 0 && (int64_t)lops[0].number == slot &&
				       (lops[0].atom == DW_OP_breg0 + t->dwarf_sp ||
					(lops[0].atom == DW_OP_bregx && lops[0].number == (Dwarf_Word)t->dwarf_sp &&
					 (int64_t)lops[0].number2 == slot));
			if (lops[0].atom == DW_OP_bregx)
				at_slot = slot >= 0 && lops[0].number == (Dwarf_Word)t->dwarf_sp && (int64_t)lops[0].number2 == slot;
			if (slot < 0 ? r != want : !at_slot)
				continue;
			if ((!dwarf_attr(&p, DW_AT_call_value, &va) && !dwarf_attr(&p, DW_AT_GNU_call_site_value, &va)) ||
			    dwarf_getlocation(&va, &vops, &nv) != 0) {
				snprintf(why, why_size, "the call site gives no value for argument %u", arg + 1);
				return false;
			}
			struct eval e = {.ctx = ctx, .state = state, .bias = bias, .has_cfa = f->has_cfa, .cfa = f->cfa,
					 .function = &function, .why = why, .why_size = why_size};
			return eval_ops(&e, vops, nv, value);
		} while (dwarf_siblingof(&p, &p) == 0);
	}
	snprintf(why, why_size, "the call site says nothing of argument %u (its value was not kept)", arg + 1);
	return false;
}
