/* SPDX-License-Identifier: MIT */
/* Named types from DWARF (types.h). Lookups come by name from plugins that ask for a few
 * dozen types, so each DWARF file gets a sorted name index of its top-level type DIEs,
 * built the first time a lookup reaches that file; the found types are kept per name. */
#include <elfutils/libdw.h>
#include <dwarf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image.h"
#include "internal.h"
#include "input/file.h"
#include "types.h"

#define MAX_TYPES 1024 /* distinct names asked for: plugins ask a few dozen */

struct entry {
	const char *name; /* libdw's string, valid while the Dwarf is open */
	Dwarf_Off off;
	bool decl;        /* DW_AT_declaration: not a definition */
};

struct source {
	/* An image with its .symtab gets no debug file for symbols (image.c), but its DWARF
	 * may be in one all the same (objcopy --strip-debug): found when the image file
	 * turns out to have none, and then used in its place. */
	struct cq_core *core;
	struct cq_image *img;
	/* the image whose DWARF this is (its debug file or its own file), index + 1; 0 for a
	 * type donor: what a scoped lookup (cq_core_find_type_among) decides by */
	size_t image;
	char *path;
	char *shown;      /* name in reports when not the path (bundled donors) */
	int fd;
	Dwarf *dw;        /* NULL: no DWARF (or not opened yet) */
	bool opened;
	char *unreadable; /* why the file could not be opened (a FIFO, EACCES, ...), or NULL */
	struct entry *index;
	size_t n;
};

struct cq_type {
	Dwarf_Die die;
	const struct source *src;
	char *name;
};

struct cq_types {
	struct source *sources;
	size_t nsources;
	bool listed;
	struct cq_type *found[MAX_TYPES];
	size_t nfound;
	char *summary;
};

static int is_type_tag(int tag)
{
	return tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
	       tag == DW_TAG_typedef || tag == DW_TAG_base_type ||
	       tag == DW_TAG_enumeration_type || tag == DW_TAG_class_type;
}

static int by_name(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : (int)x->decl - (int)y->decl; /* definitions first */
}

