/*
 * test-stats.c - the numbers of `probe-trace report`: log2 buckets and
 * their bpftrace-style labels, the histogram's rows and bars, and
 * nearest-rank percentiles at the edges where rounding goes wrong.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "protocol/stats.h"

static void test_buckets(void **state)
{
	(void)state;
	assert_int_equal(log2_bucket(1), 0);
	assert_int_equal(log2_bucket(2), 1);
	assert_int_equal(log2_bucket(3), 1);
	assert_int_equal(log2_bucket(4), 2);
	assert_int_equal(log2_bucket(1023), 9);
	assert_int_equal(log2_bucket(1024), 10);
	assert_int_equal(log2_bucket(UINT64_MAX), 63);
}

static void test_labels(void **state)
{
	static const struct { int k; const char *want; } cases[] = {
		{ -2, "(..., 0)" }, { -1, "[0]" }, { 0, "[1]" }, { 1, "[2, 4)" },
		{ 9, "[512, 1K)" }, { 10, "[1K, 2K)" }, { 19, "[512K, 1M)" },
		{ 20, "[1M, 2M)" }, { 30, "[1G, 2G)" }, { 62, "[4E, 8E)" },
		{ 63, "[8E, ...)" },
	};
	char buf[40];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		log2_hist_label(cases[i].k, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].want);
	}
}

static void test_hist_rows(void **state)
{
	struct log2_hist h = { 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	(void)state;
	/* 0, then 4 values in [4, 8), none in [1], [2, 4), 2 in [8, 16) */
	log2_hist_add(&h, 0);
	for (int v = 4; v < 8; v++)
		log2_hist_add(&h, v);
	log2_hist_add(&h, 8);
	log2_hist_add(&h, 15);
	assert_int_equal(h.n, 7);
	log2_hist_print(out, &h, 2);
	fclose(out);
	assert_string_equal(text,
		"  [0]                       1 |@@@@@@@@@@                              |\n"
		"  [1]                       0 |                                        |\n"
		"  [2, 4)                    0 |                                        |\n"
		"  [4, 8)                    4 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"  [8, 16)                   2 |@@@@@@@@@@@@@@@@@@@@                    |\n");
	free(text);
}

static void test_negative_bucket(void **state)
{
	struct log2_hist h = { 0 };

	(void)state;
	log2_hist_add(&h, -5);
	log2_hist_add(&h, INT64_MIN);
	log2_hist_add(&h, INT64_MAX);
	assert_int_equal(h.neg, 2);
	assert_int_equal(h.b[62], 1);
	assert_int_equal(h.n, 3);
}

static void test_percentiles(void **state)
{
	int64_t v[333] = { 0 };

	(void)state;
	assert_int_equal(percentile(v, 0, 50), 0);
	for (int i = 0; i < 10; i++)
		v[i] = 10 - i;
	sort_values(v, 10);
	assert_int_equal(v[0], 1);
	assert_int_equal(percentile(v, 10, 50), 5);
	assert_int_equal(percentile(v, 10, 90), 9);
	assert_int_equal(percentile(v, 10, 99), 10);
	assert_int_equal(percentile(v, 10, 100), 10);
	assert_int_equal(percentile(v, 10, 1), 1);
	/* 333 values: rank ceil(0.5 * 333) = 167, ceil(0.9 * 333) = 300
	 * (299.7), ceil(0.99 * 333) = 330 (329.67) */
	for (int i = 0; i < 333; i++)
		v[i] = i + 1;
	assert_int_equal(percentile(v, 333, 50), 167);
	assert_int_equal(percentile(v, 333, 90), 300);
	assert_int_equal(percentile(v, 333, 99), 330);
	/* 100 values: exact ranks, no rounding up */
	assert_int_equal(percentile(v, 100, 90), 90);
	assert_int_equal(percentile(v, 100, 99), 99);
	assert_int_equal(percentile(v, 1, 99), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buckets),
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_hist_rows),
		cmocka_unit_test(test_negative_bucket),
		cmocka_unit_test(test_percentiles),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
