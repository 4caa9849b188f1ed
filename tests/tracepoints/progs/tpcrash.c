/* tpcrash N SIG: calls crash_step(i) N times (default 5), then raises SIG
 * (a number; default 11 = SIGSEGV) mid-trace, with no handler installed.
 *   ground: step call=I
 *   ground: raising sig=SIG
 */
#include <signal.h>
#include "tpground.h"

int steps;

__attribute__((noinline)) int crash_step(int i)
{
	steps++;
	return i * 2;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 5;
	int sig = argc > 2 ? atoi(argv[2]) : SIGSEGV;
	long total = 0;

	for (int i = 0; i < n; i++) {
		ground("step call=%d", i);
		total += crash_step(i);
	}
	ground("raising sig=%d steps=%d total=%ld", sig, steps, total);
	signal(sig, SIG_DFL);
	raise(sig);
	ground("survived sig=%d", sig);
	return 0;
}
