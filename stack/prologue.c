/* SPDX-License-Identifier: MIT */
/* riscv64 prologue analysis (internal.h): what gdb does for a function without CFI.
 * Debian's riscv64 libc has such functions (abort, __pthread_mutex_lock, start_thread) and
 * most of them do not keep a frame pointer. From the function's first instruction up to the
 * pc (at most MAX_SCAN bytes, ending at the first jump or branch) the stack adjustments
 * (addi/c.addi16sp/c.addi on sp) and the stores of callee-saved registers relative to sp
 * (sd/c.sdsp) give the CFA and where the return address and s0-s11 were saved. Encodings:
 * the RISC-V unprivileged ISA, RV64I and the C extension. */
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

bool cq_stack_riscv_prologue_step(const struct cq_stack_ctx *ctx, const struct cq_stack_regs *regs, uint64_t pc,
				  bool initial, struct cq_stack_step *out, struct cq_stack_stop *stop)
{
	struct cq_symref ref;
	struct cq_error *err = cq_core_symbolize(ctx->core, pc, &ref);
	if (err || !ref.sym || !ref.image || !ref.image->bias_known) {
		cq_error_destroy(err);
		return false; /* no function start: nothing to analyze */
	}
	uint64_t start = ref.image->bias + ref.sym->value, sp;
	if (pc < start || pc - start > (1u << 20) || !cq_stack_reg(regs, SP, &sp))
		return false;
	uint64_t end = pc - start > MAX_SCAN ? start + MAX_SCAN : pc;
	uint8_t code[MAX_SCAN + 4];
	size_t n = (size_t)(end - start);
	memset(code, 0, sizeof(code));
	if (n && (err = cq_core_read(ctx->core, start, code, n))) {
		cq_error_destroy(err);
		return false;
	}
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
	if (cur > 0 || (!cur && !initial)) {
		/* no frame made: only a leaf's initial frame has its return address in ra */
		snprintf(stop->why, sizeof(stop->why), "no CFI, and the prologue made no frame");
		return false;
	}
	uint64_t cfa = sp - (uint64_t)cur;
	out->regs = *regs;
	out->regs.ok[RA] = false;
	uint64_t ra;
	if (saved[RA]) {
		if (!ctx->read(ctx->read_ctx, cfa + (uint64_t)slot[RA], &ra)) {
			snprintf(stop->why, sizeof(stop->why), "the saved return address at 0x%" PRIx64 " is not in the core",
				 cfa + (uint64_t)slot[RA]);
			return false;
		}
	} else if (!initial || !cq_stack_reg(regs, RA, &ra)) {
		snprintf(stop->why, sizeof(stop->why), "no CFI, and the prologue saves no return address");
		return false;
	}
	for (unsigned r = 2; r < 32; r++) {
		uint64_t v;
		if (!saved[r] || r == RA)
			continue;
		if (ctx->read(ctx->read_ctx, cfa + (uint64_t)slot[r], &v))
			cq_stack_set(&out->regs, (int)r, v);
		else
			out->regs.ok[r] = false;
	}
	cq_stack_set(&out->regs, SP, cfa);
	out->ra_pc = ra;
	out->cfa = cfa;
	out->how = CQ_FOUND_PROLOGUE;
	return true;
}
