/* SPDX-License-Identifier: MIT */
/* Helpers shared by the commands: opening the core, exit statuses, JSON pieces. */
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corelib/environ.h"
#include "base/text.h"
#include "job/ranges.h"
#include "cli.h"
#include "input/file.h"

int cq_exit_for(const struct cq_error *err)
{
	switch (err->code) {
	case CQ_ERR_IO: return CQ_EXIT_IO;
	case CQ_ERR_FORMAT:
	case CQ_ERR_UNSUPPORTED: return CQ_EXIT_FORMAT;
	case CQ_ERR_MALFORMED: return CQ_EXIT_MALFORMED;
	case CQ_ERR_COMPRESSED: return CQ_EXIT_COMPRESSED;
	case CQ_ERR_FAULT:
	case CQ_ERR_NOT_FOUND:
	case CQ_ERR_MISSING: return CQ_EXIT_QUERY;
	case CQ_ERR_USAGE: return CQ_EXIT_USAGE;
	case CQ_ERR_NOMEM:
	case CQ_ERR_INTERNAL: return CQ_EXIT_INTERNAL;
	case CQ_ERR_PLUGIN: return CQ_EXIT_PLUGIN;
	case CQ_ERR_PROCESS: return CQ_EXIT_PROCESS;
	case CQ_ERR_JOB: return CQ_EXIT_JOB;
	}
	return CQ_EXIT_INTERNAL;
}

int cq_fail(struct cq_error *err)
{
	int rc = cq_exit_for(err);
	fprintf(stderr, "coreq: %s\n", cq_esc(err->message));
	cq_error_destroy(err);
	return rc;
}

int cq_open_core(struct cq_cli *cli, bool exe_arg, struct cq_core **ret)
{
	if (cli->pid) {
		/* a running process (live/process.h): no CORE argument, the executable optional */
		if (cli->nargs > (exe_arg ? 1 : 0)) {
			fprintf(stderr, "coreq: --pid takes no CORE argument%s\n", exe_arg ? " (expected [EXE])" : "");
			return CQ_EXIT_USAGE;
		}
		if (exe_arg && cli->nargs == 1)
			cli->opts.exe = cli->args[0];
		struct cq_error *err = cq_process_open(cli->pid, &cli->opts, &cli->live, ret);
		if (err)
			return cq_fail(err);
		if ((err = cq_core_load_images(*ret)))
			cq_core_problem(*ret, "images", "%s", err->message);
		cq_error_destroy(err);
		return CQ_EXIT_OK;
	}
	if (cli->nargs < 1) {
		fprintf(stderr, "coreq: missing CORE argument (see coreq --help)\n");
		return CQ_EXIT_USAGE;
	}
	if (exe_arg && cli->nargs > 2) {
		fprintf(stderr, "coreq: too many arguments (expected CORE [EXE])\n");
		return CQ_EXIT_USAGE;
	}
	if (exe_arg && cli->nargs == 2)
		cli->opts.exe = cli->args[1];
	struct cq_error *err = cq_core_open(cli->args[0], &cli->opts, ret);
	if (err)
		return cq_fail(err);
	if (cli->bfd && (*ret)->file) {
		/* libbfd's second opinion (elf/bfd_ident.h): its disagreements are the core's
		 * problems, listed before what the images add */
		struct cq_core *c = *ret;
		struct cq_bfd_query q = {c->file->path, c->file->fd, c->target->name, c->target->bfd_arch, c->nthreads};
		if ((err = cq_bfd_identify(&q, &cli->bfd_id))) {
			cq_bfd_ident_deinit(&cli->bfd_id);
			cq_core_close(c);
			*ret = NULL;
			return cq_fail(err);
		}
		for (size_t i = 0; i < cli->bfd_id.nproblems; i++)
			cq_core_problem(c, "identification", "%s", cli->bfd_id.problems[i]);
	}
	/* Memory that image files back is known once the images are found (corelib never
	 * finds them from inside a read); failures there are problems, not faults. */
	if ((err = cq_core_load_images(*ret)))
		cq_core_problem(*ret, "images", "%s", err->message);
	cq_error_destroy(err);
	return CQ_EXIT_OK;
}

