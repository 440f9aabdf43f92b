/* SPDX-License-Identifier: MIT */
/* mkcore OUTDIR: writes synthetic Linux ELF cores for the bad-input suite
 * (tests/badinput/run.sh).
 *
 * Valid cores for the four class/byte-order combinations (x86_64 LE64, i386 LE32, s390x
 * BE64, ppc32 BE32), each with an expected-output file <arch>.expected.json and a minimal
 * executable <arch>.exe; malformed cores derived from them by patching or cutting bytes;
 * cores whose link_map list is hostile; and compressed inputs (valid, corrupt, truncated,
 * a "bomb").
 *
 * Layouts (prstatus, prpsinfo, siginfo, phdr) are written out by hand here, from the
 * kernel's structs, not from corelib's decoder: the point is to check the decoder. Only the
 * register offsets come from the target tables. Every file stays below 100 KB. */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "base/decode.h"
#include "targets/target.h"

#ifndef NT_FILE
#define NT_FILE 0x46494c45
#endif
#ifndef NT_SIGINFO
#define NT_SIGINFO 0x53494749
#endif
#ifndef NT_386_TLS
#define NT_386_TLS 0x200
#endif

static const char *outdir;

static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "mkcore: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static void *xcalloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);
	if (!p)
		die("out of memory");
	return p;
}

static void write_file(const char *name, const void *p, size_t n)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", outdir, name);
	FILE *f = fopen(path, "wb");
	if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f) != 0)
		die("%s: %s", path, strerror(errno));
	if (n > 100 * 1024)
		die("%s: %zu bytes, the limit is 100 KB", path, n);
}

/* ---- the synthetic process ----------------------------------------------------------- */

/* Addresses: segment 1 is fully dumped; segment 2 has an undumped tail (filesz < memsz);
 * segment 3 (link_map cores only) holds program headers, dynamic section, r_debug and the
 * link_map list. On 64-bit targets segments 2 and 3 are above 4 GiB. */
#define A1 UINT64_C(0x10000)
#define SEG1_SIZE 0x1000
#define SEG2_FILESZ 0x1000
#define SEG2_MEMSZ 0x2000
#define PATTERN UINT64_C(0x1122334455667788)
#define PATTERN_AT (A1 + 0x100)
#define UNMAPPED UINT64_C(0x5000)

static uint64_t addr2(const struct cq_target *t)
{
	return t->elf_class == ELFCLASS64 ? UINT64_C(0x7f0000000000) : UINT64_C(0x40000000);
}

static uint64_t addr3(const struct cq_target *t)
{
	return t->elf_class == ELFCLASS64 ? UINT64_C(0x7f0000100000) : UINT64_C(0x40100000);
}

struct thread_spec {
	int32_t tid;
	int16_t cursig;
	uint64_t pc, sp, tp;
};

static void threads_of(const struct cq_target *t, struct thread_spec th[2])
{
	uint64_t a2 = addr2(t);
	th[0] = (struct thread_spec){1001, 11, A1 + 0x20, a2 + 0xff0, a2 + 0x700};
	th[1] = (struct thread_spec){1002, 0, A1 + 0x40, a2 + 0xef0, a2 + 0x800};
}

/* Link-map variants. */
enum lm_kind { LM_NONE, LM_OK, LM_CYCLE, LM_WILD_NEXT, LM_BAD_NAME, LM_LONG };
#define LM_LONG_COUNT 5000

struct build_opts {
	enum lm_kind lm;
	size_t prstatus_size; /* 0: the kernel's size; else a short note of this many bytes */
	bool with_nt_file;
};

struct note {
	const char *name;
	uint32_t type;
	uint8_t *desc;
	size_t descsz;
};

struct seg {
	uint64_t vaddr, memsz, filesz;
	uint32_t flags;
	uint8_t *data; /* filesz bytes */
};

/* A serialized core plus where its parts are, for the malformed variants. */
struct image {
	const struct cq_target *t;
	uint8_t *p;
	size_t len;
	size_t ehsize, phoff, phentsize, phnum;
	size_t note_off, note_size;
	size_t nnotes;
	size_t note_hdr[32]; /* file offset of each note header */
	uint32_t note_type[32];
	size_t seg_off[4];   /* file offset of each PT_LOAD's data */
	size_t nsegs;        /* PT_LOADs; phdr 0 is PT_NOTE, phdr 1+i is segment i */
};

static bool is64(const struct cq_target *t)
{
	return t->elf_class == ELFCLASS64;
}

static unsigned wsize(const struct cq_target *t)
{
	return is64(t) ? 8 : 4;
}

static void st(const struct cq_target *t, uint8_t *p, unsigned size, uint64_t v)
{
	cq_store_uint(t, p, size, v);
}

/* struct elf_prstatus: siginfo (3 ints), cursig (short), sigpend, sighold (ulong), pid, ppid,
 * pgrp, sid (int), 4 timevals (2 longs each), pr_reg, pr_fpvalid (int). */
static size_t prstatus_reg_off(const struct cq_target *t)
{
	return is64(t) ? 112 : 72;
}

static size_t prstatus_pid_off(const struct cq_target *t)
{
	return is64(t) ? 32 : 24;
}

static size_t prstatus_size(const struct cq_target *t)
{
	size_t n = prstatus_reg_off(t) + t->reg_block_size + 4, w = wsize(t);
	return (n + w - 1) / w * w;
}

static void set_reg(const struct cq_target *t, uint8_t *regs, int idx, uint64_t v)
{
	const struct cq_reg *r = &t->regs[idx];
	st(t, regs + r->offset, r->size, v);
}

