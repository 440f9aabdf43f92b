/* SPDX-License-Identifier: MIT */
/* For test plugins of the OMPD TR 2.001 ABI: omp-tools.h (for the opaque types both ABIs
 * share), without its OpenMP 5.1 prototypes of entry points the TR defines differently;
 * those are declared here as ompd_*_51 instead. Include before anything else that
 * includes omp-tools.h. */
#ifndef COREQ_TESTS_TR_PROTOTYPES_H
#define COREQ_TESTS_TR_PROTOTYPES_H

#define ompd_initialize ompd_initialize_51
#define ompd_get_thread_handle ompd_get_thread_handle_51
#define ompd_get_thread_in_parallel ompd_get_thread_in_parallel_51
#define ompd_get_state ompd_get_state_51
#define ompd_get_task_frame ompd_get_task_frame_51
#include <omp-tools.h>
#undef ompd_initialize
#undef ompd_get_thread_handle
#undef ompd_get_thread_in_parallel
#undef ompd_get_state
#undef ompd_get_task_frame

#include "ompd/tr_abi.h"

#endif
