/* SPDX-License-Identifier: MIT */
/* `coreq info` and `coreq threads`. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "cli.h"
#include "base/decode.h"
#include "elf/demangle.h"
#include "stack/stack.h"

static json_t *thread_json(struct cq_core *core, struct cq_thread *th, bool regs)
{
	json_t *o = json_object();
	json_object_set_new(o, "tid", json_integer(th->tid));
	json_object_set_new(o, "crashing", json_boolean(core->crashed && th == &core->threads[core->crash_thread]));
	json_object_set_new(o, "signal", json_integer(th->signal));
	json_object_set_new(o, "pc", cq_json_addr(th->pc));
	char *where = cq_core_symbol_name(core, th->pc, true);
	json_object_set_new(o, "pc_symbol", where ? cq_json_str(where) : json_null());
	free(where);
	json_object_set_new(o, "sp", cq_json_addr(th->sp));
	json_object_set_new(o, "tp", th->has_tp ? cq_json_addr(th->tp) : json_null());
	if (regs) {
		json_t *r = json_object();
		for (unsigned i = 0; i < core->target->nregs; i++)
			json_object_set_new(r, core->target->regs[i].name,
					    cq_thread_has_reg(core, th, i) ?
					    cq_json_addr(cq_thread_reg_at(core, th, i)) : json_null());
		json_object_set_new(o, "registers", r);
	}
	return o;
}

static json_t *image_json(struct cq_image *img)
{
	json_t *o = json_object();
	json_object_set_new(o, "name", cq_json_str(img->name));
	json_object_set_new(o, "kind", cq_json_str(img->is_exe ? "executable" :
						   img->status == CQ_IMAGE_VIRTUAL ? "vdso" : "library"));
	json_object_set_new(o, "bias", img->bias_known ? cq_json_addr(img->bias) : json_null());
	json_object_set_new(o, "start", img->end ? cq_json_addr(img->start) : json_null());
	json_object_set_new(o, "end", img->end ? cq_json_addr(img->end) : json_null());
	char *bid = img->build_id_len ? cq_hex_string(img->build_id, img->build_id_len) : NULL;
	json_object_set_new(o, "build_id", bid ? cq_json_str(bid) : json_null());
	free(bid);
	json_object_set_new(o, "status", cq_json_str(cq_image_status_name(img->status)));
	json_object_set_new(o, "file", img->found_path ? cq_json_str(img->found_path) : json_null());
	json_object_set_new(o, "symbols", cq_json_str(!img->elf ? "none" :
		img->status == CQ_IMAGE_BUNDLED ? "bundle" :
		img->debug ? "separate-debug-file" : img->elf->has_symtab ? "symtab" : "dynsym-only"));
	json_object_set_new(o, "debug_file", img->debug_path ? cq_json_str(img->debug_path) : json_null());
	/* only for files fetched from debuginfod (they are in its cache, not searched for) */
	if (img->file_origin)
		json_object_set_new(o, "file_origin", cq_json_str(img->file_origin));
	if (img->debug_origin)
		json_object_set_new(o, "debug_file_origin", cq_json_str(img->debug_origin));
	json_object_set_new(o, "sources", json_pack("{s:b, s:b}", "link_map", img->from_link_map,
						    "nt_file", img->from_file_note));
	json_object_set_new(o, "problem", img->problem ? cq_json_str(img->problem) : json_null());
	return o;
}

