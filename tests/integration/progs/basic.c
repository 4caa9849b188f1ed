/* basic.c - functions, locals, globals, a struct and an array, for break,
 * step, next, finish, until, advance, print, set var, backtrace, registers.
 * Built three times: default flags, -fPIE -pie and -fno-PIE -no-pie.
 *
 * Usage: basic            run to the end, exit 0
 *        basic exit N     exit with status N
 *        basic crash      store through a null pointer (SIGSEGV at MARK:crash)
 *
 * Tests find lines by the MARK:<name> comments, never by number. */
#include <string.h>
#include "ground.h"

struct point {
	int x;
	int y;
};

int counter;			/* level3() adds to it */
int set_me = 7;			/* gdb changes it at checkpoint(); printed after */
struct point origin = { 3, 4 };
int arr[5] = { 10, 20, 30, 40, 50 };
volatile int *null_ptr;

static int square(int v)
{
	int r = v * v;		/* MARK:square-body */
	return r;		/* MARK:square-ret */
}

static int add(int a, int b)
{
	int s = a + b;
	return s;
}

static int level3(int n)
{
	int x = n * 3;		/* MARK:level3-body */
	counter += x;
	return x;
}

static int level2(int n)
{
	return level3(n + 1) + 1;	/* MARK:level2-call */
}

static int level1(int n)
{
	return level2(n + 1) + 1;	/* MARK:level1-call */
}

/* Where tests stop to look at and change the program's state.  The local
 * lives in this frame so its address can be compared with $sp. */
static void checkpoint(int stage)
{
	volatile int local = stage * 100;	/* MARK:checkpoint-body */

	ground("checkpoint stage=%d &local=%p local=%d", stage, (void *)&local, local);
}

int main(int argc, char **argv)
{
	int i, total = 0, sq, l;	/* MARK:main-body */

	ground("pid=%d", (int)getpid());	/* MARK:main-pid */
	ground("&counter=%p &set_me=%p &origin=%p &arr=%p main=%p square=%p",
	       (void *)&counter, (void *)&set_me, (void *)&origin, (void *)arr,
	       (void *)main, (void *)square);
	for (i = 0; i < 5; i++)
		total = add(total, arr[i]);	/* MARK:loop */
	ground("total=%d", total);		/* MARK:after-loop */
	sq = square(7);			/* MARK:call-square */
	ground("sq=%d", sq);
	l = level1(1);			/* MARK:call-level1 */
	ground("level1=%d counter=%d", l, counter);
	checkpoint(1);
	ground("set_me=%d origin=%d,%d arr2=%d", set_me, origin.x, origin.y, arr[2]);
	if (argc > 2 && strcmp(argv[1], "exit") == 0) {
		ground("exiting with %d", atoi(argv[2]));
		return atoi(argv[2]);
	}
	if (argc > 1 && strcmp(argv[1], "crash") == 0) {
		ground("about to crash");
		*null_ptr = 1;			/* MARK:crash */
	}
	ground("done");
	return 0;
}
