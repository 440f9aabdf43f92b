/* SPDX-License-Identifier: MIT */
/* sh4 (Debian's sh4 port: SH-4, little-endian). r15 is the stack pointer, r14 the frame
 * pointer GCC keeps when it keeps one, pr the return address; the thread pointer is gbr,
 * which every core carries. */
#include <elf.h>

#include "target.h"

/* elf_gregset_t = struct pt_regs (arch/sh/include/uapi/asm/ptrace_32.h), which the
 * kernel's and qemu's ELF_CORE_COPY_REGS copy whole: r0..r15, pc, pr, sr, gbr, mach, macl,
 * tra. DWARF numbers as elfutils' sh backend names them (GCC's .eh_frame: pr, 17, is the
 * return-address column). */
static const struct cq_reg sh4_regs[] = {
	{"r0", 0, 4, 0},
	{"r1", 4, 4, 1},
	{"r2", 8, 4, 2},
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
	{"pc", 64, 4, 16},
	{"pr", 68, 4, 17},
	{"sr", 72, 4, 18},
	{"gbr", 76, 4, 19},
	{"mach", 80, 4, 20},
	{"macl", 84, 4, 21},
	{"tra", 88, 4, -1},
};

const struct cq_target cq_target_sh4 = {
	.name = "sh4",
	.e_machine = EM_SH,
	.elf_class = ELFCLASS32,
	.little_endian = true,
	.bfd_arch = "sh",
	.gdb_arch = "sh4",
	.multiarch = "sh4-linux-gnu",
	.gnu_triplet = "sh4-linux-gnu",
	/* measured with sh4-linux-gnu-gcc-12: 64-bit types are aligned to 4; long double is
	 * double */
	.ctypes = {
		[CQ_CTYPE_CHAR] = {1, 1}, [CQ_CTYPE_SHORT] = {2, 2}, [CQ_CTYPE_INT] = {4, 4},
		[CQ_CTYPE_LONG] = {4, 4}, [CQ_CTYPE_LONG_LONG] = {8, 4}, [CQ_CTYPE_POINTER] = {4, 4},
		[CQ_CTYPE_SIZE_T] = {4, 4}, [CQ_CTYPE_BOOL] = {1, 1}, [CQ_CTYPE_FLOAT] = {4, 4},
		[CQ_CTYPE_DOUBLE] = {8, 4}, [CQ_CTYPE_LONG_DOUBLE] = {8, 4},
	},
	/* SH's __kernel_uid_t is an unsigned short (asm/posix_types_32.h) */
	.prpsinfo_uid_size = 2,
	.reg_block_size = 23 * 4,
	.regs = sh4_regs,
	.nregs = sizeof(sh4_regs) / sizeof(sh4_regs[0]),
	.pc_reg = 16,
	.sp_reg = 15,
	.dwarf_ra = 17,
	.dwarf_sp = 15,
	.dwarf_fp = 14,
	.tp_reg = 19,
	.gs_reg = -1,
	.tp_source = CQ_TP_REGISTER,
	/* glibc's _thread_db_register32 is {32, -sizeof(struct pthread), 19 * 4}: struct
	 * pthread lies below the TCB gbr points to */
	.pthread_from_tp = CQ_PTHREAD_REGISTER_BIAS,
	.tls_variant = CQ_TLS_VARIANT_I,
};
