/* SPDX-License-Identifier: MIT */
/* Register numbers in a module's CFI, checked before libdw runs it (internal.h).
 *
 * libdw 0.188 grows a frame's register table to the largest register number a CFA
 * instruction names and zeroes it (cfi.c, enough_registers), up to 134 million registers:
 * one crafted DW_CFA_undefined in an FDE costs up to 2 GB and a second for every lookup of
 * an address it covers, and a walk looks up each frame up to three times (fuzz_stack found
 * it: 256 frames in one such function took minutes). No target has more than a few
 * hundred DWARF registers (powerpc's go to 1200 with the vector registers), so CFI that
 * names a register beyond CQ_STACK_MAX_CFI_REG is crafted; the walk stops before libdw
 * runs it. Likewise for DW_CFA_remember_state: libdw pushes a copy of the frame state for
 * each, and real CFI nests two or three; a crafted run of thousands costs gigabytes.
 *
 * What is scanned is every CIE and FDE libdw could use: the ones a linear walk of
 * .eh_frame and .debug_frame reaches (libdw's search without .eh_frame_hdr) and the ones
 * each .eh_frame_hdr table entry points at (its binary search), in the module's file and
 * in its separate debug file. */
#include <dwarf.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* A pointer of DW_EH_PE encoding @p enc at *@p p: skipped; false when it runs past @p end
 * or the encoding is unknown. @p value gets it when its size is fixed (4 or 8 bytes, the
 * .eh_frame_hdr fields). */
static bool skip_encoded(const uint8_t **p, const uint8_t *end, uint8_t enc, unsigned addr_size, bool le,
			 uint64_t *value)
{
	size_t n;
	if (enc == DW_EH_PE_omit)
		return true;
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr: n = addr_size; break;
	case DW_EH_PE_udata2: case DW_EH_PE_sdata2: n = 2; break;
	case DW_EH_PE_udata4: case DW_EH_PE_sdata4: n = 4; break;
	case DW_EH_PE_udata8: case DW_EH_PE_sdata8: n = 8; break;
	case DW_EH_PE_uleb128: case DW_EH_PE_sleb128:
		while (*p < end && (*(*p)++ & 0x80))
			;
		return *p <= end;
	default:
		return false;
	}
	if ((size_t)(end - *p) < n)
		return false;
	if (value) {
		uint64_t v = 0;
		for (size_t i = 0; i < n; i++)
			v |= (uint64_t)(*p)[le ? i : n - 1 - i] << (8 * i);
		if (n == 4 && (enc & 0x0f) == DW_EH_PE_sdata4)
			v = (uint64_t)(int64_t)(int32_t)v;
		*value = v;
	}
	*p += n;
	return true;
}

static bool uleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t r = 0;
	for (unsigned shift = 0; *p < end; shift += 7) {
		uint8_t b = *(*p)++;
		if (shift < 64)
			r |= (uint64_t)(b & 0x7f) << shift;
		else if (b & 0x7f)
			r = UINT64_MAX - 1; /* too large for any register (UINT64_MAX: CQ_STACK_CFI_DEEP) */
		if (!(b & 0x80)) {
			*v = r;
			return true;
		}
	}
	return false;
}

/* Whether libdwfl 0.188's expr_eval (frame_unwind.c) runs the DWARF expression [p, p+n)
 * to its end: every opcode one it implements, no branch backwards and at most
 * CQ_STACK_MAX_CFI_EXPR bytes. Its other exits (an opcode it does not know,
 * DW_OP_GNU_encoded_addr, more than 4096 steps, which a backward branch reaches) return
 * without freeing its evaluation stack: a leak per lookup (fuzz_stack found it). Real CFI
 * expressions (signal trampolines, PLT entries) use a few breg/deref/plus/lit operations. */
