/* SPDX-License-Identifier: MIT */
/* riscv64 prologue analysis (internal.h): what gdb does for a function without CFI.
 * Debian's riscv64 libc has such functions (abort, __pthread_mutex_lock, start_thread) and
 * most of them do not keep a frame pointer. From the function's first instruction up to the
 * pc (at most MAX_SCAN bytes, ending at the first jump or branch) the stack adjustments
 * (addi/c.addi16sp/c.addi on sp) and the stores of callee-saved registers relative to sp
 * (sd/c.sdsp) give the CFA and where the return address and s0-s11 were saved. Encodings:
 * the RISC-V unprivileged ISA, RV64I and the C extension. */
#include <elf.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "corelib/image.h"
#include "internal.h"

#define MAX_SCAN 512
#define RA 1
#define SP 2

static int64_t sext(uint64_t v, unsigned bits)
{
	uint64_t m = UINT64_C(1) << (bits - 1);
	return (int64_t)((v ^ m) - m);
}

/* The 12-bit immediates of an I-type (addi) and an S-type (sd) instruction. */
static int64_t imm_i(uint32_t in) { return sext(in >> 20, 12); }
static int64_t imm_s(uint32_t in) { return sext(((in >> 25) << 5) | ((in >> 7) & 0x1f), 12); }

/* Callee-saved registers whose slots are followed: ra, s0, s1, s2-s11. */
static bool tracked(unsigned r)
{
	return r == RA || r == 8 || r == 9 || (r >= 18 && r <= 27);
}

/* The code of the function holding @p pc, from its start (its symbol) up to @p pc, at most
 * MAX_SCAN bytes, into @p code (zero-padded) and *@p n. False without a stop reason when
 * the function's start is unknown (or it is not in the state @p thumb asks for: symbols of
 * Thumb functions are odd, all others even); with one when its code is not in the core. */
static bool function_code_at(const struct cq_stack_ctx *ctx, uint64_t pc, bool thumb, uint8_t *code, size_t *n,
			     struct cq_stack_stop *stop, uint64_t *start_ret)
{
	struct cq_symref ref;
	struct cq_error *err = cq_core_symbolize(ctx->core, pc, &ref);
	if (err || !ref.sym || !ref.image || !ref.image->bias_known || thumb != (bool)(ref.sym->value & 1)) {
		cq_error_destroy(err);
		return false;
	}
	uint64_t start = (ref.image->bias + ref.sym->value) & ~(uint64_t)thumb;
	if (pc < start || pc - start > (1u << 20))
		return false;
	*start_ret = start;
	*n = (size_t)(pc - start > MAX_SCAN ? MAX_SCAN : pc - start);
	memset(code, 0, MAX_SCAN + 4);
	if (*n && (err = cq_core_read(ctx->core, start, code, *n))) {
		cq_error_destroy(err);
		snprintf(stop->why, sizeof(stop->why), "no CFI, and its code is not in the core to analyze (a bundle "
			 "carries no code)");
		stop->no_code = true;
		return false;
	}
	return true;
}

static bool function_code(const struct cq_stack_ctx *ctx, uint64_t pc, bool thumb, uint8_t *code, size_t *n,
			  struct cq_stack_stop *stop)
{
	uint64_t start;
	return function_code_at(ctx, pc, thumb, code, n, stop, &start);
}

/* The caller's frame from what a prologue did (the RISC-V and MIPS analyses): the stack
 * pointer moved to @p cur below the CFA (the sp at entry), and registers from @p first up
 * stored at CFA + slot[r] where saved[r]. The return address is read from its slot, or in
 * a leaf's initial frame taken from @p ra_reg; addresses wrap at @p mask (32-bit targets).
 * The caller's sp is the CFA. */
