/* SPDX-License-Identifier: MIT */
/**
 * @file stack.h
 * Backtraces of a core's threads: elfutils' libdwfl unwinder driven by coreq's model of
 * the core, never by libdwfl's own discovery of it. The modules are the images corelib
 * found (their verified files, the vDSO from the core's memory), memory is read through
 * cq_core_read() (compressed cores, bundles, file-backed text, qemu cores alike), and each
 * thread's initial registers come from its prstatus block through the target table's
 * DWARF numbers. Where a frame has no CFI, coreq takes one step of its own and restarts
 * libdwfl from the caller (internal.h): ARM EHABI tables, the powerpc back chain, riscv64
 * and Thumb-2 prologue analysis, riscv64 frame pointers, a leaf's link register. Each frame
 * says how it was found. Knows no OpenMP and no MPI.
 *
 * Return addresses are symbolized at pc - 1 (the call, not the instruction after it),
 * except in the initial frame and after a signal frame, where the pc is exact.
 */
#ifndef COREQ_STACK_H
#define COREQ_STACK_H

#include <jansson.h>

#include "corelib/core.h"

/** Frames per thread unless the caller says otherwise. */
#define CQ_STACK_DEFAULT_MAX_FRAMES 256

/** What a report walks. */
struct cq_stack_options {
	int32_t tid;          /**< only this thread (0: every thread) */
	unsigned max_frames;  /**< physical frames per thread (0: CQ_STACK_DEFAULT_MAX_FRAMES) */
	/** Stop every thread but the crashing one at its user frame (what `info` and `threads`
	 * show): the walk costs a few frames per thread, not the whole stack. */
	bool to_user_frame;
	/** Source lines and inlined calls in system modules (stack.h's user frame) too. Off
	 * by default: a distribution's libc debug file is megabytes of compressed DWARF, 100 ms
	 * to inflate, for lines few people read; the program's own modules always get them. */
	bool system_lines;
	/** When not NULL: the value of one argument of a call a frame is making, read during
	 * the walk (the frame's registers exist only then); see struct cq_stack_arg. */
	struct cq_stack_arg *arg;
	/** The integer variables of the loops around each frame's pc in the program's modules
	 * (C's `for (int i ...)`: a lexical block's variable whose declaring line's statement
	 * begins again after the body's, values.c), read during the walk with the frame's
	 * registers: the frames' "loop_variables" in JSON, which the job view orders ranks
	 * stopped at one line by (STAT's temporal ordering). Not found: Fortran's DO
	 * variables (the function's, not a block's), and loops whose line table does not
	 * show the latch on the `for` line (clang 14 at -O2 folds it into the body's rows). */
	bool loop_variables;
};

/**
 * A request to read, during a walk, argument @p arg (0: the first) of the call that frame
 * @p frame of thread @p tid is making: what the caller's DWARF says of it at the call's
 * return address (DW_TAG_call_site_parameter, its DW_AT_call_value evaluated with the
 * frame's recovered registers; stack/values.c). The callee needs no debug information:
 * an MPI_Barrier's communicator is read from the program's frame that calls it. Only
 * arguments passed in registers (targets' dwarf_args: x86_64, aarch64).
 */
struct cq_stack_arg {
	int32_t tid;
	unsigned frame;     /**< the calling frame's index (inlined frames counted) */
	unsigned arg;
	bool found;         /**< out: @p value holds the argument */
	uint64_t value;
	char why[200];      /**< out: why not, when the frame was reached but not read */
	/** Also, when not NULL: parameter @p param of the function of frame @p param_frame
	 * (the callee, e.g. libmpi's PMPI_Barrier: its own DWARF, from a debug file), read
	 * with that frame's registers where its location list puts it at the frame's pc. */
	const char *param;
	unsigned param_frame;
	bool param_found;   /**< out: @p param_value holds it */
	uint64_t param_value;
	char param_why[200]; /**< out: why not, when the frame was reached but not read */
};

/** How a frame was found (the JSON's found_by, cq_found_by_name()). */
enum cq_found_by {
	CQ_FOUND_INITIAL,   /**< the thread's registers */
	CQ_FOUND_CFI,       /**< .eh_frame / .debug_frame of the callee (libdwfl) */
	CQ_FOUND_FP,        /**< frame-pointer chain (libdwfl's fallback, or riscv64's) */
	CQ_FOUND_BACKCHAIN, /**< powerpc / s390x back chain */
	CQ_FOUND_EXIDX,     /**< ARM EHABI .ARM.exidx / .ARM.extab */
	CQ_FOUND_LR,        /**< a leaf's return address still in the link register */
	CQ_FOUND_PROLOGUE,  /**< prologue analysis (riscv64, Thumb-2): the stack adjustment and saves */
	CQ_FOUND_SIGNAL,    /**< the interrupted frame beyond a signal trampoline */
	CQ_FOUND_INLINE,    /**< an inlined call inside the physical frame that follows */
	CQ_FOUND_PARISC_UNWIND, /**< hppa's .PARISC.unwind descriptors (hppa.c) */
	CQ_FOUND_STACK_TOP, /**< the return address at the stack pointer: a function that pushed nothing (x86_64 clone) */
};

