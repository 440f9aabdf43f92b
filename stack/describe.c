/* SPDX-License-Identifier: MIT */
/* What a frame is (internal.h): its module and function from corelib's symbols (the same
 * names as everywhere in coreq, bundles included), its source line and inlined calls from
 * the module's DWARF through libdw, when there is any. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf/demangle.h"
#include "corelib/image.h"
#include "base/text.h"
#include "internal.h"

bool cq_stack_system_module(const char *base)
{
	static const char *const prefixes[] = {"libc.so", "libc-", "libpthread", "libdl.so", "libdl-", "ld-linux",
					       "ld64.so", "ld.so", "ld-2.", "linux-vdso", "linux-gate", "[vdso]"};
	if (!base)
		return true;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(*prefixes); i++)
		if (!strncmp(base, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/* The descriptions met so far, by pc and lookup address (open addressing; a power of two
 * of slots, at most half used). Each owns its strings. */
struct desc {
	uint64_t pc, at;
	struct cq_frame_info *items; /* the inlined calls innermost first, then the physical frame */
	unsigned n;
	/* The physical frame's function is still to be looked up in the symbols of its image
	 * (cq_stack_name_frames): a walk's frames are named together, one scan of a large
	 * symbol table for all of them. */
	bool unnamed;
	/* Its name in a Fortran source (fortran_name), its demangled form once it is named;
	 * NULL elsewhere. Owned. */
	char *source_name;
};

struct cq_frame_infos {
	struct desc *slots;
	size_t mask, used;
	size_t unnamed; /* descriptions whose function is still to be looked up */
};

struct cq_frame_infos *cq_frame_infos_create(void)
{
	struct cq_frame_infos *c = calloc(1, sizeof(*c));
	if (c && !(c->slots = calloc(64, sizeof(*c->slots)))) {
		free(c);
		return NULL;
	}
	if (c)
		c->mask = 63;
	return c;
}

static void info_free(struct cq_frame_info *i)
{
	free((char *)i->module);
	free((char *)i->function);
	free((char *)i->demangled);
	free((char *)i->file);
}

void cq_frame_infos_free(struct cq_frame_infos *c)
{
	if (!c)
		return;
	for (size_t k = 0; k <= c->mask; k++) {
		for (unsigned i = 0; i < c->slots[k].n; i++)
			info_free(&c->slots[k].items[i]);
		free(c->slots[k].items);
		free(c->slots[k].source_name); /* never named (out of memory) */
	}
	free(c->slots);
	free(c);
}

static size_t slot_of(const struct cq_frame_infos *c, uint64_t pc, uint64_t at)
{
	uint64_t h = (pc * 0x9e3779b97f4a7c15u) ^ (at * 0xc2b2ae3d27d4eb4fu);
	size_t k = (size_t)(h >> 32) & c->mask;
	while (c->slots[k].items && (c->slots[k].pc != pc || c->slots[k].at != at))
		k = (k + 1) & c->mask;
	return k;
}

/* Twice the slots, every description moved; false when out of memory (the table is kept). */
static bool grow(struct cq_frame_infos *c)
{
	struct cq_frame_infos big = {calloc(2 * (c->mask + 1), sizeof(*c->slots)), 2 * c->mask + 1, c->used, c->unnamed};
	if (!big.slots)
		return false;
	for (size_t k = 0; k <= c->mask; k++)
		if (c->slots[k].items)
			big.slots[slot_of(&big, c->slots[k].pc, c->slots[k].at)] = c->slots[k];
	free(c->slots);
	*c = big;
	return true;
}

/* A copy of @p s (NULL stays NULL); *@p ok false when there is no memory for it. */
static const char *copy_str(const char *s, bool *ok)
{
	char *d = s ? strdup(s) : NULL;
	if (s && !d)
		*ok = false;
	return d;
}

/* The name and its demangled form (NULL when it is not mangled). A name for people that
 * no demangler gives is @p source (a Fortran procedure's name in the source, fortran_name:
 * gfortran's symbols are not mangled in a way any demangler reads; a DWARF name qualified
 * by its namespaces and classes, qualified_name); it is the demangled form when it
 * differs. */
static void set_name(struct cq_frame_info *f, const char *name, const char *source, bool *ok)
{
	f->function = copy_str(name, ok);
	char *d = name && source ? (strcmp(name, source) ? strdup(source) : NULL)
				 : name ? cq_display_name(name, true) : NULL;
	if (name && source && strcmp(name, source) && !d)
		*ok = false;
	f->demangled = d; /* owned as returned */
}

