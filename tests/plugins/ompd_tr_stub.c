/* SPDX-License-Identifier: MIT */
/* Only the entry points by which a plugin of the 2016 OMPD TR (2.001) shows itself: coreq
 * must recognize the older ABI, never call into it as OpenMP 5.1, and refuse it naming the
 * TR entry points it lacks. */
/* Not omp-tools.h: its prototypes are the 5.1 ones. */
typedef enum { ompd_rc_ok = 0 } ompd_rc_t;

ompd_rc_t ompd_get_version(int *version)
{
	*version = 201602;
	return ompd_rc_ok;
}

ompd_rc_t ompd_get_version_string(const char **s)
{
	*s = "coreq TR 2.001 stub";
	return ompd_rc_ok;
}

ompd_rc_t ompd_initialize(const void *callbacks)
{
	return ompd_rc_ok;
}
