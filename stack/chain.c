/* SPDX-License-Identifier: MIT */
/* The steps coreq takes where a frame has no CFI (internal.h): which one an architecture
 * has, and the frame-pointer, back-chain and link-register steps. Each accepts a candidate
 * only when it looks like a frame: the new stack pointer above the old one, in the same
 * mapping, and a return address inside a module. */
#include <elf.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "corelib/image.h"
#include "internal.h"

#ifndef EM_RISCV
#define EM_RISCV 243
#endif
#ifndef EM_ALPHA
#define EM_ALPHA 0x9026
#endif

/* A frame is not larger than this (glibc's default thread stack is 8 MiB). */
#define MAX_FRAME_BYTES (UINT64_C(8) << 20)

/* @p next is a plausible outer stack address for a frame whose stack pointer is @p sp. */
static bool outer_frame(const struct cq_core *core, uint64_t sp, uint64_t next, unsigned align)
{
	if (next <= sp || next - sp > MAX_FRAME_BYTES || next % align)
		return false;
	const struct cq_segment *s = cq_core_segment_at(core, sp);
	/* a frame's top may be the mapping's end (the first frame of a stack) */
	return s && (cq_core_segment_at(core, next) == s || cq_core_segment_at(core, next - 1) == s);
}

static bool code_address(const struct cq_stack_ctx *ctx, uint64_t ra)
{
	return ra && dwfl_addrmodule(ctx->dwfl, ra - 1);
}

/* riscv64 with a frame pointer: s0 is the CFA, the return address is at s0 - 8 and the
 * caller's s0 at s0 - 16 (the psABI's frame record). */
static bool fp_step(const struct cq_stack_ctx *ctx, const struct cq_stack_regs *regs, struct cq_stack_step *out,
		    struct cq_stack_stop *stop)
{
	uint64_t fp, sp, ra, prev;
	if (!cq_stack_reg(regs, ctx->core->target->dwarf_fp, &fp) || !cq_stack_reg(regs, ctx->core->target->dwarf_sp, &sp)) {
		snprintf(stop->why, sizeof(stop->why), "no CFI, and the frame pointer is unknown");
		return false;
	}
	if (!outer_frame(ctx->core, sp, fp, 8) || !ctx->read(ctx->read_ctx, fp - 8, &ra) ||
	    !ctx->read(ctx->read_ctx, fp - 16, &prev) || !code_address(ctx, ra)) {
		snprintf(stop->why, sizeof(stop->why), "no CFI, and s0 (0x%" PRIx64 ") is not a frame pointer", fp);
		return false;
	}
	memset(&out->regs, 0, sizeof(out->regs));
	cq_stack_set(&out->regs, ctx->core->target->dwarf_sp, fp);
	cq_stack_set(&out->regs, ctx->core->target->dwarf_fp, prev);
	out->ra_pc = ra;
	out->cfa = fp;
	out->how = CQ_FOUND_FP;
	return true;
}

/* The initial frame of a leaf function: nothing pushed, the return address still in the
 * link register. Refused when the link register points into the same function (a
 * non-leaf that has called something and kept its own return address on the stack). */
static bool lr_step(const struct cq_stack_ctx *ctx, const struct cq_stack_regs *regs, uint64_t pc,
		    struct cq_stack_step *out, struct cq_stack_stop *stop)
{
	uint64_t lr, sp;
	const struct cq_target *t = ctx->core->target;
	if (!cq_stack_reg(regs, t->dwarf_ra, &lr) || !cq_stack_reg(regs, t->dwarf_sp, &sp) || !code_address(ctx, lr))
		return false;
	struct cq_symref a, b;
	struct cq_error *ea = cq_core_symbolize(ctx->core, pc, &a), *eb = cq_core_symbolize(ctx->core, lr - 1, &b);
	/* one function: one image, one symbol address (a lookup may answer with a copy) */
	bool same = !ea && !eb && a.sym && b.sym && a.image == b.image && a.sym->value == b.sym->value;
	cq_error_destroy(ea);
	cq_error_destroy(eb);
	if (same) {
		snprintf(stop->why, sizeof(stop->why), "no CFI, and the link register points into the same function");
		return false;
	}
	out->regs = *regs;
	out->regs.ok[t->dwarf_ra] = false;
	out->ra_pc = lr;
	out->cfa = sp;
	out->how = CQ_FOUND_LR;
	return true;
}

