/* SPDX-License-Identifier: MIT */
/* Image discovery: executable from auxv, then the dynamic linker's link_map list (bounded
 * and cycle-safe), then NT_FILE for anything else that is an ELF image. */
#include "image.h"

#include <elf.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/debuginfod.h"
#include "elf/from_memory.h"
#include "base/decode.h"
#include "internal.h"
#include "source.h"

#define R_DEBUG_FIELDS(X, T) \
	X(T, S32, r_version, 1) X(T, PTR, r_map, 1) X(T, PTR, r_brk, 1) X(T, S32, r_state, 1) \
	X(T, PTR, r_ldbase, 1)
CQ_DEFINE_STRUCT(cq_r_debug, R_DEBUG_FIELDS);

#define LINK_MAP_FIELDS(X, T) \
	X(T, PTR, l_addr, 1) X(T, PTR, l_name, 1) X(T, PTR, l_ld, 1) X(T, PTR, l_next, 1) \
	X(T, PTR, l_prev, 1)
CQ_DEFINE_STRUCT(cq_link_map, LINK_MAP_FIELDS);

#define MAX_DYNAMIC_ENTRIES 4096
#define MAX_PATH_LEN 4096

const char *cq_image_status_name(enum cq_image_status s)
{
	switch (s) {
	case CQ_IMAGE_FOUND: return "found";
	case CQ_IMAGE_UNVERIFIED: return "found-unverified";
	case CQ_IMAGE_MISSING: return "missing";
	case CQ_IMAGE_MISMATCH: return "build-id-mismatch";
	case CQ_IMAGE_VIRTUAL: return "in-memory";
	case CQ_IMAGE_BUNDLED: return "bundled";
	}
	return "unknown";
}

/* The images, when the core is closed (cq__core_own). */
static void free_images(struct cq_core *core)
{
	for (size_t i = 0; i < core->nimages; i++) {
		struct cq_image *img = &core->images[i];
		free(img->name);
		free(img->map_name);
		free(img->found_path);
		free(img->problem);
		free(img->debug_path);
		free(img->alt_path);
		cq_elf_close(img->alt);
		free(img->file_origin);
		free(img->debug_origin);
		cq_elf_close(img->elf);
		cq_elf_close(img->debug);
	}
	free(core->images);
	free(core->images_source);
	core->images = NULL;
	core->nimages = 0;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* An image named after file map path @p path: the path as it was, without the kernel's
 * " (deleted)" (the file map's name kept as its map_name). NULL when out of memory. */
static struct cq_image *add_image(struct cq_core *core, const char *name);
static struct cq_image *add_mapped_image(struct cq_core *core, const char *path)
{
	size_t n = cq_file_map_name_len(path);
	char *name = strndup(path, n);
	struct cq_image *img = name ? add_image(core, name) : NULL;
	free(name);
	if (img && n != strlen(path) && !(img->map_name = strdup(path)))
		return NULL;
	return img;
}

bool cq_image_has_path(const struct cq_image *img, const char *path)
{
	return strcmp(img->name, path) == 0 || (img->map_name && strcmp(img->map_name, path) == 0);
}

struct cq_image *cq_core_image_named(struct cq_core *core, const char *name)
{
	for (size_t i = 0; i < core->nimages; i++)
		if (cq_image_has_path(&core->images[i], name))
			return &core->images[i];
	if (strchr(name, '/'))
		return NULL;
	for (size_t i = 0; i < core->nimages; i++)
		if (strcmp(base_name(core->images[i].name), name) == 0)
			return &core->images[i];
	return NULL;
}

struct cq_image *cq_core_image_at(struct cq_core *core, uint64_t addr)
{
	for (size_t i = 0; i < core->nimages; i++) {
		struct cq_image *img = &core->images[i];
		if (img->end > img->start && addr >= img->start && addr < img->end)
			return img;
	}
	return NULL;
}

struct cq_elf *cq_image_symbol_file(struct cq_image *img)
{
	/* a debug file found for DWARF alone may hold no .symtab (the image kept its own) */
	return img->debug && (img->debug->has_symtab || !img->elf || !img->elf->has_symtab) ? img->debug : img->elf;
}

static struct cq_image *add_image(struct cq_core *core, const char *name)
{
	struct cq_image *imgs = realloc(core->images, (core->nimages + 1) * sizeof(*imgs));
	if (!imgs)
		return NULL;
	core->images = imgs;
	cq__core_own(core, free_images);
	struct cq_image *img = &imgs[core->nimages];
	memset(img, 0, sizeof(*img));
	img->name = strdup(name);
	if (!img->name)
		return NULL;
	core->nimages++;
	return img;
}

/* Program headers of an image as the target has them in memory (kernel cores dump the
 * first page of every ELF mapping; qemu cores do not). Returns the number read. */
static size_t read_mem_phdrs(struct cq_core *core, uint64_t phaddr, size_t phnum,
			     uint64_t (*out)[3], size_t max)
{
	const struct cq_target *t = core->target;
	bool is64 = t->elf_class == ELFCLASS64;
	size_t entsize = is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	size_t n = 0;
	for (size_t i = 0; i < phnum && n < max; i++) {
		uint8_t ph[sizeof(Elf64_Phdr)];
		struct cq_error *err = cq_core_read(core, phaddr + i * entsize, ph, entsize);
		if (err) {
			cq_error_destroy(err);
			break;
		}
		out[n][0] = cq_load_uint(t, ph, 4);                      /* p_type */
		out[n][1] = cq_load_uint(t, ph + (is64 ? 16 : 8), is64 ? 8 : 4); /* p_vaddr */
		out[n][2] = cq_load_uint(t, ph + (is64 ? 40 : 20), is64 ? 8 : 4); /* p_memsz */
		n++;
	}
	return n;
}

/* Build-id from the ELF header an image has in target memory at @p base. */
static void build_id_from_memory(struct cq_core *core, struct cq_image *img, uint64_t base)
{
	const struct cq_target *t = core->target;
	bool is64 = t->elf_class == ELFCLASS64;
	uint8_t eh[sizeof(Elf64_Ehdr)];
	struct cq_error *err = cq_core_read(core, base, eh, is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr));
	if (err || memcmp(eh, ELFMAG, SELFMAG) != 0) {
		cq_error_destroy(err);
		return;
	}
	/* Only memory that came from the core proves what was loaded: the file fallback would
	 * compare the file with itself. */
	if (cq_core_mem_source(core, base, NULL) != CQ_MEM_CORE)
		return;
	uint64_t phoff = cq_load_uint(t, eh + (is64 ? 32 : 28), is64 ? 8 : 4);
	uint64_t phnum = cq_load_uint(t, eh + (is64 ? 56 : 44), 2);
	uint64_t ph[64][3];
	size_t n = read_mem_phdrs(core, base + phoff, phnum, ph, 64);
	uint64_t first_vaddr = UINT64_MAX;
	for (size_t i = 0; i < n; i++)
		if (ph[i][0] == PT_LOAD && ph[i][1] < first_vaddr)
			first_vaddr = ph[i][1] & ~UINT64_C(0xfff);
	if (first_vaddr == UINT64_MAX)
		return;
	uint64_t bias = base - first_vaddr;
	for (size_t i = 0; i < n; i++) {
		if (ph[i][0] != PT_NOTE || ph[i][2] > 4096)
			continue;
		uint8_t notes[4096];
		size_t len = (size_t)ph[i][2];
		err = cq_core_read(core, bias + ph[i][1], notes, len);
		if (err) {
			cq_error_destroy(err);
			continue;
		}
		for (size_t off = 0; off + 12 <= len;) {
			uint32_t namesz = (uint32_t)cq_load_uint(t, notes + off, 4);
			uint32_t descsz = (uint32_t)cq_load_uint(t, notes + off + 4, 4);
			uint32_t type = (uint32_t)cq_load_uint(t, notes + off + 8, 4);
			size_t name_at = off + 12, desc_at = name_at + ((namesz + 3u) & ~3u);
			if (desc_at > len || descsz > len - desc_at)
				break;
			if (type == NT_GNU_BUILD_ID && namesz == 4 &&
			    memcmp(notes + name_at, "GNU", 4) == 0 && descsz &&
			    descsz <= sizeof(img->build_id)) {
				memcpy(img->build_id, notes + desc_at, descsz);
				img->build_id_len = descsz;
				return;
			}
			off = desc_at + ((descsz + 3u) & ~3u);
		}
	}
}

/* The file at @p path when an image found before already has it open (the same file on
 * disk under any name): one cq_elf, symbol table included, for all of its names. A
 * link_map that lists one large library thousands of times costs one table, not one per
 * name. @p debug: among the separate debug files instead. NULL if none is open. */
static struct cq_elf *open_shared(struct cq_core *core, const char *path, bool debug)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return NULL;
	for (size_t i = 0; i < core->nimages; i++) {
		struct cq_elf *e = debug ? core->images[i].debug : core->images[i].elf;
		if (e && e->file && !e->file->mem && e->file->dev == (uint64_t)st.st_dev &&
		    e->file->ino == (uint64_t)st.st_ino)
			return cq_elf_share(e);
	}
	return NULL;
}

