/* SPDX-License-Identifier: MIT */
/* A process's MPI rank from the launcher's environment (rank.h). */
#include "corelib/core.h"
#include "rank.h"

#include <stdlib.h>
#include <string.h>

#include "corelib/environ.h"
#include "corelib/image.h"
#include "job/ranges.h"

long long cq_launcher_env(struct cq_core *core, bool size, const char **which)
{
	/* the launchers' variables, the most specific first (Open MPI's, PMIx's, MPICH's
	 * Hydra, Slurm's) */
	static const char *const ranks[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"};
	static const char *const sizes[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"};
	const char *const *names = size ? sizes : ranks;
	size_t w, n = size ? sizeof(sizes) / sizeof(sizes[0]) : sizeof(ranks) / sizeof(ranks[0]);
	char *value = NULL, *end;
	cq_error_destroy(cq_core_getenv(core, names, n, &w, &value)); /* no environment: none */
	if (!value)
		return -1;
	unsigned long long v = strtoull(value, &end, 10);
	bool ok = value[0] >= '0' && value[0] <= '9' && !*end && v < CQ_TASK_MAX;
	free(value);
	*which = names[w];
	return ok ? (long long)v : -1;
}

json_t *cq_mpi_rank_json(struct cq_core *core)
{
	/* only a process with an MPI library loaded: the environment is read from the initial
	 * stack, which no other command reads (the backtrace benchmark counts such reads) */
	bool mpi = false;
	for (size_t i = 0; i < core->nimages && !mpi; i++) {
		const char *n = core->images[i].name, *b = n ? strrchr(n, '/') : NULL;
		b = b ? b + 1 : n;
		mpi = b && (!strncmp(b, "libmpi.", 7) || !strncmp(b, "libmpich.", 9) || !strncmp(b, "libmpi_", 7));
	}
	const char *rv = NULL, *sv = NULL;
	long long rank = mpi ? cq_launcher_env(core, false, &rv) : -1;
	if (rank < 0)
		return NULL;
	long long size = cq_launcher_env(core, true, &sv);
	json_t *o = json_pack("{s:I, s:s}", "rank", (json_int_t)rank, "source", rv);
	json_object_set_new(o, "size", size > rank ? json_integer((json_int_t)size) : json_null());
	return o;
}

