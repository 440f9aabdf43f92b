/* SPDX-License-Identifier: MIT */
/* libdwfl's unwinder over coreq's model of a core (stack.h). The shape of the callbacks
 * follows elfutils' linux-core-attach.c, but every answer comes from corelib: libdwfl's
 * own core attach fails on some of our cores (riscv64 gcore) and finds no modules in qemu
 * cores. */
#include <dwarf.h>
#include <elf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corelib/image.h"
#include "base/text.h"
#include "internal.h"
#include "stack.h"

struct unwinder;

/* What a frame's CFI says at one lookup address: whether there is any, whether it is a
 * signal trampoline's, and the CFA's rule when it is a register plus an offset. */
struct cfi_rule {
	uint64_t at1;        /* the lookup address + 1 (0: an empty cache slot) */
	Dwfl_Module *mod;
	bool has_cfi, signal, has_rule;
	int reg;
	int64_t off;
};

/* What libdwfl hands back for a thread: the thread and the unwinder it belongs to. */
struct thread_ref {
	struct unwinder *u;
	struct cq_thread *th;
};

struct unwinder {
	struct cq_core *core;
	struct thread_ref *refs; /* one per thread of the core */
	Dwfl *dwfl;
	uint8_t *vdso;   /* the vDSO's bytes, read from the core (libdwfl reads it in place) */
	size_t vdso_size;
	size_t *order;   /* thread indices, the crashing thread first */
	size_t norder, next;
	size_t walking;  /* the index of the thread being walked (get_thread), else SIZE_MAX */
	/* the first target read that failed during the current walk (a stop reason) */
	bool faulted;
	uint64_t fault_addr;
	json_t *problems;
	/* where the next walk starts: the thread's registers, or the caller's after a step of
	 * coreq's */
	struct cq_stack_regs start;
	uint64_t start_pc;
	bool carry[CQ_STACK_NREGS]; /* the DWARF registers a frame's description keeps */
	bool static_exe;            /* one image besides the vDSO */
	struct cq_frame_infos *described; /* the frame descriptions (describe.c) */
	/* what cficheck.c knows of each module's CFI (cq_stack_cfi_guard) */
	struct { Dwfl_Module *mod; struct cq_cfi_guard *guard; } guards[64];
	unsigned nguards;
	struct cq_stack_mips_cfi *mips; /* MIPS: the modules' CFI, run by coreq (mips.c) */
	struct cq_stack_units *units;   /* address -> unit maps (unit.c); NULL: aranges only */
	/* the addresses found harmless (+ 1, by hash): threads parked in the same call look the
	 * same return addresses up */
	uint64_t cfi_ok[128];
	struct cfi_rule rules[64]; /* what the CFI says at recent lookup addresses (frame_cfi) */
	struct cq_stack_arg *arg;  /* an argument to read during the walk (stack.h), or NULL */
	bool loop_variables;       /* read each program frame's loop variables (stack.h) */
	struct cq_stack_loops *loops; /* what that search found and spent (values.c), or NULL */
};


/* ---- module callbacks: coreq's files, never a search of the host ---- */

static int find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		    char **file_name, Elf **elfp)
{
	/* the vDSO: its image is the core's memory */
	if (!strcmp(modname, "[vdso]")) {
		struct unwinder *u = *userdata;
		if (u && u->vdso) {
			*elfp = elf_memory((char *)u->vdso, u->vdso_size);
			*file_name = NULL;
		}
		return -1;
	}
	/* an image whose file corelib has mapped (in_place_elf): without DWARF, corelib's own
	 * ELF handle, shared (libelf counts its users); with DWARF, a handle over the mapping
	 * without a descriptor, so that libdw does not resolve the descriptor's path (realpath,
	 * a readlink per component) to look for split DWARF next to it */
	const struct cq_image *img = *userdata;
	size_t size;
	char *raw = img && img->elf && img->elf->elf ? elf_rawfile(img->elf->elf, &size) : NULL;
	if (raw) {
		*elfp = img->elf->has_dwarf ? elf_memory(raw, size) : elf_begin(-1, ELF_C_READ_MMAP, img->elf->elf);
		*file_name = img->found_path ? strdup(img->found_path) : NULL;
	}
	return -1;
}

/* Whether libdwfl may read @p img's file through corelib's mapping of it (elf_memory over
 * elf_rawfile) instead of opening the file again: a second descriptor, mapping and header
 * parse per image, and libdw's realpath of the descriptor when it reads the DWARF, were a
 * tenth of `info`. Only where libelf writes nothing into that read-only mapping: a file in
 * the host's byte order (else sections are converted in place) without compressed sections
 * (inflating one rewrites its header). The module's range is the one dwfl_report_elf
 * computes: from the first PT_LOAD's aligned address to the end of the last. */
static bool in_place_elf(const struct cq_image *img, uint64_t *low, uint64_t *high)
{
	const struct cq_elf *e = img->elf;
	size_t size, n;
	Elf *elf = e ? e->elf : NULL;
	const unsigned char *ident = elf ? (const unsigned char *)elf_getident(elf, NULL) : NULL;
	bool host_le = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
	if (!ident || e->compressed_sections || (ident[EI_DATA] == ELFDATA2LSB) != host_le || e->e_type != ET_DYN ||
	    !elf_rawfile(elf, &size) || elf_getphdrnum(elf, &n) != 0)
		return false;
	bool first = true;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (first)
			*low = img->bias + (ph.p_vaddr & -(ph.p_align ? ph.p_align : 1));
		*high = img->bias + ph.p_vaddr + ph.p_memsz;
		first = false;
	}
	return !first && *low < *high;
}

