/* SPDX-License-Identifier: MIT */
/* Loading libbfd on first use (bfd_lib.h). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>

#include "bfd_lib.h"
#include "cq_libbfd_path.h" /* CQ_LIBBFD_PATH, written by the Makefile */
#include "plugin/plugin_load.h"

static struct cq_bfd api;
static const struct cq_bfd *loaded;
static char why[1024];

static void fail(const char *what)
{
	snprintf(why, sizeof(why), "libbfd (%s) cannot be loaded: %s", CQ_LIBBFD_PATH, what);
}

static void load(void)
{
	char lwhy[512];
	void *h = cq_plugin_load_fixed(CQ_LIBBFD_PATH, lwhy, sizeof(lwhy));
	if (!h) {
		fail(lwhy);
		return;
	}
	unsigned int (*init)(void);
#define SYM(var, name)                                       \
	if (!(*(void **)&(var) = dlsym(h, name))) {          \
		fail("it has no " name);                     \
		return;                                      \
	}
	SYM(init, "bfd_init");
	SYM(api.fdopenr, "bfd_fdopenr");
	SYM(api.check_format, "bfd_check_format");
	SYM(api.printable_name, "bfd_printable_name");
	SYM(api.get_error, "bfd_get_error");
	SYM(api.errmsg, "bfd_errmsg");
	SYM(api.close, "bfd_close");
	SYM(api.demangle, "bfd_demangle");
#undef SYM
	/* the library and bfd.h must agree on sizes and layout (bfd_init's own check) */
	if (init() != BFD_INIT_MAGIC) {
		fail("it does not match the bfd.h coreq was built with");
		return;
	}
	loaded = &api;
}

const struct cq_bfd *cq__bfd(const char **err_ret)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, load);
	if (!loaded && err_ret)
		*err_ret = why;
	return loaded;
}
