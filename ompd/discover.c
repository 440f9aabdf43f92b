/* SPDX-License-Identifier: MIT */
/* Which OMPD plugin to load: --ompd-plugin, else the names the runtime lists in
 * ompd_dll_locations, searched only in trusted directories. A path the core names is
 * data from a possibly hostile process: it is never loaded from elsewhere without the
 * user's consent, and symlinks are resolved before the check. */
#include <elf.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/decode.h"
#include "corelib/image.h"
#include "plugin/plugin_path.h"
#include "discover.h"

#define MAX_LOCATIONS 16

/* What to do when LLVM's runtime is in the core but ompd_dll_locations is not found in it:
 * a distribution's libomp is stripped (Debian's is), and its debug symbols are what OMPD
 * needs; a debuginfod server has them by build-id. NULL when no LLVM runtime is loaded. */
static struct cq_error *llvm_runtime_hint(struct cq_core *core)
{
	struct cq_image *rt = NULL;
	for (size_t i = 0; !rt && i < core->nimages; i++) {
		const char *name = core->images[i].name, *base = name ? strrchr(name, '/') : NULL;
		base = base ? base + 1 : name;
		if (base && (!strncmp(base, "libomp.so", 9) || !strncmp(base, "libiomp5.so", 11)))
			rt = &core->images[i];
	}
	if (!rt)
		return NULL;
	char *bid = cq_hex_string(rt->build_id, rt->build_id_len);
	const char *b = bid && strlen(bid) > 2 ? bid : NULL;
	static const char *const meanwhile = "without them, `coreq bt --openmp` shows the stacks with the runtime's frames marked, "
		"and coreq's flight recorder (OMP_TOOL_LIBRARIES=libcoreq_rec.so) keeps the last runtime events of every "
		"thread for `coreq events`";
	struct cq_elf *sf = cq_image_symbol_file(rt);
	struct cq_error *err;
	if (sf && sf->has_symtab && rt->status != CQ_IMAGE_BUNDLED)
		/* its full symbol table, and still no ompd_dll_locations: debug symbols add nothing */
		err = cq_error_create(CQ_ERR_NOT_FOUND, "LLVM's OpenMP runtime %s has a symbol table but no ompd_dll_locations: "
				      "it was built without LIBOMP_OMPD_SUPPORT, and no OMPD plugin can read it; %s",
				      rt->name, meanwhile);
	else if (b)
		err = cq_error_create(CQ_ERR_NOT_FOUND, "LLVM's OpenMP runtime %s (build-id %s) %s: OMPD needs its symbols "
				      "(ompd_dll_locations, ompd_state and the type descriptors). Set DEBUGINFOD_URLS to a "
				      "debuginfod server with libomp's debug symbols (build-id %s; for Debian's packages "
				      "https://debuginfod.debian.net), or give --debug-dir DIR holding .build-id/%.2s/%s.debug; %s",
				      rt->name, b, sf ? "is stripped" : "was not found on this machine", b, b, b + 2, meanwhile);
	else
		err = cq_error_create(CQ_ERR_NOT_FOUND, "LLVM's OpenMP runtime %s %s and the core names no build-id for it: "
				      "OMPD needs its symbols (ompd_dll_locations); give --debug-dir or --sysroot with the "
				      "unstripped runtime; %s", rt->name, sf ? "is stripped" : "was not found", meanwhile);
	free(bid);
	return err;
}

/* The names in the runtime's ompd_dll_locations (a NULL-terminated char * array). */
static struct cq_error *read_locations(struct cq_core *core, char **names, size_t *n,
				       char **runtime_ret)
{
	struct cq_symref ref;
	*n = 0;
	struct cq_error *err = cq_core_lookup(core, "ompd_dll_locations", NULL, &ref);
	if (err) {
		/* GCC's runtime: no plugin exists for it, and no symbol would help */
		for (size_t i = 0; i < core->nimages; i++) {
			const char *name = core->images[i].name, *base = name ? strrchr(name, '/') : NULL;
			base = base ? base + 1 : name;
			if (base && !strncmp(base, "libgomp.so", 10)) {
				cq_error_destroy(err);
				return cq_error_create(CQ_ERR_PLUGIN, "GCC's libgomp has no OMPD support (%s: only LLVM's libomp "
						       "has a debugger plugin): `coreq bt --openmp` shows the stacks with the runtime's frames "
						       "marked, and coreq's flight recorder (OMP_TOOL_LIBRARIES=libcoreq_rec.so) keeps the last "
						       "runtime events of every thread for `coreq events`", name);
			}
		}
		struct cq_error *hint = llvm_runtime_hint(core);
		if (hint) {
			cq_error_destroy(err);
			return hint;
		}
		return cq_error_wrap(err, "no OpenMP runtime with OMPD support found (an LLVM libomp built with LIBOMP_OMPD_SUPPORT exports ompd_dll_locations; Debian's libomp is stripped: analyze a bundle or give --debug-dir)");
	}
	*runtime_ret = strdup(ref.image->name);
	uint64_t array;
	if ((err = cq_core_read_ptr(core, ref.address, &array)))
		return cq_error_wrap(err, "reading ompd_dll_locations");
	if (!array)
		return cq_error_create(CQ_ERR_PLUGIN,
				       "ompd_dll_locations is NULL in %s: the runtime had not set it up (it does so at start-up)",
				       ref.image->name);
	unsigned w = cq_target_ptr_size(core->target);
	for (size_t i = 0; i < MAX_LOCATIONS; i++) {
		uint64_t p;
		if ((err = cq_core_read_ptr(core, array + i * w, &p)))
			return cq_error_wrap(err, "reading ompd_dll_locations[%zu]", i);
		if (!p)
			break;
		if ((err = cq_core_read_string(core, p, PATH_MAX, &names[*n])))
			return cq_error_wrap(err, "reading ompd_dll_locations[%zu]", i);
		(*n)++;
	}
	return NULL;
}

