/* SPDX-License-Identifier: MIT */
/* Minimal assertion helpers for the unit tests: count, report, never abort early. */
#ifndef COREQ_TEST_CHECK_H
#define COREQ_TEST_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int check_passed, check_failed;

#define CHECK(cond)                                                                     \
	do {                                                                             \
		if (cond)                                                                \
			check_passed++;                                                  \
		else {                                                                   \
			check_failed++;                                                  \
			printf("not ok - %s:%d: %s\n", __FILE__, __LINE__, #cond);       \
		}                                                                        \
	} while (0)

#define CHECK_U64(a, b)                                                                 \
	do {                                                                             \
		uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                         \
		if (a_ == b_)                                                            \
			check_passed++;                                                  \
		else {                                                                   \
			check_failed++;                                                  \
			printf("not ok - %s:%d: %s == 0x%" PRIx64 ", expected 0x%" PRIx64 "\n", \
			       __FILE__, __LINE__, #a, a_, b_);                          \
		}                                                                        \
	} while (0)

#define CHECK_STR(a, b)                                                                 \
	do {                                                                             \
		const char *a_ = (a), *b_ = (b);                                         \
		if (a_ && b_ && strcmp(a_, b_) == 0)                                     \
			check_passed++;                                                  \
		else {                                                                   \
			check_failed++;                                                  \
			printf("not ok - %s:%d: %s == \"%s\", expected \"%s\"\n", __FILE__,  \
			       __LINE__, #a, a_ ? a_ : "(null)", b_ ? b_ : "(null)");    \
		}                                                                        \
	} while (0)

/* Print the closing line and return the exit status. */
static inline int check_report(const char *name)
{
	printf("%s: %d passed, %d failed\n", name, check_passed, check_failed);
	return check_failed ? 1 : 0;
}

#endif
