/* thread-exit.c - threads that end while gdb resumes only them.  A worker
 * returns while it is the only thread gdb lets run (scheduler-locking);
 * then the leader calls pthread_exit while a second worker waits for it in
 * pthread_join, and that worker, the last thread, ends the process with
 * status 0. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/syscall.h>
#include "ground.h"

static pthread_t main_thread;
static pthread_barrier_t barrier;

static void *short_lived(void *arg)
{
	return arg;	/* MARK:short-end */
}

static void *joiner(void *arg)
{
	ground("joiner tid=%ld", (long)syscall(SYS_gettid));
	pthread_barrier_wait(&barrier);
	pthread_join(main_thread, NULL);
	ground("joiner saw the leader end");
	return arg;
}

int main(void)
{
	pthread_t t;

	ground("pid=%d", (int)getpid());
	pthread_create(&t, NULL, short_lived, NULL);
	pthread_join(t, NULL);
	main_thread = pthread_self();
	pthread_barrier_init(&barrier, NULL, 2);
	pthread_create(&t, NULL, joiner, NULL);
	pthread_barrier_wait(&barrier);
	pthread_exit(NULL);	/* MARK:leader-exit */
}
