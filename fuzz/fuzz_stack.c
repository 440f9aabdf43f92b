/* SPDX-License-Identifier: MIT */
/* fuzz_stack: backtraces (cq_stack_walk, stack/) over fuzzed stack memory, registers and
 * unwind tables.
 *
 * Bases: the fixture cores of fixtures/core (all 9 architectures; qemu, kernel, gdb and
 * gdbstub producers, two static executables), each with its executable and the libraries
 * coreq finds for it in the fixture's pinned sysroot. At start-up each base's core is
 * inflated into a memfd and its executable and libraries are copied into a private sysroot
 * under /tmp (removed at exit), so the run depends on the input only (no file of the host).
 * The target then lists *regions*: per thread (at most 8) its register block in the
 * NT_PRSTATUS note and its stack from the stack pointer up (down on hppa, whose stacks
 * grow upwards; 256 KiB at most, inside the segment); per image file its .eh_frame,
 * .eh_frame_hdr, .debug_frame, .ARM.exidx, .ARM.extab and .PARISC.unwind.
 *
 * Input: u8 base, u8 flags, then patch records: u8 region (mod the number of regions),
 * u24 offset (mod the region size), u8 length (1 + n % 16, clipped), the bytes. Records
 * overwrite the core (memfd) or the files in the private sysroot; the pristine bytes are
 * written back after the run. flags >> 4, when not 0, selects one thread (the walk of a
 * single thread, `coreq bt --thread`); flags & 1 bounds the walk to 8 frames, flags & 2
 * stops threads at their user frame (`info`'s walk), flags & 4 reads source lines in the C
 * library too (`bt --all-lines`), flags & 8 reads values from the frames' DWARF as `coreq
 * mqd` does (every frame's loop variables, and the first argument of the call the thread's
 * frame 1 makes: stack/values.c, over patched DWARF and registers). Then cq_stack_walk()
 * for the threads, and the document is serialized. */
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>

#include "corelib/core.h"
#include "corelib/image.h"
#include "fuzz_common.h"
#include "stack/stack.h"

#define MAX_FILES 8
#define MAX_REGIONS 64
#define MAX_UNDO 256
#define MAX_STACK (256u << 10)

struct sfile {
	char path[512];
	int fd;          /* read-write */
	uint8_t *orig;   /* pristine contents */
	size_t len;
};

struct sregion {
	int file;        /* -1: the core's memfd, else an index into files */
	uint64_t off;
	uint32_t size;
	char what[48];
};

struct sbase {
	const char *name, *sysroot; /* fixture case; its sysroot under the data directory (or NULL) */
	uint8_t *core;
	size_t core_len;
	struct fz_memfd mfd;
	char root[96], exe[128];
	struct sfile files[MAX_FILES];
	unsigned nfiles;
	struct sregion regions[MAX_REGIONS];
	unsigned nregions;
};

static struct sbase bases[] = {
	{.name = "x86_64-kernel", .sysroot = "x86_64"},
	{.name = "i386-kernel", .sysroot = "i386"},
	{.name = "aarch64-qemu", .sysroot = "aarch64"},
	{.name = "armhf-qemu", .sysroot = "armhf"},
	{.name = "ppc32-qemu", .sysroot = "ppc32"},
	{.name = "riscv64-gdbstub", .sysroot = "riscv64"},
	{.name = "s390x-qemu", .sysroot = "s390x"},
	{.name = "ppc64le-qemu", .sysroot = "ppc64le"},
	{.name = "ppc64-qemu", .sysroot = "ppc64"},
	{.name = "x86_64-gcore", .sysroot = "x86_64"},
	{.name = "x86_64-static", .sysroot = NULL},
	{.name = "aarch64-static-qemu", .sysroot = NULL},
	/* appended: a regression input's base byte below 12 keeps naming the same base */
	{.name = "armel-qemu", .sysroot = "armel"},
	{.name = "m68k-qemu", .sysroot = "m68k"},
	{.name = "mipsel-qemu", .sysroot = "mipsel"},
	{.name = "mips64el-qemu", .sysroot = "mips64el"},
	{.name = "hppa-gdbstub", .sysroot = "hppa"},
	{.name = "sparc64-gdbstub", .sysroot = "sparc64"},
	{.name = "alpha-gdbstub", .sysroot = "alpha"},
};
#define NBASES (sizeof(bases) / sizeof(bases[0]))