static uint8_t *make_prstatus(const struct cq_target *t, const struct thread_spec *th,
			      size_t *size_ret, size_t want)
{
	size_t full = prstatus_size(t), size = want ? want : full;
	uint8_t *d = xcalloc(full);
	st(t, d + 0, 4, (uint64_t)(int64_t)th->cursig); /* si_signo */
	st(t, d + 12, 2, (uint64_t)(uint16_t)th->cursig);
	size_t pid = prstatus_pid_off(t);
	st(t, d + pid, 4, (uint32_t)th->tid);
	st(t, d + pid + 4, 4, 1);    /* ppid */
	st(t, d + pid + 8, 4, 1001); /* pgrp */
	st(t, d + pid + 12, 4, 1);   /* sid */
	uint8_t *regs = d + prstatus_reg_off(t);
	/* Every register gets a recognizable value first; pc, sp, tp then get theirs. */
	for (unsigned i = 0; i < t->nregs; i++)
		if (strcmp(t->regs[i].name, "tp") != 0)
			set_reg(t, regs, (int)i, 0x100 + i);
	/* hppa's pc register carries the privilege level (3) in its low bits: not the pc */
	set_reg(t, regs, t->pc_reg, th->pc | t->pc_flag_bits);
	set_reg(t, regs, t->sp_reg, th->sp);
	if (t->tp_reg >= 0)
		set_reg(t, regs, t->tp_reg, th->tp);
	if (t->gs_reg >= 0)
		set_reg(t, regs, t->gs_reg, (6 << 3) | 3); /* GDT entry 6, RPL 3 */
	*size_ret = size;
	return d;
}

/* struct user_desc x 3 (GDT entries 6..8), entry 6 is the thread's TLS. */
static uint8_t *make_386_tls(const struct cq_target *t, const struct thread_spec *th,
			     size_t *size_ret)
{
	uint8_t *d = xcalloc(48);
	for (unsigned k = 0; k < 3; k++) {
		st(t, d + 16 * k, 4, 6 + k);
		st(t, d + 16 * k + 4, 4, k == 0 ? th->tp : 0x1000 * (k + 1));
		st(t, d + 16 * k + 8, 4, 0xfffff);
		st(t, d + 16 * k + 12, 4, 0x51);
	}
	*size_ret = 48;
	return d;
}

/* struct elf_prpsinfo: state, sname, zomb, nice (chars), flag (ulong), uid, gid (uid width
 * from the ABI), pid, ppid, pgrp, sid (int), fname[16], psargs[80]. */
static uint8_t *make_prpsinfo(const struct cq_target *t, size_t *size_ret)
{
	size_t w = wsize(t), u = t->prpsinfo_uid_size;
	size_t flag = w, uid = flag + w, ids = uid + 2 * u;
	ids = (ids + 3) / 4 * 4;
	size_t fname = ids + 16, psargs = fname + 16, size = psargs + 80;
	size = (size + w - 1) / w * w;
	uint8_t *d = xcalloc(size);
	d[0] = 0;   /* R */
	d[1] = 'R';
	st(t, d + flag, (unsigned)w, 0x400600);
	st(t, d + uid, (unsigned)u, 1000);
	st(t, d + uid + u, (unsigned)u, 1000);
	st(t, d + ids, 4, 1001);
	st(t, d + ids + 4, 4, 1);
	st(t, d + ids + 8, 4, 1001);
	st(t, d + ids + 12, 4, 1);
	memcpy(d + fname, "synth", 5);
	memcpy(d + psargs, "synth --test ", 13); /* the kernel pads with spaces */
	*size_ret = size;
	return d;
}

static uint8_t *make_siginfo(const struct cq_target *t, size_t *size_ret)
{
	uint8_t *d = xcalloc(128);
	st(t, d + 0, 4, 11);  /* si_signo */
	/* si_errno 0, si_code SEGV_MAPERR; MIPS puts si_code before si_errno */
	st(t, d + (t->siginfo_code_first ? 8 : 4), 4, 0);
	st(t, d + (t->siginfo_code_first ? 4 : 8), 4, 1);
	st(t, d + (is64(t) ? 16 : 12), wsize(t), 0xdead0);
	*size_ret = 128;
	return d;
}

static uint8_t *make_auxv(const struct cq_target *t, enum lm_kind lm, size_t *size_ret)
{
	uint64_t v[16][2];
	size_t n = 0;
	if (lm != LM_NONE) {
		v[n][0] = AT_PHDR; v[n++][1] = addr3(t);
		v[n][0] = AT_PHENT; v[n++][1] = is64(t) ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
		v[n][0] = AT_PHNUM; v[n++][1] = 3;
	}
	v[n][0] = AT_PAGESZ; v[n++][1] = 4096;
	v[n][0] = AT_ENTRY; v[n++][1] = A1 + 0x20;
	v[n][0] = AT_UID; v[n++][1] = 1000;
	v[n][0] = AT_NULL; v[n++][1] = 0;
	unsigned w = wsize(t);
	uint8_t *d = xcalloc(n * 2 * w);
	for (size_t i = 0; i < n; i++) {
		st(t, d + 2 * w * i, w, v[i][0]);
		st(t, d + 2 * w * i + w, w, v[i][1]);
	}
	*size_ret = n * 2 * w;
	return d;
}

/* One mapping: /synthetic/lib.so over all of segment 2 (file offset 3 pages). The file does
 * not exist, so the undumped tail of segment 2 must still fault. */
static uint8_t *make_nt_file(const struct cq_target *t, size_t *size_ret)
{
	static const char name[] = "/synthetic/lib.so";
	unsigned w = wsize(t);
	size_t size = 5 * w + sizeof(name);
	size = (size + 3) / 4 * 4;
	uint8_t *d = xcalloc(size);
	st(t, d, w, 1);
	st(t, d + w, w, 4096);
	st(t, d + 2 * w, w, addr2(t));
	st(t, d + 3 * w, w, addr2(t) + SEG2_MEMSZ);
	st(t, d + 4 * w, w, 3);
	memcpy(d + 5 * w, name, sizeof(name));
	*size_ret = size;
	return d;
}

static void seg1_fill(const struct cq_target *t, uint8_t *d)
{
	for (size_t i = 0; i < SEG1_SIZE; i++)
		d[i] = (uint8_t)(i & 0xff);
	st(t, d + (PATTERN_AT - A1), 8, PATTERN);
}

