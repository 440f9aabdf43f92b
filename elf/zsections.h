/* SPDX-License-Identifier: MIT */
/**
 * @file zsections.h
 * ELF sections compressed with zstd (SHF_COMPRESSED, ch_type ELFCOMPRESS_ZSTD: `gcc
 * -gz=zstd`, `objcopy --compress-debug-sections=zstd`, what newer distributions ship their
 * debug files with). libelf 0.188 expands only zlib: libdw then sees no DWARF at all.
 * These sections are expanded here with libzstd into buffers this module owns, and the
 * ELF handle is made to show them as plain sections, so that libdw reads them as any other.
 */
#ifndef COREQ_ELF_ZSECTIONS_H
#define COREQ_ELF_ZSECTIONS_H

#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>

#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2
#endif

/** The buffers of one handle's expanded sections. */
struct cq_zsections;

/** Whether @p elf has a section compressed with zstd. */
bool cq_elf_has_zstd(Elf *elf);

/**
 * Expands every zstd-compressed section of @p elf in its handle: the section's data
 * becomes the expanded bytes and its header loses SHF_COMPRESSED. @p elf must allow its
 * section headers to be written (opened ELF_C_READ_MMAP_PRIVATE, or elf_memory over a
 * writable buffer). At most @p max_total bytes are expanded in all (a bomb: a few KB that
 * claim gigabytes). *@p ret owns the buffers: free it after elf_end(@p elf); NULL when
 * there was nothing to expand. On failure (a section that does not expand to the size
 * its header gives, or over the bound, or no memory) returns false with *@p why, a
 * one-line reason to free, naming the section; sections expanded before it stay.
 */
bool cq_elf_expand_zstd(Elf *elf, uint64_t max_total, struct cq_zsections **ret, char **why);

void cq_zsections_free(struct cq_zsections *z);

#endif
