/* SPDX-License-Identifier: MIT */
/*
 * What the files of stack/ share: a frame's registers by DWARF number, and the unwind
 * steps coreq takes itself where libdwfl has no CFI for a frame (ARM EHABI tables,
 * riscv64 prologues and frame pointers, the powerpc back chain, a leaf's link register). libdwfl does
 * the CFI frames; when it stops, the walk asks for one of these steps and restarts libdwfl
 * from the registers it gives.
 */
#ifndef COREQ_STACK_INTERNAL_H
#define COREQ_STACK_INTERNAL_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>

#include "corelib/core.h"
#include "stack.h"

/* Inlined calls shown per physical frame at most (describe.c). */
#define CQ_STACK_MAX_INLINED 64

/* DWARF register numbers kept per frame: every general register of the 9 targets and
 * powerpc's LR (65). Higher numbers (vector registers) are not carried. */
#define CQ_STACK_NREGS 72

struct cq_stack_regs {
	uint64_t v[CQ_STACK_NREGS];
	bool ok[CQ_STACK_NREGS];
};

static inline bool cq_stack_reg(const struct cq_stack_regs *r, int regno, uint64_t *v)
{
	if (regno < 0 || regno >= CQ_STACK_NREGS || !r->ok[regno])
		return false;
	*v = r->v[regno];
	return true;
}

static inline void cq_stack_set(struct cq_stack_regs *r, int regno, uint64_t v)
{
	if (regno >= 0 && regno < CQ_STACK_NREGS) {
		r->v[regno] = v;
		r->ok[regno] = true;
	}
}


/* The result of one step of coreq's own: the caller's registers (pc in ra_pc), and the
 * callee's CFA when the step knows it. */
struct cq_stack_step {
	struct cq_stack_regs regs;
	uint64_t ra_pc;       /* the caller's pc: a return address */
	uint64_t cfa;         /* the callee's canonical frame address */
	enum cq_found_by how;
};

/* Why a step could not be taken; end says the ABI's outermost frame was reached (a clean
 * end, not an error). */
struct cq_stack_stop {
	bool end;
	bool no_code;   /* the step needed the function's code, which the core lacks */
	/* why is the whole stop reason: neither the ABI's end nor something missing to
	 * install (sparc64: a window whose saved %i6 is 0, outermost or never flushed) */
	bool verbatim;
	char why[200];
};

/* Reads one target word at addr (zero-extended, host order); false when it is not in the
 * core. */
typedef bool (*cq_stack_read_fn)(void *ctx, uint64_t addr, uint64_t *val);

struct cq_stack_mips_cfi;
struct cq_stack_units;
struct cq_stack_loops;

struct cq_stack_ctx {
	struct cq_core *core;
	Dwfl *dwfl;
	cq_stack_read_fn read;
	void *read_ctx;
	bool system_lines;   /* DWARF lines in system modules too (stack.h) */
	struct cq_frame_infos *cache; /* descriptions by pc and lookup address (describe.c) */
	struct cq_stack_mips_cfi *mips; /* MIPS and hppa: the modules' CFI (mips.c), else NULL */
	struct cq_stack_units *units;   /* the modules' address -> unit maps (unit.c), or NULL */
	const struct cq_thread *thread; /* the thread being walked, or NULL */
	struct cq_stack_loops *loops;   /* the walk's loop-variable finds and budget (values.c), or NULL */
};

/* MIPS, hppa and alpha CFI (mips.c): libdw runs no MIPS or PA-RISC CFI itself (no
 * backend), nor alpha's (its backend has no unwinder). Whether coreq walks a target's
 * stacks so; the cache of each module's CFI (create returns NULL when out of memory). */
static inline bool cq_stack_own_cfi(const struct cq_target *t)
{
	return t->e_machine == 8 /* EM_MIPS */ || t->e_machine == 15 /* EM_PARISC */ ||
	       t->e_machine == 0x9026 /* EM_ALPHA */;
}
struct cq_stack_mips_cfi *cq_stack_mips_cfi_create(void);
void cq_stack_mips_cfi_destroy(struct cq_stack_mips_cfi *c);

