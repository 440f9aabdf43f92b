/* SPDX-License-Identifier: MIT */
/**
 * @file target.h
 * One const table per target architecture: pure data, no I/O, no allocation.
 *
 * A table says how a Linux ELF core of that architecture is laid out (prstatus and
 * register block, where the thread pointer lives), what the C ABI's scalar types look like
 * and which TLS variant glibc uses. Adding an architecture means adding one table (and a
 * fixture), never code in corelib.
 */
#ifndef COREQ_TARGET_H
#define COREQ_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Scalar C types whose size and alignment the target defines. */
enum cq_ctype {
	CQ_CTYPE_CHAR,
	CQ_CTYPE_SHORT,
	CQ_CTYPE_INT,
	CQ_CTYPE_LONG,
	CQ_CTYPE_LONG_LONG,
	CQ_CTYPE_POINTER,
	CQ_CTYPE_SIZE_T,
	CQ_CTYPE_BOOL,
	CQ_CTYPE_FLOAT,
	CQ_CTYPE_DOUBLE,
	CQ_CTYPE_LONG_DOUBLE,
	CQ_CTYPE_COUNT
};

/** Size and alignment (as a struct member) in bytes. */
struct cq_ctype_layout {
	uint8_t size;
	uint8_t align;
};

/** One register in the prstatus register block. */
struct cq_reg {
	const char *name;
	uint16_t offset; /**< byte offset inside pr_reg */
	uint8_t size;    /**< bytes */
	/** DWARF register number (the psABI's, as elfutils' backends name them), or -1: what
	 * the unwinder is given this register as. */
	int16_t dwarf;
};

/** Where the thread pointer (tp) of a thread is found in a core. */
enum cq_tp_source {
	CQ_TP_REGISTER,    /**< a register of pr_reg (tp_reg) */
	CQ_TP_NOTE_386_TLS,/**< NT_386_TLS entry selected by gs >> 3 */
	CQ_TP_NOTE_ARM_TLS,/**< NT_ARM_TLS note (kernel cores only) */
	/** In no register or note: MIPS (UserLocal is not dumped), m68k (the kernel keeps it,
	 * set_thread_area). struct pthread comes from glibc's thread lists, matched by tid. */
	CQ_TP_NONE,
};

/**
 * How glibc's struct pthread is found from the thread pointer. libthread_db describes this
 * with one of three `_thread_db_*` descriptors in libc; corelib reads the one named here
 * so the offsets always come from the core's own libc.
 */
enum cq_pthread_from_tp {
	CQ_PTHREAD_IS_TP,         /**< `_thread_db_const_thread_area` names fs/gs: pthread = tp */
	CQ_PTHREAD_TP_MINUS_CONST,/**< `_thread_db_const_thread_area` = sizeof(struct pthread) */
	CQ_PTHREAD_REGISTER_BIAS, /**< `_thread_db_register{32,64}`: {bits, bias, reg offset} */
};

enum cq_tls_variant { CQ_TLS_VARIANT_I = 1, CQ_TLS_VARIANT_II = 2 };

struct cq_target {
	const char *name;        /**< stable name used in output, e.g. "s390x" */
	uint16_t e_machine;
	uint8_t elf_class;       /**< ELFCLASS32 or ELFCLASS64 */
	bool little_endian;
	const char *bfd_arch;    /**< bfd_printable_name() expected for this target */
	const char *gdb_arch;    /**< `set architecture` value for gdb-multiarch */
	/** Debian's multiarch triplet (library directories: /usr/lib/<multiarch>/) */
	const char *multiarch;
	/** The GNU triplet Debian's cross compilers are prefixed with (<gnu_triplet>-gcc) */
	const char *gnu_triplet;

	struct cq_ctype_layout ctypes[CQ_CTYPE_COUNT];