static bool expr_ok(const uint8_t *p, uint64_t n, unsigned addr_size, bool le)
{
	if (n > CQ_STACK_MAX_CFI_EXPR)
		return false;
	const uint8_t *end = p + n;
	uint64_t v;
	while (p < end) {
		uint8_t op = *p++;
		size_t skip = 0;
		if ((op >= DW_OP_lit0 && op <= DW_OP_lit31) || (op >= DW_OP_reg0 && op <= DW_OP_reg31))
			continue;
		if (op >= DW_OP_breg0 && op <= DW_OP_breg31) {
			if (!uleb(&p, end, &v)) /* an sleb: same length */
				return false;
			continue;
		}
		switch (op) {
		case DW_OP_dup: case DW_OP_drop: case DW_OP_over: case DW_OP_swap: case DW_OP_rot:
		case DW_OP_deref: case DW_OP_abs: case DW_OP_neg: case DW_OP_not: case DW_OP_and:
		case DW_OP_div: case DW_OP_minus: case DW_OP_mod: case DW_OP_mul: case DW_OP_or:
		case DW_OP_plus: case DW_OP_shl: case DW_OP_shr: case DW_OP_shra: case DW_OP_xor:
		case DW_OP_le: case DW_OP_ge: case DW_OP_eq: case DW_OP_lt: case DW_OP_gt: case DW_OP_ne:
		case DW_OP_nop: case DW_OP_call_frame_cfa: case DW_OP_stack_value:
			break;
		case DW_OP_addr: skip = addr_size; break;
		case DW_OP_const1u: case DW_OP_const1s: case DW_OP_pick: case DW_OP_deref_size: skip = 1; break;
		case DW_OP_const2u: case DW_OP_const2s: skip = 2; break;
		case DW_OP_const4u: case DW_OP_const4s: skip = 4; break;
		case DW_OP_const8u: case DW_OP_const8s: skip = 8; break;
		case DW_OP_constu: case DW_OP_consts: case DW_OP_regx: case DW_OP_plus_uconst:
			if (!uleb(&p, end, &v))
				return false;
			break;
		case DW_OP_bregx:
			if (!uleb(&p, end, &v) || !uleb(&p, end, &v))
				return false;
			break;
		case DW_OP_bra: case DW_OP_skip:
			if (end - p < 2 || (p[le ? 1 : 0] & 0x80))
				return false;
			skip = 2;
			break;
		default:
			return false;
		}
		if ((size_t)(end - p) < skip)
			return false;
		p += skip;
	}
	return true;
}

/* The largest register number the instructions [p, end) name, or 0 (up to the first
 * instruction that does not decode: libdw stops there too); CQ_STACK_CFI_DEEP when they
 * remember more than CQ_STACK_MAX_CFI_STATES states at once (libdw copies the whole frame
 * state for each); CQ_STACK_CFI_BAD_EXPR when an expression is one libdwfl leaks on
 * (expr_ok). */
