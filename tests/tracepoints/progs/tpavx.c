/*
 * tpavx.c - the ymm registers at a probe, with their upper halves in use
 * and in their initial state (cleared by vzeroupper).
 *
 *   tpavx [N]    N calls (default 4) of avx_probe(k); even k with the
 *                upper halves in use, odd k after vzeroupper
 *
 * Before each call ymm0-ymm3 are loaded with values of that call (the
 * upper halves then zero for odd k) and the ground truth printed:
 * "ground: avx call=K upper=U y0=a,b,c,d ... y3=... mxcsr=0x.. fcw=0x..",
 * each ymm as its four 64-bit lanes, low first, signed decimal (gdb's
 * $ymmN.v4_int64).  No AVX: prints "ground: noavx" and exits 0.
 */
#include <cpuid.h>
#include <stdint.h>
#include <stdlib.h>

#include "tpground.h"

/* The probed function: a 5-byte first instruction for the pad's jump. */
__asm__(".text\n"
	".globl avx_probe\n"
	".type avx_probe, @function\n"
	"avx_probe:\n"
	"	lea 1(%rdi,%rdi,1),%rax\n"
	"	ret\n"
	".size avx_probe, . - avx_probe\n");

static int avx_usable(void)
{
	unsigned int a, b, c, d;
	uint32_t lo, hi;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE) || !(c & bit_AVX))
		return 0;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (lo & 6) == 6;
}

static void one_call(long k)
{
	static int64_t v[4][4] __attribute__((aligned(32)));
	long upper = !(k & 1);
	uint32_t mxcsr;
	uint16_t fcw;

	for (int r = 0; r < 4; r++)
		for (int q = 0; q < 4; q++)
			v[r][q] = (int64_t)(0x0101010101010101ull * (uint64_t)(r + 1) ^
					    (uint64_t)(k << 16 | r << 8 | q)) *
				  (q & 1 ? -1 : 1);
	if (!upper)
		for (int r = 0; r < 4; r++)
			v[r][2] = v[r][3] = 0;	/* what vzeroupper leaves */
	__asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
	__asm__ volatile("fnstcw %0" : "=m"(fcw));
	ground("avx call=%ld upper=%ld y0=%lld,%lld,%lld,%lld y1=%lld,%lld,%lld,%lld "
	       "y2=%lld,%lld,%lld,%lld y3=%lld,%lld,%lld,%lld mxcsr=0x%x fcw=0x%x",
	       k, upper,
	       (long long)v[0][0], (long long)v[0][1], (long long)v[0][2], (long long)v[0][3],
	       (long long)v[1][0], (long long)v[1][1], (long long)v[1][2], (long long)v[1][3],
	       (long long)v[2][0], (long long)v[2][1], (long long)v[2][2], (long long)v[2][3],
	       (long long)v[3][0], (long long)v[3][1], (long long)v[3][2], (long long)v[3][3],
	       mxcsr, fcw);
	/* Loaded, maybe cleared, and the call, with nothing in between that
	 * touches a vector register (below the red zone). */
	__asm__ volatile("vmovdqu 0(%0),%%ymm0\n\t"
			 "vmovdqu 32(%0),%%ymm1\n\t"
			 "vmovdqu 64(%0),%%ymm2\n\t"
			 "vmovdqu 96(%0),%%ymm3\n\t"
			 "test %1,%1\n\t"
			 "jnz 1f\n\t"
			 "vzeroupper\n"
			 "1:\tmov %2,%%rdi\n\t"
			 "sub $128,%%rsp\n\t"
			 "call avx_probe\n\t"
			 "add $128,%%rsp\n\t"
			 "vzeroupper"
			 :
			 : "r"(v), "r"(upper), "r"(k)
			 : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11",
			   "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
			   "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14",
			   "xmm15", "memory", "cc");
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 4;

	if (!avx_usable()) {
		ground("noavx");
		return 0;
	}
	for (long k = 0; k < n; k++)
		one_call(k);
	ground("done");	/* MARK:done */
	return 0;
}
