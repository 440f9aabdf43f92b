/* SPDX-License-Identifier: MIT */
/**
 * @file kinds.h
 * The event kinds the recorder writes (index into coreq_rec.kinds[]), their names and what
 * flags hold. The names are also in the header of every recording, so a reader needs only
 * coreq_rec_format.h to list events; kind_fields.h says what a, b, c, d and codeptr mean.
 *
 * flags, all kinds: bits 0-1 CQ_REC_BEGIN / CQ_REC_END / CQ_REC_ATOMIC (0).
 * flags, OMPT kinds: bit 2 CQ_REC_F_BEGINEND (OMPT ompt_scope_beginend, stored as ATOMIC);
 *   bit 3 CQ_REC_F_STATE: bits 16-31 hold the thread's OMPT state (ompt_state_t, e.g.
 *   0x001 work_parallel, 0x011 wait_barrier_implicit_parallel, 0x041 wait_lock) at the event.
 * flags, GASP kinds: bits 8-31 the source line (linenum; 0 unknown, 0xffffff larger);
 *   bits 2-7 are 0, so bit 3 tells an OMPT state from a line number.
 *
 * Ids: parallel and task ids are assigned by the recorder (OMPT leaves them to the tool):
 * (thread number << 40) | per-thread counter, thread number as in the ring's thread_data,
 * so they are unique in the process and name the thread that created them. 0: none.
 *
 * What a, b, c, d and codeptr hold per kind: the table in kind_fields.h, data that `coreq
 * events` decodes records with (field names, enum and flag names as in omp-tools.h). Notes
 * the table refers to:
 *  (1) 0 where the runtime passes no parallel (LLVM: implicit task end, barrier end of a
 *      parallel region's implicit barrier).
 *  (2) GASP_C_FUNC from -finstrument-functions (__cyg_profile_func_enter/exit): codeptr =
 *      the function entered/left, b = the call site, a = 0 (no signature). From
 *      gasp_event_notify: a = funcsig, b = 0, codeptr = the return address of the
 *      gasp_event_notify call.
 *  (3) gasp_create_event names the event in kinds[] (a copy of name, truncated to 23
 *      bytes) while kinds are free (CQ_REC_KIND_USER_FIRST..63); later ones are recorded as
 *      gasp_user_event with the tag in a.
 * GASP: d = filename pointer (const char *, valid for the program's life per the spec, 0
 * unknown); codeptr = the address that raised the event.
 */
#ifndef COREQ_REC_KINDS_H
#define COREQ_REC_KINDS_H

enum cq_rec_kind {
	CQ_K_OMPT_THREAD_BEGIN = 0,
	CQ_K_OMPT_THREAD_END,
	CQ_K_OMPT_PARALLEL_BEGIN,
	CQ_K_OMPT_PARALLEL_END,
	CQ_K_OMPT_IMPLICIT_TASK,
	CQ_K_OMPT_TASK_CREATE,
	CQ_K_OMPT_TASK_SCHEDULE,
	CQ_K_OMPT_SYNC_REGION,
	CQ_K_OMPT_SYNC_REGION_WAIT,
	CQ_K_OMPT_REDUCTION,
	CQ_K_OMPT_MUTEX_ACQUIRE,
	CQ_K_OMPT_MUTEX_ACQUIRED,
	CQ_K_OMPT_MUTEX_RELEASED,
	CQ_K_OMPT_LOCK_INIT,
	CQ_K_OMPT_LOCK_DESTROY,
	CQ_K_OMPT_NEST_LOCK,
	CQ_K_OMPT_WORK,
	CQ_K_OMPT_DISPATCH,
	CQ_K_OMPT_MASKED,
	CQ_K_OMPT_TASK_DEPENDENCE,
	CQ_K_OMPT_DEPENDENCES,
	CQ_K_OMPT_CANCEL,
	CQ_K_OMPT_FLUSH,
	CQ_K_OMPT_CONTROL_TOOL,

	CQ_K_GASP_INIT = 32,
	CQ_K_GASP_C_FUNC,
	CQ_K_GASP_C_MALLOC,
	CQ_K_GASP_C_REALLOC,
	CQ_K_GASP_C_FREE,
	CQ_K_GASP_CONTROL,
	CQ_K_GASP_CREATE_EVENT,
	CQ_K_GASP_EVENT,
	CQ_K_GASP_USER_EVENT,

