/* retprobe.c - guest program of check-cross's return-probe cases: functions
 * whose returns the agent records, each call's value printed as ground
 * truth, in the order of the returns.  Built with -O1 so that the cases
 * cover both shapes of an aarch64 function (check-cross.sh checks them):
 *   leaf(), tcall()  leaves: the return address stays in x30, no stack
 *   saver(), rec()   `stp x29, x30, [sp, #-N]!` first: x30 saved
 *   jumper()         longjmps out of its frame for odd k
 *   tail_call()      `b leaf`: x30 is already the trampoline at leaf
 * check-cross's armhf cases build it too (-mthumb and -marm: lr instead
 * of x30, push {..., lr} instead of stp; armhf_ret_case).
 * noipa keeps every call a call.  At the end the program checks the
 * values against its own arithmetic and says "check ok".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdint.h>

#include "ground.h"

#define NOIPA __attribute__((noipa))

NOIPA int leaf(int x)
{
	return x * x - 7 * x + 3;
}

static int leaf_ref(int x)
{
	return x * x - 7 * x + 3;
}

NOIPA int saver(int x)
{
	return leaf(x + 1) * 2 + x;
}

NOIPA int base(int n)
{
	return n + 4;
}

NOIPA int rec(int n)
{
	if (n <= 1)
		return base(n);
	return rec(n - 1) * 3 + n;
}

static jmp_buf jb;

NOIPA void bail(int k)
{
	longjmp(jb, k);
}

NOIPA int jumper(int k)
{
	if (k % 2)
		bail(k);
	return k * 13 + 1;
}

__asm__(".text\n"
	".globl tail_call\n"
	".type tail_call, %function\n"
	"tail_call:\n"
	"\tb leaf\n"
	".size tail_call, .-tail_call\n");
int tail_call(int x);

NOIPA int tcall(int idx, int i)
{
	return idx * 1000 + i * 3;
}

NOIPA void done(void)
{
	__asm__ volatile("" ::: "memory");
}

static int bad;

static void expect(const char *what, int got, int want)
{
	if (got != want) {
		ground("mismatch %s got=%d want=%d", what, got, want);
		bad = 1;
	}
}

#define PER_THREAD 20

static void *worker(void *arg)
{
	int idx = (int)(intptr_t)arg;

	for (int i = 0; i < PER_THREAD; i++) {
		int v = tcall(idx, i);
		ground("tcall idx=%d i=%d value=%d", idx, i, v);
		expect("tcall", v, idx * 1000 + i * 3);
	}
	return NULL;
}

int main(void)
{
	pthread_t th[4];

	for (int x = 0; x < 6; x++) {
		int v = leaf(x);
		ground("leaf x=%d value=%d", x, v);
		expect("leaf", v, leaf_ref(x));
	}
	for (int x = 0; x < 4; x++) {
		int v = saver(x);
		ground("saver x=%d inner=%d value=%d", x, leaf_ref(x + 1), v);
		expect("saver", v, leaf_ref(x + 1) * 2 + x);
	}
	/* rec(6) returns level 1 first. */
	int r = rec(6), lv = 5;
	ground("rec level=1 value=%d", lv);
	for (int n = 2; n <= 6; n++) {
		lv = lv * 3 + n;
		ground("rec level=%d value=%d", n, lv);
	}
	expect("rec", r, lv);
	for (int k = 0; k < 6; k++) {
		volatile int v = -1;
		int j = setjmp(jb);
		if (j == 0) {
			v = jumper(k);
			ground("jump k=%d value=%d", k, v);
			expect("jumper", v, k * 13 + 1);
		} else {
			ground("jump k=%d longjmp=%d", k, j);
			expect("longjmp", j, k);
		}
	}
	/* After the longjmps: the entries they left are dropped. */
	for (int x = 10; x < 12; x++) {
		int v = leaf(x);
		ground("leaf x=%d value=%d", x, v);
		expect("leaf", v, leaf_ref(x));
	}
	int t = tail_call(13);
	ground("tail value=%d", t);
	expect("tail", t, leaf_ref(13));
	ground("threads");	/* opens the file before the threads race */
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, worker, (void *)(intptr_t)(i + 1));
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	done();
	ground(bad ? "check failed" : "check ok");
	return 0;
}