static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			  char **debuginfo_file_name)
{
	/* the separate debug file corelib found (sysroot, --debug-dir, build-id), if any; not
	 * libdwfl's standard search, which would read the host's /usr/lib/debug and load
	 * libdebuginfod on the first miss */
	const struct cq_image *img = *userdata;
	if (!img || !strcmp(modname, "[vdso]"))
		return -1;
	/* libdwfl asks again for the dwz alt file of the DWARF it loaded, naming the path of its
	 * .gnu_debugaltlink (and no CRC): the module's own debug file there made every name in
	 * the alt file unreadable */
	const struct cq_elf *dw = img->debug ? img->debug : img->elf;
	bool alt = debuglink_file && !debuglink_crc && dw && dw->altlink && !strcmp(debuglink_file, dw->altlink);
	const char *path = alt ? img->alt_path : img->debug_path;
	const struct cq_elf *e = alt ? img->alt : img->debug;
	/* only the descriptor corelib opened and checked (a regular file, its build-id), never
	 * the path opened again: a debug file corelib refused (a FIFO) is not handed on */
	if (!path || !e || !e->file || e->file->fd < 0)
		return -1;
	int fd = fcntl(e->file->fd, F_DUPFD_CLOEXEC, 0);
	if (fd >= 0 && !(*debuginfo_file_name = strdup(path))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* ---- thread callbacks ---- */

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct unwinder *u = arg;
	if (u->next >= u->norder)
		return 0;
	struct thread_ref *r = &u->refs[u->order[u->next++]];
	*thread_argp = r;
	return r->th->tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	struct unwinder *u = arg;
	/* the walk asks for the thread it walks: a search per walk was quadratic (100,000
	 * threads: 5 s) */
	if (u->walking < u->core->nthreads && u->core->threads[u->walking].tid == tid) {
		*thread_argp = &u->refs[u->walking];
		return true;
	}
	for (size_t i = 0; i < u->core->nthreads; i++)
		if (u->core->threads[i].tid == tid) {
			*thread_argp = &u->refs[i];
			return true;
		}
	return false;
}

/* One target word, in host order and zero-extended (libdwfl wants a Dwarf_Word whatever the
 * target's word size: 8 raw bytes broke the i386 and ppc32 walks). */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct unwinder *u = arg;
	uint64_t v;
	struct cq_error *err = cq_core_read_ptr(u->core, addr, &v);
	if (err) {
		if (!u->faulted) {
			u->faulted = true;
			u->fault_addr = addr;
		}
		cq_error_destroy(err);
		return false;
	}
	*result = v;
	return true;
}

/* The registers a walk starts from (u->start, u->start_pc): the thread's own, then after
 * each step of coreq's the caller's registers it computed. */
static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	const struct thread_ref *ref = thread_arg;
	const struct unwinder *u = ref->u;
	/* in runs of consecutive numbers, one call each; a run that reaches past the
	 * backend's frame_nregs is refused whole, so it is retried one register at a time */
	for (int d = 0; d < CQ_STACK_NREGS;) {
		if (!u->start.ok[d]) {
			d++;
			continue;
		}
		int n = 1;
		while (d + n < CQ_STACK_NREGS && u->start.ok[d + n])
			n++;
		Dwarf_Word w[CQ_STACK_NREGS];
		for (int k = 0; k < n; k++)
			w[k] = u->start.v[d + k];
		if (!dwfl_thread_state_registers(thread, d, (unsigned)n, w))
			for (int k = 0; k < n; k++)
				(void)dwfl_thread_state_registers(thread, d + k, 1, &w[k]);
		d += n;
	}
	/* the pc explicitly on every architecture, or frame 0 is the return address */
	dwfl_thread_state_register_pc(thread, u->start_pc);
	return true;
}

/* A thread's registers from its prstatus block, by the target table's DWARF numbers. */
static void thread_regs(const struct cq_core *core, const struct cq_thread *th, struct cq_stack_regs *r)
{
	const struct cq_target *t = core->target;
	memset(r, 0, sizeof(*r));
	for (unsigned i = 0; i < t->nregs; i++)
		if (t->regs[i].dwarf >= 0 && cq_thread_has_reg(core, th, i))
			cq_stack_set(r, t->regs[i].dwarf, cq_thread_reg_at(core, th, i));
	/* powerpc: CFI's return-address column (65) is LR, which the table numbers 108 */
	int lr = r->ok[t->dwarf_ra] ? -1 : cq_target_reg_index(t, "lr");
	if (lr >= 0 && cq_thread_has_reg(core, th, (unsigned)lr))
		cq_stack_set(r, t->dwarf_ra, cq_thread_reg_at(core, th, (unsigned)lr));
}

static void detach(Dwfl *dwfl, void *arg)
{
}

/* ---- frames ---- */

/* A walk over one thread: libdwfl's frames in segments, coreq's own steps between them. */
struct walk {
	struct unwinder *u;
	struct cq_stack_ctx ctx;
	struct cq_thread_stack *ts; /* the frames so far, inlined ones included */
	unsigned nphys, max;     /* physical frames so far, and the bound on them */
	char stop[400];          /* why the walk stopped (ts->stop gets a copy) */
	/* the segment libdwfl is walking: how its first frame was found and its real pc (libdwfl
	 * was given pc - 1 so that a return address is looked up in the call's row) */
	unsigned seg_frames;
	enum cq_found_by seg_how;
	uint64_t seg_pc;
	bool seg_exact;          /* seg_pc is exact (the thread's own pc) */
	/* the previous physical frame */
	struct cq_stack_regs last;
	uint64_t last_pc, last_at, last_sp;
	bool have_last_sp, last_cfi, last_signal;
	char last_cfi_error[80];  /* why libdw could not read the frame's CFI, when it is broken */
	int last_frame;          /* its index in ts->frames (-1: none yet) */
	unsigned same_sp;        /* frames in a row with the same stack pointer */
	bool to_user_frame;      /* stop there */
	struct cq_stack_regs same; /* preserved registers libdwfl lost, carried up (on_frame) */
};

/* Is @p f (a physical frame's description) the thread's user frame? In a static
 * executable the C library is inside it: there, the first frame with a source line. */
static bool user_frame(const struct walk *w, const struct cq_frame *f)
{
	if (cq_stack_system_module(f->info->module))
		return false;
	return !w->u->static_exe || f->info->file;
}

/* The first of the frames at physical frame @p index: its innermost inlined call, else
 * itself. A user frame is that one: where the thread is in the program's code, at the
 * inlined call's own line (the physical frame's line is where the outermost call was
 * inlined). */
static int innermost_of(const struct cq_thread_stack *ts, unsigned index)
{
	while (index > 0 && ts->frames[index - 1].inlined)
		index--;
	return (int)index;
}

/* The last physical frame, NULL before the first. */
static struct cq_frame *last_frame(const struct walk *w)
{
	return w->last_frame >= 0 ? &w->ts->frames[w->last_frame] : NULL;
}

/* How libdwfl's own fallback (used for a frame without CFI) found the caller. */
static enum cq_found_by dwfl_fallback_kind(const struct cq_target *t)
{
	return t->e_machine == EM_S390 || t->e_machine == EM_PPC64 ? CQ_FOUND_BACKCHAIN : CQ_FOUND_FP;
}

