/* SPDX-License-Identifier: MIT */
/**
 * @file mpir.h
 * A launcher's table of its job's processes, as the MPIR process acquisition interface
 * (MPI Forum's "MPIR Process Acquisition Interface", 2018) has debuggers read it: the
 * launcher (srun, Open MPI 4's mpirun in libopen-rte, MPICH's hydra) holds
 * `MPIR_proctable`, a pointer to `MPIR_proctable_size` entries of
 * `struct { char *host_name; char *executable_name; int pid; }`, rank r at index r.
 *
 * Read from the launcher's memory (/proc/PID/mem) without stopping it: the launcher is not
 * a rank and its table does not change once the job runs. Reading needs what tracing it
 * needs (the same user, Yama's ptrace_scope); the launcher is never written to.
 */
#ifndef COREQ_LAUNCH_MPIR_H
#define COREQ_LAUNCH_MPIR_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

/** The most entries a table is read with: far past the largest job's ranks; a larger
 * size is a corrupt (or hostile) table. */
#define CQ_MPIR_MAX_PROCS (1u << 22)

struct cq_mpir_proc {
	char *host;    /**< host_name as the launcher wrote it (bytes kept; escape to print) */
	char *exe;     /**< executable_name */
	int pid;       /**< the rank's pid on its host (in that host's pid namespace) */
};

struct cq_mpir_table {
	int launcher;              /**< the launcher's pid */
	char *image;               /**< the file that holds MPIR_proctable (srun, libopen-rte.so.40) */
	int debug_state;           /**< MPIR_debug_state (1: MPIR_DEBUG_SPAWNED), -1 when absent */
	struct cq_mpir_proc *procs; /**< by rank */
	size_t n;
};

/**
 * The MPIR table of process @p pid into *@p ret (free with cq_mpir_free): NULL in *@p ret
 * and no error when @p pid has no MPIR_proctable (it is no launcher) or its table is empty
 * (not filled yet: a launcher fills it once every process is spawned). An error names the
 * address and file when the table cannot be read or is not one (a size past
 * CQ_MPIR_MAX_PROCS, an entry whose pid is not positive).
 */
struct cq_error *cq_mpir_read(int pid, struct cq_mpir_table **ret);

void cq_mpir_free(struct cq_mpir_table *t);

/** Whether @p host (an entry's host_name) names this machine: its node name as uname gives
 * it, or the same before the first '.', either way round; "localhost" too. */
bool cq_mpir_host_is_here(const char *host);

#endif
