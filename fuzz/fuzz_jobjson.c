/* SPDX-License-Identifier: MIT */
/* fuzz_jobjson: the input is the per-rank documents of an MPI job as the job view reads
 * them (`coreq mqd RANK.json...`: made elsewhere, so as hostile as a core): JSON texts
 * separated by NUL bytes. Each that parses becomes one document of the job; the job view
 * (matching, wait-for graph, cycles, stalls; mqd/job.c) and its DOT text are made. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mqd/job.h"

#define MAX_DOCS 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *docs = json_array();
	size_t at = 0;
	for (int n = 0; at < size && n < MAX_DOCS; n++) {
		const uint8_t *end = memchr(data + at, 0, size - at);
		size_t len = end ? (size_t)(end - (data + at)) : size - at;
		json_error_t jerr;
		json_t *doc = json_loadb((const char *)data + at, len, JSON_DECODE_ANY, &jerr);
		if (doc)
			json_array_append_new(docs, doc);
		at += len + 1;
	}
	json_t *job = cq_mqd_job(docs);
	char *dot = cq_mqd_job_dot(job);
	free(dot);
	json_decref(job);
	json_decref(docs);
	return 0;
}
