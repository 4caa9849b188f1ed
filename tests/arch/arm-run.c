/*
 * arm-run.c - enter A32 / Thumb code with a chosen register file and
 * catch the one it ends with (see arm-run.h).
 *
 *   arm_run:  sigsetjmp; raise(SIGUSR1)
 *   handler (phase LOAD):  the signal's context := `in`; return
 *             -> sigreturn loads r0-r15 and cpsr (NZCV, T)
 *   the code runs, then raises SIGILL / SIGSEGV / SIGBUS / SIGVTALRM
 *   handler (phase RUN):   `out` := the signal's context; siglongjmp
 *
 * The context's arm_r0 ... arm_pc, arm_cpsr are consecutive words.
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

#include "tests/arch/arm-run.h"

enum phase { IDLE, LOAD, RUN };
static volatile sig_atomic_t phase = IDLE;
static const struct arm_state *run_in;
static struct arm_state *run_out;
static sigjmp_buf run_jmp;

#define CPSR_KEEP 0x000001dfu	/* mode, A I F: the kernel's */

static void handler(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	unsigned long *g = &uc->uc_mcontext.arm_r0;

	(void)si;
	if (phase == LOAD && sig == SIGUSR1) {
		for (int i = 0; i < 16; i++)
			g[i] = run_in->r[i];
		g[16] = (g[16] & CPSR_KEEP) | (run_in->r[16] & ARM_RUN_CPSR_SET);
		phase = RUN;
		return;
	}
	if (phase != RUN) {
		if (sig == SIGVTALRM)
			return;
		(void)!write(2, "ERROR: harness signal\n", 22);
		_exit(99);
	}
	for (int i = 0; i < 17; i++)
		run_out->r[i] = (uint32_t)g[i];
	run_out->sig = sig;
	phase = IDLE;
	siglongjmp(run_jmp, 1);
}

int arm_run_init(void)
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

void arm_run(const struct arm_state *in, struct arm_state *out)
{
	struct itimerval watchdog = { { 0, 0 }, { 0, 100000 } };
	struct itimerval off = { { 0, 0 }, { 0, 0 } };

	memset(out, 0, sizeof(*out));
	run_in = in;
	run_out = out;
	if (sigsetjmp(run_jmp, 1) == 0) {
		phase = LOAD;
		setitimer(ITIMER_VIRTUAL, &watchdog, NULL);
		raise(SIGUSR1);
		_exit(99);
	}
	setitimer(ITIMER_VIRTUAL, &off, NULL);
}

void arm_print_state(const char *title, const struct arm_state *s)
{
	printf("  %s (signal %d): pc %08x cpsr %08x\n   ", title, s->sig,
	       s->r[15], s->r[16]);
	for (int i = 0; i < 15; i++)
		printf(" r%d %08x%s", i, s->r[i], i == 7 ? "\n   " : "");
	printf("\n");
}

