/* SPDX-License-Identifier: MIT */
/* fuzz_progress: progress across samples (job/progress.h: `coreq snapshot --samples`,
 * `coreq stacks DIR/sample*` and `coreq mqd DIR/sample*`) and the verdict it qualifies
 * (job/verdict.h, cq_job_verdict_samples), over coreq-bt/2 documents that are samples of
 * processes: made elsewhere (snapshots on disk), so as hostile as a core.
 *
 * Two input forms, by the first byte:
 *
 * * 'G': a program for a generator of samples of many threads (JSON text mutated by
 *   libFuzzer rarely holds more than a few): u8 samples (1-8; bit 7: up to 16,383
 *   threads, else 255), u8 processes (1-4), u16 threads per sample, u8 flags (bit 0: threads listed in reverse order; 1: a tid given
 *   twice; 2: some samples without taken_ms; 3: by pid, no task; 4: one taken_ms given
 *   twice; 5: frames without a pc; 6: frames without a module; 7: pcs as integers), then
 *   per sample u8 which threads move (thread i when i % m == 0; 0: none, 1: all), u8 how
 *   many threads come or go, u16 time step, u8 CPU step. At most THREAD_BUDGET threads in
 *   all (0.5 s and 450 MB at most under the sanitizers): run with fuzz/run.sh's -timeout=5
 *   -rss_limit_mb=768 (as fuzz_tree), anything quadratic in threads is a timeout finding
 *   (two samples of 15,000 threads compared pairwise: 5-8 s; of 30,000: 16 s unsanitized).
 * * anything else: JSON texts separated by NUL bytes; an array's elements are documents,
 *   any other value is one.
 *
 * The documents are grouped (cq_progress_group), each group's samples compared
 * (cq_progress_of), and all of them compared as samples of one process; the results are
 * printed (cq_progress_print), their tasks listed per state (cq_progress_tasks), and a
 * verdict about ranks taken from the input qualified by them. The documents themselves
 * go to cq_progress_print and the verdict as hostile results too. */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/progress.h"
#include "job/verdict.h"

#define THREAD_BUDGET 30000
#define MAX_DOCS 256

struct gen {
	const uint8_t *p;
	size_t n, at;
};

static unsigned u8(struct gen *g)
{
	return g->at < g->n ? g->p[g->at++] : 0;
}

static unsigned u16(struct gen *g)
{
	unsigned a = u8(g);
	return a | u8(g) << 8;
}

/* The documents of a generator program (above). */
static json_t *generate(struct gen *g)
{
	unsigned first = u8(g), nsamples = 1 + first % 8, nprocs = 1 + u8(g) % 4;
	/* most programs small (fast to run, so the fuzzer explores), some of many threads */
	unsigned nthreads = u16(g) % (first & 0x80 ? 16384 : 256), flags = u8(g);
	if ((size_t)nthreads * nsamples * nprocs > THREAD_BUDGET)
		nthreads = THREAD_BUDGET / (nsamples * nprocs);
	json_t *docs = json_array();
	for (unsigned s = 0; s < nsamples; s++) {
		unsigned move = u8(g), churn = u8(g), step = u16(g), cpu = u8(g);
		for (unsigned proc = 0; proc < nprocs; proc++) {
			json_t *threads = json_array();
			for (unsigned k = 0; k < nthreads; k++) {
				unsigned i = flags & 1 ? nthreads - 1 - k : k;
				/* churn: the first threads go and as many new ones come, per sample */
				json_int_t tid = 1000 + (json_int_t)i + (i < churn % (nthreads + 1) ? (json_int_t)s * 100000 : 0);
				if (flags & 2 && i == 1)
					tid = 1000; /* the tid of thread 0 again */
				json_int_t pc = 0x400000 + (json_int_t)(i % 251) * 16 + (move && i % move == 0 ? s : 0);
				char text[32];
				snprintf(text, sizeof(text), "0x%llx", (long long)pc);
				json_t *frames = json_array();
				for (unsigned f = 0; f < 3; f++) {
					json_t *fr = json_object();
					if (!(flags & 32 && f == 1))
						json_object_set_new(fr, "pc",
								    flags & 128 ? json_integer(f ? 0x400100 : pc)
										: json_string(f ? "0x400100" : text));
					if (!(flags & 64 && f == 2))
						json_object_set_new(fr, "module", json_string(f == 0 && i % 2 ? "libc.so.6" : "prog"));
					json_array_append_new(frames, fr);
				}
				json_array_append_new(threads, json_pack("{s:I, s:o}", "tid", tid, "frames", frames));
			}
			json_t *process = json_pack("{s:i, s:I}", "pid", 100 + (int)proc, "cpu_ms", (json_int_t)(s * cpu));
			if (!(flags & 4 && s == 1))
				json_object_set_new(process, "taken_ms",
						    json_integer(flags & 16 && s == 1 ? 0 : (json_int_t)s * (1 + step)));
			json_t *doc = json_pack("{s:s, s:o, s:o}", "schema", "coreq-bt/2", "threads", threads, "process", process);
			if (!(flags & 8))
				json_object_set_new(doc, "task", json_integer((json_int_t)proc));
			json_array_append_new(docs, doc);
		}
	}
	return docs;
}

