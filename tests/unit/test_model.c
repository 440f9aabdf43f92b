/* SPDX-License-Identifier: MIT */
/* The core model alone (corelib/core.h, source.h), filled by a source made here in memory,
 * with no core file: a target's segments (one partly held, as a truncated core's), threads
 * with register blocks (one short), the auxv and a file map, for a big-endian 64-bit, a
 * little-endian 64-bit and a big-endian 32-bit target. Checked: reads inside and across
 * what is held and past every segment (faults at the first unreadable byte), integers in the
 * target's byte order, strings that end before a fault, registers by name and index, the
 * thread pointer where a register holds it, auxv lookups, the file map's order, where bytes
 * come from, overlapping segments refused; the ASan build checks that closing frees all. */
#include <elf.h>
#include <stdlib.h>

#include "base/decode.h"
#include "check.h"
#include "corelib/core.h"
#include "corelib/source.h"

/* The in-memory source: each segment's bytes in one buffer, the first `held` of them
 * readable (past it, as past a truncated core's end: a fault). */
#define SEG_MAX 4
struct mem_target {
	uint8_t *bytes[SEG_MAX];
	uint64_t held[SEG_MAX];
	uint64_t vaddr[SEG_MAX];
	unsigned n;
	unsigned reads; /* calls of the read operation */
};
static struct mem_target mem;

static unsigned index_of(const struct cq_segment *s)
{
	for (unsigned i = 0; i < mem.n; i++)
		if (mem.vaddr[i] == s->vaddr)
			return i;
	return SEG_MAX;
}

static uint64_t mem_held(const struct cq_core *core, const struct cq_segment *s)
{
	unsigned i = index_of(s);
	return i < SEG_MAX ? mem.held[i] : 0;
}

static struct cq_error *mem_read(struct cq_core *core, const struct cq_segment *s, uint64_t addr, void *buf,
				 size_t len, size_t *got)
{
	unsigned i = index_of(s);
	mem.reads++;
	if (i == SEG_MAX || addr - s->vaddr >= mem.held[i])
		return cq_error_fault(addr, "cannot read target memory at 0x%llx: not held by the test's target",
				      (unsigned long long)addr);
	uint64_t avail = mem.held[i] - (addr - s->vaddr);
	*got = len < avail ? len : (size_t)avail;
	memcpy(buf, mem.bytes[i] + (addr - s->vaddr), *got);
	return NULL;
}

static const struct cq_source mem_source = {"memory", mem_held, mem_read, NULL};

/* A register block of @p t with pc, sp (and the thread pointer where a register holds it). */
static uint8_t *regs_with(const struct cq_target *t, uint64_t pc, uint64_t sp, uint64_t tp)
{
	uint8_t *r = calloc(1, t->reg_block_size);
	cq_store_uint(t, r + t->regs[t->pc_reg].offset, t->regs[t->pc_reg].size, pc);
	cq_store_uint(t, r + t->regs[t->sp_reg].offset, t->regs[t->sp_reg].size, sp);
	if (t->tp_source == CQ_TP_REGISTER)
		cq_store_uint(t, r + t->regs[t->tp_reg].offset, t->regs[t->tp_reg].size, tp);
	return r;
}

