/* SPDX-License-Identifier: MIT */
/**
 * @file kind_fields.h
 * What the record slots a, b, c, d and codeptr hold for each event kind the recorder
 * writes (kinds.h), as data: the field names and how each value reads (an id or address,
 * a count, a value of an OMPT or GASP enum, OMPT flag bits, a string in the process, a
 * code address). `coreq events` names every event's fields with this one table, in text
 * and JSON (events/fields.c); the recorder's callbacks (ompt.c, gasp.c, gasp_c.c) fill the
 * slots as it says. tests/unit/test_rec_kinds.c checks that every kind the recorder names
 * has an entry and that the enum values are omp-tools.h's.
 *
 * OMPT kinds take their field names from the OpenMP 5.x callback signatures
 * (omp-tools.h); the ids are the recorder's (kinds.h). Notes (1)-(3): kinds.h.
 *
 *  kind                   a                 b                    c                     d                              codeptr
 *  ompt_thread_begin      thread_type       thread_number        -                     -                              -
 *  ompt_thread_end        -                 thread_number        -                     -                              -
 *  ompt_parallel_begin    parallel_id       encountering_task_id requested_parallelism flags (parallel)               codeptr_ra
 *  ompt_parallel_end      parallel_id       encountering_task_id -                     flags (parallel)               codeptr_ra
 *  ompt_implicit_task     parallel_id (1)   task_id              actual_parallelism    index | flags (task) << 32     -
 *  ompt_task_create       new_task_id       encountering_task_id has_dependences       flags (task)                   codeptr_ra
 *  ompt_task_schedule     next_task_id      prior_task_id        prior_task_status     -                              -
 *  ompt_sync_region(_wait) parallel_id (1)  task_id              kind (sync region)    -                              codeptr_ra
 *  ompt_reduction         parallel_id       task_id              kind (sync region)    -                              codeptr_ra
 *  ompt_mutex_acquire     wait_id           -                    kind (mutex)          hint | impl << 32              codeptr_ra
 *  ompt_mutex_acquired    wait_id           -                    kind (mutex)          -                              codeptr_ra
 *  ompt_mutex_released    wait_id           -                    kind (mutex)          -                              codeptr_ra
 *  ompt_lock_init         wait_id           -                    kind (mutex)          hint | impl << 32              codeptr_ra
 *  ompt_lock_destroy      wait_id           -                    kind (mutex)          -                              codeptr_ra
 *  ompt_nest_lock         wait_id           -                    -                     -                              codeptr_ra
 *  ompt_work              parallel_id       task_id              work_type             count                          codeptr_ra
 *  ompt_dispatch          parallel_id       task_id              kind (dispatch)       instance                       -
 *  ompt_masked            parallel_id       task_id              -                     -                              codeptr_ra
 *  ompt_task_dependence   sink_task_id      src_task_id          -                     -                              -
 *  ompt_dependences       task_id           -                    ndeps                 -                              -
 *  ompt_cancel            task_id           -                    -                     flags (cancel)                 codeptr_ra
 *  ompt_flush             -                 thread_number        -                     -                              codeptr_ra
 *  ompt_control_tool      -                 -                    command               modifier                       codeptr_ra
 *  gasp_init              model             argc                 argv                  -                              caller
 *  GASP_C_FUNC            funcsig           call_site (2)        -                     file                           function (2)
 *  GASP_C_MALLOC          nbytes            returnptr (end)      -                     file                           caller
 *  GASP_C_REALLOC         ptr               size                 returnptr (end)       file                           caller
 *  GASP_C_FREE            ptr               -                    -                     file                           caller
 *  gasp_control           on                previous             -                     -                              caller
 *  gasp_create_event      evttag            kind (3)             -                     -                              caller
 *  gasp_event, gasp_user_event, user kinds (3): evttag           -                     file                           caller
 *
 * Besides the slots, flags: OMPT kinds with CQ_REC_F_STATE give "state" (ompt_state_t),
 * CQ_REC_F_BEGINEND gives "endpoint" beginend; GASP kinds with a file give "line".
 *
 * Header-only data for the reader (and the unit test): include it in one file.
 */
