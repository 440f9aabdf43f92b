/* SPDX-License-Identifier: MIT */
/*
 * The OMPT side: an OpenMP 5.x first-party tool (omp-tools.h) that records the runtime's
 * events into the calling thread's ring. Loaded by the runtime through OMP_TOOL_LIBRARIES
 * (or found as ompt_start_tool when the program links libcoreq_rec.so), so it needs no
 * symbol of the runtime: it works with Debian's stripped libomp.
 *
 * What a, b, c, d, codeptr and flags hold per kind: the table in kinds.h. OMPT leaves
 * parallel and task ids to the tool; the recorder stores its own ids (cq_rec_new_id) in
 * the runtime's ompt_data_t of each parallel region and task, and its thread number in
 * thread_data.
 *
 * Environment: COREQ_REC_OMPT=0 declines the tool (the runtime then runs without OMPT);
 * COREQ_REC_OMPT_STATE=0 leaves the thread's OMPT state out of flags (saves one runtime
 * call per event).
 */
#if defined(__has_include)
#if __has_include(<omp-tools.h>)
#define CQ_REC_HAVE_OMPT 1
#endif
#endif

#ifdef CQ_REC_HAVE_OMPT
#include <omp-tools.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"

static ompt_get_state_t get_state;

#define CB CQ_REC_NOINSTR static void

static inline CQ_REC_NOINSTR uint32_t endpoint_flags(ompt_scope_endpoint_t ep)
{
	uint32_t f = ep == ompt_scope_begin ? CQ_REC_BEGIN : ep == ompt_scope_end ? CQ_REC_END : CQ_REC_ATOMIC;
	if ((int)ep == 3) /* ompt_scope_beginend (5.1) */
		f |= CQ_REC_F_BEGINEND;
	return f;
}

/* The thread's OMPT state in flags (bits 16-31) */
static inline CQ_REC_NOINSTR uint32_t st(uint32_t flags)
{
	if (get_state == NULL)
		return flags;
	int s = get_state(NULL);
	return flags | CQ_REC_F_STATE | ((uint32_t)s << CQ_REC_STATE_SHIFT);
}

static inline CQ_REC_NOINSTR uint64_t id_of(const ompt_data_t *d)
{
	return d ? d->value : 0;
}

/* The tool's id for a region or task the runtime hands over: assigned on first sight. */
static inline CQ_REC_NOINSTR uint64_t id_new(ompt_data_t *d)
{
	if (d == NULL)
		return 0;
	if (d->value == 0)
		d->value = cq_rec_new_id();
	return d->value;
}

#define CP(p) CQ_REC_PTR(p)

CB on_thread_begin(ompt_thread_t type, ompt_data_t *thread_data)
{
	uint32_t no = cq_rec_thread_no();
	if (thread_data)
		thread_data->value = no;
	cq_rec_put(CQ_K_OMPT_THREAD_BEGIN, st(CQ_REC_ATOMIC), (uint64_t)type, no, 0, 0, 0);
}

CB on_thread_end(ompt_data_t *thread_data)
{
	cq_rec_put(CQ_K_OMPT_THREAD_END, st(CQ_REC_ATOMIC), 0, id_of(thread_data), 0, 0, 0);
}

CB on_parallel_begin(ompt_data_t *task, const ompt_frame_t *frame, ompt_data_t *parallel,
                     unsigned int requested, int flags, const void *codeptr)
{
	uint64_t pid = id_new(parallel);
	cq_rec_put(CQ_K_OMPT_PARALLEL_BEGIN, st(CQ_REC_ATOMIC), pid, id_of(task), requested, CP(codeptr),
	           (uint32_t)flags);
}

CB on_parallel_end(ompt_data_t *parallel, ompt_data_t *task, int flags, const void *codeptr)
{
	cq_rec_put(CQ_K_OMPT_PARALLEL_END, st(CQ_REC_ATOMIC), id_of(parallel), id_of(task), 0, CP(codeptr),
	           (uint32_t)flags);
}

CB on_implicit_task(ompt_scope_endpoint_t ep, ompt_data_t *parallel, ompt_data_t *task,
                    unsigned int actual, unsigned int index, int flags)
{
	uint64_t tid = ep == ompt_scope_begin ? id_new(task) : id_of(task);
	cq_rec_put(CQ_K_OMPT_IMPLICIT_TASK, st(endpoint_flags(ep)), id_of(parallel), tid, actual, 0,
	           (uint64_t)index | ((uint64_t)(uint32_t)flags << 32));
}

