/* tpshlib N: calls lib_scale(i, 7) from libtplib.so N times (default 8);
 *   ground: lib call=I x=I k=7 r=R lib_calls=C      (lib_calls before the call)
 */
#include "tpground.h"

int lib_scale(int x, int k);
extern int lib_calls;

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 8;
	long total = 0;

	ground("start n=%d lib_scale=%p", n, (void *)lib_scale);
	for (int i = 0; i < n; i++) {
		ground("lib call=%d x=%d k=7 r=%d lib_calls=%d", i, i, i * 7, lib_calls);
		total += lib_scale(i, 7);
	}
	ground("done calls=%d total=%ld", lib_calls, total); /* MARK:shlib-done */
	return 0;
}