#ifndef COREQ_REC_KIND_FIELDS_H
#define COREQ_REC_KIND_FIELDS_H

#include <stddef.h>
#include <stdint.h>

#include "coreq_rec_format.h"
#include "kinds.h"

/** How a field's value reads. */
enum cq_rec_show {
	CQ_SHOW_HEX = 1,  /**< an id, address or pointer: "0x..." */
	CQ_SHOW_UINT,     /**< a count or number */
	CQ_SHOW_INT,      /**< a signed number (the recorder sign-extends C ints) */
	CQ_SHOW_ENUM,     /**< one value of @c names, else its number */
	CQ_SHOW_FLAGS,    /**< bits of @c names joined by '|', other bits in hex */
	CQ_SHOW_STRING,   /**< the address of a NUL-terminated string in the process */
	CQ_SHOW_CODE,     /**< a code address: its symbol */
	CQ_SHOW_KIND,     /**< an event kind of the recording: its name (0: none) */
};

/** The record slots a field can come from. */
enum cq_rec_slot { CQ_SLOT_A, CQ_SLOT_B, CQ_SLOT_C, CQ_SLOT_D, CQ_SLOT_CODEPTR, CQ_SLOTS };

/** A value of an enum or a flag bit, and its name. */
struct cq_rec_value_name {
	uint32_t value;
	const char *name;
};

/** One named field: bits [shift, shift + bits) of a slot (bits 0: to the top). */
struct cq_rec_field_desc {
	const char *name;   /**< NULL: end of the kind's fields */
	uint8_t slot;       /**< enum cq_rec_slot */
	uint8_t shift, bits;
	uint8_t show;       /**< enum cq_rec_show */
	uint8_t phases;     /**< 0: every record; else only records of these phases (CQ_PH_*) */
	const struct cq_rec_value_name *names; /**< ENUM, FLAGS: ended by a NULL name */
};

#define CQ_PH_END (1u << CQ_REC_END)

/* Enum values and flag bits (OpenMP 5.1 omp-tools.h, omp.h; GASP 1.5 gasp.h), as lists
 * X(prefix, name, value): the names shown are without the prefix. */
#define CQ_REC_OMPT_THREAD(X) \
	X(ompt_thread_, initial, 1) X(ompt_thread_, worker, 2) X(ompt_thread_, other, 3) \
	X(ompt_thread_, unknown, 4)
#define CQ_REC_OMPT_PARALLEL_FLAG(X) \
	X(ompt_parallel_, invoker_program, 0x1) X(ompt_parallel_, invoker_runtime, 0x2) \
	X(ompt_parallel_, league, 0x40000000) X(ompt_parallel_, team, 0x80000000)
#define CQ_REC_OMPT_TASK_FLAG(X) \
	X(ompt_task_, initial, 0x1) X(ompt_task_, implicit, 0x2) X(ompt_task_, explicit, 0x4) \
	X(ompt_task_, target, 0x8) X(ompt_task_, taskwait, 0x10) X(ompt_task_, undeferred, 0x08000000) \
	X(ompt_task_, untied, 0x10000000) X(ompt_task_, final, 0x20000000) \
	X(ompt_task_, mergeable, 0x40000000) X(ompt_task_, merged, 0x80000000)
#define CQ_REC_OMPT_TASK_STATUS(X) \
	X(ompt_task_, complete, 1) X(ompt_task_, yield, 2) X(ompt_task_, cancel, 3) \
	X(ompt_task_, detach, 4) X(ompt_task_, early_fulfill, 5) X(ompt_task_, late_fulfill, 6) \
	X(ompt_task_, switch, 7) X(ompt_, taskwait_complete, 8)
#define CQ_REC_OMPT_SYNC_REGION(X) \
	X(ompt_sync_region_, barrier, 1) X(ompt_sync_region_, barrier_implicit, 2) \
	X(ompt_sync_region_, barrier_explicit, 3) X(ompt_sync_region_, barrier_implementation, 4) \
	X(ompt_sync_region_, taskwait, 5) X(ompt_sync_region_, taskgroup, 6) \
	X(ompt_sync_region_, reduction, 7) X(ompt_sync_region_, barrier_implicit_workshare, 8) \
	X(ompt_sync_region_, barrier_implicit_parallel, 9) X(ompt_sync_region_, barrier_teams, 10)
