/* SPDX-License-Identifier: MIT */
/* hppa (Debian's hppa port: 32-bit PA-RISC 1.1, big-endian). Frames grow upwards; r2 (rp)
 * holds the return address, r30 is the stack pointer, r3 the frame pointer when one is
 * kept. The thread pointer is control register 27, which every core carries. */
#include "ctypes.h"

#include <elf.h>

/* elf_gregset_t (80 words) in the order of the kernel's ELF_CORE_COPY_REGS (arch/parisc/
 * include/asm/elf.h; struct user_regs_struct in asm/ptrace.h): gr0..gr31 (the kernel keeps
 * the PSW in gr0), sr0..sr7, iaoq[2] (the pc: iaoq0; its low two bits are the privilege
 * level, 3 in user mode), iasq[2], sar, iir, isr, ior, ipsw, cr0, cr24..cr31 (cr27: the
 * thread pointer), cr8, cr9, cr12, cr13, cr10, cr15; words 64..79 are padding. Names as
 * gdb's hppa target prints them. DWARF numbers as GCC's pa32-regs.h gives them: r0..r31
 * are 0..31 (sp 30, rp 2: the CFI's return-address column). elfutils 0.188 has no PA-RISC
 * backend to compare with. */
static const struct cq_reg hppa_regs[] = {
	{"psw", 0, 4, -1},
	{"r1", 4, 4, 1},
	{"rp", 8, 4, 2},
	{"r3", 12, 4, 3},
	{"r4", 16, 4, 4},
	{"r5", 20, 4, 5},
	{"r6", 24, 4, 6},
	{"r7", 28, 4, 7},
	{"r8", 32, 4, 8},
	{"r9", 36, 4, 9},
	{"r10", 40, 4, 10},
	{"r11", 44, 4, 11},
	{"r12", 48, 4, 12},
	{"r13", 52, 4, 13},
	{"r14", 56, 4, 14},
	{"r15", 60, 4, 15},
	{"r16", 64, 4, 16},
	{"r17", 68, 4, 17},
	{"r18", 72, 4, 18},
	{"r19", 76, 4, 19},
	{"r20", 80, 4, 20},
	{"r21", 84, 4, 21},
	{"r22", 88, 4, 22},
	{"r23", 92, 4, 23},
	{"r24", 96, 4, 24},
	{"r25", 100, 4, 25},
	{"r26", 104, 4, 26},
	{"dp", 108, 4, 27},
	{"ret0", 112, 4, 28},
	{"ret1", 116, 4, 29},
	{"sp", 120, 4, 30},
	{"r31", 124, 4, 31},
	{"sr0", 128, 4, -1},
	{"sr1", 132, 4, -1},
	{"sr2", 136, 4, -1},
	{"sr3", 140, 4, -1},
	{"sr4", 144, 4, -1},
	{"sr5", 148, 4, -1},
	{"sr6", 152, 4, -1},
	{"sr7", 156, 4, -1},
	{"pcoqh", 160, 4, -1},
	{"pcoqt", 164, 4, -1},
	{"pcsqh", 168, 4, -1},
	{"pcsqt", 172, 4, -1},
	{"sar", 176, 4, -1},
	{"iir", 180, 4, -1},
	{"isr", 184, 4, -1},
	{"ior", 188, 4, -1},
	{"ipsw", 192, 4, -1},
	{"cr0", 196, 4, -1},
	{"cr24", 200, 4, -1},
	{"cr25", 204, 4, -1},
	{"cr26", 208, 4, -1},
	{"cr27", 212, 4, -1},
	{"cr28", 216, 4, -1},
	{"cr29", 220, 4, -1},
	{"cr30", 224, 4, -1},
	{"cr31", 228, 4, -1},
	{"cr8", 232, 4, -1},
	{"cr9", 236, 4, -1},
	{"cr12", 240, 4, -1},
	{"cr13", 244, 4, -1},
	{"cr10", 248, 4, -1},
	{"cr15", 252, 4, -1},
};

const struct cq_target cq_target_hppa = {
	.name = "hppa",
	.e_machine = EM_PARISC,
	.elf_class = ELFCLASS32,
	.little_endian = false,
	.bfd_arch = "hppa",
	.gdb_arch = "hppa1.1",
	.multiarch = "hppa-linux-gnu",
	.gnu_triplet = "hppa-linux-gnu",
	/* measured with hppa-linux-gnu-gcc-12: long double is double (8 bytes) */
	.ctypes = CQ_CTYPES_ILP32_A8(8),
	.prpsinfo_uid_size = 4,
	.reg_block_size = 80 * 4,
	.regs = hppa_regs,
	.nregs = sizeof(hppa_regs) / sizeof(hppa_regs[0]),
	.pc_reg = 40,
	.pc_flag_bits = 3,
	.sp_reg = 30,
	.dwarf_ra = 2,
	.dwarf_sp = 30,
	.dwarf_fp = 3,
	.tp_reg = 53,
	.gs_reg = -1,
	.tp_source = CQ_TP_REGISTER,
	/* glibc's _thread_db_register32 is {32, -sizeof(struct pthread), 53 * 4}: struct
	 * pthread lies below the TCB cr27 points to */
	.pthread_from_tp = CQ_PTHREAD_REGISTER_BIAS,
	.tls_variant = CQ_TLS_VARIANT_I,
	.signals = cq_signals_hppa,
};
