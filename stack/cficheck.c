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
 * What is checked is what libdw would run, found as libdw 0.188 finds it: its view of
 * .eh_frame (dwarf_getcfi_elf.c: the first section of that name with the .eh_frame_hdr
 * before it, else PT_GNU_EH_FRAME's header and the bytes from where it points to the end of
 * the file), then the entry its binary search of the header's table finds for the address
 * (fde.c), and that entry's CIE. Without a table libdw walks the entries in order and may
 * run any of them that covers the address: then all are checked, once per module; so is a
 * module's .debug_frame, which libdw always walks. Checking only the entry a lookup uses
 * made `coreq bt` a fifth faster than scanning libc's 3,000 entries. */
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

/* The largest register of every entry a linear walk of @p s reaches (bounded by the
 * section: each entry is at least 4 bytes). */
static uint64_t section_max(struct section *s)
{
	uint64_t max = 0;
	for (Dwarf_Off off = 0, next; off < s->data->d_size; off = next) {
		Dwarf_CFI_Entry e;
		int r = dwarf_next_cfi(s->ident, s->data, s->eh, off, &next, &e);
		/* libdw skips an entry it cannot read when it knows where the next starts */
		if (r > 0 || next <= off)
			break;
		if (r < 0)
			continue;
		uint64_t m = entry_max(s, &e);
		if (m > max)
			max = m;
		if (max > CQ_STACK_MAX_CFI_REG)
			break;
	}
	return max;
}

/* ---- the .eh_frame view libdw 0.188 builds (dwarf_getcfi_elf.c), and its lookup ---- */

/* How libdw reads a value of DW_EH_PE encoding @p enc at *@p p in a buffer [buf, end)
 * whose first byte is at @p vaddr (encoded-value.h, read_encoded_value), for the
 * encodings a real .eh_frame_hdr uses: absolute, pc-, text- or data-relative, 2-, 4- or
 * 8-byte or address-sized. false where libdw fails too; *@p mirrored false for the rest
 * (aligned, indirect, LEB128: coreq does not follow libdw there and refuses the table). */
static bool hdr_value(const uint8_t **p, const uint8_t *buf, const uint8_t *end, uint64_t vaddr,
		      uint64_t datarel, uint8_t enc, unsigned addr_size, bool le, uint64_t *v, bool *mirrored)
{
	uint64_t base;
	switch (enc & 0x70) {
	case DW_EH_PE_absptr: case DW_EH_PE_textrel: case DW_EH_PE_funcrel: base = 0; break;
	case DW_EH_PE_pcrel: base = vaddr + (uint64_t)(*p - buf); break;
	case DW_EH_PE_datarel: base = datarel; break;
	case DW_EH_PE_aligned: *mirrored = false; return false;
	default: return false;
	}
	if (enc & DW_EH_PE_indirect) {
		*mirrored = false;
		return false;
	}
	size_t n;
	switch (enc & 0x0f) {
	case DW_EH_PE_udata2: case DW_EH_PE_sdata2: n = 2; break;
	case DW_EH_PE_udata4: case DW_EH_PE_sdata4: n = 4; break;
	case DW_EH_PE_udata8: case DW_EH_PE_sdata8: n = 8; break;
	case DW_EH_PE_absptr: n = addr_size; break;
	case DW_EH_PE_uleb128: case DW_EH_PE_sleb128: *mirrored = false; return false;
	default: return false;
	}
	if ((size_t)(end - *p) < n)
		return false;
	uint64_t x = 0;
	for (size_t i = 0; i < n; i++)
		x |= (uint64_t)(*p)[le ? i : n - 1 - i] << (8 * i);
	if ((enc & 0x0f) == DW_EH_PE_sdata2)
		x = (uint64_t)(int64_t)(int16_t)x;
	else if ((enc & 0x0f) == DW_EH_PE_sdata4)
		x = (uint64_t)(int64_t)(int32_t)x;
	*p += n;
	*v = base + x;
	return true;
}