#define CQ_REC_OMPT_MUTEX(X) \
	X(ompt_mutex_, lock, 1) X(ompt_mutex_, test_lock, 2) X(ompt_mutex_, nest_lock, 3) \
	X(ompt_mutex_, test_nest_lock, 4) X(ompt_mutex_, critical, 5) X(ompt_mutex_, atomic, 6) \
	X(ompt_mutex_, ordered, 7)
#define CQ_REC_OMPT_WORK(X) \
	X(ompt_work_, loop, 1) X(ompt_work_, sections, 2) X(ompt_work_, single_executor, 3) \
	X(ompt_work_, single_other, 4) X(ompt_work_, workshare, 5) X(ompt_work_, distribute, 6) \
	X(ompt_work_, taskloop, 7) X(ompt_work_, scope, 8)
#define CQ_REC_OMPT_DISPATCH(X) X(ompt_dispatch_, iteration, 1) X(ompt_dispatch_, section, 2)
#define CQ_REC_OMPT_CANCEL_FLAG(X) \
	X(ompt_cancel_, parallel, 0x01) X(ompt_cancel_, sections, 0x02) X(ompt_cancel_, loop, 0x04) \
	X(ompt_cancel_, taskgroup, 0x08) X(ompt_cancel_, activated, 0x10) X(ompt_cancel_, detected, 0x20) \
	X(ompt_cancel_, discarded_task, 0x40)
#define CQ_REC_OMPT_STATE(X) \
	X(ompt_state_, work_serial, 0x000) X(ompt_state_, work_parallel, 0x001) \
	X(ompt_state_, work_reduction, 0x002) X(ompt_state_, wait_barrier, 0x010) \
	X(ompt_state_, wait_barrier_implicit_parallel, 0x011) \
	X(ompt_state_, wait_barrier_implicit_workshare, 0x012) \
	X(ompt_state_, wait_barrier_implicit, 0x013) X(ompt_state_, wait_barrier_explicit, 0x014) \
	X(ompt_state_, wait_barrier_implementation, 0x015) X(ompt_state_, wait_barrier_teams, 0x016) \
	X(ompt_state_, wait_taskwait, 0x020) X(ompt_state_, wait_taskgroup, 0x021) \
	X(ompt_state_, wait_mutex, 0x040) X(ompt_state_, wait_lock, 0x041) \
	X(ompt_state_, wait_critical, 0x042) X(ompt_state_, wait_atomic, 0x043) \
	X(ompt_state_, wait_ordered, 0x044) X(ompt_state_, wait_target, 0x080) \
	X(ompt_state_, wait_target_map, 0x081) X(ompt_state_, wait_target_update, 0x082) \
	X(ompt_state_, idle, 0x100) X(ompt_state_, overhead, 0x101) X(ompt_state_, undefined, 0x102)
/* omp.h (not in omp-tools.h): omp_sync_hint_t, omp_control_tool_t */
#define CQ_REC_OMP_SYNC_HINT(X) \
	X(omp_sync_hint_, none, 0) X(omp_sync_hint_, uncontended, 1) X(omp_sync_hint_, contended, 2) \
	X(omp_sync_hint_, nonspeculative, 4) X(omp_sync_hint_, speculative, 8)
#define CQ_REC_OMP_CONTROL_TOOL(X) \
	X(omp_control_tool_, start, 1) X(omp_control_tool_, pause, 2) X(omp_control_tool_, flush, 3) \
	X(omp_control_tool_, end, 4)
#define CQ_REC_GASP_MODEL(X) \
	X(GASP_MODEL_, UPC, 0) X(GASP_MODEL_, TITANIUM, 1) X(GASP_MODEL_, CAF, 2) X(GASP_MODEL_, MPI, 3) \
	X(GASP_MODEL_, SHMEM, 4) X(GASP_MODEL_, C, 5)

#define CQ_REC_VALUE_NAME(prefix, name, value) { value, #name },
#define CQ_REC_NAMES(var, list) \
	static const struct cq_rec_value_name var[] = { list(CQ_REC_VALUE_NAME) { 0, NULL } };
