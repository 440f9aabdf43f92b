/* SPDX-License-Identifier: MIT */
/**
 * @file kinds.h
 * The event kinds the recorder writes (index into coreq_rec.kinds[]) and what the record
 * fields mean for each. The names are also in the header of every recording, so a reader
 * needs only coreq_rec_format.h; this table is the documentation of a, b, c, d, codeptr
 * and flags per kind.
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
 * OMPT (OpenMP 5.x omp-tools.h callbacks; enum values as in omp-tools.h)
 *  kind                   flags  a               b                 c                   d                          codeptr
 *  ompt_thread_begin      A      thread_type     thread number     -                   -                          -
 *  ompt_thread_end        A      -               thread number     -                   -                          -
 *  ompt_parallel_begin    A      parallel id     encountering task requested_parallel. parallel flags             codeptr_ra
 *  ompt_parallel_end      A      parallel id     encountering task -                   parallel flags             codeptr_ra
 *  ompt_implicit_task     B/E    parallel id(1)  implicit task id  actual_parallelism  index | task flags << 32   -
 *  ompt_task_create       A      new task id     encountering task has_dependences     task flags                 codeptr_ra
 *  ompt_task_schedule     A      next task id    prior task id     prior_task_status   -                          -
 *  ompt_sync_region       B/E    parallel id(1)  task id           ompt_sync_region_t  -                          codeptr_ra
 *  ompt_sync_region_wait  B/E    parallel id(1)  task id           ompt_sync_region_t  -                          codeptr_ra
 *  ompt_reduction         B/E    parallel id     task id           ompt_sync_region_t  -                          codeptr_ra
 *  ompt_mutex_acquire     A      wait id         -                 ompt_mutex_t        hint | impl << 32          codeptr_ra
 *  ompt_mutex_acquired    A      wait id         -                 ompt_mutex_t        -                          codeptr_ra
 *  ompt_mutex_released    A      wait id         -                 ompt_mutex_t        -                          codeptr_ra
 *  ompt_lock_init         A      wait id         -                 ompt_mutex_t        hint | impl << 32          codeptr_ra
 *  ompt_lock_destroy      A      wait id         -                 ompt_mutex_t        -                          codeptr_ra
 *  ompt_nest_lock         B/E    wait id         -                 -                   -                          codeptr_ra
 *  ompt_work              B/E    parallel id     task id           ompt_work_t         count                      codeptr_ra
 *  ompt_dispatch          A      parallel id     task id           ompt_dispatch_t     instance (iteration, ...)  -
 *  ompt_masked            B/E    parallel id     task id           -                   -                          codeptr_ra
 *  ompt_task_dependence   A      sink task id    source task id    -                   -                          -
 *  ompt_dependences       A      task id         -                 ndeps               -                          -
 *  ompt_cancel            A      task id         -                 -                   cancel flags               codeptr_ra
 *  ompt_flush             A      -               thread number     -                   -                          codeptr_ra
 *  ompt_control_tool      A      -               -                 command             modifier                   codeptr_ra
 *  (1) 0 where the runtime passes no parallel (LLVM: implicit task end, barrier end of a
 *      parallel region's implicit barrier).
 *
 * GASP (gasp.h; d = filename pointer (const char *, valid for the program's life per the
 * spec, 0 unknown); codeptr = the address that raised the event)
 *  kind                   flags  a               b                 c                   d          codeptr
 *  gasp_init              A      gasp_model_t    argc              argv (pointer)      -          caller
 *  GASP_C_FUNC            B/E    funcsig (char*) call site (2)     -                   filename   function (2)
 *  GASP_C_MALLOC          B      nbytes          -                 -                   filename   caller
 *  GASP_C_MALLOC          E      nbytes          returnptr         -                   filename   caller
 *  GASP_C_REALLOC         B      ptr             size              -                   filename   caller
 *  GASP_C_REALLOC         E      ptr             size              returnptr           filename   caller
 *  GASP_C_FREE            B/E    ptr             -                 -                   filename   caller
 *  gasp_control           A      on              previous value    -                   -          caller
 *  gasp_create_event      A      evttag          kind index (3)    -                   -          caller
 *  gasp_event             B/E/A  evttag          -                 -                   filename   caller   (tags with no kind)
 *  <user event name>      B/E/A  evttag          -                 -                   filename   caller   (3)
 *  (2) from -finstrument-functions (__cyg_profile_func_enter/exit): codeptr = the function
 *      entered/left, b = the call site, a = 0 (no signature). From gasp_event_notify:
 *      a = funcsig, b = 0, codeptr = the return address of the gasp_event_notify call.
 *  (3) gasp_create_event names the event in kinds[] (a copy of name, truncated to 23
 *      bytes) while kinds are free (CQ_REC_KIND_USER_FIRST..63); later ones are recorded as
 *      gasp_user_event with the tag in a.
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

/* flags bits beyond CQ_REC_BEGIN / CQ_REC_END (coreq_rec_format.h) */
#define CQ_REC_F_BEGINEND 0x4u     /* OMPT ompt_scope_beginend (recorded as ATOMIC) */
#define CQ_REC_F_STATE 0x8u        /* OMPT: bits 16-31 hold the thread's ompt_state_t */
#define CQ_REC_STATE_SHIFT 16
#define CQ_REC_LINE_SHIFT 8        /* GASP: bits 8-31 hold the line number */
#define CQ_REC_LINE_MAX 0xffffffu

#endif
