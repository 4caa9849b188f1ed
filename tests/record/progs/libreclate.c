/* libreclate.c - the library recdlopen.c loads late, with dlopen. */
#include <stdint.h>

/* Not inlined, not folded: a probe at its entry sees both arguments. */
__attribute__((noinline)) int64_t late_mix(int64_t a, int64_t b)
{
	return a * 31 + (b ^ 0x5a);
}
