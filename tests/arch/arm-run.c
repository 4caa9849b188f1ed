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
#include <ucontext.h>
#include <unistd.h>

#include "tests/arch/arm-run.h"
#include "tests/arch/sig-run.h"

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
	return sig_run_init(handler);
}

void arm_run(const struct arm_state *in, struct arm_state *out)
{
	memset(out, 0, sizeof(*out));
	run_in = in;
	run_out = out;
	if (sigsetjmp(run_jmp, 1) == 0) {
		phase = LOAD;
		sig_run_watchdog(true);
		raise(SIGUSR1);
		_exit(99);
	}
	sig_run_watchdog(false);
}

void arm_print_state(const char *title, const struct arm_state *s)
{
	printf("  %s (signal %d): pc %08x cpsr %08x\n   ", title, s->sig,
	       s->r[15], s->r[16]);
	for (int i = 0; i < 15; i++)
		printf(" r%d %08x%s", i, s->r[i], i == 7 ? "\n   " : "");
	printf("\n");
}

