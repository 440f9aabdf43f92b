/* SPDX-License-Identifier: MIT */
/**
 * @file core.h
 * The core model: one opened Linux ELF core file of any supported architecture.
 *
 * cq_core_open() reads only the ELF and program headers and the notes (threads, auxv,
 * process info, NT_FILE); memory is read lazily on request, images and symbols are found
 * on first use. Nothing here knows about OpenMP or MPI.
 */
#ifndef COREQ_CORE_H
#define COREQ_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../targets/target.h"
#include "base/error.h"
#include "input/file.h"

struct cq_elf;
struct cq_image;

/** Where to look for the files a core names (libraries, the executable, debug files). */
struct cq_core_options {
	const char *exe;             /**< executable given by the user, or NULL */
	const char *sysroot;         /**< prefix for absolute paths the core names */
	const char *solib_search_path; /**< colon-separated directories, searched by basename */
	const char *debug_dir;       /**< root of .build-id/xx/rest.debug and debuglink dirs */
	/** Colon-separated ELF files whose DWARF supplies types no image has (types.h). */
	const char *type_donors;
	uint64_t max_inflated;       /**< bound for compressed inputs (0: default) */
};

/** One PT_LOAD of the core. */
struct cq_segment {
	uint64_t vaddr, memsz;
	uint64_t offset, filesz; /**< bytes of the segment present in the core file */
	uint32_t flags;          /**< PF_R | PF_W | PF_X */
};

/** One thread (NT_PRSTATUS note and the notes that follow it). */
struct cq_thread {
	int32_t tid;
	int32_t signal;          /**< pr_cursig */
	uint8_t *regs;           /**< raw pr_reg block, target->reg_block_size bytes */
	/** Bytes of regs the core really had (gdb 13 writes short riscv64 notes); the rest
	 * is zero and reported as unavailable. */
	uint16_t regs_size;
	uint64_t pc, sp;
	bool has_tp;
	uint64_t tp;             /**< thread pointer, when the core has it */
	/** NT_SIGINFO following this thread's NT_PRSTATUS (gdb writes one per thread). */
	bool has_siginfo;
	int32_t si_signo, si_code;
	uint64_t si_addr;
	uint32_t si_pid, si_uid; /**< the same bytes as si_addr: the sender of a kill/tkill */
	/** From NT_386_TLS / NT_ARM_TLS, kept raw: the tp is derived from them. */
	uint8_t *tls_note;
	size_t tls_note_size;
	uint32_t tls_note_type;  /**< NT_386_TLS or NT_ARM_TLS */
	/** NT_FPREGSET's descriptor as the kernel writes it (x86_64: the fxsave area), raw, for
	 * snapshots to write back; NULL when the target gave none. In a core file's notes (not
	 * copied: they stay mapped while the core is open), or owned (fpregs_owned). */
	const uint8_t *fpregs;
	size_t fpregs_size;
	bool fpregs_owned;
	/** NT_PRSTATUS's CPU times, in microseconds: the thread's own, or for the thread group
	 * leader the whole process's (the kernel writes the group's there; gdb's gcore writes
	 * 0). */
	uint64_t utime_us, stime_us;
	/** NT_PRSTATUS's pr_sigpend and pr_sighold: the thread's pending and blocked signals
	 * (bit N-1 for signal N, the first word of the set). */
	uint64_t sigpend, sighold;
};

/** One range of NT_FILE: a file mapped at [start, end) from file offset `offset`. */
struct cq_file_map {
	uint64_t start, end, offset;
	char *path;       /**< as the kernel names it: "PATH (deleted)" when it was unlinked */
	/** Where the file the target maps can be read when @c path no longer names it, else
	 * NULL: a live process's /proc/PID/map_files/START-END, set when the file was deleted
	 * (@c path ends in " (deleted)": a package upgrade replaced it) or the path now names
	 * another file (another device or inode than the mapping's). Images are then read
	 * from it, their build-id checked (image.c), and a snapshot holds their mappings whole
	 * (core_write.h). It lives in @c path's allocation, after its NUL (freed with it). */
	const char *mapped;
};

