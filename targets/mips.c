/* SPDX-License-Identifier: MIT */
/* mipsel (o32) and mips64el (n64), little-endian. The register block is the kernel's
 * (asm/reg.h, glibc's sys/user.h EF_*), ELF_NGREG 45 words: o32 has 6 padding words, then
 * r0..r31, lo, hi, cp0_epc (the pc), cp0_badvaddr, cp0_status, cp0_cause and one unused
 * word; n64 starts with r0 and ends with 7 unused words. The thread pointer (UserLocal,
 * read by `rdhwr $3, $29`) is in no note qemu 7.2 or the kernel writes: the struct
 * pthread of a thread comes from glibc's thread lists (corelib/tls.c). */
#include "ctypes.h"

#include <elf.h>

/* GPRs by ABI name; DWARF numbers 0..31, hi 64 and lo 65 (GCC's numbering). */
#define MIPS_GPRS(w, base, a4, a5, a6, a7, t0, t1, t2, t3)                                      \
	{"zero", (base) + 0 * (w), (w), 0}, {"at", (base) + 1 * (w), (w), 1},                       \
	{"v0", (base) + 2 * (w), (w), 2}, {"v1", (base) + 3 * (w), (w), 3},                         \
	{"a0", (base) + 4 * (w), (w), 4}, {"a1", (base) + 5 * (w), (w), 5},                         \
	{"a2", (base) + 6 * (w), (w), 6}, {"a3", (base) + 7 * (w), (w), 7},                         \
	{a4, (base) + 8 * (w), (w), 8}, {a5, (base) + 9 * (w), (w), 9},                             \
	{a6, (base) + 10 * (w), (w), 10}, {a7, (base) + 11 * (w), (w), 11},                         \
	{t0, (base) + 12 * (w), (w), 12}, {t1, (base) + 13 * (w), (w), 13},                         \
	{t2, (base) + 14 * (w), (w), 14}, {t3, (base) + 15 * (w), (w), 15},                         \
	{"s0", (base) + 16 * (w), (w), 16}, {"s1", (base) + 17 * (w), (w), 17},                     \
	{"s2", (base) + 18 * (w), (w), 18}, {"s3", (base) + 19 * (w), (w), 19},                     \
	{"s4", (base) + 20 * (w), (w), 20}, {"s5", (base) + 21 * (w), (w), 21},                     \
	{"s6", (base) + 22 * (w), (w), 22}, {"s7", (base) + 23 * (w), (w), 23},                     \
	{"t8", (base) + 24 * (w), (w), 24}, {"t9", (base) + 25 * (w), (w), 25},                     \
	{"k0", (base) + 26 * (w), (w), 26}, {"k1", (base) + 27 * (w), (w), 27},                     \
	{"gp", (base) + 28 * (w), (w), 28}, {"sp", (base) + 29 * (w), (w), 29},                     \
	{"fp", (base) + 30 * (w), (w), 30}, {"ra", (base) + 31 * (w), (w), 31},                     \
	{"lo", (base) + 32 * (w), (w), 65}, {"hi", (base) + 33 * (w), (w), 64},                     \
	{"pc", (base) + 34 * (w), (w), -1}, {"badvaddr", (base) + 35 * (w), (w), -1},               \
	{"status", (base) + 36 * (w), (w), -1}, {"cause", (base) + 37 * (w), (w), -1}

/* o32 names r8..r15 t0..t7; n64 names them a4..a7, t0..t3. */
static const struct cq_reg mipsel_regs[] = {
	MIPS_GPRS(4, 6 * 4, "t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"),
};

static const struct cq_reg mips64el_regs[] = {
	MIPS_GPRS(8, 0, "a4", "a5", "a6", "a7", "t0", "t1", "t2", "t3"),
};

/* Registers are found by index: r0..r31 are 0..31, lo 32, hi 33, pc 34. */
#define MIPS_COMMON                                                                              \
	.e_machine = EM_MIPS, .little_endian = true, .prpsinfo_uid_size = 4, .pc_reg = 34,       \
	.sp_reg = 29, .dwarf_ra = 31, .dwarf_sp = 29, .dwarf_fp = 30, .tp_reg = -1, .gs_reg = -1, \
	.tp_source = CQ_TP_NONE, .pthread_from_tp = CQ_PTHREAD_TP_MINUS_CONST,                   \
	.tls_variant = CQ_TLS_VARIANT_I, .tls_tp_bias = 0x7000, .signals = cq_signals_mips,         \
	.siginfo_code_first = true

const struct cq_target cq_target_mipsel = {
	.name = "mipsel",
	.elf_class = ELFCLASS32,
	/* a core's e_flags name no ISA: libbfd says mips:3000 for both classes */
	.bfd_arch = "mips:3000",
	.gdb_arch = "mips:isa32r2",
	.multiarch = "mipsel-linux-gnu",
	.gnu_triplet = "mipsel-linux-gnu",
	/* o32: 64-bit types aligned to 8, long double is double */
	.ctypes = CQ_CTYPES_ILP32_A8(8),
	.reg_block_size = 45 * 4,
	.regs = mipsel_regs,
	.nregs = sizeof(mipsel_regs) / sizeof(mipsel_regs[0]),
	MIPS_COMMON,
};

const struct cq_target cq_target_mips64el = {
	.name = "mips64el",
	.elf_class = ELFCLASS64,
	.bfd_arch = "mips:3000",
	.gdb_arch = "mips:isa64r2",
	.multiarch = "mips64el-linux-gnuabi64",
	.gnu_triplet = "mips64el-linux-gnuabi64",
	/* n64: LP64, long double is IEEE quad aligned to 16 */
	.ctypes = CQ_CTYPES_LP64_LD16,
	.reg_block_size = 45 * 8,
	.regs = mips64el_regs,
	.nregs = sizeof(mips64el_regs) / sizeof(mips64el_regs[0]),
	MIPS_COMMON,
};