/** "initial", "cfi", "frame-pointer", ... */
const char *cq_found_by_name(enum cq_found_by how);

/** What is known at one address (module, function, source line): shared by every frame
 * there, in every thread (threads parked in the same call have the same return
 * addresses). Strings are the walk's own copies; NULL is unknown. */
struct cq_frame_info {
	const char *module;          /**< the image's base name */
	bool has_module_offset;
	uint64_t module_offset;      /**< pc - the image's bias */
	const char *function;        /**< the symbol (raw, as in the file) */
	/** The name for people: demangled (C++, Rust), or a Fortran procedure's source name
	 * from DWARF ("solver::step" for __solver_MOD_step); NULL when it is the symbol's */
	const char *demangled;
	bool has_function_offset;
	uint64_t function_offset;    /**< pc - the symbol's address (physical frames only) */
	const char *file;            /**< source file, NULL when no line is known */
	int line;                    /**< > 0 when known */
};

/** One frame of a stack, innermost first. */
struct cq_frame {
	unsigned index;              /**< in the thread's list, inlined frames included */
	uint64_t pc;
	bool has_cfa;
	uint64_t cfa;
	bool inlined;                /**< an inlined call inside the physical frame after it */
	bool signal_frame;           /**< its CFI marks a signal trampoline */
	enum cq_found_by found_by;
	const struct cq_frame_info *info;
};

/** One thread's stack and why its walk stopped. */
struct cq_thread_stack {
	int32_t tid;
	bool crashing;
	struct cq_frame *frames;
	unsigned nframes, cap;
	int user_frame;              /**< index of the user frame, -1 if none was reached */
	char *stop;                  /**< why the walk stopped, for people (owned) */
	bool cut_short;              /**< by something missing: a problem for `bt` */
	/** With cq_stack_options.loop_variables: frame index (decimal) -> [{name, value}],
	 * outermost loop first, for the frames that have any; else NULL (owned) */
	json_t *loop_vars;
};

/** The stacks of a core's threads (cq_stack_walk_frames()); free with cq_stacks_free(). */
struct cq_stacks {
	struct cq_thread_stack *threads; /**< the crashing thread first */
	size_t nthreads;
	size_t *at, nat;             /**< per thread of the core (nat): 1 + its index in threads, 0 if not walked */
	json_t *problems;            /**< [{item, message}]: what kept frames unknown */
	struct cq_frame_infos *infos;    /**< the descriptions the frames point to */
};

/**
 * The stacks of @p core's threads (the crashing one first) as @p opt says, as C structures:
 * per thread its frames, its user frame (the index of the first frame outside the C
 * library, the dynamic linker and the vDSO, with a source line where the executable is
 * static; -1 if none was reached) and why the walk stopped. Errors only for what stops all
 * threads (out of memory, libdwfl refusing the architecture).
 */
struct cq_error *cq_stack_walk_frames(struct cq_core *core, const struct cq_stack_options *opt,
				      struct cq_stacks **ret);

void cq_stacks_free(struct cq_stacks *s);

/** The stack of the core's thread @p thread (its index in core->threads), NULL when it was
 * not walked; constant time (a table of 100,000 threads was searched per thread). */
const struct cq_thread_stack *cq_stacks_thread(const struct cq_stacks *s, size_t thread);

/** One frame as JSON (the "coreq-bt/2" frame object: index, pc, cfa, inlined, found_by,
 * module, module_offset, function, demangled, function_offset, file, line[, signal_frame]). */
json_t *cq_frame_json(const struct cq_frame *f);

/** A thread's stack as JSON (tid, crashing, frames, user_frame, stop, cut_short). */
json_t *cq_thread_stack_json(const struct cq_thread_stack *t);

/** Walked stacks @p s as a "coreq-bt/2" document (new reference): schema, core, arch,
 * threads (cq_thread_stack_json(); without @p with_threads an empty array, for a caller
 * that writes them one at a time), problems (s->problems itself, not a copy). */
json_t *cq_stacks_json(const struct cq_core *core, const struct cq_stacks *s, bool with_threads);

/**
 * The same walk as cq_stack_walk_frames(), as a "coreq-bt/2" document (new reference in
 * *@p ret): schema, core, arch, threads (cq_thread_stack_json()), problems.
 */
struct cq_error *cq_stack_walk(struct cq_core *core, const struct cq_stack_options *opt, json_t **ret);

#endif
