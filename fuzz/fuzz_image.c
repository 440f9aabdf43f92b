/* SPDX-License-Identifier: MIT */
/* fuzz_image: the input is an image file on disk, as a sysroot (or a shared directory)
 * holds it: the library's files are as hostile as the core.
 *
 * Byte 0 picks where the file goes for the aarch64 qemu fixture core (qemu cores have no
 * build-ids, so any file is taken, unverified, as the core's own): the executable (given as
 * --exe), /lib/libc.so.6 or /lib/ld-linux-aarch64.so.1 under a private sysroot; the other
 * images are missing. The rest is the file. Then: image discovery (ELF headers, PT_LOADs,
 * build-id note, debuglink with a search of the sysroot), per thread the pc symbolized and
 * file-backed memory read at pc, symbol lookups by name through every image (the symbol
 * tables, .gnu.hash), first and last bytes of each image, the thread pointer through
 * glibc's thread lists (libc's _thread_db_* descriptors), and a type looked up in the
 * file's DWARF (libdw). */
#include <stdint.h>
#include <sys/stat.h>

#include "corelib/core.h"
#include "corelib/image.h"
#include "corelib/types.h"
#include "fuzz_common.h"

static char root[64], exe_path[128];
static const char *const where[] = {NULL, "/lib/libc.so.6", "/lib/ld-linux-aarch64.so.1"};
static struct fz_memfd base; /* the core, inflated once */

/* the private sysroot goes with the process (fuzz-smoke runs in CI) */
static void cleanup(void)
{
	char path[sizeof(root) + 64];
	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", where[i] ? root : exe_path, where[i] ? where[i] : "");
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/lib", root);
	rmdir(path);
	rmdir(root);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	snprintf(root, sizeof(root), "/tmp/coreq-fuzz-image-%d", (int)getpid());
	char lib[sizeof(root) + 8];
	snprintf(lib, sizeof(lib), "%s/lib", root);
	if ((mkdir(root, 0700) && errno != EEXIST) || (mkdir(lib, 0700) && errno != EEXIST))
		fz_die("cannot make %s", root);
	snprintf(exe_path, sizeof(exe_path), "%s/fixprog", root);
	atexit(cleanup);
	size_t len;
	uint8_t *core = fz_read_file(fz_data_path("image-aarch64-qemu.core.gz"), &len);
	fz_memfd_init(&base, "fuzz_image-core");
	fz_memfd_set(&base, core, len);
	free(core);
	return 0;
}

static void drop(struct cq_error *err)
{
	cq_error_destroy(err);
}

static void put(const char *path, const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f))
		fz_die("cannot write %s", path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned pick = data[0] % 3;
	char path[256];
	if (where[pick])
		snprintf(path, sizeof(path), "%s%s", root, where[pick]);
	else
		snprintf(path, sizeof(path), "%s", exe_path);
	put(path, data + 1, size - 1);
	struct cq_core_options opts = {.sysroot = root, .max_inflated = FZ_MAX_INFLATED};
	if (!where[pick])
		opts.exe = exe_path;
	struct cq_core *core;
	struct cq_error *err = cq_core_open(base.path, &opts, &core);
	fz_verbose_error("open", err);
	if (err) {
		unlink(path);
		drop(err);
		return 0;
	}
	drop(cq_core_load_images(core));
	uint8_t buf[64];
	struct cq_symref ref;
	for (size_t i = 0; i < core->nthreads; i++) {
		struct cq_thread *th = &core->threads[i];
		drop(cq_core_symbolize(core, th->pc, &ref));
		drop(cq_core_read(core, th->pc, buf, 16));
		uint64_t pthread, v;
		drop(cq_core_thread_pthread(core, th, &pthread));
		drop(cq_core_tls_address(core, th, "errno", NULL, &v));
	}
	static const char *const names[] = {"main", "malloc", "_dl_debug_state", "__libc_start_main",
					    "cq_no_such_symbol", "fx_u32"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		drop(cq_core_lookup(core, names[i], NULL, &ref));
	for (size_t i = 0; i < core->nimages; i++) {
		const struct cq_image *img = &core->images[i];
		if (img->end > img->start) {
			drop(cq_core_read(core, img->start, buf, sizeof(buf)));
			drop(cq_core_read(core, img->end - 1, buf, 1));
			drop(cq_core_symbolize(core, img->start + (img->end - img->start) / 2, &ref));
		}
	}
	const struct cq_type *t;
	if (!(err = cq_core_find_type(core, "struct fx_struct", &t))) {
		(void)cq_type_size(t);
		(void)cq_type_field_offset(t, "b");
	} else {
		drop(err);
		drop(cq_core_find_type(core, "int", &t));
	}
	(void)cq_core_type_sources(core);
	cq_core_close(core);
	unlink(path);
	return 0;
}
