/* SPDX-License-Identifier: MIT */
/**
 * @file rank.h
 * A process's MPI rank, from the environment its launcher gave it (the core's initial
 * stack: corelib/environ.h), as every front end reads it.
 */
#ifndef COREQ_ANALYSIS_RANK_H
#define COREQ_ANALYSIS_RANK_H

#include <jansson.h>
#include <stdbool.h>

#include "corelib/core.h"

/** The MPI rank of a process with an MPI library loaded (an image libmpi.*, libmpich.*,
 * libmpi_*), from the launcher's environment: {rank, size, source}; NULL for any other
 * process or without the variables. */
json_t *cq_mpi_rank_json(struct cq_core *core);

/** A launcher's number from the core's environment: the process's rank (OMPI_COMM_WORLD_RANK,
 * PMIX_RANK, PMI_RANK, SLURM_PROCID, the first there) or, with @p size, the job's size
 * (OMPI_COMM_WORLD_SIZE, PMI_SIZE, SLURM_NTASKS); *@p which the variable. -1 when none is
 * set to a number below CQ_TASK_MAX. */
long long cq_launcher_env(struct cq_core *core, bool size, const char **which);

#endif
