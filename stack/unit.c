/* SPDX-License-Identifier: MIT */
/* Which compilation unit holds a frame's address, and which unit holds its scopes
 * (internal.h: cq_stack_unit_at, cq_stack_scope_unit). */
#include <dwarf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "input/file.h"
#include "corelib/image.h"
#include "base/text.h"
#include "elf/cu_map.h"
#include "elf/zsections.h"
#include "internal.h"

/* A table by pointer (open addressing, a power of two of slots, at most half used). */
struct ptr_table {
	struct { const void *key; void *val; } *slots;
	size_t mask, used;
};

/* The DWARF coreq opens itself for a file: where libelf cannot expand its debug sections
 * (zstd), and to look for split units beside it (libdwfl's in-place handle knows no
 * directory). Its handle (over a descriptor; private, writable headers where sections are
 * expanded), the expanded bytes, the Dwarf; the same for the dwz alt file it names. dw
 * NULL: it could not be read (said once). */
struct own_dwarf {
	Elf *elf, *alt_elf;
	struct cq_zsections *z, *alt_z;
	Dwarf *dw, *alt;
	bool split_said; /* a split unit was not found: said once per file */
};

struct cq_stack_units {
	struct ptr_table maps; /* Dwarf -> struct cq_cu_map */
	struct ptr_table own;  /* struct cq_elf (the file with the DWARF) -> struct own_dwarf */
	struct ptr_table unsafe; /* the images whose split unit's path was refused (said once) */
	json_t *problems;
};

static bool table_init(struct ptr_table *t)
{
	t->mask = 15;
	t->used = 0;
	return (t->slots = calloc(16, sizeof(*t->slots))) != NULL;
}

static size_t slot_of(const struct ptr_table *t, const void *key)
{
	size_t k = (size_t)(((uintptr_t)key >> 4) * 0x9e3779b97f4a7c15u >> 32) & t->mask;
	while (t->slots[k].key && t->slots[k].key != key)
		k = (k + 1) & t->mask;
	return k;
}

static void **table_find(struct ptr_table *t, const void *key)
{
	size_t k = slot_of(t, key);
	return t->slots[k].key ? &t->slots[k].val : NULL;
}

/* Adds @p key (not in @p t) with @p val; false when out of memory. */
static bool table_add(struct ptr_table *t, const void *key, void *val)
{
	if (2 * (t->used + 1) > t->mask + 1) {
		struct ptr_table big = {calloc(2 * (t->mask + 1), sizeof(*t->slots)), 2 * t->mask + 1, t->used};
		if (!big.slots)
			return false;
		for (size_t j = 0; j <= t->mask; j++)
			if (t->slots[j].key)
				big.slots[slot_of(&big, t->slots[j].key)] = t->slots[j];
		free(t->slots);
		*t = big;
	}
	size_t k = slot_of(t, key);
	t->slots[k].key = key;
	t->slots[k].val = val;
	t->used++;
	return true;
}

struct cq_stack_units *cq_stack_units_create(json_t *problems)
{
	struct cq_stack_units *u = calloc(1, sizeof(*u));
	if (u && (!table_init(&u->maps) || !table_init(&u->own) || !table_init(&u->unsafe))) {
		free(u->maps.slots);
		free(u->own.slots);
		free(u);
		return NULL;
	}
	if (u)
		u->problems = problems;
	return u;
}

static void own_free(struct own_dwarf *o)
{
	if (!o)
		return;
	dwarf_end(o->dw);
	dwarf_end(o->alt);
	elf_end(o->elf);
	elf_end(o->alt_elf);
	cq_zsections_free(o->z);
	cq_zsections_free(o->alt_z);
	free(o);
}

void cq_stack_units_destroy(struct cq_stack_units *u)
{
	if (!u)
		return;
	for (size_t k = 0; k <= u->maps.mask; k++)
		cq_cu_map_destroy(u->maps.slots[k].val);
	for (size_t k = 0; k <= u->own.mask; k++)
		own_free(u->own.slots[k].val);
	free(u->maps.slots);
	free(u->own.slots);
	free(u->unsafe.slots);
	free(u);
}

/* @p dw's map, made on first use; NULL when out of memory. */
static const struct cq_cu_map *map_of(struct cq_stack_units *u, Dwarf *dw)
{
	void **v = table_find(&u->maps, dw);
	if (v)
		return *v;
	struct cq_cu_map *m = cq_cu_map_create(dw);
	if (m && !table_add(&u->maps, dw, m)) {
		cq_cu_map_destroy(m);
		m = NULL;
	}
	return m; /* NULL: tried again next time */
}

/* A handle of @p e's file over a descriptor of it (into *@p fd: libdw takes the directory
 * it looks for split units in from it), its zstd sections expanded (into *@p z); NULL with
 * *@p why. */
