/* SPDX-License-Identifier: MIT */
/**
 * @file btdoc.h
 * A process's stacks as the coreq-bt/2 document (doc/json-schema.md) every front end makes
 * of it: `coreq bt --json`, the stack tree's inputs, a snapshot's samples, a per-node coreq.
 */
#ifndef COREQ_ANALYSIS_BTDOC_H
#define COREQ_ANALYSIS_BTDOC_H

#include <jansson.h>
#include <stdbool.h>

#include "base/error.h"
#include "corelib/core.h"

/** Problems of the core as a JSON array ({item, message}). */
json_t *cq_json_problems(const struct cq_core *core);

/** Add to bt document @p bt the process's MPI rank, "task", and the variable it came from,
 * "task_source", when its initial environment (corelib/environ.h) has a launcher's rank
 * variable: OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK or SLURM_PROCID (the first there). */
void cq_bt_task(struct cq_core *core, json_t *bt);

/** Add "process" to the bt document @p bt: {pid, cpu_ms (the CPU time the process had
 * used), taken_ms (when a coreq snapshot stopped it, ms since the epoch)}, each null when
 * the core does not say; what tells samples of one process apart (job/progress.h). */
void cq_bt_process(const struct cq_core *core, json_t *bt);

struct cq_stacks;
/** To a walk's problems (@p s->problems) those of a bt document: the core's own (missing
 * files), and each stack a missing piece cut short (its last frame's module is the item). */
void cq_bt_add_problems(struct cq_core *core, struct cq_stacks *s);

struct cq_stack_options;
/** The coreq-bt/2 document of @p core as `coreq bt --json` gives it: the walk's problems,
 * the core's own, and each stack a missing piece cut short; with @p with_task its MPI
 * rank (cq_bt_task). */
struct cq_error *cq_bt_document(struct cq_core *core, const struct cq_stack_options *opt, bool with_task,
				json_t **ret);

#endif
