/* SPDX-License-Identifier: MIT */
/* One unwind step through ARM EHABI tables (internal.h). Debian's armhf libc is Thumb-2
 * with no .eh_frame FDEs: .ARM.exidx is its only unwind information, and elfutils has no
 * EHABI unwinder. The table layout and the opcodes are those of ARM's "Exception Handling
 * ABI for the ARM Architecture" (IHI 0038), sections 6 and 10. */
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

#ifndef SHT_ARM_EXIDX
#define SHT_ARM_EXIDX 0x70000001
#endif

#define EXIDX_CANTUNWIND 1u
/* opcodes of one entry: 3 in the short form, 2 + 4 x 255 at most in the long form */
#define MAX_OPCODES (3 + 4 * 255)

/* A section's bytes by link-time address, in the file's byte order. */
struct span {
	const uint8_t *data;
	uint64_t addr, size;
	bool little;
};

static bool span_word(const struct span *s, uint64_t addr, uint32_t *w)
{
	if (addr < s->addr || addr - s->addr > s->size || s->size - (addr - s->addr) < 4)
		return false;
	const uint8_t *p = s->data + (addr - s->addr);
	*w = s->little ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24
		       : (uint32_t)p[3] | (uint32_t)p[2] << 8 | (uint32_t)p[1] << 16 | (uint32_t)p[0] << 24;
	return true;
}

/* A prel31 field: a signed 31-bit offset from the field's own address. */
static uint64_t prel31(uint64_t place, uint32_t w)
{
	int32_t off = (int32_t)(w << 1) >> 1;
	return (place + (uint64_t)(int64_t)off) & 0xffffffffu;
}

/* The allocated section of type @p type (or, with type 0, the one holding @p addr). */
static bool find_section(Elf *elf, uint32_t type, uint64_t addr, struct span *out)
{
	GElf_Ehdr eh;
	if (!gelf_getehdr(elf, &eh))
		return false;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) || sh.sh_type == SHT_NOBITS)
			continue;
		if (type ? sh.sh_type != type : addr < sh.sh_addr || addr - sh.sh_addr >= sh.sh_size)
			continue;
		Elf_Data *d = elf_rawdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < sh.sh_size)
			return false;
		*out = (struct span){d->d_buf, sh.sh_addr, sh.sh_size, eh.e_ident[EI_DATA] == ELFDATA2LSB};
		return true;
	}
	return false;
}

