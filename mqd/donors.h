/* SPDX-License-Identifier: MIT */
/**
 * @file donors.h
 * Installed Open MPI type donors, picked for a core without any flag. Debian's libmpi has
 * no DWARF, yet the message-queue DLLs ask for the layout of about twenty structs; a type
 * donor (a -g shared object built from the same version's headers for the same
 * architecture) answers them. `make install` puts the donors the project builds under
 * PREFIX/share/coreq/donors/<NAME>/ and `coreq donor` writes new ones under
 * $XDG_DATA_HOME/coreq/donors/<NAME>/ (default ~/.local/share): each directory holds
 * ompi-types.so[.gz] (the DLL's types), optionally ompi-ob1-types.so[.gz] (the ob1 PML's,
 * for coreq's own DLL), and types.json, the manifest:
 *
 *     {"arch": "x86_64", "ompi_version": "4.1.4",
 *      "libmpi": [{"soname": "libmpi.so.40", "build_id": "2a2f…", "package": "…"}], …}
 *
 * A donor fits a core when the architecture is the core's and, first, the build-id of the
 * core's libmpi is one the donor was built against; failing that, when the Open MPI
 * version the core's libopen-pal names (opal_version_string) is the donor's. Layouts
 * depend on the version and the architecture only (the headers are configured per
 * architecture), so a version match is a sound second choice; it is said which rule
 * matched. The manifests are read as untrusted input (bounded, each field checked).
 */
#ifndef COREQ_MQD_DONORS_H
#define COREQ_MQD_DONORS_H

#include <jansson.h>

#include "corelib/core.h"

/** The donor chosen for a core, or why none was. */
struct cq_mqd_donor {
	char *dir;       /**< the donor's directory, or NULL when none fits */
	char *files[2];  /**< its DWARF files (ompi-types, then ompi-ob1-types if present) */
	char *version;   /**< its manifest's Open MPI version */
	char *matched;   /**< which rule matched, e.g. "build-id 2a2f… of libmpi.so.40" */
	char *why_none;  /**< when dir is NULL: what was searched and what the core has */
};

/** The type names Open MPI 4.x's DLL asks for (its mqs_find_type calls; a donor must define
 * all of them), NULL-terminated. */
extern const char *const cq_ompi_dll_types[];

/** The directories searched, most specific first (a colon-separated list; caller frees). */
char *cq_mqd_donor_dirs(void);

/**
 * Choose an installed donor for @p core's libmpi (see above) and add its files as the
 * core's last type sources (cq_core_add_type_donor()). Never fails for want of a donor:
 * ret->why_none says why there is none. Release with cq_mqd_donor_deinit().
 */
struct cq_error *cq_mqd_pick_donor(struct cq_core *core, struct cq_mqd_donor *ret);

/** What to put in a report: {"dir", "files", "ompi_version", "matched_by"} or
 * {"none": why}. */
json_t *cq_mqd_donor_json(const struct cq_mqd_donor *d);

void cq_mqd_donor_deinit(struct cq_mqd_donor *d);

#endif
