/* SPDX-License-Identifier: MIT */
/**
 * @file gasp.h
 * GASP 1.5 (specs/gasp-1.5.txt) tool interface of the coreq flight recorder
 * (libcoreq_rec.so): the model-independent API of section 3 and the C-model system events
 * of section 4. Every event goes into the calling thread's ring, read back from a core by
 * `coreq events`.
 *
 * C programs get the C-model events without source changes:
 *   cc -finstrument-functions prog.c -Wl,--wrap=malloc,--wrap=realloc,--wrap=free \
 *      -L.../recorder -lcoreq_rec
 * (function entry/exit through __cyg_profile_func_enter/exit, malloc/realloc/free through
 * the linker's --wrap: only the program's own calls are recorded), or run any program
 * with LD_PRELOAD=.../libcoreq_rec_preload.so for every malloc/realloc/free of the process.
 * Or call gasp_event_notify() with the tags below.
 */
#ifndef COREQ_GASP_H
#define COREQ_GASP_H

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GASP_VERSION 20060914

typedef enum {
	GASP_MODEL_UPC,
	GASP_MODEL_TITANIUM,
	GASP_MODEL_CAF,
	GASP_MODEL_MPI,
	GASP_MODEL_SHMEM,
	GASP_MODEL_C /**< coreq extension: a plain C program (section 4 events only) */
} gasp_model_t;

typedef enum {
	GASP_START,
	GASP_END,
	GASP_ATOMIC,
} gasp_evttype_t;

struct _gasp_context_S;
typedef struct _gasp_context_S *gasp_context_t;

/* C-model system events (section 4.3), 32-bit tags; vararg arguments:
 *   GASP_C_FUNC     Start, End  const char *funcsig (or NULL)
 *   GASP_C_MALLOC   Start       size_t nbytes
 *                   End         size_t nbytes, void *returnptr
 *   GASP_C_REALLOC  Start       void *ptr, size_t size
 *                   End         void *ptr, size_t size, void *returnptr
 *   GASP_C_FREE     Start, End  void *ptr */
#define GASP_C_FUNC 0x43000001u
#define GASP_C_MALLOC 0x43000002u
#define GASP_C_REALLOC 0x43000003u
#define GASP_C_FREE 0x43000004u

/* Identifiers returned by gasp_create_event (unique in the process). */
#define GASP_C_USEREVT_START 0x43100000u
#define GASP_C_USEREVT_END 0x431fffffu

/** Per thread; returns this thread's context (a NULL context is also accepted by every
 * call: it means the calling thread's). Records gasp_init. */
gasp_context_t gasp_init(gasp_model_t srcmodel, int *argc, char ***argv);

void gasp_event_notify(gasp_context_t context, unsigned int evttag, gasp_evttype_t evttype,
                       const char *filename, int linenum, int colnum, ...);
void gasp_event_notifyVA(gasp_context_t context, unsigned int evttag, gasp_evttype_t evttype,
                         const char *filename, int linenum, int colnum, va_list varargs);

/** 0 stops recording GASP events of the calling thread, nonzero resumes; returns the last
 * value given on this thread, nonzero if never called. */
int gasp_control(gasp_context_t context, int on);

/** A new user event: its name (a copy, up to 23 bytes) becomes an event kind of the
 * recording while kinds are free. */
unsigned int gasp_create_event(gasp_context_t context, const char *name, const char *desc);

#ifdef __cplusplus
}
#endif

#endif
