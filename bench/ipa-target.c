/*
 * ipa-target.c - the traced program of bench/ipa-bench.sh.
 *
 *   ipa-target N [OUTFILE]
 *
 * Calls hot(&blob, i) N times and times the loop with CLOCK_MONOTONIC
 * (gdb's startup and the download are not counted), prints
 * "elapsed_ns=E n=N" to OUTFILE (stdout without it), then calls
 * bench_done(), where the benchmark stops to check tstatus.  `blob` is
 * 64 bytes behind the pointer hot() gets, for `collect *b`; `gate` is 0
 * throughout, for a condition that is always false.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct blob {
	unsigned long w[8];	/* 64 bytes */
};

struct blob blob = { { 1, 2, 3, 4, 5, 6, 7, 8 } };
volatile int gate;
volatile unsigned long sink;

__attribute__((noinline)) void hot(const struct blob *b, unsigned long i);
__attribute__((noinline)) void bench_done(void);

__attribute__((noinline)) void hot(const struct blob *b, unsigned long i)
{
	sink = i * 3 + b->w[i & 7];
}

__attribute__((noinline)) void bench_done(void)
{
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	struct timespec a, b;
	FILE *out = stdout;

	if (n <= 0) {
		fprintf(stderr, "usage: ipa-target N [OUTFILE]\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		hot(&blob, (unsigned long)i);
	clock_gettime(CLOCK_MONOTONIC, &b);
	long long ns = (long long)(b.tv_sec - a.tv_sec) * 1000000000LL +
		       (b.tv_nsec - a.tv_nsec);
	if (argc > 2 && !(out = fopen(argv[2], "w"))) {
		perror(argv[2]);
		return 1;
	}
	fprintf(out, "elapsed_ns=%lld n=%ld\n", ns, n);
	fclose(out);
	bench_done();
	return 0;
}
