/* SPDX-License-Identifier: MIT */
/* `coreq bundle`: write a core plus what analyzing it needs into one file (bundle.h). */
#include <inttypes.h>
#include <stdio.h>

#include "base/text.h"
#include "cli.h"
#include "corelib/bundle.h"

int cq_cmd_bundle(struct cq_cli *cli)
{
	if (!cli->output) {
		fprintf(stderr, "coreq: usage: coreq bundle CORE [EXE] -o OUT[.gz] [--with-lines | --symbols-only]\n");
		return CQ_EXIT_USAGE;
	}
	struct cq_core *core;
	int rc = cq_open_core(cli, true, &core);
	if (rc)
		return rc;
	struct cq_bundle_stats st;
	struct cq_bundle_options bo = {.symbols_only = cli->symbols_only,
					.with_lines = cli->with_lines};
	struct cq_error *err = cq_core_write_bundle(core, cli->output, &bo, &st);
	if (err) {
		cq_core_close(core);
		return cq_fail(err);
	}
	json_t *doc = json_object();
	json_object_set_new(doc, "schema", cq_json_str("coreq-bundle/1"));
	json_object_set_new(doc, "core", cq_json_str(core->name));
	json_object_set_new(doc, "bundle", cq_json_str(cli->output));
	json_object_set_new(doc, "images", json_integer((json_int_t)st.images));
	json_object_set_new(doc, "symbols", json_integer((json_int_t)st.symbols));
	json_object_set_new(doc, "type_donors", json_integer((json_int_t)st.donors));
	json_object_set_new(doc, "added_bytes", json_integer((json_int_t)st.added_bytes));
	json_object_set_new(doc, "unwind_images", json_integer((json_int_t)st.unwind_images));
	json_object_set_new(doc, "unwind_bytes", json_integer((json_int_t)st.unwind_bytes));
	json_object_set_new(doc, "size", json_integer((json_int_t)st.size));
	json_object_set_new(doc, "problems", cq_json_problems(core));
	rc = core->nproblems ? CQ_EXIT_PARTIAL : CQ_EXIT_OK;
	if (cli->json) {
		cq_emit_json(doc);
	} else {
		printf("%s: %zu images, %zu symbols, %zu type donor(s), %" PRIu64 " bytes of file-backed data added, "
		       "%zu unwind ELF(s) of %" PRIu64 " bytes%s, %" PRIu64 " bytes\n",
		       cli->output, st.images, st.symbols, st.donors, st.added_bytes, st.unwind_images,
		       st.unwind_bytes, cli->with_lines ? " (with lines)" : "", st.size);
		json_decref(doc);
		cq_text_problems(core);
	}
	cq_core_close(core);
	return rc;
}
