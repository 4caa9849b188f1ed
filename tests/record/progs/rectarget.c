/*
 * rectarget.c - a program for probe-trace's recording tests.  It prints
 * its own ground truth to OUT, one line per call of a probed function:
 *
 *   rectarget MODE OUT [N]
 *
 *   calls    compute(i, 2i+1) and checksum("word-i", 6) for i < N
 *   threads  8 threads, each N calls of compute(t*100000+i, t)
 *   crash    N calls of compute, then a NULL store (SIGSEGV)
 *   loop     compute(i, 7) until the file OUT.stop exists, then exits 0
 *            (attach and Ctrl-C tests); OUT gets the lines as they happen
 *   fact     fact(10): recursion
 *   jump     jumper(i) for i < N: returns 2i, or longjmps out when i % 3 == 0
 *   named    4 threads named "worker-T" (pthread_setname_np), each N calls
 *            of compute(t*100000+i, t) and fact(5), alive 0.3 s after
 *            their calls (a recorder names the threads it sees alive)
 *   many     N threads at once, each named "m-I", one call of compute(I, 0),
 *            alive 2 s after the last one started (hundreds of threads
 *            new to a recorder in one batch of frames)
 *   spin     spin(d) for i < N, d = 1000 + (i % 5) * 1000 ns: a busy wait
 *            of d ns that measures itself (INNER: from its first clock
 *            reading to its last) inside its caller's measure (OUTER:
 *            around the call), both CLOCK_MONOTONIC: a return probe's
 *            latency lies between the two
 *
 * Lines: "compute A B RESULT TID", "checksum TEXT RESULT", "fact N RESULT",
 * "jumper I RESULT" / "jumped I", "name TID NAME" (named),
 * "spin D INNER OUTER" (ns), and "done CALLS" at the end.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static FILE *out;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static long n_calls;

__attribute__((noinline)) long compute(long a, long b)
{
	return a * 3 + b;
}

__attribute__((noinline)) long checksum(const char *s, long n)
{
	long sum = 0;

	for (long i = 0; i < n; i++)
		sum = sum * 31 + (unsigned char)s[i];
	return sum;
}

__attribute__((noinline)) long fact(long n)
{
	long r = n <= 1 ? 1 : n * fact(n - 1);

	fprintf(out, "fact %ld %ld\n", n, r);
	return r;
}

static long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* Busy for `d` ns; returns how long it measured itself. */
__attribute__((noinline)) long spin(long d)
{
	long t0 = now_ns(), t;

	while ((t = now_ns()) - t0 < d)
		;
	return t - t0;
}

static jmp_buf jump_back;

__attribute__((noinline)) long jumper(long i)
{
	if (i % 3 == 0)
		longjmp(jump_back, 1);
	return 2 * i;
}

static void call_compute(long a, long b)
{
	long r = compute(a, b);

	pthread_mutex_lock(&out_lock);
	fprintf(out, "compute %ld %ld %ld %ld\n", a, b, r, (long)syscall(SYS_gettid));
	n_calls++;
	pthread_mutex_unlock(&out_lock);
}

static long per_thread;

static void *named_worker(void *arg)
{
	long t = (long)arg;
	char name[16];

	snprintf(name, sizeof(name), "worker-%ld", t);
	pthread_setname_np(pthread_self(), name);
	pthread_mutex_lock(&out_lock);
	fprintf(out, "name %ld %s\n", (long)syscall(SYS_gettid), name);
	pthread_mutex_unlock(&out_lock);
	for (long i = 0; i < per_thread; i++) {
		call_compute(t * 100000 + i, t);
		long r = fact(5);
		(void)r;
	}
	usleep(300000);
	return NULL;
}

static pthread_barrier_t many_started;

static void *many_worker(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "m-%ld", (long)arg);
	pthread_setname_np(pthread_self(), name);
	pthread_mutex_lock(&out_lock);
	fprintf(out, "name %ld %s\n", (long)syscall(SYS_gettid), name);
	pthread_mutex_unlock(&out_lock);
	call_compute((long)arg, 0);
	pthread_barrier_wait(&many_started);
	sleep(2);
	return NULL;
}

