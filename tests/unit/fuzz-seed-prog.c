/* fuzz-seed-prog.c - seeds for fuzz-sdt and fuzz-elfsym (fuzz-seeds.sh
 * builds it): USDT notes with register, memory, rip-relative and indexed
 * operands and a semaphore; a C++ name and an alias. */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
#define SEM(p, n) unsigned short p##_##n##_semaphore __attribute__((section(".probes")))
SEM(seed, work);
SEM(seed, global);
SEM(seed, tick);
long gvar = 42;
int garr[4];
__attribute__((noinline)) long work(long a, int b, short c, char *p)
{
	STAP_PROBE4(seed, work, a, b, c, p);
	STAP_PROBE2(seed, global, gvar, garr[b & 3]);
	if (seed_tick_semaphore)
		STAP_PROBE1(seed, tick, a + b);
	return a * b + c + *p;
}
__attribute__((noinline)) int _ZN2ns3fooEi(int x) { return x + 1; }
int alias_name(int) __attribute__((alias("_ZN2ns3fooEi")));
static char buf[8];
void _start(void)
{
	long r = work(1, 2, 3, buf) + _ZN2ns3fooEi(4);
	__asm__ volatile("mov %0, %%rdi; mov $60, %%eax; syscall" :: "r"(r));
	for (;;);
}
