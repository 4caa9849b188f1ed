/* probe-target.c - a program for the probe hit-path test.  Its threads call
 * functions whose instructions take each execution strategy; it prints how
 * often each ran and a checksum of what they computed, which must be the
 * same with probes as without. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 4

long counter[THREADS];			/* touched RIP-relatively */
volatile long scale = 3;		/* a RIP-relative load (boost) */
static long per_thread_calls[THREADS];

/* noinline, no frame-pointer games: the entry is push %rbp (emulate). */
__attribute__((noinline)) long hot(long a, long b)
{
	long r = a * scale + b;

	counter[b] += r & 7;	/* RIP-relative (boost); one slot per thread */
	return r ^ (r >> 3);
}

__attribute__((noinline)) long leaf(long x)
{
	return x + 1;
}

static void *worker(void *arg)
{
	long id = (long)arg, sum = 0;
	int n = atoi(getenv("PROBE_N") ? getenv("PROBE_N") : "2000");

	for (int i = 0; i < n; i++) {
		sum += hot(i, id);
		sum += leaf(sum & 0xff);
		per_thread_calls[id]++;
	}
	return (void *)sum;
}

int main(void)
{
	pthread_t t[THREADS];
	long total = 0, calls = 0, count = 0;

	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < THREADS; i++) {
		void *r;
		pthread_join(t[i], &r);
		total += (long)r;
		calls += per_thread_calls[i];
		count += counter[i];
	}
	printf("calls hot=%ld leaf=%ld\n", calls, calls);
	printf("checksum=%ld counter=%ld\n", total, count);
	return 0;
}