struct cq_error *cq__ompd_find_plugin(struct cq_core *core, const struct cq_ompd_options *o,
				      struct cq_ompd_choice *ret)
{
	memset(ret, 0, sizeof(*ret));
	char *names[MAX_LOCATIONS];
	size_t nnames = 0;
	struct cq_error *err = read_locations(core, names, &nnames, &ret->runtime);
	if (o->plugin) {
		/* The user named it: that is consent. It must still fit this host, and the core
		 * must hold a runtime it can read: one that had not set OMPD up yet (the core was
		 * taken before OpenMP started) or GCC's gave every ICV ompd_rc_bad_input, exit 0 */
		if (err && err->code == CQ_ERR_PLUGIN) {
			for (size_t i = 0; i < nnames; i++)
				free(names[i]);
			return err;
		}
		cq_error_destroy(err);
		for (size_t i = 0; i < nnames; i++)
			free(names[i]);
		int fd;
		char *real;
		if ((err = cq_plugin_open(o->plugin, NULL, "--ompd-plugin", &fd, &real)))
			return err;
		ret->source = "--ompd-plugin";
		/* the user's plugin may bring its libraries in its own directory, or in the
		 * trusted ones (--ompd-trusted-dir) */
		static const char *const pats[] = {"/usr/lib/llvm-*/lib", NULL};
		struct cq_dirs dirs = cq_plugin_trusted_dirs(o->trusted_dirs, pats);
		err = cq_plugin_load_prepare(fd, real, o->plugin, &dirs, true, o->allow_untrusted, &ret->load);
		cq_dirs_free(&dirs);
		free(real);
		if (err)
			return err;
		ret->path = strdup(o->plugin);
		return ret->path ? NULL : &cq_error_nomem;
	}
	if (err)
		return err;
	static const char *const patterns[] = {"/usr/lib/llvm-*/lib", NULL};
	struct cq_dirs dirs = cq_plugin_trusted_dirs(o->trusted_dirs, patterns);
	struct cq_plugin_choice c;
	cq_plugin_choose(names, nnames, &dirs, o->allow_untrusted, "--ompd-plugin", &c);
	ret->source = "ompd_dll_locations";
	char *refused = c.refused, *mismatch = c.mismatch;
	err = cq_plugin_choice_load(&c, &dirs, o->allow_untrusted, &ret->load);
	ret->path = c.path;
	if (!ret->path) {
		char *listed = NULL;
		for (size_t i = 0; i < nnames; i++) {
			char *l;
			if (asprintf(&l, "%s%s%s", listed ? listed : "", listed ? ", " : "", names[i]) >= 0) {
				free(listed);
				listed = l;
			}
		}
		if (err)
			; /* the plugin was found, but its dependencies are refused: that is said */
		else if (refused)
			err = cq_error_create(CQ_ERR_PLUGIN,
					      "the core names OMPD plugin %s outside the trusted directories: not loaded; allow it with --ompd-allow-untrusted, or add its directory with --ompd-trusted-dir, or give --ompd-plugin PATH",
					      refused);
		else if (mismatch)
			err = cq_error_create(CQ_ERR_PLUGIN, "%s", mismatch);
		else
			err = cq_error_create(CQ_ERR_PLUGIN,
					      "no OMPD plugin found: the runtime lists %s; none is in the trusted directories (give --ompd-plugin PATH; Debian ships libompd.so in libomp-14-dev)",
					      listed ? listed : "no plugin");
		free(listed);
	}
	if (ret->path)
		ret->refused = refused;
	else
		free(refused);
	free(mismatch);
	for (size_t i = 0; i < nnames; i++)
		free(names[i]);
	cq_dirs_free(&dirs);
	return ret->path ? NULL : err;
}