/* The CFI at @p at (.eh_frame first, as libdwfl looks): whether there is any, whether it is
 * a signal trampoline's, the CFA's rule. A lookup that fails for another reason than "no FDE
 * here" (a crafted .eh_frame_hdr or FDE pointing outside its section) leaves libdw's
 * message in @p error, so that the stop does not claim the frame had no CFI. Answers
 * without an error are kept: threads parked in one call look the same addresses up, and
 * each lookup runs the FDE's instructions again. */
static void cfi_rule_at(struct unwinder *u, Dwfl_Module *mod, uint64_t at, struct cfi_rule *r, char *error,
			size_t error_size)
{
	struct cfi_rule *slot = &u->rules[((at * 0x9e3779b97f4a7c15u) >> 40) % (sizeof(u->rules) / sizeof(u->rules[0]))];
	error[0] = 0;
	if (slot->at1 == at + 1 && slot->mod == mod) {
		*r = *slot;
		return;
	}
	*r = (struct cfi_rule){.at1 = at + 1, .mod = mod};
	for (int pass = 0; mod && pass < 2 && !r->has_cfi; pass++) {
		Dwarf_Addr bias;
		Dwarf_CFI *cfi = pass ? dwfl_module_dwarf_cfi(mod, &bias) : dwfl_module_eh_cfi(mod, &bias);
		Dwarf_Frame *fr;
		if (!cfi)
			continue;
		if (dwarf_cfi_addrframe(cfi, at - bias, &fr) != 0) {
			const char *msg = dwarf_errmsg(-1);
			if (msg && !error[0] && strcmp(msg, "no matching address range"))
				snprintf(error, error_size, "%s", msg);
			continue;
		}
		r->has_cfi = true;
		error[0] = 0;
		Dwarf_Op *ops;
		size_t nops;
		dwarf_frame_info(fr, NULL, NULL, &r->signal);
		if (dwarf_frame_cfa(fr, &ops, &nops) == 0 && nops == 1) {
			r->reg = ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31 ? ops[0].atom - DW_OP_breg0
			        : ops[0].atom == DW_OP_bregx ? (int)ops[0].number : -1;
			r->off = ops[0].atom == DW_OP_bregx ? (int64_t)ops[0].number2 : (int64_t)ops[0].number;
			r->has_rule = r->reg >= 0;
		}
		free(fr);
	}
	if (!error[0])
		*slot = *r;
}

/* Register @p d of the frame: from @p regs, else read from libdwfl's @p state into them
 * (only the registers a frame's description keeps: u->carry). */
static bool frame_reg(const struct unwinder *u, Dwfl_Frame *state, struct cq_stack_regs *regs, int d, uint64_t *v)
{
	if (cq_stack_reg(regs, d, v))
		return true;
	Dwarf_Word x;
	if (d < 0 || d >= CQ_STACK_NREGS || !u->carry[d] || dwfl_frame_reg(state, (unsigned)d, &x) != 0)
		return false;
	cq_stack_set(regs, d, x);
	*v = x;
	return true;
}

/* The frame's CFA from its CFI (cfi_rule_at), when the rule is a register plus an offset
 * (*@p cfa, else 0); also whether there is CFI and whether it is a signal trampoline's. */
static void frame_cfi(struct unwinder *u, Dwfl_Frame *state, uint64_t at, struct cq_stack_regs *regs,
		      struct cq_frame *f, bool *has_cfi, bool *signal, uint64_t *cfa, char *error, size_t error_size)
{
	struct cfi_rule r;
	uint64_t base;
	cfi_rule_at(u, dwfl_addrmodule(u->dwfl, at), at, &r, error, error_size);
	*has_cfi = r.has_cfi;
	*signal = r.signal;
	*cfa = 0;
	if (r.has_rule && frame_reg(u, state, regs, r.reg, &base)) {
		*cfa = base + (uint64_t)r.off;
		f->cfa = *cfa;
		f->has_cfa = true;
	}
}

static void last_frame_name(const struct walk *w, char *buf, size_t size);

/* A register number beyond CQ_STACK_MAX_CFI_REG (or another refusal, internal.h) in the
 * CFI libdwfl would run for @p at, or 0: the .eh_frame entry libdw would use, and the
 * module's .debug_frame only when .eh_frame has no entry for @p at, as libdwfl looks
 * (loading a distribution's debug file means inflating megabytes of DWARF). */
static uint64_t cfi_bad_register(struct unwinder *u, uint64_t at)
{
	uint64_t *ok = &u->cfi_ok[((at * 0x9e3779b97f4a7c15u) >> 40) % (sizeof(u->cfi_ok) / sizeof(u->cfi_ok[0]))];
	if (*ok == at + 1)
		return 0;
	Dwfl_Module *mod = dwfl_addrmodule(u->dwfl, at);
	if (!mod)
		return 0;
	unsigned i = 0;
	while (i < u->nguards && u->guards[i].mod != mod)
		i++;
	struct cq_cfi_guard *g;
	bool owned = false; /* a module beyond the table's: its guard is made for this lookup */
	if (i < u->nguards) {
		g = u->guards[i].guard;
	} else {
		if (!(g = cq_stack_cfi_guard(mod)))
			return CQ_STACK_CFI_DEEP; /* out of memory: libdw must not run unchecked CFI */
		if (u->nguards < sizeof(u->guards) / sizeof(u->guards[0]))
			u->guards[u->nguards++] = (typeof(u->guards[0])){mod, g};
		else
			owned = true;
	}
	Dwarf_Addr bias;
	Dwarf_CFI *eh = dwfl_module_eh_cfi(mod, &bias);
	uint64_t bad = cq_stack_cfi_bad_at(g, at - bias);
	Dwarf_Frame *fr;
	if (!bad) {
		if (eh && dwarf_cfi_addrframe(eh, at - bias, &fr) == 0)
			free(fr); /* .eh_frame has it: the debug file is not read */
		else
			bad = cq_stack_cfi_bad_debug(g);
	}
	if (owned)
		cq_stack_cfi_guard_free(g);
	if (!bad)
		*ok = at + 1;
	return bad;
}

/* The stop for CFI that cficheck.c refused (cfi_bad_register's @p badreg), at the last
 * frame. */
