/* SPDX-License-Identifier: MIT */
/**
 * @file from_memory.h
 * The ELF file of an image rebuilt from what a process maps of it, for an image whose file
 * is nowhere else: a library deleted (or replaced by another build) while the process ran,
 * read from a coreq snapshot or a kernel core that holds its mappings whole.
 *
 * What is mapped is the file from its ELF header to the end of its last PT_LOAD's bytes:
 * the program headers, the dynamic symbols, the unwind tables and the code, at their file
 * offsets. The section headers (and .symtab, DWARF) are never mapped. They are made here
 * from the program headers, so that the symbols and the unwinding the dynamic linker and
 * the unwinder used are found as in the file itself: .dynsym and .dynstr (PT_DYNAMIC's
 * DT_SYMTAB, DT_STRTAB, DT_STRSZ, DT_SYMENT; the symbol count from DT_GNU_HASH, else
 * DT_HASH), .gnu.hash, .eh_frame_hdr and .eh_frame (PT_GNU_EH_FRAME). The build-id stays in
 * its PT_NOTE. Names that only .symtab held (static functions) are not there: eu-stack
 * names such frames no better from memory.
 */
#ifndef COREQ_ELF_FROM_MEMORY_H
#define COREQ_ELF_FROM_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct cq_elf;

/**
 * Open the image whose mapped bytes are in @p buf (malloc'd, @p size bytes, each mapping
 * copied at its file offset, zeros between; taken over, freed on error too), its file
 * offset 0 mapped at target address @p base: the section headers made as above, appended
 * to the buffer. A dynamic section's addresses are taken either as the dynamic linker
 * relocated them (the load bias added: x86, Arm, PowerPC) or as linked (MIPS, RISC-V keep
 * .dynamic read-only), whichever lies inside the image. @p name names it in messages.
 * CQ_ERR_FORMAT when @p buf does not begin with an ELF header and its program headers.
 */
struct cq_error *cq_elf_open_mapped(uint8_t *buf, size_t size, uint64_t base, const char *name, struct cq_elf **ret);

#endif
