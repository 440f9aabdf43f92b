/* SPDX-License-Identifier: MIT */
/**
 * @file commarg.h
 * Which communicator a collective was called on, from the value of its communicator
 * argument (read from the calling frame's DWARF, or from the MPI library's own: stack.h,
 * struct cq_stack_arg). In Open
 * MPI an MPI_Comm is a pointer to an ompi_communicator_t: the predefined ones are the
 * library's data symbols (ompi_mpi_comm_world, ompi_mpi_comm_self), any other carries its
 * context id (c_contextid), which is the id the message-queue DLL gives the communicator.
 */
#ifndef COREQ_MQD_COMMARG_H
#define COREQ_MQD_COMMARG_H

#include <jansson.h>
#include <stdint.h>

#include "corelib/core.h"

/**
 * The communicator at @p value as the job view reads it: {address, name} for a predefined
 * one ("MPI_COMM_WORLD", "MPI_COMM_SELF"), {address, id} when a type donor gives
 * ompi_communicator_t, else {address, id_unknown: why}. Every answer has "from": @p from
 * ("argument": the caller's call site; "parameter": the library's own DWARF). With
 * @p no_types (host.h: cq_mqd_types_available() said why none can be had) no type is
 * searched for: the id is unknown for that reason. NULL when out of memory.
 */
json_t *cq_mqd_call_communicator(struct cq_core *core, uint64_t value, const char *from, const char *no_types);

#endif
