/*
 * sdt-prog.c - a target with USDT probes for tests/client/list-sdt.sh
 * and tests/client/sdt-eval.c.
 *
 * The probes cover the argument kinds compilers write: registers of each
 * width, memory (stack and globals, rip-relative at -O2), constants, no
 * argument at all, and (in sdt-sem.c) a probe guarded by a semaphore.
 * The sizes and signs of the arguments are fixed by their C types, so
 * the test can check the SIZE@ prefixes whatever registers the compiler
 * picks.
 *
 * Run, it prints its own ground truth: one line per probe it passes,
 * "target: sdt:PROVIDER:NAME" and the arguments' values as the probe
 * sees them (signed ones as signed 64-bit numbers).  The values derive
 * from argc so that the compiler cannot fold them into constants.
 */
#include <stdio.h>
#include <sys/sdt.h>

int sdtprog_global = 42;
long sdtprog_long = -7;

int sdtprog_with_sem(int n);

__attribute__((noinline)) long sdtprog_args(char c, short s, int i, long l,
					    unsigned char uc, unsigned long ul)
{
	DTRACE_PROBE6(sdtprog, args, c, s, i, l, uc, ul);
	printf("target: sdt:sdtprog:args %lld %lld %lld %lld %llu %llu\n",
	       (long long)c, (long long)s, (long long)i, (long long)l,
	       (unsigned long long)uc, (unsigned long long)ul);
	return c + s + i + l + uc + (long)ul;
}

int main(int argc, char **argv)
{
	(void)argv;
	setvbuf(stdout, NULL, _IOLBF, 0);
	STAP_PROBE(sdtprog, start);
	printf("target: sdt:sdtprog:start\n");
	STAP_PROBE2(sdtprog, globals, sdtprog_global, sdtprog_long);
	printf("target: sdt:sdtprog:globals %d %ld\n", sdtprog_global,
	       sdtprog_long);
	STAP_PROBE2(sdtprog, konst, 17, -1L);
	printf("target: sdt:sdtprog:konst 17 -1\n");
	if (sdtprog_with_sem(argc))
		printf("target: sdt:sdtprog:guarded %d\n", argc * 2);
	return (int)sdtprog_args((char)(argc * -100), (short)(argc * -1000),
				 argc * 123456, argc * -10000000000L,
				 (unsigned char)(argc * 200),
				 argc * 0xfedcba9876543210ul) & 0;
}
