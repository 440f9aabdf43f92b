/* SPDX-License-Identifier: MIT */
/* MIPS, hppa and alpha CFI steps (internal.h). libdw 0.188 parses a MIPS module's .eh_frame but
 * runs none of it: it has no MIPS backend to give the ABI's initial rules, so
 * dwarf_cfi_addrframe fails ("unknown error") and libdwfl unwinds no MIPS core. Its alpha
 * backend has no unwinder either ("Unwinding not supported for this architecture"), so
 * alpha's CFI goes the same way, with alpha's callee-saved registers. The FDEs and CIEs themselves
 * name no ABI, so coreq hands libdw a private copy of the module's ELF image whose
 * e_machine reads EM_RISCV (a backend with initial rules) and applies only what MIPS's
 * ABI says survives a call: s0..s7, gp, sp and fp (r30) keep their values unless the CFI
 * saved them, the caller's pc is the return-address column (the CIE's, r31), the caller's
 * sp the CFA. Every other register is unknown in the caller.
 * hppa (no PA-RISC backend either) takes the same way: its .eh_frame is plain DWARF
 * (CFA = r30 minus the frame, as its stacks grow upwards; rp, r2, the return-address
 * column), its ABI preserves r3..r18 and dp (r27), and a return address's low two bits
 * are the privilege level, not part of the address. */
#include <elf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>

#include "internal.h"

#ifndef EM_RISCV
#define EM_RISCV 243
#endif
#ifndef EM_ALPHA
#define EM_ALPHA 0x9026
#endif

struct cq_stack_mips_cfi {
	struct {
		Dwfl_Module *mod;
		void *copy;     /* the ELF image with e_machine EM_RISCV */
		Elf *elf;
		Dwarf_CFI *cfi; /* .eh_frame; NULL: none usable */
		Dwarf *dwarf;   /* for .debug_frame (gcc's MIPS default without -fexceptions) */
		Dwarf_CFI *debug_cfi;
		Dwarf_Addr bias;
	} m[64];
	unsigned n;
};

struct cq_stack_mips_cfi *cq_stack_mips_cfi_create(void)
{
	return calloc(1, sizeof(struct cq_stack_mips_cfi));
}

void cq_stack_mips_cfi_destroy(struct cq_stack_mips_cfi *c)
{
	if (!c)
		return;
	for (unsigned i = 0; i < c->n; i++) {
		if (c->m[i].cfi)
			dwarf_cfi_end(c->m[i].cfi);
		if (c->m[i].dwarf)
			dwarf_end(c->m[i].dwarf); /* ends its debug_cfi too */
		if (c->m[i].elf)
			elf_end(c->m[i].elf);
		free(c->m[i].copy);
	}
	free(c);
}

/* The module's CFI through the EM_RISCV copy (made once per module): .eh_frame into
 * *@p eh, .debug_frame into *@p debug (either NULL). */
static void module_cfi(struct cq_stack_mips_cfi *c, Dwfl_Module *mod, Dwarf_Addr *bias, Dwarf_CFI **eh,
		       Dwarf_CFI **debug)
{
	for (unsigned i = 0; i < c->n; i++)
		if (c->m[i].mod == mod) {
			*bias = c->m[i].bias;
			*eh = c->m[i].cfi;
			*debug = c->m[i].debug_cfi;
			return;
		}
	*eh = *debug = NULL;
	if (c->n == sizeof(c->m) / sizeof(c->m[0]))
		return; /* more modules than a process of ours has: these go without */
	typeof(c->m[0]) *e = &c->m[c->n++];
	memset(e, 0, sizeof(*e));
	e->mod = mod;
	Elf *elf = dwfl_module_getelf(mod, &e->bias);
	*bias = e->bias;
	size_t size = 0;
	const char *raw = elf ? elf_rawfile(elf, &size) : NULL;
	if (!raw || size < EI_NIDENT + 4 || (raw[EI_DATA] != ELFDATA2LSB && raw[EI_DATA] != ELFDATA2MSB) ||
	    !(e->copy = malloc(size)))
		return;
	memcpy(e->copy, raw, size);
	/* e_machine: 2 bytes at offset 18 in both classes, in the image's byte order
	 * (little-endian: mipsel, mips64el, alpha; big-endian: hppa) */
	bool le = raw[EI_DATA] == ELFDATA2LSB;
	((unsigned char *)e->copy)[le ? 18 : 19] = EM_RISCV & 0xff;
	((unsigned char *)e->copy)[le ? 19 : 18] = EM_RISCV >> 8;
	if ((e->elf = elf_memory(e->copy, size))) {
		e->cfi = dwarf_getcfi_elf(e->elf);
		if ((e->dwarf = dwarf_begin_elf(e->elf, DWARF_C_READ, NULL)))
			e->debug_cfi = dwarf_getcfi(e->dwarf);
	}
	*eh = e->cfi;
	*debug = e->debug_cfi;
}

/* Evaluates the register rule libdw gives (its forms for offset(N), val_offset(N) and
 * register rules); false for an expression rule. *@p is_value: the result is the value,
 * not its location. */
static bool eval_rule(const Dwarf_Op *ops, size_t nops, uint64_t cfa, const struct cq_stack_regs *regs,
		      uint64_t *ret, bool *is_value)
{
	uint64_t v = 0;
	*is_value = false;
	for (size_t i = 0; i < nops; i++) {
		switch (ops[i].atom) {
		case DW_OP_call_frame_cfa: v = cfa; break;
		case DW_OP_plus_uconst: v += ops[i].number; break;
		case DW_OP_stack_value: *is_value = true; break;
		case DW_OP_bregx:
			if (i || !cq_stack_reg(regs, (int)ops[i].number, &v))
				return false;
			v += ops[i].number2;
			break;
		default: return false;
		}
	}
	*ret = v;
	return true;
}