CQ_REC_NAMES(cq_rec_thread_names, CQ_REC_OMPT_THREAD)
CQ_REC_NAMES(cq_rec_parallel_flag_names, CQ_REC_OMPT_PARALLEL_FLAG)
CQ_REC_NAMES(cq_rec_task_flag_names, CQ_REC_OMPT_TASK_FLAG)
CQ_REC_NAMES(cq_rec_task_status_names, CQ_REC_OMPT_TASK_STATUS)
CQ_REC_NAMES(cq_rec_sync_region_names, CQ_REC_OMPT_SYNC_REGION)
CQ_REC_NAMES(cq_rec_mutex_names, CQ_REC_OMPT_MUTEX)
CQ_REC_NAMES(cq_rec_work_names, CQ_REC_OMPT_WORK)
CQ_REC_NAMES(cq_rec_dispatch_names, CQ_REC_OMPT_DISPATCH)
CQ_REC_NAMES(cq_rec_cancel_flag_names, CQ_REC_OMPT_CANCEL_FLAG)
CQ_REC_NAMES(cq_rec_state_names, CQ_REC_OMPT_STATE)
CQ_REC_NAMES(cq_rec_sync_hint_names, CQ_REC_OMP_SYNC_HINT)
CQ_REC_NAMES(cq_rec_control_tool_names, CQ_REC_OMP_CONTROL_TOOL)
CQ_REC_NAMES(cq_rec_gasp_model_names, CQ_REC_GASP_MODEL)

/** The fields of one kind (at most 6: the slots and two halves of d). */
struct cq_rec_kind_desc {
	struct cq_rec_field_desc f[7];
};

#define CQ_F(n, s, how) { n, CQ_SLOT_##s, 0, 0, how, 0, NULL }
#define CQ_F_HEX(n, s) CQ_F(n, s, CQ_SHOW_HEX)
#define CQ_F_UINT(n, s) CQ_F(n, s, CQ_SHOW_UINT)
#define CQ_F_INT(n, s) CQ_F(n, s, CQ_SHOW_INT)
#define CQ_F_STR(n, s) CQ_F(n, s, CQ_SHOW_STRING)
#define CQ_F_CODE(n, s) CQ_F(n, s, CQ_SHOW_CODE)
#define CQ_F_ENUM(n, s, names) { n, CQ_SLOT_##s, 0, 0, CQ_SHOW_ENUM, 0, names }
#define CQ_F_FLAGS(n, s, names) { n, CQ_SLOT_##s, 0, 0, CQ_SHOW_FLAGS, 0, names }
/* the low and high 32 bits of a slot */
#define CQ_F_LO(n, s, how, names) { n, CQ_SLOT_##s, 0, 32, how, 0, names }
#define CQ_F_HI(n, s, how, names) { n, CQ_SLOT_##s, 32, 32, how, 0, names }
#define CQ_F_END_ONLY(n, s, how) { n, CQ_SLOT_##s, 0, 0, how, CQ_PH_END, NULL }
#define CQ_F_CODEPTR_RA CQ_F_CODE("codeptr_ra", CODEPTR)