static uint64_t max_register(const uint8_t *p, const uint8_t *end, unsigned loc_size, unsigned addr_size, bool le)
{
	uint64_t max = 0, reg, reg2, n;
	unsigned depth = 0;
	while (p < end) {
		uint8_t op = *p++;
		if (op == DW_CFA_remember_state && ++depth > CQ_STACK_MAX_CFI_STATES)
			return CQ_STACK_CFI_DEEP;
		if (op == DW_CFA_restore_state && depth)
			depth--;
		reg = reg2 = 0;
		if ((op & 0xc0) == DW_CFA_advance_loc || (op & 0xc0) == DW_CFA_restore)
			continue; /* registers below 64 */
		if ((op & 0xc0) == DW_CFA_offset) {
			if (!uleb(&p, end, &n))
				break;
			continue;
		}
		switch (op) {
		case DW_CFA_nop: case DW_CFA_remember_state: case DW_CFA_restore_state:
		case DW_CFA_GNU_window_save:
			break;
		case DW_CFA_set_loc: if ((size_t)(end - p) < loc_size) return max; p += loc_size; break;
		case DW_CFA_advance_loc1: p += 1; break;
		case DW_CFA_advance_loc2: p += 2; break;
		case DW_CFA_advance_loc4: p += 4; break;
		case DW_CFA_offset_extended: case DW_CFA_def_cfa: case DW_CFA_val_offset:
		case DW_CFA_GNU_negative_offset_extended: case DW_CFA_offset_extended_sf:
		case DW_CFA_def_cfa_sf: case DW_CFA_val_offset_sf:
			if (!uleb(&p, end, &reg) || !uleb(&p, end, &n))
				return max > reg ? max : reg;
			break;
		case DW_CFA_restore_extended: case DW_CFA_undefined: case DW_CFA_same_value:
		case DW_CFA_def_cfa_register:
			if (!uleb(&p, end, &reg))
				return max;
			break;
		case DW_CFA_register:
			if (!uleb(&p, end, &reg) || !uleb(&p, end, &reg2))
				return max > reg ? max : reg;
			break;
		case DW_CFA_def_cfa_offset: case DW_CFA_def_cfa_offset_sf: case DW_CFA_GNU_args_size:
			if (!uleb(&p, end, &n))
				return max;
			break;
		case DW_CFA_def_cfa_expression:
			if (!uleb(&p, end, &n) || n > (uint64_t)(end - p))
				return max;
			if (!expr_ok(p, n, addr_size, le))
				return CQ_STACK_CFI_BAD_EXPR;
			p += n;
			break;
		case DW_CFA_expression: case DW_CFA_val_expression:
			if (!uleb(&p, end, &reg) || !uleb(&p, end, &n) || n > (uint64_t)(end - p))
				return max > reg ? max : reg;
			if (!expr_ok(p, n, addr_size, le))
				return CQ_STACK_CFI_BAD_EXPR;
			p += n;
			break;
		default:
			return max;
		}
		if (reg > max)
			max = reg;
		if (reg2 > max)
			max = reg2;
	}
	return max;
}

struct section {
	Elf_Data *data;
	uint64_t addr;
	const unsigned char *ident;
	bool eh, le;
	unsigned addr_size;
	bool ppc; /* EM_PPC / EM_PPC64: libdwfl maps only some return-address columns */
	/* the linear walk's entries (bit per 4-byte offset), so that the .eh_frame_hdr table
	 * does not check them again */
	uint8_t *seen;
	/* the last CIE read (FDEs share one or two) and what its FDEs need of it: its own
	 * answer, how their location is encoded and how their augmentation is skipped */
	Dwarf_Off cie_off;
	bool have_cie, cie_z;
	uint64_t cie_max;
	uint8_t cie_enc;
	size_t cie_aug_size;
};

/* CQ_STACK_CFI_BAD_RA for a CIE whose return-address column libdwfl's backend refuses
 * (ppc_dwarf_to_regno: 0-112 and 1200-1231), else 0. */
static uint64_t cie_ra(const struct section *s, const Dwarf_CFI_Entry *cie)
{
	unsigned ra = cie->cie.return_address_register;
	return s->ppc && !(ra <= 112 || (ra >= 1200 && ra <= 1231)) ? CQ_STACK_CFI_BAD_RA : 0;
}

/* The CIE's own answer, and into s->cie_* what its FDEs need. */
static uint64_t cie_max(struct section *s, const Dwarf_CFI_Entry *c)
{
	uint64_t max = cie_ra(s, c) ?: max_register(c->cie.initial_instructions, c->cie.initial_instructions_end,
						    s->addr_size, s->addr_size, s->le);
	/* the FDE's initial location and range are in the CIE's 'R' encoding (.eh_frame) */
	uint8_t enc = DW_EH_PE_absptr;
	const char *aug = c->cie.augmentation;
	const uint8_t *ad = c->cie.augmentation_data, *ad_end = ad ? ad + c->cie.augmentation_data_size : NULL;
	for (size_t i = 1; s->eh && aug && aug[0] == 'z' && ad && aug[i]; i++) {
		if (aug[i] == 'R' && ad < ad_end)
			enc = *ad++;
		else if (aug[i] == 'L' && ad < ad_end)
			ad++;
		else if (aug[i] == 'P' && ad < ad_end) {
			uint8_t penc = *ad++;
			if (!skip_encoded(&ad, ad_end, penc, s->addr_size, s->le, NULL))
				break;
		} else if (aug[i] != 'S' && aug[i] != 'B')
			break;
	}
	s->cie_max = max;
	s->cie_enc = enc;
	s->cie_z = aug && aug[0] == 'z';
	s->cie_aug_size = c->cie.fde_augmentation_data_size;
	return max;
}