bool cq_is_executable(const char *path)
{
	/* an ELF file that is not a core (compressed too: read as every input is) */
	struct cq_file *f;
	struct cq_error *err = cq_file_open(path, 0, &f);
	if (err) {
		cq_error_destroy(err);
		return false;
	}
	unsigned char h[18];
	bool exe = false;
	if (f->size >= sizeof(h) && !(err = cq_file_read(f, h, sizeof(h), 0, "ELF header"))) {
		unsigned type = h[5] == 2 ? (unsigned)(h[16] << 8 | h[17]) : (unsigned)(h[17] << 8 | h[16]);
		exe = !memcmp(h, "\177ELF", 4) && type != 4 /* ET_CORE */;
	}
	cq_error_destroy(err);
	cq_file_close(f);
	return exe;
}

static json_t *field_json(const struct cq_apport_field *f)
{
	return f->value ? cq_json_str(f->value) : json_null();
}

void cq_json_add_apport(json_t *doc, const struct cq_core *core)
{
	const struct cq_apport *a = core->file ? core->file->apport : NULL;
	if (!a)
		return;
	json_t *o = json_object(), *cut = json_array();
	static const struct {
		const char *name;
		size_t off;
	} fields[] = {
		{"problem_type", offsetof(struct cq_apport, problem_type)},
		{"executable_path", offsetof(struct cq_apport, executable_path)},
		{"executable_timestamp", offsetof(struct cq_apport, executable_timestamp)},
		{"proc_cmdline", offsetof(struct cq_apport, proc_cmdline)},
		{"signal", offsetof(struct cq_apport, signal)},
		{"package", offsetof(struct cq_apport, package)},
	};
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const struct cq_apport_field *f = (const void *)((const char *)a + fields[i].off);
		json_object_set_new(o, fields[i].name, field_json(f));
		if (f->cut)
			json_array_append_new(cut, json_string(fields[i].name));
	}
	json_object_set_new(o, "cut", cut);
	json_object_set_new(o, "core_compression", cq_json_str(a->compression));
	json_object_set_new(o, "executable_from_report", json_boolean(cq_apport_exe_used(core)));
	json_object_set_new(doc, "apport", o);
}

bool cq_apport_exe_used(const struct cq_core *core)
{
	const struct cq_apport *a = core->file ? core->file->apport : NULL;
	return a && !core->opts.exe && a->executable_path.value && !a->executable_path.cut;
}

json_t *cq_json_addr(uint64_t v)
{
	return cq_json_hex(v);
}

bool cq_parse_u64(const char *s, uint64_t *ret)
{
	if (!s || !*s || *s == '-')
		return false;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || *end)
		return false;
	*ret = v;
	return true;
}


#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CQ_FREE_AT_EXIT 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define CQ_FREE_AT_EXIT 1
#endif

void cq_print_mpi_rank(const json_t *r, const char *prefix)
{
	if (!r)
		return;
	printf("%srank %lld", prefix, (long long)json_integer_value(json_object_get(r, "rank")));
	if (json_is_integer(json_object_get(r, "size")))
		printf(" of %lld", (long long)json_integer_value(json_object_get(r, "size")));
	printf(" (%s, in MPI_COMM_WORLD)\n", json_string_value(json_object_get(r, "source")));
}

void cq_release(json_t *doc, struct cq_core *core)
{
#ifndef CQ_FREE_AT_EXIT
	/* kept reachable, so that a leak checker (valgrind) counts them as in use, not lost
	 * ("used": the compiler would drop stores to an array nothing reads) */
	static struct { json_t *doc; struct cq_core *core; } kept[4] __attribute__((used));
	static unsigned nkept;
	if (nkept < sizeof(kept) / sizeof(kept[0])) {
		kept[nkept].doc = doc;
		kept[nkept++].core = core;
		return;
	}
#endif
	json_decref(doc);
	cq_core_close(core);
}

/* The layout of the documents the commands print (cq_emit_json, cq_emit_json_items). */
#define JSON_OUT_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER)

void cq_emit_json(json_t *doc)
{
	/* One buffer, one write: json_dumpf's many small writes cost more than the document. */
	char *text = json_dumps(doc, JSON_OUT_FLAGS);
	if (text) {
		fputs(text, stdout);
		free(text);
	} else {
		json_dumpf(doc, stdout, JSON_OUT_FLAGS);
	}
	fputc('\n', stdout);
	json_decref(doc);
}