static void set_source(struct cq_frame_info *f, const char *file, int line, bool *ok)
{
	f->file = copy_str(file, ok);
	f->line = file && line > 0 ? line : 0;
}

/* A scope's linkage name (it demangles to the qualified name), following abstract
 * origins; NULL when it has none. */
static const char *linkage_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	return n ? n : dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
}

/* A scope's DW_AT_name qualified by the namespaces, classes and structures its declaration
 * is in, as gdb names it ("std::thread::_Invoker<...>::_M_invoke<0>", "dprog::Waiter::pull"):
 * for the functions GCC gives no linkage name (many template instantiations over lambda
 * types) and inlined Rust methods. NULL when it has no name or no memory. */
static char *qualified_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	Dwarf_Die d = *die, next;
	/* the concrete call -> its abstract function -> the declaration in its class */
	for (int k = 0; k < 8 && (dwarf_formref_die(dwarf_attr(&d, DW_AT_abstract_origin, &a), &next) ||
				  dwarf_formref_die(dwarf_attr(&d, DW_AT_specification, &a), &next)); k++)
		d = next;
	const char *name = dwarf_diename(&d);
	if (!name)
		return NULL;
	Dwarf_Die *path = NULL;
	int n = dwarf_getscopes_die(&d, &path); /* the DIE, then what contains it, out to its unit */
	size_t len = strlen(name) + 1;
	for (int k = 1; k < n; k++)
		len += strlen(dwarf_diename(&path[k]) ? dwarf_diename(&path[k]) : "(anonymous namespace)") + 2;
	char *q = malloc(len);
	if (q) {
		*q = 0;
		for (int k = n - 1; k >= 1; k--) {
			int tag = dwarf_tag(&path[k]);
			const char *part = dwarf_diename(&path[k]);
			if (tag == DW_TAG_namespace && !part)
				part = "(anonymous namespace)";
			if (!part || (tag != DW_TAG_namespace && tag != DW_TAG_class_type && tag != DW_TAG_structure_type &&
				      tag != DW_TAG_union_type))
				continue;
			strcat(q, part);
			strcat(q, "::");
		}
		strcat(q, name);
	}
	free(path);
	return q;
}

/* The scopes under @p parent that hold @p pc, innermost first, into @p out (at most @p max):
 * what dwarf_getscopes gives, but also where a function's DIE is nested in a DIE whose
 * ranges do not hold the pc. libdw 0.188 descends only into DIEs whose ranges hold it, and
 * finds nothing for a Fortran module procedure (DW_TAG_module has no ranges), a procedure
 * contained in another, the function GCC outlines an OpenMP region into (its DIE is
 * inside the function the region is in: main._omp_fn.0 in main), or a Rust method (inside
 * its struct's DIE, in its crate's namespace): no inlined call there.
 * Modules and namespaces gone through follow the function in @p out (a name's qualifiers);
 * functions gone through that do not hold the pc do not. Returns their count. */
