/*
 * stats.c - log2 histograms and percentiles for `probe-trace report`
 * and `monitor hist`.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "protocol/stats.h"

#define BAR_WIDTH 40

int log2_bucket(uint64_t v)
{
	return 63 - __builtin_clzll(v);
}

void log2_hist_add(struct log2_hist *h, int64_t v)
{
	if (v < 0)
		h->neg++;
	else if (v == 0)
		h->zero++;
	else
		h->b[log2_bucket((uint64_t)v)]++;
	h->n++;
}

/* 2^k as bpftrace prints it: 512, 1K, 2M, 4G, 8T, 16P, 32E */
static void power_label(int k, char *buf, size_t size)
{
	static const char suffix[] = " KMGTPE";
	int s = k / 10;

	snprintf(buf, size, "%llu%.*s", 1ULL << (k - s * 10), s ? 1 : 0,
		 &suffix[s]);
}

void log2_hist_label(int k, char *buf, size_t size)
{
	char lo[16], hi[16];

	if (k == -2) {
		snprintf(buf, size, "(..., 0)");
	} else if (k == -1) {
		snprintf(buf, size, "[0]");
	} else if (k == 0) {
		snprintf(buf, size, "[1]");
	} else {
		power_label(k, lo, sizeof(lo));
		if (k == 63)
			snprintf(hi, sizeof(hi), "...");
		else
			power_label(k + 1, hi, sizeof(hi));
		snprintf(buf, size, "[%s, %s)", lo, hi);
	}
}

static uint64_t bucket_count(const struct log2_hist *h, int k)
{
	return k == -2 ? h->neg : k == -1 ? h->zero : h->b[k];
}

void log2_hist_print(FILE *out, const struct log2_hist *h, int indent)
{
	int lo = 64, hi = -3;
	uint64_t max = 0;

	for (int k = -2; k < 64; k++) {
		uint64_t c = bucket_count(h, k);
		if (!c)
			continue;
		if (k < lo)
			lo = k;
		hi = k;
		if (c > max)
			max = c;
	}
	for (int k = lo; k <= hi; k++) {
		uint64_t c = bucket_count(h, k);
		char label[40];
		int bar = (int)((c * BAR_WIDTH + max - 1) / max);

		log2_hist_label(k, label, sizeof(label));
		fprintf(out, "%*s%-16s %10llu |%.*s%*s|\n", indent, "", label,
			(unsigned long long)c, bar,
			"@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@", BAR_WIDTH - bar, "");
	}
}

int64_t percentile(const int64_t *sorted, size_t n, unsigned p)
{
	size_t rank;

	if (!n)
		return 0;
	/* ceil(p * n / 100) in integers: no rounding error at the edges */
	rank = ((uint64_t)p * n + 99) / 100;
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return sorted[rank - 1];
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

void sort_values(int64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_i64);
}
