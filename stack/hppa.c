/* SPDX-License-Identifier: MIT */
/* hppa steps through a module's .PARISC.unwind table (internal.h), for the functions that
 * have no CFI: Debian's libc builds abort, start_thread and the lock waits without
 * .eh_frame entries, but the linker gives every function an unwind descriptor.
 *
 * A descriptor is four big-endian words: the function's first and last instruction
 * (segment-relative: offsets from the first PT_LOAD's address), then two words of flags.
 * coreq reads four of them (the bit positions are binutils' struct unwind_descriptor):
 * Cannot_unwind (word 2, bit 31), Save_RP (word 2, bit 3: the prologue stored rp at -20
 * of the caller's stack pointer), Large_frame (word 3, bit 29: r3 holds the caller's stack
 * pointer) and Total_frame_size (word 3, bits 0..26, in 8-byte units). Stacks grow upwards:
 * the caller's stack pointer is the frame's minus the frame size. */
#include <elf.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <gelf.h>

#include "internal.h"

/* More descriptors than any real table has (glibc's libc: 3600) are not searched. */
#define MAX_ENTRIES (1u << 20)

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The descriptor covering @p addr (module address, bias removed) in @p elf: its four
 * words into @p w; false when none does. */
static bool find_entry(Elf *elf, uint64_t addr, uint32_t w[4])
{
	size_t shstrndx, nph;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0 || elf_getphdrnum(elf, &nph) != 0)
		return false;
	uint64_t seg = 0;
	bool have_seg = false;
	for (size_t i = 0; i < nph && !have_seg; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
			seg = ph.p_vaddr;
			have_seg = true;
		}
	}
	Elf_Scn *scn = NULL;
	while (have_seg && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(name, ".PARISC.unwind") != 0 || sh.sh_type == SHT_NOBITS)
			continue;
		Elf_Data *d = elf_rawdata(scn, NULL);
		if (!d || !d->d_buf)
			return false;
		size_t n = d->d_size / 16;
		if (n > MAX_ENTRIES)
			n = MAX_ENTRIES;
		const unsigned char *b = d->d_buf;
		/* sorted by start address (the linker sorts it); binary search for the last
		 * entry starting at or below addr */
		size_t lo = 0, hi = n;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (seg + be32(b + 16 * mid) <= addr)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == 0)
			return false;
		const unsigned char *e = b + 16 * (lo - 1);
		for (int k = 0; k < 4; k++)
			w[k] = be32(e + 4 * k);
		/* the end word is the function's last instruction */
		return w[0] <= w[1] && addr <= seg + w[1] + 3;
	}
	return false;
}

bool cq_stack_hppa_unwind_step(const struct cq_stack_ctx *ctx, const struct cq_stack_regs *regs, uint64_t pc,
			       bool initial, struct cq_stack_step *out, struct cq_stack_stop *stop)
{
	const struct cq_target *t = ctx->core->target;
	Dwfl_Module *mod = dwfl_addrmodule(ctx->dwfl, pc);
	Dwarf_Addr bias = 0;
	Elf *elf = mod ? dwfl_module_getelf(mod, &bias) : NULL;
	uint32_t w[4];
	if (!elf || !find_entry(elf, pc - bias, w))
		return false; /* no stop reason: the caller says what is missing */
	uint64_t sp, rp = 0, r3;
	if (!cq_stack_reg(regs, t->dwarf_sp, &sp)) {
		snprintf(stop->why, sizeof(stop->why), "its unwind descriptor needs the stack pointer, which is unknown");
		return false;
	}
	if (w[2] >> 31) {
		stop->end = true;
		snprintf(stop->why, sizeof(stop->why), "its unwind descriptor says Cannot_unwind");
		return false;
	}
	uint64_t size = (uint64_t)(w[3] & 0x7ffffff) * 8, caller_sp;
	if ((w[3] >> 29) & 1) {
		/* Large_frame: the prologue copied the entry stack pointer into r3 */
		if (!cq_stack_reg(regs, 3, &r3)) {
			snprintf(stop->why, sizeof(stop->why), "its unwind descriptor keeps the frame in r3, which is unknown");
			return false;
		}
		caller_sp = r3;
	} else {
		caller_sp = (sp - size) & UINT32_MAX;
	}
	if (caller_sp > sp || sp - caller_sp > (UINT64_C(8) << 20)) {
		snprintf(stop->why, sizeof(stop->why),
			 "its unwind descriptor gives a caller's stack pointer 0x%" PRIx64 " not below 0x%" PRIx64, caller_sp,
			 sp);
		return false;
	}
	memset(&out->regs, 0, sizeof(out->regs));
	if ((w[2] >> 3) & 1) {
		if (!ctx->read(ctx->read_ctx, (caller_sp - 20) & UINT32_MAX, &rp)) {
			snprintf(stop->why, sizeof(stop->why), "the saved rp at 0x%" PRIx64 " is not in the core",
				 (caller_sp - 20) & UINT32_MAX);
			stop->no_code = false;
			return false;
		}
	} else if (!initial || !cq_stack_reg(regs, t->dwarf_ra, &rp)) {
		/* past the first frame rp is unknown: a function that made a call and kept
		 * no rp has no caller (glibc's thread start) */
		stop->end = true;
		snprintf(stop->why, sizeof(stop->why), "its unwind descriptor saves no rp: the outermost frame");
		return false;
	}
	if ((w[3] >> 29) & 1 && ctx->read(ctx->read_ctx, r3, &r3))
		cq_stack_set(&out->regs, 3, r3); /* the caller's r3, stored at its stack pointer */
	uint64_t dp;
	if (cq_stack_reg(regs, 27, &dp))
		cq_stack_set(&out->regs, 27, dp); /* the global pointer is the same in every frame */
	cq_stack_set(&out->regs, t->dwarf_sp, caller_sp);
	out->ra_pc = rp & UINT32_MAX & ~(uint64_t)3;
	out->cfa = caller_sp;
	out->how = CQ_FOUND_PARISC_UNWIND;
	return true;
}