static void seg2_fill(const struct cq_target *t, uint8_t *d)
{
	for (size_t i = 0; i < SEG2_FILESZ; i++)
		d[i] = (uint8_t)((i * 7 + 3) & 0xff);
	memcpy(d, "synthetic segment two", 22);
	st(t, d + 0x40, wsize(t), PATTERN_AT); /* a pointer, target width and order */
}

/* Segment 3 for the link_map cores: phdrs at +0, dynamic at +0x200, r_debug at +0x300,
 * strings at +0x380, link_map entries from +0x400. */
#define LM_DYN 0x200
#define LM_RDEBUG 0x300
#define LM_STR 0x380
#define LM_MAPS 0x400

static uint8_t *make_seg3(const struct cq_target *t, enum lm_kind lm, size_t *size_ret)
{
	unsigned w = wsize(t);
	uint64_t base = addr3(t);
	size_t lm_size = 5 * w; /* l_addr, l_name, l_ld, l_next, l_prev */
	size_t size = lm == LM_LONG ? LM_MAPS + (LM_LONG_COUNT + 2) * 2 * w : 0x1000;
	size = (size + 0xfff) & ~(size_t)0xfff;
	uint8_t *d = xcalloc(size);
	/* Program headers as the kernel left them in memory: PT_PHDR, PT_LOAD, PT_DYNAMIC. */
	size_t pe = is64(t) ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	struct { uint32_t type; uint64_t vaddr, size; } ph[3] = {
		{PT_PHDR, base, 3 * pe}, {PT_LOAD, base, size}, {PT_DYNAMIC, base + LM_DYN, 4 * w}};
	for (int i = 0; i < 3; i++) {
		uint8_t *p = d + i * pe;
		st(t, p, 4, ph[i].type);
		if (is64(t)) {
			st(t, p + 4, 4, PF_R | PF_W);
			st(t, p + 16, 8, ph[i].vaddr);
			st(t, p + 24, 8, ph[i].vaddr);
			st(t, p + 32, 8, ph[i].size);
			st(t, p + 40, 8, ph[i].size);
		} else {
			st(t, p + 8, 4, ph[i].vaddr);
			st(t, p + 12, 4, ph[i].vaddr);
			st(t, p + 16, 4, ph[i].size);
			st(t, p + 20, 4, ph[i].size);
			st(t, p + 24, 4, PF_R | PF_W);
		}
	}
	/* Dynamic section: DT_DEBUG -> r_debug, DT_NULL. */
	st(t, d + LM_DYN, w, DT_DEBUG);
	st(t, d + LM_DYN + w, w, base + LM_RDEBUG);
	/* r_debug: int r_version; link_map *r_map; ElfW(Addr) r_brk; int r_state; r_ldbase */
	uint64_t first = base + LM_MAPS;
	st(t, d + LM_RDEBUG, 4, 1);
	st(t, d + LM_RDEBUG + w, w, first);
	st(t, d + LM_RDEBUG + 2 * w, w, A1 + 0x80);
	st(t, d + LM_RDEBUG + 4 * w, w, 0x50000000);
	/* Strings. */
	uint64_t s_empty = base + LM_STR, s_a = base + LM_STR + 8, s_b = base + LM_STR + 0x28;
	memcpy(d + LM_STR + 8, "/lib/liba.so.1", 15);
	memcpy(d + LM_STR + 0x28, "/lib/libb.so.2", 15);
	if (lm == LM_LONG) {
		/* Entries overlap to keep the file small: entry k starts at slot 2k (slots are
		 * words). Its l_next (slot 2k+3) is also the l_name of entry k+1 and points at
		 * entry k+1, whose first word (l_addr, slot 2k+2) is 0: an empty name. */
		uint8_t *m = d + LM_MAPS;
		st(t, m + w, w, s_empty);
		for (size_t k = 0; k + 1 < LM_LONG_COUNT; k++)
			st(t, m + (2 * k + 3) * w, w, first + (k + 1) * 2 * w);
		*size_ret = size;
		return d;
	}
	/* Three entries: the executable (empty name), liba, libb. */
	uint64_t e[3] = {first, first + lm_size, first + 2 * lm_size};
	uint64_t names[3] = {s_empty, s_a, s_b};
	uint64_t next[3] = {e[1], e[2], 0};
	uint64_t addrs[3] = {0, 0x50000000, 0x50100000};
	if (lm == LM_CYCLE)
		next[2] = e[1];
	else if (lm == LM_WILD_NEXT)
		next[1] = is64(t) ? UINT64_C(0xdead0000beef0000) : UINT64_C(0xdeadbe00);
	else if (lm == LM_BAD_NAME)
		names[1] = UNMAPPED;
	for (int i = 0; i < 3; i++) {
		uint8_t *m = d + LM_MAPS + i * lm_size;
		st(t, m, w, addrs[i]);
		st(t, m + w, w, names[i]);
		st(t, m + 2 * w, w, i == 0 ? base + LM_DYN : 0);
		st(t, m + 3 * w, w, next[i]);
		st(t, m + 4 * w, w, i ? e[i - 1] : 0);
	}
	*size_ret = size;
	return d;
}

/* ---- serialization ---------------------------------------------------------------------- */

static size_t align(size_t v, size_t a)
{
	return (v + a - 1) / a * a;
}

static void put_phdr(struct image *im, size_t i, uint32_t type, uint32_t flags, uint64_t off,
		     uint64_t vaddr, uint64_t filesz, uint64_t memsz, uint64_t al)
{
	const struct cq_target *t = im->t;
	uint8_t *p = im->p + im->phoff + i * im->phentsize;
	st(t, p, 4, type);
	if (is64(t)) {
		st(t, p + 4, 4, flags);
		st(t, p + 8, 8, off);
		st(t, p + 16, 8, vaddr);
		st(t, p + 32, 8, filesz);
		st(t, p + 40, 8, memsz);
		st(t, p + 48, 8, al);
	} else {
		st(t, p + 4, 4, off);
		st(t, p + 8, 4, vaddr);
		st(t, p + 16, 4, filesz);
		st(t, p + 20, 4, memsz);
		st(t, p + 24, 4, flags);
		st(t, p + 28, 4, al);
	}
}

