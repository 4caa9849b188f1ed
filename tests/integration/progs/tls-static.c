/* tls-static.c - a statically linked threaded program with a thread-local
 * variable: each thread sets its own copy and reports it, then stops in
 * seen(), so gdb's "print tlsvar" there must show that thread's value. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/syscall.h>
#include "ground.h"

static __thread int tlsvar;

/* The breakpointed function. */
void seen(void);
void seen(void)
{
	__asm__ volatile("" ::: "memory");	/* MARK:seen-body */
}

static void *worker(void *arg)
{
	tlsvar = (int)(long)arg;
	ground("worker tlsvar=%d", tlsvar);
	seen();
	return NULL;
}

int main(void)
{
	pthread_t t;

	tlsvar = 1;
	ground("main tlsvar=%d", tlsvar);
	pthread_create(&t, NULL, worker, (void *)2L);
	pthread_join(t, NULL);
	seen();
	return 0;
}