/* Open @p s and index its top-level type names; a file without DWARF stays dw == NULL. */
static void open_source(struct source *s)
{
	s->opened = true;
	/* a file a core names may be a FIFO: cq_file_open() refuses it without blocking; a
	 * compressed donor (ompi-types.so.gz) is expanded like any compressed input */
	struct cq_file *file;
	struct cq_error *oerr = cq_file_open(s->path, s->core ? s->core->opts.max_inflated : 0, &file);
	if (oerr) {
		s->unreadable = strdup(oerr->message);
		cq_error_destroy(oerr);
		return;
	}
	s->fd = file->fd;
	file->fd = -1;
	cq_file_close(file);
	s->dw = dwarf_begin(s->fd, DWARF_C_READ);
	if (!s->dw && s->img && s->img->elf) {
		char *dbg = cq_find_debug_file(CQ_SEARCH(s->core), s->img->found_path, s->img->elf);
		int fd = -1;
		if (dbg)
			cq_error_destroy(cq_open_regular(dbg, NULL, &fd));
		if (fd >= 0) {
			close(s->fd);
			free(s->path);
			s->path = dbg;
			s->fd = fd;
			s->dw = dwarf_begin(s->fd, DWARF_C_READ);
		} else {
			free(dbg);
		}
	}
	if (!s->dw)
		return;
	size_t cap = 0;
	Dwarf_Off off = 0, next;
	size_t hsize;
	while (dwarf_nextcu(s->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, child;
		if (dwarf_offdie(s->dw, off + hsize, &cu) && dwarf_child(&cu, &child) == 0) {
			do {
				const char *name;
				if (!is_type_tag(dwarf_tag(&child)) || !(name = dwarf_diename(&child)))
					continue;
				if (s->n == cap) {
					size_t ncap = cap ? cap * 2 : 256;
					struct entry *e = realloc(s->index, ncap * sizeof(*e));
					if (!e)
						return;
					s->index = e;
					cap = ncap;
				}
				s->index[s->n++] = (struct entry){name, dwarf_dieoffset(&child),
								  dwarf_hasattr(&child, DW_AT_declaration)};
			} while (dwarf_siblingof(&child, &child) == 0);
		}
		off = next;
	}
	if (s->n) /* index is NULL when the DWARF names no type */
		qsort(s->index, s->n, sizeof(*s->index), by_name);
}

static void add_source(struct cq_types *t, const char *path)
{
	for (size_t i = 0; i < t->nsources; i++)
		if (strcmp(t->sources[i].path, path) == 0)
			return;
	struct source *s = realloc(t->sources, (t->nsources + 1) * sizeof(*s));
	if (!s)
		return;
	t->sources = s;
	s[t->nsources] = (struct source){.path = strdup(path), .fd = -1};
	if (s[t->nsources].path)
		t->nsources++;
}

static void free_types(struct cq_core *core);

static struct cq_types *types_of(struct cq_core *core)
{
	if (!core->types) {
		if (!(core->types = calloc(1, sizeof(*core->types))))
			return NULL;
		cq__core_own(core, free_types);
	}
	struct cq_types *t = core->types;
	if (t->listed)
		return t;
	t->listed = true;
	/* the donors given first (the user's explicit choice, and cheap: DWARF of a few
	 * headers, where an image's separate debug file may be megabytes to index), then
	 * those a bundle carries ("bundle:NAME") */
	const char *d = core->opts.type_donors;
	while (d && *d) {
		size_t len = strcspn(d, ":");
		char *p = strndup(d, len);
		if (p && *p)
			add_source(t, p);
		free(p);
		d += len + (d[len] == ':');
	}
	for (size_t i = 0; i < core->nbundled_donors; i++) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/self/fd/%d", core->bundled_donors[i].fd);
		add_source(t, path);
		/* shown by its name in reports */
		struct source *s = &t->sources[t->nsources - 1];
		if (strcmp(s->path, path) == 0) {
			char *shown;
			if (asprintf(&shown, "bundle:%s", core->bundled_donors[i].name) >= 0) {
				s->shown = shown;
			}
		}
	}
	/* then the images' own DWARF, in linker order */
	struct cq_error *err = cq_core_load_images(core);
	cq_error_destroy(err);
	for (size_t i = 0; i < core->nimages; i++) {
		struct cq_image *img = &core->images[i];
		size_t before = t->nsources;
		if (img->debug_path) {
			add_source(t, img->debug_path);
		} else if (img->found_path) {
			add_source(t, img->found_path);
			if (t->nsources && !strcmp(t->sources[t->nsources - 1].path, img->found_path)) {
				t->sources[t->nsources - 1].core = core;
				t->sources[t->nsources - 1].img = img;
			}
		}
		if (t->nsources > before)
			t->sources[t->nsources - 1].image = i + 1;
	}
	/* every source is opened under the core's bound on expanding compressed files */
	for (size_t i = 0; i < t->nsources; i++)
		t->sources[i].core = core;
	return t;
}

struct cq_error *cq_core_add_type_donor(struct cq_core *core, const char *path, const char *shown)
{
	struct cq_types *t = types_of(core);
	if (!t)
		return &cq_error_nomem;
	size_t before = t->nsources;
	add_source(t, path);
	if (t->nsources == before)
		return NULL; /* listed already (or out of memory: then it is simply not searched) */
	struct source *s = &t->sources[t->nsources - 1];
	s->core = core;
	if (shown && !(s->shown = strdup(shown)))
		return &cq_error_nomem;
	return NULL;
}

