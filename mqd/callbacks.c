/* SPDX-License-Identifier: MIT */
/* The MQD callbacks (spec 5.6), answered from a core. Everything is for the target: sizes
 * from the target's table, byte order by unit, symbols in the dynamic linker's order
 * (executable first: copy relocations), types from DWARF (corelib/types.h). One core per
 * child process, so the module keeps its state in statics. */
#include <stdlib.h>
#include <string.h>

#include "callbacks.h"
#include "base/decode.h"
#include "corelib/image.h"
#include "corelib/types.h"

/* Larger requests are refused: a DLL computes sizes from (possibly bad) target memory. */
#define MAX_ALLOC ((size_t)256 << 20)

static struct cq_mqd_stats *stats;
static struct cq_mqs_image_s image;
static struct cq_mqs_process_s process;

static void note(char (*list)[96], unsigned *n, const char *name)
{
	for (unsigned i = 0; i < *n; i++)
		if (strcmp(list[i], name) == 0)
			return;
	if (*n < CQ_MQD_MAX_NAMES)
		snprintf(list[(*n)++], 96, "%s", name);
}

/* ---- basic ---- */

static void *cb_malloc(size_t size)
{
	stats->allocs++;
	if (size > MAX_ALLOC) {
		stats->refused_allocs++;
		return NULL;
	}
	return malloc(size ? size : 1);
}

static void cb_free(void *p)
{
	free(p);
}

static void cb_dprints(const char *text)
{
	if (stats->log && text)
		fprintf(stats->log, "%s", text);
}

static char *cb_errorstring(int code)
{
	switch (code) {
	case CQ_MQS_OK: return (char *)"no error";
	case CQ_MQS_NO_INFORMATION: return (char *)"coreq: no information (symbol, type or memory not in the core)";
	case CQ_MQS_END_OF_LIST: return (char *)"end of list";
	}
	return (char *)"coreq: unknown error code";
}

static void cb_put_image_info(cq_mqs_image *img, cq_mqs_image_info *info)
{
	if (img)
		img->info = info;
}

static cq_mqs_image_info *cb_get_image_info(cq_mqs_image *img)
{
	return img ? img->info : NULL;
}

static void cb_put_process_info(cq_mqs_process *p, cq_mqs_process_info *info)
{
	if (p)
		p->info = info;
}

static cq_mqs_process_info *cb_get_process_info(cq_mqs_process *p)
{
	return p ? p->info : NULL;
}

/* ---- image ---- */

static void cb_type_sizes(cq_mqs_process *p, cq_mqs_target_type_sizes *s)
{
	if (!p || !s)
		return;
	const struct cq_target *t = p->core->target;
	s->short_size = t->ctypes[CQ_CTYPE_SHORT].size;
	s->int_size = t->ctypes[CQ_CTYPE_INT].size;
	s->long_size = t->ctypes[CQ_CTYPE_LONG].size;
	s->long_long_size = t->ctypes[CQ_CTYPE_LONG_LONG].size;
	s->pointer_size = t->ctypes[CQ_CTYPE_POINTER].size;
}

/* A symbol's address in linker order; false (and noted) if there is none. */
static bool lookup(cq_mqs_image *img, const char *name, uint64_t *ret)
{
	stats->lookups++;
	struct cq_symref ref;
	struct cq_error *err = img && name ? cq_core_lookup(img->core, name, NULL, &ref) : &cq_error_nomem;
	if (err) {
		if (err != &cq_error_nomem)
			cq_error_destroy(err);
		if (name)
			note(stats->missing_symbols, &stats->nmissing_symbols, name);
		return false;
	}
	*ret = ref.address;
	return true;
}

/* The runtimes' images, by the file name the target loaded (their base names up to ".so"):
 * by name, because what decides must cost nothing; opening a file to see what it defines is
 * the cost left out. */
static bool not_a_runtime(struct cq_core *core, const struct cq_image *img, void *arg)
{
	(void)core;
	(void)arg;
	static const char *const runtimes[] = {
		/* glibc (libc6, libc6-dbg's files) */
		"libc", "libm", "libmvec", "libpthread", "libdl", "librt", "libresolv", "libutil",
		"libanl", "libthread_db", "libBrokenLocale", "libc_malloc_debug",
		"libmemusage", "libpcprofile", "libSegFault",
		/* GCC's runtimes */
		"libgcc_s", "libstdc++", "libgfortran", "libquadmath", "libgomp", "libatomic",
	};
	const char *path = img->name ? img->name : "";
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	/* the dynamic linker: ld-linux-x86-64.so.2, ld-linux.so.2, ld64.so.1, ld.so.1, ... */
	if (!strncmp(base, "ld-linux", 8) || !strncmp(base, "ld64.so", 7) || !strncmp(base, "ld.so", 5) ||
	    !strncmp(base, "libnss_", 7))
		return false;
	size_t len = strstr(base, ".so") ? (size_t)(strstr(base, ".so") - base) : strlen(base);
	for (size_t i = 0; i < sizeof(runtimes) / sizeof(runtimes[0]); i++)
		if (strlen(runtimes[i]) == len && !strncmp(base, runtimes[i], len))
			return false;
	return true;
}

struct cq_error *cq__mqd_find_type(struct cq_core *core, const char *name, const struct cq_type **ret)
{
	return cq_core_find_type_among(core, name, not_a_runtime, NULL, ret);
}