	CQ_REC_KIND_USER_FIRST = 41, /* ..CQ_REC_MAX_KINDS-1: named by gasp_create_event */
};

/* The name of each kind in the recording's header (kinds[]): "ompt_" + the OMPT callback
 * (ompt_callback_X), GASP's symbolic event names for the C model, "gasp_" + the GASP
 * function otherwise. One list for the writer (ring.c) and the reader (kind_fields.h). */
#define CQ_REC_KIND_NAMES(X) \
	X(CQ_K_OMPT_THREAD_BEGIN, "ompt_thread_begin") \
	X(CQ_K_OMPT_THREAD_END, "ompt_thread_end") \
	X(CQ_K_OMPT_PARALLEL_BEGIN, "ompt_parallel_begin") \
	X(CQ_K_OMPT_PARALLEL_END, "ompt_parallel_end") \
	X(CQ_K_OMPT_IMPLICIT_TASK, "ompt_implicit_task") \
	X(CQ_K_OMPT_TASK_CREATE, "ompt_task_create") \
	X(CQ_K_OMPT_TASK_SCHEDULE, "ompt_task_schedule") \
	X(CQ_K_OMPT_SYNC_REGION, "ompt_sync_region") \
	X(CQ_K_OMPT_SYNC_REGION_WAIT, "ompt_sync_region_wait") \
	X(CQ_K_OMPT_REDUCTION, "ompt_reduction") \
	X(CQ_K_OMPT_MUTEX_ACQUIRE, "ompt_mutex_acquire") \
	X(CQ_K_OMPT_MUTEX_ACQUIRED, "ompt_mutex_acquired") \
	X(CQ_K_OMPT_MUTEX_RELEASED, "ompt_mutex_released") \
	X(CQ_K_OMPT_LOCK_INIT, "ompt_lock_init") \
	X(CQ_K_OMPT_LOCK_DESTROY, "ompt_lock_destroy") \
	X(CQ_K_OMPT_NEST_LOCK, "ompt_nest_lock") \
	X(CQ_K_OMPT_WORK, "ompt_work") \
	X(CQ_K_OMPT_DISPATCH, "ompt_dispatch") \
	X(CQ_K_OMPT_MASKED, "ompt_masked") \
	X(CQ_K_OMPT_TASK_DEPENDENCE, "ompt_task_dependence") \
	X(CQ_K_OMPT_DEPENDENCES, "ompt_dependences") \
	X(CQ_K_OMPT_CANCEL, "ompt_cancel") \
	X(CQ_K_OMPT_FLUSH, "ompt_flush") \
	X(CQ_K_OMPT_CONTROL_TOOL, "ompt_control_tool") \
	X(CQ_K_GASP_INIT, "gasp_init") \
	X(CQ_K_GASP_C_FUNC, "GASP_C_FUNC") \
	X(CQ_K_GASP_C_MALLOC, "GASP_C_MALLOC") \
	X(CQ_K_GASP_C_REALLOC, "GASP_C_REALLOC") \
	X(CQ_K_GASP_C_FREE, "GASP_C_FREE") \
	X(CQ_K_GASP_CONTROL, "gasp_control") \
	X(CQ_K_GASP_CREATE_EVENT, "gasp_create_event") \
	X(CQ_K_GASP_EVENT, "gasp_event") \
	X(CQ_K_GASP_USER_EVENT, "gasp_user_event")

/* flags bits beyond CQ_REC_BEGIN / CQ_REC_END (coreq_rec_format.h) */
#define CQ_REC_F_BEGINEND 0x4u     /* OMPT ompt_scope_beginend (recorded as ATOMIC) */
#define CQ_REC_F_STATE 0x8u        /* OMPT: bits 16-31 hold the thread's ompt_state_t */
#define CQ_REC_STATE_SHIFT 16
#define CQ_REC_LINE_SHIFT 8        /* GASP: bits 8-31 hold the line number */
#define CQ_REC_LINE_MAX 0xffffffu

#endif