static void bad_cfi_stop(struct walk *w, uint64_t badreg)
{
	char name[160];
	last_frame_name(w, name, sizeof(name));
	if (badreg == CQ_STACK_CFI_BAD_RA)
		snprintf(w->stop, sizeof(w->stop), "the CFI of %s has a return-address column libdwfl cannot "
			 "map (crafted?): not used", name);
	else if (badreg == CQ_STACK_CFI_BAD_HDR)
		snprintf(w->stop, sizeof(w->stop), "the .eh_frame_hdr of %s uses a value encoding coreq does "
			 "not follow libdw in (crafted?): not used", name);
	else if (badreg == CQ_STACK_CFI_BAD_EXPR)
		snprintf(w->stop, sizeof(w->stop), "the CFI of %s has an expression libdwfl cannot evaluate "
			 "(an unknown operation, a backward branch or over %u bytes; crafted?): not used",
			 name, CQ_STACK_MAX_CFI_EXPR);
	else if (badreg == CQ_STACK_CFI_DEEP)
		snprintf(w->stop, sizeof(w->stop), "the CFI of %s remembers more than %u states at once "
			 "(crafted?): not used", name, CQ_STACK_MAX_CFI_STATES);
	else
		snprintf(w->stop, sizeof(w->stop), "the CFI of %s names DWARF register %" PRIu64
			 " (crafted? no target has more than %u): not used", name, badreg, CQ_STACK_MAX_CFI_REG);
}

/* The loop variables of physical frame @p f and its inlined calls into the thread's
 * loop_vars (stack.h). */
static void loop_variables(struct walk *w, Dwfl_Frame *state, const struct cq_frame *f, uint64_t at)
{
	unsigned first = (unsigned)innermost_of(w->ts, f->index);
	json_t *per = cq_stack_loop_variables(&w->ctx, state, &w->same, f, at, f->index - first + 1), *v;
	size_t k;
	json_array_foreach(per, k, v) {
		char key[16];
		if (json_is_null(v) || (!w->ts->loop_vars && !(w->ts->loop_vars = json_object())))
			continue;
		snprintf(key, sizeof(key), "%zu", first + k);
		json_object_set(w->ts->loop_vars, key, v);
	}
	json_decref(per);
}

