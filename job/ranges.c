/* SPDX-License-Identifier: MIT */
/* Task-id sets as ranges (ranges.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ranges.h"

void cq_ranges_init(struct cq_ranges *s)
{
	memset(s, 0, sizeof(*s));
}

void cq_ranges_deinit(struct cq_ranges *s)
{
	free(s->base);
	memset(s, 0, sizeof(*s));
}

/* Room for one more range: at the front when @p front (base has head slots before r),
 * else at the back. Growing doubles the allocation and leaves as much room before the
 * ranges as after, so either end takes a long run of additions in O(1) each. */
static bool room(struct cq_ranges *s, bool front)
{
	if (front ? s->head > 0 : s->head + s->n < s->cap)
		return true;
	size_t cap = s->cap ? s->cap * 2 : 8, head = (cap - s->n) / 2;
	struct cq_task_range *b = malloc(cap * sizeof(*b));
	if (!b)
		return false;
	if (s->n)
		memcpy(b + head, s->r, s->n * sizeof(*b));
	free(s->base);
	s->base = b;
	s->head = head;
	s->r = b + head;
	s->cap = cap;
	return true;
}

/* The first range whose hi + 1 >= @p lo (the first one @p lo could touch). */
static size_t lower(const struct cq_ranges *s, uint64_t lo)
{
	size_t a = 0, b = s->n;
	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (s->r[m].hi + 1 < lo)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

struct cq_error *cq_ranges_add(struct cq_ranges *s, uint64_t lo, uint64_t hi)
{
	if (lo > hi || hi >= CQ_TASK_MAX)
		return cq_error_create(CQ_ERR_USAGE, "task range %llu-%llu is not below %llu",
				       (unsigned long long)lo, (unsigned long long)hi,
				       (unsigned long long)CQ_TASK_MAX);
	/* the common case: ids come in increasing order */
	if (s->n && s->r[s->n - 1].hi + 1 >= lo && s->r[s->n - 1].lo <= lo) {
		if (hi > s->r[s->n - 1].hi)
			s->r[s->n - 1].hi = hi;
		return NULL;
	}
	size_t i = lower(s, lo), j = i;
	/* [i, j): the ranges [lo, hi] touches, merged into one */
	while (j < s->n && s->r[j].lo <= hi + 1)
		j++;
	if (i < j) {
		if (s->r[i].lo < lo)
			lo = s->r[i].lo;
		if (s->r[j - 1].hi > hi)
			hi = s->r[j - 1].hi;
		s->r[i] = (struct cq_task_range){lo, hi};
		memmove(s->r + i + 1, s->r + j, (s->n - j) * sizeof(*s->r));
		s->n -= j - i - 1;
		return NULL;
	}
	/* a new range at i: before all the others into the room in front, else the ones
	 * after it move back by one */
	if (!room(s, i == 0))
		return &cq_error_nomem;
	if (i == 0 && s->head > 0) {
		s->r--;
		s->head--;
	} else {
		memmove(s->r + i + 1, s->r + i, (s->n - i) * sizeof(*s->r));
	}
	s->r[i] = (struct cq_task_range){lo, hi};
	s->n++;
	return NULL;
}

struct cq_error *cq_ranges_union(struct cq_ranges *dst, const struct cq_ranges *src)
{
	for (size_t i = 0; i < src->n; i++) {
		struct cq_error *err = cq_ranges_add(dst, src->r[i].lo, src->r[i].hi);
		if (err)
			return err;
	}
	return NULL;
}

struct cq_error *cq_ranges_intersect(struct cq_ranges *dst, const struct cq_ranges *a, const struct cq_ranges *b)
{
	/* both sorted and disjoint: one merge-like pass, output in increasing order */
	size_t i = 0, k = 0;
	while (i < a->n && k < b->n) {
		uint64_t lo = a->r[i].lo > b->r[k].lo ? a->r[i].lo : b->r[k].lo;
		uint64_t hi = a->r[i].hi < b->r[k].hi ? a->r[i].hi : b->r[k].hi;
		if (lo <= hi) {
			struct cq_error *err = cq_ranges_add(dst, lo, hi);
			if (err)
				return err;
		}
		if (a->r[i].hi < b->r[k].hi)
			i++;
		else
			k++;
	}
	return NULL;
}

int cq_ranges_has(const struct cq_ranges *s, uint64_t id)
{
	size_t i = lower(s, id);
	return i < s->n && s->r[i].lo <= id && id <= s->r[i].hi;
}

uint64_t cq_ranges_count(const struct cq_ranges *s)
{
	uint64_t n = 0;
	for (size_t i = 0; i < s->n; i++)
		n += s->r[i].hi - s->r[i].lo + 1;
	return n;
}

char *cq_ranges_format(const struct cq_ranges *s)
{
	size_t cap = s->n * 32 + 1, len = 0;
	char *out = malloc(cap);
	if (!out)
		return NULL;
	out[0] = 0;
	for (size_t i = 0; i < s->n; i++) {
		int w = s->r[i].lo == s->r[i].hi
				? snprintf(out + len, cap - len, "%s%llu", i ? "," : "", (unsigned long long)s->r[i].lo)
				: snprintf(out + len, cap - len, "%s%llu-%llu", i ? "," : "",
					   (unsigned long long)s->r[i].lo, (unsigned long long)s->r[i].hi);
		len += (size_t)w;
	}
	return out;
}

static const char *number(const char *p, uint64_t *v)
{
	if (*p < '0' || *p > '9')
		return NULL;
	uint64_t x = 0;
	for (; *p >= '0' && *p <= '9'; p++) {
		x = x * 10 + (uint64_t)(*p - '0');
		if (x >= CQ_TASK_MAX)
			return NULL;
	}
	*v = x;
	return p;
}

struct cq_error *cq_ranges_parse(const char *text, struct cq_ranges *s)
{
	const char *p = text;
	if (!*p)
		return NULL;
	for (;;) {
		uint64_t lo, hi;
		const char *q = number(p, &lo);
		if (q && *q == '-')
			q = number(q + 1, &hi);
		else
			hi = lo;
		if (!q || lo > hi)
			return cq_error_create(CQ_ERR_FORMAT, "task set \"%.40s\": bad range at character %zu "
					       "(want N or N-M, N <= M < 2^48, comma-separated)", text, (size_t)(p - text) + 1);
		struct cq_error *err = cq_ranges_add(s, lo, hi);
		if (err)
			return err;
		if (!*q)
			return NULL;
		if (*q != ',')
			return cq_error_create(CQ_ERR_FORMAT, "task set \"%.40s\": unexpected character at %zu",
					       text, (size_t)(q - text) + 1);
		p = q + 1;
	}
}