enum ph_field { PH_TYPE, PH_OFFSET, PH_VADDR, PH_FILESZ, PH_MEMSZ };

static void patch_phdr(struct image *im, size_t i, enum ph_field f, uint64_t v)
{
	static const uint8_t off64[] = {0, 8, 16, 32, 40}, off32[] = {0, 4, 8, 16, 20};
	const struct cq_target *t = im->t;
	uint8_t *p = im->p + im->phoff + i * im->phentsize;
	st(t, p + (is64(t) ? off64[f] : off32[f]), f == PH_TYPE ? 4 : wsize(t), v);
}

static void put_ehdr(const struct cq_target *t, uint8_t *p, uint16_t type, uint64_t entry,
		     uint64_t phoff, uint16_t phnum)
{
	memcpy(p, ELFMAG, SELFMAG);
	p[EI_CLASS] = t->elf_class;
	p[EI_DATA] = t->little_endian ? ELFDATA2LSB : ELFDATA2MSB;
	p[EI_VERSION] = EV_CURRENT;
	p[EI_OSABI] = ELFOSABI_NONE;
	st(t, p + 16, 2, type);
	st(t, p + 18, 2, t->e_machine);
	st(t, p + 20, 4, EV_CURRENT);
	if (is64(t)) {
		st(t, p + 24, 8, entry);
		st(t, p + 32, 8, phoff);
		st(t, p + 52, 2, sizeof(Elf64_Ehdr));
		st(t, p + 54, 2, sizeof(Elf64_Phdr));
		st(t, p + 56, 2, phnum);
		st(t, p + 58, 2, sizeof(Elf64_Shdr));
	} else {
		st(t, p + 24, 4, entry);
		st(t, p + 28, 4, phoff);
		st(t, p + 40, 2, sizeof(Elf32_Ehdr));
		st(t, p + 42, 2, sizeof(Elf32_Phdr));
		st(t, p + 44, 2, phnum);
		st(t, p + 46, 2, sizeof(Elf32_Shdr));
	}
}

/* Offsets of e_phnum, e_shoff, e_shnum in the ELF header. */
static size_t eh_phnum_off(const struct cq_target *t) { return is64(t) ? 56 : 44; }
static size_t eh_shoff_off(const struct cq_target *t) { return is64(t) ? 40 : 32; }
static size_t eh_shnum_off(const struct cq_target *t) { return is64(t) ? 60 : 48; }

static void serialize(const struct cq_target *t, struct note *notes, size_t nnotes,
		      struct seg *segs, size_t nsegs, struct image *im)
{
	memset(im, 0, sizeof(*im));
	im->t = t;
	im->ehsize = is64(t) ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	im->phentsize = is64(t) ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	im->phoff = im->ehsize;
	im->phnum = 1 + nsegs;
	im->nsegs = nsegs;
	im->nnotes = nnotes;
	size_t off = im->phoff + im->phnum * im->phentsize;
	im->note_off = off = align(off, 4);
	for (size_t i = 0; i < nnotes; i++) {
		im->note_hdr[i] = off;
		im->note_type[i] = notes[i].type;
		off += 12 + align(strlen(notes[i].name) + 1, 4) + align(notes[i].descsz, 4);
	}
	im->note_size = off - im->note_off;
	for (size_t i = 0; i < nsegs; i++) {
		off = align(off, 16);
		im->seg_off[i] = off;
		off += segs[i].filesz;
	}
	im->len = off;
	im->p = xcalloc(im->len);
	put_ehdr(t, im->p, ET_CORE, 0, im->phoff, (uint16_t)im->phnum);
	put_phdr(im, 0, PT_NOTE, 0, im->note_off, 0, im->note_size, 0, 4);
	for (size_t i = 0; i < nsegs; i++)
		put_phdr(im, 1 + i, PT_LOAD, segs[i].flags, im->seg_off[i], segs[i].vaddr,
			 segs[i].filesz, segs[i].memsz, 4096);
	for (size_t i = 0; i < nnotes; i++) {
		uint8_t *p = im->p + im->note_hdr[i];
		size_t nl = strlen(notes[i].name) + 1;
		st(t, p, 4, nl);
		st(t, p + 4, 4, notes[i].descsz);
		st(t, p + 8, 4, notes[i].type);
		memcpy(p + 12, notes[i].name, nl);
		memcpy(p + 12 + align(nl, 4), notes[i].desc, notes[i].descsz);
	}
	for (size_t i = 0; i < nsegs; i++)
		memcpy(im->p + im->seg_off[i], segs[i].data, segs[i].filesz);
}

static void build_core(const struct cq_target *t, const struct build_opts *o, struct image *im)
{
	struct thread_spec th[2];
	threads_of(t, th);
	struct note notes[16];
	size_t n = 0;
	for (int k = 0; k < 2; k++) {
		notes[n] = (struct note){"CORE", NT_PRSTATUS, NULL, 0};
		notes[n].desc = make_prstatus(t, &th[k], &notes[n].descsz, o->prstatus_size);
		n++;
		if (k == 0) {
			notes[n] = (struct note){"CORE", NT_PRPSINFO, NULL, 0};
			notes[n].desc = make_prpsinfo(t, &notes[n].descsz);
			n++;
			notes[n] = (struct note){"CORE", NT_SIGINFO, NULL, 0};
			notes[n].desc = make_siginfo(t, &notes[n].descsz);
			n++;
			notes[n] = (struct note){"CORE", NT_AUXV, NULL, 0};
			notes[n].desc = make_auxv(t, o->lm, &notes[n].descsz);
			n++;
			if (o->with_nt_file) {
				notes[n] = (struct note){"CORE", NT_FILE, NULL, 0};
				notes[n].desc = make_nt_file(t, &notes[n].descsz);
				n++;
			}
		}
		if (t->tp_source == CQ_TP_NOTE_386_TLS) {
			notes[n] = (struct note){"LINUX", NT_386_TLS, NULL, 0};
			notes[n].desc = make_386_tls(t, &th[k], &notes[n].descsz);
			n++;
		}
	}
	struct seg segs[3];
	size_t ns = 0;
	uint8_t *d1 = xcalloc(SEG1_SIZE), *d2 = xcalloc(SEG2_FILESZ), *d3 = NULL;
	seg1_fill(t, d1);
	seg2_fill(t, d2);
	segs[ns++] = (struct seg){A1, SEG1_SIZE, SEG1_SIZE, PF_R | PF_X, d1};
	segs[ns++] = (struct seg){addr2(t), SEG2_MEMSZ, SEG2_FILESZ, PF_R | PF_W, d2};
	if (o->lm != LM_NONE) {
		size_t s3;
		d3 = make_seg3(t, o->lm, &s3);
		segs[ns++] = (struct seg){addr3(t), s3, s3, PF_R | PF_W, d3};
	}
	serialize(t, notes, n, segs, ns, im);
	for (size_t i = 0; i < n; i++)
		free(notes[i].desc);
	free(d1);
	free(d2);
	free(d3);
}

