/* SPDX-License-Identifier: MIT */
/* s390x (64-bit, big-endian). The thread pointer is the access register pair a0:a1. */
#include "ctypes.h"

#include <elf.h>

static const struct cq_reg s390x_regs[] = {
	{"pswm", 0, 8, 64},
	{"pswa", 8, 8, 65},
	{"r0", 16, 8, 0},
	{"r1", 24, 8, 1},
	{"r2", 32, 8, 2},
	{"r3", 40, 8, 3},
	{"r4", 48, 8, 4},
	{"r5", 56, 8, 5},
	{"r6", 64, 8, 6},
	{"r7", 72, 8, 7},
	{"r8", 80, 8, 8},
	{"r9", 88, 8, 9},
	{"r10", 96, 8, 10},
	{"r11", 104, 8, 11},
	{"r12", 112, 8, 12},
	{"r13", 120, 8, 13},
	{"r14", 128, 8, 14},
	{"r15", 136, 8, 15},
	{"a0", 144, 4, 48},
	{"a1", 148, 4, 49},
	{"a2", 152, 4, 50},
	{"a3", 156, 4, 51},
	{"a4", 160, 4, 52},
	{"a5", 164, 4, 53},
	{"a6", 168, 4, 54},
	{"a7", 172, 4, 55},
	{"a8", 176, 4, 56},
	{"a9", 180, 4, 57},
	{"a10", 184, 4, 58},
	{"a11", 188, 4, 59},
	{"a12", 192, 4, 60},
	{"a13", 196, 4, 61},
	{"a14", 200, 4, 62},
	{"a15", 204, 4, 63},
	{"orig_gpr2", 208, 8, -1},
	/* Not a hardware register: a0 (high) and a1 (low) read as one 64-bit value. */
	{"tp", 144, 8, -1},
};

const struct cq_target cq_target_s390x = {
	.name = "s390x",
	.e_machine = EM_S390,
	.elf_class = ELFCLASS64,
	.little_endian = false,
	.bfd_arch = "s390:64-bit",
	.gdb_arch = "s390:64-bit",
	.multiarch = "s390x-linux-gnu",
	.gnu_triplet = "s390x-linux-gnu",
	/* long double is 128-bit IEEE but only 8-aligned. */
	.ctypes = {
		[CQ_CTYPE_CHAR] = {1, 1}, [CQ_CTYPE_SHORT] = {2, 2}, [CQ_CTYPE_INT] = {4, 4},
		[CQ_CTYPE_LONG] = {8, 8}, [CQ_CTYPE_LONG_LONG] = {8, 8},
		[CQ_CTYPE_POINTER] = {8, 8}, [CQ_CTYPE_SIZE_T] = {8, 8}, [CQ_CTYPE_BOOL] = {1, 1},
		[CQ_CTYPE_FLOAT] = {4, 4}, [CQ_CTYPE_DOUBLE] = {8, 8},
		[CQ_CTYPE_LONG_DOUBLE] = {16, 8},
	},
	.prpsinfo_uid_size = 4,
	.reg_block_size = 216,
	.regs = s390x_regs,
	.nregs = sizeof(s390x_regs) / sizeof(s390x_regs[0]),
	.pc_reg = 1,  /* pswa */
	.sp_reg = 17, /* r15 */
	.dwarf_ra = 14,
	.dwarf_sp = 15,
	.dwarf_fp = 11,
	.tp_reg = 35, /* a0:a1 */
	.gs_reg = -1,
	.tp_source = CQ_TP_REGISTER,
	.pthread_from_tp = CQ_PTHREAD_REGISTER_BIAS,
	.tls_variant = CQ_TLS_VARIANT_II,
};
