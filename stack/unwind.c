/* SPDX-License-Identifier: MIT */
/* libdwfl's unwinder over coreq's model of a core (stack.h). The shape of the callbacks
 * follows elfutils' linux-core-attach.c, but every answer comes from corelib: libdwfl's
 * own core attach fails on some of our cores (riscv64 gcore) and finds no modules in qemu
 * cores. */
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
#include "corelib/text.h"
#include "stack.h"

struct unwinder;

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
	/* the first target read that failed during the current walk (a stop reason) */
	bool faulted;
	uint64_t fault_addr;
	json_t *problems;
};


/* ---- module callbacks: coreq's files, never a search of the host ---- */

static int find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		    char **file_name, Elf **elfp)
{
	struct unwinder *u = *userdata;
	/* only the vDSO is reported without a file: its image is the core's memory */
	if (u && u->vdso && !strcmp(modname, "[vdso]")) {
		*elfp = elf_memory((char *)u->vdso, u->vdso_size);
		*file_name = NULL;
	}
	return -1;
}

static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			  char **debuginfo_file_name)
{
	/* the separate debug file corelib found (sysroot, --debug-dir, build-id), if any; not
	 * libdwfl's standard search, which would read the host's /usr/lib/debug and load
	 * libdebuginfod on the first miss */
	const struct cq_image *img = *userdata;
	if (!img || !img->debug_path || !strcmp(modname, "[vdso]"))
		return -1;
	int fd = open(img->debug_path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		*debuginfo_file_name = strdup(img->debug_path);
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

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	const struct thread_ref *ref = thread_arg;
	struct cq_core *core = ref->u->core;
	const struct cq_thread *th = ref->th;
	const struct cq_target *t = core->target;
	bool ra_is_reg = false;
	for (unsigned r = 0; r < t->nregs; r++) {
		int d = t->regs[r].dwarf;
		if (d < 0 || !cq_thread_has_reg(core, th, r))
			continue;
		ra_is_reg |= d == t->dwarf_ra;
		Dwarf_Word w = cq_thread_reg_at(core, th, r);
		/* registers past the backend's frame_nregs (segment registers) are refused: fine */
		(void)dwfl_thread_state_registers(thread, d, 1, &w);
	}
	/* powerpc: CFI's return-address column (65) is LR, which the table numbers 108 */
	int lr = ra_is_reg ? -1 : cq_target_reg_index(t, "lr");
	if (lr >= 0 && cq_thread_has_reg(core, th, (unsigned)lr)) {
		Dwarf_Word w = cq_thread_reg_at(core, th, (unsigned)lr);
		(void)dwfl_thread_state_registers(thread, t->dwarf_ra, 1, &w);
	}
	/* the pc explicitly on every architecture, or frame 0 is the return address */
	dwfl_thread_state_register_pc(thread, th->pc);
	return true;
}

static void detach(Dwfl *dwfl, void *arg)
{
}

/* ---- frames ---- */

struct walk {
	struct unwinder *u;
	json_t *frames;
	unsigned n, max;
	char stop[256];
};

static json_t *hex(uint64_t v)
{
	char b[24];
	snprintf(b, sizeof(b), "0x%" PRIx64, v);
	return json_string(b);
}

static int on_frame(Dwfl_Frame *state, void *arg)
{
	struct walk *w = arg;
	struct cq_core *core = w->u->core;
	Dwarf_Addr pc;
	bool activation;
	if (!dwfl_frame_pc(state, &pc, &activation)) {
		snprintf(w->stop, sizeof(w->stop), "no pc for frame %u: %s", w->n, dwfl_errmsg(-1));
		return DWARF_CB_ABORT;
	}
	/* a return address names the call before it: look it up at pc - 1 */
	uint64_t at = activation ? pc : pc - 1;
	json_t *f = json_pack("{s:i, s:o}", "index", (int)w->n, "pc", hex(pc));
	struct cq_symref ref;
	struct cq_error *err = cq_core_symbolize(core, at, &ref);
	if (!err && ref.image) {
		const char *base = strrchr(ref.image->name, '/');
		json_object_set_new(f, "module", cq_json_str(base ? base + 1 : ref.image->name));
		json_object_set_new(f, "module_offset", ref.image->bias_known ? hex(pc - ref.image->bias) : json_null());
	} else {
		json_object_set_new(f, "module", json_null());
		json_object_set_new(f, "module_offset", json_null());
	}
	if (!err && ref.sym && ref.image && ref.image->bias_known) {
		json_object_set_new(f, "function", cq_json_str(ref.sym->name));
		json_object_set_new(f, "function_offset", hex(pc - (ref.image->bias + ref.sym->value)));
	} else {
		json_object_set_new(f, "function", json_null());
		json_object_set_new(f, "function_offset", json_null());
	}
	cq_error_destroy(err);
	json_object_set_new(f, "found_by", json_string(w->n == 0 ? "initial" : "unwind"));
	json_array_append_new(w->frames, f);
	if (++w->n >= w->max) {
		snprintf(w->stop, sizeof(w->stop), "--max-frames %u reached", w->max);
		return DWARF_CB_ABORT;
	}
	return DWARF_CB_OK;
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
		int fd = dup(img->elf->file->fd);
		if (fd < 0)
			continue;
		mod = dwfl_report_elf(u->dwfl, img->name, img->found_path, fd, img->bias, true);
		if (!mod) {
			close(fd);
			cq_json_problem(u->problems, img->name, "libdwfl refused %s as a module: %s", img->found_path, dwfl_errmsg(-1));
			continue;
		}
		void **ud;
		if (dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL))
			*ud = img;
	}
	dwfl_report_end(u->dwfl, NULL, NULL);
}