/* An image's own NT_FILE mappings. A file mapped again elsewhere (ASan's runtime maps
 * itself twice, a program may mmap its own executable) must not stretch the image over
 * everything in between, or every pc there is named after this image. Its loads are the
 * mappings (sorted by address) from the offset-0 one at its base up to the next offset-0
 * mapping of the file.
 *
 * cluster_anchor(): where they begin, the offset-0 mapping of the file at or below the
 * image's bias, else the first; nfile_maps if none. */
static size_t cluster_anchor(const struct cq_core *core, const struct cq_image *img)
{
	size_t anchor = SIZE_MAX;
	for (size_t i = 0; i < core->nfile_maps; i++) {
		const struct cq_file_map *m = &core->file_maps[i];
		if (m->offset != 0 || !cq_image_has_path(img, m->path))
			continue;
		if (anchor == SIZE_MAX || (img->bias_known && m->start <= img->bias))
			anchor = i;
	}
	return anchor == SIZE_MAX ? core->nfile_maps : anchor;
}

/* Whether mapping @p m of @p img's file is one the loader made for one of its loads: its
 * address less its file offset is the load's (bias + p_vaddr - p_offset, whatever the page
 * size), and it begins before the load's end. A part of the file mapped elsewhere (libbacktrace
 * maps an executable's debug sections to print a backtrace: gfortran's runtime errors, Rust
 * panics) is not. Without the file's loads or the bias every mapping of it counts. */
static bool load_mapping(const struct cq_image *img, const struct cq_file_map *m)
{
	if (!img->elf || !img->elf->nloads || !img->bias_known)
		return true;
	for (size_t k = 0; k < img->elf->nloads; k++) {
		const struct cq_load *l = &img->elf->loads[k];
		uint64_t at = img->bias + l->vaddr;
		if (m->start - m->offset == at - l->offset && m->start < at + l->memsz)
			return true;
	}
	return false;
}

/* The image's next own mapping at or after index @p i (mappings of other files passed
 * over, and of its file those made for none of its loads; another offset-0 one of its file
 * ends them), or nfile_maps. */
static size_t cluster_next(const struct cq_core *core, const struct cq_image *img, size_t anchor, size_t i)
{
	for (; i < core->nfile_maps; i++) {
		const struct cq_file_map *m = &core->file_maps[i];
		if (!cq_image_has_path(img, m->path))
			continue;
		if (i != anchor && m->offset == 0)
			return core->nfile_maps;
		if (load_mapping(img, m))
			return i;
	}
	return core->nfile_maps;
}

#define FOR_CLUSTER(core, img, a, i)                                                         \
	for (size_t a = cluster_anchor(core, img), i = cluster_next(core, img, a, a);        \
	     i < (core)->nfile_maps; i = cluster_next(core, img, a, i + 1))

/* Tell memory which target addresses @p img's verified file backs: its NT_FILE mappings
 * (what the kernel really mapped) when the core has them, else its PT_LOADs at its bias.
 * Once per image, as soon as both file and bias are known, so that reads made while the
 * later images are found already see the earlier ones' files. */