bool cq_stack_mips_cfi_step(const struct cq_stack_ctx *ctx, const struct cq_stack_regs *regs, uint64_t at,
			    struct cq_stack_step *out, struct cq_stack_stop *stop)
{
	const struct cq_target *t = ctx->core->target;
	uint64_t mask = cq_target_ptr_size(t) == 8 ? UINT64_MAX : UINT32_MAX;
	Dwfl_Module *mod = dwfl_addrmodule(ctx->dwfl, at);
	Dwarf_Addr bias = 0;
	Dwarf_CFI *eh = NULL, *debug = NULL;
	if (mod && ctx->mips)
		module_cfi(ctx->mips, mod, &bias, &eh, &debug);
	Dwarf_Frame *fr = NULL;
	if ((!eh || dwarf_cfi_addrframe(eh, at - bias, &fr) != 0) &&
	    (!debug || dwarf_cfi_addrframe(debug, at - bias, &fr) != 0))
		return false; /* no stop reason: the caller tries what else there is */
	Dwarf_Op *ops, mem[3];
	size_t nops;
	uint64_t base, cfa;
	bool ok = dwarf_frame_cfa(fr, &ops, &nops) == 0 && nops == 1;
	int reg = !ok ? -1 : ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31 ? ops[0].atom - DW_OP_breg0
		  : ops[0].atom == DW_OP_bregx ? (int)ops[0].number : -1;
	if (reg < 0 || !cq_stack_reg(regs, reg, &base)) {
		snprintf(stop->why, sizeof(stop->why), "its CFI's CFA is not a known register plus an offset");
		free(fr);
		return false;
	}
	cfa = (base + (uint64_t)(ops[0].atom == DW_OP_bregx ? (int64_t)ops[0].number2 : (int64_t)ops[0].number)) & mask;
	int ra_col = dwarf_frame_info(fr, NULL, NULL, NULL);
	memset(&out->regs, 0, sizeof(out->regs));
	/* the registers a call preserves (o32 and n64: s0..s7 16-23, gp 28, fp 30; hppa:
	 * r3..r18, dp 27; alpha: s0..s5 9-14, fp 15, while gp is reloaded by the caller from
	 * its return address), then the return-address column */
	static const int kept_mips[] = {16, 17, 18, 19, 20, 21, 22, 23, 28, 30};
	static const int kept_hppa[] = {3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 27};
	static const int kept_alpha[] = {9, 10, 11, 12, 13, 14, 15};
	bool hppa = t->e_machine == EM_PARISC, alpha = t->e_machine == EM_ALPHA;
	const int *kept = hppa ? kept_hppa : alpha ? kept_alpha : kept_mips;
	size_t nkept = hppa ? sizeof(kept_hppa) / sizeof(kept_hppa[0])
		     : alpha ? sizeof(kept_alpha) / sizeof(kept_alpha[0]) : sizeof(kept_mips) / sizeof(kept_mips[0]);
	uint64_t ra_mask = hppa ? mask & ~(uint64_t)3 : mask;
	for (size_t k = 0; k <= nkept; k++) {
		int r = k < nkept ? kept[k] : ra_col;
		uint64_t v;
		bool is_value;
		if (dwarf_frame_register(fr, r, mem, &ops, &nops) != 0) {
			snprintf(stop->why, sizeof(stop->why), "its CFI has no rule libdw reads for r%d: %s", r,
				 dwarf_errmsg(-1));
			free(fr);
			return false;
		}
		if (nops == 0) {
			/* same value, or no rule: EM_RISCV's initial rules leave registers RISC-V
			 * does not preserve undefined, so an explicit `.cfi_undefined` is not told
			 * apart; the callee-saved registers and a leaf's ra keep their values (an
			 * outermost frame ends when its caller's ra is unknown) */
			if (cq_stack_reg(regs, r, &v))
				cq_stack_set(&out->regs, r == ra_col ? -1 : r, v);
			if (r == ra_col && cq_stack_reg(regs, r, &out->ra_pc))
				out->ra_pc &= ra_mask;
			else if (r == ra_col) {
				/* ra is unknown past the first frame: this frame made a call, so its
				 * return address would have been saved; a frame whose CFI keeps none
				 * is the outermost (glibc's clone child, marked `.cfi_undefined $ra`) */
				stop->end = true;
				snprintf(stop->why, sizeof(stop->why), "its CFI saves no return address: the outermost frame");
				free(fr);
				return false;
			}
			continue;
		}
		if (!eval_rule(ops, nops, cfa, regs, &v, &is_value)) {
			snprintf(stop->why, sizeof(stop->why), "its CFI restores r%d by an expression coreq does not evaluate", r);
			free(fr);
			return false;
		}
		v &= mask;
		if (!is_value && !ctx->read(ctx->read_ctx, v, &v)) {
			snprintf(stop->why, sizeof(stop->why), "the saved r%d at 0x%" PRIx64 " is not in the core", r, v);
			stop->no_code = false;
			free(fr);
			return false;
		}
		if (r == ra_col)
			out->ra_pc = v & ra_mask;
		else
			cq_stack_set(&out->regs, r, v & mask);
	}
	free(fr);
	cq_stack_set(&out->regs, t->dwarf_sp, cfa);
	out->cfa = cfa;
	out->how = CQ_FOUND_CFI;
	return true;
}