/* One MIPS or hppa step through the CFI of @p at's module. False with no stop reason when the
 * module has no CFI for @p at; with one when the CFI does not unwind (stop->end: the CFI
 * marks the outermost frame). */
bool cq_stack_mips_cfi_step(const struct cq_stack_ctx *ctx, const struct cq_stack_regs *regs, uint64_t at,
			    struct cq_stack_step *out, struct cq_stack_stop *stop);

/* One hppa step through the .PARISC.unwind descriptor covering @p pc (hppa.c). False with
 * no stop reason when no descriptor covers it; with one when the descriptor does not
 * unwind (stop->end: it marks the outermost frame). @p initial: the thread's first frame
 * (whose rp register is still known). */
bool cq_stack_hppa_unwind_step(const struct cq_stack_ctx *ctx, const struct cq_stack_regs *regs, uint64_t pc,
			       bool initial, struct cq_stack_step *out, struct cq_stack_stop *stop);

/* The C library, the dynamic linker, the vDSO (by the image's base name; NULL counts). */
bool cq_stack_system_module(const char *base);

/*
 * One step from the frame with registers @p regs at @p pc (its lookup address: pc - 1 for
 * a return address), @p initial when it is the thread's first frame. Chooses by
 * architecture: EHABI on arm (the prologue where a function has no entry), the back chain on
 * powerpc, the prologue on m68k, the register windows on sparc64; on riscv64 the prologue, a leaf's
 * link register (initial frame), then the frame pointer. True with *@p out filled, or false
 * with *@p stop saying why.
 */
bool cq_stack_fallback(const struct cq_stack_ctx *ctx, const struct cq_stack_regs *regs, uint64_t pc,
		       bool initial, struct cq_stack_step *out, struct cq_stack_stop *stop);

/*
 * x86, aarch64: whether thread @p th, at @p pc, is a child the kernel made with clone or
 * clone3 that had not run when the core was dumped (chain.c): the system call returned 0
 * and @p pc follows its instruction; on x86 the call was clone or clone3 by its number,
 * on aarch64 (no number in its registers) the function is clone's by its symbol. No
 * function called such a thread, yet an unwinder finds a caller: on x86 glibc's __clone
 * and __clone3 have no CFI there (they end it before the call: the child's would be wrong;
 * musl's clone has none) and libdwfl follows the frame pointer the child inherited; on
 * aarch64 the CFI is the parent's, whose return address the child's x30 still holds.
 * True with *@p stop saying so (the stack's end).
 */
bool cq_stack_clone_child(struct cq_core *core, const struct cq_thread *th, uint64_t pc, struct cq_stack_stop *stop);

/* riscv64 prologue analysis (prologue.c): one step from a function that has a symbol
 * (its start) but no CFI. False without a stop reason when there is nothing to analyze. */
bool cq_stack_riscv_prologue_step(const struct cq_stack_ctx *ctx, const struct cq_stack_regs *regs, uint64_t pc,
				  bool initial, struct cq_stack_step *out, struct cq_stack_stop *stop);

/* MIPS prologue analysis (prologue.c), for functions without CFI; for one without a
 * symbol either, from the stack adjustment found searching backwards from the pc. */
bool cq_stack_mips_prologue_step(const struct cq_stack_ctx *ctx, const struct cq_stack_regs *regs, uint64_t pc,
				 bool initial, struct cq_stack_step *out, struct cq_stack_stop *stop);

/* Thumb-2 prologue analysis (prologue.c), for functions without an .ARM.exidx entry. */
bool cq_stack_arm_prologue_step(const struct cq_stack_ctx *ctx, const struct cq_stack_regs *regs, uint64_t pc,
				bool initial, struct cq_stack_step *out, struct cq_stack_stop *stop);