CB on_task_create(ompt_data_t *task, const ompt_frame_t *frame, ompt_data_t *new_task, int flags,
                  int has_dependences, const void *codeptr)
{
	uint64_t nid = id_new(new_task);
	cq_rec_put(CQ_K_OMPT_TASK_CREATE, st(CQ_REC_ATOMIC), nid, id_of(task), (uint64_t)has_dependences,
	           CP(codeptr), (uint32_t)flags);
}

CB on_task_schedule(ompt_data_t *prior, ompt_task_status_t status, ompt_data_t *next)
{
	cq_rec_put(CQ_K_OMPT_TASK_SCHEDULE, st(CQ_REC_ATOMIC), id_of(next), id_of(prior), (uint64_t)status, 0, 0);
}

CB on_sync_region(ompt_sync_region_t kind, ompt_scope_endpoint_t ep, ompt_data_t *parallel,
                  ompt_data_t *task, const void *codeptr)
{
	cq_rec_put(CQ_K_OMPT_SYNC_REGION, st(endpoint_flags(ep)), id_of(parallel), id_of(task), (uint64_t)kind,
	           CP(codeptr), 0);
}

CB on_sync_region_wait(ompt_sync_region_t kind, ompt_scope_endpoint_t ep, ompt_data_t *parallel,
                       ompt_data_t *task, const void *codeptr)
{
	cq_rec_put(CQ_K_OMPT_SYNC_REGION_WAIT, st(endpoint_flags(ep)), id_of(parallel), id_of(task),
	           (uint64_t)kind, CP(codeptr), 0);
}

CB on_reduction(ompt_sync_region_t kind, ompt_scope_endpoint_t ep, ompt_data_t *parallel,
                ompt_data_t *task, const void *codeptr)
{
	cq_rec_put(CQ_K_OMPT_REDUCTION, st(endpoint_flags(ep)), id_of(parallel), id_of(task), (uint64_t)kind,
	           CP(codeptr), 0);
}

CB on_mutex_acquire(ompt_mutex_t kind, unsigned int hint, unsigned int impl, ompt_wait_id_t wait_id,
                    const void *codeptr)
{
	cq_rec_put(CQ_K_OMPT_MUTEX_ACQUIRE, st(CQ_REC_ATOMIC), wait_id, 0, (uint64_t)kind, CP(codeptr),
	           (uint64_t)hint | ((uint64_t)impl << 32));
}

CB on_mutex_acquired(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void *codeptr)
{
	cq_rec_put(CQ_K_OMPT_MUTEX_ACQUIRED, st(CQ_REC_ATOMIC), wait_id, 0, (uint64_t)kind, CP(codeptr), 0);
}

CB on_mutex_released(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void *codeptr)
{
	cq_rec_put(CQ_K_OMPT_MUTEX_RELEASED, st(CQ_REC_ATOMIC), wait_id, 0, (uint64_t)kind, CP(codeptr), 0);
}

CB on_lock_init(ompt_mutex_t kind, unsigned int hint, unsigned int impl, ompt_wait_id_t wait_id,
                const void *codeptr)
{
	cq_rec_put(CQ_K_OMPT_LOCK_INIT, st(CQ_REC_ATOMIC), wait_id, 0, (uint64_t)kind, CP(codeptr),
	           (uint64_t)hint | ((uint64_t)impl << 32));
}

CB on_lock_destroy(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void *codeptr)
{
	cq_rec_put(CQ_K_OMPT_LOCK_DESTROY, st(CQ_REC_ATOMIC), wait_id, 0, (uint64_t)kind, CP(codeptr), 0);
}

CB on_nest_lock(ompt_scope_endpoint_t ep, ompt_wait_id_t wait_id, const void *codeptr)
{
	cq_rec_put(CQ_K_OMPT_NEST_LOCK, st(endpoint_flags(ep)), wait_id, 0, 0, CP(codeptr), 0);
}

CB on_work(ompt_work_t wstype, ompt_scope_endpoint_t ep, ompt_data_t *parallel, ompt_data_t *task,
           uint64_t count, const void *codeptr)
{
	cq_rec_put(CQ_K_OMPT_WORK, st(endpoint_flags(ep)), id_of(parallel), id_of(task), (uint64_t)wstype,
	           CP(codeptr), count);
}

CB on_dispatch(ompt_data_t *parallel, ompt_data_t *task, ompt_dispatch_t kind, ompt_data_t instance)
{
	cq_rec_put(CQ_K_OMPT_DISPATCH, st(CQ_REC_ATOMIC), id_of(parallel), id_of(task), (uint64_t)kind, 0,
	           instance.value);
}