static char top[64];
static pid_t owner; /* a forked child (corelib's isolation) must not remove the parent's files */
static struct { struct sfile *file; struct fz_memfd *mfd; const uint8_t *orig; uint64_t off; uint32_t n; } undo[MAX_UNDO];
static unsigned nundo;

static void rm_tree(void)
{
	char cmd[128];
	if (top[0] && getpid() == owner && strncmp(top, "/tmp/coreq-fuzz-stack-", 22) == 0) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
		if (system(cmd) != 0)
			fprintf(stderr, "fuzz: could not remove %s\n", top);
	}
}

static void mkdirs(const char *path)
{
	char buf[512];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			if (mkdir(buf, 0700) && errno != EEXIST)
				fz_die("cannot make %s", buf);
			*p = '/';
		}
}

static void put(const char *path, const uint8_t *data, size_t size)
{
	mkdirs(path);
	FILE *f = fopen(path, "wb");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f))
		fz_die("cannot write %s", path);
}

static void add_region(struct sbase *b, int file, uint64_t off, uint64_t size, const char *what)
{
	if (b->nregions == MAX_REGIONS || !size)
		return;
	if (size > 0xffffff)
		size = 0xffffff;
	struct sregion *r = &b->regions[b->nregions++];
	*r = (struct sregion){file, off, (uint32_t)size, ""};
	snprintf(r->what, sizeof(r->what), "%s", what);
}

/* The unwind sections of an ELF file in the private sysroot. */
static void file_regions(struct sbase *b, unsigned fi)
{
	static const char *const names[] = {".eh_frame", ".eh_frame_hdr", ".debug_frame", ".ARM.exidx",
					    ".ARM.extab", ".PARISC.unwind"};
	struct sfile *f = &b->files[fi];
	struct fz_elf e;
	if (!fz_elf_parse(&e, f->orig, f->len))
		return;
	uint64_t shoff = fz_get(&e, e.is64 ? 40 : 32, e.is64 ? 8 : 4);
	unsigned shentsize = (unsigned)fz_get(&e, e.is64 ? 58 : 46, 2);
	unsigned shnum = (unsigned)fz_get(&e, e.is64 ? 60 : 48, 2);
	unsigned shstrndx = (unsigned)fz_get(&e, e.is64 ? 62 : 50, 2);
	if (!shoff || shstrndx >= shnum || shoff + (uint64_t)shnum * shentsize > f->len)
		return;
	uint64_t stroff = fz_get(&e, shoff + shstrndx * shentsize + (e.is64 ? 24 : 16), e.is64 ? 8 : 4);
	for (unsigned i = 0; i < shnum; i++) {
		size_t sh = shoff + (size_t)i * shentsize;
		uint64_t name = fz_get(&e, sh, 4), type = fz_get(&e, sh + 4, 4);
		uint64_t off = fz_get(&e, sh + (e.is64 ? 24 : 16), e.is64 ? 8 : 4);
		uint64_t size = fz_get(&e, sh + (e.is64 ? 32 : 20), e.is64 ? 8 : 4);
		if (type == SHT_NOBITS || stroff + name >= f->len || off >= f->len || size > f->len - off)
			continue;
		const char *nm = (const char *)f->orig + stroff + name;
		for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
			if (strnlen(nm, f->len - stroff - name) < f->len - stroff - name && !strcmp(nm, names[k])) {
				char what[48];
				const char *base = strrchr(f->path, '/');
				snprintf(what, sizeof(what), "%.24s %s", base ? base + 1 : f->path, nm);
				add_region(b, (int)fi, off, size, what);
			}
	}
}

static unsigned add_file(struct sbase *b, const char *path, const uint8_t *data, size_t len)
{
	if (b->nfiles == MAX_FILES)
		fz_die("%s: too many files", b->name);
	put(path, data, len);
	struct sfile *f = &b->files[b->nfiles];
	snprintf(f->path, sizeof(f->path), "%s", path);
	f->orig = malloc(len ? len : 1);
	memcpy(f->orig, data, len);
	f->len = len;
	if ((f->fd = open(path, O_RDWR | O_CLOEXEC)) < 0)
		fz_die("cannot open %s", path);
	return b->nfiles++;
}

