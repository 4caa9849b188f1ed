/*
 * keeptarget.c - the program the keeper's chaos test traces.
 *
 * keeptarget GROUND GO N [OUT]: eight threads each make N rounds of calls to
 * the probed functions, then the program writes "calls done" to GROUND
 * and waits for the file GO.exit before it prints its result and exits
 * with status 7: the test reads its text meanwhile.  It starts calling
 * only once GO.start exists (the test attaches first).  The result
 * depends on every call having run exactly once with the right values.
 * With OUT, stdout goes to that file: over ssh, a connection that drops
 * takes the program's stdout with it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define THREADS 8

static char go_start[4096], go_exit[4096];
static FILE *ground;
static long rounds;
static volatile long scale = 3;	/* bump's rip-relative operand */
static long results[THREADS];

/* Entry `push %rbp` (one byte): emulated, or boosted, or a pad. */
__attribute__((noinline, optimize("O2"))) long leaf(long a, long b)
{
	return a * 31 + (b ^ 0x5a5a);
}

/* Entry `mov scale(%rip),%rax`: rip-relative, stepped with a scratch
 * register or relocated. */
__attribute__((noinline, optimize("O2"))) long bump(long x)
{
	return x * scale + (x >> 1);
}

__attribute__((noinline)) long work(long k, long i)
{
	long v = leaf(k, i);

	return v + bump(v) + (k % 7);
}

static void *thread_main(void *arg)
{
	long i = (long)arg, acc = 0;

	for (long k = 0; k < rounds; k++)
		acc = acc * 3 + work(k, i);
	results[i] = acc;
	return NULL;
}

static void wait_file(const char *path)
{
	struct timespec ms = { 0, 1000000 };

	while (access(path, F_OK) != 0)
		nanosleep(&ms, NULL);
}

int main(int argc, char **argv)
{
	pthread_t th[THREADS];
	unsigned long sum = 0;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: keeptarget GROUND GO N [OUT]\n");
		return 2;
	}
	if (argc == 5 && !freopen(argv[4], "w", stdout))
		return 2;
	ground = fopen(argv[1], "w");
	if (!ground)
		return 2;
	setvbuf(ground, NULL, _IOLBF, 0);
	snprintf(go_start, sizeof(go_start), "%s.start", argv[2]);
	snprintf(go_exit, sizeof(go_exit), "%s.exit", argv[2]);
	rounds = atol(argv[3]);
	fprintf(ground, "pid %d\n", (int)getpid());
	wait_file(go_start);
	fprintf(ground, "running\n");
	for (long i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, thread_main, (void *)i);
	for (long i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		sum = sum * 1000003 + (unsigned long)results[i];
	}
	fprintf(ground, "calls done\n");
	wait_file(go_exit);
	printf("result %lx\n", sum);
	fprintf(ground, "result %lx\n", sum);
	return 7;
}
