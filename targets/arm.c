/* SPDX-License-Identifier: MIT */
/* aarch64, armhf (EABI, hard float) and armel (EABI, soft float: armhf's variant). Their thread pointer (TPIDR_EL0 / TPIDRURO) is not
 * in prstatus: kernel cores carry it in NT_ARM_TLS, qemu-user cores do not at all. */
#include "ctypes.h"

#include <elf.h>

static const struct cq_reg aarch64_regs[] = {
	{"x0", 0, 8, 0},
	{"x1", 8, 8, 1},
	{"x2", 16, 8, 2},
	{"x3", 24, 8, 3},
	{"x4", 32, 8, 4},
	{"x5", 40, 8, 5},
	{"x6", 48, 8, 6},
	{"x7", 56, 8, 7},
	{"x8", 64, 8, 8},
	{"x9", 72, 8, 9},
	{"x10", 80, 8, 10},
	{"x11", 88, 8, 11},
	{"x12", 96, 8, 12},
	{"x13", 104, 8, 13},
	{"x14", 112, 8, 14},
	{"x15", 120, 8, 15},
	{"x16", 128, 8, 16},
	{"x17", 136, 8, 17},
	{"x18", 144, 8, 18},
	{"x19", 152, 8, 19},
	{"x20", 160, 8, 20},
	{"x21", 168, 8, 21},
	{"x22", 176, 8, 22},
	{"x23", 184, 8, 23},
	{"x24", 192, 8, 24},
	{"x25", 200, 8, 25},
	{"x26", 208, 8, 26},
	{"x27", 216, 8, 27},
	{"x28", 224, 8, 28},
	{"x29", 232, 8, 29},
	{"x30", 240, 8, 30},
	{"sp", 248, 8, 31},
	{"pc", 256, 8, -1},
	{"pstate", 264, 8, -1},
};

/* AAPCS64: x0-x7 carry the first integer arguments (DWARF numbers them 0-7) */
static const uint8_t aarch64_args[] = {0, 1, 2, 3, 4, 5, 6, 7};

const struct cq_target cq_target_aarch64 = {
	.name = "aarch64",
	.e_machine = EM_AARCH64,
	.elf_class = ELFCLASS64,
	.little_endian = true,
	.bfd_arch = "aarch64",
	.gdb_arch = "aarch64",
	.multiarch = "aarch64-linux-gnu",
	.gnu_triplet = "aarch64-linux-gnu",
	.ctypes = CQ_CTYPES_LP64_LD16,
	.prpsinfo_uid_size = 4,
	.reg_block_size = 34 * 8,
	.regs = aarch64_regs,
	.nregs = sizeof(aarch64_regs) / sizeof(aarch64_regs[0]),
	.pc_reg = 32,
	.sp_reg = 31,
	.dwarf_ra = 30,
	.dwarf_sp = 31,
	.dwarf_args = aarch64_args,
	.ndwarf_args = sizeof(aarch64_args),
	.dwarf_fp = 29,
	.tp_reg = -1,
	.gs_reg = -1,
	.tp_source = CQ_TP_NOTE_ARM_TLS,
	.pthread_from_tp = CQ_PTHREAD_TP_MINUS_CONST,
	.tls_variant = CQ_TLS_VARIANT_I,
};

static const struct cq_reg arm_regs[] = {
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
	{"sp", 52, 4, 13},
	{"lr", 56, 4, 14},
	{"pc", 60, 4, 15},
	{"cpsr", 64, 4, -1},
	{"orig_r0", 68, 4, -1},
};

/* What armhf and armel share: everything a core's layout depends on (see cq_target_armel). */
#define ARM_EABI_LAYOUT \
	.ctypes = CQ_CTYPES_ILP32_A8(8), .prpsinfo_uid_size = 2, .reg_block_size = 18 * 4, \
	.regs = arm_regs, .nregs = sizeof(arm_regs) / sizeof(arm_regs[0]), .pc_reg = 15, .sp_reg = 13, \
	.dwarf_ra = 14, .dwarf_sp = 13, .dwarf_fp = 11, .tp_reg = -1, .gs_reg = -1, \
	.tp_source = CQ_TP_NOTE_ARM_TLS, .pthread_from_tp = CQ_PTHREAD_TP_MINUS_CONST, \
	.tls_variant = CQ_TLS_VARIANT_I

const struct cq_target cq_target_armhf = {
	.name = "armhf",
	.e_machine = EM_ARM,
	.elf_class = ELFCLASS32,
	.little_endian = true,
	.bfd_arch = "arm",
	.gdb_arch = "arm",
	.multiarch = "arm-linux-gnueabihf",
	.gnu_triplet = "arm-linux-gnueabihf",
	ARM_EABI_LAYOUT,
};

/* Debian's armel: the same registers, prstatus, C types (soft float changes how floats are
 * passed, not their layout) and TLS as armhf. Only the executable tells them apart: GCC marks
 * EABI objects EF_ARM_ABI_FLOAT_SOFT (0x200) or EF_ARM_ABI_FLOAT_HARD (0x400); qemu and the
 * kernel write e_flags 0 into the core. */
const struct cq_target cq_target_armel = {
	.name = "armel",
	.e_machine = EM_ARM,
	.elf_class = ELFCLASS32,
	.little_endian = true,
	.bfd_arch = "arm",
	.gdb_arch = "arm",
	.multiarch = "arm-linux-gnueabi",
	.gnu_triplet = "arm-linux-gnueabi",
	ARM_EABI_LAYOUT,
	.e_flags_mask = EF_ARM_ABI_FLOAT_SOFT,
	.e_flags_value = EF_ARM_ABI_FLOAT_SOFT,
};