static Elf *open_own(const struct cq_elf *e, uint64_t max, int *fd, struct cq_zsections **z, char **why)
{
	*z = NULL;
	*why = NULL;
	*fd = e->file && e->file->fd >= 0 ? fcntl(e->file->fd, F_DUPFD_CLOEXEC, 0) : -1;
	/* private: the section headers of expanded sections are rewritten in the handle, never
	 * in the file */
	Elf *elf = *fd >= 0 ? elf_begin(*fd, e->zstd_sections ? ELF_C_READ_MMAP_PRIVATE : ELF_C_READ_MMAP, NULL)
			    : NULL;
	if (!elf || (e->zstd_sections && !cq_elf_expand_zstd(elf, max, z, why))) {
		if (!*why && asprintf(why, "libelf: %s", elf_errmsg(-1)) < 0)
			*why = NULL;
		elf_end(elf);
		cq_zsections_free(*z);
		*z = NULL;
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return NULL;
	}
	return elf;
}

/* The Dwarf coreq opens itself for @p img's debug information: where libelf cannot expand
 * its sections (zstd), and, with @p always, to find split units beside its file. NULL when
 * libdwfl's is the one to use, or when it cannot be read (a problem says so, once). */
static struct own_dwarf *own_dwarf(struct cq_stack_units *u, const struct cq_core *core, const struct cq_image *img,
				   bool always)
{
	const struct cq_elf *e = img->debug ? img->debug : img->elf;
	if (!e || (!e->zstd_sections && !always))
		return NULL;
	void **v = table_find(&u->own, e);
	if (v)
		return *v;
	struct own_dwarf *o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	uint64_t max = core->opts.max_inflated ? core->opts.max_inflated : CQ_FILE_DEFAULT_MAX_INFLATED;
	char *why = NULL;
	const char *path = img->debug ? img->debug_path : img->found_path;
	int fd;
	o->elf = open_own(e, max, &fd, &o->z, &why);
	if (o->elf && !(o->dw = dwarf_begin_elf(o->elf, DWARF_C_READ, NULL)) &&
	    asprintf(&why, "libdw: %s", dwarf_errmsg(-1)) < 0)
		why = NULL;
	if (fd >= 0)
		close(fd); /* the file is mapped whole; libdw has the directory's name */
	if (!o->dw && e->zstd_sections)
		cq_json_problem(u->problems, img->name, "the zstd-compressed debug sections of %s cannot be read (%s): "
				"no lines or inlined calls in it", path ? path : "its file", why ? why : "out of memory");
	free(why);
	why = NULL;
	if (o->dw && img->alt) {
		/* its dwz alt file, expanded likewise when it is compressed so */
		o->alt_elf = open_own(img->alt, max, &fd, &o->alt_z, &why);
		if (fd >= 0)
			close(fd);
		if (o->alt_elf && (o->alt = dwarf_begin_elf(o->alt_elf, DWARF_C_READ, NULL)))
			dwarf_setalt(o->dw, o->alt);
		free(why);
	}
	if (!table_add(&u->own, e, o)) {
		own_free(o);
		return NULL;
	}
	return o;
}

/* Whether @p cu says by its own ranges that @p addr is not its. */
static bool outside(Dwarf_Die *cu, Dwarf_Addr addr)
{
	return (dwarf_hasattr(cu, DW_AT_ranges) || dwarf_hasattr(cu, DW_AT_low_pc)) && dwarf_haspc(cu, addr) == 0;
}

Dwarf_Die *cq_stack_unit_at(struct cq_stack_units *u, const struct cq_core *core, const struct cq_image *img,
			    Dwfl_Module *mod, Dwarf_Addr at, Dwarf_Addr *bias, Dwarf_Die *mem)
{
	struct own_dwarf *o = u && img ? own_dwarf(u, core, img, false) : NULL;
	Dwarf *dw = o ? o->dw : NULL;
	Dwarf_Die *cu = NULL;
	/* the aranges first: where they answer, no map is made (gcc's modules) */
	if (dw) {
		*bias = img->bias;
		cu = dwarf_addrdie(dw, at - *bias, mem);
	} else {
		cu = dwfl_module_addrdie(mod, at, bias);
	}
	/* libdwfl 0.188 answers an address in a gap between a CU's ranges (a crt1.o _start
	 * between main in .text.startup and the CU's .text) with that CU: not the CU's when
	 * its ranges say so (gdb has no line there either) */
	if (cu && !outside(cu, at - *bias)) {
		*mem = *cu;
		return mem;
	}
	if (!o && u)
		dw = dwfl_module_getdwarf(mod, bias);
	const struct cq_cu_map *m = dw ? map_of(u, dw) : NULL;
	return m && cq_cu_map_find(m, at - *bias, mem) ? mem : NULL;
}

/* @p name's file name, after its last slash. */
static const char *file_part(const char *name)
{
	const char *s = strrchr(name, '/');
	return s ? s + 1 : name;
}

