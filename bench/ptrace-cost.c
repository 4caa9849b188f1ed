/*
 * ptrace-cost.c - what each system call of a tracepoint hit costs on this
 * machine, measured one at a time on a stopped tracee.
 *
 *   ptrace-cost [M]        (M calls per request, default 200000)
 *
 * Forks a child that stops itself (SIGSTOP) under PTRACE_TRACEME and stays
 * stopped; the parent then times M calls of each request the agent makes
 * per hit, back to back, with CLOCK_MONOTONIC, and prints one line each:
 *
 *   getpid                  a system call that does nothing (the entry and
 *                           exit cost every call below also pays)
 *   wait4 WNOHANG (none)    wait4(-1, WNOHANG) with nothing to report
 *   PTRACE_GETREGS          the general registers
 *   PTRACE_GETREGSET xstate(832)  the XSAVE legacy area, header and AVX
 *                           upper halves: what the agent's $regs block uses
 *   PTRACE_GETREGSET xstate(full) the whole XSAVE area the kernel has
 *   PTRACE_GETFPREGS        the 512-byte FXSAVE image
 *   PTRACE_POKEUSER rip     one register word (the value it already has)
 *   PTRACE_SETREGS          the general registers (the values they have)
 *
 * The stop/resume round trip itself (wait4 + PTRACE_CONT and the two
 * context switches) is what bench/ptrace-floor measures.  Pin it like the
 * bench (taskset -c 1 bench/ptrace-cost); numbers are wall clock, so run
 * it on a quiet machine and compare lines of the same run.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef NT_X86_XSTATE
#define NT_X86_XSTATE 0x202
#endif

static pid_t child;
static struct user_regs_struct regs;
static unsigned char xsave[32768];
static size_t xsave_full;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long do_getpid(void)
{
	return getpid() > 0 ? 0 : -1;
}

static long do_wait_none(void)
{
	int status;

	/* The child is stopped and its stop was collected: nothing to report. */
	return waitpid(-1, &status, __WALL | WNOHANG) == 0 ? 0 : -1;
}

static long do_getregs(void)
{
	return ptrace(PTRACE_GETREGS, child, NULL, &regs);
}

static long xstate(size_t len)
{
	struct iovec iov = { xsave, len };

	return ptrace(PTRACE_GETREGSET, child, (void *)NT_X86_XSTATE, &iov);
}

static long do_xstate_avx(void)
{
	return xstate(832);
}

static long do_xstate_full(void)
{
	return xstate(xsave_full);
}

static long do_getfpregs(void)
{
	return ptrace(PTRACE_GETFPREGS, child, NULL, xsave);
}

static long do_pokeuser_rip(void)
{
	return ptrace(PTRACE_POKEUSER, child,
		      (void *)offsetof(struct user_regs_struct, rip),
		      (void *)regs.rip);
}

static long do_setregs(void)
{
	return ptrace(PTRACE_SETREGS, child, NULL, &regs);
}

/* NT_PRSTATUS is user_regs_struct; a shorter write stops after rip. */
static long do_setregset_to_rip(void)
{
	struct iovec iov = { &regs, offsetof(struct user_regs_struct, rip) + 8 };

	return ptrace(PTRACE_SETREGSET, child, (void *)NT_PRSTATUS, &iov);
}

static long do_setregset_rip_to_eflags(void)
{
	struct iovec iov = { &regs, offsetof(struct user_regs_struct, eflags) + 8 };

	return ptrace(PTRACE_SETREGSET, child, (void *)NT_PRSTATUS, &iov);
}

static const struct {
	const char *name;
	long (*fn)(void);
} calls[] = {
	{ "getpid", do_getpid },
	{ "wait4 WNOHANG (none)", do_wait_none },
	{ "PTRACE_GETREGS", do_getregs },
	{ "PTRACE_GETREGSET xstate(832)", do_xstate_avx },
	{ "PTRACE_GETREGSET xstate(full)", do_xstate_full },
	{ "PTRACE_GETFPREGS", do_getfpregs },
	{ "PTRACE_POKEUSER rip", do_pokeuser_rip },
	{ "PTRACE_SETREGS", do_setregs },
	{ "PTRACE_SETREGSET prstatus(..rip)", do_setregset_to_rip },
	{ "PTRACE_SETREGSET prstatus(..eflags)", do_setregset_rip_to_eflags },
};

int main(int argc, char **argv)
{
	long m = argc > 1 ? atol(argv[1]) : 200000;
	int status;

	if (m <= 0) {
		fprintf(stderr, "usage: ptrace-cost [M]\n");
		return 2;
	}
	child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (child == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
			_exit(1);
		raise(SIGSTOP);
		_exit(0);
	}
	if (waitpid(child, &status, __WALL) < 0 || !WIFSTOPPED(status)) {
		fprintf(stderr, "ptrace-cost: the child did not stop\n");
		return 1;
	}
	struct iovec iov = { xsave, sizeof(xsave) };
	if (ptrace(PTRACE_GETREGS, child, NULL, &regs) < 0 ||
	    ptrace(PTRACE_GETREGSET, child, (void *)NT_X86_XSTATE, &iov) < 0) {
		perror("ptrace");
		kill(child, SIGKILL);
		return 1;
	}
	xsave_full = iov.iov_len;
	printf("ns per call, %ld calls each (xstate full = %zu bytes)\n", m,
	       xsave_full);
	int failed = 0;
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		long long t0 = now_ns();
		for (long k = 0; k < m; k++)
			if (calls[i].fn() < 0) {
				perror(calls[i].name);
				failed = 1;
				break;
			}
		long long t1 = now_ns();
		printf("%-32s %8.1f\n", calls[i].name, (double)(t1 - t0) / m);
	}
	kill(child, SIGKILL);
	waitpid(child, &status, __WALL);
	return failed;
}
