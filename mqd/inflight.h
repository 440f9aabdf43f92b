/* SPDX-License-Identifier: MIT */
/**
 * @file inflight.h
 * Messages in flight in a rank's report (coreq-mqd/1): what no DLL lists, read from the
 * core itself (nemesis.h: MPICH's shared memory), added where the job view takes them.
 */
#ifndef COREQ_MQD_INFLIGHT_H
#define COREQ_MQD_INFLIGHT_H

#include <jansson.h>

#include "corelib/core.h"

/**
 * Add to rank report @p doc the messages in flight to the core's process: an "in_flight"
 * object {messages: [{source, peer, tag, length, kind, where, context, communicator,
 * internal}], control_packets, unread_cells, from, error?}, and each message whose
 * communicator the report lists (its context id is the communicator's id: MPICH's) to
 * that communicator's unexpected queue as an operation with "in_flight": true (a
 * collective's own traffic, the context id + 1, as "internal"). A message on
 * MPI_COMM_WORLD is named so ("communicator": "MPI_COMM_WORLD") for a report without
 * communicators (the job view's world from the environment takes it from there).
 * Nothing is added for a process that is not MPICH's nemesis; a read that fails is the
 * object's "error" and a problem of the report.
 */
void cq_inflight_add(struct cq_core *core, json_t *doc);

#endif