/* @p text, each line after the first indented by @p indent more spaces (JSON text has no
 * raw newline inside a string: every one is jansson's layout). */
static void put_indented(const char *text, int indent)
{
	for (const char *p = text, *nl; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		fwrite(p, 1, nl ? (size_t)(nl - p) : strlen(p), stdout);
		if (!nl)
			break;
		fprintf(stdout, "\n%*s", indent, "");
	}
}

void cq_emit_json_items(json_t *doc, const char *key, size_t n, json_t *(*item)(size_t i, void *arg), void *arg)
{
	/* the array's place, marked by a string no other member's text can hold: its quotes
	 * are unescaped, which inside another string they would not be */
	json_object_set_new(doc, key, json_string("\001coreq-items\001"));
	char *text = json_dumps(doc, JSON_OUT_FLAGS), *needle = NULL, *at = NULL;
	if (text && asprintf(&needle, "\"%s\": \"\\u0001coreq-items\\u0001\"", key) >= 0)
		at = strstr(text, needle);
	if (!at) {
		/* not expected: the whole array at once, as cq_emit_json */
		json_t *all = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(all, item(i, arg));
		json_object_set_new(doc, key, all);
		free(text);
		free(needle);
		cq_emit_json(doc);
		return;
	}
	int indent = 0; /* the member's: the spaces before its key */
	while (at - indent > text && at[-indent - 1] == ' ')
		indent++;
	size_t head = (size_t)(at - text) + strlen(key) + 4; /* through `"key": ` */
	fwrite(text, 1, head, stdout);
	if (!n)
		fputs("[]", stdout);
	for (size_t i = 0; i < n; i++) {
		json_t *v = item(i, arg);
		char *t = v ? json_dumps(v, JSON_OUT_FLAGS | JSON_ENCODE_ANY) : NULL;
		fprintf(stdout, "%s%*s", i ? ",\n" : "[\n", indent + 2, "");
		put_indented(t ? t : "null", indent + 2);
		free(t);
		json_decref(v);
	}
	if (n)
		fprintf(stdout, "\n%*s]", indent, "");
	fputs(at + strlen(needle), stdout);
	fputc('\n', stdout);
	free(text);
	free(needle);
	json_decref(doc);
}

int cq_text_problems(const struct cq_core *core)
{
	if (!core->nproblems)
		return CQ_EXIT_OK;
	printf("\nproblems (%zu):\n", core->nproblems);
	for (size_t i = 0; i < core->nproblems; i++)
		printf("  %s: %s\n", cq_esc(core->problems[i].item), cq_esc(core->problems[i].message));
	fprintf(stderr, "coreq: analysis incomplete: %zu problem(s), listed in the output\n",
		core->nproblems);
	return CQ_EXIT_PARTIAL;
}

const char *cq_esc(const char *s)
{
	/* the buffers are kept and reused: a report escapes every name and address it prints,
	 * and nearly all are plain (a copy, no allocation) */
	static struct {
		char *buf;
		size_t cap;
	} ring[16];
	static unsigned next;
	if (!s)
		return "-";
	size_t len = strlen(s);
	char *out;
	if (cq_text_plain(s, true) && len < ring[next].cap) {
		out = memcpy(ring[next].buf, s, len + 1);
	} else {
		char *e = cq_text_escape(s);
		if (!e)
			return "(out of memory)";
		free(ring[next].buf);
		ring[next].buf = out = e;
		ring[next].cap = strlen(e) + 1;
	}
	next = (next + 1) % 16;
	return out;
}

/* "#3  0x000055d44e7a6a1c in fx_block_read (fixprog.c:88) [fixprog+0x1a1c]": the
 * function's demangled name, +offset only where there is no source line, inlined calls
 * marked, how the frame was found when not by CFI. */
/* Pieces of a frame line without printf: a backtrace prints thousands of them, and
 * printf's format parsing was a tenth of `coreq bt`. */
