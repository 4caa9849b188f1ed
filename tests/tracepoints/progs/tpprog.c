/* tpprog N: the main tracepoint target.
 *
 * main calls compute(a, b) N times (default 10) with a = i, b = 100 + 3 * i.
 * compute updates globals of every shape a test may collect (a scalar, an
 * array, a struct with an array member, a char pointer to a string that
 * changes per call, a heap array reached through a pointer), then reports
 * them all, as they are at the compute-body mark, before it runs:
 *
 *   ground: call=I a=A b=B prod=P sum=S counter=C garray=g0,...,g7
 *           rec.id=.. rec.total=.. rec.pair=p0,p1 gstring=call-I heap=h0,...,h5
 *
 * compute's first line (where `trace compute` lands) has seen none of
 * this call's updates: "ground: entry call=I a=A b=B counter=C" is printed
 * by main just before each call.  On x86-64 "ground: bases fs=F gs=G"
 * gives the thread's fs and gs bases.  Built twice: PIE (tpprog) and
 * not (tpprog-nopie).
 */
#include <string.h>
#ifdef __x86_64__
#include <asm/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif
#include "tpground.h"

#define HEAP_N 6

int counter;
int garray[8];
struct record {
	int id;
	long total;
	short pair[2];
	char tag[8];
} grec = { 0, 0, { 0, 0 }, "rec" };
char gbuf[16];
char *gstring = gbuf;
int *heap;

__attribute__((noinline)) int compute(int a, int b)
{
	int prod = a * b;
	long sum = (long)a + b;

	counter++;
	garray[a % 8] += a + 1;
	grec.id = a;
	grec.total += sum;
	grec.pair[0] = (short)a;
	grec.pair[1] = (short)b;
	heap[a % HEAP_N] = prod;
	snprintf(gbuf, sizeof gbuf, "call-%d", a);
	ground("call=%d a=%d b=%d prod=%d sum=%ld counter=%d " /* MARK:compute-body */
	       "garray=%d,%d,%d,%d,%d,%d,%d,%d rec.id=%d rec.total=%ld rec.pair=%d,%d "
	       "gstring=%s heap=%d,%d,%d,%d,%d,%d",
	       a, a, b, prod, sum, counter,
	       garray[0], garray[1], garray[2], garray[3], garray[4], garray[5],
	       garray[6], garray[7], grec.id, grec.total, grec.pair[0], grec.pair[1],
	       gstring, heap[0], heap[1], heap[2], heap[3], heap[4], heap[5]);
	return (int)sum + prod;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	long total = 0;

	heap = calloc(HEAP_N, sizeof *heap);
	if (!heap)
		return 1;
	ground("start n=%d &counter=%p compute=%p", n, (void *)&counter, (void *)compute);
#ifdef __x86_64__
	unsigned long fs = 0, gs = 0;
	syscall(SYS_arch_prctl, ARCH_GET_FS, &fs);
	syscall(SYS_arch_prctl, ARCH_GET_GS, &gs);
	ground("bases fs=0x%lx gs=0x%lx", fs, gs);
#endif
	for (int i = 0; i < n; i++) {
		ground("entry call=%d a=%d b=%d counter=%d", i, i, 100 + 3 * i, counter);
		total += compute(i, 100 + 3 * i); /* MARK:loop-call */
	}
	ground("done calls=%d counter=%d total=%ld", n, counter, total); /* MARK:done */
	free(heap);
	return 0;
}