static bool frame_from_saves(const struct cq_stack_ctx *ctx, const struct cq_stack_regs *regs, bool initial,
			     uint64_t sp, int64_t cur, const bool saved[32], const int64_t slot[32], unsigned ra_reg,
			     unsigned sp_reg, unsigned first, uint64_t mask, struct cq_stack_step *out,
			     struct cq_stack_stop *stop)
{
	if (cur > 0 || (!cur && !initial)) {
		/* no frame made: only a leaf's initial frame has its return address in ra */
		snprintf(stop->why, sizeof(stop->why), "no CFI, and the prologue made no frame");
		return false;
	}
	uint64_t cfa = (sp - (uint64_t)cur) & mask, ra;
	out->regs = *regs;
	out->regs.ok[ra_reg] = false;
	if (saved[ra_reg]) {
		if (!ctx->read(ctx->read_ctx, (cfa + (uint64_t)slot[ra_reg]) & mask, &ra)) {
			snprintf(stop->why, sizeof(stop->why), "the saved return address at 0x%" PRIx64 " is not in the core",
				 (cfa + (uint64_t)slot[ra_reg]) & mask);
			return false;
		}
	} else if (!initial || !cq_stack_reg(regs, ra_reg, &ra)) {
		snprintf(stop->why, sizeof(stop->why), "no CFI, and the prologue saves no return address");
		return false;
	}
	for (unsigned r = first; r < 32; r++) {
		uint64_t v;
		if (!saved[r] || r == ra_reg)
			continue;
		if (ctx->read(ctx->read_ctx, (cfa + (uint64_t)slot[r]) & mask, &v))
			cq_stack_set(&out->regs, (int)r, v);
		else
			out->regs.ok[r] = false;
	}
	if (!ra || !dwfl_addrmodule(ctx->dwfl, ra - 1)) {
		snprintf(stop->why, sizeof(stop->why), "the prologue's return address 0x%" PRIx64 " is in no module", ra);
		return false;
	}
	cq_stack_set(&out->regs, (int)sp_reg, cfa);
	out->ra_pc = ra;
	out->cfa = cfa;
	out->how = CQ_FOUND_PROLOGUE;
	return true;
}

bool cq_stack_riscv_prologue_step(const struct cq_stack_ctx *ctx, const struct cq_stack_regs *regs, uint64_t pc,
				  bool initial, struct cq_stack_step *out, struct cq_stack_stop *stop)
{
	uint8_t code[MAX_SCAN + 4];
	uint64_t sp;
	size_t n;
	if (!cq_stack_reg(regs, SP, &sp) || !function_code(ctx, pc, false, code, &n, stop))
		return false;
	int64_t cur = 0;        /* sp relative to the CFA (the sp at entry) */
	int64_t slot[32];       /* where each tracked register was saved, relative to the CFA */
	bool saved[32] = {false};
	for (size_t i = 0; i + 2 <= n;) {
		uint32_t in = (uint32_t)code[i] | (uint32_t)code[i + 1] << 8;
		if ((in & 3) != 3) { /* compressed */
			unsigned op = in & 3, f3 = in >> 13, rd = (in >> 7) & 0x1f;
			if (op == 1 && f3 == 3 && rd == SP) { /* c.addi16sp */
				uint64_t v = ((in >> 12) & 1) << 9 | ((in >> 6) & 1) << 4 | ((in >> 5) & 1) << 6 |
					     ((in >> 3) & 3) << 7 | ((in >> 2) & 1) << 5;
				if (sext(v, 10) > 0)
					break;
				cur += sext(v, 10);
			} else if (op == 1 && f3 == 0 && rd == SP) { /* c.addi sp */
				int64_t v = sext(((in >> 12) & 1) << 5 | ((in >> 2) & 0x1f), 6);
				if (v > 0)
					break;
				cur += v;
			} else if (op == 2 && f3 == 7) { /* c.sdsp */
				unsigned rs2 = (in >> 2) & 0x1f;
				int64_t off = (int64_t)(((in >> 10) & 7) << 3 | ((in >> 7) & 7) << 6);
				if (tracked(rs2) && !saved[rs2]) {
					slot[rs2] = cur + off;
					saved[rs2] = true;
				}
			} else if ((op == 1 && f3 == 5) || (op == 2 && f3 == 4 && !((in >> 2) & 0x1f) && rd)) {
				break; /* c.j, c.jr (ret), c.jalr: the prologue is over */
			}
			i += 2;
			continue;
		}
		if (i + 4 > n)
			break;
		in |= (uint32_t)code[i + 2] << 16 | (uint32_t)code[i + 3] << 24;
		unsigned opc = in & 0x7f, f3 = (in >> 12) & 7, rd = (in >> 7) & 0x1f, rs1 = (in >> 15) & 0x1f;
		if (opc == 0x13 && f3 == 0 && rd == SP && rs1 == SP) {
			if (imm_i(in) > 0)
				break;
			cur += imm_i(in);
		} else if (opc == 0x23 && f3 == 3 && rs1 == SP) {
			unsigned rs2 = (in >> 20) & 0x1f;
			if (tracked(rs2) && !saved[rs2]) {
				slot[rs2] = cur + imm_s(in);
				saved[rs2] = true;
			}
		} else if (opc == 0x6f || opc == 0x67) {
			break; /* jal, jalr */
		}
		i += 4;
	}
	return frame_from_saves(ctx, regs, initial, sp, cur, saved, slot, RA, SP, 2, UINT64_MAX, out, stop);
}

