/* tpret.c - target of the return-probe tests: functions whose returns are
 * traced, and the values they return, printed as ground truth.
 *
 *   tpret values     compute() returns, recursion, longjmp, latency, fork
 *   tpret threads N  8 threads call tcall() N times each
 *   tpret block      a thread blocks inside blocked() while gdb detaches
 *   tpret exits      threads call pthread_exit() inside exiter()
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tpground.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* --- values --------------------------------------------------------- */

int compute(int x)
{
	int v = x * x - 7 * x + 3;	/* MARK:compute-body */

	if (x % 4 == 0)
		v = -v;
	return v;
}

int rec(int n)
{
	if (n <= 1)
		return 5;
	return rec(n - 1) * 3 + n;
}

static jmp_buf jb;

static void bail(int k)
{
	longjmp(jb, k);
}

/* Odd k: longjmp out, the function never returns. */
int maybe_jump(int k)
{
	int v = k * 13 + 1;

	if (k % 2)
		bail(k);
	return v;
}

int slow(int ms)
{
	struct timespec ts = { 0, ms * 1000000L };

	nanosleep(&ts, NULL);
	return ms + 1000;
}

/* Returns in both processes: the child through a copied stack. */
int forker(int k)
{
	pid_t pid = fork();

	if (pid == 0)
		return k * 5;
	if (pid < 0)
		return -1;
	return k * 7;
}

/* A tail call into compute(): [sp] at compute's entry is already the
 * trampoline when tail_call() is a return probe too. */
#if defined(__x86_64__)
#define TAIL_JUMP "jmp"
#else
#define TAIL_JUMP "b"	/* aarch64, arm */
#endif
__asm__(".text\n"
	".globl tail_call\n"
	".type tail_call, %function\n"
	"tail_call:\n"
	"\t" TAIL_JUMP " compute\n"
	".size tail_call, .-tail_call\n");
int tail_call(int x);

/* A signal handler on an alternate stack calls compute() while
 * with_signal(), a return probe, is inside raise(). */
static int handler_value;

static void on_usr1(int sig)
{
	handler_value = compute(sig + 100);
}

int with_signal(int k)
{
	raise(SIGUSR1);
	return k + handler_value;
}

static void values(void)
{
	ground("pid=%d", getpid());
	for (int x = 0; x < 12; x++) {
		int v = compute(x);
		ground("compute x=%d value=%d", x, v);
	}
	/* rec(10) returns level 1 first, level 10 last. */
	int r = rec(10);
	int lv = 5;
	ground("rec level=1 value=%d", lv);
	for (int n = 2; n <= 10; n++) {
		lv = lv * 3 + n;
		ground("rec level=%d value=%d", n, lv);
	}
	if (r != lv)
		ground("rec mismatch %d %d", r, lv);
	for (int k = 0; k < 6; k++) {
		volatile int v = -1;
		int j = setjmp(jb);
		if (j == 0) {
			v = maybe_jump(k);
			ground("jump k=%d value=%d", k, v);
		} else {
			ground("jump k=%d longjmp=%d", k, j);
		}
	}
	for (int x = 20; x < 23; x++)
		ground("after x=%d value=%d", x, compute(x));
	for (int ms = 2; ms <= 6; ms += 2) {
		uint64_t t0 = now_ns();
		int v = slow(ms);
		uint64_t t1 = now_ns();
		ground("slow ms=%d value=%d ns=%llu", ms, v, (unsigned long long)(t1 - t0));
	}
	ground("tail value=%d", tail_call(13));
	static char altstack[65536];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_ONSTACK };
	sigaltstack(&ss, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	int ws = with_signal(4);
	ground("handler value=%d", handler_value);
	ground("with_signal value=%d", ws);
	int f = forker(3);
	if (f == 15) {
		ground("forkchild value=%d", f);
		_exit(0);
	}
	int status = 0;
	wait(&status);
	ground("forkparent value=%d child=%d", f, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	ground("compute x=%d value=%d", 30, compute(30));	/* MARK:values-done */
}

/* --- threads ------------------------------------------------------------ */

static int per_thread;

int tcall(int idx, int i)
{
	return idx * 1000 + i * 3;
}

static void *worker(void *arg)
{
	int idx = (int)(intptr_t)arg;
	long sum = 0;

	for (int i = 0; i < per_thread; i++)
		sum += tcall(idx, i);
	ground("thread idx=%d tid=%d calls=%d sum=%ld", idx, gettid(), per_thread, sum);
	return NULL;
}

static void threads(int n)
{
	pthread_t th[8];

	per_thread = n;
	/* Opens the ground file before the threads race to. */
	ground("threads n=%d", n);
	for (int i = 0; i < 8; i++)
		pthread_create(&th[i], NULL, worker, (void *)(intptr_t)(i + 1));
	for (int i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	ground("threads done");	/* MARK:threads-done */
}

/* --- detach while a thread is inside a return probe's function -------- */

static int pipefd[2];
static volatile int inside;

int blocked(int k)
{
	char c = 0;

	inside = 1;
	if (read(pipefd[0], &c, 1) != 1)
		return -1;
	return k * 100 + c;
}

static void *blocker(void *arg)
{
	int v = blocked((int)(intptr_t)arg);

	ground("blocked value=%d", v);
	return NULL;
}

/* gdb stops here, with the blocker inside blocked(). */
void ready(void)
{
	ground("ready");
}

static void block(void)
{
	pthread_t th;

	if (pipe(pipefd) < 0)
		return;
	/* A return before the blocked one, so the trampoline is in use. */
	ground("compute x=%d value=%d", 5, compute(5));
	pthread_create(&th, NULL, blocker, (void *)(intptr_t)7);
	while (!inside)
		usleep(1000);
	usleep(20000);	/* into read() */
	ready();
	/* Runs after the detach: the blocker wakes up and returns. */
	sleep(1);
	if (write(pipefd[1], "\x05", 1) != 1)
		ground("write failed");
	pthread_join(th, NULL);
	ground("compute x=%d value=%d", 6, compute(6));
	ground("block done");
}

/* --- pthread_exit from inside a return probe's function ------------- */

static void cleanup(void *arg)
{
	ground("cleanup k=%d", (int)(intptr_t)arg);
}

/* Never returns: the thread ends by forced unwinding through here. */
int exiter(int k)
{
	if (k >= 0)
		pthread_exit((void *)(intptr_t)(k * 2));
	return k;
}

static void *exit_thread(void *arg)
{
	int k = (int)(intptr_t)arg;

	pthread_cleanup_push(cleanup, arg);
	ground("exiter k=%d returned %d", k, exiter(k));
	pthread_cleanup_pop(0);
	return NULL;
}

static void exits(void)
{
	ground("exits start");
	for (int k = 1; k <= 3; k++) {
		pthread_t th;
		void *ret;
		pthread_create(&th, NULL, exit_thread, (void *)(intptr_t)k);
		pthread_join(th, &ret);
		ground("joined k=%d value=%d", k, (int)(intptr_t)ret);
	}
	ground("exits done");	/* MARK:exits-done */
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "threads") == 0)
		threads(argc > 2 ? atoi(argv[2]) : 100);
	else if (argc > 1 && strcmp(argv[1], "block") == 0)
		block();
	else if (argc > 1 && strcmp(argv[1], "exits") == 0)
		exits();
	else
		values();
	return 0;
}
