/*
 * recnotls.c - a program with no libc, and so no TLS of its own
 * (x86-64).  It calls work(i) for i = 0..N-1 three times over:
 *
 *   1. with fs base 0, as the kernel started it;
 *   2. with a TCB of its own (a block whose first word points at itself,
 *      as the x86-64 TLS ABI has it) set by arch_prctl(ARCH_SET_FS),
 *      after a SIGWINCH to itself (ignored; a tracer sees the thread
 *      stop there);
 *   3. with fs base 0 again.
 *
 * and writes its ground truth into the file named by its second argument
 * (stdout without one):
 *   pid P
 *   calls C sum S        C = 3N, S = the sum of work's results
 * N is the first argument (default 1000).
 */
static long sys3(long n, long a, long b, long c)
{
	long r;

	__asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return r;
}

__attribute__((noinline)) long work(long x)
{
	__asm__ volatile("");
	return x * 3 + 1;
}

static char *put_num(char *p, long v)
{
	char t[24];
	int k = 0;

	do
		t[k++] = (char)('0' + v % 10);
	while ((v /= 10) > 0);
	while (k)
		*p++ = t[--k];
	return p;
}

static char *put_str(char *p, const char *s)
{
	while (*s)
		*p++ = *s++;
	return p;
}

static long parse(const char *s)
{
	long v = 0;

	while (*s >= '0' && *s <= '9')
		v = v * 10 + (*s++ - '0');
	return v;
}

static unsigned long tcb[64] __attribute__((aligned(64)));

static void die(void)
{
	sys3(60 /* exit */, 2, 0, 0);
}

__attribute__((used)) void start_c(long *sp)
{
	long argc = sp[0], n = 1000, sum = 0, fd = 1, pid;
	char **argv = (char **)(sp + 1), buf[128], *p = buf;

	if (argc > 1)
		n = parse(argv[1]);
	pid = sys3(39 /* getpid */, 0, 0, 0);
	for (long i = 0; i < n; i++)
		sum += work(i);
	tcb[0] = (unsigned long)tcb;
	if (sys3(158 /* arch_prctl */, 0x1002 /* ARCH_SET_FS */, (long)tcb, 0) != 0 ||
	    sys3(62 /* kill */, pid, 28 /* SIGWINCH */, 0) != 0)
		die();
	for (long i = 0; i < n; i++)
		sum += work(i);
	if (sys3(158, 0x1002, 0, 0) != 0)
		die();
	for (long i = 0; i < n; i++)
		sum += work(i);
	p = put_str(p, "pid ");
	p = put_num(p, pid);
	p = put_str(p, "\ncalls ");
	p = put_num(p, 3 * n);
	p = put_str(p, " sum ");
	p = put_num(p, sum);
	*p++ = '\n';
	if (argc > 2)
		fd = sys3(2 /* open */, (long)argv[2], 01 | 0100 | 01000 /* O_WRONLY|O_CREAT|O_TRUNC */,
			  0644);
	if (fd < 0 || sys3(1 /* write */, fd, (long)buf, p - buf) != p - buf)
		die();
	sys3(60 /* exit */, 0, 0, 0);
}

/* The kernel's initial stack: argc, argv...; aligned for the call. */
__asm__(".globl _start\n"
	"_start:\n"
	"	mov %rsp, %rdi\n"
	"	and $-16, %rsp\n"
	"	call start_c\n"
	"	hlt\n");
