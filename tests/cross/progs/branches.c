/* branches.c - one function, walk(), that reaches every branch form of
 * the 32-bit ARM instruction sets, for gdb's stepi, next and finish in
 * the armhf guest (tests/cross/armhf-cases.sh).  Built -O2 -mthumb and
 * -O2 -marm; the functions named in_arm and in_thumb keep their own
 * instruction set in both builds, so each build also switches sets.
 *
 *   bl / blx (immediate, interworking)   leaf, in_arm, in_thumb
 *   blx rN (through a pointer)           fp
 *   bx lr                                leaf's return
 *   pop {..., pc} / ldm                  nonleaf's return
 *   tbb / tbh (Thumb), ldr pc (ARM)      sw's switch table
 *   cbz / cbnz (Thumb)                   cz
 *   b<cond>, IT blocks, conditional ARM  cond, the loop
 *
 * Usage: branches      prints each call's value and walk's total as
 * ground lines (ground.h).  Tests find functions by name, never by line. */
#include "ground.h"

#define NOINLINE __attribute__((noinline, noclone))

NOINLINE int leaf(int x)
{
	return x + 1;
}

NOINLINE int nonleaf(int x)
{
	return leaf(x) * 2 + leaf(x + 1);
}

NOINLINE __attribute__((target("arm"))) int in_arm(int x)
{
	return (x ^ 5) + leaf(x);
}

NOINLINE __attribute__((target("thumb"))) int in_thumb(int x)
{
	return (x - 3) * leaf(x);
}

NOINLINE int cond(int x)
{
	return x > 3 ? x * 7 : x - 1;
}

int (*volatile fp)(int) = leaf;

NOINLINE int sw(int x)
{
	switch (x) {
	case 0: return x * 3 + 11;
	case 1: return leaf(x) + 20;
	case 2: return x - 37;
	case 3: return (x << 4) + 41;
	case 4: return fp(x) * 3;
	case 5: return x ^ 0x67;
	case 6: return cond(x) + 71;
	default: return -1;
	}
}

NOINLINE int cz(volatile int *p)
{
	if (p == 0)
		return -1;
	return *p;
}

NOINLINE int walk(int x)
{
	volatile int v = x;
	int r = 0, i;

	r += leaf(x);
	r += nonleaf(x);
	r += in_arm(x);
	r += in_thumb(x);
	r += fp(x);
	for (i = 0; i < 8; i++)
		r += sw(i);
	r += cz(&v) + cz(0);
	r += cond(x) + cond(1);
	return r;
}

int main(void)
{
	volatile int v = 5;
	int w;

	/* The first call walk() makes of each function, made here first:
	 * the values `finish` must return. */
	ground("finish leaf=%d nonleaf=%d in_arm=%d in_thumb=%d fp=%d sw=%d cz=%d cond=%d",
	       leaf(5), nonleaf(5), in_arm(5), in_thumb(5), fp(5), sw(0), cz(&v), cond(5));
	w = walk(5);
	ground("walk=%d", w);
	return 0;
}