/* ---- armhf (Thumb-2) ----
 * Debian's armhf libc is Thumb-2 and a few of its functions (abort) have no .ARM.exidx
 * entry. gdb analyzes their prologue; so does this, for the instructions GCC's Thumb-2
 * prologues use: push (16-bit, and stmdb/str.w with writeback on sp), sub sp (16-bit,
 * sub.w with a modified immediate, subw) and vpush. Encodings: the ARMv7-M/ARMv7-A
 * Architecture Reference Manual, Thumb instruction set. */

/* ThumbExpandImm of the 12 bits i:imm3:imm8. */
static uint32_t thumb_expand_imm(uint32_t imm12)
{
	uint32_t b = imm12 & 0xff;
	if (!(imm12 & 0xc00)) {
		switch ((imm12 >> 8) & 3) {
		case 0: return b;
		case 1: return b << 16 | b;
		case 2: return b << 24 | b << 8;
		default: return b << 24 | b << 16 | b << 8 | b;
		}
	}
	uint32_t v = 0x80 | (imm12 & 0x7f), rot = (imm12 >> 7) & 0x1f;
	return v >> rot | v << ((32 - rot) & 31);
}

/* Registers of a push (bit n = rn) stored below the current sp: n-th lowest first. */
static void pushed(uint32_t mask, int64_t *cur, int64_t *slot, bool *saved)
{
	int64_t at = *cur - 4 * (int64_t)__builtin_popcount(mask);
	*cur = at;
	for (unsigned r = 0; r < 16; r++)
		if (mask & (1u << r)) {
			if (!saved[r]) {
				slot[r] = at;
				saved[r] = true;
			}
			at += 4;
		}
}

/* Thumb-2: what the prologue before @p n bytes of @p code pushed and reserved. */
static void thumb_scan(const uint8_t *code, size_t n, int64_t *cur, int64_t *slot, bool *saved)
{
	for (size_t i = 0; i + 2 <= n;) {
		uint32_t h = (uint32_t)code[i] | (uint32_t)code[i + 1] << 8;
		if ((h >> 11) < 0x1d) { /* 16-bit */
			if ((h & 0xfe00) == 0xb400)
				pushed((h & 0xff) | ((h & 0x100) ? 1u << 14 : 0), cur, slot, saved);
			else if ((h & 0xff80) == 0xb080)
				*cur -= (int64_t)((h & 0x7f) << 2);
			else if ((h & 0xff80) == 0xb000 || (h & 0xf800) == 0xe000 || (h & 0xff00) == 0x4700 ||
				 (h & 0xfe00) == 0xbc00)
				break; /* add sp (epilogue), b, bx/blx, pop */
			i += 2;
			continue;
		}
		if (i + 4 > n)
			break;
		uint32_t h2 = (uint32_t)code[i + 2] | (uint32_t)code[i + 3] << 8;
		uint32_t imm12 = ((h >> 10) & 1) << 11 | ((h2 >> 12) & 7) << 8 | (h2 & 0xff);
		if (h == 0xe92d && !(h2 & 0xa000))
			pushed(h2, cur, slot, saved); /* push.w / stmdb sp! */
		else if (h == 0xf84d && (h2 & 0x0fff) == 0x0d04)
			pushed(1u << (h2 >> 12), cur, slot, saved); /* str.w rt, [sp, #-4]! */
		else if ((h & 0xfbef) == 0xf1ad && (h2 & 0x8f00) == 0x0d00)
			*cur -= (int64_t)thumb_expand_imm(imm12); /* sub.w sp, sp, #const */
		else if ((h & 0xfbff) == 0xf2ad && (h2 & 0x8f00) == 0x0d00)
			*cur -= (int64_t)imm12; /* subw sp, sp, #imm12 */
		else if ((h & 0xffbf) == 0xed2d && (h2 & 0x0e00) == 0x0a00)
			*cur -= (int64_t)(h2 & 0xff) * 4; /* vpush */
		else if ((h & 0xf800) == 0xf000 && (h2 & 0x8000) && (h2 & 0x5000))
			break; /* b.w, bl, blx (conditional b.w is stepped over) */
		i += 4;
	}
}