static void register_ranges(struct cq_core *core, struct cq_image *img)
{
	if (img->ranges_added || !img->elf || !img->elf->file || img->status == CQ_IMAGE_MISMATCH)
		return;
	struct cq_error *err = NULL;
	if (core->nfile_maps) {
		if (cluster_anchor(core, img) == core->nfile_maps)
			return; /* no mapping of its own yet */
		FOR_CLUSTER(core, img, anchor, i) {
			const struct cq_file_map *m = &core->file_maps[i];
			if (!err)
				err = cq__memory_add_file(core, m->start, m->end, img->elf->file, m->offset,
							  img->found_path);
		}
	} else {
		if (!img->bias_known)
			return;
		for (size_t k = 0; k < img->elf->nloads && !err; k++) {
			const struct cq_load *l = &img->elf->loads[k];
			err = cq__memory_add_file(core, img->bias + l->vaddr, img->bias + l->vaddr + l->filesz,
						  img->elf->file, l->offset, img->found_path);
		}
	}
	if (err)
		cq_core_problem(core, img->name, "%s", err->message);
	cq_error_destroy(err);
	img->ranges_added = true;
}

static void image_range(struct cq_core *core, struct cq_image *img)
{
	img->start = UINT64_MAX;
	img->end = 0;
	/* NT_FILE ranges of its own mappings, else its file's loads */
	FOR_CLUSTER(core, img, anchor, i) {
		const struct cq_file_map *m = &core->file_maps[i];
		img->from_file_note = true;
		if (m->start < img->start)
			img->start = m->start;
		if (m->end > img->end)
			img->end = m->end;
	}
	if (img->end == 0 && img->elf && img->bias_known) {
		for (size_t k = 0; k < img->elf->nloads; k++) {
			const struct cq_load *l = &img->elf->loads[k];
			if (img->bias + l->vaddr < img->start)
				img->start = img->bias + l->vaddr;
			if (img->bias + l->vaddr + l->memsz > img->end)
				img->end = img->bias + l->vaddr + l->memsz;
		}
	}
	if (img->end == 0 && img->status == CQ_IMAGE_BUNDLED) {
		/* Without NT_FILE or the file's headers the bundle knows the range. */
		for (size_t i = 0; i < core->nbundled; i++)
			if (cq_image_has_path(img, core->bundled[i].name) ||
			    (img->is_exe && core->bundled[i].is_exe)) {
				img->start = core->bundled[i].start;
				img->end = core->bundled[i].end;
			}
	}
	if (img->end == 0)
		img->start = 0;
}

static void resolve_file_on_disk(struct cq_core *core, struct cq_image *img);

/* The bundle's entry for @p img, if the core is a bundle that has one. */
static struct cq_bundled_image *bundled_for(struct cq_core *core, const struct cq_image *img)
{
	for (size_t i = 0; i < core->nbundled; i++) {
		struct cq_bundled_image *b = &core->bundled[i];
		if (b->elf && (b->is_exe ? img->is_exe : cq_image_has_path(img, b->name)))
			return b;
	}
	return NULL;
}

/* The most bytes of an image's file rebuilt from the core's memory (file_from_memory). */
#define MAX_MEMORY_IMAGE (UINT64_C(256) << 20)

/* Whether the target holds every byte of [@p start, @p end) (no fault, no file behind). */
static bool held_whole(const struct cq_core *core, uint64_t start, uint64_t end)
{
	for (uint64_t a = start; a < end;) {
		const struct cq_segment *s = cq_core_segment_at(core, a);
		uint64_t held = s ? cq_segment_held(core, s) : 0;
		if (!s || a - s->vaddr >= held)
			return false;
		a = s->vaddr + held;
	}
	return true;
}

/* An image whose file is not here (missing, or another build at its path) while the core
 * holds its mappings whole: a coreq snapshot of a process whose library was deleted (its
 * mappings written whole: core_write.h), a kernel core with file-backed mappings dumped.
 * Its file rebuilt from them (from_memory.h): its dynamic symbols and unwind tables, the
 * build-id its memory has. Nothing is read unless every mapping is there. */
static void file_from_memory(struct cq_core *core, struct cq_image *img)
{
	if (img->elf || (img->status != CQ_IMAGE_MISSING && img->status != CQ_IMAGE_MISMATCH))
		return;
	size_t first = cluster_anchor(core, img);
	if (first == core->nfile_maps || core->file_maps[first].offset != 0)
		return;
	uint64_t size = 0;
	FOR_CLUSTER(core, img, a, i) {
		const struct cq_file_map *m = &core->file_maps[i];
		if (m->offset > MAX_MEMORY_IMAGE || m->end - m->start > MAX_MEMORY_IMAGE - m->offset ||
		    !held_whole(core, m->start, m->end))
			return;
		if (m->offset + (m->end - m->start) > size)
			size = m->offset + (m->end - m->start);
	}
	uint8_t *buf = size ? calloc(1, (size_t)size) : NULL;
	if (!buf)
		return;
	FOR_CLUSTER(core, img, a, i) {
		const struct cq_file_map *m = &core->file_maps[i];
		struct cq_error *err = cq_core_read(core, m->start, buf + m->offset, (size_t)(m->end - m->start));
		if (err) {
			cq_error_destroy(err);
			free(buf);
			return;
		}
	}
	struct cq_elf *e = NULL;
	struct cq_error *err = cq_elf_open_mapped(buf, (size_t)size, core->file_maps[first].start, img->name, &e);
	if (err || e->e_machine != core->target->e_machine || e->elf_class != core->target->elf_class ||
	    e->little_endian != core->target->little_endian ||
	    (img->build_id_len && (e->build_id_len != img->build_id_len ||
				   memcmp(e->build_id, img->build_id, img->build_id_len)))) {
		cq_error_destroy(err);
		cq_elf_close(e);
		return;
	}
	free(img->file_origin);
	if (asprintf(&img->file_origin, "the core's memory, which holds its mappings whole (its file: %s)",
		     img->problem ? img->problem : "not found") < 0)
		img->file_origin = NULL;
	free(img->problem);
	img->problem = NULL;
	img->elf = e;
	img->status = img->build_id_len ? CQ_IMAGE_FOUND : CQ_IMAGE_UNVERIFIED;
	if (!img->build_id_len && e->build_id_len) {
		memcpy(img->build_id, e->build_id, e->build_id_len);
		img->build_id_len = e->build_id_len;
	}
	img->ranges_added = true; /* its memory is the core's own: no file behind it */
}

