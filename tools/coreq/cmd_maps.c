/* SPDX-License-Identifier: MIT */
/* `coreq maps`: the core's segments and where their bytes come from. */
#include <elf.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/text.h"
#include "cli.h"
#include "corelib/source.h"

/* Linux's brk starts a random distance above the executable's end (its .bss): up to
 * 1 GiB for 64-bit processes since 6.9 (32 MiB before), 32 MiB for 32-bit ones. An
 * anonymous read-write segment there is taken as the heap. */
#define BRK_RANGE_64 (UINT64_C(1) << 30)
#define BRK_RANGE_32 (UINT64_C(32) << 20)

/* Whether segment @p s may be the heap: anonymous, read-write, within the brk range above
 * the executable's .bss (the anonymous segment that starts where its file ends). */
static bool heap_candidate(const struct cq_core *core, const struct cq_segment *s, bool file_backed)
{
	if (file_backed || (s->flags & (PF_R | PF_W | PF_X)) != (PF_R | PF_W))
		return false;
	uint64_t range = cq_target_ptr_size(core->target) == 8 ? BRK_RANGE_64 : BRK_RANGE_32;
	for (size_t i = 0; i < core->nimages; i++) {
		const struct cq_image *img = &core->images[i];
		if (!img->is_exe || !img->end)
			continue;
		uint64_t from = img->end;
		for (size_t k = 0; k < core->nsegments; k++)
			if (core->segments[k].vaddr == img->end)
				from = img->end + core->segments[k].memsz;
		if (s->vaddr >= from && s->vaddr - from < range)
			return true;
	}
	return false;
}

/* What /proc/PID/maps calls a segment no file backs: "[vdso]" (AT_SYSINFO_EHDR), "[stack]"
 * (the main thread's sp), "[stack:TID]" (another thread's), "[heap]" (@p heap: the lowest
 * heap candidate; a guess the JSON documents); NULL otherwise. */
static const char *label_of(const struct cq_core *core, const struct cq_segment *s, bool heap, char *buf, size_t len)
{
	uint64_t end = s->vaddr + s->memsz, vdso;
	if (cq_core_auxv(core, AT_SYSINFO_EHDR, &vdso) && vdso >= s->vaddr && vdso < end)
		return "[vdso]";
	for (size_t i = 0; i < core->nthreads; i++) {
		const struct cq_thread *th = &core->threads[i];
		if (th->sp < s->vaddr || th->sp >= end)
			continue;
		if (core->has_psinfo && th->tid == core->pid)
			return "[stack]";
		snprintf(buf, len, "[stack:%d]", th->tid);
		return buf;
	}
	return heap ? "[heap]" : NULL;
}

int cq_cmd_maps(struct cq_cli *cli)
{
	struct cq_core *core;
	int rc = cq_open_core(cli, true, &core);
	if (rc)
		return rc;
	struct cq_error *err = cq_core_load_images(core);
	if (err) {
		cq_core_problem(core, "images", "%s", err->message);
		cq_error_destroy(err);
	}
	json_t *doc = json_object(), *segs = json_array();
	json_object_set_new(doc, "schema", cq_json_str("coreq-maps/1"));
	json_object_set_new(doc, "core", cq_json_str(core->name));
	cq_json_add_apport(doc, core);
	bool heap_seen = false;
	for (size_t i = 0; i < core->nsegments; i++) {
		const struct cq_segment *s = &core->segments[i];
		char perm[4] = {s->flags & PF_R ? 'r' : '-', s->flags & PF_W ? 'w' : '-',
				s->flags & PF_X ? 'x' : '-', 0};
		json_t *o = json_object();
		json_object_set_new(o, "start", cq_json_addr(s->vaddr));
		json_object_set_new(o, "end", cq_json_addr(s->vaddr + s->memsz));
		json_object_set_new(o, "perm", cq_json_str(perm));
		json_object_set_new(o, "core_offset", cq_json_addr(s->offset));
		/* Bytes the core really has: a truncated core lacks the end of p_filesz. */
		uint64_t have = cq_segment_held(core, s);
		json_object_set_new(o, "core_bytes", json_integer((json_int_t)have));
		/* The rest of the segment: backed by a file, or unavailable. */
		const char *path = NULL;
		const char *source;
		if (have == s->memsz)
			source = "core";
		else {
			enum cq_mem_source ms = cq_core_mem_source(core, s->vaddr + have, &path);
			source = ms == CQ_MEM_FILE ? (have ? "core+file" : "file") :
				 (have ? "core+unavailable" : "unavailable");
		}
		json_object_set_new(o, "source", cq_json_str(source));
		json_object_set_new(o, "file", path ? cq_json_str(path) : json_null());
		const char *mapped = NULL;
		for (size_t k = 0; k < core->nfile_maps; k++)
			if (core->file_maps[k].start <= s->vaddr && s->vaddr < core->file_maps[k].end)
				mapped = core->file_maps[k].path;
		if (!mapped) {
			struct cq_image *img = cq_core_image_at(core, s->vaddr);
			mapped = img ? img->name : NULL;
		}
		json_object_set_new(o, "mapping", mapped ? cq_json_str(mapped) : json_null());
		char lb[32];
		bool heap = !heap_seen && heap_candidate(core, s, mapped != NULL);
		heap_seen |= heap;
		const char *label = label_of(core, s, heap, lb, sizeof(lb));
		json_object_set_new(o, "label", label ? json_string(label) : json_null());
		json_array_append_new(segs, o);
	}
	json_object_set_new(doc, "segments", segs);
	json_object_set_new(doc, "problems", cq_json_problems(core));
	rc = core->nproblems ? CQ_EXIT_PARTIAL : CQ_EXIT_OK;
	if (cli->json) {
		cq_emit_json(doc);
	} else {
		printf("%-18s %-18s %-4s %-12s %-17s %s\n", "START", "END", "PERM", "CORE-BYTES",
		       "SOURCE", "MAPPING");
		size_t i;
		json_t *o;
		json_array_foreach(segs, i, o) {
			json_t *m = json_object_get(o, "mapping");
			if (!json_is_string(m))
				m = json_object_get(o, "label");
			printf("%-18s %-18s %-4s %-12lld %-17s %s\n",
			       cq_esc(json_string_value(json_object_get(o, "start"))),
			       cq_esc(json_string_value(json_object_get(o, "end"))),
			       cq_esc(json_string_value(json_object_get(o, "perm"))),
			       (long long)json_integer_value(json_object_get(o, "core_bytes")),
			       cq_esc(json_string_value(json_object_get(o, "source"))),
			       json_is_string(m) ? cq_esc(json_string_value(m)) : "");
		}
		json_decref(doc);
		cq_text_problems(core);
	}
	cq_core_close(core);
	return rc;
}