/* The NUL-separated JSON texts of @p data; arrays flattened one level. */
static json_t *parse(const uint8_t *data, size_t size)
{
	json_t *docs = json_array();
	size_t at = 0;
	for (int n = 0; at < size && n < MAX_DOCS; n++) {
		const uint8_t *end = memchr(data + at, 0, size - at);
		size_t len = end ? (size_t)(end - (data + at)) : size - at;
		json_error_t jerr;
		json_t *doc = json_loadb((const char *)data + at, len, JSON_DECODE_ANY, &jerr);
		if (json_is_array(doc))
			json_array_extend(docs, doc);
		else if (doc)
			json_array_append(docs, doc);
		json_decref(doc);
		at += len + 1;
	}
	return docs;
}

/* A verdict for the ranks the results say: the first document's own "waiting" and
 * "blocking_ranks" where strings (hostile ranges), else the stuck ranks waiting on the
 * others. */
static void verdict(const json_t *docs, const json_t *progress, size_t size)
{
	const json_t *d0 = json_array_get(docs, 0);
	char *stuck = cq_progress_tasks(progress, "stuck"), *moving = cq_progress_tasks(progress, "progressing"),
	     *once = cq_progress_tasks(progress, "one sample");
	const char *w = json_string_value(json_object_get(d0, "waiting")) ?: stuck ?: "";
	const char *b = json_string_value(json_object_get(d0, "blocking_ranks")) ?: size & 1 ? once ?: "" : moving ?: "";
	static const char *const kinds[] = {"blocked", "deadlock", "possible_deadlock", "none"};
	json_t *v = json_pack("{s:s, s:s, s:s, s:s}", "kind", kinds[size % 4], "text", "ranks wait", "waiting", w,
			      "blocking_ranks", b);
	cq_job_verdict_samples(v, progress);
	json_decref(v);
	/* the documents as results: members of any type and value */
	v = json_pack("{s:s, s:s, s:s, s:s}", "kind", "blocked", "text", "", "waiting", w, "blocking_ranks", b);
	cq_job_verdict_samples(v, docs);
	json_decref(v);
	free(stuck);
	free(moving);
	free(once);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	if (!null)
		null = fopen("/dev/null", "w");
	if (!null)
		return 0;
	struct gen g = {data + 1, size ? size - 1 : 0, 0};
	json_t *docs = size && data[0] == 'G' ? generate(&g) : parse(data, size);
	json_t *groups = cq_progress_group(docs), *progress = json_array(), *gr, *x;
	size_t i, k;
	json_array_foreach(groups, i, gr) {
		json_t *samples = json_array();
		json_array_foreach(json_object_get(gr, "samples"), k, x)
			json_array_append(samples, json_array_get(docs, (size_t)json_integer_value(x)));
		json_t *p = cq_progress_of(samples);
		/* what the callers rely on: latest indexes the samples given; stuck only of two
		 * samples or more, none moved; progressing names a thread */
		const char *state = json_string_value(json_object_get(p, "state"));
		size_t nmoved = json_array_size(json_object_get(p, "threads_moved"));
		if (p && ((size_t)json_integer_value(json_object_get(p, "latest")) >= json_array_size(samples) || !state ||
			  (!strcmp(state, "stuck") && (json_array_size(samples) < 2 || nmoved)) ||
			  (!strcmp(state, "progressing") && !nmoved)))
			abort();
		if (p)
			json_array_append_new(progress, p);
		json_decref(samples);
	}
	json_decref(groups);
	json_t *all = cq_progress_of(docs);
	if (all)
		json_array_append_new(progress, all);
	cq_progress_print(null, progress);
	cq_progress_print(null, docs);
	verdict(docs, progress, size);
	json_decref(progress);
	json_decref(docs);
	return 0;
}
