/* SPDX-License-Identifier: MIT */
/* Internal to mqd/: choosing the DLL (discover.c). */
#ifndef COREQ_MQD_DISCOVER_H
#define COREQ_MQD_DISCOVER_H

#include "plugin/plugin_load.h"
#include "host.h"

struct cq_mqd_choice {
	char *path;         /**< DLL to load */
	const char *source; /**< "--mqd-plugin", "MPIR_dll_name" or "coreq" (its own DLL) */
	char *instead_of;   /**< coreq's own DLL: the DLL the core names, passed over */
	char *named;        /**< MPIR_dll_name as the core has it, or NULL */
	char *mpi_image;    /**< image that holds MPIR_dll_name, or NULL */
	char *refused;      /**< an untrusted candidate passed over (said, not silent), or NULL */
	struct cq_plugin_load load; /**< the checked files to load (plugin/plugin_load.h) */
};

struct cq_error *cq__mqd_find_dll(struct cq_core *core, const struct cq_mqd_options *o,
				  struct cq_mqd_choice *ret);

#endif
