/* SPDX-License-Identifier: MIT */
/**
 * @file waitfor.h
 * Job view of MPI message queues: the per-rank reports of all ranks of a job
 * ("coreq-mqd/1", one per rank core, made here or by `coreq mqd --json` elsewhere) merged
 * into one picture: operations matched across ranks, the wait-for graph, deadlock cycles,
 * wildcard receives nobody can satisfy, unmatched sends and receives, and ranks with no
 * MPI state. Pure analysis of the documents: no core is opened here, so the per-rank phase
 * can run anywhere (srun, mpirun, xargs -P) next to the cores.
 *
 * Communicators are the same across ranks when their unique id (Open MPI: the context id)
 * and group (as world ranks) are equal. A pending send waits for its receiver to post a
 * matching receive; a pending receive waits for its sender (a wildcard receive for any
 * member of the group). Edges of matched pairs are kept but do not count as waiting.
 */
#ifndef COREQ_JOB_WAITFOR_H
#define COREQ_JOB_WAITFOR_H

#include <jansson.h>

/**
 * Analyze the per-rank documents @p ranks (a JSON array of "coreq-mqd/1"; a rank whose
 * report failed may be {"core": path, "error": message}). Returns a "coreq-mqd-job/1"
 * document (new reference) holding the ranks' documents, the graph and the findings.
 */
json_t *cq_waitfor_job(json_t *ranks);

/** The wait-for graph of a job document as Graphviz DOT text; caller frees. */
char *cq_waitfor_dot(json_t *job);

#endif