static void put_hex(uint64_t v, int width)
{
	char b[17];
	int n = 0;
	do
		b[n++] = "0123456789abcdef"[v & 15];
	while (v >>= 4);
	for (int i = n; i < width && i < 16; i++)
		putchar_unlocked('0');
	while (n)
		putchar_unlocked(b[--n]);
}

void cq_put_dec(long long v, int width)
{
	char b[24];
	int n = 0;
	unsigned long long u = v < 0 ? 0 - (unsigned long long)v : (unsigned long long)v;
	do
		b[n++] = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		b[n++] = '-';
	for (int i = n; i--;)
		putchar_unlocked(b[i]);
	for (; n < width; n++)
		putchar_unlocked(' ');
}

/* One frame's line, from the JSON document or from the walk's structures alike. Offsets
 * are "0x..." strings, as in the document. */
struct frame_line {
	long long index;
	uint64_t pc;
	const char *fn, *off, *file, *mod, *moff, *how;
	long long line;
	bool inlined;
};

static void print_frame_line(const struct frame_line *l, int width)
{
	fputs_unlocked("  #", stdout);
	cq_put_dec(l->index, 3);
	fputs_unlocked(" 0x", stdout);
	put_hex(l->pc, width);
	fputs_unlocked(" in ", stdout);
	fputs_unlocked(l->fn ? cq_esc(l->fn) : "??", stdout);
	if (l->file) {
		const char *base = strrchr(l->file, '/');
		fputs_unlocked(" (", stdout);
		fputs_unlocked(cq_esc(base ? base + 1 : l->file), stdout);
		putchar_unlocked(':');
		cq_put_dec(l->line, 0);
		putchar_unlocked(')');
	} else if (l->fn && l->off && strcmp(l->off, "0x0")) {
		putchar_unlocked('+');
		fputs_unlocked(l->off, stdout);
	}
	if (l->inlined)
		fputs_unlocked(" [inlined]", stdout);
	if (l->mod) {
		fputs_unlocked(" [", stdout);
		fputs_unlocked(cq_esc(l->mod), stdout);
		putchar_unlocked('+');
		fputs_unlocked(l->moff ? l->moff : "?", stdout);
		putchar_unlocked(']');
	}
	if (l->how && strcmp(l->how, "initial") && strcmp(l->how, "cfi") && strcmp(l->how, "inline")) {
		fputs_unlocked(" <", stdout);
		fputs_unlocked(l->how, stdout);
		putchar_unlocked('>');
	}
	putchar_unlocked('\n');
}

void cq_print_frames(json_t *frames, int width)
{
	json_t *f;
	size_t i;
	json_array_foreach(frames, i, f) {
		const char *dm = json_string_value(json_object_get(f, "demangled"));
		struct frame_line l = {
			.index = (long long)json_integer_value(json_object_get(f, "index")),
			.pc = strtoull(json_string_value(json_object_get(f, "pc")) ?: "0", NULL, 16),
			.fn = dm ? dm : json_string_value(json_object_get(f, "function")),
			.off = json_string_value(json_object_get(f, "function_offset")),
			.file = json_string_value(json_object_get(f, "file")),
			.line = (long long)json_integer_value(json_object_get(f, "line")),
			.inlined = json_is_true(json_object_get(f, "inlined")),
			.mod = json_string_value(json_object_get(f, "module")),
			.moff = json_string_value(json_object_get(f, "module_offset")),
			.how = json_string_value(json_object_get(f, "found_by"))};
		print_frame_line(&l, width);
	}
}

void cq_print_stack_frames(const struct cq_frame *frames, unsigned n, int width)
{
	for (unsigned i = 0; i < n; i++) {
		const struct cq_frame *f = &frames[i];
		const struct cq_frame_info *in = f->info;
		char off[19], moff[19];
		struct frame_line l = {
			.index = f->index, .pc = f->pc, .fn = in->demangled ? in->demangled : in->function,
			.off = in->has_function_offset ? cq_hex_str(off, in->function_offset) : NULL,
			.file = in->file, .line = in->line, .inlined = f->inlined, .mod = in->module,
			.moff = in->has_module_offset ? cq_hex_str(moff, in->module_offset) : NULL,
			.how = cq_found_by_name(f->found_by)};
		print_frame_line(&l, width);
	}
}