/* ---- armel (ARM state) ----
 * Debian's armel libc is ARM code (armv5te), and abort has no .ARM.exidx entry there too.
 * GCC's ARM prologues: push / stmdb sp! {..., lr}, str rt, [sp, #-4]!, sub sp, sp, #const
 * and vpush (vstmdb sp!), all unconditional (cond 0xe). A call (bl, or "mov lr, pc" and a
 * write to pc, the kernel user helpers' calling form) returns, so the scan goes on past it
 * (abort calls __aeabi_read_tp between its push and its sub sp); it ends at what leaves the
 * function or undoes the frame: b, bx, a pop from sp, add sp. Encodings: the ARMv7-A
 * Architecture Reference Manual, ARM instruction set. */
static void arm_scan(const uint8_t *code, size_t n, int64_t *cur, int64_t *slot, bool *saved)
{
	for (size_t i = 0; i + 4 <= n; i += 4) {
		uint32_t in = (uint32_t)code[i] | (uint32_t)code[i + 1] << 8 | (uint32_t)code[i + 2] << 16 |
			      (uint32_t)code[i + 3] << 24;
		if ((in & 0xffff0000) == 0xe92d0000) {
			pushed(in & 0xffff, cur, slot, saved); /* push / stmdb sp! */
		} else if ((in & 0xffff0fff) == 0xe52d0004) {
			pushed(1u << ((in >> 12) & 0xf), cur, slot, saved); /* str rt, [sp, #-4]! */
		} else if ((in & 0xfffff000) == 0xe24dd000) { /* sub sp, sp, #const */
			uint32_t v = in & 0xff, rot = ((in >> 8) & 0xf) * 2;
			*cur -= (int64_t)(v >> rot | v << ((32 - rot) & 31));
		} else if ((in & 0xffbf0e00) == 0xed2d0a00) {
			*cur -= (int64_t)(in & 0xff) * 4; /* vpush / vstmdb sp! */
		} else if ((in & 0x0f000000) == 0x0a000000 && (in >> 28) == 0xe) {
			break; /* b */
		} else if ((in & 0x0ffffff0) == 0x012fff10 || (in & 0x0fff0000) == 0x08bd0000 ||
			   (in & 0x0fff0fff) == 0x049d0004 || (in & 0x0ffff000) == 0x028dd000) {
			break; /* bx, pop / ldm sp!, ldr rt, [sp], #4, add sp, sp, #const */
		}
	}
}