CB on_masked(ompt_scope_endpoint_t ep, ompt_data_t *parallel, ompt_data_t *task, const void *codeptr)
{
	cq_rec_put(CQ_K_OMPT_MASKED, st(endpoint_flags(ep)), id_of(parallel), id_of(task), 0, CP(codeptr), 0);
}

CB on_task_dependence(ompt_data_t *src, ompt_data_t *sink)
{
	cq_rec_put(CQ_K_OMPT_TASK_DEPENDENCE, st(CQ_REC_ATOMIC), id_of(sink), id_of(src), 0, 0, 0);
}

CB on_dependences(ompt_data_t *task, const ompt_dependence_t *deps, int ndeps)
{
	cq_rec_put(CQ_K_OMPT_DEPENDENCES, st(CQ_REC_ATOMIC), id_of(task), 0, (uint64_t)(int64_t)ndeps, 0, 0);
}

CB on_cancel(ompt_data_t *task, int flags, const void *codeptr)
{
	cq_rec_put(CQ_K_OMPT_CANCEL, st(CQ_REC_ATOMIC), id_of(task), 0, 0, CP(codeptr), (uint32_t)flags);
}

CB on_flush(ompt_data_t *thread_data, const void *codeptr)
{
	cq_rec_put(CQ_K_OMPT_FLUSH, st(CQ_REC_ATOMIC), 0, id_of(thread_data), 0, CP(codeptr), 0);
}

static CQ_REC_NOINSTR int on_control_tool(uint64_t command, uint64_t modifier, void *arg, const void *codeptr)
{
	cq_rec_put(CQ_K_OMPT_CONTROL_TOOL, st(CQ_REC_ATOMIC), 0, 0, command, CP(codeptr), modifier);
	return 0;
}

static CQ_REC_NOINSTR int env_off(const char *name)
{
	const char *s = getenv(name);
	return s != NULL && (strcmp(s, "0") == 0 || strcmp(s, "off") == 0 || strcmp(s, "no") == 0);
}

static CQ_REC_NOINSTR int tool_initialize(ompt_function_lookup_t lookup, int initial_device_num,
                                          ompt_data_t *tool_data)
{
	ompt_set_callback_t set_callback = (ompt_set_callback_t)lookup("ompt_set_callback");
	if (set_callback == NULL)
		return 0;
	if (!env_off("COREQ_REC_OMPT_STATE"))
		get_state = (ompt_get_state_t)lookup("ompt_get_state");
#define SET(event, fn) set_callback(event, (ompt_callback_t)(fn))
	SET(ompt_callback_thread_begin, on_thread_begin);
	SET(ompt_callback_thread_end, on_thread_end);
	SET(ompt_callback_parallel_begin, on_parallel_begin);
	SET(ompt_callback_parallel_end, on_parallel_end);
	SET(ompt_callback_implicit_task, on_implicit_task);
	SET(ompt_callback_task_create, on_task_create);
	SET(ompt_callback_task_schedule, on_task_schedule);
	SET(ompt_callback_sync_region, on_sync_region);
	SET(ompt_callback_sync_region_wait, on_sync_region_wait);
	SET(ompt_callback_reduction, on_reduction);
	SET(ompt_callback_mutex_acquire, on_mutex_acquire);
	SET(ompt_callback_mutex_acquired, on_mutex_acquired);
	SET(ompt_callback_mutex_released, on_mutex_released);
	SET(ompt_callback_lock_init, on_lock_init);
	SET(ompt_callback_lock_destroy, on_lock_destroy);
	SET(ompt_callback_nest_lock, on_nest_lock);
	SET(ompt_callback_work, on_work);
	SET(ompt_callback_dispatch, on_dispatch);
	SET(ompt_callback_masked, on_masked);
	SET(ompt_callback_task_dependence, on_task_dependence);
	SET(ompt_callback_dependences, on_dependences);
	SET(ompt_callback_cancel, on_cancel);
	SET(ompt_callback_flush, on_flush);
	SET(ompt_callback_control_tool, on_control_tool);
#undef SET
	cq_rec_producer_add("OMPT");
	return 1; /* keep the tool */
}

static CQ_REC_NOINSTR void tool_finalize(ompt_data_t *tool_data)
{
	/* the rings stay: a core taken after the runtime shut down still shows them */
}

CQ_REC_EXPORT CQ_REC_NOINSTR ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version,
                                                                        const char *runtime_version);

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version)
{
	static ompt_start_tool_result_t result = { tool_initialize, tool_finalize, { 0 } };
	if (env_off("COREQ_REC_OMPT"))
		return NULL;
	return &result;
}

#else
/* Built without omp-tools.h: the library is the GASP side only. */
typedef int cq_rec_no_ompt;
#endif
