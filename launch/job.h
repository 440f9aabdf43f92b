/* SPDX-License-Identifier: MIT */
/**
 * @file job.h
 * The ranks of an MPI job on this node. Two ways, the launcher's table first:
 *
 * * A launcher's MPIR_proctable (mpir.h: srun, Open MPI 4's mpirun, MPICH's hydra), read
 *   without stopping it when the process named is one: rank r is entry r; the entries on
 *   this host are the ranks here, the others are named as elsewhere.
 * * Otherwise the processes' environments (/proc/PID/environ: readable where they may be
 *   traced), as `coreq stacks` numbers ranks. A rank variable has a strength:
 *   OMPI_COMM_WORLD_RANK, then PMIX_RANK, PMI_RANK, and SLURM_PROCID last (the task of a
 *   Slurm step: mpirun and the batch shell of an sbatch job have it, and orted has its own
 *   step's). A process's rank is its strongest variable's. The job of a process is its
 *   launcher's (the nearest ancestor without a rank variable: slurmstepd, mpirun, or the
 *   process itself when it has none) descendants with a rank variable that are ranks:
 *   where any of them maps an MPI library (libmpi*, libmpich*), those that do (orted,
 *   mpirun, a wrapper shell under srun are not ranks, whatever their variables say); where
 *   none does (a statically linked MPI, a test's stand-ins), those whose strongest
 *   variable is the job's strongest. Each is the topmost such on its branch (a rank's own
 *   children inherit its variables and its libraries).
 */
#ifndef COREQ_LAUNCH_JOB_H
#define COREQ_LAUNCH_JOB_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

struct cq_job_rank {
	int pid;
	int rank;
};

/** A rank of a launcher's table on another host. */
struct cq_job_remote {
	int rank;
	int pid;    /**< in its host's pid namespace */
	char *host; /**< as the table names it */
};

struct cq_job {
	int launcher;                   /**< the launcher's pid (its table's, or the tree's top) */
	struct cq_job_rank *ranks;      /**< the ranks on this host, by rank */
	size_t n;
	/** From the launcher's MPIR_proctable (the file that holds it), else NULL. */
	char *table_image;
	struct cq_job_remote *elsewhere; /**< the table's ranks on other hosts, by rank */
	size_t nelsewhere;
};

/** The rank of process @p pid from its environment (its strongest rank variable), -1 when
 * it has none (or it cannot be read). */
int cq_job_rank_of(int pid);

/** Whether process @p pid maps an MPI library (libmpi*, libmpich*). */
bool cq_job_maps_mpi(int pid);

/** The job of process @p pid (a rank or its launcher) into *@p ret (cq_job_free). An error
 * names what was looked for when there is no rank here, or two processes claim one rank. */
struct cq_error *cq_job_find(int pid, struct cq_job *ret);

/**
 * The ranks of Slurm job @p job_id on this node (of its step @p step_id; -1: of every
 * step: mpirun inside sbatch has its ranks in the batch step on its own node and in
 * orted's step on the others) into *@p ret: the processes whose environment names the job
 * (SLURM_JOB_ID, SLURM_STEP_ID; never those of the step coreq itself runs in) that map an
 * MPI library (every task of a step has SLURM_PROCID, and PMIX_RANK under --mpi=pmix: a
 * statically linked MPI program is not found so), each the topmost such on its branch, its
 * rank its strongest variable's. None is no error (ret->n 0): a node of the step may hold
 * no rank. launcher is 0.
 */
struct cq_error *cq_job_find_slurm(long long job_id, long long step_id, struct cq_job *ret);

void cq_job_free(struct cq_job *job);

#endif
