/* tperr N: risky(num, den, p) for i = 0..N-1 (default 8), with
 * num = 100 + i, den = 3 - i (zero at i = 3) and p pointing at
 * values[i] except every third call (i % 3 == 2), where p is NULL.
 * The program itself never divides by zero or dereferences NULL: the
 * tests' conditions and collections do, in the agent.
 *   ground: risky call=I num=.. den=.. p=null|valid value=V
 */
#include "tpground.h"

int values[64];

__attribute__((noinline)) int risky(int num, int den, int *p)
{
	int q = den ? num / den : 0; /* MARK:risky-body */

	return q + (p ? *p : 0);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 8;
	long total = 0;

	if (n > 64)
		n = 64;
	for (int i = 0; i < n; i++)
		values[i] = 1000 + 11 * i;
	for (int i = 0; i < n; i++) {
		int *p = i % 3 == 2 ? NULL : &values[i];

		ground("risky call=%d num=%d den=%d p=%s value=%d", i, 100 + i, 3 - i,
		       p ? "valid" : "null", p ? *p : 0);
		total += risky(100 + i, 3 - i, p);
	}
	ground("done calls=%d total=%ld", n, total); /* MARK:done */
	return 0;
}
