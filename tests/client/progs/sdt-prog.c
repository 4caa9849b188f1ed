/*
 * sdt-prog.c - a target with USDT probes for tests/client/list-sdt.sh.
 *
 * The probes cover the argument kinds compilers write: registers of each
 * width, memory (stack and globals, rip-relative at -O2), constants, no
 * argument at all, and (in sdt-sem.c) a probe guarded by a semaphore.
 * The sizes and signs of the arguments are fixed by their C types, so
 * the test can check the SIZE@ prefixes whatever registers the compiler
 * picks.  The program never needs to run.
 */
#include <sys/sdt.h>

int sdtprog_global = 42;
long sdtprog_long = -7;

void sdtprog_with_sem(int n);

__attribute__((noinline)) long sdtprog_args(char c, short s, int i, long l,
					    unsigned char uc, unsigned long ul)
{
	DTRACE_PROBE6(sdtprog, args, c, s, i, l, uc, ul);
	return c + s + i + l + uc + (long)ul;
}

int main(int argc, char **argv)
{
	(void)argv;
	STAP_PROBE(sdtprog, start);
	STAP_PROBE2(sdtprog, globals, sdtprog_global, sdtprog_long);
	STAP_PROBE2(sdtprog, konst, 17, -1L);
	sdtprog_with_sem(argc);
	return (int)sdtprog_args((char)argc, (short)-argc, argc * 3, -argc,
				 (unsigned char)argc, (unsigned long)argc);
}