/** The length of @p path less the " (deleted)" the kernel adds to a file unlinked since it
 * was mapped (/proc/PID/maps, NT_FILE); strlen(@p path) when it has none. */
static inline size_t cq_file_map_name_len(const char *path)
{
	size_t n = strlen(path), k = sizeof(" (deleted)") - 1;
	return n > k && memcmp(path + n - k, " (deleted)", k) == 0 ? n - k : n;
}

/** Something that is missing or suspicious; collected, then reported per item. */
struct cq_problem {
	char *item;    /**< what is affected, e.g. "image /lib/libc.so.6" */
	char *message; /**< one line: why and what to do */
};

/** A file range that backs target memory the core left out (memory.c). Images add their
 * ranges once their file is verified; memory reads never start image discovery. */
struct cq_file_range {
	uint64_t start, end;  /**< target addresses [start, end) */
	uint64_t offset;      /**< file offset of start */
	struct cq_file *file; /**< the image's file (owned by the image) */
	const char *path;     /**< where it was found (owned by the image) */
};

struct cq_source;

struct cq_core {
	const struct cq_target *target;
	const struct cq_source *source; /**< what the model reads the target through (source.h) */
	void *source_data;             /**< the source's own state (source.h) */
	const char *name;              /**< the input as messages name it: the core file's path (the source's) */
	struct cq_file *file;          /**< the core file (the core-file source's; NULL for another source) */
	struct cq_core_options opts;   /**< strings owned (copied) */
	void *elf;                     /**< libelf handle of the core (Elf *) */
	struct { void *addr; size_t len; } note_maps[8]; /**< note segments mapped (notes.c) */
	unsigned nnote_maps;
	/** What the model's other parts made and the core owns (images, types, a bundle's
	 * contents: internal.h, cq__core_own), freed by cq_core_close in reverse order. */
	void (*parts[8])(struct cq_core *core);
	unsigned nparts;

	struct cq_segment *segments;   /**< sorted by vaddr, non-overlapping */
	size_t nsegments;
	/** Contents of the core file stop here (it may be truncated; the core-file source's). */
	uint64_t file_end;

	struct cq_thread *threads;
	size_t nthreads;
	size_t crash_thread;           /**< index into threads: the crashing one, else the first */
	/** A thread took a fatal signal. False for a core of a live process that was only
	 * stopped (gdb's gcore: its siginfo is the attach's SIGSTOP, no thread has a signal). */
	bool crashed;
	int32_t signal;                /**< the fatal signal (siginfo or crashing thread) */
	int32_t si_code;
	bool has_siginfo;
	uint64_t si_addr;
	uint32_t si_pid, si_uid;       /**< the sender, where si_code says a process sent it */

	uint64_t (*auxv)[2];
	size_t nauxv;

	/** When the process was stopped for this core, ns since the epoch (CLOCK_REALTIME): a
	 * coreq snapshot's CQ_NT_SNAPSHOT note, or a live process's stop; 0 when unknown. */
	uint64_t taken_ns;

	bool has_psinfo;
	/** NT_PRPSINFO's pr_sname: the process's state when the core was taken, as /proc's stat
	 * letters ('T': stopped by a signal, which a coreq snapshot records from before it
	 * stopped the process itself; the kernel's cores and gdb's say R, S, D or t); 0 when
	 * there is none. */
	char state;
	int32_t pid, ppid;
	uint32_t uid, gid;
	char fname[17];
	char psargs[81];

	struct cq_file_map *file_maps; /**< NT_FILE, sorted by start */
	size_t nfile_maps;
	uint64_t page_size;            /**< NT_FILE's page size (0 if none) */

	/** Images carried by a bundle (bundle.h): name, bias, build-id and symbols. */
	struct cq_bundled_image *bundled;
	size_t nbundled;
	uint32_t bundle_version;       /**< 0 when the core is not a bundle */
	/** Type donors carried by a bundle: each an anonymous file (memfd) and its name. */
	struct cq_bundled_donor {
		char *name;
		int fd;
	} *bundled_donors;
	size_t nbundled_donors;

