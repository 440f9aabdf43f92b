/* SPDX-License-Identifier: MIT */
/* Consistency of the per-architecture tables. */
#include <elf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "plugin/plugin_path.h"
#include "base/decode.h"

/* A fixture executable of each target: elfutils' backend for its machine names the DWARF
 * registers (dwfl_module_register_names), the reference for the tables' numbers. */
static const struct {
	const char *target, *fixture;
} exes[] = {
	{"x86_64", "x86_64-kernel"}, {"i386", "i386-kernel"}, {"aarch64", "aarch64-qemu"},
	{"armhf", "armhf-qemu"},     {"s390x", "s390x-qemu"}, {"ppc64", "ppc64-qemu"},
	{"ppc32", "ppc32-qemu"},     {"riscv64", "riscv64-gdbstub"}, {"ppc64le", "ppc64le-qemu"},
	{"armel", "armel-qemu"},     {"m68k", "m68k-qemu"},
	{"mipsel", "mipsel-qemu"},   {"mips64el", "mips64el-qemu"},
	{"hppa", "hppa-gdbstub"},    {"sh4", NULL}, /* no sh4 core can be made here: qemu runs no sh4 glibc */
	{"sparc64", "sparc64-gdbstub"}, {"alpha", "alpha-gdbstub"},
};

#define MAX_DWARF 512
static char names[MAX_DWARF][32];

static int add_name(void *arg, int regno, const char *setname, const char *prefix, const char *regname,
		    int bits, int type)
{
	if (regno >= 0 && regno < MAX_DWARF)
		snprintf(names[regno], sizeof(names[regno]), "%s", regname);
	return 0;
}

/* A minimal executable of @p t's machine (ELF header, one PT_LOAD) into @p fd: what picks
 * elfutils' backend where no fixture has an executable (sh4). */
static bool write_min_elf(const struct cq_target *t, int fd)
{
	unsigned char b[52 + 32] = {0x7f, 'E', 'L', 'F', ELFCLASS32, t->little_endian ? ELFDATA2LSB : ELFDATA2MSB,
				    EV_CURRENT};
	uint64_t v[][3] = {{16, 2, ET_EXEC}, {18, 2, t->e_machine}, {20, 4, EV_CURRENT}, {28, 4, 52},
			   {40, 2, 52},	     {42, 2, 32},	    {44, 2, 1},		      {52, 4, PT_LOAD},
			   {68, 4, sizeof(b)}, {72, 4, sizeof(b)}, {76, 4, PF_R | PF_X}, {80, 4, 4096}};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		for (unsigned k = 0; k < v[i][1]; k++)
			b[v[i][0] + k] = (unsigned char)(v[i][2] >> 8 * (t->little_endian ? k : v[i][1] - 1 - k));
	return t->elf_class == ELFCLASS32 && write(fd, b, sizeof(b)) == (ssize_t)sizeof(b);
}

/* elfutils' names for the DWARF registers of @p fixture's machine (@p t's without one)
 * into names[]. */
static bool elfutils_names(const struct cq_target *t, const char *fixture)
{
	memset(names, 0, sizeof(names));
	char path[256], tmp[] = "/tmp/coreq-test-targets-XXXXXX";
	snprintf(path, sizeof(path), "fixtures/core/%s/exe.gz", fixture ? fixture : "");
	gzFile g = fixture ? gzopen(path, "rb") : NULL;
	int fd = mkstemp(tmp);
	if ((fixture && !g) || fd < 0) {
		printf("not ok - cannot read %s (run from the repository root)\n", path);
		if (g)
			gzclose(g);
		if (fd >= 0)
			close(fd);
		return false;
	}
	unlink(tmp);
	char buf[65536];
	int n;
	while (g && (n = gzread(g, buf, sizeof(buf))) > 0)
		if (write(fd, buf, (size_t)n) != n)
			break;
	if (g)
		gzclose(g);
	else if (!write_min_elf(t, fd)) {
		close(fd);
		return false;
	}
	static const Dwfl_Callbacks cbs = {.find_elf = dwfl_build_id_find_elf,
					   .find_debuginfo = dwfl_standard_find_debuginfo};
	Dwfl *d = dwfl_begin(&cbs);
	Dwfl_Module *m = d ? dwfl_report_elf(d, "exe", tmp, fd, 0, false) : NULL;
	bool ok = m && dwfl_report_end(d, NULL, NULL) == 0 && dwfl_module_register_names(m, add_name, NULL) == 0;
	if (d)
		dwfl_end(d);
	close(fd);
	return ok;
}