/* Find the file of one image; a bundle's symbols stand in when no verified file is found
 * (a file the bundle's build-id contradicts is not used either); else the core's memory
 * when it holds the image whole. */
static void choose_file(struct cq_core *core, struct cq_image *img)
{
	resolve_file_on_disk(core, img);
	struct cq_bundled_image *b = bundled_for(core, img);
	if (!b)
		file_from_memory(core, img);
	if (!b || img->status == CQ_IMAGE_FOUND || img->status == CQ_IMAGE_VIRTUAL ||
	    (img->is_exe && core->opts.exe && img->elf))
		return;
	if (img->elf && (img->elf->build_id_len == b->build_id_len &&
			 memcmp(img->elf->build_id, b->build_id, b->build_id_len) == 0))
		return; /* the file on disk is the one the bundle was made from */
	cq_elf_close(img->elf);
	free(img->found_path);
	free(img->problem);
	img->found_path = NULL;
	img->problem = NULL;
	img->elf = b->elf;
	b->elf = NULL;
	img->status = CQ_IMAGE_BUNDLED;
	/* for unwinders only: the image still has no file (bundle.h) */
	img->unwind_elf = b->unwind;
	img->unwind_elf_size = b->unwind_size;
	img->unwind_elf_lines = b->unwind_lines;
	if (b->unwind_problem)
		img->problem = strdup(b->unwind_problem);
	memcpy(img->build_id, b->build_id, b->build_id_len);
	img->build_id_len = b->build_id_len;
	if (!img->bias_known) {
		img->bias = b->bias;
		img->bias_known = true;
	}
}

/* Find the file of one image (choose_file) and register the memory it backs. */
static void resolve_file(struct cq_core *core, struct cq_image *img)
{
	choose_file(core, img);
	register_ranges(core, img);
}

/* The executable of a core taken out of an apport report: the report's ExecutablePath
 * (what /proc/PID/exe was), looked up as a path the core names (--sysroot, build-id
 * checked), then the core's own name for it; *why says both when neither is found. */
static char *find_reported_exe(struct cq_core *core, struct cq_image *img, const char *exe_path, char **why,
			       struct cq_elf **checked)
{
	char *why_report = NULL, *why_core = NULL;
	char *path = cq_find_file(CQ_SEARCH(core), exe_path, img->build_id, img->build_id_len, &why_report, checked);
	if (!path)
		path = cq_find_file(CQ_SEARCH(core), img->name, img->build_id, img->build_id_len, &why_core, checked);
	/* cq__find_file's advice once, at the end (its wording depends on debuginfod) */
	static const char hint[] = "; use --sysroot, ";
	char *h = why_report ? strstr(why_report, hint) : NULL;
	if (h && why_core && strstr(why_core, hint))
		*h = 0;
	if (!path && asprintf(why, "ExecutablePath %s (apport report): %s; %s: %s", exe_path,
			      why_report ? why_report : "not found", img->name, why_core ? why_core : "not found") < 0)
		*why = NULL;
	/* a build-id mismatch is said as such (the caller looks for "build-id") */
	free(why_report);
	free(why_core);
	return path;
}

/* The last resort for an image's file: debuginfod by build-id (debuginfod.h). Returns the
 * fetched file's path and its open, verified ELF in *@p elf; otherwise NULL, with what
 * debuginfod said (or how to ask it) added to *@p why. */
static char *fetch_file(struct cq_image *img, char **why, struct cq_elf **elf)
{
	struct cq_debuginfod_file f;
	char *dwhy, *more = NULL;
	switch (cq__debuginfod_fetch(CQ_DEBUGINFOD_EXECUTABLE, img->build_id, img->build_id_len,
				     base_name(img->name), &f, &dwhy)) {
	case CQ_DEBUGINFOD_FETCHED:
		free(*why);
		*why = NULL;
		cq_elf_close(*elf);
		*elf = f.elf;
		img->file_origin = f.origin;
		return f.path;
	case CQ_DEBUGINFOD_OFF: /* the search's reason names DEBUGINFOD_URLS (find.c) */
		break;
	default:
		if (dwhy && asprintf(&more, "%s; %s", *why ? *why : "not found", dwhy) < 0)
			more = NULL;
		break;
	}
	free(dwhy);
	if (more) {
		free(*why);
		*why = more;
	}
	return NULL;
}

/* The first mapping of @p img when the file it maps is read at a path of its own
 * (cq_file_map.mapped: a live process's library deleted or replaced since), else NULL. */
static const struct cq_file_map *mapped_elsewhere(const struct cq_core *core, const struct cq_image *img)
{
	size_t a = cluster_anchor(core, img);
	return a < core->nfile_maps && core->file_maps[a].mapped ? &core->file_maps[a] : NULL;
}

/* The file @p m maps, opened where it is read (cq_file_map.mapped) and checked on that
 * descriptor (cq_elf_open: the file opened once, its identity checked): its path, the
 * open file in *@p elf and where it came from in @p img->file_origin; NULL and *@p why
 * when it cannot be opened (the image's path is searched instead). */
static char *open_mapped(struct cq_image *img, const struct cq_file_map *m, char **why, struct cq_elf **elf)
{
	struct cq_error *err = cq_elf_open(m->mapped, elf);
	char *path = err ? NULL : strdup(m->mapped);
	size_t n = cq_file_map_name_len(m->path);
	if (path && asprintf(&img->file_origin, "the file the process maps (%.*s %s)", (int)n, m->path,
			     n != strlen(m->path) ? "was deleted since it was mapped"
						  : "names another file now than the one mapped") < 0)
		img->file_origin = NULL;
	if (err && asprintf(why, "the file the process maps, %s: %s", m->mapped, err->message) < 0)
		*why = NULL;
	if (!path) {
		cq_elf_close(*elf);
		*elf = NULL;
	}
	cq_error_destroy(err);
	return path;
}

