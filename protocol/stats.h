/*
 * stats.h - the numbers `probe-trace report` and the agent's `monitor
 * hist` print: log2 histograms (bpftrace's hist(): buckets [1], [2, 4),
 * [4, 8) ... with a count and a bar each) and percentiles.  Pure: no I/O
 * but the FILE it is given.
 */
#ifndef PROBE_PROTOCOL_STATS_H
#define PROBE_PROTOCOL_STATS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* neg counts v < 0, zero v == 0, b[k] 2^k <= v < 2^(k+1). */
struct log2_hist {
	uint64_t neg, zero, b[64];
	uint64_t n;
};

/* The bucket of v >= 1: floor(log2(v)). */
int log2_bucket(uint64_t v);
void log2_hist_add(struct log2_hist *h, int64_t v);
/* "[0]", "[1]", "[2, 4)", "[1K, 2K)", "[4G, 8G)": 1024-based suffixes
 * as bpftrace writes them; k = -2 is the bucket of negative values
 * "(..., 0)", k = -1 the one of zero. */
void log2_hist_label(int k, char *buf, size_t size);
/* Every bucket from the lowest to the highest non-empty one, each with
 * its count and a bar of width proportional to the largest count;
 * `indent` spaces before each line. */
void log2_hist_print(FILE *out, const struct log2_hist *h, int indent);

/* The p-th percentile (1 <= p <= 100) of n sorted values by the
 * nearest-rank method: the smallest value with at least p% of the values
 * at or below it.  0 when n is 0. */
int64_t percentile(const int64_t *sorted, size_t n, unsigned p);
/* Sorts v ascending. */
void sort_values(int64_t *v, size_t n);

#endif
