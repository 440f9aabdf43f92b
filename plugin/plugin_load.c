/* SPDX-License-Identifier: MIT */
/* Loading the checked plugin file and its checked dependencies (plugin_load.h). */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "input/file.h"
#include "plugin_load.h"

#define MAX_NEEDED 256
#define MAX_DEPTH 16
#define MAX_STRTAB (16u << 20)

/* What the dynamic section of an object says about loading it. */
struct dyn {
	char *needed[MAX_NEEDED];
	size_t nneeded;
	char *soname, *rpath, *runpath;
};

static void dyn_deinit(struct dyn *d)
{
	for (size_t i = 0; i < d->nneeded; i++)
		free(d->needed[i]);
	free(d->soname);
	free(d->rpath);
	free(d->runpath);
	memset(d, 0, sizeof(*d));
}

/* The file offset of virtual address @p vaddr through the PT_LOADs of @p e. */
static bool vaddr_offset(Elf *e, size_t phnum, uint64_t vaddr, uint64_t *ret)
{
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr &&
		    vaddr - ph.p_vaddr < ph.p_filesz) {
			*ret = ph.p_offset + (vaddr - ph.p_vaddr);
			return true;
		}
	}
	return false;
}

/* DT_NEEDED, DT_SONAME, DT_RPATH and DT_RUNPATH of the ELF file open as @p fd (found
 * through the program headers: a shared object needs no section headers). Bounded: the
 * file is as hostile as the core. Returns a one-line reason, or NULL. */
static const char *read_dyn(int fd, struct dyn *d)
{
	memset(d, 0, sizeof(*d));
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	const char *why = NULL;
	size_t phnum;
	GElf_Phdr dph = {0};
	if (!e || elf_kind(e) != ELF_K_ELF || elf_getphdrnum(e, &phnum) != 0) {
		why = "not an ELF file";
		goto out;
	}
	bool have = false;
	for (size_t i = 0; i < phnum && !have; i++)
		have = gelf_getphdr(e, (int)i, &dph) && dph.p_type == PT_DYNAMIC;
	if (!have) {
		why = "no dynamic section (not a shared object)";
		goto out;
	}
	Elf_Data *dd = elf_getdata_rawchunk(e, (int64_t)dph.p_offset, (size_t)dph.p_filesz, ELF_T_DYN);
	if (!dd) {
		why = "unreadable dynamic section";
		goto out;
	}
	uint64_t strtab = 0, strsz = 0, needed[MAX_NEEDED], soname = UINT64_MAX, rpath = UINT64_MAX,
		 runpath = UINT64_MAX;
	size_t nneeded = 0, ent = gelf_fsize(e, ELF_T_DYN, 1, EV_CURRENT);
	for (size_t i = 0; ent && i < dph.p_filesz / ent && i < 4096; i++) {
		GElf_Dyn dyn;
		if (!gelf_getdyn(dd, (int)i, &dyn) || dyn.d_tag == DT_NULL)
			break;
		switch (dyn.d_tag) {
		case DT_STRTAB: strtab = dyn.d_un.d_ptr; break;
		case DT_STRSZ: strsz = dyn.d_un.d_val; break;
		case DT_SONAME: soname = dyn.d_un.d_val; break;
		case DT_RPATH: rpath = dyn.d_un.d_val; break;
		case DT_RUNPATH: runpath = dyn.d_un.d_val; break;
		case DT_NEEDED:
			if (nneeded == MAX_NEEDED) {
				why = "more than 256 DT_NEEDED entries";
				goto out;
			}
			needed[nneeded++] = dyn.d_un.d_val;
			break;
		}
	}
	uint64_t off;
	if (!strsz || strsz > MAX_STRTAB || !vaddr_offset(e, phnum, strtab, &off)) {
		if (nneeded || soname != UINT64_MAX)
			why = "no readable string table for its dynamic section";
		goto out;
	}
	Elf_Data *sd = elf_getdata_rawchunk(e, (int64_t)off, (size_t)strsz, ELF_T_BYTE);
	if (!sd) {
		why = "unreadable dynamic string table";
		goto out;
	}
	const char *s = sd->d_buf;
#define STR(o) ((o) < strsz && memchr(s + (o), 0, strsz - (o)) ? strdup(s + (o)) : NULL)
	for (size_t i = 0; i < nneeded; i++) {
		if (!(d->needed[d->nneeded] = STR(needed[i]))) {
			why = "a DT_NEEDED name outside its string table";
			goto out;
		}
		d->nneeded++;
	}
	if (soname != UINT64_MAX)
		d->soname = STR(soname);
	if (rpath != UINT64_MAX)
		d->rpath = STR(rpath);
	if (runpath != UINT64_MAX)
		d->runpath = STR(runpath);
#undef STR
out:
	if (e)
		elf_end(e);
	if (why)
		dyn_deinit(d);
	return why;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static char *dir_name(const char *p)
{
	const char *s = strrchr(p, '/');
	/* "/x" is in "/", not in "" */
	return s ? strndup(p, s > p ? (size_t)(s - p) : 1) : strdup(".");
}

/* Names (base names and SONAMEs) of the objects already in this process. */
struct names {
	char **v;
	size_t n, cap;
};

static void names_add(struct names *ns, const char *name)
{
	if (!name || !*name)
		return;
	if (ns->n == ns->cap) {
		size_t cap = ns->cap ? ns->cap * 2 : 32;
		char **v = realloc(ns->v, cap * sizeof(*v));
		if (!v)
			return;
		ns->v = v;
		ns->cap = cap;
	}
	if ((ns->v[ns->n] = strdup(name)))
		ns->n++;
}

static bool names_have(const struct names *ns, const char *name)
{
	for (size_t i = 0; i < ns->n; i++)
		if (!strcmp(ns->v[i], name))
			return true;
	return false;
}

static void names_free(struct names *ns)
{
	for (size_t i = 0; i < ns->n; i++)
		free(ns->v[i]);
	free(ns->v);
}

static int add_loaded(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct names *ns = arg;
	const char *p = info->dlpi_name;
	if (!p || !*p)
		return 0;
	names_add(ns, base_name(p));
	int fd = p[0] == '/' ? open(p, O_RDONLY | O_CLOEXEC | O_NONBLOCK) : -1;
	struct dyn d;
	if (fd >= 0 && !read_dyn(fd, &d)) {
		names_add(ns, d.soname);
		dyn_deinit(&d);
	}
	if (fd >= 0)
		close(fd);
	return 0;
}

/* Directories as a list (owned strings). */
struct dirlist {
	char *d[64];
	size_t n;
};

static void dirs_add(struct dirlist *l, const char *dir)
{
	if (l->n < 64 && dir && *dir && (l->d[l->n] = strdup(dir)))
		l->n++;
}

static void dirs_free(struct dirlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->d[i]);
	l->n = 0;
}