static const char *auxv_name(uint64_t type)
{
	switch (type) {
	case 3: return "AT_PHDR";
	case 4: return "AT_PHENT";
	case 5: return "AT_PHNUM";
	case 6: return "AT_PAGESZ";
	case 7: return "AT_BASE";
	case 8: return "AT_FLAGS";
	case 9: return "AT_ENTRY";
	case 11: return "AT_UID";
	case 12: return "AT_EUID";
	case 13: return "AT_GID";
	case 14: return "AT_EGID";
	case 15: return "AT_PLATFORM";
	case 16: return "AT_HWCAP";
	case 17: return "AT_CLKTCK";
	case 18: return "AT_FPUCW";
	case 19: return "AT_DCACHEBSIZE";
	case 20: return "AT_ICACHEBSIZE";
	case 21: return "AT_UCACHEBSIZE";
	case 22: return "AT_IGNOREPPC";
	case 23: return "AT_SECURE";
	case 24: return "AT_BASE_PLATFORM";
	case 25: return "AT_RANDOM";
	case 26: return "AT_HWCAP2";
	case 31: return "AT_EXECFN";
	case 32: return "AT_SYSINFO";
	case 33: return "AT_SYSINFO_EHDR";
	case 51: return "AT_MINSIGSTKSZ";
	}
	return NULL;
}

static json_t *auxv_json(const struct cq_core *core)
{
	json_t *a = json_array();
	for (size_t i = 0; i < core->nauxv; i++) {
		const char *n = auxv_name(core->auxv[i][0]);
		json_array_append_new(a, json_pack("{s:I, s:o, s:o}", "type", (json_int_t)core->auxv[i][0],
						   "name", n ? cq_json_str(n) : json_null(),
						   "value", cq_json_addr(core->auxv[i][1])));
	}
	return a;
}

/* The target's ABI facts that plugins and users rely on (sizes, TLS). */
static json_t *abi_json(const struct cq_target *t)
{
	static const char *const names[CQ_CTYPE_COUNT] = {
		"char", "short", "int", "long", "long_long", "pointer", "size_t", "bool", "float",
		"double", "long_double"};
	json_t *types = json_object();
	for (int i = 0; i < CQ_CTYPE_COUNT; i++)
		json_object_set_new(types, names[i], json_pack("{s:i, s:i}", "size", t->ctypes[i].size,
							       "align", t->ctypes[i].align));
	const char *tp = t->tp_source == CQ_TP_REGISTER ? t->regs[t->tp_reg].name :
			 t->tp_source == CQ_TP_NOTE_386_TLS ? "NT_386_TLS" :
			 t->tp_source == CQ_TP_NOTE_ARM_TLS ? "NT_ARM_TLS" : "none (glibc's thread lists)";
	return json_pack("{s:o, s:s, s:i, s:o}", "types", types, "thread_pointer", tp,
			 "tls_variant", t->tls_variant, "tls_tp_bias", cq_json_addr(t->tls_tp_bias));
}

/* Per thread its user frame (stack.h: the first frame outside the C library and dynamic
 * linker), and for `info` the crashing thread's whole stack. Each thread's walk stops at
 * its user frame, so this costs a few frames per thread. What kept frames unknown is a
 * problem of the core's. NULL when no stack was walked (said as a problem). */
static struct cq_stacks *walk_stacks(struct cq_core *core)
{
	struct cq_stack_options opt = {.to_user_frame = true};
	struct cq_stacks *s;
	struct cq_error *err = cq_stack_walk_frames(core, &opt, &s);
	if (err) {
		cq_core_problem(core, "stacks", "%s", err->message);
		cq_error_destroy(err);
		return NULL;
	}
	json_t *p;
	size_t i;
	json_array_foreach(s->problems, i, p)
		cq_core_problem(core, json_string_value(json_object_get(p, "item")), "%s",
				json_string_value(json_object_get(p, "message")));
	return s;
}

static const struct cq_frame *user_frame_of(const struct cq_thread_stack *t)
{
	return t && t->user_frame >= 0 && (unsigned)t->user_frame < t->nframes ? &t->frames[t->user_frame] : NULL;
}