bool cq_stack_arm_prologue_step(const struct cq_stack_ctx *ctx, const struct cq_stack_regs *regs, uint64_t pc,
				bool initial, struct cq_stack_step *out, struct cq_stack_stop *stop)
{
	uint8_t code[MAX_SCAN + 4];
	uint64_t sp;
	size_t n;
	if (!cq_stack_reg(regs, 13, &sp))
		return false;
	int64_t cur = 0, slot[16];
	bool saved[16] = {false};
	/* the symbol's low bit says the state: 1 Thumb (armhf's libc), 0 ARM (armel's) */
	if (function_code(ctx, pc, true, code, &n, stop))
		thumb_scan(code, n, &cur, slot, saved);
	else if (!stop->no_code && function_code(ctx, pc, false, code, &n, stop))
		arm_scan(code, n & ~(size_t)3, &cur, slot, saved);
	else
		return false;
	if (cur > 0 || (!cur && !initial)) {
		snprintf(stop->why, sizeof(stop->why), "no .ARM.exidx entry, and the prologue made no frame");
		return false;
	}
	uint64_t cfa = (sp - (uint64_t)cur) & 0xffffffffu, ra;
	out->regs = *regs;
	if (saved[14]) {
		if (!ctx->read(ctx->read_ctx, (cfa + (uint64_t)slot[14]) & 0xffffffffu, &ra)) {
			snprintf(stop->why, sizeof(stop->why), "the saved return address is not in the core");
			return false;
		}
	} else if (!initial || !cq_stack_reg(regs, 14, &ra)) {
		snprintf(stop->why, sizeof(stop->why), "no .ARM.exidx entry, and the prologue saves no lr");
		return false;
	}
	for (unsigned r = 0; r < 13; r++) {
		uint64_t v;
		if (!saved[r])
			continue;
		if (ctx->read(ctx->read_ctx, (cfa + (uint64_t)slot[r]) & 0xffffffffu, &v))
			cq_stack_set(&out->regs, (int)r, v);
		else
			out->regs.ok[r] = false;
	}
	if (!(ra & ~(uint64_t)1) || !dwfl_addrmodule(ctx->dwfl, (ra & ~(uint64_t)1) - 1)) {
		snprintf(stop->why, sizeof(stop->why), "the prologue's return address 0x%" PRIx64 " is in no module", ra);
		return false;
	}
	cq_stack_set(&out->regs, 13, cfa);
	cq_stack_set(&out->regs, 15, ra);
	out->ra_pc = ra & ~(uint64_t)1;
	out->cfa = cfa;
	out->how = CQ_FOUND_PROLOGUE;
	return true;
}

/* ---- MIPS (o32, n64) ----
 * Debian's MIPS libc has functions without CFI (abort, __pthread_mutex_lock,
 * __lll_lock_wait); gdb analyzes their prologues (mips32_scan_prologue), and so does this,
 * for what GCC's prologues hold: the stack adjustment `addiu`/`daddiu sp,sp,-N` and the
 * saves `sw`/`sd REG,OFF(sp)` of ra, s0-s7, gp and fp, up to the first j or jr.
 * Encodings: the MIPS32/MIPS64 instruction set manuals (I-type: opcode 6 bits, rs, rt,
 * 16-bit immediate). */
#define MIPS_SP 29
#define MIPS_RA 31

static bool mips_tracked(unsigned r)
{
	return (r >= 16 && r <= 23) || r == 28 || r == 30 || r == MIPS_RA;
}

/* An unconditional jump: j or jr (a return, a tail call). The scan stops there; it goes
 * on past conditional branches and calls, since GCC shrink-wraps: a fast path may
 * branch out before the stack frame is made (__pthread_mutex_lock). */
static bool mips_control(uint32_t in)
{
	unsigned op = in >> 26, funct = in & 0x3f;
	return op == 2 || (op == 0 && funct == 8);
}

/* A function without a symbol (Debian's stripped libc: start_thread, __lll_lock_wait):
 * gdb's heuristic (mips heuristic_proc_start) looks backwards from the pc for the stack
 * adjustment `(d)addiu sp,sp,-N`, at most MIPS_HEURISTIC bytes and not past a `jr ra`
 * (the end of the function before). The code from there up to @p pc into @p code. */
#define MIPS_HEURISTIC 1024