/* The entries of a DT_RPATH/DT_RUNPATH value: $ORIGIN (or ${ORIGIN}) at the start becomes
 * @p origin, the directory of the object's real path; entries with other $ tokens and
 * relative ones are left out, as nothing here may depend on how or where coreq runs. */
static void dirs_add_runpath(struct dirlist *l, const char *value, const char *origin)
{
	for (const char *p = value; p && *p;) {
		size_t len = strcspn(p, ":");
		char *ent = strndup(p, len);
		p += len + (p[len] == ':');
		if (!ent)
			continue;
		char *dir = NULL;
		const char *rest = NULL;
		if (!strncmp(ent, "$ORIGIN", 7))
			rest = ent + 7;
		else if (!strncmp(ent, "${ORIGIN}", 9))
			rest = ent + 9;
		if (rest && !strchr(rest, '$') && (!*rest || *rest == '/')) {
			if (asprintf(&dir, "%s%s", origin, rest) < 0)
				dir = NULL;
		} else if (ent[0] == '/' && !strchr(ent, '$')) {
			dir = strdup(ent);
		}
		dirs_add(l, dir);
		free(dir);
		free(ent);
	}
}

/* The host's system library directories (what ld.so.cache and the defaults hold). */
static void dirs_add_system(struct dirlist *l)
{
	char buf[64];
	snprintf(buf, sizeof(buf), "/lib/%s", cq_host_multiarch());
	dirs_add(l, buf);
	snprintf(buf, sizeof(buf), "/usr/lib/%s", cq_host_multiarch());
	dirs_add(l, buf);
#if defined(__i386__)
	dirs_add(l, "/usr/lib32");
	dirs_add(l, "/lib32");
#endif
	dirs_add(l, "/lib");
	dirs_add(l, "/usr/lib");
	dirs_add(l, "/usr/local/lib");
}

