/* SPDX-License-Identifier: MIT */
/* `coreq maps`: the core's segments and where their bytes come from. */
#include <elf.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "corelib/text.h"
#include "cli.h"

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
	json_object_set_new(doc, "core", cq_json_str(core->file->path));
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
		uint64_t have = s->offset >= core->file_end ? 0 :
				s->filesz < core->file_end - s->offset ? s->filesz :
				core->file_end - s->offset;
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