/* Our register name and elfutils' for the same DWARF number agree (their spellings). */
static bool same_name(const char *ours, const char *theirs)
{
	static const char *const alias[][2] = {{"eflags", "rflags"}, {"ccr", "cr"}, {"fs_base", "fs.base"},
					       {"gs_base", "gs.base"}, {"fp", "a6"}, {"sp", "a7"},
					       /* sparc64: %o6 and %i6 by their roles, tstate; alpha's r15 */
					       {"sp", "o6"}, {"fp", "i6"}, {"tstate", "state"}, {"fp", "s6"}};
	if (!strcmp(ours, theirs))
		return true;
	for (size_t i = 0; i < sizeof(alias) / sizeof(alias[0]); i++)
		if (!strcmp(ours, alias[i][0]) && !strcmp(theirs, alias[i][1]))
			return true;
	return false;
}

static void check_dwarf(const struct cq_target *t)
{
	/* within the table: numbers distinct, the sp column the sp register's */
	for (unsigned r = 0; r < t->nregs; r++)
		for (unsigned q = r + 1; q < t->nregs; q++)
			CHECK(t->regs[r].dwarf < 0 || t->regs[r].dwarf != t->regs[q].dwarf);
	CHECK(t->dwarf_sp == t->regs[t->sp_reg].dwarf);
	CHECK(t->dwarf_ra >= 0 && t->dwarf_fp >= 0 && t->dwarf_fp != t->dwarf_sp);
	const char *fixture = NULL;
	bool listed = false;
	for (size_t i = 0; i < sizeof(exes) / sizeof(exes[0]); i++)
		if (!strcmp(exes[i].target, t->name)) {
			fixture = exes[i].fixture;
			listed = true;
		}
	CHECK(listed);
	if (t->e_machine == EM_MIPS) {
		/* elfutils 0.188 has no MIPS backend to ask: GCC's numbering (mips.h
		 * DBX_REGISTER_NUMBER), r0..r31 are 0..31 in table order, hi 64, lo 65 */
		for (int r = 0; r < 32; r++)
			CHECK(t->regs[r].dwarf == r);
		CHECK(t->regs[cq_target_reg_index(t, "hi")].dwarf == 64);
		CHECK(t->regs[cq_target_reg_index(t, "lo")].dwarf == 65);
		CHECK(t->dwarf_ra == 31 && t->dwarf_fp == 30 && t->dwarf_sp == 29);
		return;
	}
	if (t->e_machine == EM_PARISC) {
		/* elfutils 0.188 has no PA-RISC backend either (it names no register of an hppa
		 * executable): GCC's pa32-regs.h numbers r1..r31 1..31, in table order after the
		 * PSW's slot (gr0); rp 2 is .eh_frame's return-address column, sp 30, r3 the frame
		 * pointer */
		CHECK(!elfutils_names(t, fixture) || names[0][0] == 0);
		CHECK(t->regs[0].dwarf == -1);
		for (int r = 1; r < 32; r++)
			CHECK(t->regs[r].dwarf == r);
		CHECK(t->dwarf_ra == 2 && t->dwarf_fp == 3 && t->dwarf_sp == 30);
		return;
	}
	if (!elfutils_names(t, fixture)) {
		CHECK(!"elfutils names the target's registers");
		return;
	}
	unsigned named = 0;
	for (unsigned r = 0; r < t->nregs; r++) {
		int d = t->regs[r].dwarf;
		if (d < 0)
			continue;
		named++;
		if (d >= MAX_DWARF || !same_name(t->regs[r].name, names[d])) {
			check_failed++;
			printf("not ok - %s: %s is DWARF %d, which elfutils names \"%s\"\n", t->name, t->regs[r].name, d,
			       d < MAX_DWARF ? names[d] : "?");
		} else {
			check_passed++;
		}
	}
	CHECK(named >= 16); /* the general registers at least */
	/* the frame pointer and the return address are registers elfutils knows (powerpc's
	 * return-address column 65 is GCC's number for LR, which elfutils names 108 as well) */
	CHECK(names[t->dwarf_fp][0] != 0);
	CHECK(names[t->dwarf_ra][0] != 0 || t->dwarf_ra == 65);
}