/* coreq's own run paths: the directories its own libraries come from (the 32-bit build's
 * sysroot) are as trusted as coreq itself. */
static void dirs_add_own(struct dirlist *l)
{
	char exe[PATH_MAX];
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	struct dyn d;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0 && !read_dyn(fd, &d)) {
		exe[n] = 0;
		char *origin = dir_name(exe);
		dirs_add_runpath(l, d.runpath ? d.runpath : d.rpath, origin ? origin : "/nonexistent");
		free(origin);
		dyn_deinit(&d);
	}
	close(fd);
}

/* Whether the real directory of @p real is one of @p l (each resolved). */
static bool dir_listed(const struct dirlist *l, const char *real)
{
	char *dir = dir_name(real);
	bool yes = false;
	for (size_t i = 0; dir && i < l->n && !yes; i++) {
		char rd[PATH_MAX];
		yes = realpath(l->d[i], rd) && !strcmp(rd, dir);
	}
	free(dir);
	return yes;
}

/* The real path of open file @p fd, or NULL. */
static char *fd_real(int fd)
{
	char proc[64], buf[PATH_MAX];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(proc, buf, sizeof(buf) - 1);
	if (n <= 0)
		return NULL;
	buf[n] = 0;
	return strdup(buf);
}

/* Whether the ELF file open as @p fd can be loaded here (this host's class and machine). */
static bool fits_host(int fd)
{
	char *why = cq_plugin_host_mismatch_fd(fd, "", "");
	free(why);
	return !why;
}

struct cq_error *cq_plugin_open(const char *path, const struct cq_dirs *trusted, const char *option,
				int *fd_ret, char **real_ret)
{
	*fd_ret = -1;
	*real_ret = NULL;
	if (strchr(path, '$'))
		return cq_error_create(CQ_ERR_PLUGIN,
				       "%s: a plugin name containing '$' is refused (the dynamic linker would expand $LIB, $PLATFORM or $ORIGIN in it and load another file than the one checked)",
				       path);
	int fd;
	struct cq_error *err = cq_open_regular(path, "plugin", &fd);
	if (err) {
		err->code = CQ_ERR_PLUGIN;
		return err;
	}
	char *real = fd_real(fd);
	if (!real) {
		close(fd);
		return cq_error_errno(errno ? errno : ENOENT, "plugin %s: its real path", path);
	}
	if (trusted && !cq_plugin_trusted(real, trusted)) {
		err = cq_error_create(CQ_ERR_PLUGIN, "%s (resolves to %s)", path, real);
		err->code = CQ_ERR_PLUGIN;
		close(fd);
		free(real);
		return err;
	}
	char *why = cq_plugin_host_mismatch_fd(fd, path, option);
	if (why) {
		err = cq_error_create(CQ_ERR_PLUGIN, "%s", why);
		free(why);
		close(fd);
		free(real);
		return err;
	}
	*fd_ret = fd;
	*real_ret = real;
	return NULL;
}

/* Resolution state of one cq_plugin_load_prepare() call. */
struct resolve {
	struct cq_plugin_load *load;
	struct names loaded;   /* in the process already */
	struct names placed;   /* names and SONAMEs of what load holds */
	struct dirlist own, system, trusted;
	const char *plugin_dir;
	bool allow_untrusted;
};

static bool dep_trusted(const struct resolve *r, const char *real)
{
	if (r->allow_untrusted || dir_listed(&r->system, real) || dir_listed(&r->own, real) ||
	    dir_listed(&r->trusted, real))
		return true;
	char *dir = dir_name(real);
	bool own = r->plugin_dir && dir && !strcmp(dir, r->plugin_dir);
	free(dir);
	return own;
}

/* Find, check and open dependency @p name of the object at @p obj_real (whose dynamic
 * section is @p od); NULL error and *fd_ret >= 0 when found. */