/* libdw's size of one value in the table's encoding (encoded_value_size: by the low three
 * bits), 0 for none. */
static size_t hdr_value_size(uint8_t enc, unsigned addr_size)
{
	switch (enc & 0x07) {
	case DW_EH_PE_udata2: return 2;
	case DW_EH_PE_udata4: return 4;
	case DW_EH_PE_udata8: return 8;
	case DW_EH_PE_absptr: return addr_size;
	default: return 0;
	}
}

struct cq_cfi_guard {
	Dwfl_Module *mod;
	Elf *elf;
	bool have_eh;           /* libdw has a .eh_frame view */
	uint64_t refused;       /* non-zero: every lookup answers this (a table coreq cannot mirror) */
	struct section eh;      /* the view: its bytes and the address of the first */
	Elf_Data eh_data;       /* (the phdr route's bytes: a raw chunk) */
	const uint8_t *table;   /* the binary search table (NULL: libdw searches linearly) */
	size_t table_len, table_entries;
	uint64_t table_vaddr;
	uint8_t table_enc;
	bool linear_done;       /* a linear view: scanned whole once */
	uint64_t linear_bad;
	bool debug_done;
	uint64_t debug_bad;
};

/* The .eh_frame_hdr at [hdr, hdr + size), first byte at @p vaddr (parse_eh_frame_hdr):
 * false when libdw rejects it (no CFI from this route at all); else *@p eh_vaddr and the
 * table, if any. */
static bool parse_hdr(struct cq_cfi_guard *g, const uint8_t *hdr, size_t size, uint64_t vaddr, uint64_t *eh_vaddr)
{
	const uint8_t *h = hdr, *end = hdr + size;
	unsigned as = g->eh.addr_size;
	bool le = g->eh.le, mirrored = true;
	g->table = NULL;
	if (size < 4 || h[0] != 1 || h[1] == DW_EH_PE_omit)
		return false;
	uint8_t ptr_enc = h[1], cnt_enc = h[2], tab_enc = h[3];
	h += 4;
	if (!hdr_value(&h, hdr, end, vaddr, vaddr, ptr_enc, as, le, eh_vaddr, &mirrored)) {
		if (!mirrored)
			g->refused = CQ_STACK_CFI_BAD_HDR;
		return false;
	}
	if (cnt_enc == DW_EH_PE_omit)
		return true;
	uint64_t count;
	if (!hdr_value(&h, hdr, end, vaddr, vaddr, cnt_enc, as, le, &count, &mirrored)) {
		if (!mirrored)
			g->refused = CQ_STACK_CFI_BAD_HDR;
		return false;
	}
	if (count == 0 || count != (size_t)count || tab_enc == DW_EH_PE_omit || (tab_enc & ~DW_EH_PE_signed) == DW_EH_PE_uleb128)
		return true;
	/* libdw's bound: the entries fit in what follows (else it rejects the header) */
	size_t vsize = hdr_value_size(tab_enc, as);
	if (!vsize || count > (uint64_t)((size_t)(end - h) / vsize) / 2)
		return false;
	if ((tab_enc & DW_EH_PE_indirect) || (tab_enc & 0x70) == DW_EH_PE_aligned)
		g->refused = CQ_STACK_CFI_BAD_HDR; /* libdw uses such a table: coreq cannot follow it */
	g->table = h;
	g->table_len = size; /* sic: libdw's bound for its reads is the header's size */
	g->table_entries = (size_t)count;
	g->table_vaddr = vaddr;
	g->table_enc = tab_enc;
	return true;
}

/* The view libdw's dwarf_getcfi_elf makes of @p elf: the first section named .eh_frame
 * (with the .eh_frame_hdr before it), else the PT_GNU_EH_FRAME segment's header and the
 * bytes from where it points to the end of the file. */