	/** prstatus: uid_t width in prpsinfo (2 on i386/armhf, else 4). */
	uint8_t prpsinfo_uid_size;
	/** Register block (pr_reg) size; its offset follows from the class. */
	uint16_t reg_block_size;
	const struct cq_reg *regs;
	uint16_t nregs;
	int16_t pc_reg, sp_reg;  /**< indices into regs */
	/** Low bits of the pc register that are not part of the address (hppa: the privilege
	 * level, 3 in user mode); a thread's pc has them cleared, as gdb's $pc. */
	uint8_t pc_flag_bits;
	/**
	 * DWARF columns of the ABI: the return address (what CFI's default return-address
	 * column holds: the pc on x86, the link register elsewhere; 65 on powerpc, as GCC's
	 * .eh_frame numbers LR), the stack pointer, and the frame pointer a frame-pointer or
	 * back-chain walk follows (armhf: r11 in ARM code; Thumb-2 code keeps r7).
	 */
	int16_t dwarf_ra, dwarf_sp, dwarf_fp;
	/**
	 * DWARF numbers of the registers the ABI passes the first integer arguments in, in
	 * order (x86_64: rdi, rsi, rdx, rcx, r8, r9), and how many: what a call site's
	 * parameters (DW_TAG_call_site_parameter) name. None where arguments go on the stack
	 * (i386) or the table is not filled in yet.
	 */
	const uint8_t *dwarf_args;
	uint8_t ndwarf_args;
	int16_t tp_reg;          /**< index into regs or -1 (CQ_TP_REGISTER only) */
	int16_t gs_reg;          /**< i386: the gs selector register, else -1 */
	enum cq_tp_source tp_source;
	enum cq_pthread_from_tp pthread_from_tp;
	enum cq_tls_variant tls_variant;
	/**
	 * TLS bias of the ABI: the thread pointer points this far past the start of the TCB
	 * and static TLS (TLS_TCB_OFFSET: 0x7000 on powerpc and MIPS, 0 elsewhere). Reported with the
	 * target; corelib resolves TLS through glibc's DTV, whose pointers are unbiased.
	 */
	uint32_t tls_tp_bias;
	/** Signal names by number 0..31 (cq_signals_generic when NULL; MIPS, hppa, sparc and
	 * alpha number their own). */
	const char *const *signals;
	/** siginfo_t has si_code before si_errno (MIPS), not si_errno before si_code. */
	bool siginfo_code_first;
	/**
	 * ABI variants that share machine, class and byte order (armhf and armel): the core
	 * cannot tell them apart (its e_flags are 0), its executable can. A table with a
	 * nonzero mask is such a variant of the first table of its machine (the default,
	 * mask 0) and is chosen when an image's `e_flags & e_flags_mask == e_flags_value`.
	 * A variant shares every layout of its default (registers, prstatus, C types, TLS);
	 * only its names differ.
	 */
	uint32_t e_flags_mask, e_flags_value;
};

/** Linux's generic signal names by number (index 0 is NULL), MIPS's, PA-RISC's, and the
 * numbering sparc and alpha share. */
extern const char *const cq_signals_generic[32];
extern const char *const cq_signals_mips[32];
extern const char *const cq_signals_hppa[32];
extern const char *const cq_signals_sparc_alpha[32];

/** The name of signal @p sig on target @p t ("SIGSTOP"), or NULL. */
const char *cq_target_signal_name(const struct cq_target *t, int sig);

/** The number of the signal named @p name on target @p t, or -1. */
int cq_target_signal_number(const struct cq_target *t, const char *name);

/** Number of known targets and the tables themselves (stable order). */
extern const struct cq_target *const cq_targets[];
extern const size_t cq_ntargets;

/** Find the target for an ELF header's machine, class and data; NULL if unknown. */
const struct cq_target *cq_target_find(uint16_t e_machine, uint8_t elf_class, bool little_endian);

/**
 * The variant of @p t (e_flags_mask) that an image with ELF header flags @p e_flags was
 * built for; @p t itself when none matches.
 */
const struct cq_target *cq_target_variant(const struct cq_target *t, uint32_t e_flags);

/** Find a target by its name ("ppc64le"); NULL if unknown. */
const struct cq_target *cq_target_by_name(const char *name);

/** Pointer size in bytes (4 or 8). */
static inline unsigned cq_target_ptr_size(const struct cq_target *t)
{
	return t->ctypes[CQ_CTYPE_POINTER].size;
}

/** Whether values must be byte-swapped between this host and the target. */
static inline bool cq_target_needs_bswap(const struct cq_target *t)
{
	return t->little_endian != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__);
}

/** The known targets' names, space-separated in table order, into @p buf (truncated to
 * @p size, always terminated); returns @p buf. */
char *cq_target_names(char *buf, size_t size);

/** Index of the register named @p name, or -1. */
int cq_target_reg_index(const struct cq_target *t, const char *name);

#endif
