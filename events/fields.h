/* SPDX-License-Identifier: MIT */
/* Named fields of a recorder event (events.c's helper): recorder/kind_fields.h applied. */
#ifndef COREQ_EVENTS_FIELDS_H
#define COREQ_EVENTS_FIELDS_H

#include <jansson.h>
#include <stdint.h>

#include "corelib/core.h"
#include "recorder/coreq_rec_format.h"

/**
 * The named fields of one record as a JSON object (name -> value, in the table's order),
 * or NULL when @p kind has no table entry or the recording names it other than the
 * recorder does (@p kinds: the header's @p nkinds kind names; a kind from
 * CQ_REC_KIND_USER_FIRST on is a user event whatever its name). @p slot holds a, b, c, d,
 * codeptr. Strings a record points at are read from @p core (bounded) and escaped.
 */
json_t *cq__events_fields(struct cq_core *core, unsigned kind, const char (*kinds)[CQ_REC_NAME + 1],
			  unsigned nkinds, uint32_t flags, const uint64_t slot[5]);

#endif
