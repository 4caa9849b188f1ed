/* tpthreads TOTAL: 8 threads call work(id, seq) TOTAL times in all
 * (default 100000; thread t makes TOTAL/8 calls, plus one when
 * t < TOTAL%8).  Each thread counts its own calls; main joins them and
 * reports, in thread order:
 *
 *   ground: thread=T calls=C checksum=S
 *   ground: total=TOTAL
 *
 * The output does not depend on scheduling, so a traced run must print
 * exactly what an untraced run prints.
 */
#include <pthread.h>
#include "tpground.h"

#define NTHREADS 8

static long calls[NTHREADS];
static long checksum[NTHREADS];
volatile long work_total;

__attribute__((noinline)) long work(int id, long seq)
{
	calls[id]++;
	checksum[id] += seq;
	__atomic_add_fetch(&work_total, 1, __ATOMIC_RELAXED);
	return seq;
}

struct job {
	int id;
	long n;
};

static void *worker(void *arg)
{
	struct job *j = arg;

	for (long s = 0; s < j->n; s++)
		work(j->id, s); /* MARK:worker-call */
	return NULL;
}

int main(int argc, char **argv)
{
	long total = argc > 1 ? atol(argv[1]) : 100000;
	pthread_t tid[NTHREADS];
	struct job jobs[NTHREADS];
	long sum = 0;

	for (int t = 0; t < NTHREADS; t++) {
		jobs[t].id = t;
		jobs[t].n = total / NTHREADS + (t < total % NTHREADS);
		if (pthread_create(&tid[t], NULL, worker, &jobs[t]) != 0)
			return 1;
	}
	for (int t = 0; t < NTHREADS; t++)
		pthread_join(tid[t], NULL);
	for (int t = 0; t < NTHREADS; t++) {
		ground("thread=%d calls=%ld checksum=%ld", t, calls[t], checksum[t]);
		sum += calls[t];
	}
	ground("total=%ld work_total=%ld", sum, work_total); /* MARK:threads-done */
	return 0;
}