static struct cq_core *open_base(struct sbase *b, const char *sysroot)
{
	struct cq_core_options opts = {.exe = b->exe, .sysroot = sysroot, .max_inflated = FZ_MAX_INFLATED};
	struct cq_core *core;
	struct cq_error *err = cq_core_open(b->mfd.path, &opts, &core);
	if (err)
		fz_die("a base core does not open: %s", err->message);
	if ((err = cq_core_load_images(core)))
		fz_die("a base core's images: %s", err->message);
	return core;
}

static void load_base(struct sbase *b, unsigned index)
{
	char path[512];
	snprintf(b->root, sizeof(b->root), "%s/%u", top, index);
	snprintf(b->exe, sizeof(b->exe), "%s/fixprog", b->root);
	snprintf(path, sizeof(path), "stack-%s.core.gz", b->name);
	b->core = fz_read_file(fz_data_path(path), &b->core_len);
	fz_memfd_init(&b->mfd, b->name);
	fz_memfd_set(&b->mfd, b->core, b->core_len);
	size_t len;
	snprintf(path, sizeof(path), "stack-%s.exe.gz", b->name);
	uint8_t *exe = fz_read_file(fz_data_path(path), &len);
	file_regions(b, add_file(b, b->exe, exe, len));
	free(exe);

	/* the libraries coreq finds in the fixture's sysroot, copied to where the core names them */
	char sysroot[4096];
	snprintf(sysroot, sizeof(sysroot), "%s", fz_data_path(b->sysroot ? b->sysroot : "no-sysroot"));
	if (b->sysroot) {
		snprintf(sysroot, sizeof(sysroot), "%s", fz_data_path("stack-sysroot-"));
		snprintf(sysroot + strlen(sysroot), sizeof(sysroot) - strlen(sysroot), "%s", b->sysroot);
	}
	struct cq_core *core = open_base(b, sysroot);
	for (size_t i = 0; i < core->nimages; i++) {
		const struct cq_image *img = &core->images[i];
		if (!img->found_path || !strcmp(img->found_path, b->exe))
			continue;
		size_t n = strlen(sysroot);
		const char *rel = strncmp(img->found_path, sysroot, n) == 0 ? img->found_path + n : NULL;
		if (!rel || rel[0] != '/')
			continue;
		uint8_t *data = fz_read_file(img->found_path, &len);
		snprintf(path, sizeof(path), "%s%s", b->root, rel);
		file_regions(b, add_file(b, path, data, len));
		/* also where the core names it, when that is another path (a symlink in the sysroot) */
		if (img->name[0] == '/' && strcmp(img->name, rel) && b->nfiles < MAX_FILES) {
			char alias[512];
			snprintf(alias, sizeof(alias), "%s%s", b->root, img->name);
			mkdirs(alias);
			if (link(path, alias) != 0 && errno != EEXIST)
				fz_die("cannot link %s", alias);
		}
		free(data);
	}
	size_t before = 0;
	for (size_t i = 0; i < core->nimages; i++)
		before += core->images[i].found_path != NULL;
	cq_core_close(core);

	/* again from the private sysroot: it must find as much */
	core = open_base(b, b->root);
	size_t after = 0;
	for (size_t i = 0; i < core->nimages; i++)
		after += core->images[i].found_path != NULL;
	if (after != before)
		fz_die("%s: the private sysroot lacks files", b->name);
	for (size_t i = 0; i < core->nthreads && i < 8; i++) {
		const struct cq_thread *th = &core->threads[i];
		char what[48];
		/* the register block, where the note has it */
		const uint8_t *at = th->regs_size ? memmem(b->core, b->core_len, th->regs, th->regs_size) : NULL;
		if (at) {
			snprintf(what, sizeof(what), "thread %d registers", th->tid);
			add_region(b, -1, (uint64_t)(at - b->core), th->regs_size, what);
		}
		for (size_t s = 0; s < core->nsegments; s++) {
			const struct cq_segment *sg = &core->segments[s];
			if (th->sp < sg->vaddr || th->sp - sg->vaddr >= sg->filesz)
				continue;
			uint64_t off = sg->offset + (th->sp - sg->vaddr), n = sg->filesz - (th->sp - sg->vaddr);
			if (core->target->e_machine == EM_PARISC) { /* the frames lie below sp */
				n = th->sp - sg->vaddr < MAX_STACK ? th->sp - sg->vaddr : MAX_STACK;
				off -= n;
			}
			if (off < b->core_len) {
				if (n > b->core_len - off)
					n = b->core_len - off;
				snprintf(what, sizeof(what), "thread %d stack", th->tid);
				add_region(b, -1, off, n > MAX_STACK ? MAX_STACK : n, what);
			}
			break;
		}
	}
	cq_core_close(core);
	if (getenv("FUZZ_VERBOSE")) {
		fprintf(stderr, "%s: %u files, %u regions:", b->name, b->nfiles, b->nregions);
		for (unsigned i = 0; i < b->nregions; i++)
			fprintf(stderr, " [%s %u]", b->regions[i].what, b->regions[i].size);
		fprintf(stderr, "\n");
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	owner = getpid();
	snprintf(top, sizeof(top), "/tmp/coreq-fuzz-stack-%d", (int)owner);
	if (mkdir(top, 0700) && errno != EEXIST)
		fz_die("cannot make %s", top);
	atexit(rm_tree);
	for (unsigned i = 0; i < NBASES; i++)
		load_base(&bases[i], i);
	return 0;
}

static void patch(struct sbase *b, struct fz_in *in, unsigned max)
{
	for (unsigned r = 0; r < max && in->n >= 6 && b->nregions && nundo < MAX_UNDO; r++) {
		const struct sregion *g = &b->regions[fz_u8(in) % b->nregions];
		uint32_t off = (uint32_t)fz_uint(in, 3) % g->size;
		uint32_t n = 1 + fz_u8(in) % 16;
		if (n > g->size - off)
			n = g->size - off;
		if (n > in->n)
			n = (uint32_t)in->n;
		if (!n)
			break;
		if (g->file < 0) {
			fz_pwrite(&b->mfd, in->p, n, g->off + off);
			undo[nundo].mfd = &b->mfd;
			undo[nundo].file = NULL;
			undo[nundo].orig = b->core;
		} else {
			struct sfile *f = &b->files[g->file];
			if (pwrite(f->fd, in->p, n, (off_t)(g->off + off)) != (ssize_t)n)
				fz_die("cannot patch %s", f->path);
			undo[nundo].mfd = NULL;
			undo[nundo].file = f;
			undo[nundo].orig = f->orig;
		}
		undo[nundo].off = g->off + off;
		undo[nundo++].n = n;
		in->p += n;
		in->n -= n;
	}
}

static void restore(void)
{
	for (unsigned i = 0; i < nundo; i++) {
		const uint8_t *p = undo[i].orig + undo[i].off;
		if (undo[i].mfd)
			fz_pwrite(undo[i].mfd, p, undo[i].n, undo[i].off);
		else if (pwrite(undo[i].file->fd, p, undo[i].n, (off_t)undo[i].off) != (ssize_t)undo[i].n)
			fz_die("cannot restore %s", undo[i].file->path);
	}
	nundo = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = {data, size};
	struct sbase *b = &bases[fz_u8(&in) % NBASES];
	uint8_t flags = fz_u8(&in);
	patch(b, &in, 64);
	struct cq_core_options opts = {.exe = b->exe, .sysroot = b->root, .max_inflated = FZ_MAX_INFLATED};
	struct cq_core *core;
	struct cq_error *err = cq_core_open(b->mfd.path, &opts, &core);
	fz_verbose_error("open", err);
	if (!err) {
		int32_t tid = 0;
		if ((flags >> 4) && core->nthreads)
			tid = core->threads[((flags >> 4) - 1) % core->nthreads].tid;
		json_t *doc = NULL;
		struct cq_stack_arg arg = {.tid = tid ? tid : core->nthreads ? core->threads[0].tid : 0, .frame = 1};
		struct cq_stack_options opt = {.tid = tid, .max_frames = flags & 1 ? 8 : 0,
					       .to_user_frame = flags & 2, .system_lines = flags & 4,
					       .loop_variables = flags & 8, .arg = flags & 8 ? &arg : NULL};
		err = cq_stack_walk(core, &opt, &doc);
		fz_verbose_error("bt", err);
		if (doc) {
			char *s = json_dumps(doc, JSON_COMPACT);
			if (s && getenv("FUZZ_VERBOSE"))
				fprintf(stderr, "%s\n", s);
			free(s);
			json_decref(doc);
		}
		cq_core_close(core);
	}
	cq_error_destroy(err);
	restore();
	return 0;
}
