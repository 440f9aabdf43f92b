/* SPDX-License-Identifier: MIT */
/**
 * @file ranges.h
 * Sets of task ids (MPI ranks, or input order) as sorted, disjoint, non-adjacent ranges,
 * written as STAT writes them: "0-3,5,9-1023". A job of a million ranks that all sit in
 * one function is one range, so what a stack tree costs grows with its distinct paths,
 * not with ranks times paths.
 */
#ifndef COREQ_JOB_RANGES_H
#define COREQ_JOB_RANGES_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/** Task ids are below this (2^48: more than any job, and exact in a JSON number). */
#define CQ_TASK_MAX (UINT64_C(1) << 48)

struct cq_task_range {
	uint64_t lo, hi; /**< inclusive */
};

struct cq_ranges {
	struct cq_task_range *r; /**< sorted by lo; disjoint and not adjacent */
	size_t n, cap;
	/** The allocation r lies in, with @c head free slots before r: ids added in decreasing
	 * order go in front without moving the others (300,000 of them took 26 s). */
	struct cq_task_range *base;
	size_t head;
};

/** An empty set; cq_ranges_deinit() releases it. */
void cq_ranges_init(struct cq_ranges *s);
void cq_ranges_deinit(struct cq_ranges *s);

/** Add [@p lo, @p hi] (lo <= hi < CQ_TASK_MAX), merging with what it touches. Adding in
 * increasing order costs O(1) each. */
struct cq_error *cq_ranges_add(struct cq_ranges *s, uint64_t lo, uint64_t hi);

/** Add every range of @p src to @p dst. */
struct cq_error *cq_ranges_union(struct cq_ranges *dst, const struct cq_ranges *src);

/** @p dst (empty or not) gains the ids in both @p a and @p b. */
struct cq_error *cq_ranges_intersect(struct cq_ranges *dst, const struct cq_ranges *a, const struct cq_ranges *b);

/** Whether @p id is in the set. */
int cq_ranges_has(const struct cq_ranges *s, uint64_t id);

/** How many ids the set holds. */
uint64_t cq_ranges_count(const struct cq_ranges *s);

/** The set as text ("0-3,5"; "" when empty); caller frees; NULL when out of memory. */
char *cq_ranges_format(const struct cq_ranges *s);

/** Parse @p text ("0-3,5", ranges in any order, overlaps allowed) into @p s (added to
 * what it holds): CQ_ERR_FORMAT naming the offending character otherwise. */
struct cq_error *cq_ranges_parse(const char *text, struct cq_ranges *s);

#endif