static bool mips_heuristic_code(const struct cq_stack_ctx *ctx, uint64_t pc, bool is64, uint8_t *code, size_t *n,
				struct cq_stack_stop *stop)
{
	Dwfl_Module *mod = dwfl_addrmodule(ctx->dwfl, pc);
	Dwarf_Addr lo = 0;
	if (!mod || !dwfl_module_info(mod, NULL, &lo, NULL, NULL, NULL, NULL, NULL))
		return false;
	uint64_t end = pc & ~(uint64_t)3, from = end - lo > MIPS_HEURISTIC ? end - MIPS_HEURISTIC : lo;
	from = (from + 3) & ~(uint64_t)3;
	uint8_t buf[MIPS_HEURISTIC];
	size_t len = (size_t)(end - from);
	struct cq_error *err = len ? cq_core_read(ctx->core, from, buf, len) : NULL;
	if (err) {
		cq_error_destroy(err);
		snprintf(stop->why, sizeof(stop->why), "no CFI, and its code is not in the core to analyze (a bundle "
			 "carries no code)");
		stop->no_code = true;
		return false;
	}
	uint32_t addiu = is64 ? 0x67bd0000u : 0x27bd0000u;
	for (size_t i = len; i >= 4; i -= 4) {
		uint32_t in = (uint32_t)buf[i - 4] | (uint32_t)buf[i - 3] << 8 | (uint32_t)buf[i - 2] << 16 |
			      (uint32_t)buf[i - 1] << 24;
		if (in == 0x03e00008u) /* jr ra */
			break;
		if ((in & 0xffff0000u) == addiu) {
			if (sext(in & 0xffff, 16) >= 0)
				break; /* an epilogue: the frame was given back */
			*n = len - (i - 4) > MAX_SCAN ? MAX_SCAN : len - (i - 4);
			memset(code, 0, MAX_SCAN + 4);
			memcpy(code, buf + i - 4, *n);
			return true;
		}
	}
	snprintf(stop->why, sizeof(stop->why), "no CFI, no symbol, and no stack adjustment in the %u bytes before "
		 "the pc", MIPS_HEURISTIC);
	return false;
}

bool cq_stack_mips_prologue_step(const struct cq_stack_ctx *ctx, const struct cq_stack_regs *regs, uint64_t pc,
				 bool initial, struct cq_stack_step *out, struct cq_stack_stop *stop)
{
	uint8_t code[MAX_SCAN + 4];
	uint64_t sp;
	size_t n;
	bool is64 = cq_target_ptr_size(ctx->core->target) == 8;
	uint64_t mask = is64 ? UINT64_MAX : UINT32_MAX;
	if (!cq_stack_reg(regs, MIPS_SP, &sp))
		return false;
	if (!function_code(ctx, pc, false, code, &n, stop)) {
		if (stop->why[0] || !mips_heuristic_code(ctx, pc, is64, code, &n, stop))
			return false;
	}
	int64_t cur = 0;  /* sp relative to the CFA (the sp at entry) */
	int64_t slot[32];
	bool saved[32] = {false};
	uint32_t addiu = is64 ? 0x67bd0000u : 0x27bd0000u; /* (d)addiu sp,sp,imm */
	uint32_t store = is64 ? 0xffa00000u : 0xafa00000u; /* sd/sw rt,imm(sp) */
	for (size_t i = 0; i + 4 <= n; i += 4) {
		uint32_t in = (uint32_t)code[i] | (uint32_t)code[i + 1] << 8 | (uint32_t)code[i + 2] << 16 |
			      (uint32_t)code[i + 3] << 24;
		int64_t imm = sext(in & 0xffff, 16);
		if ((in & 0xffff0000u) == addiu) {
			if (imm > 0)
				break; /* the epilogue */
			cur += imm;
		} else if ((in & 0xffe00000u) == store) {
			unsigned rt = (in >> 16) & 0x1f;
			if (mips_tracked(rt) && !saved[rt]) {
				slot[rt] = cur + imm;
				saved[rt] = true;
			}
		} else if (mips_control(in)) {
			break;
		}
	}
	/* registers a call does not preserve are unknown in the caller */
	struct cq_stack_regs in = *regs;
	for (unsigned r = 0; r < 32; r++)
		if (!mips_tracked(r))
			in.ok[r] = false;
	return frame_from_saves(ctx, &in, initial, sp, cur, saved, slot, MIPS_RA, MIPS_SP, 0, mask, out, stop);
}

/* ---- m68k ----
 * Debian's m68k libc has CFI for most functions, not for abort (nor for static functions
 * such as start_thread, whose start no dynamic symbol gives). GCC's m68k prologues, as gdb's
 * m68k prologue analyzer reads them: link %fp, lea -N(%sp),%sp, subq/suba on %sp,
 * movem.l regs,-(%sp), move.l rN,-(%sp) and fmovem.x regs,-(%sp) at the function's start;
 * the first other instruction ends the prologue. Encodings: the M68000 Family Programmer's
 * Reference Manual. The return address is on the stack (there is no link register): above
 * %fp where the prologue linked it, else above the prologue's frame, unless the body has
 * pushed a call's arguments since (the caller pops them). So without %fp the return
 * address is the first word above the frame, at most M68K_MAX_ARGS bytes up, that a call
 * instruction (bsr, jsr) in a module's code precedes. */