/* Says once per file that a split unit of @p img (skeleton @p cu) was not found. */
static void split_missing(struct cq_stack_units *u, const struct cq_core *core, const struct cq_image *img,
			  struct own_dwarf *o, Dwarf_Die *cu)
{
	if (o->split_said)
		return;
	o->split_said = true;
	Dwarf_Attribute a;
	const char *dwo = dwarf_formstring(dwarf_attr(cu, DW_AT_dwo_name, &a));
	if (!dwo)
		dwo = dwarf_formstring(dwarf_attr(cu, DW_AT_GNU_dwo_name, &a));
	const char *comp = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &a));
	const char *path = img->debug ? img->debug_path : img->found_path;
	/* a DWARF package beside the file (binutils' dwp) */
	char *dwp = NULL, *in_dd = NULL;
	if (path && (asprintf(&dwp, "%s.dwp", path) < 0 || access(dwp, F_OK) != 0)) {
		free(dwp);
		dwp = NULL;
	}
	if (dwo && core->opts.debug_dir && (asprintf(&in_dd, "%s/%s", core->opts.debug_dir, file_part(dwo)) < 0 ||
					    access(in_dd, F_OK) != 0)) {
		free(in_dd);
		in_dd = NULL;
	}
	if (dwp)
		cq_json_problem(u->problems, img->name, "split DWARF: %s is a DWARF package (.dwp), which libdw 0.188 cannot "
				"read: no inlined calls from it (put the .dwo files beside %s instead)", dwp, path);
	else if (in_dd)
		cq_json_problem(u->problems, img->name, "split DWARF: %s is there, but libdw 0.188 reads a split unit only "
				"beside the file or in its build directory: no inlined calls from it (put it beside %s)",
				in_dd, path);
	else
		cq_json_problem(u->problems, img->name, "split DWARF: %s not found beside %s%s%s: no inlined calls from it "
				"(put it beside the executable)", dwo ? dwo : "the split unit", path ? path : "its file",
				comp ? " nor in its build directory " : "", comp ? comp : "");
	free(dwp);
	free(in_dd);
}

/* Whether the split unit @p cu names may be opened where libdw looks for it (@p dir, the
 * directory of the file its Dwarf came from, or NULL; then the unit's build directory):
 * libdw opens those paths with a plain open(), which blocks forever on a FIFO a crafted
 * file names; anything there but a regular file (or nothing) is refused. */
static bool split_paths_safe(Dwarf_Die *cu, const char *dir)
{
	Dwarf_Attribute a;
	const char *dwo = dwarf_formstring(dwarf_attr(cu, DW_AT_dwo_name, &a));
	if (!dwo)
		dwo = dwarf_formstring(dwarf_attr(cu, DW_AT_GNU_dwo_name, &a));
	const char *comp = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &a));
	if (!dwo)
		return true;
	char *cand[3] = {NULL, NULL, NULL};
	if (dwo[0] == '/')
		cand[0] = strdup(dwo);
	if (dwo[0] != '/' && dir && asprintf(&cand[1], "%s%s", dir, dwo) < 0)
		cand[1] = NULL;
	if (dwo[0] != '/' && comp && asprintf(&cand[2], "%s/%s", comp, dwo) < 0)
		cand[2] = NULL;
	bool safe = true;
	struct stat st;
	for (int i = 0; i < 3; i++) {
		if (cand[i] && stat(cand[i], &st) == 0 && !S_ISREG(st.st_mode))
			safe = false;
		free(cand[i]);
	}
	return safe;
}

Dwarf_Die *cq_stack_scope_unit(struct cq_stack_units *u, const struct cq_core *core, const struct cq_image *img,
			       Dwarf_Die *cu, Dwarf_Die *mem)
{
	uint8_t type;
	if (dwarf_cu_info(cu->cu, NULL, &type, NULL, NULL, NULL, NULL, NULL) != 0 || type != DW_UT_skeleton)
		return cu;
	const char *path = img ? (img->debug ? img->debug_path : img->found_path) : NULL;
	char *dir = path ? strndup(path, (size_t)(file_part(path) - path)) : NULL;
	bool safe = split_paths_safe(cu, dir);
	free(dir);
	if (!safe) {
		if (u && img && !table_find(&u->unsafe, img) && table_add(&u->unsafe, img, NULL))
			cq_json_problem(u->problems, img->name, "split DWARF: a split unit's path beside %s or in its build "
					"directory is not a regular file: not opened", path ? path : "its file");
		return cu;
	}
	if (dwarf_cu_info(cu->cu, NULL, NULL, NULL, mem, NULL, NULL, NULL) == 0 && dwarf_tag(mem) == DW_TAG_compile_unit)
		return mem;
	/* libdwfl's Dwarf of a file read in place knows no directory, so libdw looked for the
	 * split unit only in the unit's build directory (a moved build has none): the same
	 * unit again in coreq's Dwarf over a descriptor of the file, which looks beside it */
	struct own_dwarf *o = u && img ? own_dwarf(u, core, img, true) : NULL;
	Dwarf_Die sk;
	if (!o || !o->dw)
		return cu;
	if (dwarf_cu_getdwarf(cu->cu) != o->dw && dwarf_offdie(o->dw, dwarf_dieoffset(cu), &sk) &&
	    dwarf_cu_info(sk.cu, NULL, &type, NULL, mem, NULL, NULL, NULL) == 0 && type == DW_UT_skeleton &&
	    dwarf_tag(mem) == DW_TAG_compile_unit)
		return mem;
	split_missing(u, core, img, o, cu);
	return cu;
}
