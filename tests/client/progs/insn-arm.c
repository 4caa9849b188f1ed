/*
 * insn-arm.c - code for tests/client/insn-arm.sh: Thumb functions with an
 * IT block, an exclusive loop, a literal, a call and a system call, and
 * one A32 function, cross-compiled for armhf (-mthumb, Debian's default).
 */
int counter;

__attribute__((noinline)) int thumb_max(int a, int b)
{
	/* cmp; it gt; movgt: a conditional move in an IT block */
	return a > b ? a : b;
}

__attribute__((noinline)) int thumb_add_fetch(int *p, int v)
{
	return __atomic_add_fetch(p, v, __ATOMIC_RELAXED);
}

__attribute__((noinline)) long thumb_syscall(long n)
{
	register long r7 __asm__("r7") = n;
	register long r0 __asm__("r0");

	__asm__ volatile("svc #0" : "=r"(r0) : "r"(r7) : "memory");
	return r0;
}

__attribute__((noinline, target("arm"))) int arm_sum(const int *v, int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s += v[i] * 0x12345;
	return s;
}

int thumb_main(void)
{
	int v[3] = { 1, 2, 3 };

	counter = thumb_max(counter, 0x7654321);
	return thumb_add_fetch(&counter, 1) + arm_sum(v, 3) +
	       (int)thumb_syscall(20);
}