#define M68K_MAX_ARGS 64
#define M68K_MAX_FRAME (UINT64_C(8) << 20) /* glibc's default thread stack */
#define M68K_FP 14
#define M68K_SP 15
#define M68K_PC 24

static uint32_t be16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

/* The instruction that ends just before @p ra is a call that may have entered the function
 * at @p callee: an indirect one, or a direct one whose target is @p callee or, from another
 * module, a stub in the caller's (PLT). A function pointer among a call's arguments
 * is rarely that. */
static bool m68k_after_call(const struct cq_stack_ctx *ctx, uint64_t ra, uint64_t callee)
{
	uint8_t b[6];
	Dwfl_Module *from = ra >= 6 && !(ra & 1) ? dwfl_addrmodule(ctx->dwfl, ra - 1) : NULL;
	if (!from)
		return false;
	struct cq_error *err = cq_core_read(ctx->core, ra - 6, b, sizeof(b));
	if (err) {
		cq_error_destroy(err);
		return false;
	}
	uint32_t w2 = be16(b + 4), w4 = be16(b + 2), w6 = be16(b);
	uint64_t target;
	if ((w2 & 0xfff8) == 0x4e90 || (w4 & 0xfff8) == 0x4ea8)
		return true; /* jsr (an), jsr d16(an) */
	if ((w2 & 0xff00) == 0x6100 && (w2 & 0xff) && (w2 & 0xff) != 0xff) /* bsr.b */
		target = ra + (uint64_t)(int64_t)(int8_t)(w2 & 0xff);
	else if (w4 == 0x6100 || w4 == 0x4eba) /* bsr.w, jsr d16(pc): relative to the extension word */
		target = ra - 2 + (uint64_t)(int64_t)(int16_t)w2;
	else if (w4 == 0x4eb8) /* jsr abs.w */
		target = (uint64_t)(int64_t)(int16_t)w2;
	else if (w6 == 0x61ff) /* bsr.l */
		target = ra - 4 + (uint64_t)(int64_t)(int32_t)(w4 << 16 | w2);
	else if (w6 == 0x4eb9) /* jsr abs.l */
		target = w4 << 16 | w2;
	else
		return false;
	target &= 0xffffffffu;
	return target == callee ||
	       (dwfl_addrmodule(ctx->dwfl, callee) != from && dwfl_addrmodule(ctx->dwfl, target) == from);
}

/* A register pushed at *@p cur (relative to the sp at entry), the first push of it only. */
static void m68k_push(unsigned r, int64_t *cur, int64_t *slot, bool *saved)
{
	*cur -= 4;
	if (!saved[r]) {
		slot[r] = *cur;
		saved[r] = true;
	}
}

