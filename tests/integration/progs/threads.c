/* threads.c - NTHREADS threads; thread i calls hit() i+1 times (10 calls in
 * all).  A barrier makes every thread exist before the first hit and a
 * second one keeps each until all are done with their hits, so a stop in
 * hit() always sees main plus NTHREADS threads (a conditional breakpoint
 * may first stop a thread after the others are through).  Threads are
 * joined in order and each reports its kernel tid and its number of hits. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/syscall.h>
#include "ground.h"

#define NTHREADS 4

static pthread_barrier_t barrier, done;
static volatile int hits_total;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The breakpointed function. */
void hit(int id);
void hit(int id)
{
	pthread_mutex_lock(&lock);	/* MARK:hit-body */
	hits_total++;
	pthread_mutex_unlock(&lock);
}

static void *worker(void *arg)
{
	int id = (int)(long)arg, i;

	pthread_barrier_wait(&barrier);
	for (i = 0; i <= id; i++)
		hit(id);
	pthread_barrier_wait(&done);
	ground("thread %d tid=%ld hits=%d", id, (long)syscall(SYS_gettid), id + 1);
	return NULL;
}

int main(void)
{
	pthread_t th[NTHREADS];
	long i;

	ground("pid=%d", (int)getpid());
	pthread_barrier_init(&barrier, NULL, NTHREADS);
	pthread_barrier_init(&done, NULL, NTHREADS);
	for (i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	for (i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	ground("total_hits=%d", hits_total);
	return 0;
}
