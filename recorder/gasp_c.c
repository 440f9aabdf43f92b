/* SPDX-License-Identifier: MIT */
/*
 * GASP C-model system events (gasp-1.5 section 4.3) from an ordinary C program:
 *  - GASP_C_FUNC: the -finstrument-functions hooks __cyg_profile_func_enter/exit (codeptr
 *    is the function, b the call site; no signature string is available: a = 0);
 *  - GASP_C_MALLOC / GASP_C_REALLOC / GASP_C_FREE: __wrap_malloc/realloc/free for a
 *    program linked with -Wl,--wrap=malloc,--wrap=realloc,--wrap=free (its own calls);
 *    built with -DCQ_REC_PRELOAD (libcoreq_rec_preload.so), malloc/realloc/free themselves,
 *    for LD_PRELOAD: every call of the process, forwarded to glibc's __libc_* entry points.
 * Start and End records as the spec's table 2 (End carries the result). The recorder
 * never allocates with malloc, so these hooks do not recurse.
 */
#include <stddef.h>

#include "gasp.h"
#include "ring.h"

#define RA() CQ_REC_PTR(__builtin_extract_return_addr(__builtin_return_address(0)))
#define ON() (!cq_rec_tls.gasp_off && (side_named || name_side()))

/* The producer string says "GASP" from the first C-model event (no gasp_init needed). */
static int side_named;
static CQ_REC_NOINSTR int name_side(void)
{
	cq_rec_producer_add("GASP");
	__atomic_store_n(&side_named, 1, __ATOMIC_RELAXED);
	return 1;
}

CQ_REC_EXPORT CQ_REC_NOINSTR void __cyg_profile_func_enter(void *this_fn, void *call_site);
CQ_REC_EXPORT CQ_REC_NOINSTR void __cyg_profile_func_exit(void *this_fn, void *call_site);

void __cyg_profile_func_enter(void *this_fn, void *call_site)
{
	if (ON())
		cq_rec_put(CQ_K_GASP_C_FUNC, CQ_REC_BEGIN, 0, CQ_REC_PTR(call_site), 0, CQ_REC_PTR(this_fn), 0);
}

void __cyg_profile_func_exit(void *this_fn, void *call_site)
{
	if (ON())
		cq_rec_put(CQ_K_GASP_C_FUNC, CQ_REC_END, 0, CQ_REC_PTR(call_site), 0, CQ_REC_PTR(this_fn), 0);
}

#ifdef CQ_REC_PRELOAD
extern void *__libc_malloc(size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
#define REAL_MALLOC __libc_malloc
#define REAL_REALLOC __libc_realloc
#define REAL_FREE __libc_free
#define W_MALLOC malloc
#define W_REALLOC realloc
#define W_FREE free
#else
#include <stdlib.h>
#define REAL_MALLOC malloc
#define REAL_REALLOC realloc
#define REAL_FREE free
#define W_MALLOC __wrap_malloc
#define W_REALLOC __wrap_realloc
#define W_FREE __wrap_free
#endif

CQ_REC_EXPORT CQ_REC_NOINSTR void *W_MALLOC(size_t nbytes);
CQ_REC_EXPORT CQ_REC_NOINSTR void *W_REALLOC(void *ptr, size_t size);
CQ_REC_EXPORT CQ_REC_NOINSTR void W_FREE(void *ptr);

void *W_MALLOC(size_t nbytes)
{
	uint64_t ra = RA();
	if (!ON())
		return REAL_MALLOC(nbytes);
	cq_rec_put(CQ_K_GASP_C_MALLOC, CQ_REC_BEGIN, nbytes, 0, 0, ra, 0);
	void *p = REAL_MALLOC(nbytes);
	cq_rec_put(CQ_K_GASP_C_MALLOC, CQ_REC_END, nbytes, CQ_REC_PTR(p), 0, ra, 0);
	return p;
}

void *W_REALLOC(void *ptr, size_t size)
{
	uint64_t ra = RA();
	if (!ON())
		return REAL_REALLOC(ptr, size);
	cq_rec_put(CQ_K_GASP_C_REALLOC, CQ_REC_BEGIN, CQ_REC_PTR(ptr), size, 0, ra, 0);
	void *p = REAL_REALLOC(ptr, size);
	cq_rec_put(CQ_K_GASP_C_REALLOC, CQ_REC_END, CQ_REC_PTR(ptr), size, CQ_REC_PTR(p), ra, 0);
	return p;
}

void W_FREE(void *ptr)
{
	uint64_t ra = RA();
	if (!ON()) {
		REAL_FREE(ptr);
		return;
	}
	cq_rec_put(CQ_K_GASP_C_FREE, CQ_REC_BEGIN, CQ_REC_PTR(ptr), 0, 0, ra, 0);
	REAL_FREE(ptr);
	cq_rec_put(CQ_K_GASP_C_FREE, CQ_REC_END, CQ_REC_PTR(ptr), 0, 0, ra, 0);
}