/* Known sizeof(struct elf_prstatus) per target (from the kernel headers of each ABI). */
static const struct {
	const char *name;
	size_t prstatus;
} sizes[] = {
	{"x86_64", 336}, {"i386", 144}, {"aarch64", 392}, {"armhf", 148}, {"s390x", 336},
	{"ppc64", 504},  {"ppc32", 268}, {"riscv64", 376}, {"ppc64le", 504},
	{"armel", 148},  {"m68k", 154},
	{"mipsel", 256}, {"mips64el", 480},
	{"hppa", 396},   {"sh4", 168},
	{"sparc64", 408}, {"alpha", 384},
};

int main(void)
{
	/* every target has its fixture (and its prstatus size) */
	CHECK_U64(cq_ntargets, sizeof(exes) / sizeof(exes[0]));
	CHECK_U64(cq_ntargets, sizeof(sizes) / sizeof(sizes[0]));
	for (size_t i = 0; i < cq_ntargets; i++) {
		const struct cq_target *t = cq_targets[i];
		const struct cq_target *def = cq_target_find(t->e_machine, t->elf_class, t->little_endian);
		/* a variant (armel) is found from its default (armhf) and shares its layouts */
		CHECK(t->e_flags_mask ? def != t && def && cq_target_variant(def, t->e_flags_value) == t : def == t);
		if (t->e_flags_mask && def)
			CHECK(t->regs == def->regs && t->nregs == def->nregs &&
			      t->reg_block_size == def->reg_block_size && t->pc_reg == def->pc_reg &&
			      t->sp_reg == def->sp_reg && t->prpsinfo_uid_size == def->prpsinfo_uid_size &&
			      !memcmp(t->ctypes, def->ctypes, sizeof(t->ctypes)) && t->tp_source == def->tp_source &&
			      t->pthread_from_tp == def->pthread_from_tp && t->tls_variant == def->tls_variant &&
			      t->tls_tp_bias == def->tls_tp_bias && t->tp_reg == def->tp_reg);
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
		/* (siginfo: 3 ints, pr_cursig, 2 longs, 4 pid_t, 4 timevals of 2 longs), each member
		 * aligned as the target aligns it (m68k: everything to 2) */
		size_t L = t->ctypes[CQ_CTYPE_LONG].size, la = t->ctypes[CQ_CTYPE_LONG].align;
		size_t ia = t->ctypes[CQ_CTYPE_INT].align;
#define UP(v, a) (((v) + (a) - 1) / (a) * (a))
		size_t head = UP(UP(UP(12 + 2, la) + 2 * L, ia) + 16, la) + 8 * L;
		CHECK_U64(head, t->elf_class == ELFCLASS64 ? 112 : t->e_machine == EM_68K ? 70 : 72);
		size_t total = UP(UP(head + t->reg_block_size, ia) + 4, la > ia ? la : ia);
#undef UP
		for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
			if (!strcmp(sizes[k].name, t->name))
				CHECK_U64(total, sizes[k].prstatus);
		check_dwarf(t);
		/* Debian's names: its library directory and its cross compiler's prefix */
		CHECK(t->multiarch && strstr(t->multiarch, "-linux-gnu"));
		CHECK(t->gnu_triplet && strstr(t->gnu_triplet, "-linux-gnu"));
		CHECK(strcmp(t->name, "i386") ? !strcmp(t->multiarch, t->gnu_triplet)
					      : !strcmp(t->gnu_triplet, "i686-linux-gnu"));
	}
	CHECK(!strcmp(cq_target_by_name("armhf")->multiarch, "arm-linux-gnueabihf"));
	CHECK(!strcmp(cq_target_by_name("ppc32")->multiarch, "powerpc-linux-gnu"));
	CHECK(!strcmp(cq_target_by_name("ppc64le")->multiarch, "powerpc64le-linux-gnu"));
#if defined(__x86_64__)
	CHECK(!strcmp(cq_target_by_name("x86_64")->multiarch, cq_host_multiarch()));
#elif defined(__i386__)
	CHECK(!strcmp(cq_target_by_name("i386")->multiarch, cq_host_multiarch()));
#endif
	CHECK(cq_target_find(EM_PPC64, ELFCLASS64, false) == cq_target_by_name("ppc64"));
	CHECK(cq_target_find(EM_PPC64, ELFCLASS64, true) == cq_target_by_name("ppc64le"));
	CHECK(cq_target_find(0x1234, ELFCLASS64, true) == NULL);
	/* MIPS: one e_machine, told apart by class; big-endian MIPS is not a target */
	CHECK(cq_target_find(EM_MIPS, ELFCLASS32, true) == cq_target_by_name("mipsel"));
	CHECK(cq_target_find(EM_MIPS, ELFCLASS64, true) == cq_target_by_name("mips64el"));
	CHECK(cq_target_find(EM_MIPS, ELFCLASS32, false) == NULL);
	/* o32 lo at EF_LO 38, pc (cp0_epc) at 40; n64 lo at 32, pc at 34 (asm/reg.h) */
	const struct cq_target *mo = cq_target_by_name("mipsel"), *m64 = cq_target_by_name("mips64el");
	CHECK_U64(mo->regs[cq_target_reg_index(mo, "lo")].offset, 38 * 4);
	CHECK_U64(mo->regs[mo->pc_reg].offset, 40 * 4);
	CHECK_U64(m64->regs[cq_target_reg_index(m64, "lo")].offset, 32 * 8);
	CHECK_U64(m64->regs[m64->pc_reg].offset, 34 * 8);
	CHECK_U64(mo->ctypes[CQ_CTYPE_LONG_DOUBLE].size, 8);
	CHECK_U64(m64->ctypes[CQ_CTYPE_LONG_DOUBLE].size, 16);
	/* signal numbers: MIPS's own, everyone else Linux's generic ones */
	CHECK_U64(cq_target_signal_number(mo, "SIGSTOP"), 23);
	CHECK_U64(cq_target_signal_number(m64, "SIGBUS"), 10);
	CHECK_U64(cq_target_signal_number(cq_target_by_name("x86_64"), "SIGSTOP"), 19);
	CHECK(!strcmp(cq_target_signal_name(mo, 18), "SIGCHLD"));
	CHECK(!strcmp(cq_target_signal_name(cq_target_by_name("ppc32"), 7), "SIGBUS"));
	CHECK(cq_target_signal_name(mo, 32) == NULL && cq_target_signal_name(mo, 0) == NULL);
	/* PA-RISC numbers its own too (asm/signal.h): SIGSTOP 24, SIGUSR1 16, SIGSYS 31 */
	const struct cq_target *hp = cq_target_by_name("hppa"), *sh = cq_target_by_name("sh4");
	CHECK_U64(cq_target_signal_number(hp, "SIGSTOP"), 24);
	CHECK_U64(cq_target_signal_number(hp, "SIGUSR1"), 16);
	CHECK_U64(cq_target_signal_number(hp, "SIGABRT"), 6);
	CHECK(!strcmp(cq_target_signal_name(hp, 31), "SIGSYS"));
	CHECK(!strcmp(cq_target_signal_name(hp, 7), "SIGSTKFLT"));
	CHECK_U64(cq_target_signal_number(sh, "SIGSTOP"), 19);
	/* the thread pointer's slot is the one glibc's _thread_db_register32 names: cr27 at
	 * 53 * 4 (hppa), gbr at 19 * 4 (sh4) */
	CHECK_U64(hp->regs[hp->tp_reg].offset, 212);
	CHECK(!strcmp(hp->regs[hp->tp_reg].name, "cr27"));
	CHECK_U64(sh->regs[sh->tp_reg].offset, 76);
	CHECK(!strcmp(sh->regs[sh->tp_reg].name, "gbr"));
	CHECK_U64(hp->regs[hp->pc_reg].offset, 40 * 4);
	CHECK_U64(sh->regs[sh->pc_reg].offset, 16 * 4);
	CHECK(cq_target_find(EM_PARISC, ELFCLASS32, false) == hp);
	CHECK(cq_target_find(EM_SH, ELFCLASS32, true) == sh);
	CHECK(cq_target_find(EM_SH, ELFCLASS32, false) == NULL);
	CHECK_U64(cq_target_signal_number(mo, "SIGNONE"), (uint64_t)-1);
	/* sparc and alpha: SunOS's and OSF/1's numbers (asm/signal.h of each) */
	const struct cq_target *sp64 = cq_target_by_name("sparc64"), *alpha = cq_target_by_name("alpha");
	CHECK_U64(cq_target_signal_number(sp64, "SIGSTOP"), 17);
	CHECK_U64(cq_target_signal_number(sp64, "SIGCHLD"), 20);
	CHECK_U64(cq_target_signal_number(sp64, "SIGUSR1"), 30);
	CHECK_U64(cq_target_signal_number(alpha, "SIGBUS"), 10);
	CHECK_U64(cq_target_signal_number(alpha, "SIGABRT"), 6);
	CHECK(!strcmp(cq_target_signal_name(alpha, 29), "SIGPWR") && !strcmp(cq_target_signal_name(alpha, 7), "SIGEMT"));
	/* sparc64: pr_reg g0-g7 o0-o7 l0-l7 i0-i7 tstate tpc tnpc y; tp %g7; pc DWARF 80 */
	CHECK_U64(sp64->regs[sp64->pc_reg].offset, 33 * 8);
	CHECK_U64(sp64->regs[sp64->sp_reg].offset, 14 * 8);
	CHECK_U64(sp64->regs[sp64->tp_reg].offset, 7 * 8);
	CHECK_U64(sp64->regs[sp64->pc_reg].dwarf, 80);
	CHECK(sp64->tls_variant == CQ_TLS_VARIANT_II && !sp64->little_endian);
	/* alpha: r0-r30, pc, unique (the thread pointer) */
	CHECK_U64(alpha->regs[alpha->pc_reg].offset, 31 * 8);
	CHECK_U64(alpha->regs[alpha->tp_reg].offset, 32 * 8);
	CHECK_U64(alpha->regs[alpha->sp_reg].dwarf, 30);
	CHECK(alpha->tls_variant == CQ_TLS_VARIANT_I && alpha->little_endian);
	for (size_t i = 0; i < cq_ntargets; i++) {
		bool distinct = true; /* each number names one signal */
		for (int a = 1; a < 32; a++)
			for (int b = a + 1; b < 32; b++)
				distinct &= strcmp(cq_target_signal_name(cq_targets[i], a),
						   cq_target_signal_name(cq_targets[i], b)) != 0;
		CHECK(distinct);
	}
	char list[256];
	CHECK(!strcmp(cq_target_names(list, sizeof(list)),
		      "x86_64 i386 aarch64 armhf s390x ppc64 ppc32 riscv64 ppc64le armel m68k mipsel mips64el "
		      "hppa sh4 sparc64 alpha"));
	CHECK(!strcmp(cq_target_names(list, 12), "x86_64 i386"));
	/* EF_ARM_ABI_FLOAT_SOFT / _HARD of Debian's armel and armhf libc; e_flags 0 (cores) */
	const struct cq_target *armhf = cq_target_by_name("armhf"), *armel = cq_target_by_name("armel");
	CHECK(cq_target_find(EM_ARM, ELFCLASS32, true) == armhf);
	CHECK(cq_target_variant(armhf, 0x5000200) == armel);
	CHECK(cq_target_variant(armhf, 0x5000400) == armhf);
	CHECK(cq_target_variant(armhf, 0) == armhf);
	CHECK(cq_target_variant(cq_target_by_name("x86_64"), 0x200) == cq_target_by_name("x86_64"));
	CHECK(!strcmp(armel->multiarch, "arm-linux-gnueabi"));
	return check_report("test_targets");
}
