/* SPDX-License-Identifier: MIT */
/**
 * @file elfcore.h
 * Layouts of a Linux ELF core's notes that coreq both reads (notes.c) and writes
 * (core_write.c), described once for every target (base/decode.h's struct descriptions).
 */
#ifndef COREQ_CORELIB_ELFCORE_H
#define COREQ_CORELIB_ELFCORE_H

#include "base/bytebuf.h"
#include "base/decode.h"

/* note types newer than some elf.h */
#ifndef NT_FILE
#define NT_FILE 0x46494c45
#endif
#ifndef NT_SIGINFO
#define NT_SIGINFO 0x53494749
#endif
#ifndef NT_386_TLS
#define NT_386_TLS 0x200
#endif
#ifndef NT_ARM_TLS
#define NT_ARM_TLS 0x401
#endif

/** struct elf_prstatus up to (not including) pr_reg; pr_reg (target->reg_block_size bytes)
 * and an int pr_fpvalid follow, the whole padded to the target's long. */
#define CQ_PRSTATUS_FIELDS(X, T)                                                            \
	X(T, S32, si_signo, 1) X(T, S32, si_code, 1) X(T, S32, si_errno, 1)                \
	X(T, S16, cursig, 1) X(T, ULONG, sigpend, 1) X(T, ULONG, sighold, 1)               \
	X(T, S32, pid, 1) X(T, S32, ppid, 1) X(T, S32, pgrp, 1) X(T, S32, sid, 1)          \
	X(T, LONG, utime_sec, 1) X(T, LONG, utime_usec, 1) X(T, LONG, stime_sec, 1)        \
	X(T, LONG, stime_usec, 1) X(T, LONG, cutime_sec, 1) X(T, LONG, cutime_usec, 1)     \
	X(T, LONG, cstime_sec, 1) X(T, LONG, cstime_usec, 1)

/** The index of pr_pid, pr_ppid and pr_cursig among CQ_PRSTATUS_FIELDS (and the others
 * coreq writes). */
#define CQ_PRSTATUS_CURSIG 3
#define CQ_PRSTATUS_SIGPEND 4
#define CQ_PRSTATUS_SIGHOLD 5
#define CQ_PRSTATUS_PID 6
#define CQ_PRSTATUS_PPID 7
#define CQ_PRSTATUS_UTIME 10 /* _sec, then _usec, stime_sec, stime_usec */

/** A coreq snapshot's own note (name "COREQ", as the bundle notes): u64 in the target's
 * byte order, when the process was stopped, ns since the epoch. gdb and elfutils pass
 * over notes of names they do not know. */
#define CQ_NT_SNAPSHOT 0x434f5210u

/** One ELF note appended to @p b as the kernel lays them out: namesz, descsz, type (in
 * @p t's byte order), the name and the descriptor each padded to 4 (core_write.c). */
void cq_elf_note(struct cq_buf *b, const struct cq_target *t, const char *name, size_t namesz, uint32_t type,
		 const void *desc, size_t descsz);

#endif
