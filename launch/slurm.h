/* SPDX-License-Identifier: MIT */
/**
 * @file slurm.h
 * A Slurm job as its own clients describe it: `scontrol show job -o J` (its state and
 * nodes), `scontrol show step -o J.S` (a step's nodes, tasks and srun), `scontrol show
 * hostnames LIST` (a node list spelled out), and the srun command that starts one coreq
 * per node inside the job's allocation (`srun --jobid=J --overlap --ntasks-per-node=1
 * --nodelist=...`: what STAT's LaunchMON and HPE's CTI do; --overlap since Slurm 20.11).
 * The commands are found on PATH and run bounded (run.h); nothing here is a shell's.
 */
#ifndef COREQ_LAUNCH_SLURM_H
#define COREQ_LAUNCH_SLURM_H

#include <stddef.h>

#include "base/error.h"

struct cq_slurm_job {
	long long job;
	long long step;      /**< -1: the job's every step */
	char *spec;          /**< "J" or "J.S" as given */
	char *state;         /**< the job's JobState (a step's State) */
	char *nodelist;      /**< as Slurm writes it: "n[1-4]" */
	char **nodes;        /**< spelled out, in Slurm's order */
	size_t nnodes;
	long long tasks;     /**< NumTasks (a step's Tasks), -1 when not said */
};

/** @p spec ("J" or "J.S", decimal) into *@p job and *@p step (-1 without one); false for
 * anything else. */
bool cq_slurm_parse_spec(const char *spec, long long *job, long long *step);

/**
 * The job (or step) @p spec as scontrol says, each command within @p timeout_ms, into
 * *@p ret (cq_slurm_job_free). CQ_ERR_JOB, in one line naming the job: none such (ended
 * long ago too: scontrol forgets a job MinJobAge after its end), not running (pending,
 * completed, cancelled: the state said), a step that does not exist; CQ_ERR_IO when
 * scontrol cannot be run or does not answer in time.
 */
struct cq_error *cq_slurm_job_find(const char *spec, unsigned timeout_ms, struct cq_slurm_job *ret);

void cq_slurm_job_free(struct cq_slurm_job *j);

/**
 * The srun command (a NULL-terminated argv, malloc'd with its strings; free with
 * cq_slurm_argv_free) that runs @p cmd (NULL-terminated) once on each of @p nnodes nodes
 * @p nodes of job @p job, inside its allocation, sharing its resources (--overlap), each
 * task's output lines labelled with its task number (--label), stdin to every task.
 */
char **cq_slurm_per_node_argv(long long job, char *const *nodes, size_t nnodes, char *const cmd[]);

void cq_slurm_argv_free(char **argv);

#endif