/* Find, open and check the file of one image; record why when that fails. */
static void resolve_file_on_disk(struct cq_core *core, struct cq_image *img)
{
	char *why = NULL;
	if (img->status == CQ_IMAGE_VIRTUAL)
		return;
	char *path = NULL;
	struct cq_elf *checked = NULL; /* the file cq__find_file opened to compare build-ids */
	const struct cq_apport *rep = core->file ? core->file->apport : NULL;
	const struct cq_file_map *mapped = img->is_exe && core->opts.exe ? NULL : mapped_elsewhere(core, img);
	/* the file the process maps, when its path no longer leads to it: never the path,
	 * which has none or another build */
	char *why_mapped = NULL;
	if (mapped)
		path = open_mapped(img, mapped, &why_mapped, &checked);
	if (path)
		; /* the mapped file: its build-id is checked below like any */
	else if (img->is_exe && core->opts.exe)
		path = strdup(core->opts.exe);
	else if (img->is_exe && rep && rep->executable_path.value && !rep->executable_path.cut &&
		 strcmp(rep->executable_path.value, img->name))
		path = find_reported_exe(core, img, rep->executable_path.value, &why, &checked);
	else
		path = cq_find_file(CQ_SEARCH(core), img->name, img->build_id, img->build_id_len, &why, &checked);
	if (!path && img->map_name) {
		char *why2 = NULL;
		path = cq_find_file(CQ_SEARCH(core), img->map_name, img->build_id, img->build_id_len, &why2, &checked);
		free(path ? why : why2);
		if (path)
			why = NULL;
	}
	if (!path && !(img->is_exe && core->opts.exe))
		path = fetch_file(img, &why, &checked);
	if (!path && why_mapped) {
		char *both;
		if (asprintf(&both, "%s; %s", why_mapped, why ? why : "not found") >= 0) {
			free(why);
			why = both;
		}
	}
	free(why_mapped);
	if (!path) {
		img->status = why && strstr(why, "build-id") ? CQ_IMAGE_MISMATCH : CQ_IMAGE_MISSING;
		img->problem = why;
		return;
	}
	struct cq_elf *e = open_shared(core, path, false);
	if (e)
		cq_elf_close(checked); /* the same file, already open for another image */
	else
		e = checked;
	struct cq_error *err = e ? NULL : cq_elf_open(path, &e);
	if (err) {
		img->status = CQ_IMAGE_MISSING;
		img->problem = strdup(err->message);
		cq_error_destroy(err);
		free(path);
		return;
	}
	if (e->e_machine != core->target->e_machine || e->elf_class != core->target->elf_class ||
	    e->little_endian != core->target->little_endian) {
		img->status = CQ_IMAGE_MISMATCH;
		if (asprintf(&img->problem, "%s is for another architecture (e_machine %u) than the core (%s)",
			     path, e->e_machine, core->target->name) < 0)
			img->problem = NULL;
		cq_elf_close(e);
		free(path);
		return;
	}
	if (img->build_id_len && (e->build_id_len != img->build_id_len ||
				  memcmp(e->build_id, img->build_id, img->build_id_len) != 0)) {
		char *have = cq_hex_string(e->build_id, e->build_id_len);
		char *want = cq_hex_string(img->build_id, img->build_id_len);
		img->status = CQ_IMAGE_MISMATCH;
		if (asprintf(&img->problem, "%s has build-id %s, the core names %s", path,
			     have && *have ? have : "(none)", want ? want : "?") < 0)
			img->problem = NULL;
		free(have);
		free(want);
		cq_elf_close(e);
		free(path);
		return;
	}
	img->status = img->build_id_len ? CQ_IMAGE_FOUND : CQ_IMAGE_UNVERIFIED;
	if (!img->build_id_len && e->build_id_len) {
		/* Keep the file's build-id for reporting; it is marked unverified. */
		memcpy(img->build_id, e->build_id, e->build_id_len);
		img->build_id_len = e->build_id_len;
	}
	img->found_path = path;
	img->elf = e;
}

/* No debug file on this machine for a stripped image: debuginfod by build-id, if it is
 * asked (debuginfod.h). A miss is no problem (most libraries have no debug file here
 * either); a file refused or a server that failed is. */
static void fetch_debug_file(struct cq_core *core, struct cq_image *img)
{
	if (img->status != CQ_IMAGE_FOUND && img->status != CQ_IMAGE_UNVERIFIED)
		return;
	struct cq_debuginfod_file f;
	char *why, *what;
	if (asprintf(&what, "debug file of %s", base_name(img->name)) < 0)
		return;
	switch (cq__debuginfod_fetch(CQ_DEBUGINFOD_DEBUGINFO, img->elf->build_id, img->elf->build_id_len,
				     what, &f, &why)) {
	case CQ_DEBUGINFOD_FETCHED:
		img->debug_path = f.path;
		img->debug = f.elf;
		img->debug_origin = f.origin;
		break;
	case CQ_DEBUGINFOD_FAILED:
		cq_core_problem(core, img->name, "debug file: %s", why);
		break;
	default:
		break;
	}
	free(why);
	free(what);
}

/* The dwz alt file of the image's DWARF (cq__find_alt_file); one not found is a problem:
 * every name dwz moved into it (types, inlined functions shared by several files) is
 * missing. */
static void find_alt_file(struct cq_core *core, struct cq_image *img)
{
	struct cq_elf *dw = img->debug ? img->debug : img->elf && img->elf->has_dwarf ? img->elf : NULL;
	const char *dw_path = img->debug ? img->debug_path : img->found_path;
	if (!dw || !dw->altlink || !dw_path || img->alt_path)
		return;
	char *why = NULL;
	img->alt_path = cq_find_alt_file(CQ_SEARCH(core), dw_path, dw, &img->alt, &why);
	if (!img->alt_path && why)
		cq_core_problem(core, img->name, "%s: names that live there are missing", why);
	free(why);
}

