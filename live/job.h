/* SPDX-License-Identifier: MIT */
/**
 * @file job.h
 * The ranks of an MPI job on this node, found as `coreq stacks` numbers ranks: a process's
 * rank is the first of OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK, SLURM_PROCID in its
 * environment (/proc/PID/environ: readable where it may be traced). The job of a process
 * is its launcher's (the nearest ancestor without a rank: mpirun, orted, srun's step, or
 * the process itself when it has none) descendants that have a rank, each the topmost
 * on its branch (a rank's own children inherit its variables).
 */
#ifndef COREQ_LIVE_JOB_H
#define COREQ_LIVE_JOB_H

#include <stddef.h>

#include "base/error.h"

struct cq_job_rank {
	int pid;
	int rank;
};

/** The rank of process @p pid from its environment, -1 when it has none (or it cannot be
 * read). */
int cq_job_rank_of(int pid);

/** The ranks of the job of process @p pid (a rank or the launcher), by rank, into *@p ret
 * (caller frees) and *@p n; the launcher's pid into *@p launcher. An error names what was
 * looked for when there is none, or two processes claim one rank. */
struct cq_error *cq_job_ranks(int pid, struct cq_job_rank **ret, size_t *n, int *launcher);

#endif
