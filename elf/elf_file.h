/* SPDX-License-Identifier: MIT */
/**
 * @file elf_file.h
 * An ELF executable, shared object or separate debug file on disk (never the core):
 * program headers, build-id, .gnu_debuglink and symbols (.symtab and .dynsym), read with
 * libelf, which converts class and byte order for us.
 */
#ifndef COREQ_ELF_FILE_H
#define COREQ_ELF_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "input/file.h"

struct cq_symbol {
	const char *name;   /**< points into the file's string table */
	/** st_value: link-time address, or TLS offset for STT_TLS. For a function of a ppc64
	 * ELFv1 file whose st_value is the address of its descriptor in .opd, the code entry
	 * read from that descriptor (as elfutils and gdb do; cq_elf_symbol_descriptor()). */
	uint64_t value;
	uint64_t size;
	uint8_t type;       /**< STT_* */
	uint8_t bind;       /**< STB_* */
	bool dynamic;       /**< from .dynsym */
};

struct cq_load {
	uint64_t vaddr, memsz, offset, filesz;
	uint32_t flags;
};

struct cq_elf {
	struct cq_file *file;    /**< NULL for symbols that came from a bundle */
	/** Further owners besides the first: images that name one file under several names
	 * (a link_map may list one library thousands of times) share one cq_elf, symbol table
	 * included (cq_elf_share()); cq_elf_close() frees it when the last owner closes it. */
	unsigned refs;
	char *strtab;            /**< owned string table (bundled symbols), else NULL */
	void *elf;               /**< Elf * */
	uint16_t e_type, e_machine;
	uint32_t e_flags;
	uint8_t elf_class;
	bool little_endian;
	uint64_t entry;
	struct cq_load *loads;   /**< PT_LOAD, in header order */
	size_t nloads;
	uint64_t phdr_vaddr;     /**< PT_PHDR p_vaddr (or derived), for the load bias */
	bool has_phdr;
	uint64_t dynamic_vaddr;  /**< PT_DYNAMIC p_vaddr */
	bool has_dynamic;
	bool has_tls;            /**< PT_TLS present */
	uint8_t build_id[64];
	size_t build_id_len;
	char *debuglink;         /**< .gnu_debuglink file name, or NULL */
	/** .gnu_debugaltlink (dwz): the alt file's path as written (absolute, or relative to
	 * this file's directory) and its build-id; NULL / 0 when there is none */
	char *altlink;
	uint8_t altlink_build_id[64];
	size_t altlink_build_id_len;

	bool syms_loaded;
	bool has_symtab;         /**< .symtab present (not stripped) */
	/** A section is compressed (SHF_COMPRESSED, .zdebug) or unnamed: whoever reads it
	 * inflates it, writing to the ELF's in-memory headers. */
	bool compressed_sections;
	bool has_dwarf;          /**< a .debug_* section with contents */
	/** A section compressed with zstd, which libelf 0.188 cannot expand (elf/zsections.h) */
	bool zstd_sections;
	void *gnu_hash;          /**< .gnu.hash section (Elf_Scn *), or NULL */
	struct cq_symbol *syms;  /**< defined symbols, in file order */
	size_t nsyms;
	struct cq_symbol **by_name; /**< hash table name -> best symbol, built on first lookup */
	size_t by_name_mask;        /**< its size - 1 (a power of two) */
	/** Plain names of mangled symbols (C++, Rust: demangled, no parameter list), built on
	 * the first cq_elf_find_symbol_plain(): plain[k] names by_plain[k]. */
	char **plain;
	struct cq_symbol **by_plain;
	size_t by_plain_mask;
	struct cq_symbol **by_addr; /**< defined non-TLS symbols (sorted once used often) */
	size_t nby_addr;
	bool by_addr_sorted;
	unsigned addr_lookups;      /**< cq_elf_symbol_at calls answered by scanning */
	/** Before the symbols are loaded, address lookups scan libelf's tables in place
	 * (loading libc's 10,000 symbols was a tenth of `coreq info`): the tables, and a copy
	 * of each symbol such a scan found (one per table entry, so a symbol found twice is
	 * one pointer). raw_state: 0 not looked at, 1 usable, -1 not (the symbols are loaded). */
	struct cq_raw_symtab {
		const char *data;
		size_t count, scn;
		const char *str;
		size_t strsize;
		bool dynamic;
	} raw[4];
	unsigned nraw;
	int raw_state;
	struct cq_found_symbol *found;
	struct {
		bool valid;
		uint64_t vaddr;
		const struct cq_symbol *sym;
	} recent[8];                /**< last answers of cq_elf_symbol_at */
	unsigned recent_next;