/* Executable: its name, file and load bias from auxv. */
static void find_executable(struct cq_core *core)
{
	uint64_t entry = 0, phdr = 0, execfn = 0;
	bool has_entry = cq_core_auxv(core, AT_ENTRY, &entry);
	bool has_phdr = cq_core_auxv(core, AT_PHDR, &phdr);
	char *name = NULL;
	for (size_t i = 0; i < core->nfile_maps && !name; i++) {
		const struct cq_file_map *m = &core->file_maps[i];
		if (has_entry && entry >= m->start && entry < m->end)
			name = strdup(m->path);
	}
	if (!name && cq_core_auxv(core, AT_EXECFN, &execfn)) {
		struct cq_error *err = cq_core_read_string(core, execfn, MAX_PATH_LEN, &name);
		cq_error_destroy(err);
	}
	const struct cq_apport *rep = core->file ? core->file->apport : NULL;
	if (!name && !core->opts.exe && rep && rep->executable_path.value && !rep->executable_path.cut)
		name = strdup(rep->executable_path.value);
	if (!name)
		name = strdup(core->opts.exe ? core->opts.exe : core->fname);
	if (!name)
		return;
	struct cq_image *img = add_mapped_image(core, name);
	free(name);
	if (!img)
		return;
	img->is_exe = true;
	for (size_t i = 0; i < core->nfile_maps; i++)
		if (core->file_maps[i].offset == 0 && cq_image_has_path(img, core->file_maps[i].path)) {
			build_id_from_memory(core, img, core->file_maps[i].start);
			break;
		}
	resolve_file(core, img);
	if (img->status == CQ_IMAGE_BUNDLED) {
		/* bias came from the bundle */
	} else if (img->elf && img->elf->e_type == ET_EXEC) {
		img->bias = 0;
		img->bias_known = true;
	} else if (img->elf && has_phdr && img->elf->has_phdr) {
		img->bias = phdr - img->elf->phdr_vaddr;
		img->bias_known = true;
	} else if (img->elf && has_entry) {
		img->bias = entry - img->elf->entry;
		img->bias_known = true;
	}
	/* now that the bias is known: the link_map walk may read the executable's headers */
	register_ranges(core, img);
}

/* Address of the executable's dynamic section: from its program headers in memory (at
 * AT_PHDR) if the core has them, else from its file. */
static bool exe_dynamic(struct cq_core *core, struct cq_image *exe, uint64_t *ret)
{
	uint64_t phdr, phnum;
	if (cq_core_auxv(core, AT_PHDR, &phdr) && cq_core_auxv(core, AT_PHNUM, &phnum)) {
		uint64_t ph[64][3];
		size_t n = read_mem_phdrs(core, phdr, phnum, ph, 64);
		uint64_t bias = 0, dyn = 0;
		bool has_bias = false, has_dyn = false;
		for (size_t i = 0; i < n; i++) {
			if (ph[i][0] == PT_PHDR) {
				bias = phdr - ph[i][1];
				has_bias = true;
			} else if (ph[i][0] == PT_DYNAMIC) {
				dyn = ph[i][1];
				has_dyn = true;
			}
		}
		if (has_bias && has_dyn) {
			if (!exe->bias_known) {
				exe->bias = bias;
				exe->bias_known = true;
			}
			*ret = bias + dyn;
			return true;
		}
		if (n == phnum && !has_dyn)
			return false; /* static executable */
	}
	if (exe->elf && exe->bias_known && exe->elf->has_dynamic) {
		*ret = exe->bias + exe->elf->dynamic_vaddr;
		return true;
	}
	return false;
}

#ifndef DT_MIPS_RLD_MAP
#define DT_MIPS_RLD_MAP 0x70000016
#endif
#ifndef DT_MIPS_RLD_MAP_REL
#define DT_MIPS_RLD_MAP_REL 0x70000035
#endif

/*
 * r_debug address from the dynamic section at @p dyn: DT_DEBUG's value, or on MIPS (whose
 * DT_DEBUG stays 0: .dynamic may be read-only there) the word ld.so filled with &r_debug,
 * named by DT_MIPS_RLD_MAP_REL (relative to that dynamic entry) or DT_MIPS_RLD_MAP.
 */
static struct cq_error *find_r_debug(struct cq_core *core, uint64_t dyn, uint64_t *ret)
{
	unsigned w = cq_target_ptr_size(core->target);
	bool mips = core->target->e_machine == EM_MIPS, debug_zero = false;
	for (unsigned i = 0; i < MAX_DYNAMIC_ENTRIES; i++) {
		uint64_t tag, val, at = dyn + 2 * w * i;
		struct cq_error *err = cq_core_read_uint(core, at, w, &tag);
		if (!err)
			err = cq_core_read_uint(core, at + w, w, &val);
		if (err)
			return cq_error_wrap(err, "reading the executable's dynamic section");
		if (tag == DT_NULL)
			break;
		if (tag == DT_DEBUG) {
			if (val) {
				*ret = val;
				return NULL;
			}
			debug_zero = true;
		} else if (mips && (tag == DT_MIPS_RLD_MAP_REL || tag == DT_MIPS_RLD_MAP)) {
			uint64_t slot = tag == DT_MIPS_RLD_MAP ? val : at + val, r;
			if (w == 4)
				slot &= 0xffffffffu;
			err = cq_core_read_uint(core, slot, w, &r);
			if (err)
				return cq_error_wrap(err, "reading the MIPS r_debug pointer (DT_MIPS_RLD_MAP%s)",
						     tag == DT_MIPS_RLD_MAP ? "" : "_REL");
			if (!r)
				return cq_error_create(CQ_ERR_MISSING,
						       "the MIPS r_debug pointer is 0: the dynamic linker had not started (no r_debug)");
			*ret = r;
			return NULL;
		}
	}
	if (debug_zero)
		return cq_error_create(CQ_ERR_MISSING, "DT_DEBUG is 0: the dynamic linker had not started (no r_debug)");
	return cq_error_create(CQ_ERR_MISSING, "the executable has no DT_DEBUG entry");
}