static int on_frame(Dwfl_Frame *state, void *arg)
{
	struct walk *w = arg;
	const struct cq_target *t = w->u->core->target;
	Dwarf_Addr pc;
	bool activation = false;
	/* a read that fails from here on is one of unwinding this frame (see walk_thread):
	 * libdwfl unwinds it after this callback */
	w->u->faulted = false;
	/* the pc without asking libdwfl whether the caller is a signal frame: that question
	 * unwinds this frame through its module's CFI, which must be checked before libdw runs
	 * it (a crafted register number costs gigabytes per lookup; cficheck.c) */
	if (!dwfl_frame_pc(state, &pc, NULL)) {
		snprintf(w->stop, sizeof(w->stop), "no pc for frame %u: %s", w->nphys, dwfl_errmsg(-1));
		return DWARF_CB_ABORT;
	}
	uint64_t badreg = cfi_bad_register(w->u, pc);
	if (!badreg && pc)
		badreg = cfi_bad_register(w->u, pc - 1);
	/* Whether the pc is exact (libdwfl's "activation"): after a signal frame, or in a
	 * signal trampoline (its CFI says so at pc - 1, where libdwfl looks). Asked of the CFI
	 * here, not of dwfl_frame_pc, which would unwind the frame to answer: a walk that ends
	 * at this frame (the user frame) would pay for its caller. */
	if (!badreg && w->seg_frames > 0) {
		struct cfi_rule r;
		char error[80];
		activation = w->last_signal;
		if (!activation) {
			cfi_rule_at(w->u, dwfl_addrmodule(w->u->dwfl, pc - 1), pc - 1, &r, error, sizeof(error));
			activation = r.signal;
		}
	}
	/* the registers are read from libdwfl as they are needed (the stack pointer now, the
	 * rest when the walk goes on) */
	struct cq_stack_regs regs;
	memset(regs.ok, 0, sizeof(regs.ok));
	enum cq_found_by how;
	uint64_t at;
	if (w->seg_frames == 0) {
		how = w->seg_how;
		pc = w->seg_pc;
		at = w->seg_exact ? pc : pc - 1;
	} else {
		how = w->last_signal ? CQ_FOUND_SIGNAL : w->last_cfi ? CQ_FOUND_CFI : dwfl_fallback_kind(t);
		if (t->e_machine == EM_ARM)
			pc &= ~(Dwarf_Addr)1; /* the Thumb bit */
		/* a return address names the call before it; after a signal frame the pc is exact */
		at = activation ? pc : pc - 1;
	}
	w->seg_frames++;

	/* a stack that does not move on: stop before the frame that would repeat */
	uint64_t sp = 0;
	bool have_sp = frame_reg(w->u, state, &regs, t->dwarf_sp, &sp);
	if (have_sp && w->have_last_sp && how != CQ_FOUND_SIGNAL) {
		unsigned prev = last_frame(w) ? last_frame(w)->index : 0;
		if (sp < w->last_sp) {
			snprintf(w->stop, sizeof(w->stop), "corrupt stack? frame %u's stack pointer 0x%" PRIx64
				 " is below its callee's (0x%" PRIx64 ")", w->ts->nframes, sp, w->last_sp);
			return DWARF_CB_ABORT;
		}
		if (sp == w->last_sp && pc == w->last_pc) {
			snprintf(w->stop, sizeof(w->stop), "a cycle: frame %u repeats frame %u (same pc and stack pointer)",
				 w->ts->nframes, prev);
			return DWARF_CB_ABORT;
		}
		if (sp == w->last_sp && ++w->same_sp >= 64) {
			snprintf(w->stop, sizeof(w->stop), "the stack pointer did not move for 64 frames");
			return DWARF_CB_ABORT;
		}
		if (sp != w->last_sp)
			w->same_sp = 0;
	}
	int fi = cq_stack_describe(&w->ctx, w->ts, pc, at, how);
	if (fi < 0) {
		snprintf(w->stop, sizeof(w->stop), "out of memory");
		return DWARF_CB_ABORT;
	}
	struct cq_frame *f = &w->ts->frames[fi];
	if (badreg) {
		w->nphys++;
		w->last_frame = fi;
		bad_cfi_stop(w, badreg);
		return DWARF_CB_ABORT;
	}
	uint64_t cfa;
	frame_cfi(w->u, state, at, &regs, f, &w->last_cfi, &w->last_signal, &cfa, w->last_cfi_error,
		  sizeof(w->last_cfi_error));
	f->signal_frame = w->last_signal;
	/* a thread made by clone that never ran: an unwinder would find its parent's caller
	 * (chain.c) */
	struct cq_stack_stop child;
	if (w->nphys == 0 && how == CQ_FOUND_INITIAL &&
	    cq_stack_clone_child(w->u->core, &w->u->core->threads[w->u->walking], pc, &child)) {
		w->nphys++;
		w->last_frame = fi;
		char name[160];
		last_frame_name(w, name, sizeof(name));
		snprintf(w->stop, sizeof(w->stop), "end of stack (%s: %s)", name, child.why);
		return DWARF_CB_ABORT;
	}
	/* a CFA below the frame's own stack pointer (crafted CFI): its caller would be found
	 * inwards, in memory the frame does not own; libdwfl would read a return address
	 * there (often 0: a silent "end of stack") */
	/* sparc64's %sp is biased: the frame starts 2047 bytes above what the register holds */
	uint64_t bias = w->u->core->target->e_machine == 43 /* EM_SPARCV9 */ && (sp & 1) ? 2047 : 0;
	if (bias && cfa == bias) {
		/* the window's saved %i6 is 0: _start's, or a save area never written because
		 * the window was never flushed (qemu's gdbstub cores: the kernel flushes). The
		 * frame itself is known (its pc and sp came from its callee's window); its CFA
		 * is not, and the walk ends with it. */
		f->has_cfa = false;
		w->last_frame = fi;
		if (w->ts->user_frame < 0 && user_frame(w, f))
			w->ts->user_frame = innermost_of(w->ts, f->index);
		w->nphys++;
		char name[160];
		last_frame_name(w, name, sizeof(name));
		snprintf(w->stop, sizeof(w->stop), "%s: %s", name, CQ_STACK_SPARC_I6_ZERO);
		return DWARF_CB_ABORT;
	}
	if (cfa && have_sp && cfa < sp + bias && !w->last_signal) {
		w->nphys++;
		snprintf(w->stop, sizeof(w->stop), "corrupt stack? the CFI of frame %u puts its CFA 0x%" PRIx64
			 " below its stack pointer 0x%" PRIx64 "%s", w->nphys - 1, cfa, sp,
			 bias ? " (+ the stack bias 2047)" : "");
		return DWARF_CB_ABORT;
	}
	bool user = w->ts->user_frame < 0 && user_frame(w, f);
	if (!(user && w->to_user_frame) && !w->last_cfi) {
		/* the walk goes on from a frame without CFI: if libdwfl's fallback does not find
		 * the caller, a step of coreq's will, from every register (walk_thread) */
		uint64_t v;
		for (int d = 0; d < CQ_STACK_NREGS; d++)
			if (w->u->carry[d])
				(void)frame_reg(w->u, state, &regs, d, &v);
	}
	w->last = regs;
	w->last_pc = pc;
	w->last_at = at;
	w->last_sp = sp;
	w->have_last_sp = have_sp;
	w->last_frame = fi;
	/* rbx as the walk knows it. elfutils 0.188's x86_64 ABI rules (backends/x86_64_cfi.c)
	 * mark DWARF register 0 (rax) preserved where rbx (3) is meant: above a frame whose
	 * CFI says nothing of rbx (most leave it alone), libdwfl has none, though it is the
	 * value the frame below had. Carried up here from the segment's first frame (all
	 * registers known), replaced wherever libdwfl has it (a frame that saved it). */
	if (w->u->core->target->e_machine == EM_X86_64) {
		Dwarf_Word rbx;
		if (w->seg_frames == 1)
			memset(w->same.ok, 0, sizeof(w->same.ok));
		if (dwfl_frame_reg(state, 3, &rbx) == 0)
			cq_stack_set(&w->same, 3, rbx);
	}
	/* an argument asked of a call this frame (or a call inlined into it) makes */
	struct cq_stack_arg *req = w->u->arg;
	if (req && !req->found && w->ctx.thread && w->ctx.thread->tid == req->tid &&
	    f->found_by != CQ_FOUND_INITIAL && f->found_by != CQ_FOUND_SIGNAL /* a return address */ &&
	    req->frame <= f->index && req->frame >= (unsigned)innermost_of(w->ts, f->index))
		req->found = cq_stack_call_argument(&w->ctx, state, &w->same, f, req->arg, &req->value, req->why,
						    sizeof(req->why));
	/* a parameter asked of this frame's function (or of a call inlined into it) */
	if (req && req->param && !req->param_found && w->ctx.thread && w->ctx.thread->tid == req->tid &&
	    req->param_frame <= f->index && req->param_frame >= (unsigned)innermost_of(w->ts, f->index))
		req->param_found = cq_stack_frame_parameter(&w->ctx, state, &w->same, f, at,
							    req->param_frame - (unsigned)innermost_of(w->ts, f->index),
							    req->param, &req->param_value, req->param_why,
							    sizeof(req->param_why));
	if (w->u->loop_variables && f->info->module && !cq_stack_system_module(f->info->module))
		loop_variables(w, state, f, at);
	if (user) {
		w->ts->user_frame = innermost_of(w->ts, f->index);
		if (w->to_user_frame) {
			snprintf(w->stop, sizeof(w->stop), "the user frame is reached");
			return DWARF_CB_ABORT;
		}
	}
	if (++w->nphys >= w->max) {
		snprintf(w->stop, sizeof(w->stop), "--max-frames %u reached", w->max);
		return DWARF_CB_ABORT;
	}
	return DWARF_CB_OK;
}

static bool read_word(void *arg, uint64_t addr, uint64_t *val)
{
	return memory_read(NULL, addr, val, arg);
}

/* The name of the last frame for a stop reason: "fx_crash (fixprog)". The frames described
 * so far are named now (cq_stack_name_frames), not at the end of the walks. */
static void last_frame_name(const struct walk *w, char *buf, size_t size)
{
	(void)cq_stack_name_frames(&w->ctx);
	const struct cq_frame *f = last_frame(w);
	const char *fn = f ? f->info->function : NULL;
	const char *mod = f ? f->info->module : NULL;
	char *e1 = cq_text_escape(fn ? fn : "??"), *e2 = cq_text_escape(mod ? mod : "no module");
	snprintf(buf, size, "%s (%s)", e1 ? e1 : "?", e2 ? e2 : "?");
	free(e1);
	free(e2);
}

/* One MIPS frame found (mips_walk): what on_frame does for libdwfl's frames. False with
 * w->stop set when the walk ends at it. */
