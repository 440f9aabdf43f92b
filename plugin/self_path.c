/* SPDX-License-Identifier: MIT */
/* Paths relative to the running binary (self_path.h). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "self_path.h"

char *cq_self_relative(const char *rel)
{
	char exe[PATH_MAX], cand[2 * PATH_MAX], real[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return NULL;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = 0;
	snprintf(cand, sizeof(cand), "%s/%s", exe, rel);
	return realpath(cand, real) ? strdup(real) : NULL;
}