static void *worker(void *arg)
{
	long t = (long)arg;

	for (long i = 0; i < per_thread; i++)
		call_compute(t * 100000 + i, t);
	return NULL;
}

int main(int argc, char **argv)
{
	long n;

	if (argc < 3) {
		fprintf(stderr, "usage: rectarget calls|threads|named|many|crash|loop|jump|fact|env|spin OUT [N]\n");
		return 2;
	}
	n = argc > 3 ? atol(argv[3]) : 10;
	out = fopen(argv[2], "w");
	if (!out) {
		perror(argv[2]);
		return 2;
	}
	if (strcmp(argv[1], "calls") == 0) {
		for (long i = 0; i < n; i++) {
			char word[32];
			call_compute(i, 2 * i + 1);
			snprintf(word, sizeof(word), "word-%ld", i % 10);
			fprintf(out, "checksum %s %ld\n", word, checksum(word, 6));
		}
	} else if (strcmp(argv[1], "threads") == 0) {
		pthread_t th[8];
		per_thread = n;
		for (long t = 0; t < 8; t++)
			pthread_create(&th[t], NULL, worker, (void *)t);
		for (int t = 0; t < 8; t++)
			pthread_join(th[t], NULL);
	} else if (strcmp(argv[1], "named") == 0) {
		pthread_t th[4];
		char self[16];
		per_thread = n;
		pthread_getname_np(pthread_self(), self, sizeof(self));
		fprintf(out, "name %ld %s\n", (long)syscall(SYS_gettid), self);
		for (long t = 0; t < 4; t++)
			pthread_create(&th[t], NULL, named_worker, (void *)t);
		for (int t = 0; t < 4; t++)
			pthread_join(th[t], NULL);
	} else if (strcmp(argv[1], "many") == 0) {
		pthread_t *th = calloc((size_t)n, sizeof(*th));
		pthread_attr_t attr;
		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, 64 << 10);
		pthread_barrier_init(&many_started, NULL, (unsigned)n + 1);
		for (long t = 0; t < n; t++)
			if (pthread_create(&th[t], &attr, many_worker, (void *)t) != 0) {
				fprintf(stderr, "rectarget: thread %ld not created\n", t);
				return 2;
			}
		pthread_barrier_wait(&many_started);
		for (long t = 0; t < n; t++)
			pthread_join(th[t], NULL);
		free(th);
	} else if (strcmp(argv[1], "crash") == 0) {
		for (long i = 0; i < n; i++)
			call_compute(i, 1);
		fflush(out);
		*(volatile int *)(uintptr_t)(n - n) = 1;
	} else if (strcmp(argv[1], "loop") == 0) {
		char stop[4096];
		snprintf(stop, sizeof(stop), "%s.stop", argv[2]);
		setvbuf(out, NULL, _IOLBF, 0);
		for (long i = 0; access(stop, F_OK) != 0; i++) {
			call_compute(i, 7);
			usleep(1000);
		}
	} else if (strcmp(argv[1], "jump") == 0) {
		for (volatile long i = 0; i < n; i++) {
			if (setjmp(jump_back)) {
				fprintf(out, "jumped %ld\n", (long)i);
				continue;
			}
			fprintf(out, "jumper %ld %ld\n", (long)i, jumper(i));
		}
	} else if (strcmp(argv[1], "env") == 0) {
		/* What the program was started with: an earlier client's
		 * settings must not leak into it. */
		char cwd[4096];
		const char *v = getenv("RECTEST_LEAK");
		call_compute(1, 1);
		fprintf(out, "env %s\ncwd %s\n", v ? v : "(unset)",
			getcwd(cwd, sizeof(cwd)) ? cwd : "?");
	} else if (strcmp(argv[1], "spin") == 0) {
		for (long i = 0; i < n; i++) {
			long d = 1000 + (i % 5) * 1000;
			long t0 = now_ns();
			long inner = spin(d);
			long outer = now_ns() - t0;
			fprintf(out, "spin %ld %ld %ld\n", d, inner, outer);
		}
	} else if (strcmp(argv[1], "fact") == 0) {
		fact(10);
	} else {
		fprintf(stderr, "rectarget: unknown mode %s\n", argv[1]);
		return 2;
	}
	fprintf(out, "done %ld\n", n_calls);
	fclose(out);
	return 0;
}
