/*
 * hwcheck: exits 0 when x86-64 debug registers fire on this machine, 1
 * when they are accepted but never fire (some hypervisors), 2 when it
 * cannot tell.  The integration tests use it to choose between checking
 * hardware points and checking that the stub refuses them clearly; it is
 * written apart from the agent's own self-test on purpose.
 */
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int hits;

static void __attribute__((noinline)) target(void)
{
	hits++;
}

int main(void)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		target();
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status))
		return 2;
	/* DR0 = target, DR7 = L0 enabled, execute, length 1. */
	if (ptrace(PTRACE_POKEUSER, pid, offsetof(struct user, u_debugreg[0]),
		   (void *)target) < 0 ||
	    ptrace(PTRACE_POKEUSER, pid, offsetof(struct user, u_debugreg[7]),
		   (void *)1L) < 0 ||
	    ptrace(PTRACE_CONT, pid, NULL, NULL) < 0 ||
	    waitpid(pid, &status, 0) != pid)
		return 2;
	int fired = WIFSTOPPED(status) && WSTOPSIG(status) == SIGTRAP;
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	printf("debug registers %s\n", fired ? "fire" : "do not fire");
	return fired ? 0 : 1;
}
