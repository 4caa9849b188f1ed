/*
 * ipa-target.c - the traced program of bench/ipa-bench.sh.
 *
 *   ipa-target N [OUTFILE [6]]
 *
 * Calls hot(&blob, i) N times (with "6": hot6(i, 1, 2, 3, 4, 5), six
 * arguments; with "r": hotr(i), which returns i * 2 + 1) and times the loop with CLOCK_MONOTONIC
 * (gdb's startup and the download are not counted), prints
 * "elapsed_ns=E n=N cpu_ns=C" (C: the loop's CPU time of this thread,
 * which time the machine's other work takes from it does not inflate)
 * to OUTFILE (stdout without it), then calls
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
__attribute__((noinline)) void hot6(unsigned long a, unsigned long b,
				    unsigned long c, unsigned long d,
				    unsigned long e, unsigned long f);
__attribute__((noinline)) long hotr(long x);
__attribute__((noinline)) void bench_done(void);

/* Each probed function starts with a 5-byte nop: gdbserver's fast
 * tracepoints need an instruction of 5 bytes where the jump goes
 * (bench/speed-bench.sh runs them on the same functions). */
#define FIVE_BYTES() __asm__ volatile(".byte 0x0f, 0x1f, 0x44, 0x00, 0x00")

__attribute__((noinline)) void hot(const struct blob *b, unsigned long i)
{
	FIVE_BYTES();
	sink = i * 3 + b->w[i & 7];
}

__attribute__((noinline)) void hot6(unsigned long a, unsigned long b,
				    unsigned long c, unsigned long d,
				    unsigned long e, unsigned long f)
{
	FIVE_BYTES();
	sink = a + b + c + d + e + f;
}

__attribute__((noinline)) long hotr(long x)
{
	FIVE_BYTES();
	return x * 2 + 1;
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
	int six = argc > 3 && argv[3][0] == '6';
	int ret = argc > 3 && argv[3][0] == 'r';
	struct timespec ca, cb;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ca);
	clock_gettime(CLOCK_MONOTONIC, &a);
	if (six)
		for (long i = 0; i < n; i++)
			hot6((unsigned long)i, 1, 2, 3, 4, 5);
	else if (ret)
		for (long i = 0; i < n; i++)
			sink += (unsigned long)hotr(i);
	else
		for (long i = 0; i < n; i++)
			hot(&blob, (unsigned long)i);
	clock_gettime(CLOCK_MONOTONIC, &b);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cb);
	long long cpu = (long long)(cb.tv_sec - ca.tv_sec) * 1000000000LL +
			(cb.tv_nsec - ca.tv_nsec);
	long long ns = (long long)(b.tv_sec - a.tv_sec) * 1000000000LL +
		       (b.tv_nsec - a.tv_nsec);
	if (argc > 2 && !(out = fopen(argv[2], "w"))) {
		perror(argv[2]);
		return 1;
	}
	fprintf(out, "elapsed_ns=%lld n=%ld cpu_ns=%lld\n", ns, n, cpu);
	fclose(out);
	bench_done();
	return 0;
}
