/* SPDX-License-Identifier: MIT */
/* x86_64 and i386 (Linux user_regs_struct order). */
#include "ctypes.h"

#include <elf.h>

static const struct cq_reg x86_64_regs[] = {
	{"r15", 0, 8, 15},
	{"r14", 8, 8, 14},
	{"r13", 16, 8, 13},
	{"r12", 24, 8, 12},
	{"rbp", 32, 8, 6},
	{"rbx", 40, 8, 3},
	{"r11", 48, 8, 11},
	{"r10", 56, 8, 10},
	{"r9", 64, 8, 9},
	{"r8", 72, 8, 8},
	{"rax", 80, 8, 0},
	{"rcx", 88, 8, 2},
	{"rdx", 96, 8, 1},
	{"rsi", 104, 8, 4},
	{"rdi", 112, 8, 5},
	{"orig_rax", 120, 8, -1},
	{"rip", 128, 8, 16},
	{"cs", 136, 8, 51},
	{"eflags", 144, 8, 49},
	{"rsp", 152, 8, 7},
	{"ss", 160, 8, 52},
	{"fs_base", 168, 8, 58},
	{"gs_base", 176, 8, 59},
	{"ds", 184, 8, 53},
	{"es", 192, 8, 50},
	{"fs", 200, 8, 54},
	{"gs", 208, 8, 55},
};

/* the System V AMD64 ABI's integer argument registers, as DWARF numbers them */
static const uint8_t x86_64_args[] = {5 /* rdi */, 4 /* rsi */, 1 /* rdx */, 2 /* rcx */, 8 /* r8 */, 9 /* r9 */};

const struct cq_target cq_target_x86_64 = {
	.name = "x86_64",
	.e_machine = EM_X86_64,
	.elf_class = ELFCLASS64,
	.little_endian = true,
	.bfd_arch = "i386:x86-64",
	.gdb_arch = "i386:x86-64",
	.multiarch = "x86_64-linux-gnu",
	.gnu_triplet = "x86_64-linux-gnu",
	.ctypes = CQ_CTYPES_LP64_LD16,
	.prpsinfo_uid_size = 4,
	.reg_block_size = 27 * 8,
	.regs = x86_64_regs,
	.nregs = sizeof(x86_64_regs) / sizeof(x86_64_regs[0]),
	.pc_reg = 16, /* rip */
	.sp_reg = 19, /* rsp */
	.dwarf_ra = 16,
	.dwarf_sp = 7,
	.dwarf_fp = 6,
	.dwarf_args = x86_64_args,
	.ndwarf_args = sizeof(x86_64_args),
	.tp_reg = 21, /* fs_base */
	.gs_reg = -1,
	.tp_source = CQ_TP_REGISTER,
	.pthread_from_tp = CQ_PTHREAD_IS_TP,
	.tls_variant = CQ_TLS_VARIANT_II,
};

static const struct cq_reg i386_regs[] = {
	{"ebx", 0, 4, 3},
	{"ecx", 4, 4, 1},
	{"edx", 8, 4, 2},
	{"esi", 12, 4, 6},
	{"edi", 16, 4, 7},
	{"ebp", 20, 4, 5},
	{"eax", 24, 4, 0},
	{"ds", 28, 4, 43},
	{"es", 32, 4, 40},
	{"fs", 36, 4, 44},
	{"gs", 40, 4, 45},
	{"orig_eax", 44, 4, -1},
	{"eip", 48, 4, 8},
	{"cs", 52, 4, 41},
	{"eflags", 56, 4, 9},
	{"esp", 60, 4, 4},
	{"ss", 64, 4, 42},
};

const struct cq_target cq_target_i386 = {
	.name = "i386",
	.e_machine = EM_386,
	.elf_class = ELFCLASS32,
	.little_endian = true,
	.bfd_arch = "i386",
	.gdb_arch = "i386",
	.multiarch = "i386-linux-gnu",
	.gnu_triplet = "i686-linux-gnu",
	/* i386 aligns 64-bit members to 4 and has a 12-byte long double. */
	.ctypes = {
		[CQ_CTYPE_CHAR] = {1, 1}, [CQ_CTYPE_SHORT] = {2, 2}, [CQ_CTYPE_INT] = {4, 4},
		[CQ_CTYPE_LONG] = {4, 4}, [CQ_CTYPE_LONG_LONG] = {8, 4},
		[CQ_CTYPE_POINTER] = {4, 4}, [CQ_CTYPE_SIZE_T] = {4, 4}, [CQ_CTYPE_BOOL] = {1, 1},
		[CQ_CTYPE_FLOAT] = {4, 4}, [CQ_CTYPE_DOUBLE] = {8, 4},
		[CQ_CTYPE_LONG_DOUBLE] = {12, 4},
	},
	.prpsinfo_uid_size = 2,
	.reg_block_size = 17 * 4,
	.regs = i386_regs,
	.nregs = sizeof(i386_regs) / sizeof(i386_regs[0]),
	.pc_reg = 12, /* eip */
	.sp_reg = 15, /* esp */
	.dwarf_ra = 8,
	.dwarf_sp = 4,
	.dwarf_fp = 5,
	.tp_reg = -1,
	.gs_reg = 10,
	.tp_source = CQ_TP_NOTE_386_TLS,
	.pthread_from_tp = CQ_PTHREAD_IS_TP,
	.tls_variant = CQ_TLS_VARIANT_II,
};
