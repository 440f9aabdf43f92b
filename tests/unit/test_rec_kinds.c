/* SPDX-License-Identifier: MIT */
/* The recorder's kinds and the reader's table of their fields (recorder/kind_fields.h):
 * every kind the recorder names (CQ_REC_KIND_NAMES, the list its header is built from) has
 * fields, no table entry lacks a kind, the slots and bit ranges are possible, and the enum
 * values and flag bits are those of omp-tools.h and gasp.h. */
#include <stdlib.h>
#include <string.h>

#include <omp-tools.h>

#include "check.h"
#include "recorder/gasp.h"
#include "recorder/kind_fields.h"

/* Deprecated OpenMP 5.1 names (ompt_sync_region_barrier, ompt_state_wait_barrier, ...) are
 * still values a 5.0 runtime reports (LLVM 14 does): checked like the others. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#define CHECK_MSG(cond, ...)                            \
	do {                                            \
		if (cond) {                             \
			check_passed++;                 \
		} else {                                \
			check_failed++;                 \
			printf("not ok - %d: ", __LINE__); \
			printf(__VA_ARGS__);            \
			putchar('\n');                  \
		}                                       \
	} while (0)

static void names_end(const struct cq_rec_value_name *n, const char *what)
{
	size_t i = 0;
	while (i < 64 && n[i].name)
		i++;
	CHECK_MSG(i > 0 && i < 64, "%s: a non-empty list ended by a NULL name", what);
}

int main(void)
{
	/* every kind the recorder names: a table entry; every other number below the user kinds: none */
	unsigned named = 0;
#define KIND(k, n)                                                                                  \
	do {                                                                                        \
		named++;                                                                            \
		CHECK_MSG(cq_rec_kind_names[k] && !strcmp(cq_rec_kind_names[k], n), "%s named", n); \
		CHECK_MSG(cq_rec_kind_descs[k].f[0].name != NULL, "%s has fields", n);              \
		CHECK_MSG(cq_rec_kind_is_ompt(k) == !strncmp(n, "ompt_", 5), "%s: family", n);      \
	} while (0);
	CQ_REC_KIND_NAMES(KIND)
#undef KIND
	CHECK(named == (CQ_K_OMPT_CONTROL_TOOL + 1) + (CQ_K_GASP_USER_EVENT - CQ_K_GASP_INIT + 1));
	for (unsigned k = 0; k < CQ_REC_KIND_USER_FIRST; k++)
		CHECK_MSG((cq_rec_kind_names[k] != NULL) == (cq_rec_kind_descs[k].f[0].name != NULL),
			  "kind %u: fields exactly when the recorder names it", k);
	CHECK(cq_rec_kind_descs[CQ_REC_KIND_USER_FIRST].f[0].name != NULL);

	/* each field: a slot, a bit range inside it, a way to show it, names where needed,
	 * no name twice in a kind */
	size_t nf = sizeof(cq_rec_kind_descs[0].f) / sizeof(cq_rec_kind_descs[0].f[0]);
	for (unsigned k = 0; k <= CQ_REC_KIND_USER_FIRST; k++) {
		const struct cq_rec_kind_desc *d = &cq_rec_kind_descs[k];
		CHECK_MSG(d->f[nf - 1].name == NULL, "kind %u: its list ends", k);
		for (size_t i = 0; i < nf && d->f[i].name; i++) {
			const struct cq_rec_field_desc *f = &d->f[i];
			CHECK_MSG(f->slot < CQ_SLOTS && f->shift + (f->bits ? f->bits : 64 - f->shift) <= 64 &&
				  f->show >= CQ_SHOW_HEX && f->show <= CQ_SHOW_KIND,
				  "kind %u field %s: slot and bits", k, f->name);
			CHECK_MSG((f->show == CQ_SHOW_ENUM || f->show == CQ_SHOW_FLAGS) == (f->names != NULL),
				  "kind %u field %s: names exactly for enums and flags", k, f->name);
			CHECK_MSG(strcmp(f->name, "state") && strcmp(f->name, "endpoint") && strcmp(f->name, "line"),
				  "kind %u field %s: not a name flags give", k, f->name);
			for (size_t j = 0; j < i; j++)
				CHECK_MSG(strcmp(d->f[j].name, f->name), "kind %u: %s once", k, f->name);
		}
	}

	/* the values are the headers' */
#define SAME(prefix, name, value) CHECK_MSG(prefix##name == (value), #prefix #name " == " #value);
	CQ_REC_OMPT_THREAD(SAME)
	CQ_REC_OMPT_PARALLEL_FLAG(SAME)
	CQ_REC_OMPT_TASK_FLAG(SAME)
	CQ_REC_OMPT_TASK_STATUS(SAME)
	CQ_REC_OMPT_SYNC_REGION(SAME)
	CQ_REC_OMPT_MUTEX(SAME)
	CQ_REC_OMPT_WORK(SAME)
	CQ_REC_OMPT_DISPATCH(SAME)
	CQ_REC_OMPT_CANCEL_FLAG(SAME)
	CQ_REC_OMPT_STATE(SAME)
	CQ_REC_GASP_MODEL(SAME)
#undef SAME
	names_end(cq_rec_thread_names, "thread");
	names_end(cq_rec_parallel_flag_names, "parallel flags");
	names_end(cq_rec_task_flag_names, "task flags");
	names_end(cq_rec_task_status_names, "task status");
	names_end(cq_rec_sync_region_names, "sync region");
	names_end(cq_rec_mutex_names, "mutex");
	names_end(cq_rec_work_names, "work");
	names_end(cq_rec_dispatch_names, "dispatch");
	names_end(cq_rec_cancel_flag_names, "cancel flags");
	names_end(cq_rec_state_names, "state");
	names_end(cq_rec_sync_hint_names, "sync hint");
	names_end(cq_rec_control_tool_names, "control tool");
	names_end(cq_rec_gasp_model_names, "gasp model");
	/* the flags the recorder stores (kinds.h) leave room for the state and the line */
	CHECK((CQ_REC_F_BEGINEND | CQ_REC_F_STATE | 3u) < (1u << CQ_REC_LINE_SHIFT));
	return check_report("test_rec_kinds");
}