/* sparc64 register-window step (sparc.c), for functions without CFI: a leaf's %o7 before
 * its `save`, else the caller's window from the save area at %i6 + 2047. A window whose
 * saved %i6 is 0 ends the walk with CQ_STACK_SPARC_I6_ZERO, whichever step read it; the walk
 * then says whether that is where a stack starts (cq_stack_sparc_outermost()). */
#define CQ_STACK_SPARC_I6_ZERO "its register window saved %i6 0"
bool cq_stack_sparc_window_step(const struct cq_stack_ctx *ctx, const struct cq_stack_regs *regs, uint64_t pc,
				bool initial, struct cq_stack_step *out, struct cq_stack_stop *stop);
/* Whether a stack may start in @p function (NULL: unknown): where a window that saved %i6 0
 * is the outermost (_start, the clone child, the functions they call first). Elsewhere a
 * zero %i6 is a save area never written (the window was not flushed): the stack is cut
 * short. */
bool cq_stack_sparc_outermost(const char *function);

/* m68k prologue analysis (prologue.c), for functions with a symbol and no CFI. */
bool cq_stack_m68k_prologue_step(const struct cq_stack_ctx *ctx, const struct cq_stack_regs *regs, uint64_t pc,
				 bool initial, struct cq_stack_step *out, struct cq_stack_stop *stop);

/* ARM EHABI (exidx.c): one step through the .ARM.exidx / .ARM.extab of @p pc's module. */
bool cq_stack_exidx_step(const struct cq_stack_ctx *ctx, const struct cq_stack_regs *regs, uint64_t pc,
			 struct cq_stack_step *out, struct cq_stack_stop *stop);

/* The address -> compilation unit maps of a walk's modules (unit.c), made where a module's
 * .debug_aranges does not hold an address (elf/cu_map.h); freed before the Dwfl they point
 * into. create returns NULL when out of memory. */
struct cq_stack_units *cq_stack_units_create(json_t *problems);
void cq_stack_units_destroy(struct cq_stack_units *u);

/* The unit of @p mod (image @p img, or NULL) that holds module address @p at, into *@p mem
 * (returned), with the module's bias in *@p bias; NULL when none does. Through the
 * aranges, else the unit map of @p u (none when @p u is NULL). A unit whose own ranges
 * leave @p at out is not it. Where the image's debug sections are compressed with zstd
 * (libelf 0.188 cannot expand them: libdwfl's module has no DWARF), from coreq's own
 * Dwarf of them, expanded (elf/zsections.h); one that cannot be read is a problem in
 * @p u's list. */
struct cq_image;
Dwarf_Die *cq_stack_unit_at(struct cq_stack_units *u, const struct cq_core *core, const struct cq_image *img,
			    Dwfl_Module *mod, Dwarf_Addr at, Dwarf_Addr *bias, Dwarf_Die *mem);

/* The unit that holds @p cu's scopes: a skeleton's split unit (split DWARF: the skeleton
 * has the line table, the .dwo the functions and inlined calls) into *@p mem, else @p cu
 * itself. libdw 0.188 looks for a .dwo beside the file its Dwarf was opened from and in
 * the unit's build directory (DW_AT_comp_dir), nowhere else, and reads no .dwp: a split
 * unit not found is a problem of @p img in @p u's list, once, saying where it is needed
 * (or that a .dwp beside the file cannot be read). */
Dwarf_Die *cq_stack_scope_unit(struct cq_stack_units *u, const struct cq_core *core, const struct cq_image *img,
			       Dwarf_Die *cu, Dwarf_Die *mem);

/* The scopes at module address @p addr of @p unit, innermost first, into *@p scopes
 * (caller frees): dwarf_getscopes, but through an inlined call out to the physical function
 * that holds it, the lexical blocks inside that call kept (describe.c); their number, <= 0
 * when none. */