static void build_view(struct cq_cfi_guard *g)
{
	GElf_Ehdr eh;
	size_t shstrndx;
	Elf *elf = g->elf;
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh))
		return;
	g->eh = (struct section){.ident = (const unsigned char *)elf_getident(elf, NULL), .eh = true,
				 .le = eh.e_ident[EI_DATA] == ELFDATA2LSB,
				 .addr_size = eh.e_ident[EI_CLASS] == ELFCLASS64 ? 8 : 4,
				 .ppc = eh.e_machine == EM_PPC || eh.e_machine == EM_PPC64};
	if (!g->eh.ident || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	if (shstrndx != 0) {
		Elf_Scn *hdr = NULL;
		uint64_t hdr_vaddr = 0;
		for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
			GElf_Shdr sh;
			const char *name;
			if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
				continue;
			if (!strcmp(name, ".eh_frame_hdr")) {
				hdr = scn;
				hdr_vaddr = sh.sh_addr;
				continue;
			}
			if (strcmp(name, ".eh_frame"))
				continue;
			Elf_Data *d = sh.sh_type != SHT_NOBITS ? elf_rawdata(scn, NULL) : NULL;
			if (!d || !d->d_buf)
				return;
			g->eh.data = d;
			g->eh.addr = sh.sh_addr;
			Elf_Data *hd = hdr ? elf_rawdata(hdr, NULL) : NULL;
			uint64_t eh_vaddr;
			if (hd && hd->d_buf) {
				if (!parse_hdr(g, hd->d_buf, hd->d_size, hdr_vaddr, &eh_vaddr))
					return; /* libdw: no CFI */
				if (eh_vaddr != sh.sh_addr)
					g->table = NULL; /* libdw's sanity check: searched linearly */
			}
			g->have_eh = true;
			return;
		}
	}
	size_t phnum;
	if (elf_getphdrnum(elf, &phnum) != 0)
		return;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph))
			return;
		if (ph.p_type != PT_GNU_EH_FRAME)
			continue;
		Elf_Data *hd = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_BYTE);
		uint64_t eh_vaddr;
		size_t filesize = 0;
		if (!hd || !hd->d_buf || !parse_hdr(g, hd->d_buf, ph.p_filesz, ph.p_vaddr, &eh_vaddr))
			return;
		uint64_t off = eh_vaddr - ph.p_vaddr + ph.p_offset;
		if (!elf_rawfile(elf, &filesize) || off > filesize)
			return;
		Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)off, filesize - off, ELF_T_BYTE);
		if (!d || !d->d_buf)
			return;
		g->eh.data = d;
		g->eh.addr = eh_vaddr;
		g->have_eh = true;
		return;
	}
}

struct cq_cfi_guard *cq_stack_cfi_guard(Dwfl_Module *mod)
{
	struct cq_cfi_guard *g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	Dwarf_Addr bias;
	g->mod = mod;
	g->elf = dwfl_module_getelf(mod, &bias);
	build_view(g);
	return g;
}

void cq_stack_cfi_guard_free(struct cq_cfi_guard *g)
{
	free(g);
}

/* The FDE offset libdw's binary_search_fde (fde.c) finds for @p a, or -1. */
static uint64_t table_lookup(struct cq_cfi_guard *g, uint64_t a)
{
	unsigned as = g->eh.addr_size;
	size_t size = 2 * hdr_value_size(g->table_enc, as);
	const uint8_t *buf = g->table, *end = g->table + g->table_len;
	bool mirrored = true;
	size_t l = 0, u = g->table_entries;
	while (l < u) {
		size_t idx = (l + u) / 2;
		const uint8_t *p = buf + idx * size;
		uint64_t start, fde, next;
		if (!hdr_value(&p, buf, end, g->table_vaddr, g->table_vaddr, g->table_enc, as, g->eh.le, &start,
			       &mirrored))
			break;
		if (a < start) {
			u = idx;
			continue;
		}
		l = idx + 1;
		if (!hdr_value(&p, buf, end, g->table_vaddr, g->table_vaddr, g->table_enc, as, g->eh.le, &fde,
			       &mirrored))
			break;
		if (l < g->table_entries) {
			if (!hdr_value(&p, buf, end, g->table_vaddr, g->table_vaddr, g->table_enc, as, g->eh.le, &next,
				       &mirrored))
				break;
			if (a >= next)
				continue;
		}
		return fde - g->eh.addr;
	}
	return UINT64_MAX;
}

