/* SPDX-License-Identifier: MIT */
/**
 * @file mpicall.h
 * The MPI call each thread of a process is in, read from its stacks. A rank's pending
 * operations say what it posted, not what it waits on: a posted MPI_Irecv that nobody
 * waits on blocks nothing, and Open MPI 4.1's requests look the same whether a thread
 * waits on them or not. What a blocked thread waits on is the MPI function it is inside:
 * the outermost frame of its stack named for an MPI entry point (`MPI_Send`, the profiling
 * name `PMPI_Send`, Fortran's `mpi_send_`), which is the call the program made.
 *
 * Documents in, documents out: stacks come as a coreq-bt/2 document.
 */
#ifndef COREQ_JOB_MPICALL_H
#define COREQ_JOB_MPICALL_H

#include <jansson.h>
#include <stdbool.h>

/** What a blocking call waits on. */
enum cq_mpi_wait {
	CQ_MPI_WAITS_NOTHING,    /**< not a blocking call (MPI_Isend, MPI_Comm_rank, ...) */
	CQ_MPI_WAITS_SEND,       /**< its own pending send: MPI_Send, MPI_Ssend, MPI_Bsend, MPI_Rsend */
	CQ_MPI_WAITS_RECV,       /**< its own pending receive: MPI_Recv, MPI_Mrecv */
	CQ_MPI_WAITS_BOTH,       /**< a send and a receive: MPI_Sendrecv(_replace) */
	CQ_MPI_WAITS_MESSAGE,    /**< a message not yet posted for: MPI_Probe, MPI_Mprobe */
	CQ_MPI_WAITS_REQUESTS,   /**< requests it names: MPI_Wait*, MPI_Test* (in a loop) */
	CQ_MPI_WAITS_COLLECTIVE, /**< the other members of a communicator: MPI_Barrier, ... */
};

/** The MPI function @p function (a symbol from a stack) is, in its C name ("MPI_Send"),
 * or NULL when it is none. The profiling names (PMPI_Send) and the Fortran ones
 * (mpi_send_, pmpi_send__, MPI_SEND, and Open MPI's ompi_send_f under them) map to the
 * C name; only the MPI standard's functions count (Open MPI's internal ompi_ and mca_
 * functions do not). */
const char *cq_mpi_call_name(const char *function);

/** What the call @p name (a C name from cq_mpi_call_name) waits on. */
enum cq_mpi_wait cq_mpi_call_waits(const char *name);

/** Which argument (0: the first) of the collective @p name (a C name) is its
 * communicator, in the C binding: MPI_Barrier's first, MPI_Bcast's fifth, MPI_Reduce's
 * seventh; -1 for a call that has none or is not listed. */
int cq_mpi_call_comm_arg(const char *name);

/** The word for @p w in documents: "nothing", "send", "receive", "send+receive",
 * "message", "requests", "collective". */
const char *cq_mpi_wait_word(enum cq_mpi_wait w);

/**
 * The MPI calls of the threads of one process: for each thread of the coreq-bt/2
 * document @p bt whose stack holds an MPI frame, {tid, call, waits, frame, function}
 * (frame: the frame's index; function: its symbol as the stack names it). An empty array
 * when no thread is inside MPI; NULL when @p bt has no threads array.
 */
json_t *cq_mpi_calls(const json_t *bt);

#endif
