/* SPDX-License-Identifier: MIT */
/**
 * @file mpiargs.h
 * What one rank's MPI calls are and what their parameters name, as every front end makes it
 * (`coreq mqd` of a core, a snapshot, a per-node coreq): the rank's stacks (btdoc.h), the MPI
 * call each thread is in (job/mpicall.h), the communicator, peer and tag each call was given
 * (read from the caller's DWARF or the ABI's argument registers: mqd/commarg.h), MPI_Waitall's
 * requests, and the sends the stacks show; and the reads a snapshot makes so that the job
 * view of it reads what it would read of the process.
 */
#ifndef COREQ_ANALYSIS_MPIARGS_H
#define COREQ_ANALYSIS_MPIARGS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "corelib/core.h"
#include "mqd/host.h"

/** How a rank is analyzed: the frames per thread (0: the default), the MQD DLL's options. */
struct cq_rank_analysis {
	unsigned max_frames;
	const struct cq_mqd_options *mqd;
};

/** The rank's stacks and the MPI call each thread is in, with what the calls' parameters
 * name (communicator, peer, tag, MPI_Waitall's requests), into its document @p doc; a
 * snapshot runs it so that the memory those reads take is in it. */
void cq_mqd_add_stacks(const struct cq_rank_analysis *o, struct cq_core *core, json_t *doc);

/** What a snapshot of MPI process @p core reads for the job view of it: the MQD DLL's reads
 * where the MPI library's types can be had (a type donor, or the library's DWARF:
 * mqd/host.h's cq_mqd_types_available), the messages in flight, the stacks and what the
 * MPI calls' parameters name. True when the DLL's report was made; else why in @p why (not
 * an MPI process, no types, the DLL refused ...). */
bool cq_mqd_snapshot_reads(const struct cq_rank_analysis *o, struct cq_core *core, char *why, size_t why_size);

#endif