/* powerpc: r1 points at the back chain word (the caller's r1); the caller's frame keeps
 * the return address in its LR save word (4 bytes in on ppc32, 16 on ppc64). */
static bool backchain_step(const struct cq_stack_ctx *ctx, const struct cq_stack_regs *regs,
			   struct cq_stack_step *out, struct cq_stack_stop *stop)
{
	const struct cq_target *t = ctx->core->target;
	bool is64 = t->elf_class == ELFCLASS64;
	uint64_t sp, chain, ra;
	if (!cq_stack_reg(regs, t->dwarf_sp, &sp) || !ctx->read(ctx->read_ctx, sp, &chain)) {
		snprintf(stop->why, sizeof(stop->why), "no CFI, and the back chain is unreadable");
		return false;
	}
	if (!chain) {
		stop->end = true;
		snprintf(stop->why, sizeof(stop->why), "the back chain ends");
		return false;
	}
	if (!outer_frame(ctx->core, sp, chain, is64 ? 16 : 8) || !ctx->read(ctx->read_ctx, chain + (is64 ? 16 : 4), &ra)) {
		snprintf(stop->why, sizeof(stop->why), "no CFI, and the back chain word 0x%" PRIx64 " is not a frame", chain);
		return false;
	}
	memset(&out->regs, 0, sizeof(out->regs));
	cq_stack_set(&out->regs, t->dwarf_sp, chain);
	out->ra_pc = ra;
	out->cfa = chain;
	out->how = CQ_FOUND_BACKCHAIN;
	return true;
}

/* hppa: coreq runs the CFI itself (mips.c), else reads the unwind descriptor the linker
 * made for every function (hppa.c). A thread stopped in a system call is in the kernel's
 * gateway page (Linux maps it at 0: `ble 0x100(%sr2, %r0)`), which no module covers: the
 * branch left the return address in r31 and moved no stack. The program's entry point
 * was called by no function; nor was clone's child (it calls the thread's start and
 * exits), whose step finds no return address (0, or below the thread's stack) where a
 * parent inside clone's system call would find its caller. */
static bool parisc_step(const struct cq_stack_ctx *ctx, const struct cq_stack_regs *regs, uint64_t pc,
			bool initial, struct cq_stack_step *out, struct cq_stack_stop *stop)
{
	uint64_t r31;
	struct cq_symref ref;
	struct cq_error *err = initial ? NULL : cq_core_symbolize(ctx->core, pc, &ref);
	const char *fn = !initial && !err && ref.sym ? ref.sym->name : NULL;
	cq_error_destroy(err);
	if (fn && !strcmp(fn, "_start")) {
		stop->end = true;
		snprintf(stop->why, sizeof(stop->why), "the program's entry point, called by no function");
		return false;
	}
	if (initial && pc < 0x1000 && cq_stack_reg(regs, 31, &r31) && code_address(ctx, r31 & ~(uint64_t)3)) {
		out->regs = *regs;
		out->ra_pc = r31 & ~(uint64_t)3;
		cq_stack_reg(regs, ctx->core->target->dwarf_sp, &out->cfa);
		out->how = CQ_FOUND_LR;
		return true;
	}
	bool ok = cq_stack_mips_cfi_step(ctx, regs, pc, out, stop);
	/* no FDE: the function's unwind descriptor */
	if (!ok && !stop->why[0])
		ok = cq_stack_hppa_unwind_step(ctx, regs, pc, initial, out, stop);
	if (fn && !strcmp(fn, "__clone") && (!ok || !code_address(ctx, out->ra_pc))) {
		memset(stop, 0, sizeof(*stop));
		stop->end = true;
		snprintf(stop->why, sizeof(stop->why), "clone's child, which starts the thread: called by no function");
		return false;
	}
	if (!ok && !stop->why[0])
		snprintf(stop->why, sizeof(stop->why), "no CFI and no .PARISC.unwind descriptor");
	return ok;
}

