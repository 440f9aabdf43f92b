/* SPDX-License-Identifier: MIT */
/* sparc64 (the 64-bit V9 ABI Debian's sparc64 port uses, big-endian). The register block
 * is the kernel's (arch/sparc/include/asm/elf_64.h, ELF_NGREG 36): g0-g7, o0-o7, then the
 * l0-l7 and i0-i7 of the thread's window as the kernel read them from the stack's window
 * save area after flushing the windows, then tstate, tpc, tnpc, y. The thread pointer is
 * %g7, which points to glibc's struct pthread (TLS variant II). */
#include "ctypes.h"

#include <elf.h>

/* DWARF numbers as GCC and elfutils' sparc backend give them: the 32 integer registers in
 * window order 0-31 (o6 is the stack pointer, i6 the frame pointer, i7 the return
 * address minus 8), pc 80, npc 81, state (tstate) 82, y 85. */
#define SPARC64_R(name, i) {name, (i) * 8, 8, (i)}
static const struct cq_reg sparc64_regs[] = {
	SPARC64_R("g0", 0),  SPARC64_R("g1", 1),  SPARC64_R("g2", 2),  SPARC64_R("g3", 3),
	SPARC64_R("g4", 4),  SPARC64_R("g5", 5),  SPARC64_R("g6", 6),  SPARC64_R("g7", 7),
	SPARC64_R("o0", 8),  SPARC64_R("o1", 9),  SPARC64_R("o2", 10), SPARC64_R("o3", 11),
	SPARC64_R("o4", 12), SPARC64_R("o5", 13), SPARC64_R("sp", 14), SPARC64_R("o7", 15),
	SPARC64_R("l0", 16), SPARC64_R("l1", 17), SPARC64_R("l2", 18), SPARC64_R("l3", 19),
	SPARC64_R("l4", 20), SPARC64_R("l5", 21), SPARC64_R("l6", 22), SPARC64_R("l7", 23),
	SPARC64_R("i0", 24), SPARC64_R("i1", 25), SPARC64_R("i2", 26), SPARC64_R("i3", 27),
	SPARC64_R("i4", 28), SPARC64_R("i5", 29), SPARC64_R("fp", 30), SPARC64_R("i7", 31),
	{"tstate", 32 * 8, 8, 82},
	{"pc", 33 * 8, 8, 80},
	{"npc", 34 * 8, 8, 81},
	{"y", 35 * 8, 8, 85},
};

const struct cq_target cq_target_sparc64 = {
	.name = "sparc64",
	.e_machine = EM_SPARCV9,
	.elf_class = ELFCLASS64,
	.little_endian = false,
	.bfd_arch = "sparc:v9",
	.gdb_arch = "sparc:v9",
	.multiarch = "sparc64-linux-gnu",
	.gnu_triplet = "sparc64-linux-gnu",
	.ctypes = CQ_CTYPES_LP64_LD16,
	.prpsinfo_uid_size = 4,
	.reg_block_size = 36 * 8,
	.regs = sparc64_regs,
	.nregs = sizeof(sparc64_regs) / sizeof(sparc64_regs[0]),
	.pc_reg = 33,
	.sp_reg = 14,
	/* CFI's return-address column is %i7 after `save` (%o7 in a leaf); the back chain is
	 * the saved %i6 of each window save area (at %sp + 2047, the V9 stack bias) */
	.dwarf_ra = 31,
	.dwarf_sp = 14,
	.dwarf_fp = 30,
	.tp_reg = 7,
	.gs_reg = -1,
	.tp_source = CQ_TP_REGISTER,
	/* glibc's sparc tls.h: THREAD_SELF is %g7 itself. Its _thread_db_register64 is
	 * {64, 0, 48}: the offset indexes the register set libthread_db is handed (g1 first),
	 * not pr_reg (g0 first, %g7 at 56), so the register is taken from the table */
	.pthread_from_tp = CQ_PTHREAD_IS_TP,
	.tls_variant = CQ_TLS_VARIANT_II,
	.signals = cq_signals_sparc_alpha,
};
