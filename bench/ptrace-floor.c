/*
 * ptrace-floor.c - the floor of a one-stop tracepoint hit: the cheapest a
 * ptrace collector can be.
 *
 *   ptrace-floor N [getregs|setregs|agent|none]
 *
 * Forks a child that stops itself (SIGSTOP) under PTRACE_TRACEME, then
 * calls floor_hot() N times; floor_hot() executes an int3.  For every hit
 * the parent does what any collector has to do at the least:
 *
 *   waitpid(__WALL)       the trap stop
 *   PTRACE_GETREGS        read the registers ("collect $regs"; mode getregs,
 *                         the default)
 *   PTRACE_SETREGS        write them back (mode setregs only: what a probe
 *                         that moves the PC, i.e. emulate/boost, also needs)
 *   PTRACE_CONT, sig 0    resume, the SIGTRAP suppressed
 *
 * The int3 sits inside the function, so resuming needs no PC fix-up.  Mode
 * none skips GETREGS (stop + resume only).  Mode agent makes exactly the
 * system calls probe-agent makes for an emulated "collect $regs" hit, with
 * no other work: waitid instead of waitpid, GETREGS, PTRACE_GETREGSET
 * NT_X86_XSTATE (832 bytes: x87/SSE and the AVX upper halves), two
 * PTRACE_POKEUSER (rax and rip, written with the values they have), CONT:
 * the best that set of calls allows.  The child times its own loop
 * with CLOCK_MONOTONIC, like bench/tp-target.c, and prints
 *
 *   elapsed_ns=E n=N ns_per_stop=S mode=M
 *
 * The parent checks it saw exactly N traps and exits non-zero otherwise.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) void floor_hot(void);

__attribute__((noinline)) void floor_hot(void)
{
	__asm__ volatile("int3" ::: "memory");
}

static int child(long n, const char *mode)
{
	struct timespec a, b;

	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0) {
		perror("PTRACE_TRACEME");
		_exit(1);
	}
	raise(SIGSTOP);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		floor_hot();
	clock_gettime(CLOCK_MONOTONIC, &b);
	long long ns = (long long)(b.tv_sec - a.tv_sec) * 1000000000LL +
		       (b.tv_nsec - a.tv_nsec);
	printf("elapsed_ns=%lld n=%ld ns_per_stop=%.1f mode=%s\n", ns, n,
	       (double)ns / n, mode);
	fflush(stdout);
	_exit(0);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	const char *mode = argc > 2 ? argv[2] : "getregs";
	int getregs = strcmp(mode, "none") != 0;
	int setregs = strcmp(mode, "setregs") == 0;
	int agent = strcmp(mode, "agent") == 0;
	static unsigned char xsave[832];
	struct user_regs_struct regs;
	unsigned long long sum = 0;
	long traps = 0;
	int status;
	pid_t pid;

	if (n <= 0 || (getregs && !setregs && !agent && strcmp(mode, "getregs") != 0)) {
		fprintf(stderr, "usage: ptrace-floor N [getregs|setregs|agent|none]\n");
		return 2;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0)
		return child(n, mode);

	/* The initial SIGSTOP. */
	if (waitpid(pid, &status, __WALL) < 0 || !WIFSTOPPED(status) ||
	    WSTOPSIG(status) != SIGSTOP) {
		fprintf(stderr, "ptrace-floor: child did not stop\n");
		return 1;
	}
	ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(long)PTRACE_O_EXITKILL);
	if (ptrace(PTRACE_CONT, pid, NULL, NULL) < 0) {
		perror("PTRACE_CONT");
		return 1;
	}
	for (;;) {
		if (agent) {
			siginfo_t si;

			if (waitid(P_ALL, 0, &si, WEXITED | __WALL) < 0) {
				perror("waitid");
				return 1;
			}
			/* As a wait status (the agent does the same). */
			if (si.si_code == CLD_EXITED)
				status = (si.si_status & 0xff) << 8;
			else if (si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED)
				status = si.si_status & 0x7f;
			else
				status = (si.si_status << 8) | 0x7f;
		} else if (waitpid(pid, &status, __WALL) < 0) {
			perror("waitpid");
			return 1;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status))
			break;
		int sig = WSTOPSIG(status);
		if (sig == SIGTRAP) {
			traps++;
			sig = 0;
			if (getregs) {
				if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) < 0) {
					perror("PTRACE_GETREGS");
					return 1;
				}
				sum += regs.rip;
				if (setregs &&
				    ptrace(PTRACE_SETREGS, pid, NULL, &regs) < 0) {
					perror("PTRACE_SETREGS");
					return 1;
				}
				struct iovec iov = { xsave, sizeof(xsave) };
				if (agent &&
				    (ptrace(PTRACE_GETREGSET, pid, (void *)NT_X86_XSTATE, &iov) < 0 ||
				     ptrace(PTRACE_POKEUSER, pid,
					    (void *)offsetof(struct user_regs_struct, rax),
					    (void *)regs.rax) < 0 ||
				     ptrace(PTRACE_POKEUSER, pid,
					    (void *)offsetof(struct user_regs_struct, rip),
					    (void *)regs.rip) < 0)) {
					perror("ptrace (agent mode)");
					return 1;
				}
			}
		}
		if (ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig) < 0) {
			perror("PTRACE_CONT");
			return 1;
		}
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "ptrace-floor: child failed (status %#x)\n", status);
		return 1;
	}
	if (traps != n) {
		fprintf(stderr, "ptrace-floor: %ld traps, expected %ld\n", traps, n);
		return 1;
	}
	(void)sum;
	return 0;
}
