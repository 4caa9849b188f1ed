/*
 * x86_64-touch-exec.c - the page touch code (arch_ops.emit_touch) run
 * for real.
 *
 * A SIGUSR1 handler starts the code with every register and the flags
 * set to patterns and the stack pointer in a buffer of ours; the code's
 * trap and the breakpoint it then jumps to (`resume`) end up in a
 * SIGTRAP handler, a store into a read-only page in a SIGSEGV one (all
 * on an alternate stack, so the buffer below the stack pointer holds
 * only what the code wrote there).  Checked:
 *   - every register and the flags come back as they were, at the trap;
 *   - the pages keep their bytes, and so does the red zone;
 *   - the code then goes on at `resume`, near (rel32) and > 4 GiB away;
 *   - the stores go to each page in turn: with page k read-only the
 *     store that faults is the one at page k's first byte;
 *   - no page, or too small a buffer, is refused.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "arch/arch.h"
#include "arch/x86_64/x86_64.h"

#define PAGES 64
#define PAGE 4096u
#define STACK 65536

static int failures, checks;

#define CHECK(cond, ...)                                   \
	do {                                                   \
		checks++;                                          \
		if (!(cond)) {                                     \
			failures++;                                    \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);    \
			printf(__VA_ARGS__);                           \
			printf("\n");                                  \
		}                                                  \
	} while (0)

static uint8_t *code, *pages, *stack, *resume_at;
static sigjmp_buf back;
static greg_t set[NGREG];	/* the registers the code starts with */
static greg_t at_trap[NGREG];	/* ... and has at its trap */
static int traps;
static uint64_t resumed_pc, fault_addr;

/* A flags value a program may hold: CF PF AF ZF SF IF and bit 1. */
#define FLAGS 0x2d7

static void handler(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	greg_t *g = uc->uc_mcontext.gregs;

	if (sig == SIGUSR1) {
		for (int i = 0; i < NGREG; i++)
			if (i != REG_CSGSFS && i != REG_ERR && i != REG_TRAPNO &&
			    i != REG_OLDMASK && i != REG_CR2)
				g[i] = set[i];
		return;
	}
	if (sig == SIGTRAP && traps++ == 0) {
		memcpy(at_trap, g, sizeof(at_trap));
		return;	/* on to the jump to resume */
	}
	if (sig == SIGTRAP)
		resumed_pc = (uint64_t)g[REG_RIP];
	else
		fault_addr = (uint64_t)(uintptr_t)si->si_addr;
	siglongjmp(back, sig);
}

/* Runs the touch code of `pages` pages from `start`; the signal it ended
 * with. */
static int run(uint64_t start, uint64_t n, uint8_t *resume, size_t *trap_off)
{
	int len = x86_64_emit_touch(code, PAGE, (uint64_t)(uintptr_t)code, start, n, PAGE,
				    (uint64_t)(uintptr_t)resume, trap_off);
	if (len <= 0) {
		CHECK(0, "emit_touch: %d", len);
		return 0;
	}
	*resume = 0xcc;
	for (int i = 0; i < NGREG; i++)
		set[i] = (greg_t)(0x1111111111111111ull * (uint64_t)(i % 15 + 1) ^ 0x0123);
	set[REG_RSP] = (greg_t)(uintptr_t)(stack + STACK - 256);
	set[REG_RIP] = (greg_t)(uintptr_t)code;
	set[REG_EFL] = FLAGS;
	memset(stack, 0x5a, STACK);
	traps = 0;
	resumed_pc = fault_addr = 0;
	int sig = sigsetjmp(back, 1);
	if (sig == 0) {
		raise(SIGUSR1);
		return 0;	/* not reached: the code ends in a signal */
	}
	return sig;
}