/* Whether @p pc is in the program's entry point @p name (glibc's `__start` or `_start`),
 * which the kernel started: then *@p stop says the stack ends there. */
static bool entry_point(const struct cq_stack_ctx *ctx, uint64_t pc, const char *name, struct cq_stack_stop *stop)
{
	struct cq_symref ref;
	struct cq_error *err = cq_core_symbolize(ctx->core, pc, &ref);
	bool entry = !err && ref.sym && ref.sym->name && !strcmp(ref.sym->name, name);
	cq_error_destroy(err);
	if (entry) {
		stop->end = true;
		snprintf(stop->why, sizeof(stop->why), "the program's entry point, called by no function");
	}
	return entry;
}

/* Which clone @p name (a symbol: glibc's __clone, __clone3, their __GI_ aliases, the weak
 * clone; musl's __clone) is: "clone", "clone3", or NULL for another function. */
static const char *clone_function(const char *name)
{
	if (!name)
		return NULL;
	if (!strncmp(name, "__GI_", 5))
		name += 5;
	while (*name == '_')
		name++;
	return !strcmp(name, "clone") ? "clone" : !strcmp(name, "clone3") ? "clone3" : NULL;
}

bool cq_stack_clone_child(struct cq_core *core, const struct cq_thread *th, uint64_t pc, struct cq_stack_stop *stop)
{
	/* The register the system call's result is in, the instruction the child returns
	 * from (glibc's and musl's clone enter the kernel with `syscall` on x86_64, `int $0x80`
	 * on i386, `svc #0` on aarch64), and on x86 the register that keeps the system call's
	 * number (asm/unistd_64.h, unistd_32.h: clone 56 and 120, clone3 435). aarch64's
	 * registers do not keep it: there the function at the pc says it is clone's. */
	const struct cq_target *t = core->target;
	int nr = -1, ret;
	uint64_t clone_nr = 0;
	uint8_t insn[4];
	size_t n;
	if (t->e_machine == EM_X86_64) {
		nr = cq_target_reg_index(t, "orig_rax");
		ret = cq_target_reg_index(t, "rax");
		clone_nr = 56;
		memcpy(insn, "\x0f\x05", n = 2);
	} else if (t->e_machine == EM_386) {
		nr = cq_target_reg_index(t, "orig_eax");
		ret = cq_target_reg_index(t, "eax");
		clone_nr = 120;
		memcpy(insn, "\xcd\x80", n = 2);
	} else if (t->e_machine == EM_AARCH64 && t->little_endian) {
		ret = cq_target_reg_index(t, "x0");
		memcpy(insn, "\x01\x00\x00\xd4", n = 4);
	} else {
		return false;
	}
	if (ret < 0 || !cq_thread_has_reg(core, th, (unsigned)ret) || cq_thread_reg_at(core, th, (unsigned)ret) != 0)
		return false; /* the parent gets the child's tid, or an error */
	const char *which = NULL;
	if (nr >= 0) {
		uint64_t called = cq_thread_has_reg(core, th, (unsigned)nr) ? cq_thread_reg_at(core, th, (unsigned)nr) : 0;
		if (t->elf_class == ELFCLASS32)
			called &= 0xffffffffu;
		which = called == clone_nr ? "clone" : called == 435 ? "clone3" : NULL;
	}
	/* and it has run no instruction since: it stands right after the system call (a
	 * thread that went on without another system call may still have those registers) */
	uint8_t before[4];
	struct cq_error *err = pc >= n ? cq_core_read(core, pc - n, before, n) : NULL;
	bool after_call = pc >= n && !err && !memcmp(before, insn, n);
	cq_error_destroy(err);
	if (!after_call || (nr >= 0 && !which))
		return false;
	if (nr < 0) {
		/* a system call that returned 0 right after it: clone's child only in clone (read
		 * returns 0 at the end of a file) */
		struct cq_symref ref;
		err = cq_core_symbolize(core, pc - n, &ref);
		which = !err && ref.sym ? clone_function(ref.sym->name) : NULL;
		cq_error_destroy(err);
		if (!which)
			return false;
	}
	memset(stop, 0, sizeof(*stop));
	stop->end = true;
	snprintf(stop->why, sizeof(stop->why), "a thread %s made that had not run yet: called by no function", which);
	return true;
}

