/* SPDX-License-Identifier: MIT */
/* Files coreq writes (output/output.h), in a private directory: the output appears only
 * when committed and whole; a symlink planted at the temporary's or the output's name is
 * never written through; an output that is an input (by another name, or through a
 * symlink) is refused before anything is written; an abort leaves nothing behind. */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "output/output.h"

static char dir[64];

static char *in_dir(const char *name)
{
	static char buf[8][128];
	static int k;
	char *b = buf[k++ % 8];
	snprintf(b, 128, "%s/%s", dir, name);
	return b;
}

static size_t entries(void)
{
	size_t n = 0;
	DIR *d = opendir(dir);
	for (struct dirent *e; d && (e = readdir(d));)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

static char *slurp(const char *path)
{
	static char buf[256];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
	return n >= 0 ? buf : NULL;
}

static void put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		if (write(fd, text, strlen(text)) < 0)
			perror(path);
		close(fd);
	}
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/coreq-test-output-XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	struct cq_output o;
	struct cq_error *err;

	/* written whole, seen only once committed */
	err = cq_output_begin(in_dir("a.dot"), "--dot", NULL, 0, &o);
	CHECK(!err);
	if (!err) {
		CHECK(cq_output_write(&o, "digraph {", 9) == NULL);
		CHECK(access(in_dir("a.dot"), F_OK) != 0); /* not there before the commit */
		CHECK(cq_output_write(&o, "}\n", 2) == NULL);
		CHECK(cq_output_commit(&o) == NULL);
	}
	CHECK_STR(slurp(in_dir("a.dot")), "digraph {}\n");
	CHECK_U64(entries(), 1); /* no temporary left */

	/* an output that replaces a file: the old content stays until the commit */
	err = cq_output_begin(in_dir("a.dot"), "--dot", NULL, 0, &o);
	CHECK(!err);
	if (!err) {
		CHECK(cq_output_write(&o, "new\n", 4) == NULL);
		CHECK_STR(slurp(in_dir("a.dot")), "digraph {}\n");
		CHECK(cq_output_commit(&o) == NULL);
	}
	CHECK_STR(slurp(in_dir("a.dot")), "new\n");

	/* a symlink planted at the output's name to a file elsewhere: the link is replaced,
	 * its target never written */
	put(in_dir("victim"), "keep\n");
	CHECK(symlink(in_dir("victim"), in_dir("b.svg")) == 0);
	err = cq_output_begin(in_dir("b.svg"), "--svg", NULL, 0, &o);
	CHECK(!err);
	if (!err) {
		CHECK(cq_output_write(&o, "<svg/>\n", 7) == NULL);
		CHECK(cq_output_commit(&o) == NULL);
	}
	CHECK_STR(slurp(in_dir("victim")), "keep\n");
	struct stat st;
	CHECK(lstat(in_dir("b.svg"), &st) == 0 && S_ISREG(st.st_mode));
	CHECK_STR(slurp(in_dir("b.svg")), "<svg/>\n");

	/* an output that is an input, by another name or through a symlink: refused, nothing
	 * written, the input intact */
	put(in_dir("core"), "core bytes\n");
	CHECK(link(in_dir("core"), in_dir("core.hard")) == 0);
	CHECK(symlink(in_dir("core"), in_dir("core.sym")) == 0);
	const char *inputs[] = {NULL, in_dir("core")};
	size_t before = entries();
	for (int k = 0; k < 3; k++) {
		const char *name = k == 0 ? in_dir("core") : k == 1 ? in_dir("core.hard") : in_dir("core.sym");
		err = cq_output_begin(name, "--dot", inputs, 2, &o);
		CHECK(err != NULL && err->message && strstr(err->message, "--dot"));
		cq_error_destroy(err);
		if (!err)
			cq_output_abort(&o);
	}
	CHECK_STR(slurp(in_dir("core")), "core bytes\n");
	CHECK_U64(entries(), before);
	CHECK(cq_same_file(in_dir("core.sym"), in_dir("core.hard")));
	CHECK(!cq_same_file(in_dir("core"), in_dir("victim")));

	/* an abort leaves nothing: neither the output nor the temporary */
	before = entries();
	err = cq_output_begin(in_dir("c.dot"), "--dot", NULL, 0, &o);
	CHECK(!err);
	if (!err) {
		CHECK(cq_output_write(&o, "half", 4) == NULL);
		cq_output_abort(&o);
	}
	CHECK(access(in_dir("c.dot"), F_OK) != 0);
	CHECK_U64(entries(), before);

	/* a directory that does not exist: an error naming the output, nothing created */
	err = cq_output_begin(in_dir("no/such/dir.dot"), "--dot", NULL, 0, &o);
	CHECK(err != NULL);
	cq_error_destroy(err);

	/* clean up */
	DIR *d = opendir(dir);
	for (struct dirent *e; d && (e = readdir(d));)
		if (e->d_name[0] != '.')
			unlink(in_dir(e->d_name));
	if (d)
		closedir(d);
	rmdir(dir);
	return check_report("test_output");
}
