/* SPDX-License-Identifier: MIT */
/* riscv64 (lp64d). pr_reg starts with pc, then x1..x31; tp is x4. */
#include "ctypes.h"

#include <elf.h>

#ifndef EM_RISCV
#define EM_RISCV 243
#endif

static const struct cq_reg riscv64_regs[] = {
	{"pc", 0, 8, -1},
	{"ra", 8, 8, 1},
	{"sp", 16, 8, 2},
	{"gp", 24, 8, 3},
	{"tp", 32, 8, 4},
	{"t0", 40, 8, 5},
	{"t1", 48, 8, 6},
	{"t2", 56, 8, 7},
	{"s0", 64, 8, 8},
	{"s1", 72, 8, 9},
	{"a0", 80, 8, 10},
	{"a1", 88, 8, 11},
	{"a2", 96, 8, 12},
	{"a3", 104, 8, 13},
	{"a4", 112, 8, 14},
	{"a5", 120, 8, 15},
	{"a6", 128, 8, 16},
	{"a7", 136, 8, 17},
	{"s2", 144, 8, 18},
	{"s3", 152, 8, 19},
	{"s4", 160, 8, 20},
	{"s5", 168, 8, 21},
	{"s6", 176, 8, 22},
	{"s7", 184, 8, 23},
	{"s8", 192, 8, 24},
	{"s9", 200, 8, 25},
	{"s10", 208, 8, 26},
	{"s11", 216, 8, 27},
	{"t3", 224, 8, 28},
	{"t4", 232, 8, 29},
	{"t5", 240, 8, 30},
	{"t6", 248, 8, 31},
};

const struct cq_target cq_target_riscv64 = {
	.name = "riscv64",
	.e_machine = EM_RISCV,
	.elf_class = ELFCLASS64,
	.little_endian = true,
	.bfd_arch = "riscv:rv64",
	.gdb_arch = "riscv:rv64",
	.multiarch = "riscv64-linux-gnu",
	.gnu_triplet = "riscv64-linux-gnu",
	.ctypes = CQ_CTYPES_LP64_LD16,
	.prpsinfo_uid_size = 4,
	.reg_block_size = 32 * 8,
	.regs = riscv64_regs,
	.nregs = sizeof(riscv64_regs) / sizeof(riscv64_regs[0]),
	.pc_reg = 0,
	.sp_reg = 2,
	.dwarf_ra = 1,
	.dwarf_sp = 2,
	.dwarf_fp = 8,
	.tp_reg = 4,
	.gs_reg = -1,
	.tp_source = CQ_TP_REGISTER,
	.pthread_from_tp = CQ_PTHREAD_REGISTER_BIAS,
	.tls_variant = CQ_TLS_VARIANT_I,
};
