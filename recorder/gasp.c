/* SPDX-License-Identifier: MIT */
/*
 * The GASP side, model-independent API (gasp-1.5 section 3): gasp_init,
 * gasp_event_notify(VA), gasp_control, gasp_create_event. Events go to the calling
 * thread's ring; what the fields hold: kinds.h. The context is the thread's own (in TLS);
 * the ring is reached through TLS whatever context is passed, so a NULL context works.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>

#include "gasp.h"
#include "ring.h"

struct _gasp_context_S {
	int model;
	int control; /* last value given to gasp_control, 1 before */
};

static __thread struct _gasp_context_S thread_ctx __attribute__((tls_model("initial-exec"))) = { -1, 1 };

#define RA() CQ_REC_PTR(__builtin_extract_return_addr(__builtin_return_address(0)))

static inline CQ_REC_NOINSTR uint32_t gasp_flags(gasp_evttype_t type, int line)
{
	uint32_t f = type == GASP_START ? CQ_REC_BEGIN : type == GASP_END ? CQ_REC_END : CQ_REC_ATOMIC;
	uint32_t l = line <= 0 ? 0 : (uint32_t)line > CQ_REC_LINE_MAX ? CQ_REC_LINE_MAX : (uint32_t)line;
	return f | (l << CQ_REC_LINE_SHIFT);
}

/* User events: tag - GASP_C_USEREVT_START -> kind */
#define USER_KINDS 256
static uint8_t user_kind[USER_KINDS];
static uint32_t user_count;
static pthread_mutex_t user_lock = PTHREAD_MUTEX_INITIALIZER;

CQ_REC_EXPORT CQ_REC_NOINSTR gasp_context_t gasp_init(gasp_model_t srcmodel, int *argc, char ***argv)
{
	thread_ctx.model = (int)srcmodel;
	cq_rec_producer_add("GASP");
	cq_rec_put(CQ_K_GASP_INIT, CQ_REC_ATOMIC, (uint64_t)srcmodel, argc ? (uint64_t)(int64_t)*argc : 0,
	           argv ? CQ_REC_PTR(*argv) : 0, RA(), 0);
	return &thread_ctx;
}

static CQ_REC_NOINSTR void notify(uint64_t ra, unsigned int tag, gasp_evttype_t type, const char *file,
                                  int line, va_list ap)
{
	if (cq_rec_tls.gasp_off)
		return;
	uint32_t flags = gasp_flags(type, line);
	uint64_t fp = CQ_REC_PTR(file);
	uint64_t a = 0, b = 0, c = 0;
	uint32_t kind;
	switch (tag) {
	case GASP_C_FUNC:
		kind = CQ_K_GASP_C_FUNC;
		a = CQ_REC_PTR(va_arg(ap, const char *));
		break;
	case GASP_C_MALLOC:
		kind = CQ_K_GASP_C_MALLOC;
		a = va_arg(ap, size_t);
		if (type == GASP_END)
			b = CQ_REC_PTR(va_arg(ap, void *));
		break;
	case GASP_C_REALLOC:
		kind = CQ_K_GASP_C_REALLOC;
		a = CQ_REC_PTR(va_arg(ap, void *));
		b = va_arg(ap, size_t);
		if (type == GASP_END)
			c = CQ_REC_PTR(va_arg(ap, void *));
		break;
	case GASP_C_FREE:
		kind = CQ_K_GASP_C_FREE;
		a = CQ_REC_PTR(va_arg(ap, void *));
		break;
	default:
		a = tag;
		kind = CQ_K_GASP_EVENT;
		if (tag >= GASP_C_USEREVT_START && tag <= GASP_C_USEREVT_END) {
			uint32_t i = tag - GASP_C_USEREVT_START;
			uint32_t k = i < USER_KINDS ? __atomic_load_n(&user_kind[i], __ATOMIC_ACQUIRE) : 0;
			kind = k ? k : CQ_K_GASP_USER_EVENT;
		}
		break;
	}
	cq_rec_put(kind, flags, a, b, c, ra, fp);
}

CQ_REC_EXPORT CQ_REC_NOINSTR void gasp_event_notify(gasp_context_t context, unsigned int evttag,
                                                    gasp_evttype_t evttype, const char *filename,
                                                    int linenum, int colnum, ...)
{
	va_list ap;
	va_start(ap, colnum);
	notify(RA(), evttag, evttype, filename, linenum, ap);
	va_end(ap);
}

CQ_REC_EXPORT CQ_REC_NOINSTR void gasp_event_notifyVA(gasp_context_t context, unsigned int evttag,
                                                      gasp_evttype_t evttype, const char *filename,
                                                      int linenum, int colnum, va_list varargs)
{
	va_list ap;
	va_copy(ap, varargs);
	notify(RA(), evttag, evttype, filename, linenum, ap);
	va_end(ap);
}

CQ_REC_EXPORT CQ_REC_NOINSTR int gasp_control(gasp_context_t context, int on)
{
	int prev = thread_ctx.control;
	thread_ctx.control = on;
	cq_rec_tls.gasp_off = on == 0;
	/* recorded both ways, so the ring shows where measurement stopped and resumed */
	uint8_t off = cq_rec_tls.gasp_off;
	cq_rec_tls.gasp_off = 0;
	cq_rec_put(CQ_K_GASP_CONTROL, CQ_REC_ATOMIC, (uint64_t)(int64_t)on, (uint64_t)(int64_t)prev, 0, RA(), 0);
	cq_rec_tls.gasp_off = off;
	return prev;
}

CQ_REC_EXPORT CQ_REC_NOINSTR unsigned int gasp_create_event(gasp_context_t context, const char *name,
                                                            const char *desc)
{
	pthread_mutex_lock(&user_lock);
	uint32_t i = user_count;
	if (i < GASP_C_USEREVT_END - GASP_C_USEREVT_START)
		user_count++;
	int k = i < USER_KINDS ? cq_rec_kind_add(name) : -1;
	if (k > 0)
		__atomic_store_n(&user_kind[i], (uint8_t)k, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&user_lock);
	unsigned int tag = GASP_C_USEREVT_START + i;
	cq_rec_put(CQ_K_GASP_CREATE_EVENT, CQ_REC_ATOMIC, tag, k > 0 ? (uint64_t)k : 0, 0, RA(), 0);
	return tag;
}
