/* SPDX-License-Identifier: MIT */
/* m68k (Debian's m68k port: 68020+, big-endian). Its ABI aligns everything wider than a
 * byte to 2 (GCC's BIGGEST_ALIGNMENT is 16 bits), the prstatus head included. Its thread
 * pointer is kept by the kernel (set_thread_area / get_thread_area) and is in no core. */
#include <elf.h>

#include "target.h"

/* elf_gregset_t in the order of the kernel's ELF_CORE_COPY_REGS (arch/m68k/include/asm/
 * elf.h), which qemu's elf_core_copy_regs follows: d1-d7, a0-a6, d0, usp, orig_d0, sr, pc,
 * format/vector. DWARF numbers as GCC and elfutils' m68k backend give them: d0-d7 0-7,
 * a0-a7 8-15 (a6 is the frame pointer, a7 the stack pointer), pc 24. */
static const struct cq_reg m68k_regs[] = {
	{"d1", 0, 4, 1},
	{"d2", 4, 4, 2},
	{"d3", 8, 4, 3},
	{"d4", 12, 4, 4},
	{"d5", 16, 4, 5},
	{"d6", 20, 4, 6},
	{"d7", 24, 4, 7},
	{"a0", 28, 4, 8},
	{"a1", 32, 4, 9},
	{"a2", 36, 4, 10},
	{"a3", 40, 4, 11},
	{"a4", 44, 4, 12},
	{"a5", 48, 4, 13},
	{"fp", 52, 4, 14},
	{"d0", 56, 4, 0},
	{"sp", 60, 4, 15},
	{"orig_d0", 64, 4, -1},
	{"sr", 68, 4, -1},
	{"pc", 72, 4, 24},
	{"fmtvec", 76, 4, -1},
};

const struct cq_target cq_target_m68k = {
	.name = "m68k",
	.e_machine = EM_68K,
	.elf_class = ELFCLASS32,
	.little_endian = false,
	.bfd_arch = "m68k",
	.gdb_arch = "m68k",
	.multiarch = "m68k-linux-gnu",
	.gnu_triplet = "m68k-linux-gnu",
	/* measured with m68k-linux-gnu-gcc-12: long double is the 96-bit extended format */
	.ctypes = {
		[CQ_CTYPE_CHAR] = {1, 1}, [CQ_CTYPE_SHORT] = {2, 2}, [CQ_CTYPE_INT] = {4, 2},
		[CQ_CTYPE_LONG] = {4, 2}, [CQ_CTYPE_LONG_LONG] = {8, 2}, [CQ_CTYPE_POINTER] = {4, 2},
		[CQ_CTYPE_SIZE_T] = {4, 2}, [CQ_CTYPE_BOOL] = {1, 1}, [CQ_CTYPE_FLOAT] = {4, 2},
		[CQ_CTYPE_DOUBLE] = {8, 2}, [CQ_CTYPE_LONG_DOUBLE] = {12, 2},
	},
	.prpsinfo_uid_size = 2,
	.reg_block_size = 20 * 4,
	.regs = m68k_regs,
	.nregs = sizeof(m68k_regs) / sizeof(m68k_regs[0]),
	.pc_reg = 18,
	.sp_reg = 15,
	/* CFI's return-address column is the pc (24); the link instruction chains a6 */
	.dwarf_ra = 24,
	.dwarf_sp = 15,
	.dwarf_fp = 14,
	.tp_reg = -1,
	.gs_reg = -1,
	.tp_source = CQ_TP_NONE,
	/* glibc's tls.h: tp = end of the TCB + TLS_TCB_OFFSET; the descriptor holds
	 * TLS_TCB_OFFSET + sizeof(struct pthread) (used if a core ever has the tp) */
	.pthread_from_tp = CQ_PTHREAD_TP_MINUS_CONST,
	.tls_variant = CQ_TLS_VARIANT_I,
	.tls_tp_bias = 0x7000,
};