static void case_all(uint8_t *resume, const char *what)
{
	size_t trap_off = 0;

	for (size_t i = 0; i < PAGES * PAGE; i++)
		pages[i] = (uint8_t)(i * 7 + 3);
	int sig = run((uint64_t)(uintptr_t)pages, PAGES, resume, &trap_off);
	CHECK(sig == SIGTRAP && traps == 2, "%s: ended with signal %d after %d traps", what,
	      sig, traps);
	CHECK(at_trap[REG_RIP] == (greg_t)(uintptr_t)(code + trap_off + 1),
	      "%s: trap at %#llx, want %#llx", what, (unsigned long long)at_trap[REG_RIP],
	      (unsigned long long)(uintptr_t)(code + trap_off + 1));
	static const int gpr[] = { REG_RAX, REG_RBX, REG_RCX, REG_RDX, REG_RSI, REG_RDI,
				   REG_RBP, REG_RSP, REG_R8,  REG_R9,  REG_R10, REG_R11,
				   REG_R12, REG_R13, REG_R14, REG_R15 };
	for (size_t i = 0; i < sizeof(gpr) / sizeof(gpr[0]); i++)
		CHECK(at_trap[gpr[i]] == set[gpr[i]], "%s: register %d %#llx, want %#llx",
		      what, gpr[i], (unsigned long long)at_trap[gpr[i]],
		      (unsigned long long)set[gpr[i]]);
	CHECK((at_trap[REG_EFL] & 0xcd5) == (FLAGS & 0xcd5), "%s: flags %#llx, want %#x", what,
	      (unsigned long long)at_trap[REG_EFL], FLAGS);
	CHECK(resumed_pc == (uint64_t)(uintptr_t)resume + 1, "%s: went on at %#llx, want %#llx",
	      what, (unsigned long long)resumed_pc, (unsigned long long)(uintptr_t)resume);
	size_t changed = 0;
	for (size_t i = 0; i < PAGES * PAGE; i++)
		changed += pages[i] != (uint8_t)(i * 7 + 3);
	CHECK(changed == 0, "%s: %zu bytes of the pages changed", what, changed);
	uint8_t *sp = stack + STACK - 256;
	for (int i = 0; i < 128 + 256; i++)
		if (sp[-128 + i] != 0x5a) {
			CHECK(0, "%s: the red zone or above changed at sp%+d", what, i - 128);
			break;
		}
}

static void case_readonly(size_t k)
{
	size_t trap_off;

	mprotect(pages + k * PAGE, PAGE, PROT_READ);
	int sig = run((uint64_t)(uintptr_t)pages, PAGES, resume_at, &trap_off);
	mprotect(pages + k * PAGE, PAGE, PROT_READ | PROT_WRITE);
	CHECK(sig == SIGSEGV && fault_addr == (uint64_t)(uintptr_t)(pages + k * PAGE),
	      "page %zu read-only: signal %d at %#llx, want SIGSEGV at %p", k, sig,
	      (unsigned long long)fault_addr, (void *)(pages + k * PAGE));
}

int main(void)
{
	static uint8_t altstack[65536];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	struct sigaction sa = { .sa_sigaction = handler, .sa_flags = SA_SIGINFO | SA_ONSTACK };
	size_t trap_off;
	uint8_t small[16];

	sigaltstack(&ss, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGTRAP, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	code = mmap(NULL, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	resume_at = mmap(NULL, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/* > 4 GiB from the code: the jump's absolute form. */
	uint8_t *far = mmap(code + (6ull << 30), PAGE, PROT_READ | PROT_WRITE | PROT_EXEC,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pages = mmap(NULL, PAGES * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		     -1, 0);
	stack = malloc(STACK);
	if (code == MAP_FAILED || resume_at == MAP_FAILED || far == MAP_FAILED ||
	    pages == MAP_FAILED || !stack) {
		printf("FAIL: no memory for the cases\n");
		return 1;
	}

	case_all(resume_at, "near resume");
	if (x86_64_in_rel32((uint64_t)(uintptr_t)code + 64, (uint64_t)(uintptr_t)far))
		printf("SKIP: no mapping beyond 2 GiB of the code: far resume not run\n");
	else
		case_all(far, "far resume");
	case_readonly(0);
	case_readonly(PAGES / 2 - 1);
	case_readonly(PAGES - 1);

	CHECK(x86_64_emit_touch(code, PAGE, 0, 0x10000, 0, PAGE, 0, &trap_off) == -EINVAL,
	      "no page is accepted");
	CHECK(x86_64_emit_touch(small, sizeof(small), 0, 0x10000, 1, PAGE, 0, &trap_off) ==
		      -ENOSPC,
	      "16 bytes of room are accepted");

	printf("%s: %d checks, %d failed\n", failures ? "FAIL" : "PASS", checks, failures);
	return failures ? 1 : 0;
}
