/*
 * insn-a64.c - functions whose instructions `probe-trace insn` must
 * classify on aarch64 (tests/client/insn-aarch64.sh): an exclusive
 * load/store loop (built with -march=armv8-a -mno-outline-atomics, so
 * the compiler writes LDAXR/STLXR rather than LSE atomics or a call),
 * calls, a global's address (ADRP), and a system call.
 */
long counter;

long add_counter(long n)
{
	return __atomic_add_fetch(&counter, n, __ATOMIC_SEQ_CST);
}

__attribute__((noinline)) long twice(long x)
{
	return 2 * x + counter;
}

long call_twice(long x)
{
	return twice(x) + 1;
}

long sys_getpid(void)
{
	register long x8 __asm__("x8") = 172;	/* __NR_getpid */
	register long x0 __asm__("x0");

	__asm__ volatile("svc #0" : "=r"(x0) : "r"(x8) : "memory");
	return x0;
}
