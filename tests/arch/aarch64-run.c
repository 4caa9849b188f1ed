/*
 * aarch64-run.c - enter A64 code with a chosen register file and catch
 * the one it ends with (see aarch64-run.h).
 *
 *   a64_run:  sigsetjmp; raise(SIGUSR1)
 *   handler (phase LOAD):  the signal's context := `in`; return
 *             -> rt_sigreturn loads x0-x30, sp, pc, pstate, v0-v31
 *   the code runs, then raises SIGILL / SIGSEGV / SIGBUS / SIGVTALRM
 *   handler (phase RUN):   `out` := the signal's context; siglongjmp
 *
 * The SIMD&FP registers are the fpsimd_context record of the signal
 * frame's __reserved area (magic 0x46508001), laid out as below.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "tests/arch/aarch64-run.h"
#include "tests/arch/sig-run.h"

#define FPSIMD_MAGIC_ 0x46508001u

struct fpsimd_record {
	uint32_t magic, size;
	uint32_t fpsr, fpcr;
	unsigned __int128 vregs[32];
};

enum phase { IDLE, LOAD, RUN };

static volatile sig_atomic_t phase = IDLE;
static const struct a64_state *run_in;
static struct a64_state *run_out;
static bool run_with_v;
static sigjmp_buf run_jmp;

static struct fpsimd_record *fpsimd_of(mcontext_t *mc)
{
	uint8_t *p = (uint8_t *)mc->__reserved;
	uint8_t *end = p + sizeof(mc->__reserved);

	while (p + 8 <= end) {
		struct fpsimd_record *r = (struct fpsimd_record *)p;

		if (r->magic == 0 || r->size == 0)
			return NULL;
		if (r->magic == FPSIMD_MAGIC_)
			return r;
		p += r->size;
	}
	return NULL;
}

static void harness_fault(int sig)
{
	static const char msg[] = "ERROR: the harness itself got a signal\n";

	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(99);
}

static void handler(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	mcontext_t *mc = &uc->uc_mcontext;
	struct fpsimd_record *fp = fpsimd_of(mc);

	(void)si;
	if (phase == LOAD && sig == SIGUSR1) {
		memcpy(mc->regs, run_in->x, sizeof(run_in->x));
		mc->sp = run_in->sp;
		mc->pc = run_in->pc;
		mc->pstate = (mc->pstate & ~(A64_PSTATE_NZCV | A64_PSTATE_BTYPE)) |
			     (run_in->pstate & (A64_PSTATE_NZCV | A64_PSTATE_BTYPE));
		if (run_with_v) {
			if (!fp)
				harness_fault(sig);
			memcpy(fp->vregs, run_in->v, sizeof(fp->vregs));
		}
		phase = RUN;
		return;
	}
	if (phase != RUN) {
		if (sig == SIGVTALRM)
			return;		/* the watchdog, late or early */
		harness_fault(sig);
	}
	memcpy(run_out->x, mc->regs, sizeof(run_out->x));
	run_out->sp = mc->sp;
	run_out->pc = mc->pc;
	run_out->pstate = mc->pstate;
	if (run_with_v && fp)
		memcpy(run_out->v, fp->vregs, sizeof(run_out->v));
	run_out->sig = sig;
	phase = IDLE;
	siglongjmp(run_jmp, 1);
}

int a64_run_init(void)
{
	return sig_run_init(handler);
}

int a64_run(const struct a64_state *in, struct a64_state *out, bool with_v)
{
	memset(out, 0, sizeof(*out));
	run_in = in;
	run_out = out;
	run_with_v = with_v;
	if (sigsetjmp(run_jmp, 1) == 0) {
		phase = LOAD;
		sig_run_watchdog(true);	/* ends a branch to itself */
		raise(SIGUSR1);
		/* not reached: the handler's return went to in->pc */
		harness_fault(0);
	}
	sig_run_watchdog(false);
	return out->sig == SIGVTALRM ? -ETIMEDOUT : 0;
}

void a64_print_state(const char *title, const struct a64_state *s, bool with_v)
{
	printf("  %s: pc %#llx sp %#llx nzcv %llx btype %llu (signal %d)\n", title,
	       (unsigned long long)s->pc, (unsigned long long)s->sp,
	       (unsigned long long)(s->pstate >> 28 & 15),
	       (unsigned long long)(s->pstate >> 10 & 3), s->sig);
	for (int i = 0; i < 31; i += 4) {
		printf("   ");
		for (int j = i; j < i + 4 && j < 31; j++)
			printf(" x%-2d %016llx", j, (unsigned long long)s->x[j]);
		printf("\n");
	}
	if (!with_v)
		return;
	for (int i = 0; i < 32; i += 2)
		printf("    v%-2d %016llx%016llx v%-2d %016llx%016llx\n", i,
		       (unsigned long long)(s->v[i] >> 64), (unsigned long long)s->v[i],
		       i + 1, (unsigned long long)(s->v[i + 1] >> 64),
		       (unsigned long long)s->v[i + 1]);
}