/* The stacks in the JSON document: each thread's user frame, `info`'s crash stack. */
/* The crashing thread's whole stack, for `info`'s crash_stack. */
static json_t *crash_stack_json(const struct cq_core *core, const struct cq_stacks *s)
{
	for (size_t i = 0; i < core->nthreads; i++) {
		const struct cq_thread_stack *ts = cq_stacks_thread(s, i);
		if (!ts || !ts->crashing)
			continue;
		json_t *frames = json_array();
		for (unsigned k = 0; k < ts->nframes; k++)
			json_array_append_new(frames, cq_frame_json(&ts->frames[k]));
		return json_pack("{s:o, s:s}", "frames", frames, "stop", ts->stop ? ts->stop : "?");
	}
	return json_null();
}

struct thread_items {
	struct cq_core *core;
	const struct cq_stacks *stacks;
	bool regs;
};

/* Thread @p i of the document, with its user frame from the walk: made one at a time as
 * it is printed (cq_emit_json_items), so that 100,000 threads are never all in memory
 * (1.17 GB as one array). */
static json_t *thread_item(size_t i, void *arg)
{
	const struct thread_items *t = arg;
	json_t *o = thread_json(t->core, &t->core->threads[i], t->regs);
	const struct cq_frame *f = user_frame_of(cq_stacks_thread(t->stacks, i));
	json_object_set_new(o, "user_frame", f ? cq_frame_json(f) : json_null());
	return o;
}

/* The document of `info` (with_images) or `threads`: @p full, all of it (JSON); else only
 * the header the text prints from it (the threads, stacks, images and problems are printed
 * straight from the core and the walk). */