struct cq_error *cq_stack_report(struct cq_core *core, int32_t tid, unsigned max_frames, json_t **ret)
{
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
	struct unwinder u = {.core = core, .problems = json_array()};
	u.order = calloc(core->nthreads + 1, sizeof(*u.order));
	u.refs = calloc(core->nthreads + 1, sizeof(*u.refs));
	if (!u.order || !u.refs) {
		free(u.order);
		free(u.refs);
		json_decref(u.problems);
		return &cq_error_nomem;
	}
	for (size_t i = 0; i < core->nthreads; i++)
		u.refs[i] = (struct thread_ref){&u, &core->threads[i]};
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
		return cq_error_create(CQ_ERR_INTERNAL, "libdwfl: %s", dwfl_errmsg(-1));
	}
	report_modules(&u);
	pid_t pid = core->pid > 0 ? core->pid : core->nthreads ? core->threads[0].tid : 1;
	if (!dwfl_attach_state(u.dwfl, (Elf *)core->elf, pid, &tcbs, &u)) {
		err = cq_error_create(CQ_ERR_UNSUPPORTED, "libdwfl cannot unwind %s cores: %s", core->target->name,
				      dwfl_errmsg(-1));
		dwfl_end(u.dwfl);
		free(u.vdso);
		free(u.order);
		free(u.refs);
		json_decref(u.problems);
		return err;
	}
	json_t *threads = json_array();
	for (size_t k = 0; k < u.norder; k++) {
		struct cq_thread *th = &core->threads[u.order[k]];
		if (tid && th->tid != tid)
			continue;
		struct walk w = {.u = &u, .frames = json_array(), .max = max_frames};
		u.faulted = false;
		int rc = dwfl_getthread_frames(u.dwfl, th->tid, on_frame, &w);
		if (!w.stop[0]) {
			if (rc == 0)
				snprintf(w.stop, sizeof(w.stop), "end of stack");
			else if (u.faulted)
				snprintf(w.stop, sizeof(w.stop), "stack memory at 0x%" PRIx64 " is not in the core", u.fault_addr);
			else
				snprintf(w.stop, sizeof(w.stop), "no unwind information: %s", dwfl_errmsg(-1));
		}
		json_array_append_new(threads, json_pack("{s:i, s:b, s:o, s:s}", "tid", th->tid, "crashing",
							 u.order[k] == core->crash_thread, "frames", w.frames,
							 "stop", w.stop));
	}
	dwfl_end(u.dwfl);
	free(u.vdso);
	free(u.order);
	free(u.refs);
	*ret = json_pack("{s:s, s:o, s:s, s:o, s:o}", "schema", "coreq-bt/1", "core", cq_json_str(core->file->path),
			 "arch", core->target->name, "threads", threads, "problems", u.problems);
	return NULL;
}
