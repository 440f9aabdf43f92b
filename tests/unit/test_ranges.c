/* SPDX-License-Identifier: MIT */
/* Task-id sets as ranges (job/ranges.h): merging in any order, adjacency, the text form
 * both ways, and what is refused. */
#include <stdlib.h>

#include "check.h"
#include "job/ranges.h"

static void fmt_is(const struct cq_ranges *s, const char *want)
{
	char *got = cq_ranges_format(s);
	CHECK_STR(got, want);
	free(got);
}

static void parse_is(const char *in, const char *want)
{
	struct cq_ranges s;
	cq_ranges_init(&s);
	struct cq_error *err = cq_ranges_parse(in, &s);
	CHECK(!err);
	cq_error_destroy(err);
	fmt_is(&s, want);
	cq_ranges_deinit(&s);
}

static void parse_fails(const char *in)
{
	struct cq_ranges s;
	cq_ranges_init(&s);
	struct cq_error *err = cq_ranges_parse(in, &s);
	CHECK(err && err->code == CQ_ERR_FORMAT);
	cq_error_destroy(err);
	cq_ranges_deinit(&s);
}

int main(void)
{
	struct cq_ranges s;
	cq_ranges_init(&s);
	fmt_is(&s, "");
	/* increasing order: one range */
	for (uint64_t i = 0; i < 1000; i++)
		CHECK(!cq_ranges_add(&s, i, i));
	CHECK_U64(s.n, 1);
	CHECK_U64(cq_ranges_count(&s), 1000);
	fmt_is(&s, "0-999");
	/* gaps, then filled out of order: adjacent ranges join */
	CHECK(!cq_ranges_add(&s, 2000, 2000));
	CHECK(!cq_ranges_add(&s, 1500, 1600));
	fmt_is(&s, "0-999,1500-1600,2000");
	CHECK(!cq_ranges_add(&s, 1000, 1499));
	fmt_is(&s, "0-1600,2000");
	CHECK(!cq_ranges_add(&s, 1601, 1999));
	fmt_is(&s, "0-2000");
	/* one range spanning several */
	cq_ranges_deinit(&s);
	cq_ranges_init(&s);
	for (uint64_t i = 10; i <= 50; i += 10)
		CHECK(!cq_ranges_add(&s, i, i));
	CHECK(!cq_ranges_add(&s, 5, 5));
	fmt_is(&s, "5,10,20,30,40,50");
	CHECK(!cq_ranges_add(&s, 19, 41));
	fmt_is(&s, "5,10,19-41,50");
	CHECK(cq_ranges_has(&s, 19) && cq_ranges_has(&s, 41) && !cq_ranges_has(&s, 42) && cq_ranges_has(&s, 5));
	/* union */
	struct cq_ranges t;
	cq_ranges_init(&t);
	CHECK(!cq_ranges_add(&t, 6, 9));
	CHECK(!cq_ranges_add(&t, 42, 49));
	CHECK(!cq_ranges_union(&s, &t));
	fmt_is(&s, "5-10,19-50");
	CHECK_U64(cq_ranges_count(&s), 38);
	cq_ranges_deinit(&t);
	/* refused: beyond 2^48, reversed */
	struct cq_error *err = cq_ranges_add(&s, 1, CQ_TASK_MAX);
	CHECK(err && err->code == CQ_ERR_USAGE);
	cq_error_destroy(err);
	err = cq_ranges_add(&s, 3, 2);
	CHECK(err);
	cq_error_destroy(err);
	fmt_is(&s, "5-10,19-50");
	cq_ranges_deinit(&s);
	/* intersection: the ids in both, whatever their ranges' shapes */
	{
		struct cq_ranges a, b, both;
		cq_ranges_init(&a);
		cq_ranges_init(&b);
		cq_ranges_init(&both);
		CHECK(!cq_ranges_parse("0-9,20-29,40", &a) && !cq_ranges_parse("5-22,28,30-50", &b));
		CHECK(!cq_ranges_intersect(&both, &a, &b));
		fmt_is(&both, "5-9,20-22,28,40");
		cq_ranges_deinit(&both);
		cq_ranges_init(&both);
		CHECK(!cq_ranges_intersect(&both, &a, &both));
		fmt_is(&both, "");
		cq_ranges_deinit(&a);
		cq_ranges_deinit(&b);
		cq_ranges_deinit(&both);
	}
	/* text: any order and overlaps in, the canonical form out */
	parse_is("", "");
	parse_is("5,3,4,0-1", "0-1,3-5");
	parse_is("9-1023,0-3,5,2-4", "0-5,9-1023");
	parse_is("281474976710655", "281474976710655");
	parse_fails("0-");
	parse_fails("-1");
	parse_fails("3-2");
	parse_fails("1,,2");
	parse_fails("1,");
	parse_fails("1 ");
	parse_fails("281474976710656");
	parse_fails("99999999999999999999999");
	return check_report("test_ranges");
}