/* The definition of @p name in @p s, if it has one. */
static bool lookup_in(struct source *s, const char *name, Dwarf_Die *ret)
{
	if (!s->opened)
		open_source(s);
	if (!s->dw || !s->n)
		return false;
	size_t lo = 0, hi = s->n;
	while (lo < hi) { /* first entry >= name */
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(s->index[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < s->n && strcmp(s->index[lo].name, name) == 0; lo++)
		if (!s->index[lo].decl)
			return dwarf_offdie(s->dw, s->index[lo].off, ret) != NULL;
	return false;
}

/* Whether source @p s may answer a lookup scoped by @p scope: a donor always (the types were
 * given or picked for the target); an image's DWARF when the scope keeps that image. */
static bool in_scope(struct cq_core *core, const struct source *s, cq_type_scope *scope, void *arg)
{
	return !scope || !s->image || s->image > core->nimages || scope(core, &core->images[s->image - 1], arg);
}

struct cq_error *cq_core_find_type_among(struct cq_core *core, const char *name, cq_type_scope *scope,
					 void *arg, const struct cq_type **ret)
{
	struct cq_types *t = types_of(core);
	if (!t)
		return &cq_error_nomem;
	static const char *const keywords[] = {"struct ", "union ", "enum ", "class "};
	for (size_t k = 0; k < sizeof(keywords) / sizeof(keywords[0]); k++)
		if (strncmp(name, keywords[k], strlen(keywords[k])) == 0)
			name += strlen(keywords[k]);
	/* a name found before from a source this scope leaves out is searched again among the
	 * sources it keeps: a scoped answer is the one a search of those sources alone gives */
	for (size_t i = 0; i < t->nfound; i++) {
		if (strcmp(t->found[i]->name, name) == 0 && in_scope(core, t->found[i]->src, scope, arg)) {
			*ret = t->found[i];
			return NULL;
		}
	}
	for (size_t i = 0; i < t->nsources; i++) {
		Dwarf_Die die;
		if (!in_scope(core, &t->sources[i], scope, arg) || !lookup_in(&t->sources[i], name, &die))
			continue;
		struct cq_type *ty = calloc(1, sizeof(*ty));
		if (!ty || !(ty->name = strdup(name))) {
			free(ty);
			return &cq_error_nomem;
		}
		ty->die = die;
		ty->src = &t->sources[i];
		if (t->nfound < MAX_TYPES)
			t->found[t->nfound++] = ty;
		*ret = ty; /* past MAX_TYPES: leaks one small object per name, never wrong */
		return NULL;
	}
	return cq_error_create(CQ_ERR_NOT_FOUND, "type %s not found in the DWARF of %s", name,
			       cq_core_type_sources(core));
}

struct cq_error *cq_core_find_type(struct cq_core *core, const char *name,
				   const struct cq_type **ret)
{
	return cq_core_find_type_among(core, name, NULL, NULL, ret);
}

/* Strip typedefs and qualifiers. */
static bool peel(const Dwarf_Die *die, Dwarf_Die *ret)
{
	Dwarf_Die d = *die;
	return dwarf_peel_type(&d, ret) == 0;
}

/* A member's byte offset: a constant, or (DWARF 2) a DW_OP_plus_uconst expression; union
 * members have none (0). */
static bool member_location(Dwarf_Die *m, int64_t *ret)
{
	Dwarf_Attribute a;
	if (!dwarf_attr(m, DW_AT_data_member_location, &a)) {
		Dwarf_Word bits;
		if (dwarf_attr(m, DW_AT_data_bit_offset, &a) && dwarf_formudata(&a, &bits) == 0) {
			*ret = (int64_t)(bits / 8);
			return true;
		}
		*ret = 0;
		return true;
	}
	Dwarf_Word u;
	if (dwarf_formudata(&a, &u) == 0) {
		if (u > INT64_MAX)
			return false;
		*ret = (int64_t)u;
		return true;
	}
	Dwarf_Op *ops;
	size_t n;
	if (dwarf_getlocation(&a, &ops, &n) == 0 && n == 1 && ops[0].atom == DW_OP_plus_uconst) {
		*ret = (int64_t)ops[0].number;
		return true;
	}
	return false;
}

static int64_t member_offset(const Dwarf_Die *type, const char *field, int depth)
{
	Dwarf_Die agg, m;
	if (depth > 8 || !peel(type, &agg))
		return -1;
	int tag = dwarf_tag(&agg);
	if (tag != DW_TAG_structure_type && tag != DW_TAG_union_type && tag != DW_TAG_class_type)
		return -1;
	if (dwarf_child(&agg, &m) != 0)
		return -1;
	do {
		if (dwarf_tag(&m) != DW_TAG_member)
			continue;
		int64_t off;
		if (!member_location(&m, &off))
			continue;
		const char *name = dwarf_diename(&m);
		if (name) {
			if (strcmp(name, field) == 0)
				return off;
			continue;
		}
		/* an anonymous struct or union: its members are the outer type's */
		Dwarf_Attribute a;
		Dwarf_Die inner;
		if (dwarf_attr(&m, DW_AT_type, &a) && dwarf_formref_die(&a, &inner)) {
			int64_t r = member_offset(&inner, field, depth + 1);
			if (r >= 0 && off <= INT64_MAX - r)
				return off + r;
		}
	} while (dwarf_siblingof(&m, &m) == 0);
	return -1;
}

int64_t cq_type_field_offset(const struct cq_type *t, const char *field)
{
	return t && field ? member_offset(&t->die, field, 0) : -1;
}

bool cq_type_enumerator(const struct cq_type *t, const char *name, int64_t *ret)
{
	Dwarf_Die e, m;
	if (!t || !name || !peel(&t->die, &e) || dwarf_tag(&e) != DW_TAG_enumeration_type || dwarf_child(&e, &m) != 0)
		return false;
	do {
		Dwarf_Attribute a;
		Dwarf_Sword v;
		if (dwarf_tag(&m) == DW_TAG_enumerator && !strcmp(dwarf_diename(&m) ?: "", name) &&
		    dwarf_attr(&m, DW_AT_const_value, &a) && dwarf_formsdata(&a, &v) == 0) {
			*ret = (int64_t)v;
			return true;
		}
	} while (dwarf_siblingof(&m, &m) == 0);
	return false;
}

int64_t cq_type_size(const struct cq_type *t)
{
	Dwarf_Die d;
	Dwarf_Word size;
	if (!t || !peel(&t->die, &d) || dwarf_aggregate_size(&d, &size) != 0)
		return -1;
	return (int64_t)size;
}

const char *cq_type_name(const struct cq_type *t)
{
	return t->name;
}

const char *cq_type_file(const struct cq_type *t)
{
	return t->src->shown ? t->src->shown : t->src->path;
}

const char *cq_core_type_sources(struct cq_core *core)
{
	struct cq_types *t = types_of(core);
	if (!t)
		return "(out of memory)";
	free(t->summary);
	t->summary = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return "(out of memory)";
	/* files with DWARF by path; the many without by base name, the first few only */
	size_t with = 0, without = 0, unreached = 0;
	for (size_t i = 0; i < t->nsources; i++) {
		struct source *s = &t->sources[i];
		if (s->opened && s->dw)
			fprintf(f, "%s%s", with++ ? ", " : "", s->shown ? s->shown : s->path);
	}
	fprintf(f, "%s%zu file(s) with DWARF", with ? " (" : "", with);
	if (with)
		fputc(')', f);
	for (size_t i = 0; i < t->nsources; i++) {
		struct source *s = &t->sources[i];
		if (!s->opened) {
			unreached++;
			continue;
		}
		if (s->dw || s->unreadable)
			continue;
		const char *base = strrchr(s->path, '/') ? strrchr(s->path, '/') + 1 : s->path;
		if (without < 6)
			fprintf(f, "%s%s", without ? ", " : "; without DWARF: ", base);
		without++;
	}
	if (without > 6)
		fprintf(f, " and %zu more", without - 6);
	for (size_t i = 0; i < t->nsources; i++)
		if (t->sources[i].unreadable)
			fprintf(f, "; unreadable: %s", t->sources[i].unreadable);
	if (unreached)
		fprintf(f, "; %zu not searched", unreached);
	if (!t->nsources)
		fputs("; no file at all (no image file found, no type donor given)", f);
	fclose(f);
	t->summary = buf;
	return buf ? buf : "(out of memory)";
}

/* The types and their sources, when the core is closed (cq__core_own). */
static void free_types(struct cq_core *core)
{
	struct cq_types *t = core->types;
	if (!t)
		return;
	for (size_t i = 0; i < t->nfound; i++) {
		free(t->found[i]->name);
		free(t->found[i]);
	}
	for (size_t i = 0; i < t->nsources; i++) {
		struct source *s = &t->sources[i];
		if (s->dw)
			dwarf_end(s->dw);
		if (s->fd >= 0)
			close(s->fd);
		free(s->index);
		free(s->path);
		free(s->unreadable);
		free(s->shown);
	}
	free(t->sources);
	free(t->summary);
	free(t);
	core->types = NULL;
}
