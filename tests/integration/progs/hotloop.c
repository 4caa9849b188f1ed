/* hotloop.c - tracepoint hits in flight, for rsp-client.py's hot-wait
 * group.  NTHREADS threads call hot() in a loop until stop_now is set (the
 * test writes it with an M packet); every 1000th call a thread also calls
 * marker(), and thread 0 solo(): there the test puts gdb breakpoints (solo
 * for a breakpoint only one thread can hit).  Threads exit one by one
 * as they see stop_now, while the others may still hit.  main joins them,
 * states the total number of hot() calls as ground truth ("calls=N") and
 * passes it to done(), where the test stops the program. */
#include <pthread.h>
#include "ground.h"

#define NTHREADS 4

volatile int stop_now;
long calls[NTHREADS];

long hot(long x);
void marker(void);
void solo(void);
void done(long total);

__attribute__((noinline)) long hot(long x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) void marker(void)
{
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void solo(void)
{
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void done(long total)
{
	__asm__ volatile("" : : "r"(total) : "memory");
}

static void *worker(void *arg)
{
	long i = (long)arg, n = 0, acc = 0;

	while (!stop_now) {
		acc += hot(n);
		if (++n % 1000 == 0) {
			marker();
			if (i == 0)
				solo();
		}
	}
	calls[i] = n;
	return (void *)acc;
}

int main(void)
{
	pthread_t th[NTHREADS];
	long total = 0;

	ground("pid=%d", (int)getpid());
	for (long i = 0; i < NTHREADS; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)i) != 0) {
			ground("pthread_create failed");
			return 1;
		}
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(th[i], NULL);
		total += calls[i];
	}
	ground("calls=%ld", total);
	done(total);
	return 0;
}