int cq_stack_concrete_scopes(Dwarf_Die *unit, Dwarf_Addr addr, Dwarf_Die **scopes);

/* Both readers below take, besides libdwfl's @p state, @p same: preserved registers the
 * walk carried from inner frames where libdwfl lost them (unwind.c: elfutils 0.188's
 * x86_64 ABI rules mark rax preserved instead of rbx), or NULL. */

/* Argument @p arg of the call physical frame @p f is making, from its function's call
 * site at f->pc (values.c; stack.h's struct cq_stack_arg), with the frame's registers
 * from @p state: into *@p value, else false and why. */
struct cq_frame;
bool cq_stack_call_argument(const struct cq_stack_ctx *ctx, Dwfl_Frame *state, const struct cq_stack_regs *same,
			    const struct cq_frame *f, unsigned arg, uint64_t *value, char *why, size_t why_size);

/* The value of parameter @p name of logical frame @p nth (0: the innermost inlined call
 * of physical frame @p f, ..., the function itself last) at lookup address @p at, from
 * the frame's own DWARF (values.c; stack.h's struct cq_stack_arg): a register's value, or
 * a word read where the location says; else false and why (no DWARF, no such parameter,
 * optimized out at @p at, known only as its entry value). */
bool cq_stack_frame_parameter(const struct cq_stack_ctx *ctx, Dwfl_Frame *state, const struct cq_stack_regs *same,
			      const struct cq_frame *f, uint64_t at, unsigned nth, const char *name, uint64_t *value,
			      char *why, size_t why_size);

/* The integer variables of the loops (lexical blocks) around lookup address @p at of
 * physical frame @p f, per logical frame (@p nframes: the inlined calls, innermost first,
 * then the function): a new array of that many (fewer where DWARF ends sooner), each
 * [{name, value}] outermost loop first (the innermost CQ_STACK_MAX_LOOP_VARS), or null;
 * NULL without DWARF (values.c). What a frame's registers cannot give (a variable in a
 * register the call did not preserve, or optimized out at @p at) is left out.
 *
 * Which variables are loops' is found from the DWARF and the line table once per walk
 * (ctx->loops): per lookup address its scopes, per lexical block its loop variables; the
 * frames of a recursion, or threads parked in one call, read only their values. The
 * search has a budget: DIEs and line-table rows looked at, CQ_STACK_LOOP_FRAME_BUDGET for
 * one frame and CQ_STACK_LOOP_WALK_BUDGET for the walk (one process); a block it could
 * not finish shows no variables, and the walk's problems say how many frames were cut
 * (cq_stack_loops_destroy). Without ctx->loops, each frame searches on its own, within the
 * frame's budget, and nothing is said. */
#define CQ_STACK_MAX_LOOP_VARS 8
#define CQ_STACK_LOOP_FRAME_BUDGET 200000
#define CQ_STACK_LOOP_WALK_BUDGET 2000000
json_t *cq_stack_loop_variables(const struct cq_stack_ctx *ctx, Dwfl_Frame *state, const struct cq_stack_regs *same,
				const struct cq_frame *f, uint64_t at, unsigned nframes);

/* A walk's loop-variable finds and budget (for ctx->loops), the problem said into
 * @p problems (or nowhere: NULL) when destroyed; create returns NULL when out of memory.
 * Destroy it before the Dwfl: it holds DIEs of the walk's modules. A test sets smaller
 * budgets with COREQ_TEST_LOOP_BUDGET=FRAME[:PROCESS]. */
struct cq_stack_loops *cq_stack_loops_create(json_t *problems);
void cq_stack_loops_destroy(struct cq_stack_loops *l);

/* The descriptions of a walk's frames (describe.c): made once per walk, freed with the
 * stacks that point into it; create returns NULL when out of memory. */
struct cq_frame_infos *cq_frame_infos_create(void);
void cq_frame_infos_free(struct cq_frame_infos *c);