static bool mips_frame(struct walk *w, const struct cq_stack_regs *regs, uint64_t pc, uint64_t at,
		       enum cq_found_by how)
{
	const struct cq_target *t = w->u->core->target;
	uint64_t sp = 0;
	bool have_sp = cq_stack_reg(regs, t->dwarf_sp, &sp);
	bool up = t->e_machine == EM_PARISC; /* hppa's stacks grow upwards */
	if (have_sp && w->have_last_sp) {
		if (up ? sp > w->last_sp : sp < w->last_sp) {
			snprintf(w->stop, sizeof(w->stop), "corrupt stack? frame %u's stack pointer 0x%" PRIx64
				 " is %s its callee's (0x%" PRIx64 ")", w->ts->nframes, sp, up ? "above" : "below", w->last_sp);
			return false;
		}
		if (sp == w->last_sp && pc == w->last_pc) {
			snprintf(w->stop, sizeof(w->stop), "a cycle: frame %u repeats the frame before it (same pc and stack pointer)",
				 w->ts->nframes);
			return false;
		}
		if (sp == w->last_sp && ++w->same_sp >= 64) {
			snprintf(w->stop, sizeof(w->stop), "the stack pointer did not move for 64 frames");
			return false;
		}
		if (sp != w->last_sp)
			w->same_sp = 0;
	}
	int fi = cq_stack_describe(&w->ctx, w->ts, pc, at, how);
	if (fi < 0) {
		snprintf(w->stop, sizeof(w->stop), "out of memory");
		return false;
	}
	const struct cq_frame *f = &w->ts->frames[fi];
	w->last = *regs;
	w->last_pc = pc;
	w->last_at = at;
	w->last_sp = sp;
	w->have_last_sp = have_sp;
	w->last_frame = fi;
	w->nphys++;
	if (w->ts->user_frame < 0 && user_frame(w, f)) {
		w->ts->user_frame = innermost_of(w->ts, f->index);
		if (w->to_user_frame) {
			snprintf(w->stop, sizeof(w->stop), "the user frame is reached");
			return false;
		}
	}
	if (w->nphys >= w->max) {
		snprintf(w->stop, sizeof(w->stop), "--max-frames %u reached", w->max);
		return false;
	}
	return true;
}

/* MIPS, hppa and alpha: libdwfl 0.188 unwinds no MIPS, PA-RISC or alpha core (no backend,
 * or no unwinder in it), so every step is coreq's: the module's CFI (mips.c), or at the
 * first frame a leaf's ra (MIPS, alpha) or the system call's return address (hppa). */
static void mips_walk(struct walk *w, const struct cq_thread *th)
{
	struct cq_stack_regs regs = w->u->start;
	uint64_t pc = th->pc, at = pc;
	enum cq_found_by how = CQ_FOUND_INITIAL;
	while (mips_frame(w, &regs, pc, at, how)) {
		struct cq_stack_step st;
		struct cq_stack_stop why;
		char name[160];
		last_frame_name(w, name, sizeof(name));
		w->u->faulted = false;
		/* the CFI libdw would run, checked first as for libdwfl's walk (cficheck.c) */
		uint64_t badreg = cfi_bad_register(w->u, at);
		if (badreg) {
			bad_cfi_stop(w, badreg);
			return;
		}
		if (!cq_stack_fallback(&w->ctx, &regs, at, w->nphys == 1, &st, &why)) {
			if (why.verbatim)
				snprintf(w->stop, sizeof(w->stop), "%s: %s", name, why.why);
			else if (why.end)
				snprintf(w->stop, sizeof(w->stop), "end of stack (%s: %s)", name, why.why);
			else if (w->u->faulted)
				snprintf(w->stop, sizeof(w->stop), "stack memory at 0x%" PRIx64 " is not in the core (unwinding %s)",
					 w->u->fault_addr, name);
			else
				snprintf(w->stop, sizeof(w->stop), "no unwind information for %s: %s", name, why.why);
			return;
		}
		last_frame(w)->cfa = st.cfa;
		last_frame(w)->has_cfa = true;
		if (!st.ra_pc) {
			snprintf(w->stop, sizeof(w->stop), "end of stack (%s returns to 0)", name);
			return;
		}
		regs = st.regs;
		pc = st.ra_pc;
		at = pc - 1;
		how = st.how;
	}
}

/* One thread: libdwfl from the thread's registers; where it has no CFI for a frame, one
 * step of coreq's (internal.h) and libdwfl again from the caller. */