static json_t *info_json(struct cq_cli *cli, struct cq_core *core, bool with_images, bool regs,
			 const struct cq_stacks *stacks, bool full)
{
	json_t *doc = json_object();
	json_object_set_new(doc, "schema", cq_json_str(with_images ? "coreq-info/1" : "coreq-threads/1"));
	json_object_set_new(doc, "core", cq_json_str(core->name));
	json_object_set_new(doc, "compressed", json_boolean(core->file && core->file->compressed));
	cq_json_add_apport(doc, core);
	const struct cq_target *t = core->target;
	json_object_set_new(doc, "arch", cq_json_str(t->name));
	json_object_set_new(doc, "bits", json_integer(cq_target_ptr_size(t) * 8));
	json_object_set_new(doc, "byte_order", cq_json_str(t->little_endian ? "little" : "big"));
	if (with_images && full)
		json_object_set_new(doc, "abi", abi_json(t));
	if (cli->bfd) {
		json_object_set_new(doc, "bfd_target", cli->bfd_id.target ? cq_json_str(cli->bfd_id.target) : json_null());
		json_object_set_new(doc, "bfd_arch", cli->bfd_id.arch ? cq_json_str(cli->bfd_id.arch) : json_null());
	}
	if (core->has_psinfo) {
		json_object_set_new(doc, "pid", json_integer(core->pid));
		json_object_set_new(doc, "ppid", json_integer(core->ppid));
		json_object_set_new(doc, "command", cq_json_str(core->fname));
		json_object_set_new(doc, "args", cq_json_str(core->psargs));
		/* only a process stopped by a signal before the core was taken (a coreq
		 * snapshot's record): the other letters say little about a dying process */
		if (core->state == 'T')
			json_object_set_new(doc, "state", json_string("stopped"));
		json_t *mpi = cq_mpi_rank_json(core);
		if (mpi)
			json_object_set_new(doc, "mpi", mpi);
	} else {
		json_object_set_new(doc, "pid", json_null());
		json_object_set_new(doc, "ppid", json_null());
		json_object_set_new(doc, "command", json_null());
		json_object_set_new(doc, "args", json_null());
	}
	json_t *sig = json_object();
	json_object_set_new(sig, "number", json_integer(core->signal));
	const char *sn = cq_target_signal_name(core->target, core->signal);
	json_object_set_new(sig, "name", sn ? cq_json_str(sn) : json_null());
	json_object_set_new(sig, "source", cq_json_str(core->has_siginfo ? "NT_SIGINFO" : "NT_PRSTATUS"));
	if (core->has_siginfo) {
		/* the union after si_code means what si_code says: a sender's pid for kill and
		 * raise (never an "address"), the faulting address for a fault */
		json_object_set_new(sig, "code", json_integer(core->si_code));
		const char *cn = cq_signal_code_name(core->target, core->signal, core->si_code);
		json_object_set_new(sig, "code_name", cn ? json_string(cn) : json_null());
		switch (cq_signal_origin(core->target, core->signal, core->si_code)) {
		case CQ_SIGNAL_FAULT: json_object_set_new(sig, "address", cq_json_addr(core->si_addr)); break;
		case CQ_SIGNAL_SENT:
			json_object_set_new(sig, "sender", json_pack("{s:I, s:I}", "pid", (json_int_t)core->si_pid, "uid",
								      (json_int_t)core->si_uid));
			break;
		default: break;
		}
	}
	json_object_set_new(doc, "signal", sig);
	/* signals sent and not yet taken (NT_PRSTATUS's pr_sigpend; a snapshot adds those sent
	 * to the whole process): a hung process may sit on the SIGTERM it blocks */
	json_t *pending = json_array();
	for (unsigned n = 1; n <= 64; n++) {
		json_t *tids = json_array();
		bool blocked = true;
		for (size_t i = 0; i < core->nthreads; i++)
			if (core->threads[i].sigpend >> (n - 1) & 1) {
				json_array_append_new(tids, json_integer(core->threads[i].tid));
				blocked &= core->threads[i].sighold >> (n - 1) & 1;
			}
		const char *name = json_array_size(tids) ? cq_target_signal_name(core->target, (int)n) : NULL;
		if (json_array_size(tids))
			json_array_append_new(pending, json_pack("{s:i, s:o, s:o, s:b}", "number", n, "name",
								 name ? cq_json_str(name) : json_null(), "threads", tids,
								 "blocked", blocked));
		else
			json_decref(tids);
	}
	if (json_array_size(pending)) /* only then: what a crash's core seldom has */
		json_object_set_new(doc, "pending_signals", pending);
	else
		json_decref(pending);
	json_object_set_new(doc, "crashing_thread",
			    core->crashed ? json_integer(core->threads[core->crash_thread].tid) : json_null());
	json_object_set_new(doc, "thread_count", json_integer((json_int_t)core->nthreads));
	struct cq_error *err = cq_core_load_images(core);
	if (err) {
		cq_core_problem(core, "images", "%s", err->message);
		cq_error_destroy(err);
	}
	if (full) {
		/* the threads' place: filled item by item when printed (thread_item) */
		json_object_set_new(doc, "threads", json_null());
		if (with_images)
			json_object_set_new(doc, "crash_stack", crash_stack_json(core, stacks));
	}
	if (with_images) {
		if (full)
			json_object_set_new(doc, "auxv", auxv_json(core));
		json_object_set_new(doc, "images_source",
				    cq_json_str(core->images_source ? core->images_source : "none"));
		if (full) {
			json_t *images = json_array();
			for (size_t i = 0; i < core->nimages; i++)
				json_array_append_new(images, image_json(&core->images[i]));
			json_object_set_new(doc, "images", images);
		}
	}
	if (full)
		json_object_set_new(doc, "problems", cq_json_problems(core));
	return doc;
}

static const char *jstr(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_string(v) ? cq_esc(json_string_value(v)) : "-";
}

/* The thread table is 65 lines on the benchmark core: written with stdio's unlocked
 * character calls, not printf (whose format parsing was a tenth of `coreq info`). */
static void put_str(const char *s)
{
	fputs_unlocked(s, stdout);
}

/* @p s left-aligned in @p width columns, as printf's "%-*s". */
static void put_col(const char *s, int width)
{
	put_str(s);
	for (int n = (int)strlen(s); n < width; n++)
		putchar_unlocked(' ');
}

