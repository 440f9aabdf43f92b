/* SPDX-License-Identifier: MIT */
/* Named fields of a recorder event (events.c's helper): recorder/kind_fields.h applied. */
#ifndef COREQ_EVENTS_FIELDS_H
#define COREQ_EVENTS_FIELDS_H

#include <stdbool.h>
#include <stdint.h>

#include "events.h"
#include "lookup.h"
#include "recorder/coreq_rec_format.h"

/* Room for one field's text (a number, "0x...", flag names joined by '|'). */
#define CQ_FIELD_TEXT 520

/**
 * The named fields of one record into @p e (named, nfields, fields: name -> value, in the
 * table's order), or e->named false when @p kind has no table entry or the recording names
 * it other than the recorder does (@p kinds: the header's @p nkinds kind names; a kind
 * from CQ_REC_KIND_USER_FIRST on is a user event whatever its name). @p slot holds a, b,
 * c, d, codeptr. Strings a record points at and code symbols through @p lk (strings
 * bounded); numbers and names written into @p text. @p touch: only those lookups are
 * made, nothing is filled in (what the reader would read, cq_events_touch()).
 */
void cq__events_fields(struct cq_lookup *lk, unsigned kind, const char (*kinds)[CQ_REC_NAME + 1],
		       unsigned nkinds, uint32_t flags, const uint64_t slot[5], bool touch,
		       struct cq_event *e, char (*text)[CQ_FIELD_TEXT]);

#endif