static void model_of(const char *arch)
{
	const struct cq_target *t = cq_target_by_name(arch);
	CHECK(t != NULL);
	if (!t)
		return;
	unsigned w = cq_target_ptr_size(t);
	struct cq_core *core = cq_core_new(NULL, t, &mem_source);
	CHECK(core != NULL);
	if (!core)
		return;
	/* memory: a segment of 0x1000 bytes of which 0x800 are held, and one of 0x100 */
	memset(&mem, 0, sizeof(mem));
	mem.n = 2;
	mem.vaddr[0] = 0x10000;
	mem.held[0] = 0x800;
	mem.vaddr[1] = 0x30000;
	mem.held[1] = 0x100;
	for (unsigned i = 0; i < 2; i++) {
		mem.bytes[i] = calloc(1, 0x1000);
		for (unsigned k = 0; k < 0x1000; k++)
			mem.bytes[i][k] = (uint8_t)(k * 7 + i);
	}
	memcpy(mem.bytes[1] + 0xf0, "coreq", 6);
	memcpy(mem.bytes[0] + 0x7fc, "abcd", 4); /* no NUL before the held end */
	struct cq_segment *segs = calloc(2, sizeof(*segs));
	/* given out of order: the model sorts them */
	segs[0] = (struct cq_segment){0x30000, 0x100, 0, 0x100, PF_R};
	segs[1] = (struct cq_segment){0x10000, 0x1000, 0, 0x1000, PF_R | PF_W};
	CHECK(!cq_core_set_segments(core, segs, 2, "test"));
	CHECK(core->nsegments == 2 && core->segments[0].vaddr == 0x10000);
	CHECK_U64(cq_segment_held(core, &core->segments[0]), 0x800);

	uint8_t buf[64];
	CHECK(!cq_core_read(core, 0x10010, buf, 16) && buf[0] == (uint8_t)(0x10 * 7) && buf[15] == (uint8_t)(0x1f * 7));
	/* across the held end: a fault at its first byte */
	struct cq_error *err = cq_core_read(core, 0x107f0, buf, 32);
	CHECK(err && err->has_address && err->address == 0x10800 && strstr(err->message, "not held"));
	cq_error_destroy(err);
	/* between the segments: not mapped */
	err = cq_core_read(core, 0x20000, buf, 4);
	CHECK(err && err->has_address && err->address == 0x20000 && strstr(err->message, "not mapped in the core"));
	cq_error_destroy(err);
	/* integers in the target's byte order */
	uint64_t v, want = 0;
	CHECK(!cq_core_read_uint(core, 0x10020, 4, &v));
	for (unsigned k = 0; k < 4; k++)
		want |= (uint64_t)(uint8_t)((0x20 + k) * 7) << (8 * (t->little_endian ? k : 3 - k));
	CHECK_U64(v, want);
	CHECK(!cq_core_read_ptr(core, 0x10040, &v));
	CHECK_U64(v, cq_load_uint(t, mem.bytes[0] + 0x40, w));
	/* strings: one that ends, one the held end cuts */
	char *str = NULL;
	CHECK(!cq_core_read_string(core, 0x300f0, 64, &str));
	CHECK_STR(str, "coreq");
	free(str);
	err = cq_core_read_string(core, 0x107fc, 64, &str);
	CHECK(err && err->has_address && err->address == 0x10800);
	cq_error_destroy(err);
	CHECK(cq_core_mem_source(core, 0x107ff, NULL) == CQ_MEM_CORE);
	CHECK(cq_core_mem_source(core, 0x10800, NULL) == CQ_MEM_NONE);
	CHECK(cq_core_segment_at(core, 0x10fff) == &core->segments[0] && !cq_core_segment_at(core, 0x11000));

	/* threads: registers by name and index, the thread pointer; a short block is said */
	uint64_t pc = w == 8 ? 0x7f0000001234ull : 0x8001234, sp = w == 8 ? 0x7ffc0000ull : 0xbf000000, tp = 0x4000;
	uint8_t *r = regs_with(t, pc, sp, tp);
	struct cq_thread *th = NULL;
	CHECK(!cq_core_add_thread(core, 101, 11, r, t->reg_block_size, "test", &th));
	CHECK(th && th->tid == 101 && th->signal == 11 && th->pc == (pc & ~(uint64_t)t->pc_flag_bits) && th->sp == sp);
	CHECK(th && th->has_tp == (t->tp_source == CQ_TP_REGISTER) && (!th->has_tp || th->tp == tp));
	CHECK(th && cq_thread_reg(core, th, t->regs[t->pc_reg].name, &v) && v == pc && !cq_thread_reg(core, th, "no-such", &v));
	size_t problems = core->nproblems;
	unsigned last = t->pc_reg > t->sp_reg ? (unsigned)t->pc_reg : (unsigned)t->sp_reg;
	size_t cut = (size_t)t->regs[last].offset + t->regs[last].size;
	CHECK(!cq_core_add_thread(core, 102, 0, r, cut, "test", &th));
	CHECK(core->nthreads == 2 && cq_core_thread(core, 102) == th && cq_core_thread(core, 101) == &core->threads[0]);
	CHECK(core->nproblems == problems + (cut < t->reg_block_size));
	bool some_missing = false;
	for (unsigned i = 0; i < t->nregs; i++)
		some_missing |= !cq_thread_has_reg(core, th, i);
	CHECK(some_missing == (cut < t->reg_block_size) && cq_thread_has_reg(core, th, (unsigned)t->pc_reg));
	free(r);

	/* the auxv, as NT_AUXV or /proc/PID/auxv give it: pairs of target words to AT_NULL */
	uint8_t auxv[6 * 8] = {0};
	uint64_t pairs[] = {AT_PAGESZ, 4096, AT_ENTRY, 0x401000, AT_NULL, 0};
	for (unsigned i = 0; i < 6; i++)
		cq_store_uint(t, auxv + i * w, w, pairs[i]);
	CHECK(!cq_core_set_auxv(core, auxv, 6 * w));
	CHECK(core->nauxv == 2 && cq_core_auxv(core, AT_ENTRY, &v) && v == 0x401000 && !cq_core_auxv(core, AT_BASE, &v));

	/* the file map, sorted; only the first one given counts */
	struct cq_file_map *maps = calloc(2, sizeof(*maps));
	maps[0] = (struct cq_file_map){0x30000, 0x31000, 0, strdup("/lib/b.so"), NULL};
	maps[1] = (struct cq_file_map){0x10000, 0x11000, 0x2000, strdup("/bin/a"), NULL};
	cq_core_set_file_maps(core, maps, 2, 4096);
	struct cq_file_map *again = calloc(1, sizeof(*again));
	again[0] = (struct cq_file_map){0, 1, 0, strdup("/ignored"), NULL};
	cq_core_set_file_maps(core, again, 1, 4096);
	CHECK(core->nfile_maps == 2 && !strcmp(core->file_maps[0].path, "/bin/a") && core->page_size == 4096);

	/* overlapping segments: refused, naming the input */
	struct cq_segment *bad = calloc(2, sizeof(*bad));
	bad[0] = (struct cq_segment){0x1000, 0x2000, 0, 0, PF_R};
	bad[1] = (struct cq_segment){0x2000, 0x1000, 0, 0, PF_R};
	err = cq_core_set_segments(core, bad, 2, "the test's target");
	CHECK(err && strstr(err->message, "the test's target: segments at 0x1000 and 0x2000 overlap"));
	cq_error_destroy(err);

	cq_core_close(core);
	for (unsigned i = 0; i < 2; i++)
		free(mem.bytes[i]);
	CHECK(mem.reads > 0);
}

int main(void)
{
	model_of("s390x");  /* big-endian, 64-bit */
	model_of("x86_64"); /* little-endian, 64-bit; the thread pointer is fs_base */
	model_of("ppc32");  /* big-endian, 32-bit */
	return check_report("test_model");
}