/* A minimal executable for --exe: one PT_LOAD over segment 1, no sections. */
static void write_exe(const struct cq_target *t, const char *name)
{
	size_t eh = is64(t) ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	size_t pe = is64(t) ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	size_t len = eh + pe + 64;
	struct image im = {.t = t, .phoff = eh, .phentsize = pe};
	im.p = xcalloc(len);
	put_ehdr(t, im.p, ET_EXEC, A1 + 0x20, eh, 1);
	st(t, im.p + eh_shnum_off(t) - 2, 2, 0); /* e_shentsize: no sections */
	put_phdr(&im, 0, PT_LOAD, PF_R | PF_X, 0, A1, len, SEG1_SIZE, 4096);
	write_file(name, im.p, len);
	free(im.p);
}

/* ---- expected output -------------------------------------------------------------------- */

static void hex_of(const uint8_t *p, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
}

static void write_expected(const struct cq_target *t, const char *core, const char *exe,
			   const struct image *im, bool compressed)
{
	char name[256], hex[80];
	snprintf(name, sizeof(name), "%s.expected.json", core);
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", outdir, name);
	FILE *f = fopen(path, "w");
	if (!f)
		die("%s: %s", path, strerror(errno));
	struct thread_spec th[2];
	threads_of(t, th);
	uint64_t a2 = addr2(t);
	fprintf(f, "{\n  \"core\": \"%s\",\n  \"exe\": \"%s\",\n", core, exe);
	fprintf(f, "  \"info\": {\n    \"compressed\": %s,\n    \"arch\": \"%s\",\n    \"bits\": %u,\n"
		"    \"byte_order\": \"%s\",\n    \"pid\": 1001,\n    \"ppid\": 1,\n"
		"    \"command\": \"synth\",\n    \"args\": \"synth --test\",\n"
		"    \"signal\": {\"number\": 11, \"name\": \"SIGSEGV\", \"source\": \"NT_SIGINFO\", "
		"\"code\": 1, \"address\": \"0xdead0\"},\n"
		"    \"crashing_thread\": 1001,\n    \"thread_count\": 2,\n    \"threads\": [\n",
		compressed ? "true" : "false", t->name, wsize(t) * 8,
		t->little_endian ? "little" : "big");
	for (int k = 0; k < 2; k++) {
		/* MIPS cores hold no thread pointer: null */
		char tp[32] = "null";
		if (t->tp_source != CQ_TP_NONE)
			snprintf(tp, sizeof(tp), "\"0x%" PRIx64 "\"", th[k].tp);
		fprintf(f, "      {\"tid\": %d, \"crashing\": %s, \"signal\": %d, \"pc\": \"0x%" PRIx64
			"\", \"sp\": \"0x%" PRIx64 "\", \"tp\": %s}%s\n",
			th[k].tid, k == 0 ? "true" : "false", th[k].cursig, th[k].pc, th[k].sp,
			tp, k == 0 ? "," : "");
	}
	fprintf(f, "    ]\n  },\n");
	/* Reads: the pattern in target order, the start of each segment, a read across the
	 * end of segment 1's first half. Hex is of the bytes as they are in the core. */
	fprintf(f, "  \"reads\": [\n");
	uint8_t b[16];
	st(t, b, 8, PATTERN);
	hex_of(b, 8, hex);
	fprintf(f, "    {\"addr\": \"0x%" PRIx64 "\", \"len\": 8, \"hex\": \"%s\"},\n", PATTERN_AT, hex);
	hex_of(im->p + im->seg_off[0], 16, hex);
	fprintf(f, "    {\"addr\": \"0x%" PRIx64 "\", \"len\": 16, \"hex\": \"%s\"},\n", A1, hex);
	hex_of(im->p + im->seg_off[0] + SEG1_SIZE - 4, 4, hex);
	fprintf(f, "    {\"addr\": \"0x%" PRIx64 "\", \"len\": 4, \"hex\": \"%s\"},\n", A1 + SEG1_SIZE - 4, hex);
	hex_of(im->p + im->seg_off[1], 22, hex);
	fprintf(f, "    {\"addr\": \"0x%" PRIx64 "\", \"len\": 22, \"hex\": \"%s\"},\n", a2, hex);
	hex_of(im->p + im->seg_off[1] + SEG2_FILESZ - 8, 8, hex);
	fprintf(f, "    {\"addr\": \"0x%" PRIx64 "\", \"len\": 8, \"hex\": \"%s\"}\n", a2 + SEG2_FILESZ - 8, hex);
	fprintf(f, "  ],\n");
	/* Typed reads: the same values whatever the byte order. */
	fprintf(f, "  \"values\": [\n"
		"    {\"addr\": \"0x%" PRIx64 "\", \"as\": \"u64\", \"len\": 8, \"value\": \"0x%" PRIx64 "\"},\n"
		"    {\"addr\": \"0x%" PRIx64 "\", \"as\": \"ptr\", \"len\": %u, \"value\": \"0x%" PRIx64 "\"},\n"
		"    {\"addr\": \"0x%" PRIx64 "\", \"as\": \"str\", \"len\": 64, \"string\": \"synthetic segment two\"}\n"
		"  ],\n",
		PATTERN_AT, PATTERN, a2 + 0x40, wsize(t), PATTERN_AT, a2);
	/* Faults: first undumped byte, a read straddling into the undumped tail, the last
	 * byte of the tail, an unmapped address, the byte after segment 2. */
	fprintf(f, "  \"faults\": [\n"
		"    {\"addr\": \"0x%" PRIx64 "\", \"len\": 1, \"fault\": \"0x%" PRIx64 "\"},\n"
		"    {\"addr\": \"0x%" PRIx64 "\", \"len\": 16, \"fault\": \"0x%" PRIx64 "\"},\n"
		"    {\"addr\": \"0x%" PRIx64 "\", \"len\": 1, \"fault\": \"0x%" PRIx64 "\"},\n"
		"    {\"addr\": \"0x%" PRIx64 "\", \"len\": 4, \"fault\": \"0x%" PRIx64 "\"},\n"
		"    {\"addr\": \"0x%" PRIx64 "\", \"len\": 1, \"fault\": \"0x%" PRIx64 "\"}\n"
		"  ],\n",
		a2 + SEG2_FILESZ, a2 + SEG2_FILESZ, a2 + SEG2_FILESZ - 8, a2 + SEG2_FILESZ,
		a2 + SEG2_MEMSZ - 1, a2 + SEG2_MEMSZ - 1, UNMAPPED, UNMAPPED, a2 + SEG2_MEMSZ,
		a2 + SEG2_MEMSZ);
	fprintf(f, "  \"maps\": [\n"
		"    {\"start\": \"0x%" PRIx64 "\", \"end\": \"0x%" PRIx64 "\", \"core_bytes\": %d, \"source\": \"core\"},\n"
		"    {\"start\": \"0x%" PRIx64 "\", \"end\": \"0x%" PRIx64 "\", \"core_bytes\": %d, \"source\": \"core+unavailable\", \"mapping\": \"/synthetic/lib.so\"}\n"
		"  ]\n}\n",
		A1, A1 + SEG1_SIZE, SEG1_SIZE, a2, a2 + SEG2_MEMSZ, SEG2_FILESZ);
	if (fclose(f) != 0)
		die("%s: %s", path, strerror(errno));
}