static cq_mqs_type *cb_find_type(cq_mqs_image *img, char *name, int lang)
{
	stats->types++;
	const struct cq_type *t;
	struct cq_error *err = img && name ? cq__mqd_find_type(img->core, name, &t) : &cq_error_nomem;
	if (err) {
		if (err != &cq_error_nomem)
			cq_error_destroy(err);
		if (name)
			note(stats->missing_types, &stats->nmissing_types, name);
		return NULL;
	}
	return (cq_mqs_type *)t;
}

static int cb_field_offset(cq_mqs_type *type, char *field)
{
	const struct cq_type *t = (const struct cq_type *)type;
	int64_t off = t && field ? cq_type_field_offset(t, field) : -1;
	if (off < 0 && t && field) {
		char key[128];
		snprintf(key, sizeof(key), "%s.%s", cq_type_name(t), field);
		for (unsigned i = 0; i <= stats->nmissing_fields; i++) {
			if (i == stats->nmissing_fields) {
				if (stats->nmissing_fields < CQ_MQD_MAX_NAMES)
					snprintf(stats->missing_fields[stats->nmissing_fields++],
						 sizeof(stats->missing_fields[0]), "%s", key);
				break;
			}
			if (strcmp(stats->missing_fields[i], key) == 0)
				break;
		}
	}
	return off < 0 || off > INT32_MAX ? -1 : (int)off;
}

static int cb_sizeof(cq_mqs_type *type)
{
	int64_t size = type ? cq_type_size((const struct cq_type *)type) : -1;
	return size < 0 || size > INT32_MAX ? 0 : (int)size;
}

/* ---- process ---- */

static int cb_global_rank(cq_mqs_process *p)
{
	return p ? p->global_rank : CQ_MQS_INVALID_PROCESS;
}

static cq_mqs_image *cb_get_image(cq_mqs_process *p)
{
	return p ? p->image : NULL;
}

static int fetch(cq_mqs_process *p, uint64_t addr, int size, void *buf)
{
	stats->fetches++;
	if (!p || size < 0 || (!buf && size))
		return CQ_MQS_NO_INFORMATION;
	struct cq_error *err = cq_core_read(p->core, addr, buf, (size_t)size);
	if (err) {
		stats->fetch_faults++;
		cq_error_destroy(err);
		return CQ_MQS_NO_INFORMATION;
	}
	return CQ_MQS_OK;
}

static void cb_target_to_host(cq_mqs_process *p, const void *in, void *out, int size)
{
	if (!p || !in || !out || size <= 0)
		return;
	if (in != out)
		memmove(out, in, (size_t)size);
	/* one unit of @p size bytes (the DLL converts scalars one by one) */
	if (cq_target_needs_bswap(p->core->target) && (size == 2 || size == 4 || size == 8 || size == 16))
		cq_bswap_units(out, (size_t)size, 1);
}

/* The callbacks that carry mqs_taddr_t, for each width. */
#define CQ_MQD_WIDTH_CALLBACKS(W, taddr)                                                     \
	static int cb_find_function##W(cq_mqs_image *img, char *name, int lang, taddr *addr) \
	{                                                                                    \
		uint64_t a;                                                                  \
		if (!lookup(img, name, &a))                                                  \
			return CQ_MQS_NO_INFORMATION;                                        \
		if (addr) /* Open MPI passes NULL: it only asks whether the symbol exists */ \
			*addr = (taddr)a;                                                    \
		return CQ_MQS_OK;                                                            \
	}                                                                                    \
	static int cb_find_symbol##W(cq_mqs_image *img, char *name, taddr *addr)             \
	{                                                                                    \
		return cb_find_function##W(img, name, CQ_MQS_LANG_C, addr);                  \
	}                                                                                    \
	static int cb_fetch##W(cq_mqs_process *p, taddr addr, int size, void *buf)           \
	{                                                                                    \
		return fetch(p, (uint64_t)addr, size, buf);                                  \
	}                                                                                    \
	static const cq_mqs_image_callbacks##W image_cb##W = {                               \
		cb_type_sizes, cb_find_function##W, cb_find_symbol##W,                       \
		cb_find_type, cb_field_offset, cb_sizeof};                                   \
	static const cq_mqs_process_callbacks##W process_cb##W = {                           \
		cb_global_rank, cb_get_image, cb_fetch##W, cb_target_to_host};

CQ_MQD_WIDTH_CALLBACKS(4, uint32_t)
CQ_MQD_WIDTH_CALLBACKS(8, uint64_t)

struct cq_mqd_tables cq__mqd_callbacks(struct cq_core *core, unsigned width,
				       struct cq_mqd_stats *s, cq_mqs_image **img,
				       cq_mqs_process **proc)
{
	static const cq_mqs_basic_callbacks basic = {
		cb_malloc, cb_free, cb_dprints, cb_errorstring,
		cb_put_image_info, cb_get_image_info, cb_put_process_info, cb_get_process_info};
	stats = s;
	image = (struct cq_mqs_image_s){core, NULL};
	process = (struct cq_mqs_process_s){core, &image, NULL, CQ_MQS_INVALID_PROCESS};
	*img = &image;
	*proc = &process;
	if (width == 4)
		return (struct cq_mqd_tables){&basic, &image_cb4, &process_cb4};
	return (struct cq_mqd_tables){&basic, &image_cb8, &process_cb8};
}
