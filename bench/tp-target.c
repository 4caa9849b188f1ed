/*
 * tp-target.c - the traced program of bench/tp-bench.sh.
 *
 *   tp-target N [OUTFILE]
 *
 * Calls hot() N times and times the loop itself with CLOCK_MONOTONIC, so
 * that gdb's startup, the connection and the tracepoint download are not
 * counted.  Prints "elapsed_ns=E n=N" to OUTFILE (stdout without it: under
 * a stub on a pipe the program's stdout is not ours to read), then calls
 * bench_done(), where the benchmark's gdb script stops to check tstatus
 * before the program exits.
 *
 * hot() is where the tracepoint goes ('trace hot').  Built with -O2 its
 * first instruction is a plain register instruction the agent's emulator
 * handles without touching memory (see the strategy line tp-bench.sh
 * prints), so "auto" measures the emulate path.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

volatile unsigned long sink;

__attribute__((noinline)) void hot(unsigned long i);
__attribute__((noinline)) void bench_done(void);

__attribute__((noinline)) void hot(unsigned long i)
{
	sink = i * 3 + 1;
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
		fprintf(stderr, "usage: tp-target N [OUTFILE]\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		hot((unsigned long)i);
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