uint64_t cq_stack_cfi_bad_at(struct cq_cfi_guard *g, uint64_t a)
{
	if (g->refused)
		return g->refused;
	if (!g->have_eh)
		return 0;
	if (!g->table) {
		/* libdw walks the entries in order, keeping each: any entry covering @p a may be
		 * the one it runs. Scanned whole, once. */
		if (!g->linear_done) {
			g->linear_done = true;
			uint64_t m = section_max(&g->eh);
			g->linear_bad = m > CQ_STACK_MAX_CFI_REG ? m : 0;
		}
		return g->linear_bad;
	}
	uint64_t off = table_lookup(g, a);
	if (off == UINT64_MAX || off >= g->eh.data->d_size)
		return 0;
	Dwarf_Off next;
	Dwarf_CFI_Entry e;
	if (dwarf_next_cfi(g->eh.ident, g->eh.data, true, off, &next, &e) != 0 || dwarf_cfi_cie_p(&e))
		return 0; /* libdw fails on it too, before running anything */
	uint64_t m = entry_max(&g->eh, &e);
	return m > CQ_STACK_MAX_CFI_REG ? m : 0;
}

/* Whether libdw 0.188 may take section @p name as its .debug_frame (dwarf_begin_elf.c,
 * check_section): plain, GNU-compressed (".zdebug_frame"), split (".dwo") or LTO. Checking
 * every such section, not only the one libdw keeps, refuses nothing real. */
static bool debug_frame_name(const char *name)
{
	if (!strncmp(name, ".gnu.debuglto_", 14))
		return !strcmp(name + 14, ".debug_frame");
	if (!strncmp(name, ".zdebug_frame", 13))
		name += 13;
	else if (!strncmp(name, ".debug_frame", 12))
		name += 12;
	else
		return false;
	return !*name || !strcmp(name, ".dwo");
}

uint64_t cq_stack_cfi_bad_debug(struct cq_cfi_guard *g)
{
	if (g->debug_done)
		return g->debug_bad;
	g->debug_done = true;
	Dwarf_Addr bias;
	Dwarf *dw = dwfl_module_getdwarf(g->mod, &bias);
	Elf *elf = dw ? dwarf_getelf(dw) : NULL;
	GElf_Ehdr eh;
	size_t shstrndx;
	if (!elf || !gelf_getehdr(elf, &eh) || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	uint64_t max = 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		const char *name;
		/* Opening the Dwarf (above) expanded the compressed ones in this Elf, as libdw
		 * reads them: SHF_COMPRESSED is cleared then, and .zdebug_ data replaced. One
		 * still marked compressed did not expand, and libdw left it out; a .zdebug_ one
		 * that did not expand is taken as it is, so it is checked as it is. */
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)) || !debug_frame_name(name) ||
		    (sh.sh_flags & SHF_COMPRESSED))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			continue;
		struct section s = {.data = d, .addr = sh.sh_addr, .ident = (const unsigned char *)elf_getident(elf, NULL),
				    .le = eh.e_ident[EI_DATA] == ELFDATA2LSB,
				    .addr_size = eh.e_ident[EI_CLASS] == ELFCLASS64 ? 8 : 4,
				    .ppc = eh.e_machine == EM_PPC || eh.e_machine == EM_PPC64};
		uint64_t m = section_max(&s);
		if (m > max)
			max = m;
	}
	g->debug_bad = max > CQ_STACK_MAX_CFI_REG ? max : 0;
	return g->debug_bad;
}
