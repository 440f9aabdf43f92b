/* SPDX-License-Identifier: MIT */
/* Internal to ompd/: choosing the plugin (discover.c). */
#ifndef COREQ_OMPD_DISCOVER_H
#define COREQ_OMPD_DISCOVER_H

#include "plugin/plugin_load.h"
#include "host.h"

struct cq_ompd_choice {
	char *path;         /**< plugin to load */
	const char *source; /**< "--ompd-plugin" or "ompd_dll_locations" */
	char *runtime;      /**< image that holds ompd_dll_locations (NULL if none found) */
	char *refused;      /**< an untrusted candidate passed over (said, not silent), or NULL */
	struct cq_plugin_load load; /**< the checked files to load (plugin/plugin_load.h) */
};

struct cq_error *cq__ompd_find_plugin(struct cq_core *core, const struct cq_ompd_options *o,
				      struct cq_ompd_choice *ret);

#endif