	/* ppc64 ELFv1 function descriptors (.opd): see cq_symbol.value. */
	bool opd_abi;               /**< EM_PPC64, not ELFv2, with an .opd section */
	/** The file whose .opd contents hold the descriptors when this one has none (a
	 * separate debug file's .opd is NOBITS: its main file, one reference), else NULL. */
	struct cq_elf *opd_file;
	/** Per syms[i]: the link-time address of the descriptor its st_value named, 0 when
	 * its value was not translated; NULL when no symbol was. */
	uint64_t *sym_opd;
	/** One more symbol per translated function, at its descriptor (type STT_OBJECT, the
	 * descriptor's size): in by_addr only, so that a function pointer (which is the
	 * descriptor's address) is still named after its function, as gdb does. */
	struct cq_symbol *opd_alias;
	size_t nopd_alias;
};

/** Open the ELF file at @p path (compressed files are inflated transparently). */
struct cq_error *cq_elf_open(const char *path, struct cq_elf **ret);

/** cq_elf_open() of contents coreq holds in memory (cq_file_of_memory(): @p buf, malloc'd,
 * is the ELF's from now on), named @p name in messages. libelf reads them in place. */
struct cq_error *cq_elf_open_memory(uint8_t *buf, size_t size, const char *name, struct cq_elf **ret);

/** Close; NULL allowed. A shared cq_elf is freed by its last owner. */
void cq_elf_close(struct cq_elf *e);

/** Another owner of @p e: returns @p e. */
struct cq_elf *cq_elf_share(struct cq_elf *e);

/**
 * A file-less cq_elf holding symbols read from a bundle. Takes ownership of @p syms and
 * @p strtab (the symbols' names point into it).
 */
struct cq_error *cq_elf_from_symbols(struct cq_symbol *syms, size_t nsyms, char *strtab,
				     const uint8_t *build_id, size_t build_id_len,
				     struct cq_elf **ret);

/**
 * Where a separate debug file @p debug of the ppc64 ELFv1 file @p main reads its
 * functions' descriptors: @p main's .opd (the debug file's is NOBITS). Takes a reference
 * to @p main; no-op for other machines, once symbols are loaded, or when already set.
 */
void cq_elf_set_opd_file(struct cq_elf *debug, struct cq_elf *main);

/**
 * The link-time address of the ppc64 ELFv1 function descriptor (.opd) that @p s's
 * st_value named, whose code entry is now @p s's value; 0 for every other symbol.
 */
uint64_t cq_elf_symbol_descriptor(const struct cq_elf *e, const struct cq_symbol *s);

/** Load the symbol tables (idempotent). */
struct cq_error *cq_elf_load_symbols(struct cq_elf *e);

/**
 * Find the defined symbol @p name (.symtab preferred over .dynsym, global over local);
 * NULL if absent. Symbols must be loaded.
 */
const struct cq_symbol *cq_elf_find_symbol(struct cq_elf *e, const char *name);

/**
 * Find a mangled symbol (C++ "_Z...", Rust "_R...") by its plain name, as gdb does: the
 * demangled name without its parameter list ("ready" for _ZL5ready, "ns::f" for
 * _ZN2ns1fEv), through libbfd's demangler (libiberty's). NULL if absent.
 */
const struct cq_symbol *cq_elf_find_symbol_plain(struct cq_elf *e, const char *name);

/** Nearest symbol at or below link-time address @p vaddr (inside its size when it has one). */
const struct cq_symbol *cq_elf_symbol_at(struct cq_elf *e, uint64_t vaddr);

/** cq_elf_symbol_at() of @p n addresses (ret[k] for vaddrs[k]), the same answers: while
 * lookups scan the symbol tables in place (a few per file), up to 32 addresses are found
 * in one scan. A stack walk names its frames so, not one scan per frame. */
void cq_elf_symbols_at(struct cq_elf *e, const uint64_t *vaddrs, size_t n, const struct cq_symbol **ret);

/** A link-time address range. */
struct cq_range {
	uint64_t start, end;
};

/**
 * The read-only data sections of the file (.rodata*, .interp): data, never code, even
 * where the linker put them into an executable segment (s390x, ppc). Returns how many were
 * stored into @p ret (at most @p max).
 */
size_t cq_elf_rodata_sections(struct cq_elf *e, struct cq_range *ret, size_t max);

/**
 * Read @p len bytes of the file's contents that back link-time address @p vaddr (PT_LOAD
 * file part only). CQ_ERR_FAULT if the range is not file-backed.
 */
struct cq_error *cq_elf_read_vaddr(struct cq_elf *e, uint64_t vaddr, void *buf, size_t len);

#endif
