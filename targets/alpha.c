/* SPDX-License-Identifier: MIT */
/* alpha (Debian's alpha port, little-endian LP64). The register block is the kernel's
 * (arch/alpha/kernel/process.c dump_elf_thread, ELF_NGREG 33): r0-r30 (r30 is the user
 * stack pointer), pc, and unique, the thread pointer (PAL's rduniq), which points to
 * glibc's TCB (TLS variant I, no bias). */
#include "ctypes.h"

#include <elf.h>

#ifndef EM_ALPHA
#define EM_ALPHA 0x9026
#endif

/* DWARF numbers as GCC and elfutils' alpha backend give them: r0-r30 are 0-30 (r15 the
 * frame pointer, elfutils' $s6; r26 the return address), pc 64, unique 66. */
#define ALPHA_R(name, i) {name, (i) * 8, 8, (i)}
static const struct cq_reg alpha_regs[] = {
	ALPHA_R("v0", 0),   ALPHA_R("t0", 1),   ALPHA_R("t1", 2),   ALPHA_R("t2", 3),
	ALPHA_R("t3", 4),   ALPHA_R("t4", 5),   ALPHA_R("t5", 6),   ALPHA_R("t6", 7),
	ALPHA_R("t7", 8),   ALPHA_R("s0", 9),   ALPHA_R("s1", 10),  ALPHA_R("s2", 11),
	ALPHA_R("s3", 12),  ALPHA_R("s4", 13),  ALPHA_R("s5", 14),  ALPHA_R("fp", 15),
	ALPHA_R("a0", 16),  ALPHA_R("a1", 17),  ALPHA_R("a2", 18),  ALPHA_R("a3", 19),
	ALPHA_R("a4", 20),  ALPHA_R("a5", 21),  ALPHA_R("t8", 22),  ALPHA_R("t9", 23),
	ALPHA_R("t10", 24), ALPHA_R("t11", 25), ALPHA_R("ra", 26),  ALPHA_R("t12", 27),
	ALPHA_R("at", 28),  ALPHA_R("gp", 29),  ALPHA_R("sp", 30),
	{"pc", 31 * 8, 8, 64},
	{"unique", 32 * 8, 8, 66},
};

const struct cq_target cq_target_alpha = {
	.name = "alpha",
	.e_machine = EM_ALPHA,
	.elf_class = ELFCLASS64,
	.little_endian = true,
	.bfd_arch = "alpha",
	.gdb_arch = "alpha",
	.multiarch = "alpha-linux-gnu",
	.gnu_triplet = "alpha-linux-gnu",
	/* measured with alpha-linux-gnu-gcc-12: long double is IEEE quad (glibc 2.36) */
	.ctypes = CQ_CTYPES_LP64_LD16,
	.prpsinfo_uid_size = 4,
	.reg_block_size = 33 * 8,
	.regs = alpha_regs,
	.nregs = sizeof(alpha_regs) / sizeof(alpha_regs[0]),
	.pc_reg = 31,
	.sp_reg = 30,
	.dwarf_ra = 26,
	.dwarf_sp = 30,
	.dwarf_fp = 15,
	.tp_reg = 32,
	.gs_reg = -1,
	.tp_source = CQ_TP_REGISTER,
	/* glibc's alpha tls.h: DB_THREAD_SELF REGISTER (64, 64, 32 * 8, -sizeof (struct
	 * pthread)): unique points just past struct pthread, at the TCB */
	.pthread_from_tp = CQ_PTHREAD_REGISTER_BIAS,
	.tls_variant = CQ_TLS_VARIANT_I,
	.signals = cq_signals_sparc_alpha,
};
