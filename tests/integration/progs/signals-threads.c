/* signals-threads.c - NTHREADS threads meet at a barrier, then each sends
 * itself SIGUSR1 at once; the handler counts the deliveries.  gdb stops
 * at each signal and passes it on: every one must reach its thread, so
 * the program reports handled=NTHREADS. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include "ground.h"

#define NTHREADS 4

static pthread_barrier_t barrier;
static volatile int handled;

static void handler(int sig)
{
	__atomic_add_fetch(&handled, 1, __ATOMIC_SEQ_CST);
}

static void *worker(void *arg)
{
	pthread_barrier_wait(&barrier);
	syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGUSR1);
	return arg;
}

int main(void)
{
	pthread_t th[NTHREADS];
	int i;

	signal(SIGUSR1, handler);
	pthread_barrier_init(&barrier, NULL, NTHREADS);
	for (i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	ground("handled=%d", handled);
	return 0;
}