/** Per kind (CQ_K_*); [CQ_REC_KIND_USER_FIRST]: the kinds gasp_create_event names. */
static const struct cq_rec_kind_desc cq_rec_kind_descs[CQ_REC_KIND_USER_FIRST + 1] = {
	[CQ_K_OMPT_THREAD_BEGIN] = {{CQ_F_ENUM("thread_type", A, cq_rec_thread_names),
				     CQ_F_UINT("thread_number", B)}},
	[CQ_K_OMPT_THREAD_END] = {{CQ_F_UINT("thread_number", B)}},
	[CQ_K_OMPT_PARALLEL_BEGIN] = {{CQ_F_HEX("parallel_id", A), CQ_F_HEX("encountering_task_id", B),
				       CQ_F_UINT("requested_parallelism", C),
				       CQ_F_FLAGS("flags", D, cq_rec_parallel_flag_names), CQ_F_CODEPTR_RA}},
	[CQ_K_OMPT_PARALLEL_END] = {{CQ_F_HEX("parallel_id", A), CQ_F_HEX("encountering_task_id", B),
				     CQ_F_FLAGS("flags", D, cq_rec_parallel_flag_names), CQ_F_CODEPTR_RA}},
	[CQ_K_OMPT_IMPLICIT_TASK] = {{CQ_F_HEX("parallel_id", A), CQ_F_HEX("task_id", B),
				      CQ_F_UINT("actual_parallelism", C), CQ_F_LO("index", D, CQ_SHOW_UINT, NULL),
				      CQ_F_HI("flags", D, CQ_SHOW_FLAGS, cq_rec_task_flag_names)}},
	[CQ_K_OMPT_TASK_CREATE] = {{CQ_F_HEX("new_task_id", A), CQ_F_HEX("encountering_task_id", B),
				    CQ_F_UINT("has_dependences", C), CQ_F_FLAGS("flags", D, cq_rec_task_flag_names),
				    CQ_F_CODEPTR_RA}},
	[CQ_K_OMPT_TASK_SCHEDULE] = {{CQ_F_HEX("next_task_id", A), CQ_F_HEX("prior_task_id", B),
				      CQ_F_ENUM("prior_task_status", C, cq_rec_task_status_names)}},
	[CQ_K_OMPT_SYNC_REGION] = {{CQ_F_HEX("parallel_id", A), CQ_F_HEX("task_id", B),
				    CQ_F_ENUM("kind", C, cq_rec_sync_region_names), CQ_F_CODEPTR_RA}},
	[CQ_K_OMPT_SYNC_REGION_WAIT] = {{CQ_F_HEX("parallel_id", A), CQ_F_HEX("task_id", B),
					 CQ_F_ENUM("kind", C, cq_rec_sync_region_names), CQ_F_CODEPTR_RA}},
	[CQ_K_OMPT_REDUCTION] = {{CQ_F_HEX("parallel_id", A), CQ_F_HEX("task_id", B),
				  CQ_F_ENUM("kind", C, cq_rec_sync_region_names), CQ_F_CODEPTR_RA}},
	[CQ_K_OMPT_MUTEX_ACQUIRE] = {{CQ_F_HEX("wait_id", A), CQ_F_ENUM("kind", C, cq_rec_mutex_names),
				      CQ_F_LO("hint", D, CQ_SHOW_FLAGS, cq_rec_sync_hint_names),
				      CQ_F_HI("impl", D, CQ_SHOW_UINT, NULL), CQ_F_CODEPTR_RA}},
	[CQ_K_OMPT_MUTEX_ACQUIRED] = {{CQ_F_HEX("wait_id", A), CQ_F_ENUM("kind", C, cq_rec_mutex_names),
				       CQ_F_CODEPTR_RA}},
	[CQ_K_OMPT_MUTEX_RELEASED] = {{CQ_F_HEX("wait_id", A), CQ_F_ENUM("kind", C, cq_rec_mutex_names),
				       CQ_F_CODEPTR_RA}},
	[CQ_K_OMPT_LOCK_INIT] = {{CQ_F_HEX("wait_id", A), CQ_F_ENUM("kind", C, cq_rec_mutex_names),
				  CQ_F_LO("hint", D, CQ_SHOW_FLAGS, cq_rec_sync_hint_names),
				  CQ_F_HI("impl", D, CQ_SHOW_UINT, NULL), CQ_F_CODEPTR_RA}},
	[CQ_K_OMPT_LOCK_DESTROY] = {{CQ_F_HEX("wait_id", A), CQ_F_ENUM("kind", C, cq_rec_mutex_names),
				     CQ_F_CODEPTR_RA}},
	[CQ_K_OMPT_NEST_LOCK] = {{CQ_F_HEX("wait_id", A), CQ_F_CODEPTR_RA}},
	[CQ_K_OMPT_WORK] = {{CQ_F_HEX("parallel_id", A), CQ_F_HEX("task_id", B),
			     CQ_F_ENUM("work_type", C, cq_rec_work_names), CQ_F_UINT("count", D), CQ_F_CODEPTR_RA}},
	[CQ_K_OMPT_DISPATCH] = {{CQ_F_HEX("parallel_id", A), CQ_F_HEX("task_id", B),
				 CQ_F_ENUM("kind", C, cq_rec_dispatch_names), CQ_F_HEX("instance", D)}},
	[CQ_K_OMPT_MASKED] = {{CQ_F_HEX("parallel_id", A), CQ_F_HEX("task_id", B), CQ_F_CODEPTR_RA}},
	[CQ_K_OMPT_TASK_DEPENDENCE] = {{CQ_F_HEX("sink_task_id", A), CQ_F_HEX("src_task_id", B)}},
	[CQ_K_OMPT_DEPENDENCES] = {{CQ_F_HEX("task_id", A), CQ_F_INT("ndeps", C)}},
	[CQ_K_OMPT_CANCEL] = {{CQ_F_HEX("task_id", A), CQ_F_FLAGS("flags", D, cq_rec_cancel_flag_names),
			       CQ_F_CODEPTR_RA}},
	[CQ_K_OMPT_FLUSH] = {{CQ_F_UINT("thread_number", B), CQ_F_CODEPTR_RA}},
	[CQ_K_OMPT_CONTROL_TOOL] = {{CQ_F_ENUM("command", C, cq_rec_control_tool_names),
				     CQ_F_UINT("modifier", D), CQ_F_CODEPTR_RA}},
	[CQ_K_GASP_INIT] = {{CQ_F_ENUM("model", A, cq_rec_gasp_model_names), CQ_F_INT("argc", B),
			     CQ_F_HEX("argv", C), CQ_F_CODE("caller", CODEPTR)}},
	[CQ_K_GASP_C_FUNC] = {{CQ_F_STR("funcsig", A), CQ_F_CODE("call_site", B), CQ_F_STR("file", D),
			       CQ_F_CODE("function", CODEPTR)}},
	[CQ_K_GASP_C_MALLOC] = {{CQ_F_UINT("nbytes", A), CQ_F_END_ONLY("returnptr", B, CQ_SHOW_HEX),
				 CQ_F_STR("file", D), CQ_F_CODE("caller", CODEPTR)}},
	[CQ_K_GASP_C_REALLOC] = {{CQ_F_HEX("ptr", A), CQ_F_UINT("size", B),
				  CQ_F_END_ONLY("returnptr", C, CQ_SHOW_HEX), CQ_F_STR("file", D),
				  CQ_F_CODE("caller", CODEPTR)}},
	[CQ_K_GASP_C_FREE] = {{CQ_F_HEX("ptr", A), CQ_F_STR("file", D), CQ_F_CODE("caller", CODEPTR)}},
	[CQ_K_GASP_CONTROL] = {{CQ_F_INT("on", A), CQ_F_INT("previous", B), CQ_F_CODE("caller", CODEPTR)}},
	[CQ_K_GASP_CREATE_EVENT] = {{CQ_F_HEX("evttag", A), CQ_F("kind", B, CQ_SHOW_KIND), CQ_F_CODE("caller", CODEPTR)}},
	[CQ_K_GASP_EVENT] = {{CQ_F_HEX("evttag", A), CQ_F_STR("file", D), CQ_F_CODE("caller", CODEPTR)}},
	[CQ_K_GASP_USER_EVENT] = {{CQ_F_HEX("evttag", A), CQ_F_STR("file", D), CQ_F_CODE("caller", CODEPTR)}},
	[CQ_REC_KIND_USER_FIRST] = {{CQ_F_HEX("evttag", A), CQ_F_STR("file", D), CQ_F_CODE("caller", CODEPTR)}},
};

/* The name the recorder gives kind k (CQ_REC_KIND_NAMES), NULL for numbers it does not use. */
#define CQ_REC_KIND_NAME_INIT(k, n) [k] = n,
static const char *const cq_rec_kind_names[CQ_REC_KIND_USER_FIRST] = {
	CQ_REC_KIND_NAMES(CQ_REC_KIND_NAME_INIT)
};

/** Whether kind @p k is an OMPT kind (flags hold a state) rather than a GASP one (a line). */
static inline int cq_rec_kind_is_ompt(unsigned k)
{
	return k < CQ_K_GASP_INIT;
}

#endif
