/* SPDX-License-Identifier: MIT */
/* The plugin room's trust policy alone (plugin/plugin_path.h), on files made here in a
 * private directory: a trusted directory holds what may be loaded; a symlink out of it,
 * a name with '$', a file that is not ELF or not of the host's class are passed over and
 * said; an absolute name outside every trusted directory needs the user's consent. The
 * C library this process runs on stands in for a plugin of the right class and machine. */
#include <dlfcn.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "scratch.h"
#include "plugin/plugin_path.h"

static struct cq_plugin_choice choose(const char *name, const struct cq_dirs *d, bool untrusted)
{
	struct cq_plugin_choice c;
	char *names[] = {(char *)name};
	cq_plugin_choose(names, 1, d, untrusted, "--test-plugin", &c);
	return c;
}

int main(void)
{
	/* the C library this process runs on: an ELF shared object of its class and machine
	 * (found where the loader put it: the 32-bit build runs on libc6-i386's), through a
	 * function of its that no sanitizer intercepts */
	Dl_info info;
	const char *libc = dladdr((void *)gnu_get_libc_version, &info) && info.dli_fname ? info.dli_fname : NULL;
	snprintf(dir, sizeof(dir), "/tmp/coreq-test-plugin-XXXXXX");
	if (!libc || access(libc, R_OK) != 0 || !mkdtemp(dir)) {
		printf("not ok - no C library to stand in for a plugin (%s)\n", libc ? libc : "dladdr failed");
		return 1;
	}
	mkdir(at("trusted"), 0755);
	mkdir(at("elsewhere"), 0755);
	copy(libc, at("trusted/libgood.so"));
	copy(libc, at("elsewhere/libout.so"));
	CHECK(symlink(at("elsewhere/libout.so"), at("trusted/liblink.so")) == 0);
	int fd = open(at("trusted/libtext.so"), O_WRONLY | O_CREAT, 0644);
	if (fd >= 0) {
		CHECK(write(fd, "not an ELF file\n", 16) == 16);
		close(fd);
	}
	copy(libc, at("trusted/lib$x.so"));

	struct cq_dirs d = cq_plugin_trusted_dirs(at("trusted"), NULL);
	CHECK(d.n >= 1);
	char real[PATH_MAX];
	CHECK(realpath(at("trusted/libgood.so"), real) && cq_plugin_trusted(real, &d));
	CHECK(realpath(at("elsewhere/libout.so"), real) && !cq_plugin_trusted(real, &d));

	/* a base name is looked for in the trusted directories */
	struct cq_plugin_choice c = choose("/nowhere/libgood.so", &d, false);
	CHECK(c.path && strstr(c.path, "/trusted/libgood.so") && c.fd >= 0);
	cq_plugin_choice_deinit(&c);

	/* a symlink out of the trusted directory: refused, and said with where it resolves */
	c = choose(at("trusted/liblink.so"), &d, false);
	CHECK(!c.path && c.fd < 0 && c.refused && strstr(c.refused, "elsewhere/libout.so"));
	cq_plugin_choice_deinit(&c);

	/* an absolute name outside: refused unless the user consents */
	c = choose(at("elsewhere/libout.so"), &d, false);
	CHECK(!c.path && c.refused);
	cq_plugin_choice_deinit(&c);
	c = choose(at("elsewhere/libout.so"), &d, true);
	CHECK(c.path && c.fd >= 0);
	cq_plugin_choice_deinit(&c);

	/* not ELF: passed over, and why */
	c = choose(at("trusted/libtext.so"), &d, false);
	CHECK(!c.path && c.mismatch && strstr(c.mismatch, "libtext.so is not a readable ELF file"));
	cq_plugin_choice_deinit(&c);

	/* a '$' in the name (a dynamic string token the loader would expand): never loaded */
	c = choose(at("trusted/lib$x.so"), &d, true);
	CHECK(!c.path && c.fd < 0);
	cq_plugin_choice_deinit(&c);

	cq_dirs_free(&d);
	const char *files[] = {"trusted/libgood.so", "trusted/liblink.so", "trusted/libtext.so", "trusted/lib$x.so",
			       "elsewhere/libout.so"};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		unlink(at(files[i]));
	rmdir(at("trusted"));
	rmdir(at("elsewhere"));
	rmdir(dir);
	return check_report("test_plugin_path");
}