/* WHERE's second part: " <- fx_block_read (fixprog.c:90)", the thread's user frame when
 * it is not the innermost one. */
static void print_user_frame(const struct cq_frame *f)
{
	if (!f || f->index == 0)
		return;
	const struct cq_frame_info *in = f->info;
	const char *fn = in->demangled ? in->demangled : in->function;
	const char *base = in->file ? strrchr(in->file, '/') : NULL;
	char b[24];
	put_str(" <- ");
	put_str(fn ? cq_esc(fn) : "??");
	if (in->file) {
		put_str(" (");
		put_str(cq_esc(base ? base + 1 : in->file));
		putchar_unlocked(':');
		cq_put_dec(in->line, 0);
		putchar_unlocked(')');
	} else if (in->has_function_offset) {
		putchar_unlocked('+');
		put_str(cq_hex_str(b, in->function_offset));
	}
}

/* WHERE's first part, as cq_core_symbol_name() words it ("pause+0x32", "libc.so.6+0x1234",
 * "-"), without building the string: 65 threads, 65 allocations and formats. */
static void put_where(struct cq_core *core, uint64_t pc)
{
	struct cq_symref ref;
	struct cq_error *err = cq_core_symbolize(core, pc, &ref);
	char b[24];
	if (err || (!ref.sym && (!ref.image || !ref.image->bias_known))) {
		cq_error_destroy(err);
		put_str("-");
		return;
	}
	uint64_t off;
	if (ref.sym) {
		/* demangled, without a symbol version (the JSON's pc_symbol keeps it raw) */
		char *shown = cq_display_name(ref.sym->name, true);
		put_str(cq_esc(shown ? shown : ref.sym->name));
		free(shown);
		off = pc - ref.image->bias - ref.sym->value;
	} else {
		const char *base = strrchr(ref.image->name, '/');
		put_str(cq_esc(base ? base + 1 : ref.image->name));
		off = pc - ref.image->bias;
		if (!off) { /* "libc.so.6+0x0": an image offset is always written */
			put_str("+0x0");
			return;
		}
	}
	if (off) {
		putchar_unlocked('+');
		put_str(cq_hex_str(b, off));
	}
}

/* The thread table, straight from the core and the walk (the JSON document's threads,
 * without building them). */
static void print_threads_text(struct cq_core *core, const struct cq_stacks *stacks, bool regs)
{
	printf("  %-8s %-4s %-18s %-18s %-18s %s\n", "TID", "SIG", "PC", "SP", "TP", "WHERE");
	for (size_t i = 0; i < core->nthreads; i++) {
		struct cq_thread *th = &core->threads[i];
		char b[24];
		putchar_unlocked(core->crashed && i == core->crash_thread ? '*' : ' ');
		putchar_unlocked(' ');
		cq_put_dec(th->tid, 8);
		putchar_unlocked(' ');
		cq_put_dec(th->signal, 4);
		putchar_unlocked(' ');
		put_col(cq_hex_str(b, th->pc), 18);
		putchar_unlocked(' ');
		put_col(cq_hex_str(b, th->sp), 18);
		putchar_unlocked(' ');
		put_col(th->has_tp ? cq_hex_str(b, th->tp) : "-", 18);
		putchar_unlocked(' ');
		put_where(core, th->pc);
		print_user_frame(user_frame_of(cq_stacks_thread(stacks, i)));
		putchar_unlocked('\n');
		if (regs) {
			int col = 0;
			for (unsigned r = 0; r < core->target->nregs; r++) {
				printf("%s%9s=%-18s", col == 0 ? "    " : "", core->target->regs[r].name,
				       cq_thread_has_reg(core, th, r) ? cq_hex_str(b, cq_thread_reg_at(core, th, r)) : "unavailable");
				if (++col == 4) {
					printf("\n");
					col = 0;
				}
			}
			if (col)
				printf("\n");
		}
	}
}