/* The largest register of the entry @p e (a CIE, or an FDE with its CIE). */
static uint64_t entry_max(struct section *s, const Dwarf_CFI_Entry *e)
{
	Dwarf_Off next;
	Dwarf_CFI_Entry c;
	if (dwarf_cfi_cie_p(e))
		return cie_ra(s, e) ?: max_register(e->cie.initial_instructions, e->cie.initial_instructions_end,
						    s->addr_size, s->addr_size, s->le);
	if (!s->have_cie || s->cie_off != e->fde.CIE_pointer) {
		if (dwarf_next_cfi(s->ident, s->data, s->eh, e->fde.CIE_pointer, &next, &c) != 0 || !dwarf_cfi_cie_p(&c))
			return 0;
		s->cie_off = e->fde.CIE_pointer;
		s->have_cie = true;
		cie_max(s, &c);
	}
	uint64_t max = s->cie_max;
	if (max == CQ_STACK_CFI_BAD_RA)
		return max;
	uint8_t enc = s->cie_enc;
	const uint8_t *p = e->fde.start, *end = e->fde.end;
	unsigned loc_size = s->addr_size;
	if (s->eh) {
		uint8_t size_enc = enc & 0x0f;
		loc_size = size_enc == DW_EH_PE_udata2 || size_enc == DW_EH_PE_sdata2 ? 2
			   : size_enc == DW_EH_PE_udata4 || size_enc == DW_EH_PE_sdata4 ? 4
			   : size_enc == DW_EH_PE_udata8 || size_enc == DW_EH_PE_sdata8 ? 8 : s->addr_size;
	}
	uint64_t n;
	if (!skip_encoded(&p, end, s->eh ? enc : DW_EH_PE_absptr, s->addr_size, s->le, NULL) ||
	    !skip_encoded(&p, end, s->eh ? enc & 0x0f : DW_EH_PE_absptr, s->addr_size, s->le, NULL))
		return max;
	if (s->cie_z) {
		if (!uleb(&p, end, &n) || n > (uint64_t)(end - p))
			return max;
		p += n;
	} else {
		if (s->cie_aug_size > (size_t)(end - p))
			return max;
		p += s->cie_aug_size;
	}
	uint64_t m = max_register(p, end, loc_size, s->addr_size, s->le);
	return m > max ? m : max;
}

/* entry_max() of the entry at @p off, read first. */
static uint64_t entry_max_at(struct section *s, Dwarf_Off off)
{
	Dwarf_Off next;
	Dwarf_CFI_Entry e;
	if (off >= s->data->d_size || dwarf_next_cfi(s->ident, s->data, s->eh, off, &next, &e) != 0)
		return 0;
	return entry_max(s, &e);
}

/* The largest register of every entry a linear walk of @p s reaches (bounded by the
 * section: each entry is at least 4 bytes). */
static uint64_t section_max(struct section *s)
{
	uint64_t max = 0;
	for (Dwarf_Off off = 0, next; off < s->data->d_size; off = next) {
		Dwarf_CFI_Entry e;
		if (dwarf_next_cfi(s->ident, s->data, s->eh, off, &next, &e) != 0 || next <= off)
			break;
		if (s->seen && off % 4 == 0)
			s->seen[off / 32] |= (uint8_t)(1u << (off / 4 % 8));
		uint64_t m = entry_max(s, &e);
		if (m > max)
			max = m;
		if (max > CQ_STACK_MAX_CFI_REG)
			break;
	}
	return max;
}