/* x86_64: glibc's __clone and __clone3 end their FDE before the system call (the child's
 * unwind information there would be wrong) and push nothing, so a parent stopped in the
 * system call had no caller: an OpenMP master caught creating its team lost its whole
 * stack. In the parent the return address is the word at the stack pointer. Only for the
 * thread's first frame (a clone calls nothing), in a function named clone's, or, where
 * libc's symbols are stripped (__clone3 is not exported), right after a `syscall` whose
 * number the thread's orig_rax says was clone or clone3; and only where that word is in
 * code. */
static bool clone_parent_step(const struct cq_stack_ctx *ctx, const struct cq_stack_regs *regs, uint64_t pc,
			      bool initial, struct cq_stack_step *out)
{
	const struct cq_target *t = ctx->core->target;
	uint64_t sp, ra;
	struct cq_symref ref;
	if (!initial || !cq_stack_reg(regs, t->dwarf_sp, &sp))
		return false;
	struct cq_error *err = cq_core_symbolize(ctx->core, pc, &ref);
	bool in_clone = !err && ref.sym && clone_function(ref.sym->name);
	cq_error_destroy(err);
	int nr = cq_target_reg_index(t, "orig_rax");
	if (!in_clone && ctx->thread && nr >= 0 && cq_thread_has_reg(ctx->core, ctx->thread, (unsigned)nr)) {
		uint64_t called = cq_thread_reg_at(ctx->core, ctx->thread, (unsigned)nr);
		uint8_t before[2];
		if ((called == 56 || called == 435) && pc >= 2 && !(err = cq_core_read(ctx->core, pc - 2, before, 2)))
			in_clone = before[0] == 0x0f && before[1] == 0x05;
		cq_error_destroy(err);
	}
	if (!in_clone || !ctx->read(ctx->read_ctx, sp, &ra) || !code_address(ctx, ra))
		return false;
	out->regs = *regs;
	cq_stack_set(&out->regs, t->dwarf_sp, sp + 8);
	out->ra_pc = ra;
	out->cfa = sp + 8;
	out->how = CQ_FOUND_STACK_TOP;
	return true;
}