/* ---- compression -------------------------------------------------------------------------- */

/* gzip (or zlib when @p zlib) of @p n bytes, optionally split in @p members gzip members;
 * @p zeros: input is that many zero bytes instead of @p p. */
static uint8_t *deflate_buf(const uint8_t *p, size_t n, bool zlib, int members, size_t *out_len)
{
	size_t cap = 256 * 1024, len = 0;
	uint8_t *out = xcalloc(cap);
	static uint8_t zero[64 * 1024];
	size_t per = members > 1 ? (n + members - 1) / members : n;
	for (size_t start = 0; start < n || (n == 0 && start == 0); start += per) {
		size_t chunk = n - start < per ? n - start : per;
		z_stream zs = {0};
		if (deflateInit2(&zs, 9, Z_DEFLATED, zlib ? 15 : 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK)
			die("deflateInit2 failed");
		size_t fed = 0;
		int rc;
		do {
			size_t step = chunk - fed;
			if (!p && step > sizeof(zero))
				step = sizeof(zero);
			zs.next_in = (Bytef *)(p ? p + start + fed : zero);
			zs.avail_in = (uInt)step;
			fed += step;
			int flush = fed == chunk ? Z_FINISH : Z_NO_FLUSH;
			do {
				if (cap - len < 64 * 1024) {
					cap *= 2;
					out = realloc(out, cap);
					if (!out)
						die("out of memory");
				}
				zs.next_out = out + len;
				zs.avail_out = (uInt)(cap - len);
				rc = deflate(&zs, flush);
				len = cap - zs.avail_out;
			} while (zs.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
		} while (fed < chunk);
		deflateEnd(&zs);
		if (n == 0)
			break;
	}
	*out_len = len;
	return out;
}

static void write_compressed(const char *name, const uint8_t *p, size_t n, bool zlib, int members)
{
	size_t len;
	uint8_t *z = deflate_buf(p, n, zlib, members, &len);
	write_file(name, z, len);
	free(z);
}

/* ---- malformed variants -------------------------------------------------------------------- */

static struct image clone(const struct image *im)
{
	struct image c = *im;
	c.p = xcalloc(im->len);
	memcpy(c.p, im->p, im->len);
	return c;
}

static void emit(const char *arch, const char *what, const struct image *im, size_t len)
{
	char name[256];
	snprintf(name, sizeof(name), "%s-%s.core", arch, what);
	write_file(name, im->p, len);
}

static void emit_patched(const char *arch, const char *what, struct image *c)
{
	emit(arch, what, c, c->len);
	free(c->p);
}

/* Index of the first note of @p type, or die. */
static size_t note_index(const struct image *im, uint32_t type)
{
	for (size_t i = 0; i < im->nnotes; i++)
		if (im->note_type[i] == type)
			return i;
	die("no note of type 0x%x", type);
	return 0;
}

static size_t note_desc_off(const struct image *im, size_t i)
{
	const uint8_t *p = im->p + im->note_hdr[i];
	size_t namesz = (size_t)cq_load_uint(im->t, p, 4);
	return im->note_hdr[i] + 12 + align(namesz, 4);
}

static void malformed(const struct cq_target *t, const struct image *v)
{
	const char *a = t->name;
	struct image c;
	unsigned w = wsize(t);

	/* Truncations. */
	emit(a, "trunc-ident", v, 10);
	emit(a, "trunc-ehdr", v, v->ehsize - 12);
	emit(a, "trunc-phdrs", v, v->phoff + v->phentsize + v->phentsize / 2);
	emit(a, "trunc-notes", v, v->note_off + v->note_size / 2);
	emit(a, "trunc-load1", v, v->seg_off[0] + SEG1_SIZE / 2);
	emit(a, "trunc-load2", v, v->seg_off[1] + 0x10);

	/* Not a core. */
	c = clone(v);
	st(t, c.p + 16, 2, ET_EXEC);
	emit_patched(a, "et-exec", &c);
	c = clone(v);
	st(t, c.p + 16, 2, ET_DYN);
	emit_patched(a, "et-dyn", &c);
	c = clone(v);
	st(t, c.p + 18, 2, 0x1234);
	emit_patched(a, "bad-machine", &c);
	c = clone(v);
	c.p[EI_CLASS] = 3;
	emit_patched(a, "bad-class", &c);
	c = clone(v);
	c.p[EI_CLASS] = ELFCLASSNONE;
	emit_patched(a, "class-none", &c);
	c = clone(v);
	c.p[EI_DATA] = 7;
	emit_patched(a, "bad-data", &c);
	/* The other class: the header is then read with the wrong layout. */
	c = clone(v);
	c.p[EI_CLASS] = is64(t) ? ELFCLASS32 : ELFCLASS64;
	emit_patched(a, "other-class", &c);
	/* The other byte order: e_type and e_machine read swapped. */
	c = clone(v);
	c.p[EI_DATA] = t->little_endian ? ELFDATA2MSB : ELFDATA2LSB;
	emit_patched(a, "other-data", &c);

	/* Notes whose sizes run past the end of the note segment. */
	size_t first = 0, fnote = note_index(v, NT_FILE);
	c = clone(v);
	st(t, c.p + v->note_hdr[first] + 4, 4, 0xfffffff0);
	emit_patched(a, "note-descsz", &c);
	c = clone(v);
	st(t, c.p + v->note_hdr[first], 4, 0xfffffff0);
	emit_patched(a, "note-namesz", &c);
	c = clone(v);
	st(t, c.p + v->note_hdr[fnote] + 4, 4, (uint64_t)(v->note_off + v->note_size - v->note_hdr[fnote]));
	emit_patched(a, "note-descsz-last", &c);
	/* The PT_NOTE outside the file. */
	c = clone(v);
	patch_phdr(&c, 0, PH_OFFSET, v->len + 0x1000);
	emit_patched(a, "pt-note-offset", &c);
	c = clone(v);
	patch_phdr(&c, 0, PH_FILESZ, is64(t) ? UINT64_C(0x8000000000000000) : 0x80000000);
	emit_patched(a, "pt-note-size", &c);
	c = clone(v);
	patch_phdr(&c, 0, PH_OFFSET, is64(t) ? UINT64_MAX - 0x10 : 0xfffffff0);
	emit_patched(a, "pt-note-wrap", &c);
	/* An empty PT_NOTE: no threads. */
	c = clone(v);
	patch_phdr(&c, 0, PH_FILESZ, 0);
	emit_patched(a, "pt-note-empty", &c);

	/* PT_LOADs. */
	c = clone(v);
	patch_phdr(&c, 1, PH_FILESZ, SEG1_SIZE + 0x1000);
	emit_patched(a, "filesz-gt-memsz", &c);
	c = clone(v);
	patch_phdr(&c, 2, PH_VADDR, A1 + 0x800);
	emit_patched(a, "overlap", &c);
	c = clone(v);
	patch_phdr(&c, 2, PH_MEMSZ, is64(t) ? UINT64_MAX - 0xfff : 0xfffff000);
	emit_patched(a, "seg-wrap", &c);
	/* Huge but not wrapping; its file bytes would be far past the end of the file. */
	c = clone(v);
	uint64_t huge = (is64(t) ? UINT64_MAX : UINT64_C(0xffffffff)) - addr2(t) + 1 - 0x1000;
	patch_phdr(&c, 2, PH_MEMSZ, huge);
	patch_phdr(&c, 2, PH_FILESZ, huge);
	emit_patched(a, "seg-huge", &c);
	c = clone(v);
	patch_phdr(&c, 2, PH_OFFSET, is64(t) ? UINT64_MAX - 0x100 : 0xffffff00);
	emit_patched(a, "seg-offset-wrap", &c);

	/* The program header table. */
	c = clone(v);
	st(t, c.p + eh_phnum_off(t), 2, 0xffff);
	emit_patched(a, "phnum-xnum", &c);
	c = clone(v);
	st(t, c.p + eh_phnum_off(t), 2, 0x7fff);
	emit_patched(a, "phnum-huge", &c);
	c = clone(v);
	st(t, c.p + eh_phnum_off(t), 2, 0);
	emit_patched(a, "phnum-zero", &c);
	c = clone(v);
	st(t, c.p + (is64(t) ? 32 : 28), w, v->len - 8);
	emit_patched(a, "phoff-end", &c);
	/* Section headers that do not exist (cores need none). */
	c = clone(v);
	st(t, c.p + eh_shoff_off(t), w, v->len + 0x10000);
	st(t, c.p + eh_shnum_off(t), 2, 40);
	emit_patched(a, "shoff-past-end", &c);
	c = clone(v);
	st(t, c.p + eh_shoff_off(t), w, v->len + 0x10000);
	st(t, c.p + eh_shnum_off(t), 2, 0);
	emit_patched(a, "shoff-xnum-past-end", &c);

	/* NT_FILE counts. */
	size_t fd = note_desc_off(v, fnote);
	c = clone(v);
	st(t, c.p + fd, w, 0xffffffff);
	emit_patched(a, "ntfile-count32", &c);
	c = clone(v);
	st(t, c.p + fd, w, is64(t) ? UINT64_MAX : 0xfffffffe);
	emit_patched(a, "ntfile-count64", &c);
	c = clone(v);
	st(t, c.p + fd, w, is64(t) ? (UINT64_MAX / 24 + 2) : 0x55555556); /* count*3w wraps */
	emit_patched(a, "ntfile-count-wrap", &c);
	c = clone(v);
	st(t, c.p + fd + 3 * w, w, 0); /* end < start */
	emit_patched(a, "ntfile-end-lt-start", &c);
	c = clone(v); /* name not terminated: NUL overwritten by the descriptor end */
	{
		size_t dsz = (size_t)cq_load_uint(t, v->p + v->note_hdr[fnote] + 4, 4);
		size_t name_off = fd + 5 * w, k;
		for (k = name_off; k < fd + dsz; k++)
			if (!c.p[k])
				c.p[k] = 'x';
	}
	emit_patched(a, "ntfile-name-unterminated", &c);

	/* Threads. */
	c = clone(v);
	for (size_t i = 0; i < v->nnotes; i++)
		if (v->note_type[i] == NT_PRSTATUS)
			st(t, c.p + v->note_hdr[i] + 8, 4, 0x7777);
	emit_patched(a, "no-prstatus", &c);
}

/* ---- main ---------------------------------------------------------------------------------- */

static const char *const valid_arches[] = {"x86_64", "i386", "s390x", "ppc32", "mipsel", "mips64el",
					   "hppa", "sh4", "sparc64", "alpha"};

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: mkcore OUTDIR\n");
		return 2;
	}
	outdir = argv[1];
	if (mkdir(outdir, 0755) != 0 && errno != EEXIST)
		die("%s: %s", outdir, strerror(errno));

	for (size_t k = 0; k < sizeof(valid_arches) / sizeof(valid_arches[0]); k++) {
		const struct cq_target *t = cq_target_by_name(valid_arches[k]);
		if (!t)
			die("no target table %s", valid_arches[k]);
		char core[64], exe[64];
		snprintf(core, sizeof(core), "%s.core", t->name);
		snprintf(exe, sizeof(exe), "%s.exe", t->name);
		struct build_opts o = {.lm = LM_NONE, .with_nt_file = true};
		struct image v;
		build_core(t, &o, &v);
		write_file(core, v.p, v.len);
		write_exe(t, exe);
		write_expected(t, core, exe, &v, false);

		/* The same core compressed: gzip, gzip in 3 members, zlib. */
		char z[80];
		snprintf(z, sizeof(z), "%s.core.gz", t->name);
		write_compressed(z, v.p, v.len, false, 1);
		write_expected(t, z, exe, &v, true);
		snprintf(z, sizeof(z), "%s.core.3m.gz", t->name);
		write_compressed(z, v.p, v.len, false, 3);
		write_expected(t, z, exe, &v, true);
		snprintf(z, sizeof(z), "%s.core.zz", t->name);
		write_compressed(z, v.p, v.len, true, 1);
		write_expected(t, z, exe, &v, true);

		malformed(t, &v);

		/* Short NT_PRSTATUS: just before pc/sp/tp are complete; and one with all of them
		 * but not the whole register block (accepted, reported). */
		size_t need = 0;
		int idx[3] = {t->pc_reg, t->sp_reg, t->tp_reg};
		for (int i = 0; i < 3; i++)
			if (idx[i] >= 0 && (size_t)t->regs[idx[i]].offset + t->regs[idx[i]].size > need)
				need = (size_t)t->regs[idx[i]].offset + t->regs[idx[i]].size;
		struct image s;
		o.prstatus_size = prstatus_reg_off(t) + need - 1;
		build_core(t, &o, &s);
		emit(t->name, "prstatus-short", &s, s.len);
		free(s.p);
		o.prstatus_size = 40;
		build_core(t, &o, &s);
		emit(t->name, "prstatus-tiny", &s, s.len);
		free(s.p);
		if (prstatus_reg_off(t) + need < prstatus_size(t) - 8) {
			o.prstatus_size = (prstatus_reg_off(t) + need + 3) / 4 * 4;
			build_core(t, &o, &s);
			emit(t->name, "prstatus-partial", &s, s.len);
			free(s.p);
		}
		o.prstatus_size = 0;

		/* link_map cores. */
		static const struct { enum lm_kind k; const char *n; } lms[] = {
			{LM_OK, "lm-ok"}, {LM_CYCLE, "lm-cycle"}, {LM_WILD_NEXT, "lm-wild-next"},
			{LM_BAD_NAME, "lm-bad-name"}, {LM_LONG, "lm-long"}};
		for (size_t i = 0; i < sizeof(lms) / sizeof(lms[0]); i++) {
			o.lm = lms[i].k;
			build_core(t, &o, &s);
			emit(t->name, lms[i].n, &s, s.len);
			free(s.p);
		}

		/* Compressed inputs that are broken: from the gzip of the valid core. */
		size_t zl;
		uint8_t *gz = deflate_buf(v.p, v.len, false, 1, &zl);
		snprintf(z, sizeof(z), "%s-trunc.core.gz", t->name);
		write_file(z, gz, zl / 2);
		snprintf(z, sizeof(z), "%s-trunc-header.core.gz", t->name);
		write_file(z, gz, 6);
		for (size_t i = zl / 2; i < zl / 2 + 32 && i < zl; i++)
			gz[i] ^= 0x5a;
		snprintf(z, sizeof(z), "%s-corrupt.core.gz", t->name);
		write_file(z, gz, zl);
		free(gz);
		free(v.p);
	}

	/* Inputs that are not cores at all. */
	write_file("empty.core", "", 0);
	static const char text[] = "This is not a core file.\nJust some text.\n";
	write_file("text.core", text, sizeof(text) - 1);
	/* Text that happens to start like a zlib stream header ("x^" is 0x78 0x5e). */
	static const char xtext[] = "x^2 + y^2 = r^2\n";
	write_file("text-x.core", xtext, sizeof(xtext) - 1);
	write_compressed("empty.core.gz", (const uint8_t *)"", 0, false, 1);
	write_compressed("text.core.gz", (const uint8_t *)text, sizeof(text) - 1, false, 1);
	/* A gzip bomb: 64 MiB of zeros (about 64 KB compressed). */
	write_compressed("bomb.core.gz", NULL, (size_t)64 << 20, false, 1);
	/* gzip magic only. */
	write_file("magic-only.core.gz", "\x1f\x8b", 2);
	return 0;
}