/* Every entry the .eh_frame_hdr search table @p hdr points at in @p eh. */
static uint64_t table_max(struct section *eh, Elf_Data *hdr, uint64_t hdr_addr)
{
	const uint8_t *p = hdr->d_buf, *end = p + hdr->d_size;
	if (hdr->d_size < 4 || p[0] != 1)
		return 0;
	uint8_t ptr_enc = p[1], cnt_enc = p[2], tab_enc = p[3];
	uint64_t count = 0, max = 0;
	p += 4;
	/* libdw uses the table only in this encoding */
	if (tab_enc != (DW_EH_PE_datarel | DW_EH_PE_sdata4) || cnt_enc == DW_EH_PE_omit ||
	    !skip_encoded(&p, end, ptr_enc, eh->addr_size, eh->le, NULL) ||
	    !skip_encoded(&p, end, cnt_enc, eh->addr_size, eh->le, &count))
		return 0;
	for (uint64_t i = 0; i < count && end - p >= 8 && max <= CQ_STACK_MAX_CFI_REG; i++) {
		uint64_t loc, fde;
		if (!skip_encoded(&p, end, tab_enc, eh->addr_size, eh->le, &loc) ||
		    !skip_encoded(&p, end, tab_enc, eh->addr_size, eh->le, &fde))
			break;
		uint64_t off = hdr_addr + fde - eh->addr;
		if (eh->seen && off < eh->data->d_size && off % 4 == 0 && eh->seen[off / 32] & (1u << (off / 4 % 8)))
			continue; /* checked by the linear walk */
		uint64_t m = entry_max_at(eh, off);
		if (m > max)
			max = m;
	}
	return max;
}

static uint64_t elf_max(Elf *elf)
{
	GElf_Ehdr eh;
	size_t shstrndx;
	if (!elf || !gelf_getehdr(elf, &eh) || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	struct section frame = {0}, debug = {0};
	Elf_Data *hdr = NULL;
	uint64_t hdr_addr = 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		bool is_eh = !strcmp(name, ".eh_frame"), is_debug = !strcmp(name, ".debug_frame");
		bool is_hdr = !strcmp(name, ".eh_frame_hdr");
		if (!is_eh && !is_debug && !is_hdr)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			continue;
		struct section s = {.data = d, .addr = sh.sh_addr, .ident = ident, .eh = is_eh,
				    .le = eh.e_ident[EI_DATA] == ELFDATA2LSB,
				    .addr_size = eh.e_ident[EI_CLASS] == ELFCLASS64 ? 8 : 4,
				    .ppc = eh.e_machine == EM_PPC || eh.e_machine == EM_PPC64};
		if (is_hdr) {
			hdr = d;
			hdr_addr = sh.sh_addr;
		} else if (is_eh) {
			frame = s;
		} else if (!(sh.sh_flags & SHF_COMPRESSED)) { /* libdw decompresses its own copy */
			debug = s;
		}
	}
	uint64_t max = 0, m;
	if (frame.data && hdr)
		frame.seen = calloc(frame.data->d_size / 32 + 1, 1); /* without it: every entry twice */
	if (frame.data && (m = section_max(&frame)) > max)
		max = m;
	if (frame.data && hdr && (m = table_max(&frame, hdr, hdr_addr)) > max)
		max = m;
	free(frame.seen);
	if (debug.data && (m = section_max(&debug)) > max)
		max = m;
	return max;
}

uint64_t cq_stack_cfi_bad_register(Dwfl_Module *mod, bool debug_file)
{
	Dwarf_Addr bias;
	Elf *own = dwfl_module_getelf(mod, &bias);
	uint64_t max = 0;
	if (!debug_file) {
		max = elf_max(own);
	} else {
		Dwarf *dw = dwfl_module_getdwarf(mod, &bias);
		Elf *debug = dw ? dwarf_getelf(dw) : NULL;
		if (debug && debug != own)
			max = elf_max(debug);
	}
	return max > CQ_STACK_MAX_CFI_REG ? max : 0;
}