static int scopes_nested(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *out, int max, int depth)
{
	Dwarf_Die child;
	if (depth > CQ_STACK_MAX_INLINED || dwarf_child(parent, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child), n;
		bool scope = tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block;
		if (scope && dwarf_haspc(&child, pc) > 0) {
			n = scopes_nested(&child, pc, out, max, depth + 1); /* the inner ones first */
			if (n < max)
				out[n++] = child;
			return n;
		}
		/* rustc puts methods inside their type's DIE */
		bool holder = tag == DW_TAG_module || tag == DW_TAG_namespace || tag == DW_TAG_structure_type ||
			      tag == DW_TAG_class_type || tag == DW_TAG_union_type || tag == DW_TAG_enumeration_type;
		if ((scope && tag != DW_TAG_inlined_subroutine) || holder) {
			if ((n = scopes_nested(&child, pc, out, max, depth + 1)) > 0) {
				if (!scope && n < max)
					out[n++] = child;
				return n;
			}
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

/* Whether @p cu is Fortran (DW_AT_language: Fortran 77, 90, 95, 2003, 2008, 2018). */
static bool fortran_cu(Dwarf_Die *cu)
{
	switch (dwarf_srclang(cu)) {
	case DW_LANG_Fortran77: case DW_LANG_Fortran90: case DW_LANG_Fortran95:
	case 0x22 /* DW_LANG_Fortran03 */: case 0x23 /* DW_LANG_Fortran08 */: case 0x2d /* DW_LANG_Fortran18 */:
		return true;
	default:
		return false;
	}
}

/* A Fortran procedure's name as its source and gdb write it: its DW_AT_name after the
 * modules it is in ("solver::step" for gfortran's symbol __solver_MOD_step, "foo" for an
 * external foo_), from @p die, an out-of-line DIE or an inlined call (its abstract origin).
 * @p outer: what contains the out-of-line DIE, innermost first (@p nouter of them); for an
 * inlined call the origin's are looked up. NULL when it has no name or no memory. */
static char *fortran_name(Dwarf_Die *die, Dwarf_Die *outer, int nouter)
{
	Dwarf_Attribute a;
	Dwarf_Die origin, *d = die, *found = NULL;
	if (dwarf_formref_die(dwarf_attr(die, DW_AT_abstract_origin, &a), &origin)) {
		d = &origin;
		nouter = dwarf_getscopes_die(d, &found) - 1; /* the origin, then what contains it */
		outer = found ? found + 1 : NULL;
	}
	const char *name = dwarf_diename(d);
	size_t len = name ? strlen(name) + 1 : 0;
	for (int k = 0; name && k < nouter && k < CQ_STACK_MAX_INLINED; k++)
		if (dwarf_tag(&outer[k]) == DW_TAG_module && dwarf_diename(&outer[k]))
			len += strlen(dwarf_diename(&outer[k])) + 2;
	char *q = name ? malloc(len) : NULL;
	if (q) {
		*q = 0;
		for (int k = (nouter < CQ_STACK_MAX_INLINED ? nouter : CQ_STACK_MAX_INLINED) - 1; k >= 0; k--)
			if (dwarf_tag(&outer[k]) == DW_TAG_module && dwarf_diename(&outer[k])) {
				strcat(q, dwarf_diename(&outer[k]));
				strcat(q, "::");
			}
		strcat(q, name);
	}
	free(found);
	return q;
}

static void set_module(struct cq_frame_info *f, const struct cq_symref *ref, bool known, uint64_t pc, bool *ok)
{
	const char *base = known && ref->image ? strrchr(ref->image->name, '/') : NULL;
	f->module = known && ref->image ? copy_str(base ? base + 1 : ref->image->name, ok) : NULL;
	f->has_module_offset = known && ref->image && ref->image->bias_known;
	f->module_offset = f->has_module_offset ? pc - ref->image->bias : 0;
}

/* The physical frame's function (the last of @p d's items) from the symbol @p sym the
 * frame's image has at its lookup address (NULL: none, or the image has no symbols). */
static void name_frame(const struct cq_stack_ctx *ctx, struct desc *d, const struct cq_symref *ref)
{
	struct cq_frame_info *f = &d->items[d->n - 1];
	bool ok = true;
	if (ref->sym && ref->image && ref->image->bias_known) {
		set_name(f, ref->sym->name, d->source_name, &ok);
		f->has_function_offset = true;
		f->function_offset = d->pc - (ref->image->bias + ref->sym->value);
	} else {
		/* corelib has no symbol here: libdwfl's may (the vDSO's own .dynsym, read from
		 * the core's memory: __kernel_vsyscall, __kernel_rt_sigreturn) */
		Dwfl_Module *m = dwfl_addrmodule(ctx->dwfl, d->at);
		GElf_Off off = 0;
		GElf_Sym sym;
		const char *name = m ? dwfl_module_addrinfo(m, d->at, &off, &sym, NULL, NULL, NULL) : NULL;
		set_name(f, name, name ? d->source_name : NULL, &ok);
		f->has_function_offset = name != NULL;
		f->function_offset = d->pc - (d->at - off);
	}
	/* out of memory: the frame stays without a name ("??") */
	free(d->source_name);
	d->source_name = NULL;
}

int cq_stack_concrete_scopes(Dwarf_Die *unit, Dwarf_Addr addr, Dwarf_Die **scopes)
{
	*scopes = NULL;
	int n = dwarf_getscopes(unit, addr, scopes);
	/* dwarf_getscopes goes on from the innermost inlined call to the scopes of its
	 * abstract definition (its class, namespace), not to the calls it was inlined into:
	 * those are the scopes of that concrete call's DIE, out to the physical function. The
	 * blocks inside the inlined call (before it in the list) are kept in front. */
	for (int i = 0; i < n; i++)
		if (dwarf_tag(&(*scopes)[i]) == DW_TAG_inlined_subroutine) {
			Dwarf_Die inl = (*scopes)[i], *chain = NULL;
			int nchain = dwarf_getscopes_die(&inl, &chain);
			Dwarf_Die *all = nchain > 0 ? malloc((size_t)(i + nchain) * sizeof(*all)) : NULL;
			if (all) {
				memcpy(all, *scopes, (size_t)i * sizeof(*all));
				memcpy(all + i, chain, (size_t)nchain * sizeof(*all));
				free(*scopes);
				*scopes = all;
				n = i + nchain;
			}
			free(chain);
			break;
		}
	return n;
}

/* What is known at @p at into @p d (innermost first: the inlined calls, then the physical
 * frame), but for the physical frame's function when its image has symbols to look it up
 * in (d->unnamed: cq_stack_name_frames); false when out of memory. */
static bool describe(const struct cq_stack_ctx *ctx, uint64_t pc, uint64_t at, struct desc *d)
{
	struct cq_frame_info items[CQ_STACK_MAX_INLINED + 1];
	unsigned n = 0;
	bool ok = true;
	struct cq_symref ref = {.address = at};
	struct cq_error *err = cq_core_load_images(ctx->core);
	bool known = !err;
	cq_error_destroy(err);
	if (known)
		ref.image = cq_core_image_at(ctx->core, at);

	/* the line of the innermost scope, then per inlined call the line it was called from */
	const char *file = NULL;
	int line = 0;
	const char *base = known && ref.image ? strrchr(ref.image->name, '/') : NULL;
	bool lines = ctx->system_lines ||
		     !(known && ref.image && cq_stack_system_module(base ? base + 1 : ref.image->name));
	Dwfl_Module *mod = lines ? dwfl_addrmodule(ctx->dwfl, at) : NULL;
	Dwarf_Addr bias = 0;
	Dwarf_Die cu_mem, split_mem;
	Dwarf_Die *cu = mod ? cq_stack_unit_at(ctx->units, ctx->core, known ? ref.image : NULL, mod, at, &bias, &cu_mem) : NULL;
	/* lines from the unit's line table (a split unit's skeleton has it), scopes from the
	 * unit that has the functions (the split unit) */
	Dwarf_Line *l = cu ? dwarf_getsrc_die(cu, at - bias) : NULL;
	if (l) {
		file = dwarf_linesrc(l, NULL, NULL);
		dwarf_lineno(l, &line);
	}
	Dwarf_Die *su = cu ? cq_stack_scope_unit(ctx->units, ctx->core, known ? ref.image : NULL, cu, &split_mem) : NULL;
	Dwarf_Die *scopes = NULL;
	int nscopes = su ? cq_stack_concrete_scopes(su, at - bias, &scopes) : 0;
	if (su && nscopes <= 0) {
		/* perhaps nested in a DIE without the pc (scopes_nested) */
		Dwarf_Die *own = malloc((CQ_STACK_MAX_INLINED + 16) * sizeof(*own));
		int nown = own ? scopes_nested(su, at - bias, own, CQ_STACK_MAX_INLINED + 16, 0) : 0;
		free(scopes);
		scopes = own;
		nscopes = nown;
	}
	Dwarf_Files *files = NULL;
	bool fortran = su && fortran_cu(su);
	char *source_name = NULL;
	for (int i = 0; i < nscopes; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag == DW_TAG_subprogram) {
			if (fortran) /* the physical frame's (named with its symbol, later) */
				source_name = fortran_name(&scopes[i], &scopes[i + 1], nscopes - i - 1);
			break;
		}
		/* real code nests a few inlined calls; crafted DWARF could nest thousands, and
		 * --max-frames counts physical frames only */
		if (tag != DW_TAG_inlined_subroutine || n >= CQ_STACK_MAX_INLINED)
			continue;
		struct cq_frame_info *f = &items[n++];
		*f = (struct cq_frame_info){0};
		set_module(f, &ref, known, pc, &ok);
		/* a Fortran procedure by its source name; else the linkage name, demangled; else
		 * the name qualified from the DWARF, as the source (and gdb) write it */
		Dwarf_Attribute na;
		const char *link = linkage_name(&scopes[i]);
		const char *dwname = dwarf_formstring(dwarf_attr_integrate(&scopes[i], DW_AT_name, &na));
		char *fname = fortran ? fortran_name(&scopes[i], NULL, 0) : !link ? qualified_name(&scopes[i]) : NULL;
		set_name(f, link ? link : dwname, fname, &ok);
		free(fname);
		set_source(f, file, line, &ok);
		/* the caller's line is where this call was inlined */
		Dwarf_Attribute a;
		Dwarf_Word cf = 0, cl = 0;
		size_t nfiles;
		file = NULL;
		if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &a), &cf) == 0 &&
		    (files || dwarf_getsrcfiles(su, &files, &nfiles) == 0))
			file = dwarf_filesrc(files, cf, NULL, NULL);
		line = dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &a), &cl) == 0 ? (int)cl : 0;
	}
	free(scopes);

	struct cq_frame_info *f = &items[n++];
	*f = (struct cq_frame_info){0};
	set_module(f, &ref, known, pc, &ok);
	set_source(f, file, line, &ok);
	d->items = ok ? malloc(n * sizeof(*items)) : NULL;
	if (!d->items) {
		for (unsigned i = 0; i < n; i++)
			info_free(&items[i]);
		free(source_name);
		return false;
	}
	memcpy(d->items, items, n * sizeof(*items));
	d->n = n;
	d->pc = pc;
	d->at = at;
	d->source_name = source_name;
	d->unnamed = ref.image && ref.image->bias_known && cq_image_symbol_file(ref.image);
	if (!d->unnamed)
		name_frame(ctx, d, &ref); /* no symbols to look in: libdwfl's, now */
	return true;
}

