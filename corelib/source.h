/* SPDX-License-Identifier: MIT */
/**
 * @file source.h
 * The target interface: where the core model's facts come from. A source opens a target
 * and fills a new model (cq_core_new) through the functions below: its memory as segments
 * (address ranges, and how many leading bytes of each it holds), its threads with their
 * register blocks, the auxiliary vector, the file map and the process's identity. Later
 * it answers reads of the bytes it holds through its operations. Everything above the
 * model (images from the link map, TLS, types, stack/, ompd/, mqd/, events/) reads the
 * target only through the model, so another kind of target (a stopped live process:
 * memory through process_vm_readv, registers through PTRACE_GETREGSET, the file map from
 * /proc/PID/maps) is a second source and changes none of them.
 *
 * The first source is the ELF core file (corefile.c: its PT_LOAD segments, notes.c's
 * NT_* notes, bundle_read.c's COREQ notes). What is not a fact of the target (images found
 * on this machine, types, a bundle's files) registers into the model as files that back
 * memory (internal.h: cq__memory_add_file) and as parts the core owns (cq__core_own).
 */
#ifndef COREQ_CORELIB_SOURCE_H
#define COREQ_CORELIB_SOURCE_H

#include "core.h"

/** How the model reads what a source holds. */
struct cq_source {
	const char *kind; /**< "core file": named in messages */
	/** How many leading bytes of segment @p s (at most s->filesz) the target holds now. */
	uint64_t (*held)(const struct cq_core *core, const struct cq_segment *s);
	/** Read up to @p len bytes at @p addr (inside s->filesz) into @p buf: *@p got >= 1,
	 * as many as the target holds from @p addr on; a fault (cq_error_fault at @p addr,
	 * saying why) when it holds none there, another error when the source fails. */
	struct cq_error *(*read)(struct cq_core *core, const struct cq_segment *s, uint64_t addr, void *buf,
				 size_t len, size_t *got);
	/** Release what the source keeps in the core (may be NULL). */
	void (*close)(struct cq_core *core);
};

/** A new, empty model of a target of architecture @p target read by @p source; the
 * options copied. NULL when out of memory. */
struct cq_core *cq_core_new(const struct cq_core_options *opts, const struct cq_target *target,
			    const struct cq_source *source);

/** The target's memory: @p n segments (taken over, freed with the core), sorted here by
 * address; overlapping ones are an error naming @p what (the input). */
struct cq_error *cq_core_set_segments(struct cq_core *core, struct cq_segment *segs, size_t n, const char *what);

/** Leading bytes of @p s the target holds (the source's answer). */
uint64_t cq_segment_held(const struct cq_core *core, const struct cq_segment *s);

/** A new thread @p tid with its register block @p regs of @p size bytes in the target's
 * layout (target->regs; a shorter block leaves the rest unavailable, and says so): pc, sp
 * and, where a register holds it, the thread pointer derived from it. *@p ret is the
 * thread (valid until the next thread is added). @p what names the input in errors. */
struct cq_error *cq_core_add_thread(struct cq_core *core, int32_t tid, int32_t signal, const uint8_t *regs,
				    size_t size, const char *what, struct cq_thread **ret);

/** Thread @p th's thread-area note (NT_386_TLS: i386's GDT entries as struct user_desc;
 * NT_ARM_TLS: the TLS register), kept raw, and the thread pointer derived from it. */
struct cq_error *cq_core_set_thread_tls(struct cq_core *core, struct cq_thread *th, uint32_t type, const uint8_t *desc,
				       size_t size);

/** Thread @p th's floating-point registers as NT_FPREGSET holds them, raw: copied with
 * @p copy, else @p desc must stay valid while the core is open (a core file's mapped
 * notes: a core of 100,000 threads costs no copy). */
struct cq_error *cq_core_set_thread_fpregs(struct cq_thread *th, const uint8_t *desc, size_t size, bool copy);

/** The auxiliary vector from its bytes in the target's layout (pairs of target words up to
 * AT_NULL), as NT_AUXV and /proc/PID/auxv give it; replaces an earlier one. */
struct cq_error *cq_core_set_auxv(struct cq_core *core, const uint8_t *bytes, size_t size);

/** The file map: @p n entries (taken over with their paths, freed with the core), sorted
 * here by address; page size @p page_size (0: unknown). Only the first call counts. */
void cq_core_set_file_maps(struct cq_core *core, struct cq_file_map *maps, size_t n, uint64_t page_size);

#endif