/*
 * Appends the description of one physical frame to @p ts (describe.c): module, function
 * (see cq_stack_name_frames), source line and, before it, the inlined calls at that address, each marked. @p at is
 * the lookup address (pc - 1 for a return address). Returns the physical frame's index in
 * ts->frames, so the walk can add what it learns later (its CFA), or -1 when out of memory.
 */
int cq_stack_describe(const struct cq_stack_ctx *ctx, struct cq_thread_stack *ts, uint64_t pc, uint64_t at,
		      enum cq_found_by how);

/* Names the functions of the frames described so far (describe.c): cq_stack_describe()
 * leaves a frame's function to this when its image has symbols, so that the frames of a
 * walk are looked up together (one scan of libc's table for all of them, not one each).
 * Called before a frame's function is read: at the end of the walks, and for a stop
 * reason that names its frame. False when out of memory (the frames stay unnamed). */
bool cq_stack_name_frames(const struct cq_stack_ctx *ctx);

/* No target's CFI names a DWARF register beyond this (powerpc's vector registers end near
 * 1200); a larger number is crafted (cficheck.c). */
#define CQ_STACK_MAX_CFI_REG 4096
/* Nor nests DW_CFA_remember_state deeper than this; cq_stack_cfi_bad_register() returns
 * CQ_STACK_CFI_DEEP for CFI that does. */
#define CQ_STACK_MAX_CFI_STATES 32
#define CQ_STACK_CFI_DEEP UINT64_MAX
/* A CIE whose return-address column libdwfl's backend does not map (powerpc: beyond 112
 * but 1200-1231): libdwfl 0.188's handle_cfi then returns without freeing the frame it
 * looked up, a leak per lookup (fuzz_stack found it). */
#define CQ_STACK_CFI_BAD_RA (UINT64_MAX - 1)
/* A CFI expression libdwfl 0.188's evaluator leaks its stack on: an opcode it does not
 * implement, a backward branch, or more than CQ_STACK_MAX_CFI_EXPR bytes (its 4096-step
 * limit) (cficheck.c). */
#define CQ_STACK_CFI_BAD_EXPR (UINT64_MAX - 2)
#define CQ_STACK_MAX_CFI_EXPR 4096

/* A .eh_frame_hdr whose values use an encoding coreq does not follow libdw in (aligned,
 * indirect, LEB128; no linker writes one): the module's .eh_frame is not used. */
#define CQ_STACK_CFI_BAD_HDR (UINT64_MAX - 3)

/* What cficheck.c knows of one module's CFI: the .eh_frame view libdw 0.188 makes of the
 * module's file (dwarf_getcfi_elf: the .eh_frame section, else PT_GNU_EH_FRAME) and which
 * of its entries were checked. NULL when out of memory. */
struct cq_cfi_guard *cq_stack_cfi_guard(Dwfl_Module *mod);
void cq_stack_cfi_guard_free(struct cq_cfi_guard *g);

/* Before libdwfl looks module address @p a up in the module's .eh_frame: the register
 * number beyond CQ_STACK_MAX_CFI_REG that the entry libdw would run for it names, or one
 * of CQ_STACK_CFI_DEEP/BAD_RA/BAD_EXPR/BAD_HDR; 0 when it is harmless. With a binary search
 * table, only the entry libdw's search finds (and its CIE) is checked, as libdw looks it
 * up; without one, libdw may run any entry its linear walk reaches, and all are checked,
 * once. */
uint64_t cq_stack_cfi_bad_at(struct cq_cfi_guard *g, uint64_t a);

/* The same for the module's .debug_frame (its separate debug file's, or its own when the
 * file carries its DWARF), searched linearly: every entry, once; the DWARF is loaded, so
 * only when .eh_frame has no entry for the pc, as libdwfl looks. */
uint64_t cq_stack_cfi_bad_debug(struct cq_cfi_guard *g);

#endif
