/*
 * sdt-arm.c - a USDT probe in Thumb code for tests/client/insn-arm.sh:
 * its arguments in registers and in memory, as gcc writes them for armhf
 * ("-4@r0 -4@r1 -4@[r2, #8]").
 */
#include <sys/sdt.h>

int g;

int probed(int a, long b, int *p)
{
	DTRACE_PROBE3(ptarm, hit, a, b, p[2]);
	return a + (int)b + g;
}