static struct cq_error *walk_link_map(struct cq_core *core, uint64_t r_debug_addr)
{
	const struct cq_target *t = core->target;
	uint8_t buf[64];
	struct cq_r_debug rd;
	size_t rsize = cq_struct_size(t, &cq_r_debug_desc);
	struct cq_error *err = cq_core_read(core, r_debug_addr, buf, rsize);
	if (!err)
		err = cq_struct_decode(t, &cq_r_debug_desc, buf, rsize, &rd);
	if (err)
		return cq_error_wrap(err, "reading r_debug at 0x%llx", (unsigned long long)r_debug_addr);
	size_t lsize = cq_struct_size(t, &cq_link_map_desc);
	uint64_t seen[CQ_MAX_LINK_MAPS];
	size_t nseen = 0;
	for (uint64_t lm = rd.r_map; lm; ) {
		for (size_t i = 0; i < nseen; i++)
			if (seen[i] == lm)
				return cq_error_create(CQ_ERR_MALFORMED,
						       "link_map list has a cycle at 0x%llx after %zu entries",
						       (unsigned long long)lm, nseen);
		if (nseen == CQ_MAX_LINK_MAPS)
			return cq_error_create(CQ_ERR_MALFORMED,
					       "link_map list is longer than %d entries", CQ_MAX_LINK_MAPS);
		seen[nseen++] = lm;
		struct cq_link_map m;
		err = cq_core_read(core, lm, buf, lsize);
		if (!err)
			err = cq_struct_decode(t, &cq_link_map_desc, buf, lsize, &m);
		if (err)
			return cq_error_wrap(err, "reading link_map entry %zu at 0x%llx", nseen,
					     (unsigned long long)lm);
		char *name = NULL;
		if (m.l_name) {
			err = cq_core_read_string(core, m.l_name, MAX_PATH_LEN, &name);
			if (err)
				return cq_error_wrap(err, "reading the name of link_map entry %zu",
						     nseen);
		}
		struct cq_image *img = NULL;
		uint64_t vdso;
		bool is_vdso = cq_core_auxv(core, AT_SYSINFO_EHDR, &vdso) && vdso && m.l_addr == vdso;
		if (nseen == 1 && core->nimages && core->images[0].is_exe) {
			img = &core->images[0]; /* the first entry is the executable */
		} else if (name && *name) {
			img = cq_core_image_named(core, name);
			if (!img)
				img = add_image(core, name);
			if (!img) {
				free(name);
				return &cq_error_nomem;
			}
			img->bias = m.l_addr;
			img->bias_known = true;
			if (is_vdso)
				img->status = CQ_IMAGE_VIRTUAL;
		}
		free(name);
		if (img) {
			img->from_link_map = true;
			img->link_map = lm;
			img->dynamic = m.l_ld;
			/* The NT_FILE path of the same file: the one whose mapping holds l_ld. */
			for (size_t k = 0; k < core->nfile_maps && m.l_ld; k++) {
				const struct cq_file_map *fm = &core->file_maps[k];
				if (m.l_ld >= fm->start && m.l_ld < fm->end) {
					if (strcmp(fm->path, img->name) != 0 && !img->map_name &&
					    !(img->map_name = strdup(fm->path)))
						return &cq_error_nomem;
					break;
				}
			}
		}
		lm = m.l_next;
	}
	return NULL;
}

/* The vdso's ELF, read from the core's memory (the kernel dumps it whole) and opened in
 * place as any image file: its dynamic symbols name what runs in it (__kernel_vsyscall,
 * __vdso_clock_gettime). A vdso larger than this is not one. */
#define VDSO_MAX (UINT64_C(1) << 20)

static void vdso_elf(struct cq_core *core, struct cq_image *img)
{
	if (img->elf || img->end <= img->start || img->end - img->start > VDSO_MAX)
		return;
	size_t n = (size_t)(img->end - img->start);
	uint8_t *buf = malloc(n);
	struct cq_error *err = buf ? cq_core_read(core, img->start, buf, n) : NULL;
	if (!buf || err) {
		cq_error_destroy(err);
		free(buf);
		return;
	}
	struct cq_elf *e = NULL;
	err = cq_elf_open_memory(buf, n, "[vdso]", &e); /* buf is the ELF's now */
	if (!err && e->e_machine == core->target->e_machine && e->elf_class == core->target->elf_class &&
	    e->little_endian == core->target->little_endian)
		img->elf = e; /* status stays "in-memory"; no file on this machine */
	else
		cq_elf_close(e);
	cq_error_destroy(err);
}

static void add_vdso(struct cq_core *core)
{
	uint64_t base;
	if (!cq_core_auxv(core, AT_SYSINFO_EHDR, &base) || !base)
		return;
	for (size_t i = 0; i < core->nimages; i++)
		if (core->images[i].status == CQ_IMAGE_VIRTUAL) {
			struct cq_image *v = &core->images[i];
			v->start = base;
			for (size_t k = 0; k < core->nsegments; k++)
				if (core->segments[k].vaddr == base)
					v->end = base + core->segments[k].memsz;
			build_id_from_memory(core, v, base);
			vdso_elf(core, v);
			return;
		}
	struct cq_image *img = add_image(core, "[vdso]");
	if (!img)
		return;
	img->status = CQ_IMAGE_VIRTUAL;
	img->start = base;
	img->bias = base;
	img->bias_known = true;
	const struct cq_segment *s = NULL;
	for (size_t i = 0; i < core->nsegments; i++)
		if (core->segments[i].vaddr == base)
			s = &core->segments[i];
	img->end = s ? s->vaddr + s->memsz : base;
	build_id_from_memory(core, img, base);
	vdso_elf(core, img);
}

/* NT_FILE paths that are ELF images in memory and not in the link_map list. */
static void add_file_note_images(struct cq_core *core)
{
	for (size_t i = 0; i < core->nfile_maps; i++) {
		const struct cq_file_map *m = &core->file_maps[i];
		if (m->offset != 0 || cq_core_image_named(core, m->path))
			continue;
		uint8_t magic[SELFMAG];
		struct cq_error *err = cq_core_read(core, m->start, magic, sizeof(magic));
		if (err || memcmp(magic, ELFMAG, SELFMAG) != 0) {
			cq_error_destroy(err);
			continue;
		}
		struct cq_image *img = add_mapped_image(core, m->path);
		if (!img)
			return;
		img->from_file_note = true;
		build_id_from_memory(core, img, m->start);
		resolve_file(core, img);
		if (img->elf) {
			uint64_t first = UINT64_MAX;
			for (size_t k = 0; k < img->elf->nloads; k++)
				if (img->elf->loads[k].offset == 0)
					first = img->elf->loads[k].vaddr & ~UINT64_C(0xfff);
			if (first != UINT64_MAX) {
				img->bias = m->start - first;
				img->bias_known = true;
			}
		}
	}
}

