/* SPDX-License-Identifier: MIT */
/* OpenMP-aware stacks: frames joined with OMPD's task frames (ompjoin.h). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "ompjoin.h"

/* A task chain longer than this on one stack is not a real one. */
#define MAX_CHAIN 256
/* Frame 0's own frame is below its CFA by at most this much: a frame address further
 * down is not on the thread's stack. */
#define FRAME0_SLACK 65536

bool cq_omp_runtime_module(const char *module)
{
	static const char *const names[] = {"libomp.so", "libomp-", "libiomp5.so", "libgomp.so", "libgomp-"};
	if (!module)
		return false;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strncmp(module, names[i], strlen(names[i])))
			return true;
	return false;
}

static const char *jstr(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static bool hex_of(const json_t *v, uint64_t *out)
{
	const char *s = json_string_value(v);
	char *end;
	if (!s || strncmp(s, "0x", 2))
		return false;
	*out = strtoull(s + 2, &end, 16);
	return end != s + 2 && !*end;
}

/* One thread's physical frames: an inlined frame shares its CFA with the frame it was
 * inlined into (the next non-inlined one), so frame addresses are placed by group. */
struct stack {
	json_t *frames;
	size_t nframes;
	size_t *group_last; /* per group: the index of its last (physical) frame */
	size_t *group_of;   /* per frame: its group */
	uint64_t *cfa;      /* per group */
	size_t ngroups;
	uint64_t bias;
};

static void stack_free(struct stack *s)
{
	free(s->group_last);
	free(s->group_of);
	free(s->cfa);
}

static bool stack_init(struct stack *s, json_t *frames, uint64_t bias)
{
	memset(s, 0, sizeof(*s));
	s->frames = frames;
	s->nframes = json_array_size(frames);
	s->bias = bias;
	s->group_last = calloc(s->nframes + 1, sizeof(size_t));
	s->group_of = calloc(s->nframes + 1, sizeof(size_t));
	s->cfa = calloc(s->nframes + 1, sizeof(uint64_t));
	if (!s->group_last || !s->group_of || !s->cfa)
		return false;
	for (size_t i = 0; i < s->nframes; i++) {
		json_t *f = json_array_get(frames, i);
		s->group_of[i] = s->ngroups;
		if (json_is_true(json_object_get(f, "inlined")) && i + 1 < s->nframes)
			continue;
		uint64_t c = 0;
		hex_of(json_object_get(f, "cfa"), &c);
		s->cfa[s->ngroups] = c;
		s->group_last[s->ngroups++] = i;
	}
	return true;
}

/* OMPT's frame flags (omp-tools.h): what the address is. LLVM's libompd up to 19 leaves
 * them unset (null in the report): then a frame address, as the runtime records it. */
#define FRAME_KIND_MASK 0x30
#define FRAME_CFA 0x10

/* The group whose stack region holds address @p a: a frame address (frame pointer, back
 * chain) or a stack address lies below its frame's CFA (less the bias), so the innermost
 * group whose CFA - bias is above it; an address flagged as a CFA is that frame's CFA.
 * -1 when @p a is 0, below frame 0's frame or above the outermost frame. */
static long owner(const struct stack *s, uint64_t a, bool is_cfa)
{
	if (!a || !s->ngroups || s->cfa[0] < s->bias)
		return -1;
	if (a + FRAME0_SLACK < s->cfa[0] - s->bias)
		return -1;
	for (size_t g = 0; g < s->ngroups; g++)
		if (is_cfa ? s->cfa[g] >= a : s->cfa[g] >= s->bias && a < s->cfa[g] - s->bias)
			return (long)g;
	return -1;
}

static const char *group_module(const struct stack *s, size_t g)
{
	return jstr(json_array_get(s->frames, s->group_last[g]), "module");
}

/* The C library, the dynamic linker, the vdso: what the runtime calls to wait and lock. */
static bool system_module(const char *m)
{
	static const char *const names[] = {"libc.so", "libc-", "ld-linux", "ld64.so", "ld.so", "linux-vdso",
					    "linux-gate", "[vdso]", "libpthread", "libgcc_s"};
	if (!m)
		return true; /* no module: a pc nobody maps (the walk says why) */
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strncmp(m, names[i], strlen(names[i])))
			return true;
	return false;
}

/* The end of the runtime's frames from group @p g: past the outermost runtime frame in
 * [g, limit) that only runtime frames and what they called (the C library) precede; @p g
 * itself when the frames there are not the runtime's. Frames of the program's own modules
 * end the search: the runtime never runs them except through a task. */
