/* SPDX-License-Identifier: MIT */
/* A private scratch directory for the unit tests that build files: paths in it, and
 * copies of files into it. */
#ifndef COREQ_TEST_SCRATCH_H
#define COREQ_TEST_SCRATCH_H

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

/** The directory (made by the test with mkdtemp over "/tmp/coreq-test-NAME-XXXXXX"). */
static char dir[64];

/** @p sub under the scratch directory; the last 8 answers stay valid. */
static char *at(const char *sub)
{
	static char buf[8][PATH_MAX];
	static int k;
	char *b = buf[k++ % 8];
	snprintf(b, PATH_MAX, "%s/%s", dir, sub);
	return b;
}

/** A copy of @p from as @p to (mode 0755). */
static void copy(const char *from, const char *to)
{
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	char buf[65536];
	for (ssize_t n; in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0;)
		if (write(out, buf, (size_t)n) != n)
			break;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
}

#endif