bool cq_stack_name_frames(const struct cq_stack_ctx *ctx)
{
	struct cq_frame_infos *c = ctx->cache;
	if (!c->unnamed)
		return true;
	struct desc **ds = malloc(c->unnamed * sizeof(*ds));
	uint64_t *ats = malloc(c->unnamed * sizeof(*ats));
	struct cq_symref *refs = malloc(c->unnamed * sizeof(*refs));
	struct cq_error *err = NULL;
	size_t n = 0;
	if (ds && ats && refs) {
		for (size_t k = 0; k <= c->mask && n < c->unnamed; k++)
			if (c->slots[k].items && c->slots[k].unnamed) {
				ds[n] = &c->slots[k];
				ats[n++] = c->slots[k].at;
			}
		err = cq_core_symbolize_many(ctx->core, ats, n, refs);
	}
	bool ok = ds && ats && refs && !err;
	for (size_t i = 0; ok && i < n; i++) {
		name_frame(ctx, ds[i], &refs[i]);
		ds[i]->unnamed = false;
	}
	if (ok)
		c->unnamed = 0;
	cq_error_destroy(err);
	free(ds);
	free(ats);
	free(refs);
	return ok;
}

int cq_stack_describe(const struct cq_stack_ctx *ctx, struct cq_thread_stack *ts, uint64_t pc, uint64_t at,
		      enum cq_found_by how)
{
	/* the same return address recurs in many threads (every worker parked in the same
	 * call): its description (symbols, DWARF scopes, line tables) is worked out once */
	struct cq_frame_infos *c = ctx->cache;
	size_t k = slot_of(c, pc, at);
	if (!c->slots[k].items) {
		if (2 * (c->used + 1) > c->mask + 1) {
			if (!grow(c))
				return -1;
			k = slot_of(c, pc, at);
		}
		if (!describe(ctx, pc, at, &c->slots[k]))
			return -1;
		c->used++;
		c->unnamed += c->slots[k].unnamed;
	}
	const struct desc *d = &c->slots[k];
	if (ts->nframes + d->n > ts->cap) {
		/* most walks in `info` end at the user frame, a few frames in */
		unsigned cap = ts->cap ? ts->cap : 4;
		while (cap < ts->nframes + d->n)
			cap *= 2;
		struct cq_frame *fr = realloc(ts->frames, cap * sizeof(*fr));
		if (!fr)
			return -1;
		ts->frames = fr;
		ts->cap = cap;
	}
	for (unsigned i = 0; i < d->n; i++) {
		bool inl = i + 1 < d->n;
		ts->frames[ts->nframes] = (struct cq_frame){.index = ts->nframes, .pc = pc, .inlined = inl,
							    .found_by = inl ? CQ_FOUND_INLINE : how, .info = &d->items[i]};
		ts->nframes++;
	}
	return (int)ts->nframes - 1;
}
