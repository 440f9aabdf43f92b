/* SPDX-License-Identifier: MIT */
/**
 * @file types.h
 * Named types of the target from DWARF (libdw), for plugins that ask for a type by name,
 * a field's offset and a type's size (MQD's find_type, field_offset, sizeof).
 *
 * Sources, searched in this order, first definition wins:
 *  1. the "type donors" of cq_core_options.type_donors: linked ELF files with DWARF built
 *     from the same headers for the target's architecture (a distribution's libmpi has no
 *     DWARF; its devel headers do have the types). A relocatable .o does not work: libdw
 *     does not relocate its DWARF. They come first because the user named them, and
 *     because they are small where an image's debug file (libc's) may take 100 ms to
 *     index;
 *  2. the type donors a bundle carries (bundle.h);
 *  3. every image in the dynamic linker's order (executable first): its separate debug
 *     file (build-id, debuglink) if found, else the image file itself.
 * Each source is indexed (names of its top-level type DIEs) the first time a lookup
 * reaches it, so files after the one that answers are never read.
 */
#ifndef COREQ_TYPES_H
#define COREQ_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#include "core.h"
#include "base/error.h"

/** A named type; owned by the core (valid until cq_core_close). */
struct cq_type;

/**
 * Find the type @p name (a typedef, struct, union, enum or base type name, as written in
 * C: "mca_pml_base_request_t", "struct foo" is looked up as "foo"). On failure the error
 * says which files were searched and which had no DWARF.
 */
struct cq_error *cq_core_find_type(struct cq_core *core, const char *name,
				   const struct cq_type **ret);

struct cq_image;

/** Whether a scoped lookup may search the DWARF of image @p img (its debug file or its own
 * file); @p arg is the caller's. */
typedef bool cq_type_scope(struct cq_core *core, const struct cq_image *img, void *arg);

/**
 * cq_core_find_type(), searching only the type donors and the images @p scope keeps (all
 * when @p scope is NULL), in the same order. For callers that know where a type can be
 * defined at all: a library's structs are in its own DWARF, never in the C library's
 * debug file, whose inflating and indexing (megabytes with libc6-dbg) is what a type
 * found nowhere costs. The answer is the one a search of those sources alone gives (a
 * type found before elsewhere is not returned); the sources left out count as "not
 * searched" in cq_core_type_sources().
 */
struct cq_error *cq_core_find_type_among(struct cq_core *core, const char *name, cq_type_scope *scope,
					 void *arg, const struct cq_type **ret);

/** Byte offset of member @p field in struct/union @p t (through typedefs and qualifiers;
 * members of anonymous structs and unions are found too); -1 if there is none. */
int64_t cq_type_field_offset(const struct cq_type *t, const char *field);

/** The value of enumerator @p name of enumeration @p t (through typedefs) into *@p ret:
 * for a library's constants whose values depend on how it was configured (MPICH's packet
 * types). False when @p t is no enumeration or has no such enumerator. */
bool cq_type_enumerator(const struct cq_type *t, const char *name, int64_t *ret);

/** Size of @p t in bytes; -1 if DWARF does not say. */
int64_t cq_type_size(const struct cq_type *t);

/** The name @p t was asked for. */
const char *cq_type_name(const struct cq_type *t);

/** The file whose DWARF defined @p t. */
const char *cq_type_file(const struct cq_type *t);

/**
 * Add the DWARF file @p path (a type donor: plain or compressed ELF) as the last place
 * types are looked for, after the donors the user gave, the bundle's and the images' own
 * DWARF: for donors coreq picks itself (an installed Open MPI donor, mqd/donors.h), which
 * must never shadow what the core or the user provides. @p shown: how reports name it
 * (NULL: the path). A path already listed is not added twice.
 */
struct cq_error *cq_core_add_type_donor(struct cq_core *core, const char *path, const char *shown);

/** One line naming the files searched for types and why others were not ("no DWARF"),
 * for reports of missing types; owned by the core. */
const char *cq_core_type_sources(struct cq_core *core);

#endif
