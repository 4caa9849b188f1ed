/*
 * recstress.c - many calls of one probed function from several threads,
 * for probe-trace's stress and loss tests.  It writes its own ground
 * truth to the file OUT, the same with or without a tracer:
 *
 *   recstress calls THREADS N OUT    every thread calls hit(t, i) for i < N
 *   recstress malloc THREADS N OUT   every thread calls malloc(size) and free
 *                                N times, sizes from STRESS_MIN_SIZE to
 *                                STRESS_MIN_SIZE + 63 (so a test can tell
 *                                the program's calls from libc's own)
 *
 * OUT gets one "thread T calls N sum S" line per thread (S: a checksum of
 * what hit() returned, or of the sizes asked), then "total CALLS sum S".
 * No thread id, no address, no time: the lines of a traced run must equal
 * those of an untraced one byte for byte.
 *
 * With STRESS_GATE=PREFIX in the environment the test paces the program
 * through files: it writes its pid to PREFIX.pid, starts its threads,
 * writes PREFIX.ready once every one of them runs, and they call only
 * once PREFIX.go exists; after the calls it writes PREFIX.done, and it
 * writes OUT and exits only once PREFIX.exit exists.
 *
 * With STRESS_CPU=FILE in the environment it writes its own CPU time,
 * all threads, user + system, to FILE as "cpu_ns=C" (bench/rec-bench.sh
 * tells the program's share of a recording from the recorder's).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64
#define STRESS_MIN_SIZE 40000	/* under the mmap threshold: arena malloc */

struct worker {
	pthread_t th;
	long t, calls;
	uint64_t sum;
};

static long per_thread;
static int malloc_mode;
static const char *gate;	/* STRESS_GATE */
static long running;		/* threads past their start (atomic) */

/* PREFIX.what exists (the test made it), or is made here. */
static void gate_wait(const char *what)
{
	char path[4096];
	struct timespec ms = { 0, 1000000 };

	snprintf(path, sizeof(path), "%s.%s", gate, what);
	while (access(path, F_OK) != 0)
		nanosleep(&ms, NULL);
}

static void gate_say(const char *what, long value)
{
	char path[4096], tmp[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s.%s", gate, what);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (!(f = fopen(tmp, "w")) || fprintf(f, "%ld\n", value) < 0 ||
	    fclose(f) != 0 || rename(tmp, path) != 0) {
		perror(path);
		exit(1);
	}
}

/* The probed function: two arguments, a result the caller sums. */
__attribute__((noinline)) long hit(long t, long i)
{
	return t * 1000003 + i * 7;
}

static void *worker(void *arg)
{
	struct worker *w = arg;

	if (gate) {
		__atomic_add_fetch(&running, 1, __ATOMIC_SEQ_CST);
		gate_wait("go");
	}
	for (long i = 0; i < per_thread; i++) {
		if (malloc_mode) {
			size_t size = STRESS_MIN_SIZE + (size_t)((w->t * 31 + i) & 63);
			/* volatile: the compiler may not drop the pair */
			char *volatile p = malloc(size);
			if (!p)
				abort();
			p[0] = (char)i;
			free(p);
			w->sum = w->sum * 31 + size;
		} else {
			w->sum = w->sum * 31 + (uint64_t)hit(w->t, i);
		}
		w->calls++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static struct worker w[MAX_THREADS];
	long threads, calls = 0;
	uint64_t sum = 0;
	FILE *out;

	if (argc != 5 || (strcmp(argv[1], "calls") && strcmp(argv[1], "malloc"))) {
		fprintf(stderr, "usage: recstress calls|malloc THREADS N OUT\n");
		return 2;
	}
	malloc_mode = strcmp(argv[1], "malloc") == 0;
	threads = atol(argv[2]);
	per_thread = atol(argv[3]);
	if (threads < 1 || threads > MAX_THREADS || per_thread < 0) {
		fprintf(stderr, "recstress: 1 to %d threads\n", MAX_THREADS);
		return 2;
	}
	gate = getenv("STRESS_GATE");
	if (gate)
		gate_say("pid", (long)getpid());
	for (long t = 0; t < threads; t++) {
		w[t].t = t;
		if (pthread_create(&w[t].th, NULL, worker, &w[t]) != 0) {
			perror("pthread_create");
			return 1;
		}
	}
	if (gate) {
		struct timespec ms = { 0, 1000000 };
		while (__atomic_load_n(&running, __ATOMIC_SEQ_CST) < threads)
			nanosleep(&ms, NULL);
		gate_say("ready", threads);
	}
	for (long t = 0; t < threads; t++)
		pthread_join(w[t].th, NULL);
	if (gate) {
		gate_say("done", threads * per_thread);
		gate_wait("exit");
	}
	out = fopen(argv[4], "w");
	if (!out) {
		perror(argv[4]);
		return 2;
	}
	for (long t = 0; t < threads; t++) {
		fprintf(out, "thread %ld calls %ld sum %llu\n", t, w[t].calls,
		       (unsigned long long)w[t].sum);
		calls += w[t].calls;
		sum = sum * 1000003 + w[t].sum;
	}
	fprintf(out, "total %ld sum %llu\n", calls, (unsigned long long)sum);
	if (getenv("STRESS_CPU")) {
		struct rusage ru;
		FILE *f = fopen(getenv("STRESS_CPU"), "w");
		if (!f || getrusage(RUSAGE_SELF, &ru) < 0) {
			perror(getenv("STRESS_CPU"));
			return 2;
		}
		fprintf(f, "cpu_ns=%lld\n",
			(long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
			(long long)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000);
		fclose(f);
	}
	return fclose(out) == 0 ? 0 : 1;
}
