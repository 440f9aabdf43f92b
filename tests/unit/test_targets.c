/* SPDX-License-Identifier: MIT */
/* Consistency of the per-architecture tables. */
#include <elf.h>

#include "check.h"
#include "corelib/decode.h"

/* Known sizeof(struct elf_prstatus) per target (from the kernel headers of each ABI). */
static const struct {
	const char *name;
	size_t prstatus;
} sizes[] = {
	{"x86_64", 336}, {"i386", 144}, {"aarch64", 392}, {"armhf", 148}, {"s390x", 336},
	{"ppc64", 504},  {"ppc32", 268}, {"riscv64", 376}, {"ppc64le", 504},
};

int main(void)
{
	CHECK_U64(cq_ntargets, 9);
	for (size_t i = 0; i < cq_ntargets; i++) {
		const struct cq_target *t = cq_targets[i];
		CHECK(cq_target_find(t->e_machine, t->elf_class, t->little_endian) == t);
		CHECK(cq_target_by_name(t->name) == t);
		CHECK_U64(cq_target_ptr_size(t), t->elf_class == ELFCLASS64 ? 8 : 4);
		CHECK_U64(t->ctypes[CQ_CTYPE_LONG].size, cq_target_ptr_size(t));
		CHECK_U64(t->ctypes[CQ_CTYPE_SIZE_T].size, cq_target_ptr_size(t));
		for (int c = 0; c < CQ_CTYPE_COUNT; c++)
			CHECK(t->ctypes[c].size >= 1 && t->ctypes[c].align >= 1 &&
			      t->ctypes[c].align <= t->ctypes[c].size);
		CHECK(t->pc_reg >= 0 && t->pc_reg < t->nregs);
		CHECK(t->sp_reg >= 0 && t->sp_reg < t->nregs);
		CHECK((t->tp_source == CQ_TP_REGISTER) == (t->tp_reg >= 0));
		CHECK((t->tp_source == CQ_TP_NOTE_386_TLS) == (t->gs_reg >= 0));
		for (unsigned r = 0; r < t->nregs; r++) {
			CHECK(t->regs[r].offset + t->regs[r].size <= t->reg_block_size);
			CHECK(cq_target_reg_index(t, t->regs[r].name) == (int)r);
		}
		/* prstatus = head (derived by the decoder) + pr_reg + pr_fpvalid, padded */
		size_t head = t->elf_class == ELFCLASS64 ? 112 : 72;
		size_t total = head + t->reg_block_size + 4;
		size_t align = cq_target_ptr_size(t);
		total = (total + align - 1) / align * align;
		for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
			if (!strcmp(sizes[k].name, t->name))
				CHECK_U64(total, sizes[k].prstatus);
	}
	CHECK(cq_target_find(EM_PPC64, ELFCLASS64, false) == cq_target_by_name("ppc64"));
	CHECK(cq_target_find(EM_PPC64, ELFCLASS64, true) == cq_target_by_name("ppc64le"));
	CHECK(cq_target_find(0x1234, ELFCLASS64, true) == NULL);
	return check_report("test_targets");
}