bool cq_stack_m68k_prologue_step(const struct cq_stack_ctx *ctx, const struct cq_stack_regs *regs, uint64_t pc,
				 bool initial, struct cq_stack_step *out, struct cq_stack_stop *stop)
{
	uint8_t code[MAX_SCAN + 4];
	uint64_t sp, fp, start, at_entry;
	size_t n;
	if (!cq_stack_reg(regs, M68K_SP, &sp))
		return false;
	if (!function_code_at(ctx, pc, false, code, &n, stop, &start)) {
		if (!stop->why[0])
			snprintf(stop->why, sizeof(stop->why), "no CFI, and the function's start is unknown (no symbol)");
		return false;
	}
	/* _start has no caller: what lies above its frame is the process's arguments */
	if (cq_core_auxv(ctx->core, AT_ENTRY, &at_entry) && at_entry == start) {
		stop->end = true;
		snprintf(stop->why, sizeof(stop->why), "the program's entry point: the outermost frame");
		return false;
	}
	int64_t cur = 0, slot[16], fp_at = 0; /* relative to the sp at entry (it points at the return address) */
	bool saved[16] = {false}, linked = false;
	for (size_t i = 0; i + 2 <= n;) {
		uint32_t op = be16(code + i), ext = i + 4 <= n ? be16(code + i + 2) : 0;
		uint32_t ext32 = i + 6 <= n ? ext << 16 | be16(code + i + 4) : 0;
		if (op == 0x4e56 && i + 4 <= n) { /* link.w %fp, #d16 */
			m68k_push(M68K_FP, &cur, slot, saved);
			fp_at = cur;
			linked = true;
			cur += (int16_t)ext;
			i += 4;
		} else if (op == 0x480e && i + 6 <= n) { /* link.l %fp, #d32 */
			m68k_push(M68K_FP, &cur, slot, saved);
			fp_at = cur;
			linked = true;
			cur += (int32_t)ext32;
			i += 6;
		} else if (op == 0x4fef && i + 4 <= n) { /* lea d16(%sp), %sp */
			cur += (int16_t)ext;
			i += 4;
		} else if ((op & 0xf1ff) == 0x518f) { /* subq.l #q, %sp */
			cur -= (op >> 9) & 7 ? (op >> 9) & 7 : 8;
			i += 2;
		} else if (op == 0x9efc && i + 4 <= n) { /* suba.w #imm, %sp */
			cur -= (int16_t)ext;
			i += 4;
		} else if (op == 0x9ffc && i + 6 <= n) { /* suba.l #imm, %sp */
			cur -= (int32_t)ext32;
			i += 6;
		} else if (op == 0x48e7 && i + 4 <= n) { /* movem.l regs, -(%sp): mask bit 15 is d0, 0 is a7 */
			int64_t at = cur - 4 * (int64_t)__builtin_popcount(ext);
			cur = at;
			for (unsigned r = 0; r < 16; r++)
				if (ext & (0x8000u >> r)) {
					if (!saved[r]) {
						slot[r] = at;
						saved[r] = true;
					}
					at += 4;
				}
			i += 4;
		} else if ((op & 0xfff0) == 0x2f00) { /* move.l %dN / %aN, -(%sp) */
			m68k_push(op & 0xf, &cur, slot, saved);
			i += 2;
		} else if (op == 0xf227 && i + 4 <= n && (ext & 0xff00) == 0xe000) { /* fmovem.x list, -(%sp) */
			cur -= 12 * (int64_t)__builtin_popcount(ext & 0xff);
			i += 4;
		} else {
			break;
		}
		if (cur > 0 || cur < -(int64_t)M68K_MAX_FRAME)
			break;
	}
	if (cur > 0 || cur < -(int64_t)M68K_MAX_FRAME) {
		snprintf(stop->why, sizeof(stop->why), "no CFI, and the prologue's frame is implausible");
		return false;
	}
	uint64_t entry = 0, ra = 0;
	bool found = false;
	if (linked && cq_stack_reg(regs, M68K_FP, &fp) && fp >= sp && fp - sp <= M68K_MAX_FRAME) {
		entry = (fp - (uint64_t)fp_at) & 0xffffffffu;
		found = ctx->read(ctx->read_ctx, entry, &ra) && m68k_after_call(ctx, ra, start);
	}
	for (uint64_t k = 0; !found && k <= M68K_MAX_ARGS; k += 2) {
		entry = (sp - (uint64_t)cur + k) & 0xffffffffu;
		found = ctx->read(ctx->read_ctx, entry, &ra) && m68k_after_call(ctx, ra, start);
	}
	if (!found) {
		snprintf(stop->why, sizeof(stop->why), "no CFI, and no return address after a call above the prologue's frame");
		return false;
	}
	(void)initial;
	out->regs = *regs;
	for (unsigned r = 0; r < 15; r++) {
		uint64_t v;
		if (!saved[r])
			continue;
		if (ctx->read(ctx->read_ctx, (entry + (uint64_t)slot[r]) & 0xffffffffu, &v))
			cq_stack_set(&out->regs, (int)r, v);
		else
			out->regs.ok[r] = false;
	}
	uint64_t cfa = (entry + 4) & 0xffffffffu; /* the caller pops the return address */
	cq_stack_set(&out->regs, M68K_SP, cfa);
	cq_stack_set(&out->regs, M68K_PC, ra);
	out->ra_pc = ra;
	out->cfa = cfa;
	out->how = CQ_FOUND_PROLOGUE;
	return true;
}
