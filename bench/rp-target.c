/*
 * rp-target.c - the target of bench/rp-bench.sh: calls rp_hot() N times
 * and times the loop itself.
 *
 *   rp-target N OUT      writes "elapsed_ns=E n=N" to OUT
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) long rp_hot(long x);

__attribute__((noinline)) long rp_hot(long x)
{
	__asm__ volatile("" ::: "memory");
	return x * 2 + 1;
}

int main(int argc, char **argv)
{
	struct timespec a, b;
	long n, sum = 0;
	FILE *out;

	if (argc != 3) {
		fprintf(stderr, "usage: rp-target N OUT\n");
		return 2;
	}
	n = atol(argv[1]);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		sum += rp_hot(i);
	clock_gettime(CLOCK_MONOTONIC, &b);
	out = fopen(argv[2], "w");
	if (!out)
		return 1;
	fprintf(out, "elapsed_ns=%lld n=%ld sum=%ld\n",
		(long long)(b.tv_sec - a.tv_sec) * 1000000000LL +
		(b.tv_nsec - a.tv_nsec), n, sum);
	return fclose(out) != 0;
}
