/* SPDX-License-Identifier: MIT */
/* Progress across samples of stacks (progress.h). */
#include "progress.h"

#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "ranges.h"

bool cq_progress_runtime_module(const char *module)
{
	/* prefixes of the base names of the C library and loader, MPI and the layers under it
	 * (PMIx, libevent, UCX, libfabric, PSM, Open MPI's components), OpenMP, hwloc, verbs */
	static const char *const prefixes[] = {"libc.so", "libc-", "ld-linux", "ld64.so", "linux-vdso", "linux-gate",
					       "[vdso]", "libpthread", "libmpi", "libopen-pal", "libopen-rte", "libpmix",
					       "libevent", "libucp", "libucs", "libuct", "libfabric", "libpsm", "mca_",
					       "libomp", "libgomp", "libiomp", "libhwloc", "libmlx", "libibverbs"};
	if (!module)
		return true; /* no module: the vDSO of a core without it, or an address outside any */
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(module, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

bool cq_progress_key(const json_t *bt, char *buf, size_t size)
{
	const json_t *task = json_object_get(bt, "task"), *pid = json_object_get(json_object_get(bt, "process"), "pid");
	if (json_is_integer(task))
		snprintf(buf, size, "rank %lld", (long long)json_integer_value(task));
	else if (json_is_integer(pid))
		snprintf(buf, size, "pid %lld", (long long)json_integer_value(pid));
	else
		return false;
	return true;
}

/* A thread of a sample as compared: its tid, where it is in the document (ties among
 * threads that claim one tid keep document order) and its program frames: frames[from..]
 * (from the innermost one outside the runtimes outward). */
struct thread_sig {
	json_int_t tid;
	size_t order, from;
	const json_t *frames;
};

static int by_tid(const void *a, const void *b)
{
	const struct thread_sig *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* The threads of bt document @p bt sorted by tid, into *@p out (*@p n of them; NULL when
 * there are none); false when out of memory. Sorting, not a table of tids: the samples of
 * 30,000 threads compared pairwise took 16 s (issue 39). */
static bool signature(const json_t *bt, struct thread_sig **out, size_t *n)
{
	const json_t *threads = json_object_get(bt, "threads"), *th;
	size_t i, count = json_array_size(threads);
	*out = NULL;
	*n = 0;
	if (!count)
		return true;
	struct thread_sig *s = malloc(count * sizeof(*s));
	if (!s)
		return false;
	json_array_foreach(threads, i, th) {
		const json_t *frames = json_object_get(th, "frames");
		size_t nf = json_array_size(frames), k = 0;
		while (k < nf && cq_progress_runtime_module(json_string_value(json_object_get(json_array_get(frames, k), "module"))))
			k++;
		s[i] = (struct thread_sig){json_integer_value(json_object_get(th, "tid")), i, k, frames};
	}
	qsort(s, count, sizeof(*s), by_tid);
	*out = s;
	*n = count;
	return true;
}

/* Whether two threads have the same program frames: as many, with equal pcs (a frame
 * without one equal only to another without). */
static bool same_frames(const struct thread_sig *a, const struct thread_sig *b)
{
	size_t na = json_array_size(a->frames) - a->from, nb = json_array_size(b->frames) - b->from;
	if (na != nb)
		return false;
	for (size_t k = 0; k < na; k++) {
		const json_t *pa = json_object_get(json_array_get(a->frames, a->from + k), "pc");
		const json_t *pb = json_object_get(json_array_get(b->frames, b->from + k), "pc");
		if (!pa != !pb || (pa && !json_equal((json_t *)pa, (json_t *)pb)))
			return false;
	}
	return true;
}

/* The tids that moved, a growing list (sorted and made distinct after each sample). */
struct tids {
	json_int_t *v;
	size_t n, cap;
	bool nomem;
};

static void push_tid(struct tids *t, json_int_t tid)
{
	if (t->nomem)
		return;
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		json_int_t *v = realloc(t->v, cap * sizeof(*v));
		if (!v) {
			t->nomem = true;
			return;
		}
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n++] = tid;
}

static int cmp_tid(const void *a, const void *b)
{
	json_int_t x = *(const json_int_t *)a, y = *(const json_int_t *)b;
	return (x > y) - (x < y);
}

/* Sort and drop repeats: the threads that moved in several samples are named once. */
static void distinct_tids(struct tids *t)
{
	if (!t->n)
		return;
	qsort(t->v, t->n, sizeof(*t->v), cmp_tid);
	size_t w = 1;
	for (size_t i = 1; i < t->n; i++)
		if (t->v[i] != t->v[w - 1])
			t->v[w++] = t->v[i];
	t->n = w;
}

/* The threads of sample @p b that differ from those of sample @p a (both sorted by tid):
 * one merge walk. A tid in one sample only came or went; where a tid is claimed by
 * several threads (a crafted document), its threads are compared in document order, and
 * a different count is a move. */
static void compare_samples(const struct thread_sig *a, size_t na, const struct thread_sig *b, size_t nb,
			    struct tids *moved)
{
	size_t i = 0, j = 0;
	while (i < na || j < nb) {
		json_int_t tid = i < na && (j >= nb || a[i].tid <= b[j].tid) ? a[i].tid : b[j].tid;
		size_t i2 = i, j2 = j;
		while (i2 < na && a[i2].tid == tid)
			i2++;
		while (j2 < nb && b[j2].tid == tid)
			j2++;
		bool same = i2 - i == j2 - j;
		for (size_t k = 0; same && k < i2 - i; k++)
			same = same_frames(&a[i + k], &b[j + k]);
		if (!same)
			push_tid(moved, tid);
		i = i2;
		j = j2;
	}
}

/* A member of a document's "process"; *@p known cleared when absent, or outside
 * [0, 2^50] (a crafted document: the differences below cannot overflow). */
static json_int_t process_int(const json_t *bt, const char *name, bool *known)
{
	const json_t *v = json_object_get(json_object_get(bt, "process"), name);
	json_int_t x = json_integer_value(v);
	bool ok = json_is_integer(v) && x >= 0 && x <= (json_int_t)1 << 50;
	*known &= ok;
	return ok ? x : 0;
}

static int by_taken(const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	bool k = true;
	json_int_t tx = process_int(x, "taken_ms", &k), ty = process_int(y, "taken_ms", &k);
	return tx < ty ? -1 : tx > ty;
}

json_t *cq_progress_of(const json_t *bts)
{
	size_t n = json_array_size(bts);
	if (!n)
		return NULL;
	json_t **s = malloc(n * sizeof(*s));
	if (!s)
		return NULL;
	bool timed = true;
	for (size_t i = 0; i < n; i++) {
		s[i] = json_array_get(bts, i);
		process_int(s[i], "taken_ms", &timed);
	}
	if (timed)
		qsort(s, n, sizeof(*s), by_taken);
	size_t latest = 0;
	while (latest < n && json_array_get(bts, latest) != s[n - 1])
		latest++;
	/* every sample against the first: a thread that moved and came back moved too */
	struct thread_sig *base = NULL, *other = NULL;
	size_t nbase = 0, nother = 0;
	struct tids moved = {0};
	bool ok = signature(s[0], &base, &nbase);
	for (size_t i = 1; ok && !moved.nomem && i < n; i++) {
		ok = signature(s[i], &other, &nother);
		if (ok)
			compare_samples(base, nbase, other, nother, &moved);
		free(other);
		other = NULL;
		distinct_tids(&moved); /* each tid once: no more than the distinct tids given */
	}
	free(base);
	json_t *moved_json = ok && !moved.nomem ? json_array() : NULL;
	for (size_t i = 0; moved_json && i < moved.n; i++)
		if (json_array_append_new(moved_json, json_integer(moved.v[i]))) {
			json_decref(moved_json);
			moved_json = NULL;
		}
	size_t nmoved = moved.n;
	free(moved.v);
	if (!moved_json) {
		free(s);
		return NULL;
	}
	/* CPU time only grows: its spread over the samples is what was used between them,
	 * whatever their order */
	bool cpu_known = n > 1; /* one sample: nothing used between samples, nothing said */
	json_int_t lo = 0, hi = 0;
	for (size_t i = 0; i < n; i++) {
		json_int_t c = process_int(s[i], "cpu_ms", &cpu_known);
		lo = !i || c < lo ? c : lo;
		hi = !i || c > hi ? c : hi;
	}
	bool span_known = timed && n > 1;
	json_int_t span = span_known ? process_int(s[n - 1], "taken_ms", &span_known) - process_int(s[0], "taken_ms", &span_known)
				: 0;
	bool stuck = n > 1 && !nmoved;
	const char *cpu = NULL;
	/* a quarter of the time sampled or more: a loop, not a few wakeups of a blocked rank's
	 * runtime threads (FACTS.md) */
	if (stuck && cpu_known && span_known && span > 0)
		cpu = (hi - lo) * 4 >= span ? "spinning" : "blocked";
	bool pid_known = true;
	json_int_t pid = process_int(s[0], "pid", &pid_known);
	json_t *task = json_object_get(s[0], "task");
	json_t *out = json_pack("{s:I, s:I, s:b, s:o, s:s, s:o, s:o, s:o, s:o, s:O}", "samples", (json_int_t)n,
				"latest", (json_int_t)latest, "moved", nmoved > 0, "threads_moved", moved_json, "state",
				n < 2 ? "one sample" : stuck ? "stuck" : "progressing", "cpu_ms",
				cpu_known ? json_integer(hi - lo) : json_null(), "span_ms",
				span_known ? json_integer(span) : json_null(), "cpu", cpu ? json_string(cpu) : json_null(),
				"pid", pid_known ? json_integer(pid) : json_null(),
				"task", json_is_integer(task) ? task : json_null());
	free(s);
	return out;
}

json_t *cq_progress_group(const json_t *bts)
{
	json_t *out = json_array(), *index = json_object(), *bt;
	size_t i;
	json_array_foreach(bts, i, bt) {
		char key[48];
		json_t *g = NULL;
		const json_t *taken = json_object_get(json_object_get(bt, "process"), "taken_ms");
		/* only snapshots taken at different times are samples: a document without the
		 * time, or given again, stays a process of its own (and a duplicate where the
		 * caller refuses one) */
		bool keyed = json_is_integer(taken) && cq_progress_key(bt, key, sizeof(key));
		char when[32];
		snprintf(when, sizeof(when), "%lld", (long long)json_integer_value(taken));
		/* the group's times so far (index: key -> {"group", "times"}): a time seen again
		 * is the same snapshot given twice */
		json_t *entry = keyed ? json_object_get(index, key) : NULL;
		if (entry && !json_object_get(json_object_get(entry, "times"), when))
			g = json_object_get(entry, "group");
		else if (entry)
			keyed = false;
		if (!g) {
			g = json_pack("{s:o, s:[]}", "key", keyed ? json_string(key) : json_null(), "samples");
			json_array_append_new(out, g);
			if (keyed)
				json_object_set_new(index, key, entry = json_pack("{s:O, s:{}}", "group", g, "times"));
		}
		if (keyed)
			json_object_set_new(json_object_get(entry, "times"), when, json_true());
		json_array_append_new(json_object_get(g, "samples"), json_integer((json_int_t)i));
	}
	json_decref(index);
	return out;
}

/* The class a result is printed in. */
static const char *class_of(const json_t *p, char *buf, size_t size)
{
	const char *state = json_string_value(json_object_get(p, "state")) ?: "?",
		   *cpu = json_string_value(json_object_get(p, "cpu"));
	snprintf(buf, size, "%s%s%s", state, cpu ? ", " : "", cpu ? cpu : "");
	return buf;
}

char *cq_progress_tasks(const json_t *progress, const char *state)
{
	struct cq_ranges set;
	cq_ranges_init(&set);
	const json_t *p;
	size_t i;
	struct cq_error *err = NULL;
	json_array_foreach(progress, i, p) {
		const json_t *t = json_object_get(p, "task");
		if (!err && json_is_integer(t) && json_integer_value(t) >= 0 &&
		    !strcmp(json_string_value(json_object_get(p, "state")) ?: "", state))
			err = cq_ranges_add(&set, (uint64_t)json_integer_value(t), (uint64_t)json_integer_value(t));
	}
	char *text = err ? NULL : cq_ranges_format(&set);
	cq_error_destroy(err);
	cq_ranges_deinit(&set);
	return text;
}

/* The threads that moved named per process in text (cq_progress_print). */
#define MOVED_SHOWN 16

void cq_progress_print(FILE *f, const json_t *progress)
{
	/* the classes in a fixed order: what a person reads first is what is stuck */
	static const char *const order[] = {"stuck, spinning", "stuck, blocked", "stuck", "progressing", "one sample"};
	static const char *const says[] = {
		"the same program frames in every sample, on the CPU a quarter of the time or more",
		"the same program frames in every sample, off the CPU",
		"the same program frames in every sample; the cores do not say the CPU time",
		"the program frames moved between samples", "sampled once: not compared"};
	for (size_t c = 0; c < sizeof(order) / sizeof(order[0]); c++) {
		struct cq_ranges set;
		cq_ranges_init(&set);
		json_t *pids = json_array(), *p;
		size_t i;
		/* what the class's processes say, as ranges over them: one count or span would
		 * be the last process's, said of all */
		json_int_t lo = -1, hi = -1, slo = -1, shi = -1, splo = -1, sphi = -1;
		json_array_foreach(progress, i, p) {
			char buf[64];
			if (strcmp(class_of(p, buf, sizeof(buf)), order[c]))
				continue;
			const json_t *t = json_object_get(p, "task");
			if (json_is_integer(t) && json_integer_value(t) >= 0)
				cq_error_destroy(cq_ranges_add(&set, (uint64_t)json_integer_value(t), (uint64_t)json_integer_value(t)));
			else
				json_array_append(pids, json_object_get(p, "pid"));
			json_int_t cm = json_integer_value(json_object_get(p, "cpu_ms"));
			if (json_is_integer(json_object_get(p, "cpu_ms"))) {
				lo = lo < 0 || cm < lo ? cm : lo;
				hi = cm > hi ? cm : hi;
			}
			json_int_t ns = json_integer_value(json_object_get(p, "samples"));
			slo = slo < 0 || ns < slo ? ns : slo;
			shi = ns > shi ? ns : shi;
			json_int_t sp = json_integer_value(json_object_get(p, "span_ms"));
			if (json_is_integer(json_object_get(p, "span_ms")) && sp >= 0) {
				splo = splo < 0 || sp < splo ? sp : splo;
				sphi = sp > sphi ? sp : sphi;
			}
		}
		uint64_t ntasks = cq_ranges_count(&set);
		if (ntasks + json_array_size(pids)) {
			char *r = cq_ranges_format(&set);
			fprintf(f, "%s:", order[c]);
			if (ntasks)
				fprintf(f, " rank%s %s", ntasks > 1 ? "s" : "", r ? r : "?");
			json_array_foreach(pids, i, p)
				fprintf(f, "%s process %lld", i || ntasks ? "," : "", (long long)json_integer_value(p));
			fprintf(f, " (%s", says[c]);
			if (slo > 1)
				fprintf(f, slo == shi ? "; %lld samples" : "; %lld-%lld samples", (long long)slo, (long long)shi);
			if (slo > 1 && sphi >= 0)
				fprintf(f, splo == sphi ? " over %lld ms" : " over %lld-%lld ms", (long long)splo, (long long)sphi);
			if (hi >= 0)
				fprintf(f, lo == hi ? "; %lld ms of CPU" : "; %lld-%lld ms of CPU", (long long)lo, (long long)hi);
			fprintf(f, ")\n");
			free(r);
			/* a progressing process: which of its threads moved (the first few processes) */
			size_t shown = 0, more = 0;
			json_array_foreach(progress, i, p) {
				const json_t *moved = json_object_get(p, "threads_moved"), *x;
				char buf[64];
				size_t k;
				if (c != 3 || strcmp(class_of(p, buf, sizeof(buf)), order[c]))
					continue;
				if (shown++ == 8) {
					more = 1;
					continue;
				}
				if (more) {
					more++;
					continue;
				}
				const json_t *t = json_object_get(p, "task");
				if (json_is_integer(t))
					fprintf(f, "  rank %lld", (long long)json_integer_value(t));
				else
					fprintf(f, "  process %lld", (long long)json_integer_value(json_object_get(p, "pid")));
				/* the first few tids: a line, not every thread of 30,000 (the JSON has them) */
				size_t nm = json_array_size(moved);
				fprintf(f, ": thread%s", nm > 1 ? "s" : "");
				json_array_foreach(moved, k, x) {
					if (k == MOVED_SHOWN && nm > MOVED_SHOWN + 1) {
						fprintf(f, " and %zu more", nm - k);
						break;
					}
					fprintf(f, "%s %lld", k ? "," : "", (long long)json_integer_value(x));
				}
				fprintf(f, " moved\n");
			}
			if (more)
				fprintf(f, "  ... and %zu more\n", more);
		}
		json_decref(pids);
		cq_ranges_deinit(&set);
	}
}
