/*
 * sdt-sem.c - a USDT probe with a semaphore, the way `dtrace -G`
 * generated headers do it: with _SDT_HAS_SEMAPHORES, <sys/sdt.h> puts
 * the address of PROVIDER_NAME_semaphore in the probe's note, and a
 * tracer increments that counter while the probe is enabled so the
 * program can skip computing costly arguments.
 */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

unsigned short sdtprog_guarded_semaphore __attribute__((section(".probes")));

/* Passes the probe only while a tracer holds the semaphore; says so. */
int sdtprog_with_sem(int n)
{
	if (__builtin_expect(sdtprog_guarded_semaphore, 0)) {
		STAP_PROBE1(sdtprog, guarded, n * 2);
		return 1;
	}
	return 0;
}
