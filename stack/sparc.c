/* SPDX-License-Identifier: MIT */
/* sparc64 register-window step (internal.h), for a frame without CFI: the back chain the
 * V9 ABI defines. A function's `save` gives it a new window: its %i6 (fp) is the caller's
 * %sp and its %i7 the address of the caller's call, which returns to %i7 + 8. Every
 * window's l0-l7 and i0-i7 are spilled, when the window is flushed, into the 16-word save
 * area at its own %sp + 2047 (the stack bias), so a caller's %i6 and %i7 are read there.
 * A leaf that has not run its `save` yet still has its caller's window: its return
 * address is %o7 + 8 and its caller's registers are its own. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "corelib/image.h"
#include "internal.h"

#define BIAS 2047
#define MAX_BACK 64 /* instructions searched backwards for a `save` */
#define O6 14
#define O7 15
#define L0 16
#define I6 30
#define I7 31

/* save (op 2, op3 0x3c) and restore (op3 0x3d); `ret`/`retl` are jmpl %i7+8 / %o7+8. */
static bool is_save(uint32_t in) { return (in & 0xc1f80000u) == 0x81e00000u; }
static bool is_restore(uint32_t in) { return (in & 0xc1f80000u) == 0x81e80000u; }
static bool is_return(uint32_t in) { return in == 0x81c7e008u || in == 0x81c3e008u; }

/* Whether the function at @p pc has run its `save`: searched backwards from the pc to its
 * start (its symbol) or to the end of the function before it. -1 when its code is not in
 * the core. */
static int after_save(const struct cq_stack_ctx *ctx, uint64_t pc)
{
	uint64_t lo = pc >= 4 * MAX_BACK ? pc - 4 * MAX_BACK : 0;
	struct cq_symref ref;
	struct cq_error *err = cq_core_symbolize(ctx->core, pc, &ref);
	if (!err && ref.sym && ref.image && ref.image->bias_known) {
		uint64_t start = ref.image->bias + ref.sym->value;
		if (start <= pc && start > lo)
			lo = start;
	}
	cq_error_destroy(err);
	uint8_t code[4 * MAX_BACK];
	size_t n = (size_t)(pc - lo);
	if (!n)
		return 0;
	if ((err = cq_core_read(ctx->core, lo, code, n))) {
		cq_error_destroy(err);
		return -1;
	}
	for (size_t at = n; at >= 4; at -= 4) {
		uint32_t in = (uint32_t)code[at - 4] << 24 | (uint32_t)code[at - 3] << 16 | (uint32_t)code[at - 2] << 8 |
			      code[at - 1];
		if (is_save(in))
			return 1;
		if (is_restore(in) || is_return(in))
			return 0;
	}
	return 0;
}

bool cq_stack_sparc_window_step(const struct cq_stack_ctx *ctx, const struct cq_stack_regs *regs, uint64_t pc,
				bool initial, struct cq_stack_step *out, struct cq_stack_stop *stop)
{
	uint64_t sp, fp, ret;
	if (!cq_stack_reg(regs, O6, &sp)) {
		snprintf(stop->why, sizeof(stop->why), "no CFI, and the stack pointer is unknown");
		return false;
	}
	int saved = initial ? after_save(ctx, pc) : 1;
	if (saved < 0) {
		snprintf(stop->why, sizeof(stop->why), "no CFI, and its code is not in the core to find its `save` (a bundle "
			 "carries no code)");
		stop->no_code = true;
		return false;
	}
	if (!saved) {
		/* a leaf before its `save`: the caller's window is still the current one */
		if (!cq_stack_reg(regs, O7, &ret)) {
			snprintf(stop->why, sizeof(stop->why), "no CFI, a leaf, and its %%o7 is unknown");
			return false;
		}
		out->regs = *regs;
		out->regs.ok[O7] = false;
		out->ra_pc = ret + 8;
		out->cfa = sp + BIAS;
		out->how = CQ_FOUND_LR;
		return true;
	}
	if (!cq_stack_reg(regs, I6, &fp) || !cq_stack_reg(regs, I7, &ret)) {
		snprintf(stop->why, sizeof(stop->why), "no CFI, and its window's %%i6 and %%i7 are unknown");
		return false;
	}
	if (!fp) {
		stop->verbatim = true;
		snprintf(stop->why, sizeof(stop->why), "%s", CQ_STACK_SPARC_I6_ZERO);
		return false;
	}
	/* the caller's frame is above this one, by at most a thread stack's size */
	if (fp <= sp || fp - sp > (UINT64_C(8) << 20)) {
		snprintf(stop->why, sizeof(stop->why), "no CFI, and its %%i6 0x%" PRIx64 " is not a frame above its %%sp 0x%" PRIx64,
			 fp, sp);
		return false;
	}
	/* the caller's window, spilled at its %sp (our %fp) + bias: its l0-l7, i0-i7 */
	memset(&out->regs, 0, sizeof(out->regs));
	for (int r = 0; r < 16; r++) {
		uint64_t v;
		if (!ctx->read(ctx->read_ctx, fp + BIAS + 8 * (uint64_t)r, &v)) {
			snprintf(stop->why, sizeof(stop->why), "the caller's window save area at 0x%" PRIx64
				 " is not in the core", fp + BIAS);
			return false;
		}
		cq_stack_set(&out->regs, L0 + r, v);
	}
	cq_stack_set(&out->regs, O6, fp);
	cq_stack_set(&out->regs, O7, ret);
	out->ra_pc = ret + 8;
	out->cfa = fp + BIAS;
	out->how = CQ_FOUND_BACKCHAIN;
	return true;
}

bool cq_stack_sparc_outermost(const char *function)
{
	static const char *const starts[] = {"_start", "__libc_start_main", "__libc_start_call_main", "__clone",
					     "clone", "__clone3", "start_thread"};
	for (size_t i = 0; function && i < sizeof(starts) / sizeof(starts[0]); i++)
		if (!strcmp(function, starts[i]))
			return true;
	return false;
}