static struct cq_error *find_dep(struct resolve *r, const char *name, const char *obj_real,
				 const struct dyn *od, int *fd_ret, char **real_ret)
{
	struct dirlist search = {0};
	char *origin = dir_name(obj_real);
	dirs_add_runpath(&search, od->runpath ? od->runpath : od->rpath, origin ? origin : "/nonexistent");
	free(origin);
	for (size_t i = 0; i < r->own.n; i++)
		dirs_add(&search, r->own.d[i]);
	for (size_t i = 0; i < r->system.n; i++)
		dirs_add(&search, r->system.d[i]);
	struct cq_error *err = NULL;
	*fd_ret = -1;
	for (size_t i = 0; i < search.n && *fd_ret < 0 && !err; i++) {
		char cand[PATH_MAX];
		if (snprintf(cand, sizeof(cand), "%s/%s", search.d[i], name) >= (int)sizeof(cand))
			continue;
		if (access(cand, F_OK) != 0)
			continue;
		int fd;
		struct cq_error *oerr = cq_open_regular(cand, NULL, &fd);
		if (oerr) {
			cq_error_destroy(oerr);
			continue;
		}
		char *real = fd_real(fd);
		if (!real || !fits_host(fd)) { /* ld.so passes over files of another class too */
			free(real);
			close(fd);
			continue;
		}
		if (!dep_trusted(r, real)) {
			err = cq_error_create(CQ_ERR_PLUGIN,
					      "dependency %s of %s is %s (%s), outside the trusted directories: not loaded (a plugin's libraries are as trusted as the plugin: --*-trusted-dir, --*-allow-untrusted)",
					      name, obj_real, cand, real);
			free(real);
			close(fd);
			break;
		}
		*fd_ret = fd;
		*real_ret = real;
	}
	if (!err && *fd_ret < 0)
		err = cq_error_create(CQ_ERR_PLUGIN, "dependency %s of %s not found in its run path, coreq's or the system library directories",
				      name, obj_real);
	dirs_free(&search);
	return err;
}

/* Place the dependencies of the object open as @p fd (real path @p real) in r->load, depth
 * first, each before the objects that need it. */
static struct cq_error *place_deps(struct resolve *r, int fd, const char *real, int depth)
{
	struct dyn d;
	const char *why = read_dyn(fd, &d);
	if (why)
		return cq_error_create(CQ_ERR_PLUGIN, "%s: %s", real, why);
	struct cq_error *err = NULL;
	for (size_t i = 0; i < d.nneeded && !err; i++) {
		const char *name = d.needed[i];
		if (names_have(&r->loaded, name) || names_have(&r->placed, name))
			continue;
		if (strchr(name, '/') || strchr(name, '$') || !*name) {
			err = cq_error_create(CQ_ERR_PLUGIN, "%s needs \"%s\": a DT_NEEDED that is a path or has a '$' is refused",
					      real, name);
			break;
		}
		if (depth >= MAX_DEPTH || r->load->n >= CQ_PLUGIN_MAX_OBJECTS - 1) {
			err = cq_error_create(CQ_ERR_PLUGIN, "%s: more than %d libraries or %d levels of dependencies: not loaded",
					      real, CQ_PLUGIN_MAX_OBJECTS - 1, MAX_DEPTH);
			break;
		}
		int dfd;
		char *dreal = NULL;
		if ((err = find_dep(r, name, real, &d, &dfd, &dreal)))
			break;
		struct dyn dd;
		why = read_dyn(dfd, &dd);
		if (why || !dd.soname) {
			err = cq_error_create(CQ_ERR_PLUGIN, "dependency %s (%s): %s", name, dreal,
					      why ? why : "no DT_SONAME, so it cannot be loaded from its checked file");
			if (!why)
				dyn_deinit(&dd);
			free(dreal);
			close(dfd);
			break;
		}
		names_add(&r->placed, name);
		names_add(&r->placed, dd.soname);
		dyn_deinit(&dd);
		if ((err = place_deps(r, dfd, dreal, depth + 1))) {
			free(dreal);
			close(dfd);
			break;
		}
		struct cq_plugin_object *o = &r->load->obj[r->load->n++];
		o->fd = dfd;
		o->real = dreal;
		o->name = strdup(name);
	}
	dyn_deinit(&d);
	return err;
}

struct cq_error *cq_plugin_load_prepare(int fd, const char *real, const char *name,
					const struct cq_dirs *trusted, bool own_dir_trusted,
					bool allow_untrusted, struct cq_plugin_load *ret)
{
	memset(ret, 0, sizeof(*ret));
	struct resolve r = {.load = ret, .allow_untrusted = allow_untrusted};
	dl_iterate_phdr(add_loaded, &r.loaded);
	dirs_add_own(&r.own);
	dirs_add_system(&r.system);
	for (size_t i = 0; trusted && i < trusted->n; i++)
		dirs_add(&r.trusted, trusted->dir[i]);
	char *pdir = own_dir_trusted ? dir_name(real) : NULL;
	r.plugin_dir = pdir;
	struct cq_error *err = place_deps(&r, fd, real, 0);
	free(pdir);
	names_free(&r.loaded);
	names_free(&r.placed);
	dirs_free(&r.own);
	dirs_free(&r.system);
	dirs_free(&r.trusted);
	if (err) {
		close(fd);
		cq_plugin_load_deinit(ret);
		return err;
	}
	struct cq_plugin_object *o = &ret->obj[ret->n++];
	o->fd = fd;
	o->real = strdup(real);
	o->name = strdup(name);
	return NULL;
}

