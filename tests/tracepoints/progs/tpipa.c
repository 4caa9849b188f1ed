/* tpipa MODE N: what a jump pad's in-process collector must read.
 *
 * tpipa ptr N: visit(i, r, name, valid) for i = 0..N-1, r a heap struct
 * rec and name a heap string, except on the calls where i % 1000 == 777,
 * where r and name point into an unmapped page (the program itself does
 * not touch them then).
 *   ground: visit call=I valid=0|1 id=.. total=.. name=..
 *
 * tpipa gate N: a second thread sets the global `gate` for each of N
 * calls of check(i), in turn with the main thread (gate = 1 when
 * i % 3 == 1, else 0), so a condition on `gate` reads what another
 * thread wrote.
 *   ground: check call=I gate=G
 *
 * tpipa cond N: for i = 0..N-1 sets the globals sc (signed char,
 * i % 7 - 3), us (unsigned short, i * 4099 % 65536) and ll (long long,
 * i - N / 2), then calls pick_a(i) .. pick_e(i), for conditions on
 * memory of each width and sign and on a register (the argument).
 *   ground: pick call=I sc=.. us=.. ll=..
 *
 * All end with ground: done mode=M calls=N sum=S, the same traced or
 * not.
 */
#include <pthread.h>
#include <string.h>
#include "tpground.h"

struct rec {
	int id;
	int total;
	char tag[8];
};

volatile int gate;
static volatile int turn;	/* 0: main's, 1: the setter's */
static long want;

__attribute__((noinline)) long visit(int i, struct rec *r, const char *name, int valid)
{
	return valid ? (long)r->total + (long)strlen(name) + i : i;
}

__attribute__((noinline)) long check(int i)
{
	return (long)gate * 1000 + i;
}

volatile signed char sc;
volatile unsigned short us;
volatile long long ll;

__attribute__((noinline)) long pick_a(long i) { return i + sc; }
__attribute__((noinline)) long pick_b(long i) { return i + us; }
__attribute__((noinline)) long pick_c(long i) { return i + ll; }
__attribute__((noinline)) long pick_d(long i) { return i * 2; }
__attribute__((noinline)) long pick_e(long i) { return i * 3; }

static void *setter(void *arg)
{
	(void)arg;
	for (long i = 0; i < want; i++) {
		while (__atomic_load_n(&turn, __ATOMIC_ACQUIRE) != 1)
			;
		gate = i % 3 == 1;
		__atomic_store_n(&turn, 0, __ATOMIC_RELEASE);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "ptr";
	int n = argc > 2 ? atoi(argv[2]) : 1000;
	long sum = 0;

	if (strcmp(mode, "ptr") == 0) {
		char *hole = (char *)16;
		for (int i = 0; i < n; i++) {
			struct rec *r = malloc(sizeof(*r));
			char *name = malloc(16);
			int valid = i % 1000 != 777;
			r->id = i;
			r->total = 7 * i + 3;
			snprintf(r->tag, sizeof(r->tag), "t%d", i % 100000);
			snprintf(name, 16, "item-%05d", i);
			ground("visit call=%d valid=%d id=%d total=%d name=%s", i, valid,
			       r->id, r->total, name);
			if (valid)
				sum += visit(i, r, name, 1);
			else
				sum += visit(i, (struct rec *)hole, hole + 8, 0);
			free(name);
			free(r);
		}
	} else if (strcmp(mode, "gate") == 0) {
		pthread_t t;
		want = n;
		if (pthread_create(&t, NULL, setter, NULL) != 0)
			return 1;
		for (int i = 0; i < n; i++) {
			__atomic_store_n(&turn, 1, __ATOMIC_RELEASE);
			while (__atomic_load_n(&turn, __ATOMIC_ACQUIRE) != 0)
				;
			ground("check call=%d gate=%d", i, gate);
			sum += check(i);
		}
		pthread_join(t, NULL);
	} else if (strcmp(mode, "cond") == 0) {
		for (int i = 0; i < n; i++) {
			sc = (signed char)(i % 7 - 3);
			us = (unsigned short)(i * 4099 % 65536);
			ll = i - n / 2;
			ground("pick call=%d sc=%d us=%d ll=%lld", i, sc, us, ll);
			sum += pick_a(i) + pick_b(i) + pick_c(i) + pick_d(i) + pick_e(i);
		}
	} else {
		return 2;
	}
	ground("done mode=%s calls=%d sum=%ld", mode, n, sum); /* MARK:done */
	return 0;
}
