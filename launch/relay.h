/* SPDX-License-Identifier: MIT */
/**
 * @file relay.h
 * What a per-node coreq and the front end that started it through srun say to each other
 * (coreq snapshot --slurm): text lines, because srun carries each task's stdout as lines
 * labelled with its task number ("3: ...", --label) and its stdin to every task, and no
 * file system need be shared between the nodes and the front end. Every line of the
 * protocol begins "CQ1 " (others are the node's own output, relayed as it is):
 *
 *   node NAME N R:PID,...   the node's name and its N ranks (by rank)
 *   error MESSAGE           why the node has no result (one line, escaped)
 *   read K                  sample K: every rank here stopped and read; held until "go K"
 *   resumed K MS            sample K: resumed, MS the longest any rank here was stopped
 *   file K NAME SIZE ZSIZE  a file of sample K follows, SIZE bytes as ZSIZE bytes of zstd
 *   data BASE64             a piece of it (at most CQ_RELAY_LINE characters: srun cuts a
 *                           labelled line at 1024 bytes)
 *   eof                     its end
 *   doc BASE64, docend      the node's JSON document (its snapshots), in pieces
 *   done RC                 the node's exit status; nothing follows
 *
 * and the front end writes to every node "stop K" once all have said their ranks (K 1) or
 * resumed sample K-1 (and --interval has passed since the last stop), and "go K" once all
 * have said "read K": every node stops its ranks at once, and holds them no longer than
 * the slowest node's reading.
 * A line the front end cannot take (a piece that is not base64, a file past its size, a
 * name that is neither rankR.core nor a plain NAME.json) ends that node's transfer with an
 * error naming the node.
 */
#ifndef COREQ_LAUNCH_RELAY_H
#define COREQ_LAUNCH_RELAY_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "base/error.h"
#include "output/outdir.h"
#include "output/output.h"

/** The most base64 characters of one data line. */
#define CQ_RELAY_LINE 720

/** The largest file a node may send (its core before compression): a snapshot is a few MiB;
 * a rank's whole heap would not be one. */
#define CQ_RELAY_FILE_MAX ((size_t)1 << 30)

/** Send file @p path as file @p name of sample @p sample to @p f (zstd, base64 lines). */
struct cq_error *cq_relay_send_file(FILE *f, unsigned sample, const char *name, const char *path);

/** Send JSON document @p doc to @p f (doc lines, then docend). */
void cq_relay_send_doc(FILE *f, const json_t *doc);

/** What a node's protocol line said, for the front end (cq_relay_take). */
enum cq_relay_what {
	CQ_RELAY_NONE,    /**< nothing to act on (a data line, or not a protocol line) */
	CQ_RELAY_NODE,    /**< "node": name and ranks in the task */
	CQ_RELAY_ERROR,   /**< "error": the message in @c text */
	CQ_RELAY_READ,    /**< "read K" */
	CQ_RELAY_RESUMED, /**< "resumed K MS" */
	CQ_RELAY_FILE,    /**< a file written whole: @c text its name, @c sample */
	CQ_RELAY_DOC,     /**< the document, in the task's @c doc */
	CQ_RELAY_DONE,    /**< "done RC" */
};

/** One node's side of the conversation, as the front end keeps it. */
struct cq_relay_task {
	char *node;              /**< its name, once said */
	int *ranks, *pids;       /**< its ranks and their pids, once said */
	size_t nranks;
	json_t *doc;             /**< its document, once whole */
	int rc;                  /**< its exit status, -1 before "done" */
	/* the file being received */
	struct cq_output out;
	bool receiving;
	unsigned sample;
	char name[64];
	uint64_t size, zsize;
	uint8_t *z;              /**< its compressed bytes so far */
	uint64_t zhave;
	char *docbuf;            /**< the document's base64 so far */
	size_t doclen;
};

/** The result of one line, for the caller. */
struct cq_relay_event {
	enum cq_relay_what what;
	unsigned sample;          /**< read, resumed, file */
	long long value;          /**< resumed: MS; done: RC */
	char text[512];           /**< error: the node's message; file: its name */
};

/**
 * Take one line @p line (the label removed) from a node's task @p t. A file is written,
 * 0600, into @p dir (sample > 0 and @p nsamples > 1: its subdirectory sampleK, which the
 * caller made: @p subdirs[K-1]) when whole. An error (CQ_ERR_JOB) names what the line
 * broke; the task's transfer is then abandoned.
 */
struct cq_error *cq_relay_take(struct cq_relay_task *t, const char *line, const struct cq_outdir *dir,
			       const struct cq_outdir *subdirs, unsigned nsamples, struct cq_relay_event *ev);

/** Release @p t (a file half received is removed). */
void cq_relay_task_free(struct cq_relay_task *t);

#endif