bool cq_stack_fallback(const struct cq_stack_ctx *ctx, const struct cq_stack_regs *regs, uint64_t pc,
		       bool initial, struct cq_stack_step *out, struct cq_stack_stop *stop)
{
	memset(stop, 0, sizeof(*stop));
	switch (ctx->core->target->e_machine) {
	case EM_ARM:
		if (cq_stack_exidx_step(ctx, regs, pc, out, stop) || stop->end)
			return !stop->end;
		/* no entry covers the function (the linker adds none before the first): its
		 * prologue, where its start is known */
		if (cq_stack_arm_prologue_step(ctx, regs, pc, initial, out, stop))
			return true;
		return false;
	case EM_PPC:
	case EM_PPC64:
		return backchain_step(ctx, regs, out, stop);
	case EM_68K:
		return cq_stack_m68k_prologue_step(ctx, regs, pc, initial, out, stop);
	case EM_RISCV:
		/* the prologue where the function is known; else a leaf's initial frame (its s0
		 * is still its caller's: following it would silently skip the caller); else s0 */
		if (cq_stack_riscv_prologue_step(ctx, regs, pc, initial, out, stop))
			return true;
		if (initial && lr_step(ctx, regs, pc, out, stop))
			return true;
		struct cq_stack_stop first = *stop; /* the prologue's reason, if it had one */
		if (fp_step(ctx, regs, out, stop))
			return true;
		if (first.no_code)
			*stop = first;
		return false;
	case EM_MIPS: {
		/* glibc's MIPS entry point has no CFI and no caller: the kernel started it */
		if (entry_point(ctx, pc, "__start", stop))
			return false;
		/* coreq runs the CFI itself (mips.c); a function without any: its prologue
		 * where its start is known, else a leaf's ra at the thread's first frame */
		if (cq_stack_mips_cfi_step(ctx, regs, pc, out, stop))
			return true;
		if (stop->why[0])
			return false;
		if (cq_stack_mips_prologue_step(ctx, regs, pc, initial, out, stop))
			return true;
		if (stop->no_code)
			return false;
		struct cq_stack_stop prologue = *stop; /* its reason, if it had one */
		memset(stop, 0, sizeof(*stop));
		if (initial && lr_step(ctx, regs, pc, out, stop))
			return true;
		if (prologue.why[0])
			*stop = prologue;
		else if (!stop->why[0])
			snprintf(stop->why, sizeof(stop->why), "no CFI, and no symbol gives the function's start");
		return false;
	}
	case EM_PARISC:
		return parisc_step(ctx, regs, pc, initial, out, stop);
	case EM_SPARCV9:
		return cq_stack_sparc_window_step(ctx, regs, pc, initial, out, stop);
	case EM_X86_64:
		if (clone_parent_step(ctx, regs, pc, initial, out))
			return true;
		snprintf(stop->why, sizeof(stop->why), "no CFI, and libdwfl's fallback for %s found no frame",
			 ctx->core->target->name);
		return false;
	case EM_ALPHA: {
		/* glibc's alpha entry point: its CFI leaves no caller (the kernel started it) */
		if (entry_point(ctx, pc, "_start", stop))
			return false;
		/* coreq runs the CFI itself (mips.c); a function without any: a leaf's ra at
		 * the thread's first frame */
		if (cq_stack_mips_cfi_step(ctx, regs, pc, out, stop))
			return true;
		if (stop->why[0])
			return false;
		if (initial && lr_step(ctx, regs, pc, out, stop))
			return true;
		if (!stop->why[0])
			snprintf(stop->why, sizeof(stop->why), "no CFI (alpha has no frame-pointer chain the ABI defines)");
		return false;
	}
	default:
		snprintf(stop->why, sizeof(stop->why), "no CFI, and libdwfl's fallback for %s found no frame",
			 ctx->core->target->name);
		return false;
	}
}

const char *cq_found_by_name(enum cq_found_by how)
{
	static const char *const names[] = {
		[CQ_FOUND_INITIAL] = "initial",	 [CQ_FOUND_CFI] = "cfi",	[CQ_FOUND_FP] = "frame-pointer",
		[CQ_FOUND_BACKCHAIN] = "back-chain", [CQ_FOUND_EXIDX] = "exidx",	[CQ_FOUND_LR] = "link-register", [CQ_FOUND_PROLOGUE] = "prologue",
		[CQ_FOUND_SIGNAL] = "signal",	 [CQ_FOUND_INLINE] = "inline", [CQ_FOUND_PARISC_UNWIND] = "parisc-unwind",
		[CQ_FOUND_STACK_TOP] = "stack-top",
	};
	return names[how];
}