/* ELF header flags of an image's file, or of the file a bundle's unwind ELF copies them
 * from (bundle.h); false when the image has neither. */
static bool image_e_flags(const struct cq_core *core, const struct cq_image *img, uint32_t *ret)
{
	if (img->status == CQ_IMAGE_FOUND || img->status == CQ_IMAGE_UNVERIFIED) {
		*ret = img->elf->e_flags;
		return true;
	}
	size_t at = core->target->elf_class == ELFCLASS64 ? offsetof(Elf64_Ehdr, e_flags) :
							     offsetof(Elf32_Ehdr, e_flags);
	if (img->status != CQ_IMAGE_BUNDLED || !img->unwind_elf || img->unwind_elf_size < at + 4)
		return false;
	*ret = (uint32_t)cq_load_uint(core->target, img->unwind_elf + at, 4);
	return true;
}

/* The core names its machine, not its ABI variant (armel or armhf: target.h): the
 * executable's file does, else the first library's. Variants share every layout, so what
 * was read with the default table stays right. */
static void choose_target_variant(struct cq_core *core)
{
	uint32_t flags;
	for (size_t i = 0; i < core->nimages; i++)
		if (core->images[i].status != CQ_IMAGE_VIRTUAL && image_e_flags(core, &core->images[i], &flags)) {
			core->target = cq_target_variant(core->target, flags);
			return;
		}
	const struct cq_target *t = core->target;
	for (size_t i = 0; i < cq_ntargets; i++) {
		const struct cq_target *v = cq_targets[i];
		if (v->e_flags_mask && v->e_machine == t->e_machine && v->elf_class == t->elf_class &&
		    v->little_endian == t->little_endian) {
			cq_core_problem(core, "arch",
					"%s assumed (%s is laid out alike): the core does not say which, and no file of its executable or libraries was found",
					t->name, v->name);
			return;
		}
	}
}

struct cq_error *cq_core_load_images(struct cq_core *core)
{
	if (core->images_done)
		return NULL;
	core->images_done = true; /* memory reads below may look at images: no recursion */
	find_executable(core);
	if (!core->nimages)
		return &cq_error_nomem;
	struct cq_image *exe = &core->images[0];
	uint64_t dyn, r_debug = 0;
	const char *source = "executable only";
	if (exe_dynamic(core, exe, &dyn)) {
		struct cq_error *err = find_r_debug(core, dyn, &r_debug);
		if (!err)
			err = walk_link_map(core, r_debug);
		if (err) {
			cq_core_problem(core, "link_map",
					"%s; the entries before it are kept, other images come from NT_FILE",
					err->message);
			cq_error_destroy(err);
		} else {
			source = "link_map";
		}
	}
	exe = &core->images[0];
	/* Now that biases are known, find the files of the link_map images. */
	for (size_t i = 1; i < core->nimages; i++) {
		struct cq_image *img = &core->images[i];
		if (img->elf || img->status == CQ_IMAGE_VIRTUAL)
			continue;
		uint64_t base = 0;
		for (size_t k = 0; k < core->nfile_maps; k++)
			if (cq_image_has_path(img, core->file_maps[k].path) &&
			    core->file_maps[k].offset == 0) {
				base = core->file_maps[k].start;
				break;
			}
		if (!base)
			base = img->bias; /* shared objects are linked at 0 */
		build_id_from_memory(core, img, base);
		resolve_file(core, img);
	}
	size_t before = core->nimages;
	add_file_note_images(core);
	if (core->nimages > before && strcmp(source, "link_map") != 0)
		source = "NT_FILE";
	add_vdso(core);
	for (size_t i = 0; i < core->nimages; i++) {
		struct cq_image *img = &core->images[i];
		if (img->status != CQ_IMAGE_VIRTUAL)
			image_range(core, img);
		else if (!img->end)
			img->start = 0;
		register_ranges(core, img); /* those whose bias became known late */
		/* Symbols themselves are read on first use (cq_elf_symbol_at/find_symbol). */
		if (img->elf && !img->debug && !img->debug_path) {
			struct cq_error *err = NULL;
			/* a separate debug file when the image lacks its symbols or its DWARF: Debian's
			 * dh_strip takes both, `strip --strip-debug` (and Fedora's) the DWARF alone */
			if (!img->elf->has_symtab || !img->elf->has_dwarf) {
				/* by build-id, and by debuglink beside the path it had (one rebuilt
				 * from memory has no path here) */
				img->debug_path = cq_find_debug_file(CQ_SEARCH(core), img->found_path ? img->found_path :
								     img->name, img->elf);
				if (!img->debug_path)
					fetch_debug_file(core, img);
				if (img->debug_path) {
					if (!img->debug) /* else fetched, opened and checked */
						img->debug = open_shared(core, img->debug_path, true);
					err = img->debug ? NULL : cq_elf_open(img->debug_path, &img->debug);
					if (!err && !img->debug->has_symtab && !img->elf->has_symtab)
						err = cq_error_create(CQ_ERR_FORMAT, "no .symtab");
					else if (!err && !img->debug->has_dwarf && img->elf->has_symtab)
						err = cq_error_create(CQ_ERR_FORMAT, "no DWARF");
					if (err) {
						cq_core_problem(core, img->name, "debug file %s: %s",
								img->debug_path, err->message);
						cq_error_destroy(err);
						cq_elf_close(img->debug);
						img->debug = NULL;
					} else {
						/* ppc64 ELFv1: its .opd is NOBITS */
						cq_elf_set_opd_file(img->debug, img->elf);
					}
				}
			}
		}
		find_alt_file(core, img);
		if (img->problem)
			cq_core_problem(core, img->name, "%s", img->problem);
	}
	choose_target_variant(core);
	core->images_source = strdup(source);
	return NULL;
}