static size_t runtime_end(const struct stack *s, size_t g, size_t limit)
{
	size_t end = g;
	for (size_t k = g; k < limit; k++) {
		const char *m = group_module(s, k);
		if (cq_omp_runtime_module(m))
			end = k + 1;
		else if (!system_module(m))
			break;
	}
	return end;
}

/* The ompd document, indexed. */
struct omp {
	const json_t *doc, *tasks, *regions, *threads;
	long *parent;    /* per task: the task that generated it, or -1 */
	long *scheduled; /* per task: the task it was scheduled from, or -1 */
	size_t ntasks;
};

static long idx(const json_t *v, size_t n)
{
	return json_is_integer(v) && json_integer_value(v) >= 0 && (size_t)json_integer_value(v) < n
		       ? (long)json_integer_value(v) : -1;
}

/* parent/scheduled links from each thread's chains: [a, b, c] after task x says x -> a -> b -> c */
static void link_chain(long *link, size_t n, long first, const json_t *chain)
{
	long prev = first;
	const json_t *v;
	size_t i;
	json_array_foreach(chain, i, v) {
		long t = idx(v, n);
		if (t < 0 || prev < 0)
			return;
		if (link[prev] < 0)
			link[prev] = t;
		prev = t;
	}
}

static bool omp_init(struct omp *o, const json_t *doc)
{
	memset(o, 0, sizeof(*o));
	o->doc = doc;
	o->tasks = json_object_get(doc, "tasks");
	o->regions = json_object_get(doc, "parallel_regions");
	o->threads = json_object_get(doc, "threads");
	o->ntasks = json_array_size(o->tasks);
	o->parent = malloc((o->ntasks + 1) * sizeof(long));
	o->scheduled = malloc((o->ntasks + 1) * sizeof(long));
	if (!o->parent || !o->scheduled)
		return false;
	for (size_t i = 0; i < o->ntasks; i++)
		o->parent[i] = o->scheduled[i] = -1;
	const json_t *th;
	size_t i;
	json_array_foreach(o->threads, i, th) {
		long cur = idx(json_object_get(th, "current_task"), o->ntasks);
		link_chain(o->parent, o->ntasks, cur, json_object_get(th, "generating_chain"));
		link_chain(o->scheduled, o->ntasks, cur, json_object_get(th, "scheduling_chain"));
	}
	return true;
}

static void omp_free(struct omp *o)
{
	free(o->parent);
	free(o->scheduled);
}

static const json_t *task(const struct omp *o, long t)
{
	return t >= 0 ? json_array_get(o->tasks, (size_t)t) : NULL;
}

/* Implicit task or not: a task scheduled from another one is explicit (the runtime sets
 * the scheduling parent only when an explicit task starts), whatever the plugin's flag says
 * (LLVM 19's libompd reads the task-type bit wrongly on big-endian targets); else the
 * plugin's implicit-task-var ICV. */
static bool implicit(const struct omp *o, long t)
{
	if (t >= 0 && o->scheduled[t] >= 0)
		return false;
	const json_t *icvs = json_object_get(task(o, t), "icvs");
	const json_t *v = json_object_get(icvs, "implicit-task-var");
	if (!v)
		v = json_object_get(icvs, "ompd-implicit-task-var");
	return json_is_integer(v) && json_integer_value(v) == 1;
}

static uint64_t frame_addr(const struct omp *o, long t, const char *which, bool *is_cfa)
{
	uint64_t a = 0;
	const json_t *f = json_object_get(task(o, t), which), *flag = json_object_get(f, "flag");
	hex_of(json_object_get(f, "address"), &a);
	*is_cfa = json_is_integer(flag) && (json_integer_value(flag) & FRAME_KIND_MASK) == FRAME_CFA;
	return a;
}

/* The thread number of @p tid in region @p r's team, or -1; *master: the team's thread 0. */
static long thread_num(const struct omp *o, long r, json_int_t tid, json_int_t *master)
{
	const json_t *m;
	size_t i;
	long num = -1;
	*master = -1;
	json_array_foreach(json_object_get(json_array_get(o->regions, (size_t)r), "team"), i, m) {
		json_int_t n = json_integer_value(json_object_get(m, "thread_num"));
		if (json_integer_value(json_object_get(m, "tid")) == tid)
			num = (long)n;
		if (n == 0)
			*master = json_integer_value(json_object_get(m, "tid"));
	}
	return num;
}