/* The unwind opcodes of the function holding @p addr (link-time), or a stop. */
static bool opcodes_for(Elf *elf, uint64_t addr, uint8_t *ops, size_t *nops, struct cq_stack_stop *stop)
{
	struct span ex, tab = {0};
	if (!find_section(elf, SHT_ARM_EXIDX, 0, &ex) || ex.size < 8) {
		snprintf(stop->why, sizeof(stop->why), "no CFI and no .ARM.exidx");
		return false;
	}
	/* the last entry whose function starts at or before addr (entries are sorted) */
	uint64_t lo = 0, hi = ex.size / 8, found = UINT64_MAX;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2, place = ex.addr + mid * 8;
		uint32_t w;
		if (!span_word(&ex, place, &w))
			break;
		if (prel31(place, w) <= addr) {
			found = mid;
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	uint32_t w0, w1;
	uint64_t place = ex.addr + found * 8;
	if (found == UINT64_MAX || !span_word(&ex, place, &w0) || !span_word(&ex, place + 4, &w1)) {
		snprintf(stop->why, sizeof(stop->why), "no .ARM.exidx entry covers it");
		return false;
	}
	if (w1 == EXIDX_CANTUNWIND) {
		stop->end = true;
		snprintf(stop->why, sizeof(stop->why), "EXIDX_CANTUNWIND: the ABI's outermost frame");
		return false;
	}
	*nops = 0;
	uint32_t first;
	uint64_t more_at = 0;
	unsigned more = 0;
	if (w1 & 0x80000000u) {
		first = w1; /* inline compact entry: personality routine 0 */
	} else {
		uint64_t at = prel31(place + 4, w1);
		uint32_t h;
		if (!find_section(elf, 0, at, &tab) || !span_word(&tab, at, &h)) {
			snprintf(stop->why, sizeof(stop->why), ".ARM.exidx points at 0x%" PRIx64 ", outside the image", at);
			return false;
		}
		if (h & 0x80000000u) {
			first = h; /* compact model in .ARM.extab */
			more_at = at + 4;
		} else if (!span_word(&tab, at + 4, &first)) { /* generic model (GCC's personality):
								* its data starts like the long form */
			snprintf(stop->why, sizeof(stop->why), "truncated .ARM.extab entry at 0x%" PRIx64, at);
			return false;
		} else {
			more_at = at + 8;
			more = first >> 24;
			goto long_form;
		}
	}
	switch ((first >> 24) & 0xf) {
	case 0: /* su16: three opcodes */
		if ((first & 0x70000000u) != 0) /* a compact entry has 1000 in the top bits */
			break;
		ops[(*nops)++] = first >> 16;
		ops[(*nops)++] = first >> 8;
		ops[(*nops)++] = first;
		return true;
	case 1:
	case 2: /* lu16 / lu32: a count of more words, two opcodes here */
		more = (first >> 16) & 0xff;
		ops[(*nops)++] = first >> 8;
		ops[(*nops)++] = first;
		goto words;
	}
	snprintf(stop->why, sizeof(stop->why), "unknown EHABI personality index %u", (first >> 24) & 0xf);
	return false;
long_form:
	ops[(*nops)++] = first >> 16;
	ops[(*nops)++] = first >> 8;
	ops[(*nops)++] = first;
words:
	for (unsigned i = 0; i < more; i++) {
		uint32_t w;
		if (!span_word(&tab, more_at + 4 * i, &w)) {
			snprintf(stop->why, sizeof(stop->why), "truncated .ARM.extab entry at 0x%" PRIx64, more_at);
			return false;
		}
		for (int b = 24; b >= 0; b -= 8)
			ops[(*nops)++] = w >> b;
	}
	return true;
}

/* Runs the opcodes on r0-r15 (DWARF 0-15) and the virtual stack pointer. */
static bool run(const struct cq_stack_ctx *ctx, const uint8_t *ops, size_t nops, struct cq_stack_regs *r,
		bool *pc_set, struct cq_stack_stop *stop)
{
	uint64_t vsp;
	if (!cq_stack_reg(r, 13, &vsp)) {
		snprintf(stop->why, sizeof(stop->why), "no stack pointer");
		return false;
	}
	bool sp_popped = false;
	for (size_t i = 0; i < nops;) {
		uint8_t op = ops[i++];
		uint32_t mask = 0; /* registers to pop, bit n = rn */
		if (op < 0x40) {
			vsp += ((uint64_t)(op & 0x3f) << 2) + 4;
		} else if (op < 0x80) {
			vsp -= ((uint64_t)(op & 0x3f) << 2) + 4;
		} else if (op < 0x90) {
			if (i >= nops)
				goto truncated;
			mask = ((uint32_t)(op & 0xf) << 8 | ops[i++]) << 4;
			if (!mask) {
				stop->end = true;
				snprintf(stop->why, sizeof(stop->why), "EHABI 'refuse to unwind'");
				return false;
			}
		} else if (op < 0xa0) {
			unsigned n = op & 0xf;
			if (n == 13 || n == 15 || !cq_stack_reg(r, (int)n, &vsp))
				goto bad;
		} else if (op < 0xb0) {
			mask = ((1u << ((op & 7) + 1)) - 1) << 4; /* r4-r[4+nnn] */
			if (op & 8)
				mask |= 1u << 14;
		} else if (op == 0xb0) {
			break; /* finish */
		} else if (op == 0xb1) {
			if (i >= nops || !ops[i] || ops[i] & 0xf0)
				goto bad;
			mask = ops[i++];
		} else if (op == 0xb2) {
			uint64_t v = 0;
			unsigned shift = 0;
			do {
				if (i >= nops || shift > 28)
					goto bad;
				v |= (uint64_t)(ops[i] & 0x7f) << shift;
				shift += 7;
			} while (ops[i++] & 0x80);
			vsp += 0x204 + (v << 2);
		} else if (op == 0xb3 || op == 0xc8 || op == 0xc9 || op == 0xc6) {
			if (i >= nops)
				goto truncated;
			vsp += 8 * ((uint64_t)(ops[i++] & 0xf) + 1) + (op == 0xb3 ? 4 : 0);
		} else if (op >= 0xb8 && op < 0xc0) {
			vsp += 8 * ((uint64_t)(op & 7) + 1) + 4; /* FSTMFDX d8-d[8+nnn] */
		} else if (op >= 0xc0 && op < 0xc6) {
			vsp += 8 * ((uint64_t)(op & 7) + 1); /* iWMMXt wR10-wR[10+nnn] */
		} else if (op == 0xc7) {
			if (i >= nops || !ops[i] || ops[i] & 0xf0)
				goto bad;
			vsp += 4 * (uint64_t)__builtin_popcount(ops[i++]);
		} else if (op >= 0xd0 && op < 0xd8) {
			vsp += 8 * ((uint64_t)(op & 7) + 1); /* VPUSH d8-d[8+nnn] */
		} else {
			goto bad;
		}
		for (int n = 0; n < 16; n++) {
			if (!(mask & (1u << n)))
				continue;
			uint64_t v;
			if (!ctx->read(ctx->read_ctx, vsp & 0xffffffffu, &v)) {
				snprintf(stop->why, sizeof(stop->why), "stack memory at 0x%" PRIx64 " is not in the core",
					 vsp & 0xffffffffu);
				return false;
			}
			cq_stack_set(r, n, v);
			vsp += 4;
			*pc_set |= n == 15;
			sp_popped |= n == 13;
		}
	}
	if (!sp_popped)
		cq_stack_set(r, 13, vsp & 0xffffffffu);
	return true;
truncated:
bad:
	snprintf(stop->why, sizeof(stop->why), "malformed EHABI unwind opcodes");
	return false;
}

bool cq_stack_exidx_step(const struct cq_stack_ctx *ctx, const struct cq_stack_regs *regs, uint64_t pc,
			 struct cq_stack_step *out, struct cq_stack_stop *stop)
{
	Dwfl_Module *mod = dwfl_addrmodule(ctx->dwfl, pc);
	Dwarf_Addr bias;
	Elf *elf = mod ? dwfl_module_getelf(mod, &bias) : NULL;
	if (!elf) {
		snprintf(stop->why, sizeof(stop->why), "no module holds it");
		return false;
	}
	uint8_t ops[MAX_OPCODES];
	size_t nops;
	if (!opcodes_for(elf, (pc - bias) & 0xffffffffu, ops, &nops, stop))
		return false;
	out->regs = *regs;
	bool pc_set = false;
	if (!run(ctx, ops, nops, &out->regs, &pc_set, stop))
		return false;
	uint64_t ra;
	if (!cq_stack_reg(&out->regs, pc_set ? 15 : 14, &ra)) {
		snprintf(stop->why, sizeof(stop->why), "the return address is unknown");
		return false;
	}
	cq_stack_set(&out->regs, 15, ra);
	out->ra_pc = ra & ~(uint64_t)1; /* the Thumb bit is the mode, not the address */
	cq_stack_reg(&out->regs, 13, &out->cfa);
	out->how = CQ_FOUND_EXIDX;
	return true;
}
