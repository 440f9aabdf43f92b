/* SPDX-License-Identifier: MIT */
#include "target.h"

#include <string.h>

extern const struct cq_target cq_target_x86_64, cq_target_i386, cq_target_aarch64,
	cq_target_armhf, cq_target_s390x, cq_target_ppc64, cq_target_ppc32, cq_target_riscv64,
	cq_target_ppc64le, cq_target_armel, cq_target_m68k, cq_target_mipsel, cq_target_mips64el,
	cq_target_hppa, cq_target_sh4, cq_target_sparc64, cq_target_alpha;

const struct cq_target *const cq_targets[] = {
	&cq_target_x86_64, &cq_target_i386,  &cq_target_aarch64,
	&cq_target_armhf,  &cq_target_s390x, &cq_target_ppc64,
	&cq_target_ppc32,  &cq_target_riscv64, &cq_target_ppc64le,
	&cq_target_armel,  &cq_target_m68k,
	&cq_target_mipsel, &cq_target_mips64el,
	&cq_target_hppa,   &cq_target_sh4,
	&cq_target_sparc64, &cq_target_alpha,
};
const size_t cq_ntargets = sizeof(cq_targets) / sizeof(cq_targets[0]);

const struct cq_target *cq_target_find(uint16_t e_machine, uint8_t elf_class, bool little_endian)
{
	for (size_t i = 0; i < cq_ntargets; i++) {
		const struct cq_target *t = cq_targets[i];
		if (t->e_machine == e_machine && t->elf_class == elf_class &&
		    t->little_endian == little_endian && !t->e_flags_mask)
			return t;
	}
	return NULL;
}

const struct cq_target *cq_target_variant(const struct cq_target *t, uint32_t e_flags)
{
	for (size_t i = 0; i < cq_ntargets; i++) {
		const struct cq_target *v = cq_targets[i];
		if (v->e_flags_mask && v->e_machine == t->e_machine && v->elf_class == t->elf_class &&
		    v->little_endian == t->little_endian && (e_flags & v->e_flags_mask) == v->e_flags_value)
			return v;
	}
	return t;
}

const struct cq_target *cq_target_by_name(const char *name)
{
	for (size_t i = 0; i < cq_ntargets; i++)
		if (strcmp(cq_targets[i]->name, name) == 0)
			return cq_targets[i];
	return NULL;
}

int cq_target_reg_index(const struct cq_target *t, const char *name)
{
	for (unsigned i = 0; i < t->nregs; i++)
		if (strcmp(t->regs[i].name, name) == 0)
			return (int)i;
	return -1;
}

char *cq_target_names(char *buf, size_t size)
{
	size_t n = 0;
	if (size)
		buf[0] = 0;
	for (size_t i = 0; i < cq_ntargets && size; i++) {
		size_t len = strlen(cq_targets[i]->name);
		if (n + len + (i > 0) >= size)
			break;
		if (i > 0)
			buf[n++] = ' ';
		memcpy(buf + n, cq_targets[i]->name, len + 1);
		n += len;
	}
	return buf;
}