/* One task on a thread's stack, with what is known of it. */
struct link {
	long task, region; /* region: for implicit tasks, else -1 */
};

/* The tasks whose frames are on thread @p th's stack, innermost first (ompjoin.h). */
static size_t chain_of(const struct omp *o, const json_t *th, struct link *out)
{
	size_t n = 0, implicit_seen = 0;
	long t = idx(json_object_get(th, "current_task"), o->ntasks);
	const json_t *pchain = json_object_get(th, "parallel_chain");
	json_int_t tid = json_integer_value(json_object_get(th, "tid"));
	while (t >= 0 && n < MAX_CHAIN) {
		for (size_t k = 0; k < n; k++)
			if (out[k].task == t)
				return n; /* a cycle in the links: stop */
		long region = -1;
		if (implicit(o, t))
			region = idx(json_array_get(pchain, implicit_seen++), json_array_size(o->regions));
		out[n++] = (struct link){t, region};
		if (o->scheduled[t] >= 0) {
			t = o->scheduled[t];
			continue;
		}
		/* an implicit task continues on this stack into the task that generated its
		 * region only when this thread created the region (its thread 0); an explicit
		 * task only when it ran undeferred (if(0), included) where its generating task
		 * entered the runtime: its exit frame is that task's enter frame (LLVM) */
		json_int_t master;
		bool cfa1, cfa2;
		long p = o->parent[t];
		uint64_t exit = region < 0 && p >= 0 ? frame_addr(o, t, "exit_frame", &cfa1) : 0;
		if (region >= 0 && thread_num(o, region, tid, &master) == 0)
			t = p;
		else if (exit && exit == frame_addr(o, p, "enter_frame", &cfa2) && cfa1 == cfa2)
			t = p;
		else
			t = -1;
	}
	return n;
}

static void label(struct stack *s, size_t g_from, size_t g_to, const char *kind)
{
	for (size_t i = 0; i < s->nframes; i++)
		if (s->group_of[i] >= g_from && s->group_of[i] < g_to)
			json_object_set_new(json_array_get(s->frames, i), "openmp", json_string(kind));
}

/* A segment [g_from, g_to) of groups as frames first..last, labelled @p kind. */
static json_t *segment(struct stack *s, size_t g_from, size_t g_to, const char *kind)
{
	label(s, g_from, g_to, kind);
	size_t first = g_from ? s->group_last[g_from - 1] + 1 : 0, last = s->group_last[g_to - 1];
	return json_pack("{s:s, s:I, s:I}", "kind", kind, "first", (json_int_t)first, "last", (json_int_t)last);
}

/* The program's function that the task ran: the outermost of its frames not in the
 * runtime (the runtime may name only its own wrapper: GCC's GOMP entry points). */
static void program_function(const struct stack *s, json_t *seg, size_t g_from, size_t g_to)
{
	for (size_t g = g_to; g-- > g_from;) {
		json_t *f = json_array_get(s->frames, s->group_last[g]);
		const char *fn = jstr(f, "function");
		if (fn && !cq_omp_runtime_module(jstr(f, "module"))) {
			json_object_set_new(seg, "function", cq_json_str(fn));
			return;
		}
	}
}

/* Append @p seg to @p segs, joined to the one before when both are the runtime's. */
static void append(json_t *segs, json_t *seg)
{
	json_t *prev = json_array_get(segs, json_array_size(segs) - 1);
	if (prev && !strcmp(jstr(prev, "kind") ?: "", "runtime") && !strcmp(jstr(seg, "kind") ?: "", "runtime") &&
	    json_integer_value(json_object_get(prev, "last")) + 1 == json_integer_value(json_object_get(seg, "first"))) {
		json_object_set(prev, "last", json_object_get(seg, "last"));
		json_decref(seg);
		return;
	}
	json_array_append_new(segs, seg);
}

static void describe_task(const struct omp *o, json_t *seg, const struct link *l, json_int_t tid, bool initial)
{
	const json_t *t = task(o, l->task);
	json_object_set_new(seg, "task", json_integer(l->task));
	json_object_set_new(seg, "task_type", json_string(initial ? "initial" : l->region >= 0 ? "implicit" : "explicit"));
	const char *fn = jstr(json_object_get(t, "function"), "symbol");
	const json_t *r = l->region >= 0 ? json_array_get(o->regions, (size_t)l->region) : NULL;
	if (r && !fn)
		fn = jstr(json_object_get(r, "function"), "symbol");
	if (fn) /* what OMPD names (the outlined function, or the runtime's wrapper of it) */
		json_object_set_new(seg, "ompd_function", cq_json_str(fn));
	if (!r)
		return;
	json_int_t master;
	long num = thread_num(o, l->region, tid, &master);
	json_object_set_new(seg, "region", json_integer(l->region));
	json_object_set(seg, "level", json_object_get(r, "level"));
	json_object_set(seg, "team_size", json_object_get(r, "team_size"));
	if (num >= 0)
		json_object_set_new(seg, "thread_num", json_integer(num));
	if (master >= 0)
		json_object_set_new(seg, "encountering_tid", json_integer(master));
}

