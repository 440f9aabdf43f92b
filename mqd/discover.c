/* SPDX-License-Identifier: MIT */
/* Which MQD DLL to load: --mqd-plugin, else the path in the core's MPIR_dll_name (spec
 * 5.1), searched only in trusted directories (plugin/plugin_path.h). The name is data
 * from a possibly hostile process: it is never loaded from elsewhere without consent. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corelib/image.h"
#include "plugin/plugin_path.h"
#include "plugin/self_path.h"
#include "discover.h"

/* Where MPI implementations of Debian put their DLLs (host architecture: a DLL for another
 * one fails the host check anyway). */
static const char *const patterns[] = {
	"/usr/lib/*/openmpi/lib/openmpi3", "/usr/lib/*/openmpi/lib/openmpi",
	"/usr/lib/*/openmpi/lib", "/usr/lib64/openmpi/lib", NULL};

/* MPIR_dll_name: a char array in Open MPI (its symbol is larger than a pointer); a
 * pointer to the string is accepted too. */
static struct cq_error *read_dll_name(struct cq_core *core, char **ret, char **image)
{
	struct cq_symref ref;
	struct cq_error *err = cq_core_lookup(core, "MPIR_dll_name", NULL, &ref);
	if (err)
		return cq_error_wrap(err, "no MPI library with a message-queue DLL found (MPIR_dll_name is not in the core's images; give --mqd-plugin DLL)");
	*image = strdup(ref.image->name);
	uint64_t at = ref.address;
	unsigned w = cq_target_ptr_size(core->target);
	if (ref.sym->size && ref.sym->size <= w) {
		if ((err = cq_core_read_ptr(core, ref.address, &at)))
			return cq_error_wrap(err, "reading MPIR_dll_name");
		if (!at)
			return cq_error_create(CQ_ERR_PLUGIN, "MPIR_dll_name is NULL in %s: give --mqd-plugin DLL", ref.image->name);
	}
	if ((err = cq_core_read_string(core, at, PATH_MAX, ret)))
		return cq_error_wrap(err, "reading MPIR_dll_name");
	if (!**ret) {
		free(*ret);
		*ret = NULL;
		return cq_error_create(CQ_ERR_PLUGIN, "MPIR_dll_name is empty in %s (MPI was not initialized?): give --mqd-plugin DLL", ref.image->name);
	}
	return NULL;
}

#define OWN_OMPI41 "libcoreq_ompi41_msgq.so"

/* coreq's own DLL for Open MPI 4.1 (plugins/ompi41), beside the coreq binary: build/plugins/
 * in the build tree, ../lib/coreq/ when installed. NULL if there is none. */
static char *own_dll(void)
{
	char *p = cq_self_relative("plugins/" OWN_OMPI41);
	return p ? p : cq_self_relative("../lib/coreq/" OWN_OMPI41);
}

/* Whether the core's MPI is Open MPI 4.x with its own DLL named (what coreq's serves). */
static bool is_ompi4(const struct cq_core *core, const char *named)
{
	const char *base = strrchr(named, '/') ? strrchr(named, '/') + 1 : named;
	if (strcmp(base, "libompi_dbg_msgq.so") != 0)
		return false;
	for (size_t i = 0; i < core->nimages; i++) {
		const char *n = core->images[i].name, *b = strrchr(n, '/') ? strrchr(n, '/') + 1 : n;
		if (strncmp(b, "libmpi.so.40", 12) == 0)
			return true;
	}
	return false;
}

struct cq_error *cq__mqd_find_dll(struct cq_core *core, const struct cq_mqd_options *o,
				  struct cq_mqd_choice *ret)
{
	memset(ret, 0, sizeof(*ret));
	char *name = NULL;
	struct cq_error *err = read_dll_name(core, &name, &ret->mpi_image);
	ret->named = name ? strdup(name) : NULL;
	if (o->dll) {
		/* The user named it: that is consent. It must still fit this host. */
		cq_error_destroy(err);
		free(name);
		int fd;
		char *real;
		if ((err = cq_plugin_open(o->dll, NULL, "--mqd-plugin", &fd, &real)))
			return err;
		ret->source = "--mqd-plugin";
		/* the user's DLL may bring its libraries in its own directory, or in the
		 * trusted ones (--mqd-trusted-dir) */
		struct cq_dirs dirs = cq_plugin_trusted_dirs(o->trusted_dirs, patterns);
		err = cq_plugin_load_prepare(fd, real, o->dll, &dirs, true, o->allow_untrusted, &ret->load);
		cq_dirs_free(&dirs);
		free(real);
		if (err)
			return err;
		ret->path = strdup(o->dll);
		return ret->path ? NULL : &cq_error_nomem;
	}
	if (err)
		return err;
	/* Open MPI 4.1's own DLL has no unexpected queue and cannot serve a narrower host:
	 * coreq's does both, so it is preferred (--mqd-vendor for the one the core names). */
	char *own = !o->vendor && is_ompi4(core, name) ? own_dll() : NULL;
	if (own) {
		int fd;
		char *real;
		/* coreq's own, beside coreq: trusted as coreq is, checked and loaded as any */
		if (!(err = cq_plugin_open(own, NULL, "--mqd-plugin", &fd, &real))) {
			err = cq_plugin_load_prepare(fd, real, own, NULL, true, o->allow_untrusted, &ret->load);
			free(real);
		}
		if (err) {
			free(own);
			free(name);
			return err;
		}
		ret->path = own;
		ret->source = "coreq";
		ret->instead_of = name;
		return NULL;
	}
	struct cq_dirs dirs = cq_plugin_trusted_dirs(o->trusted_dirs, patterns);
	const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
	/* a core of another architecture names its own DLL: the host's may read it too */
	struct cq_plugin_choice c;
	cq_plugin_choose(&name, 1, &dirs, o->allow_untrusted, "--mqd-plugin", &c);
	ret->source = "MPIR_dll_name";
	char *refused = c.refused, *mismatch = c.mismatch;
	err = cq_plugin_choice_load(&c, &dirs, o->allow_untrusted, &ret->load);
	ret->path = c.path;
	if (!ret->path) {
		if (err)
			; /* the DLL was found, but its dependencies are refused: that is said */
		else if (refused)
			err = cq_error_create(CQ_ERR_PLUGIN,
					      "the core names MQD DLL %s outside the trusted directories: not loaded; allow it with --mqd-allow-untrusted, add its directory with --mqd-trusted-dir, or give --mqd-plugin DLL",
					      refused);
		else if (mismatch)
			err = cq_error_create(CQ_ERR_PLUGIN, "%s", mismatch);
		else
			err = cq_error_create(CQ_ERR_PLUGIN,
					      "no MQD DLL found: the core names %s; no %s in the trusted directories (give --mqd-plugin DLL; Debian ships Open MPI's in libopenmpi3)",
					      name, base);
	}
	if (ret->path)
		ret->refused = refused;
	else
		free(refused);
	free(mismatch);
	free(name);
	cq_dirs_free(&dirs);
	return ret->path ? NULL : err;
}
