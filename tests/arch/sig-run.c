/*
 * sig-run.c - the signal set-up the differential tests' runners share
 * (see sig-run.h).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "tests/arch/sig-run.h"

int sig_run_init(void (*handler)(int, siginfo_t *, void *))
{
	static const int sigs[] = { SIGUSR1, SIGILL, SIGSEGV, SIGBUS, SIGTRAP,
				    SIGVTALRM, SIGFPE };
	struct sigaction sa;
	stack_t ss;

	ss.ss_size = 1 << 16;
	ss.ss_sp = malloc(ss.ss_size);
	ss.ss_flags = 0;
	if (!ss.ss_sp || sigaltstack(&ss, NULL) < 0)
		return -errno;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], &sa, NULL) < 0)
			return -errno;
	return 0;
}

void sig_run_watchdog(bool on)
{
	struct itimerval t = { { 0, 0 }, { 0, on ? 100000 : 0 } };

	setitimer(ITIMER_VIRTUAL, &t, NULL);
}