/* The image table, from the core (image_json() says the same in JSON). */
static void print_images_text(const struct cq_core *core, const char *source)
{
	printf("images:   %zu (from %s)\n", core->nimages, source);
	printf("  %-18s %-17s %-40s %s\n", "BIAS", "STATUS", "BUILD-ID", "NAME -> FILE");
	for (size_t i = 0; i < core->nimages; i++) {
		const struct cq_image *img = &core->images[i];
		char bias[19];
		char *bid = img->build_id_len ? cq_hex_string(img->build_id, img->build_id_len) : NULL;
		printf("  %-18s %-17s %-40s %s -> %s\n", img->bias_known ? cq_hex_str(bias, img->bias) : "-",
		       cq_image_status_name(img->status), bid ? bid : "-", cq_esc(img->name), cq_esc(img->found_path));
		free(bid);
		const char *name = cq_esc(img->name), *base = strrchr(name, '/');
		base = base ? base + 1 : name;
		if (img->file_origin)
			printf("    %s: file from %s\n", base, cq_esc(img->file_origin));
		if (img->debug_origin)
			printf("    %s: debug file from %s (%s)\n", base, cq_esc(img->debug_origin), cq_esc(img->debug_path));
	}
}

static void print_info_text(json_t *doc, struct cq_core *core, const struct cq_stacks *stacks, bool with_images)
{
	json_t *sig = json_object_get(doc, "signal");
	json_t *rep = json_object_get(doc, "apport");
	printf("core:     %s%s\n", jstr(doc, "core"),
	       rep ? " (an apport report: the core is its CoreDump field)" :
	       json_is_true(json_object_get(doc, "compressed")) ? " (compressed)" : "");
	if (rep) {
		/* the report's own words, escaped: a command line may hold anything */
		printf("apport:   ExecutablePath %s%s, ProcCmdline \"%s\", Signal %s", jstr(rep, "executable_path"),
		       json_is_true(json_object_get(rep, "executable_from_report")) ? " (looked up as the executable)" : "",
		       jstr(rep, "proc_cmdline"), jstr(rep, "signal"));
		if (json_is_string(json_object_get(rep, "package")))
			printf(", Package %s", jstr(rep, "package"));
		if (json_array_size(json_object_get(rep, "cut")))
			printf(" (fields over %d bytes cut)", CQ_APPORT_FIELD_MAX);
		printf("\n");
	}
	printf("arch:     %s, %lld-bit %s-endian", jstr(doc, "arch"),
	       (long long)json_integer_value(json_object_get(doc, "bits")), jstr(doc, "byte_order"));
	if (json_object_get(doc, "bfd_target"))
		printf(" (bfd: %s, %s)", jstr(doc, "bfd_target"), jstr(doc, "bfd_arch"));
	printf("\n");
	if (json_is_integer(json_object_get(doc, "pid")))
		printf("process:  pid %lld, ppid %lld, command %s, args \"%s\"\n",
		       (long long)json_integer_value(json_object_get(doc, "pid")),
		       (long long)json_integer_value(json_object_get(doc, "ppid")),
		       jstr(doc, "command"), jstr(doc, "args"));
	if (json_object_get(doc, "state"))
		printf("state:    stopped by a signal (SIGSTOP, SIGTSTP, ...) when the core was taken: not running\n");
	if (!json_is_integer(json_object_get(doc, "pid")))
		printf("process:  no NT_PRPSINFO note\n");
	cq_print_mpi_rank(json_object_get(doc, "mpi"), "MPI:      ");
	/* "SIGSEGV at 0x10 (SEGV_MAPERR)", "SIGABRT from pid 538 (SI_TKILL)" */
	printf("signal:   %lld (%s)", (long long)json_integer_value(json_object_get(sig, "number")), jstr(sig, "name"));
	json_t *sender = json_object_get(sig, "sender");
	if (json_object_get(sig, "address"))
		printf(" at %s", jstr(sig, "address"));
	else if (sender)
		printf(" from pid %lld, uid %lld", (long long)json_integer_value(json_object_get(sender, "pid")),
		       (long long)json_integer_value(json_object_get(sender, "uid")));
	if (json_object_get(sig, "code"))
		printf(" (%s)", json_is_string(json_object_get(sig, "code_name")) ? jstr(sig, "code_name") : "code unknown");
	if (json_is_integer(json_object_get(doc, "crashing_thread")))
		printf(" in thread %lld, from %s\n", (long long)json_integer_value(json_object_get(doc, "crashing_thread")),
		       jstr(sig, "source"));
	else
		printf(", from %s: no thread crashed (the process was stopped when the core was taken, as gdb's gcore "
		       "does)\n", jstr(sig, "source"));
	json_t *ps;
	size_t pi;
	json_array_foreach(json_object_get(doc, "pending_signals"), pi, ps) {
		json_t *tids = json_object_get(ps, "threads");
		printf("pending:  %lld (%s) in %zu thread%s%s\n", (long long)json_integer_value(json_object_get(ps, "number")),
		       jstr(ps, "name") ? jstr(ps, "name") : "?", json_array_size(tids), json_array_size(tids) > 1 ? "s" : "",
		       json_is_true(json_object_get(ps, "blocked")) ? ", blocked by each: not taken" : "");
	}
	printf("threads:  %lld\n", (long long)json_integer_value(json_object_get(doc, "thread_count")));
	print_threads_text(core, stacks, false);
	const struct cq_thread_stack *cs = NULL;
	for (size_t k = 0; stacks && k < stacks->nthreads && !cs; k++)
		if (stacks->threads[k].crashing)
			cs = &stacks->threads[k];
	if (cs && with_images) {
		printf("stack of thread %lld (crashing):\n", (long long)cs->tid);
		cq_print_stack_frames(cs->frames, cs->nframes, (int)cq_target_ptr_size(core->target) * 2);
		printf("  (%s)\n", cq_esc(cs->stop));
	}
	if (with_images)
		print_images_text(core, jstr(doc, "images_source"));
}

