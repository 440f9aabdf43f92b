/* SPDX-License-Identifier: MIT */
/**
 * @file nemesis.h
 * Messages in flight inside MPICH's ch3:nemesis shared memory: sent by another rank of
 * the node and sitting in this rank's fastboxes or its shared receive queue, where the
 * MPI library has not looked yet. Neither MPICH's message-queue DLL nor Open MPI's sees
 * them: they are in no posted, unexpected or send queue. A rank stopped (or slow) inside
 * MPI_Recv with the message it waits for already in its shared memory is not waiting on
 * its sender; without these the job view sees a deadlock that is not one.
 *
 * Read through the types of MPICH's libmpi DWARF (mpich.h: a library built with
 * --enable-debuginfo --enable-g=dbg) from the shared segment, which the kernel dumps:
 * nemesis maps an unlinked /dev/shm file, and an unlinked shmem mapping is dumped as
 * anonymous shared memory (coredump_filter bit 1, on by default). Layout facts (MPICH
 * 4.0.2, src/mpid/ch3/channels/nemesis/include/): the receive queue is a list of cells
 * linked by offsets from MPID_nem_asymm_base_addr, from my_head (the receiver's
 * private part) else head; fastbox in[i] holds one cell, full when its flag is 1, one
 * cache line (the queue's my_head offset) after the flag; each cell's payload starts with
 * a ch3 packet (MPIDI_CH3_Pkt_t) whose data follows it; cells from one sender are taken in
 * the order of their sequence numbers, and MPID_nem_recv_seqno[sender] is the next one
 * the receiver takes (a full fastbox with an older number was taken already).
 *
 * Messages reached over a network module (another node: tcp, ofi) are not seen.
 */
#ifndef COREQ_MQD_NEMESIS_H
#define COREQ_MQD_NEMESIS_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "corelib/core.h"

/** One message sent to this rank and not yet taken by its MPI library. */
struct cq_nemesis_message {
	int source;          /**< the sender's rank in its process group (MPI_COMM_WORLD's) */
	int sender;          /**< the sender's rank in the communicator (the packet's match rank) */
	int tag;
	unsigned context;    /**< the packet's context id: a communicator's, + 1 for its collectives */
	int64_t length;      /**< bytes sent (the packet's data size) */
	const char *kind;    /**< "eager", "synchronous eager", "ready", "rendezvous request" */
	const char *where;   /**< "fastbox", "receive queue" */
	uint64_t cell;       /**< the cell's address */
};

/** What cq_nemesis_in_flight() read. */
struct cq_nemesis_report {
	struct cq_nemesis_message *messages; /**< malloc'd, in the order the receiver takes them */
	size_t n;
	unsigned control;  /**< cells of other packets (acknowledgments, clear-to-send, ...) */
	unsigned unread;   /**< cells not decoded: continuing a message the receiver was already
			    *   taking, or after a packet whose data length is not known (RMA) */
};

/**
 * The messages in flight to the core's process into *@p ret (free with
 * cq_nemesis_report_free). CQ_ERR_NOT_FOUND: the process does not run nemesis (no
 * MPID_nem_mem_region), or its libmpi has no DWARF for the types: nothing can be said.
 * Another error (the shared segment not in the core, a cell out of reach, a queue that
 * does not end): *@p ret holds what was read before it.
 */
struct cq_error *cq_nemesis_in_flight(struct cq_core *core, struct cq_nemesis_report *ret);

void cq_nemesis_report_free(struct cq_nemesis_report *r);

#endif
