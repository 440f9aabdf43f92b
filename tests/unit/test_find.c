/* SPDX-License-Identifier: MIT */
/* The elf room's file search alone (elf/find.h), in a private directory made here: a path
 * a core names under --sysroot (normalized lexically: "/../.." stays in the root), by base
 * name in --solib-search-path, by build-id under --debug-dir; a candidate with another
 * build-id is never the answer, and the mismatch is; a separate debug file by build-id and
 * by .gnu_debuglink, whose name is never a path. The C library this process runs on
 * stands in for a library with a build-id. */
#include <dlfcn.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/decode.h"
#include "base/error.h"
#include "check.h"
#include "scratch.h"
#include "elf/elf_file.h"
#include "elf/find.h"

/* cq_find_file's answer: the path (freed here) compared with @p want (NULL: not found, and
 * then the reason must hold @p why_has). */
static void find(const struct cq_search_paths *p, const char *target, const uint8_t *bid, size_t len,
		 const char *want, const char *why_has)
{
	char *why = NULL;
	struct cq_elf *e = NULL;
	char *got = cq_find_file(p, target, bid, len, &why, &e);
	if (want) {
		CHECK_STR(got, want);
		CHECK(!why && e && e->build_id_len == len && !memcmp(e->build_id, bid, len));
	} else {
		CHECK(!got && !e && why && strstr(why, why_has));
		if (why && !strstr(why, why_has))
			printf("# %s: reason %s\n", target, why);
	}
	cq_elf_close(e);
	free(got);
	free(why);
}

int main(void)
{
	Dl_info info;
	const char *libc = dladdr((void *)gnu_get_libc_version, &info) && info.dli_fname ? info.dli_fname : NULL;
	snprintf(dir, sizeof(dir), "/tmp/coreq-test-find-XXXXXX");
	struct cq_elf *lib = NULL;
	struct cq_error *err = libc ? cq_elf_open(libc, &lib) : NULL;
	if (!libc || err || !lib->build_id_len || !mkdtemp(dir)) {
		printf("not ok - no C library with a build-id to stand in for a library (%s)\n",
		       err ? err->message : libc ? libc : "dladdr failed");
		return 1;
	}
	mkdir(at("root"), 0755);
	mkdir(at("root/lib"), 0755);
	mkdir(at("search"), 0755);
	copy(libc, at("root/lib/libx.so"));
	copy(libc, at("search/liby.so"));
	char *hex = cq_hex_string(lib->build_id, lib->build_id_len);
	char sub[PATH_MAX];
	snprintf(sub, sizeof(sub), "debug/.build-id/%.2s", hex);
	mkdir(at("debug"), 0755);
	mkdir(at("debug/.build-id"), 0755);
	mkdir(at(sub), 0755);
	snprintf(sub, sizeof(sub), "debug/.build-id/%.2s/%s.debug", hex, hex + 2);
	copy(libc, at(sub));
	char bydebug[PATH_MAX];
	snprintf(bydebug, sizeof(bydebug), "%s", at(sub));
	copy(libc, at("root/lib/libx.debug"));

	struct cq_search_paths p = {.sysroot = at("root"), .solib_search_path = at("search"), .debug_dir = at("debug")};
	const uint8_t *bid = lib->build_id;
	size_t len = lib->build_id_len;
	uint8_t other[64];
	memcpy(other, bid, len);
	other[0] ^= 0xff;

	/* under the sysroot; ".." never climbs out of it */
	find(&p, "/lib/libx.so", bid, len, at("root/lib/libx.so"), NULL);
	find(&p, "/../../lib/libx.so", bid, len, at("root/lib/libx.so"), NULL);
	/* by base name in the search path */
	find(&p, "/opt/elsewhere/liby.so", bid, len, at("search/liby.so"), NULL);
	/* another build-id: never used, the mismatch is the reason */
	find(&p, "/lib/libx.so", other, len, NULL, "has build-id");
	/* nothing there: what was tried, and what to do */
	find(&p, "/lib/libnone.so", bid, len, NULL, "not found (tried: ");
	/* a name with no file part: the root itself, a directory, said; no search directory
	 * is looked in ("DIR/.." would be a directory elsewhere) */
	find(&p, "/lib/..", bid, len, NULL, "not a regular file (a directory)");

	/* the separate debug file: by build-id under --debug-dir first */
	char *d = cq_find_debug_file(&p, at("root/lib/libx.so"), lib);
	CHECK_STR(d, bydebug);
	free(d);
	/* by .gnu_debuglink beside the file when no build-id tree has it */
	struct cq_search_paths nodebug = {.sysroot = at("root")};
	struct cq_elf fake = *lib;
	fake.debuglink = (char *)"libx.debug";
	d = cq_find_debug_file(&nodebug, at("root/lib/libx.so"), &fake);
	CHECK_STR(d, at("root/lib/libx.debug"));
	free(d);
	/* a debuglink is a file name: one with a '/', "..", or the file itself is no answer */
	const char *bad[] = {"../lib/libx.debug", "..", "libx.so"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fake.debuglink = (char *)bad[i];
		d = cq_find_debug_file(&nodebug, at("root/lib/libx.so"), &fake);
		CHECK(!d);
		free(d);
	}

	free(hex);
	cq_elf_close(lib);
	unlink(bydebug);
	const char *files[] = {"root/lib/libx.so", "root/lib/libx.debug", "search/liby.so"};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		unlink(at(files[i]));
	snprintf(sub, sizeof(sub), "rm -rf '%s'", dir);
	if (system(sub) != 0)
		printf("# could not remove %s\n", dir);
	return check_report("test_find");
}