static int info_common(struct cq_cli *cli, bool with_images, bool regs)
{
	struct cq_core *core;
	/* libbfd is loaded (dlopen, relocation, its identification pass: most of the time of
	 * `info` on a small core) only when its answer is shown (cli->bfd) */
	int rc = cq_open_core(cli, true, &core);
	if (rc)
		return rc;
	struct cq_stacks *stacks = walk_stacks(core);
	if (cli->json) {
		json_t *doc = info_json(cli, core, with_images, regs, stacks, true);
		rc = core->nproblems ? CQ_EXIT_PARTIAL : CQ_EXIT_OK;
		if (rc)
			fprintf(stderr, "coreq: analysis incomplete: %zu problem(s), listed in the output\n",
				core->nproblems);
		struct thread_items items = {core, stacks, regs};
		cq_emit_json_items(doc, "threads", core->nthreads, thread_item, &items);
		cq_stacks_free(stacks);
		cq_core_close(core);
		cq_bfd_ident_deinit(&cli->bfd_id);
		return rc;
	}
	/* text: the header and images from the document, the threads and stacks printed
	 * straight from the core and the walk */
	json_t *doc = with_images ? info_json(cli, core, true, false, stacks, false) : NULL;
	rc = core->nproblems ? CQ_EXIT_PARTIAL : CQ_EXIT_OK;
	if (with_images)
		print_info_text(doc, core, stacks, true);
	else
		print_threads_text(core, stacks, regs);
	cq_text_problems(core);
	cq_stacks_free(stacks);
	cq_release(doc, core);
	cq_bfd_ident_deinit(&cli->bfd_id);
	return rc;
}

int cq_cmd_info(struct cq_cli *cli)
{
	return info_common(cli, true, false);
}

int cq_cmd_threads(struct cq_cli *cli)
{
	return info_common(cli, false, true);
}
