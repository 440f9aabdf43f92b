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

#include "corelib/image.h"
#include "discover.h"

#if defined(__x86_64__)
#define HOST_MACHINE EM_X86_64
#elif defined(__i386__)
#define HOST_MACHINE EM_386
#elif defined(__aarch64__)
#define HOST_MACHINE EM_AARCH64
#elif defined(__arm__)
#define HOST_MACHINE EM_ARM
#elif defined(__s390x__)
#define HOST_MACHINE EM_S390
#elif defined(__powerpc64__)
#define HOST_MACHINE EM_PPC64
#elif defined(__powerpc__)
#define HOST_MACHINE EM_PPC
#elif defined(__riscv)
#define HOST_MACHINE EM_RISCV
#endif
#define HOST_CLASS (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32)

#define MAX_LOCATIONS 16

/* Why @p path cannot be loaded into this process, or NULL if it can. */
static char *host_mismatch(const char *path)
{
	unsigned char eh[20];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *why = NULL;
	if (fd < 0 || read(fd, eh, sizeof(eh)) != (ssize_t)sizeof(eh) || memcmp(eh, ELFMAG, SELFMAG)) {
		if (asprintf(&why, "%s is not a readable ELF file", path) < 0)
			why = NULL;
	} else {
		unsigned machine = eh[EI_DATA] == ELFDATA2LSB ? (unsigned)(eh[18] | eh[19] << 8) :
								(unsigned)(eh[18] << 8 | eh[19]);
		if (eh[EI_CLASS] != HOST_CLASS || machine != HOST_MACHINE)
			if (asprintf(&why, "%s is a %d-bit plugin for e_machine %u; this coreq is %d-bit for e_machine %u: use a plugin built for the host (--ompd-plugin)",
				     path, eh[EI_CLASS] == ELFCLASS64 ? 64 : 32, machine,
				     (int)sizeof(void *) * 8, (unsigned)HOST_MACHINE) < 0)
				why = NULL;
	}
	if (fd >= 0)
		close(fd);
	return why;
}

/* Trusted directories, most specific first; caller frees with free_list(). */
static char **trusted_dirs(const char *extra, size_t *n)
{
	char **dirs = NULL;
	*n = 0;
	const char *fixed[] = {("/usr/lib/" CQ_HOST_MULTIARCH), "/usr/lib", "/usr/local/lib"};
	glob_t g;
	size_t cap = 64;
	dirs = calloc(cap, sizeof(*dirs));
	if (!dirs)
		return NULL;
	for (const char *e = extra; e && *e && *n < cap - 8;) {
		size_t len = strcspn(e, ":");
		if (len)
			dirs[(*n)++] = strndup(e, len);
		e += len + (e[len] == ':');
	}
	if (glob("/usr/lib/llvm-*/lib", 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc && *n < cap - 4; i++)
			dirs[(*n)++] = strdup(g.gl_pathv[i]);
		globfree(&g);
	}
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		dirs[(*n)++] = strdup(fixed[i]);
	return dirs;
}

static void free_list(char **l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(l[i]);
	free(l);
}

/* Whether the resolved @p real lies inside one of @p dirs (also resolved). */
static bool inside(const char *real, char **dirs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char rd[PATH_MAX];
		if (!dirs[i] || !realpath(dirs[i], rd))
			continue;
		size_t len = strlen(rd);
		if (strncmp(real, rd, len) == 0 && real[len] == '/' && !strchr(real + len + 1, '/'))
			return true;
	}
	return false;
}

/* The names in the runtime's ompd_dll_locations (a NULL-terminated char * array). */
static struct cq_error *read_locations(struct cq_core *core, char **names, size_t *n,
				       char **runtime_ret)
{
	struct cq_symref ref;
	*n = 0;
	struct cq_error *err = cq_core_lookup(core, "ompd_dll_locations", NULL, &ref);
	if (err)
		return cq_error_wrap(err, "no OpenMP runtime with OMPD support found (an LLVM libomp built with LIBOMP_OMPD_SUPPORT exports ompd_dll_locations; Debian's libomp is stripped: analyze a bundle or give --debug-dir)");
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
		/* The user named it: that is consent. It must still fit this host. */
		cq_error_destroy(err);
		for (size_t i = 0; i < nnames; i++)
			free(names[i]);
		char *why = host_mismatch(o->plugin);
		if (why) {
			err = cq_error_create(CQ_ERR_PLUGIN, "%s", why);
			free(why);
			return err;
		}
		ret->path = strdup(o->plugin);
		ret->source = "--ompd-plugin";
		return ret->path ? NULL : &cq_error_nomem;
	}
	if (err)
		return err;
	size_t ndirs;
	char **dirs = trusted_dirs(o->trusted_dirs, &ndirs);
	char *refused = NULL, *mismatch = NULL;
	for (size_t i = 0; i < nnames && !ret->path; i++) {
		const char *name = names[i];
		const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
		/* Candidates: the named path itself (absolute only), then base name in each
		 * trusted directory. */
		for (size_t d = 0; d <= ndirs && !ret->path; d++) {
			char cand[PATH_MAX], real[PATH_MAX];
			if (d == 0) {
				if (name[0] != '/')
					continue;
				snprintf(cand, sizeof(cand), "%s", name);
			} else {
				snprintf(cand, sizeof(cand), "%s/%s", dirs[d - 1], base);
			}
			if (!realpath(cand, real))
				continue;
			if (!inside(real, dirs, ndirs) && !o->allow_untrusted) {
				if (!refused && asprintf(&refused, "%s (resolves to %s)", cand, real) < 0)
					refused = NULL;
				continue;
			}
			char *why = host_mismatch(real);
			if (why) {
				if (!mismatch)
					mismatch = why;
				else
					free(why);
				continue;
			}
			ret->path = strdup(cand);
			ret->source = "ompd_dll_locations";
		}
	}
	if (!ret->path) {
		char *listed = NULL;
		for (size_t i = 0; i < nnames; i++) {
			char *l;
			if (asprintf(&l, "%s%s%s", listed ? listed : "", listed ? ", " : "", names[i]) >= 0) {
				free(listed);
				listed = l;
			}
		}
		if (refused)
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
	free_list(dirs, ndirs);
	return ret->path ? NULL : err;
}