static void walk_thread(struct unwinder *u, const struct cq_thread *th, unsigned max, bool crashing,
			bool to_user_frame, bool system_lines, struct cq_thread_stack *ts)
{
	*ts = (struct cq_thread_stack){.tid = th->tid, .crashing = crashing, .user_frame = -1};
	struct walk w = {.u = u, .ts = ts, .max = max,
			 .seg_how = CQ_FOUND_INITIAL, .seg_pc = th->pc, .seg_exact = true, .last_frame = -1,
			 .to_user_frame = to_user_frame && !crashing};
	w.ctx = (struct cq_stack_ctx){u->core, u->dwfl, read_word, u, system_lines, u->described, u->mips, u->units, th,
				      u->loops};
	thread_regs(u->core, th, &u->start);
	u->start_pc = th->pc;
	for (;;) {
		if (cq_stack_own_cfi(u->core->target)) {
			mips_walk(&w, th);
			break;
		}
		w.seg_frames = 0;
		u->faulted = false;
		int rc = dwfl_getthread_frames(u->dwfl, th->tid, on_frame, &w);
		struct cq_stack_step st;
		struct cq_stack_stop why;
		if (w.stop[0])
			break;
		/* for the stop reasons below that name the last frame: most walks end in the
		 * callback, or at the end of the stack, which needs no name */
		char name[160];
		if (rc != 0 || (w.seg_frames && u->faulted))
			last_frame_name(&w, name, sizeof(name));
		/* libdwfl ends a walk cleanly when it cannot read the return address (its
		 * register rule fails, so the caller's pc is "undefined", as in an outermost
		 * frame): a read that failed while unwinding the last frame says it was memory
		 * the core does not have (a stack pointer outside the core, a CFA offset of
		 * gigabytes), not the end of the stack */
		if (rc == 0 && w.seg_frames && u->faulted) {
			snprintf(w.stop, sizeof(w.stop), "stack memory at 0x%" PRIx64 " is not in the core (unwinding %s)",
				 u->fault_addr, name);
			break;
		}
		if (rc == 0) {
			snprintf(w.stop, sizeof(w.stop), "end of stack");
			break;
		}
		if (!w.seg_frames) {
			/* libdwfl 0.188 unwinds no sh4 core (its sh backend has no unwinder): the
			 * registers still say where the thread is, so its first frame is shown and
			 * the walk ends there */
			if (w.nphys == 0 && u->core->target->e_machine == EM_SH) {
				w.last_frame = cq_stack_describe(&w.ctx, ts, th->pc, th->pc, CQ_FOUND_INITIAL);
				if (w.last_frame < 0) {
					snprintf(w.stop, sizeof(w.stop), "out of memory");
					break;
				}
				w.nphys++;
				snprintf(w.stop, sizeof(w.stop), "no unwinder for %s: libdwfl (elfutils %s) has none; frame 0 "
					 "is the registers'", u->core->target->name, dwfl_version(NULL));
				break;
			}
			snprintf(w.stop, sizeof(w.stop), "libdwfl gave no frame: %s", dwfl_errmsg(-1));
			break;
		}
		if (w.last_cfi) {
			if (u->faulted)
				snprintf(w.stop, sizeof(w.stop), "stack memory at 0x%" PRIx64 " is not in the core (unwinding %s)",
					 u->fault_addr, name);
			else
				snprintf(w.stop, sizeof(w.stop), "the CFI of %s does not unwind: %s", name, dwfl_errmsg(-1));
			break;
		}
		/* no CFI: libdwfl's own fallback failed (a read of it may have faulted); coreq's
		 * step knows where the ABI ends a stack (a zero back chain, EXIDX_CANTUNWIND) */
		if (!cq_stack_fallback(&w.ctx, &w.last, w.last_at, w.nphys == 1, &st, &why)) {
			if (why.verbatim)
				snprintf(w.stop, sizeof(w.stop), "%s: %s", name, why.why);
			else if (why.end)
				snprintf(w.stop, sizeof(w.stop), "end of stack (%s: %s)", name, why.why);
			else if (u->faulted)
				snprintf(w.stop, sizeof(w.stop), "stack memory at 0x%" PRIx64 " is not in the core (unwinding %s)",
					 u->fault_addr, name);
			else if (w.last_cfi_error[0])
				snprintf(w.stop, sizeof(w.stop), "the CFI of %.120s is unreadable (%.60s); without it: %.150s", name,
					 w.last_cfi_error, why.why);
			else
				snprintf(w.stop, sizeof(w.stop), "no unwind information for %s: %s", name, why.why);
			break;
		}
		last_frame(&w)->cfa = st.cfa;
		last_frame(&w)->has_cfa = true;
		if (!st.ra_pc) {
			snprintf(w.stop, sizeof(w.stop), "end of stack (%s returns to 0)", name);
			break;
		}
		/* libdwfl restarts from the caller, at the call's address (pc - 1) so that its CFI
		 * row is the call's */
		u->start = st.regs;
		u->start_pc = st.ra_pc - 1;
		w.seg_how = st.how;
		w.seg_pc = st.ra_pc;
		w.seg_exact = false;
	}
	/* cut short by something missing (unwind tables, code, stack memory), which `bt`
	 * reports as a problem, as a missing file; a cycle or an inward step is what the stack
	 * says, not something to install */
	bool cut = !strncmp(w.stop, "no unwind information", 21) || !strncmp(w.stop, "stack memory at", 15) ||
		   !strncmp(w.stop, "no unwinder for", 15);
	/* sparc64: a zero saved %i6 where no stack starts is a window never flushed to the
	 * stack (qemu's gdbstub cores; the kernel flushes before dumping), not the stack's end */
	if (strstr(w.stop, CQ_STACK_SPARC_I6_ZERO)) {
		char name[160];
		last_frame_name(&w, name, sizeof(name)); /* names the last frame's function too */
		if (cq_stack_sparc_outermost(last_frame(&w) ? last_frame(&w)->info->function : NULL)) {
			snprintf(w.stop, sizeof(w.stop), "end of stack (%s: %s: where a stack starts)", name,
				 CQ_STACK_SPARC_I6_ZERO);
		} else {
			snprintf(w.stop, sizeof(w.stop), "%s: %s, and no stack starts there: its window was never "
				 "flushed to the stack (the kernel flushes before dumping a core; qemu's gdbstub does not)",
				 name, CQ_STACK_SPARC_I6_ZERO);
			cut = true;
		}
	}
	ts->cut_short = cut;
	ts->stop = strdup(w.stop); /* NULL (out of memory) reads as "?" */
}

/* The modules: every image with a verified file at a known bias, and the vDSO. */
static void report_modules(struct unwinder *u)
{
	struct cq_core *core = u->core;
	dwfl_report_begin(u->dwfl);
	for (size_t i = 0; i < core->nimages; i++) {
		struct cq_image *img = &core->images[i];
		Dwfl_Module *mod = NULL;
		if (img->status == CQ_IMAGE_VIRTUAL) {
			if (u->vdso || img->end <= img->start || img->end - img->start > (64u << 10))
				continue;
			size_t size = (size_t)(img->end - img->start);
			uint8_t *buf = malloc(size);
			struct cq_error *err = buf ? cq_core_read(core, img->start, buf, size) : &cq_error_nomem;
			if (err) {
				cq_json_problem(u->problems, img->name, "the vDSO is not in the core (%s): frames in it are not unwound",
					err->message);
				cq_error_destroy(err);
				free(buf);
				continue;
			}
			u->vdso = buf;
			u->vdso_size = size;
			mod = dwfl_report_module(u->dwfl, "[vdso]", img->start, img->end);
			void **ud;
			if (mod && dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL))
				*ud = u;
			continue;
		}
		/* ---- bundled image: the unwind ELF its bundle carries (corelib/bundle.h) ---- */
		if (img->status == CQ_IMAGE_BUNDLED && img->unwind_elf && img->bias_known) {
			int fd = -1;
			struct cq_error *err = cq_image_unwind_fd(img, &fd);
			if (!err && !(mod = dwfl_report_elf(u->dwfl, img->name, img->name, fd, img->bias, true))) {
				close(fd);
				err = cq_error_create(CQ_ERR_FORMAT, "libdwfl: %s", dwfl_errmsg(-1));
			}
			void **ud;
			if (err)
				cq_json_problem(u->problems, img->name, "the bundle's unwind ELF is unusable (%s): frames in it are not unwound",
						err->message);
			else if (dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL))
				*ud = img;
			cq_error_destroy(err);
			continue;
		}
		/* ---- end of bundled image ---- */
		if (!img->elf || !img->elf->file || !img->bias_known)
			continue; /* missing (said by corelib) or symbols only (bundled) */
		uint64_t low = 0, high = 0;
		void **ud;
		if (in_place_elf(img, &low, &high) && (mod = dwfl_report_module(u->dwfl, img->name, low, high))) {
			if (dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL))
				*ud = img;
			continue;
		}
		int fd = dup(img->elf->file->fd);
		if (fd < 0)
			continue;
		mod = dwfl_report_elf(u->dwfl, img->name, img->found_path, fd, img->bias, true);
		if (!mod) {
			close(fd);
			cq_json_problem(u->problems, img->name, "libdwfl refused %s as a module: %s", img->found_path, dwfl_errmsg(-1));
			continue;
		}
		if (dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL))
			*ud = img;
	}
	dwfl_report_end(u->dwfl, NULL, NULL);
}

