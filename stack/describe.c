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

#include "corelib/demangle.h"
#include "corelib/image.h"
#include "corelib/text.h"
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

/* The name and its demangled form (null when it is not mangled). */
static void set_name(json_t *f, const char *name)
{
	json_object_set_new(f, "function", name ? cq_json_str(name) : json_null());
	char *d = name ? cq_demangle(name, true) : NULL;
	json_object_set_new(f, "demangled", d ? cq_json_str(d) : json_null());
	free(d);
}

static void set_source(json_t *f, const char *file, int line)
{
	json_object_set_new(f, "file", file ? cq_json_str(file) : json_null());
	json_object_set_new(f, "line", file && line > 0 ? json_integer(line) : json_null());
}

/* A scope's name for people: the linkage name where there is one (it demangles to the
 * qualified name), else DW_AT_name, following abstract origins. */
static const char *scope_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	if (!n)
		n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	return n ? n : dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
}

static void set_module(json_t *f, const struct cq_symref *ref, bool known, uint64_t pc)
{
	const char *base = known && ref->image ? strrchr(ref->image->name, '/') : NULL;
	json_object_set_new(f, "module", known && ref->image ? cq_json_str(base ? base + 1 : ref->image->name)
							 : json_null());
	json_object_set_new(f, "module_offset", known && ref->image && ref->image->bias_known
							? cq_json_hex(pc - ref->image->bias) : json_null());
}

/* A description without the frame's own keys (index, pc, cfa, found_by): module onwards. */
static json_t *template(json_t *list, bool inlined)
{
	json_t *f = json_pack("{s:b}", "inlined", inlined);
	json_array_append_new(list, f);
	return f;
}

/* What is known at @p at, innermost first: the inlined calls, then the physical frame. */
static json_t *describe(const struct cq_stack_ctx *ctx, uint64_t pc, uint64_t at)
{
	json_t *list = json_array();
	struct cq_symref ref;
	struct cq_error *err = cq_core_symbolize(ctx->core, at, &ref);
	bool known = !err;
	cq_error_destroy(err);

	/* the line of the innermost scope, then per inlined call the line it was called from */
	const char *file = NULL;
	int line = 0;
	const char *base = known && ref.image ? strrchr(ref.image->name, '/') : NULL;
	bool lines = ctx->system_lines ||
		     !(known && ref.image && cq_stack_system_module(base ? base + 1 : ref.image->name));
	Dwfl_Module *mod = lines ? dwfl_addrmodule(ctx->dwfl, at) : NULL;
	Dwfl_Line *l = mod ? dwfl_module_getsrc(mod, at) : NULL;
	if (l)
		file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
	Dwarf_Addr bias;
	Dwarf_Die *cu = mod ? dwfl_module_addrdie(mod, at, &bias) : NULL;
	Dwarf_Die *scopes = NULL;
	int nscopes = cu ? dwarf_getscopes(cu, at - bias, &scopes) : 0;
	Dwarf_Files *files = NULL;
	unsigned inlined = 0;
	for (int i = 0; i < nscopes; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag == DW_TAG_subprogram)
			break;
		/* real code nests a few inlined calls; crafted DWARF could nest thousands, and
		 * --max-frames counts physical frames only */
		if (tag != DW_TAG_inlined_subroutine || ++inlined > CQ_STACK_MAX_INLINED)
			continue;
		json_t *f = template(list, true);
		set_module(f, &ref, known, pc);
		set_name(f, scope_name(&scopes[i]));
		json_object_set_new(f, "function_offset", json_null());
		set_source(f, file, line);
		/* the caller's line is where this call was inlined */
		Dwarf_Attribute a;
		Dwarf_Word cf = 0, cl = 0;
		size_t nfiles;
		file = NULL;
		if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &a), &cf) == 0 &&
		    (files || dwarf_getsrcfiles(cu, &files, &nfiles) == 0))
			file = dwarf_filesrc(files, cf, NULL, NULL);
		line = dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &a), &cl) == 0 ? (int)cl : 0;
	}
	free(scopes);

	json_t *f = template(list, false);
	set_module(f, &ref, known, pc);
	if (known && ref.sym && ref.image && ref.image->bias_known) {
		set_name(f, ref.sym->name);
		json_object_set_new(f, "function_offset", cq_json_hex(pc - (ref.image->bias + ref.sym->value)));
	} else {
		/* corelib has no symbol here: libdwfl's may (the vDSO's own .dynsym, read from
		 * the core's memory: __kernel_vsyscall, __kernel_rt_sigreturn) */
		Dwfl_Module *m = dwfl_addrmodule(ctx->dwfl, at);
		GElf_Off off = 0;
		GElf_Sym sym;
		const char *name = m ? dwfl_module_addrinfo(m, at, &off, &sym, NULL, NULL, NULL) : NULL;
		set_name(f, name);
		json_object_set_new(f, "function_offset", name ? cq_json_hex(pc - (at - off)) : json_null());
	}
	set_source(f, file, line);
	return list;
}

json_t *cq_stack_describe(const struct cq_stack_ctx *ctx, json_t *frames, unsigned *index, uint64_t pc,
			  uint64_t at, enum cq_found_by how)
{
	/* the same return address recurs in many threads (every worker parked in the same
	 * call): its description (symbols, DWARF scopes, line tables) is worked out once */
	char key[40], *k = key;
	for (int sh = 60; sh >= 0; sh -= 4) /* "%016x%016x" without printf: one per frame */
		*k++ = "0123456789abcdef"[(pc >> sh) & 15];
	for (int sh = 60; sh >= 0; sh -= 4)
		*k++ = "0123456789abcdef"[(at >> sh) & 15];
	*k = 0;
	json_t *list = ctx->cache ? json_object_get(ctx->cache, key) : NULL;
	if (!list) {
		list = describe(ctx, pc, at);
		if (ctx->cache)
			json_object_set_new(ctx->cache, key, list); /* the cache owns it */
	}
	json_t *t, *f = NULL;
	size_t i;
	json_array_foreach(list, i, t) {
		bool inl = json_is_true(json_object_get(t, "inlined"));
		f = json_object();
		json_object_set_new_nocheck(f, "index", json_integer((*index)++));
		json_object_set_new_nocheck(f, "pc", cq_json_hex(pc));
		json_object_set_new_nocheck(f, "cfa", json_null());
		json_object_set_new_nocheck(f, "inlined", json_boolean(inl));
		json_object_set_new_nocheck(f, "found_by", json_string_nocheck(cq_found_by_name(inl ? CQ_FOUND_INLINE
												  : how)));
		json_object_update(f, t); /* module onwards, in order ("inlined" again: same value) */
		json_array_append_new(frames, f);
	}
	if (!ctx->cache)
		json_decref(list);
	return f;
}
