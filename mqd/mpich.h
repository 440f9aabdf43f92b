/* SPDX-License-Identifier: MIT */
/**
 * @file mpich.h
 * What MPICH's message-queue DLL (src/mpi/debugger/dll_mpich.c, 4.0.2) leaves out and coreq
 * reads from the core itself, through the types of MPICH's libmpi DWARF (a library built
 * with --enable-debuginfo --enable-g=dbg has them; FACTS.md): a communicator's context id,
 * which every member shares (the DLL names a communicator by its MPIR_Comm address, which
 * differs between ranks), and the MPIR_Comm an MPI_Comm handle names (a call's argument).
 */
#ifndef COREQ_MQD_MPICH_H
#define COREQ_MQD_MPICH_H

#include <stdbool.h>
#include <stdint.h>

#include "corelib/core.h"

/** Whether the core's MPI library is MPICH's (its libmpi defines MPIR_Comm_builtin). Its
 * constants differ from Open MPI's: MPI_ANY_SOURCE is -2 and MPI_PROC_NULL -1 (Open MPI:
 * -1 and -2); MPI_ANY_TAG is -1 in both. */
bool cq_mpich_library(struct cq_core *core);

/** The context id of the MPIR_Comm at @p addr into *@p ret: false when the core's images
 * describe no MPIR_Comm (not MPICH, or no DWARF) or the memory is not there. */
bool cq_mpich_comm_context(struct cq_core *core, uint64_t addr, uint64_t *ret);

/** The world ranks of the @p size members of the MPIR_Comm at @p addr into @p ranks, by
 * local rank, from ch3's virtual-connection table (comm->dev.vcrt->vcr_table[i]->pg_rank,
 * the rank in the process group MPI_COMM_WORLD spans; a communicator of another's first
 * members in order shares that one's longer table): false when the core's DWARF has no
 * such types (another device: ch4) or the table is shorter than @p size. */
bool cq_mpich_comm_group(struct cq_core *core, uint64_t addr, int64_t size, int *ranks);

/** What a pending MPICH (ch3) request is: from MPIR_Request's kind, cc and
 * dev.match.parts. */
struct cq_mpich_request {
	bool send;          /**< MPIR_REQUEST_KIND__SEND (1), else __RECV (2) */
	bool pending;       /**< cc != 0 */
	int peer;           /**< the local rank (MPI_ANY_SOURCE: -2) */
	int tag;            /**< MPI_ANY_TAG: -1 */
	unsigned context;   /**< the communicator's context id (a receive's: its recv context) */
};

/** The MPIR_Request at @p addr: false when it is neither a send nor a receive (a
 * generalized or persistent request), or the types or memory are missing. */
bool cq_mpich_request(struct cq_core *core, uint64_t addr, struct cq_mpich_request *ret);

/** The address of the MPIR_Request that request handle @p handle (an MPI_Request, an
 * int) names: a direct one in MPIR_Request_direct[], an indirect one in the blocks of its
 * pool (MPIR_Request_mem[pool]: the requests beyond the first 8 a process has in flight);
 * false when the object there does not carry @p handle (every MPICH object begins with
 * its own handle) or the types or memory are missing. */
bool cq_mpich_request_handle(struct cq_core *core, uint64_t handle, uint64_t *ret);

/** The address of the MPIR_Comm that MPICH handle @p handle (an MPI_Comm, an int) names:
 * a builtin one (MPI_COMM_WORLD 0x44000000, MPI_COMM_SELF 0x44000001, MPICH's internal
 * copy of the world 0x44000002) in MPIR_Comm_builtin[], a direct one in MPIR_Comm_direct[],
 * an indirect one in MPIR_Comm_mem's blocks; false when the object there does not carry
 * @p handle, or the core does not have those arrays. *@p name: the predefined name or
 * NULL. */
bool cq_mpich_comm_handle(struct cq_core *core, uint64_t handle, uint64_t *ret, const char **name);

#endif
