/* SPDX-License-Identifier: MIT */
/* Internal to mqd/: the callbacks coreq gives an MQD DLL (callbacks.c). */
#ifndef COREQ_MQD_CALLBACKS_H
#define COREQ_MQD_CALLBACKS_H

#include <stdbool.h>
#include <stdio.h>

#include "corelib/core.h"
#include "mqs_abi.h"

/** The mqs_image we give the DLL: the core's images, in linker order. */
struct cq_mqs_image_s {
	struct cq_core *core;
	cq_mqs_image_info *info;
};

/** The mqs_process: the core. */
struct cq_mqs_process_s {
	struct cq_core *core;
	cq_mqs_image *image;
	cq_mqs_process_info *info;
	int global_rank; /**< CQ_MQS_INVALID_PROCESS until known */
};

#define CQ_MQD_MAX_NAMES 16

/** What the DLL asked and did not get, and counters: reported with the results. */
struct cq_mqd_stats {
	unsigned long fetches, fetch_faults, lookups, types, allocs, refused_allocs;
	char missing_symbols[CQ_MQD_MAX_NAMES][96];
	unsigned nmissing_symbols;
	char missing_types[CQ_MQD_MAX_NAMES][96];
	unsigned nmissing_types;
	char missing_fields[CQ_MQD_MAX_NAMES][128]; /**< "type.field" */
	unsigned nmissing_fields;
	FILE *log; /**< dprints output */
};

struct cq_type;

/**
 * A type of the MPI library (the DLL's, or the ones coreq reads itself): found as
 * cq_core_find_type() finds it, but never in the DWARF of the C, C++ and Fortran runtimes
 * (glibc's libraries and dynamic linker, libgcc_s, libstdc++, libgfortran, ...). An MPI
 * library's structs are defined in its own DWARF or a type donor's (host.h); those
 * runtimes' debug files (libc6-dbg, which valgrind recommends) define none of them, yet a
 * type no donor has would make the search inflate and index them, megabytes per rank,
 * while a live rank is held (snapshot).
 */
struct cq_error *cq__mqd_find_type(struct cq_core *core, const char *name, const struct cq_type **ret);

/** The three callback tables for a DLL of address width @p width (4 or 8). */
struct cq_mqd_tables {
	const cq_mqs_basic_callbacks *basic;
	const void *image;   /**< cq_mqs_image_callbacks4 or 8 */
	const void *process; /**< cq_mqs_process_callbacks4 or 8 */
};

/** Set up the image and process objects of @p core and return the tables. */
struct cq_mqd_tables cq__mqd_callbacks(struct cq_core *core, unsigned width,
				       struct cq_mqd_stats *stats, cq_mqs_image **image,
				       cq_mqs_process **process);

#endif