	/** Memory backed by image files: ranges[0 .. nsorted) sorted by start, the rest
	 * added since (sorted in when they grow many). */
	struct cq_file_range *ranges;
	size_t nranges, nsorted, ranges_cap;

	struct cq_image *images;       /**< loaded images; see image.h */
	size_t nimages;
	bool images_done;
	char *images_source;           /**< "link_map", "NT_FILE", "executable only" */

	struct cq_problem *problems;
	size_t nproblems;

	struct cq_types *types;        /**< DWARF type index (types.c), built on first use */
};

struct cq_bundled_image {
	char *name;
	uint64_t bias;
	uint64_t start, end;  /**< mapped range (0, 0 if unknown) */
	bool is_exe;
	uint8_t build_id[64];
	size_t build_id_len;
	struct cq_elf *elf;  /**< symbols only (no file); moved to the image that uses it */
	/** Its unwind ELF (CQ_NT_BUNDLE_UNWIND), checked, or NULL; lent to the image. */
	uint8_t *unwind;
	size_t unwind_size;
	bool unwind_lines;     /**< it carries line DWARF (--with-lines) */
	char *unwind_problem;  /**< why the bundle's unwind ELF was refused, or NULL */
};

/** Open the core at @p path. */
struct cq_error *cq_core_open(const char *path, const struct cq_core_options *opts,
			      struct cq_core **ret);

/** Close a core; NULL allowed. */
void cq_core_close(struct cq_core *core);

/** Value of auxv entry @p type; false if absent. */
bool cq_core_auxv(const struct cq_core *core, uint64_t type, uint64_t *ret);

/** Thread with kernel id @p tid, or NULL. */
struct cq_thread *cq_core_thread(struct cq_core *core, int32_t tid);

/** Value of register @p name of @p thread (false if the target has no such register). */
bool cq_thread_reg(const struct cq_core *core, const struct cq_thread *thread,
		   const char *name, uint64_t *ret);

/** Whether register index @p i of @p thread was present in the core. */
bool cq_thread_has_reg(const struct cq_core *core, const struct cq_thread *thread, unsigned i);

/** Value of register index @p i of @p thread. */
uint64_t cq_thread_reg_at(const struct cq_core *core, const struct cq_thread *thread, unsigned i);

/** Record a problem (printf-style message). Problems are never fatal. */
void cq_core_problem(struct cq_core *core, const char *item, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- memory (memory.c) --------------------------------------------------------------- */

/** Where the bytes at an address come from. */
enum cq_mem_source { CQ_MEM_CORE, CQ_MEM_FILE, CQ_MEM_NONE };

/** The core's PT_LOAD segment holding @p addr (its mapping), or NULL. */
const struct cq_segment *cq_core_segment_at(const struct cq_core *core, uint64_t addr);

/**
 * Read @p len bytes of target memory at @p addr: core contents, else the file mapped
 * there, else a CQ_ERR_FAULT error carrying the first unreadable address.
 */
struct cq_error *cq_core_read(struct cq_core *core, uint64_t addr, void *buf, size_t len);

/** Read one unsigned integer of @p size bytes (target order). */
struct cq_error *cq_core_read_uint(struct cq_core *core, uint64_t addr, unsigned size,
				   uint64_t *ret);

/** Read a target pointer. */
struct cq_error *cq_core_read_ptr(struct cq_core *core, uint64_t addr, uint64_t *ret);

/**
 * Read a NUL-terminated string of at most @p max bytes (terminator included) into a new
 * buffer. A string that does not end within @p max fails with CQ_ERR_MALFORMED.
 */
struct cq_error *cq_core_read_string(struct cq_core *core, uint64_t addr, size_t max,
				     char **ret);

/** Say where the byte at @p addr comes from; for CQ_MEM_FILE also the file path. */
enum cq_mem_source cq_core_mem_source(struct cq_core *core, uint64_t addr, const char **path_ret);

#endif