static void problem(json_t *problems, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(json_t *problems, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	json_array_append_new(problems, json_string(buf));
}

/* Whether frames [@p from, @p to) of @p s hold code of the program's own (not the
 * runtime's, not the C library's). */
static bool program_frames(struct stack *s, size_t from, size_t to)
{
	for (size_t k = from; k < to; k++) {
		const char *m = group_module(s, k);
		if (m && !cq_omp_runtime_module(m) && !system_module(m))
			return true;
	}
	return false;
}

/* Segments of one OpenMP thread's stack (ompjoin.h). */
static json_t *join_thread(const struct omp *o, const json_t *oth, json_t *bth, uint64_t bias)
{
	struct stack s;
	json_t *segs = json_array(), *problems = json_array();
	json_t *out = json_pack("{s:o, s:o}", "segments", segs, "problems", problems);
	struct link chain[MAX_CHAIN];
	json_int_t tid = json_integer_value(json_object_get(bth, "tid"));
	const char *state = jstr(json_object_get(oth, "state"), "name");
	if (state)
		json_object_set_new(out, "state", json_string(state));
	if (!stack_init(&s, json_object_get(bth, "frames"), bias)) {
		stack_free(&s);
		return out;
	}
	size_t n = chain_of(o, oth, chain), g = 0;
	json_t *tasks_on = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(tasks_on, json_integer(chain[i].task));
	json_object_set_new(out, "tasks", tasks_on);
	json_t *merged = json_array(); /* tasks whose frames could not be told from the next one's */
	for (size_t i = 0; i < n && g < s.ngroups; i++) {
		const struct link *l = &chain[i];
		bool ecfa, ncfa;
		uint64_t ea = frame_addr(o, l->task, "exit_frame", &ecfa), na = frame_addr(o, l->task, "enter_frame", &ncfa);
		long e = owner(&s, ea, ecfa), nn = owner(&s, na, ncfa);
		bool last = i + 1 == n;
		/* the initial task of a worker's chain runs on another thread (its enter frame,
		 * the fork's, is on that thread's stack): nothing of this stack is its serial part */
		if (!ea && last && na && nn < 0)
			break;
		/* an implicit task without an exit frame has none on this stack (the master in the
		 * region's join barrier, its part done): its frames are not the next task's */
		if (!ea && !na && !last)
			continue;
		if (na && nn < 0)
			problem(problems, "task %ld: its enter frame 0x%" PRIx64 " is not on thread %lld's stack: not used",
				l->task, na, (long long)tid);
		/* what the task called in the runtime: up to its enter frame, and the runtime's
		 * own frames above that (a task calling omp_set_lock) */
		size_t start = g;
		if (nn >= 0 && (size_t)nn >= g)
			g = (size_t)nn + (cq_omp_runtime_module(group_module(&s, (size_t)nn)) ? 1 : 0);
		bool initial = !ea && last;
		/* nor on a worker whose chain ends in a task of level 0 without frames (an idle
		 * thread's): a serial part has the program's own code (main) in it; the runtime's
		 * frames and the thread's start below it are not one */
		if (initial && !program_frames(&s, g, s.ngroups))
			break;
		size_t end;
		if (e >= 0 && (size_t)e >= g)
			end = (size_t)e;
		else if (!ea)
			end = s.ngroups; /* the initial task: to the end of the stack */
		else
			end = SIZE_MAX;
		/* frames the runtime called (a lock's wait in the C library) are the runtime's too:
		 * up to the outermost runtime frame before the task's own code */
		g = runtime_end(&s, g, end == SIZE_MAX ? s.ngroups : end);
		if (g > start)
			append(segs, segment(&s, start, g, "runtime"));
		if (g >= s.ngroups)
			break;
		if (end == SIZE_MAX) {
			if (e < 0)
				problem(problems, "task %ld: its exit frame 0x%" PRIx64 " is not on thread %lld's stack (the runtime "
					"takes an undeferred task's from the application's frame pointer): its frames are not "
					"told apart from the next task's", l->task, ea, (long long)tid);
			json_array_append_new(merged, json_integer(l->task));
			continue;
		}
		/* the runtime's frames that ran the task (GOMP_task running an undeferred task,
		 * GOMP_parallel its region on the creating thread) are not the task's */
		size_t tend = end;
		while (!initial && tend > g && (cq_omp_runtime_module(group_module(&s, tend - 1)) ||
						(tend - 1 > g && system_module(group_module(&s, tend - 1)) &&
						 cq_omp_runtime_module(group_module(&s, tend - 2)))))
			tend--;
		if (tend > g) {
			json_t *seg = segment(&s, g, tend, initial ? "serial" : "task");
			describe_task(o, seg, l, tid, initial);
			program_function(&s, seg, g, tend);
			if (json_array_size(merged)) {
				json_object_set_new(seg, "also_tasks", merged);
				merged = json_array();
			}
			append(segs, seg);
		}
		if (end > tend && end != SIZE_MAX)
			append(segs, segment(&s, tend, end, "runtime"));
		g = end;
		/* the exit frame: the runtime's that called the task, else the next task's */
		if (g < s.ngroups && cq_omp_runtime_module(group_module(&s, g))) {
			size_t r = g;
			while (g < s.ngroups && cq_omp_runtime_module(group_module(&s, g)))
				g++;
			append(segs, segment(&s, r, g, "runtime"));
		}
	}
	json_decref(merged);
	/* the rest: the runtime's, then the thread's start, outside any task */
	size_t from = g;
	g = runtime_end(&s, g, s.ngroups);
	if (g > from)
		append(segs, segment(&s, from, g, "runtime"));
	if (g < s.ngroups)
		append(segs, segment(&s, g, s.ngroups, "thread"));
	stack_free(&s);
	return out;
}

/* Without OMPD: the runtime's frames marked by module. */
static void by_module(json_t *bth)
{
	json_t *f, *segs = json_array();
	size_t i, from = 0;
	const char *prev = NULL;
	json_t *frames = json_object_get(bth, "frames");
	json_array_foreach(frames, i, f) {
		const char *kind = cq_omp_runtime_module(jstr(f, "module")) ? "runtime" : "other";
		json_object_set_new(f, "openmp", json_string(kind));
		if (prev && strcmp(prev, kind)) {
			json_array_append_new(segs, json_pack("{s:s, s:I, s:I}", "kind", prev, "first", (json_int_t)from,
							      "last", (json_int_t)i - 1));
			from = i;
		}
		prev = kind;
	}
	if (prev)
		json_array_append_new(segs, json_pack("{s:s, s:I, s:I}", "kind", prev, "first", (json_int_t)from, "last",
						      (json_int_t)json_array_size(frames) - 1));
	json_object_set_new(bth, "openmp", json_pack("{s:o, s:[]}", "segments", segs, "problems"));
}

static const json_t *ompd_thread(const struct omp *o, json_int_t tid)
{
	const json_t *t;
	size_t i;
	json_array_foreach(o->threads, i, t)
		if (json_integer_value(json_object_get(t, "tid")) == tid)
			return t;
	return NULL;
}

static json_t *bt_thread(json_t *bt, json_int_t tid)
{
	json_t *t;
	size_t i;
	json_array_foreach(json_object_get(bt, "threads"), i, t)
		if (json_integer_value(json_object_get(t, "tid")) == tid)
			return t;
	return NULL;
}

/* The segment of task @p t on thread @p th (its index), or -1. */
static long segment_of(json_t *th, long t)
{
	json_t *seg;
	size_t i;
	json_array_foreach(json_object_get(json_object_get(th, "openmp"), "segments"), i, seg) {
		if (json_integer_value(json_object_get(seg, "task")) == t && json_object_get(seg, "task"))
			return (long)i;
		json_t *v;
		size_t k;
		json_array_foreach(json_object_get(seg, "also_tasks"), k, v)
			if (json_integer_value(v) == t)
				return (long)i;
	}
	return -1;
}

/* --openmp=continued: after the outermost task of @p th, the generating task's segments on
 * the thread that created its region, and so on out to the initial task. */
static void continue_thread(const struct omp *o, json_t *bt, json_t *th)
{
	json_t *cont = json_array(), *cur = th;
	for (int depth = 0; depth < MAX_CHAIN; depth++) {
		json_t *segs = json_object_get(json_object_get(cur, "openmp"), "segments"), *last = NULL, *seg;
		size_t i;
		json_array_foreach(segs, i, seg)
			if (json_object_get(seg, "task"))
				last = seg;
		long region = idx(json_object_get(last, "region"), json_array_size(o->regions));
		json_int_t master = json_integer_value(json_object_get(last, "encountering_tid"));
		long t = idx(json_object_get(last, "task"), o->ntasks);
		if (!last || region < 0 || t < 0 || !json_object_get(last, "encountering_tid") ||
		    master == json_integer_value(json_object_get(cur, "tid")))
			break;
		long g = o->parent[t];
		json_t *mth = bt_thread(bt, master);
		long k = mth && g >= 0 ? segment_of(mth, g) : -1;
		if (k < 0) {
			json_array_append_new(cont, json_pack("{s:I, s:I, s:s}", "tid", master, "task", (json_int_t)g, "why",
							      "the generating task's frames are not found on its thread"));
			break;
		}
		/* on that thread: the runtime's frames that created the region (__kmpc_fork_call),
		 * the generating task's segment, and the tasks outside it there; not the thread's
		 * own start */
		json_t *msegs = json_object_get(json_object_get(mth, "openmp"), "segments");
		size_t from = (size_t)k, to = (size_t)k;
		if (k > 0 && !strcmp(jstr(json_array_get(msegs, (size_t)k - 1), "kind") ?: "", "runtime"))
			from = (size_t)k - 1;
		for (size_t j = (size_t)k; j < json_array_size(msegs); j++)
			if (json_object_get(json_array_get(msegs, j), "task"))
				to = j;
		for (size_t j = from; j <= to; j++) {
			json_t *ms = json_array_get(msegs, j);
			json_t *c = json_pack("{s:I, s:O, s:O, s:O}", "tid", master, "kind", json_object_get(ms, "kind"), "first",
					      json_object_get(ms, "first"), "last", json_object_get(ms, "last"));
			if (json_object_get(ms, "task"))
				json_object_set(c, "task", json_object_get(ms, "task"));
			json_array_append_new(cont, c);
		}
		cur = mth;
	}
	json_object_set_new(json_object_get(th, "openmp"), "continued", cont);
}

/* Whether the report has task frames at all (a runtime not run with OMP_DEBUG=enabled
 * has none: the plugin says so as a problem, which becomes @p why). */
static bool has_frames(const json_t *ompd, const char **why)
{
	const json_t *t, *p;
	size_t i;
	json_array_foreach(json_object_get(ompd, "tasks"), i, t)
		if (json_is_string(json_object_get(json_object_get(t, "exit_frame"), "address")))
			return true;
	*why = "the OMPD plugin gives no task frames";
	json_array_foreach(json_object_get(ompd, "problems"), i, p)
		if (!strcmp(jstr(p, "item") ?: "", "state tracking") && jstr(p, "message"))
			*why = jstr(p, "message");
	return false;
}

void cq_omp_join(json_t *bt, const json_t *ompd, const char *why, bool continued)
{
	json_t *th;
	size_t i;
	struct omp o;
	if (ompd && !has_frames(ompd, &why))
		ompd = NULL;
	if (!ompd || !omp_init(&o, ompd)) {
		if (ompd)
			omp_free(&o);
		json_array_foreach(json_object_get(bt, "threads"), i, th)
			by_module(th);
		json_object_set_new(bt, "openmp", json_pack("{s:s, s:s?}", "source", "module",
							    "why", why ? why : "no OMPD report"));
		return;
	}
	/* the frame address of a frame is its CFA less this (ompjoin.h) */
	uint64_t bias = !strcmp(jstr(bt, "arch") ?: "", "s390x") ? 160 : 0;
	json_array_foreach(json_object_get(bt, "threads"), i, th) {
		const json_t *oth = ompd_thread(&o, json_integer_value(json_object_get(th, "tid")));
		if (oth && json_is_true(json_object_get(oth, "openmp")))
			json_object_set_new(th, "openmp", join_thread(&o, oth, th, bias));
		else
			by_module(th);
	}
	if (continued)
		json_array_foreach(json_object_get(bt, "threads"), i, th)
			if (json_object_get(json_object_get(th, "openmp"), "tasks"))
				continue_thread(&o, bt, th);
	json_object_set_new(bt, "openmp", json_pack("{s:s}", "source", "ompd"));
	omp_free(&o);
}
