/* SPDX-License-Identifier: MIT */
/**
 * @file events.h
 * The flight recorder read back from a core: the per-thread rings of runtime events (OMPT,
 * GASP) that coreq's recorder library (recorder/) keeps in the process, in the
 * self-describing format of recorder/coreq_rec_format.h. Any architecture, any host: the
 * byte order, word size, record layout and event names come from the rings' header in the
 * core, not from the host.
 *
 * A record is shown only if its commit marker (seq) says it was written completely; torn
 * records (the process died while writing one) and foreign slots are counted, never
 * decoded. Everything is bounded: ring sizes, record sizes and counts are checked against
 * limits before anything is read.
 */
#ifndef COREQ_EVENTS_H
#define COREQ_EVENTS_H

#include <jansson.h>

#include "corelib/core.h"

/** Events shown per thread unless asked otherwise. */
#define CQ_EVENTS_DEFAULT_LAST 16

/**
 * The recorder's rings in @p core as a "coreq-events/1" document (doc/json-schema.md): the
 * header, then per ring its thread and the last @p last events in order (0: all), with
 * code addresses symbolized. CQ_ERR_NOT_FOUND if the core has no recorder; a damaged
 * header is CQ_ERR_MALFORMED naming the address; a damaged ring is a problem in the
 * document, the other rings are still read.
 */
struct cq_error *cq_events_read(struct cq_core *core, unsigned last, json_t **ret);

#endif
