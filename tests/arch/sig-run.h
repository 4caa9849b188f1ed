/*
 * sig-run.h - what the runners of the differential tests share
 * (aarch64-run.c, arm-run.c): a run starts in a signal handler (SIGUSR1,
 * whose context the handler loads with the state to run from) and ends
 * in it (the first signal the code raises, whose context is the result).
 */
#ifndef PROBE_TESTS_SIG_RUN_H
#define PROBE_TESTS_SIG_RUN_H

#include <signal.h>
#include <stdbool.h>

/*
 * Installs `handler` (SA_SIGINFO, on a 64 KiB alternate stack, so that
 * the code may leave sp anything) for SIGUSR1 and for the signals a run
 * ends with: SIGILL, SIGSEGV, SIGBUS, SIGTRAP, SIGVTALRM (the watchdog),
 * SIGFPE.  Returns 0 or -errno.
 */
int sig_run_init(void (*handler)(int, siginfo_t *, void *));

/*
 * Arms (on) or stops the watchdog: SIGVTALRM after 100 ms of CPU time,
 * which ends a branch to itself; CPU time, so a loaded machine does not
 * fire it early.
 */
void sig_run_watchdog(bool on);

#endif
