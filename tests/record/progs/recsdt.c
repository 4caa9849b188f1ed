/*
 * recsdt.c - USDT probes for probe-trace's recording tests.
 *
 *   recsdt OUT N
 *
 * For i < N: rec:tick(i, -3i, "tick-i") at one site; rec:twice(i) at two
 * sites (an always-inline function used twice); rec:guarded(i) only while
 * a tracer holds its semaphore.  OUT gets the ground truth: "tick I V S",
 * "twice I", and "guarded I" for each guarded probe passed.
 */
#define _SDT_HAS_SEMAPHORES 1
#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>

/* With _SDT_HAS_SEMAPHORES every probe of the file has one; only
 * rec:guarded is tested by the program. */
unsigned short rec_guarded_semaphore __attribute__((section(".probes")));
unsigned short rec_tick_semaphore __attribute__((section(".probes")));
unsigned short rec_twice_semaphore __attribute__((section(".probes")));

static FILE *out;

static inline __attribute__((always_inline)) void twice(long i)
{
	STAP_PROBE1(rec, twice, i);
	fprintf(out, "twice %ld\n", i);
}

int main(int argc, char **argv)
{
	long n;

	if (argc != 3 || !(out = fopen(argv[1], "w")))
		return 2;
	n = atol(argv[2]);
	for (long i = 0; i < n; i++) {
		char text[32];
		long v = -3 * i;

		snprintf(text, sizeof(text), "tick-%ld", i);
		STAP_PROBE3(rec, tick, i, v, text);
		fprintf(out, "tick %ld %ld %s\n", i, v, text);
		if (i % 2)
			twice(i);
		else
			twice(i + 1000);
		if (__builtin_expect(rec_guarded_semaphore, 0)) {
			STAP_PROBE1(rec, guarded, i);
			fprintf(out, "guarded %ld\n", i);
		}
	}
	return fclose(out) != 0;
}