/* "/proc/self/fd/N" for @p fd, or for a duplicate of it when an object loaded earlier
 * through the same descriptor number (libbfd, libdebuginfod: their descriptors were closed
 * and the number reused) holds that name: the dynamic linker finds an object by name
 * first, and dlopen would return that other object. A higher number is tried until no
 * loaded object answers to the name (bounded: when the very file is loaded already, every
 * name finds it by file identity, which is right). *@p dup_ret gets the duplicate to
 * close after loading, or -1. */
static void fresh_proc_name(int fd, char *proc, size_t size, int *dup_ret)
{
	*dup_ret = -1;
	int use = fd;
	for (int tries = 0; tries < 256; tries++) {
		snprintf(proc, size, "/proc/self/fd/%d", use);
		void *old = dlopen(proc, RTLD_LAZY | RTLD_NOLOAD);
		if (!old)
			return;
		dlclose(old);
		int d = fcntl(fd, F_DUPFD_CLOEXEC, use + 1);
		if (d < 0)
			return;
		if (*dup_ret >= 0)
			close(*dup_ret);
		*dup_ret = use = d;
	}
	snprintf(proc, size, "/proc/self/fd/%d", use);
}

void *cq_plugin_load_dlopen(const struct cq_plugin_load *l, const char **why_ret)
{
	void *h = NULL;
	*why_ret = "nothing to load";
	for (size_t i = 0; i < l->n; i++) {
		char proc[64];
		int dup;
		fresh_proc_name(l->obj[i].fd, proc, sizeof(proc), &dup);
		/* dependencies stay loaded for the life of this (child) process */
		h = dlopen(proc, RTLD_NOW | RTLD_LOCAL);
		if (dup >= 0)
			close(dup);
		if (!h) {
			/* dlerror names /proc/self/fd/N: say which file that was */
			static char why[2048];
			const char *e = dlerror();
			snprintf(why, sizeof(why), "%s (loaded as %s): %s", l->obj[i].real, proc, e ? e : "dlopen failed");
			*why_ret = why;
			return NULL;
		}
	}
	return h;
}

struct cq_error *cq_plugin_choice_load(struct cq_plugin_choice *c, const struct cq_dirs *trusted,
				       bool allow_untrusted, struct cq_plugin_load *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (!c->path)
		return NULL;
	struct cq_error *err = cq_plugin_load_prepare(c->fd, c->real, c->path, trusted, false, allow_untrusted, ret);
	c->fd = -1; /* taken (closed on failure) */
	free(c->real);
	c->real = NULL;
	if (err) {
		free(c->path);
		c->path = NULL;
	}
	return err;
}

void cq_plugin_load_deinit(struct cq_plugin_load *l)
{
	for (size_t i = 0; i < l->n; i++) {
		if (l->obj[i].fd >= 0)
			close(l->obj[i].fd);
		free(l->obj[i].real);
		free(l->obj[i].name);
	}
	memset(l, 0, sizeof(*l));
}

void *cq_plugin_load_fixed(const char *path, char *why, size_t why_size)
{
	int fd;
	char *real;
	struct cq_error *err = cq_plugin_open(path, NULL, "rebuild coreq on this host", &fd, &real);
	struct cq_plugin_load l;
	if (!err) {
		err = cq_plugin_load_prepare(fd, real, path, NULL, true, false, &l);
		free(real);
	}
	if (err) {
		snprintf(why, why_size, "%s", err->message);
		cq_error_destroy(err);
		return NULL;
	}
	const char *dlwhy;
	void *h = cq_plugin_load_dlopen(&l, &dlwhy);
	cq_plugin_load_deinit(&l);
	if (!h)
		snprintf(why, why_size, "%s", dlwhy ? dlwhy : "dlopen failed");
	return h;
}