struct cq_error *cq_stack_walk_frames(struct cq_core *core, const struct cq_stack_options *opt,
				      struct cq_stacks **ret)
{
	int32_t tid = opt->tid;
	unsigned max_frames = opt->max_frames;
	static const Dwfl_Callbacks cbs = {.find_elf = find_elf, .find_debuginfo = find_debuginfo};
	static const Dwfl_Thread_Callbacks tcbs = {.next_thread = next_thread, .get_thread = get_thread,
						   .memory_read = memory_read,
						   .set_initial_registers = set_initial_registers,
						   .detach = detach};
	struct cq_error *err = cq_core_load_images(core);
	if (err)
		return err;
	if (!max_frames)
		max_frames = CQ_STACK_DEFAULT_MAX_FRAMES;
	struct unwinder u = {.core = core, .problems = json_array(), .described = cq_frame_infos_create(),
			     .walking = SIZE_MAX, .arg = opt->arg, .loop_variables = opt->loop_variables};
	u.order = calloc(core->nthreads + 1, sizeof(*u.order));
	u.refs = calloc(core->nthreads + 1, sizeof(*u.refs));
	struct cq_stacks *out = calloc(1, sizeof(*out));
	if (out) {
		out->threads = calloc(core->nthreads + 1, sizeof(*out->threads));
		out->at = calloc(core->nthreads + 1, sizeof(*out->at));
		out->nat = core->nthreads;
	}
	if (!u.order || !u.refs || !u.problems || !u.described || !out || !out->threads || !out->at) {
		free(u.order);
		free(u.refs);
		json_decref(u.problems);
		cq_frame_infos_free(u.described);
		if (out) {
			free(out->threads);
			free(out->at);
		}
		free(out);
		return &cq_error_nomem;
	}
	for (size_t i = 0; i < core->nthreads; i++)
		u.refs[i] = (struct thread_ref){&u, &core->threads[i]};
	for (unsigned r = 0; r < core->target->nregs; r++)
		if (core->target->regs[r].dwarf >= 0 && core->target->regs[r].dwarf < CQ_STACK_NREGS)
			u.carry[core->target->regs[r].dwarf] = true;
	if (core->target->dwarf_ra >= 0 && core->target->dwarf_ra < CQ_STACK_NREGS)
		u.carry[core->target->dwarf_ra] = true;
	if (core->nthreads)
		u.order[u.norder++] = core->crash_thread;
	for (size_t i = 0; i < core->nthreads; i++)
		if (i != core->crash_thread)
			u.order[u.norder++] = i;
	elf_version(EV_CURRENT);
	u.dwfl = dwfl_begin(&cbs);
	if (!u.dwfl) {
		free(u.order);
		free(u.refs);
		json_decref(u.problems);
		cq_frame_infos_free(u.described);
		free(out->threads);
		free(out);
		return cq_error_create(CQ_ERR_INTERNAL, "libdwfl: %s", dwfl_errmsg(-1));
	}
	size_t real = 0;
	for (size_t i = 0; i < core->nimages; i++)
		real += core->images[i].status != CQ_IMAGE_VIRTUAL;
	u.static_exe = real == 1 && core->nimages && core->images[0].is_exe;
	report_modules(&u);
	pid_t pid = core->pid > 0 ? core->pid : core->nthreads ? core->threads[0].tid : 1;
	if (!dwfl_attach_state(u.dwfl, (Elf *)core->elf, pid, &tcbs, &u)) {
		err = cq_error_create(CQ_ERR_UNSUPPORTED, "libdwfl cannot unwind %s cores: %s", core->target->name,
				      dwfl_errmsg(-1));
		dwfl_end(u.dwfl);
		cq_frame_infos_free(u.described);
		free(u.vdso);
		free(u.order);
		free(u.refs);
		json_decref(u.problems);
		free(out->threads);
		free(out);
		return err;
	}
	if (cq_stack_own_cfi(core->target))
		u.mips = cq_stack_mips_cfi_create(); /* NULL (out of memory): no CFI steps */
	u.units = cq_stack_units_create(u.problems); /* NULL (out of memory): lines through aranges only */
	/* NULL (out of memory): each frame searches on its own */
	u.loops = opt->loop_variables ? cq_stack_loops_create(u.problems) : NULL;
	for (size_t k = 0; k < u.norder; k++) {
		struct cq_thread *th = &core->threads[u.order[k]];
		if (tid && th->tid != tid)
			continue;
		u.walking = u.order[k];
		out->at[u.order[k]] = out->nthreads + 1;
		walk_thread(&u, th, max_frames, core->crashed && u.order[k] == core->crash_thread, opt->to_user_frame,
			    opt->system_lines, &out->threads[out->nthreads++]);
	}
	/* the functions of the frames not named for a stop reason, together (libdwfl's symbols
	 * are the fallback: before dwfl_end) */
	struct cq_stack_ctx names = {.core = core, .dwfl = u.dwfl, .cache = u.described};
	(void)cq_stack_name_frames(&names);
	cq_stack_mips_cfi_destroy(u.mips);
	cq_stack_units_destroy(u.units);
	cq_stack_loops_destroy(u.loops); /* its DIEs are the Dwfl's; says its problem into u.problems */
	dwfl_end(u.dwfl);
	for (unsigned g = 0; g < u.nguards; g++)
		cq_stack_cfi_guard_free(u.guards[g].guard);
	free(u.vdso);
	free(u.order);
	free(u.refs);
	out->problems = u.problems;
	out->infos = u.described;
	*ret = out;
	return NULL;
}

const struct cq_thread_stack *cq_stacks_thread(const struct cq_stacks *s, size_t thread)
{
	return s && thread < s->nat && s->at[thread] ? &s->threads[s->at[thread] - 1] : NULL;
}

void cq_stacks_free(struct cq_stacks *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nthreads; i++) {
		free(s->threads[i].frames);
		free(s->threads[i].stop);
		json_decref(s->threads[i].loop_vars);
	}
	free(s->threads);
	free(s->at);
	json_decref(s->problems);
	cq_frame_infos_free(s->infos);
	free(s);
}
