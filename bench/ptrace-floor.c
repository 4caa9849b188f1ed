/*
 * ptrace-floor.c - the floor of a one-stop tracepoint hit: the cheapest a
 * ptrace collector can be.
 *
 *   ptrace-floor N [getregs|setregs|none]
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
 * none skips GETREGS (stop + resume only).  The child times its own loop
 * with CLOCK_MONOTONIC, like bench/tp-target.c, and prints
 *
 *   elapsed_ns=E n=N ns_per_stop=S mode=M
 *
 * The parent checks it saw exactly N traps and exits non-zero otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
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
	struct user_regs_struct regs;
	unsigned long long sum = 0;
	long traps = 0;
	int status;
	pid_t pid;

	if (n <= 0 || (getregs && !setregs && strcmp(mode, "getregs") != 0)) {
		fprintf(stderr, "usage: ptrace-floor N [getregs|setregs|none]\n");
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
		if (waitpid(pid, &status, __WALL) < 0) {
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
