/*
 * rectids.c - calls of one probed function from threads of every kind a
 * pad must tell apart, each call naming its own thread, for
 * record-tids.test:
 *
 *   rectids N OUT
 *
 * tid_hit(kind, tid) is called N times per kind, `tid` being what the
 * kernel says the calling thread is (gettid), so every frame of it must
 * show that thread:
 *
 *   0  the main thread
 *   1  a thread started before the probes were placed (with
 *      RECTIDS_GATE=PREFIX it waits for PREFIX.go, so a recorder can
 *      attach to the running program first; PREFIX.pid and PREFIX.ready
 *      say when to)
 *   2  two threads one after the other, the second started after the
 *      first was joined (glibc gives it the first's stack and TCB: the
 *      same thread pointer)
 *   3  a thread cloned without CLONE_SETTLS, running on the main
 *      thread's TLS (the same thread pointer): it calls once
 *   4  the main thread has called while it ran
 *   5  the child of a fork
 *   6  the child of a vfork, on its parent's memory and TLS
 *
 * OUT gets "wall_us_before U", one "kind K tid T" line per thread that
 * called, and "wall_us_after U" (CLOCK_REALTIME, microseconds, around
 * all the calls).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long n_calls;
static const char *gate;
static FILE *out;
static volatile long sink;

__attribute__((noinline)) long tid_hit(long kind, long tid)
{
	sink += kind + tid;
	return sink;
}

static long my_tid(void)
{
	return syscall(SYS_gettid);
}

static void calls(long kind)
{
	long tid = my_tid();

	for (long i = 0; i < n_calls; i++)
		tid_hit(kind, tid);
}

static void say(long kind, long tid)
{
	fprintf(out, "kind %ld tid %ld\n", kind, tid);
	fflush(out);
}

static long long wall_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static void gate_file(const char *what, long value)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s.%s", gate, what);
	if (!(f = fopen(path, "w")))
		exit(3);
	fprintf(f, "%ld\n", value);
	fclose(f);
}

static volatile int early_started, early_go;

static void *early(void *arg)
{
	(void)arg;
	__atomic_store_n(&early_started, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&early_go, __ATOMIC_ACQUIRE))
		usleep(1000);
	calls(1);
	say(1, my_tid());
	return NULL;
}

static void *again(void *arg)
{
	(void)arg;
	calls(2);
	say(2, my_tid());
	return NULL;
}

/* The clone without CLONE_SETTLS: no libc call that needs its own TLS. */
static volatile long shared_tid, shared_started, main_done, shared_done;

static int shared_tls(void *arg)
{
	(void)arg;
	long tid = my_tid();

	/* The main thread calls while this one runs, then this one. */
	__atomic_store_n(&shared_started, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&main_done, __ATOMIC_ACQUIRE))
		sched_yield();
	for (long i = 0; i < n_calls; i++)
		tid_hit(3, tid);
	shared_tid = tid;
	__atomic_store_n(&shared_done, 1, __ATOMIC_RELEASE);
	syscall(SYS_exit, 0);
	return 0;
}

int main(int argc, char **argv)
{
	pthread_t th;

	if (argc != 3 || (n_calls = atol(argv[1])) <= 0) {
		fprintf(stderr, "usage: rectids N OUT\n");
		return 2;
	}
	if (!(out = fopen(argv[2], "w"))) {
		perror(argv[2]);
		return 1;
	}
	gate = getenv("RECTIDS_GATE");
	if (pthread_create(&th, NULL, early, NULL))
		return 1;
	while (!__atomic_load_n(&early_started, __ATOMIC_ACQUIRE))
		usleep(1000);
	if (gate) {
		char path[4096];
		gate_file("pid", getpid());
		gate_file("ready", 1);
		snprintf(path, sizeof(path), "%s.go", gate);
		while (access(path, F_OK) != 0)
			usleep(1000);
	}
	fprintf(out, "wall_us_before %lld\n", wall_us());

	calls(0);
	say(0, my_tid());
	__atomic_store_n(&early_go, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);

	for (int k = 0; k < 2; k++) {
		if (pthread_create(&th, NULL, again, NULL))
			return 1;
		pthread_join(th, NULL);
	}

	size_t stack_size = 1 << 20;
	char *stack = malloc(stack_size);
	if (!stack)
		return 1;
	if (clone(shared_tls, stack + stack_size,
		  CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
		  CLONE_SYSVSEM, NULL) < 0) {
		perror("clone");
		return 1;
	}
	while (!__atomic_load_n(&shared_started, __ATOMIC_ACQUIRE))
		sched_yield();
	calls(4);
	__atomic_store_n(&main_done, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&shared_done, __ATOMIC_ACQUIRE))
		sched_yield();
	say(3, shared_tid);
	say(4, my_tid());
	usleep(10000);		/* the clone's exit is over */

	pid_t c = fork();
	if (c < 0)
		return 1;
	if (c == 0) {
		calls(5);
		_exit(0);
	}
	waitpid(c, NULL, 0);
	say(5, c);

	c = vfork();
	if (c < 0)
		return 1;
	if (c == 0) {
		calls(6);
		_exit(0);
	}
	waitpid(c, NULL, 0);
	say(6, c);

	fprintf(out, "wall_us_after %lld\n", wall_us());
	fclose(out);
	return 0;
}
