/*
 * x86_64-retpad-exec.c - return probes with no stop, executed natively.
 *
 * Built from arch_ops only, as the agent builds them (struct
 * arch_ret_pad): the trampoline (emit_ret_exit) and, per probed C
 * function, an entry pad:
 *
 *   pad:  emit_save_regs(pc = fn)
 *         emit_ret_entry(area, tramp)   push, [sp] = tramp; what cannot be
 *                                       pushed goes on (counted): here
 *                                       straight to the restore
 *         emit_restore_regs()
 *         jmp fn                        the function itself
 *
 * The C functions are called through their pad's address, so the pad
 * sees [sp] = a real return address, exactly as at a probed entry.  This
 * program plays the agent: it consumes the ring as pad.c does (seq ==
 * pos + 1: written; then seq = pos + nrecords) and checks each record:
 * pc field = the trampoline, descriptor magic, real return address, the
 * function's tag, TSC ticks > 0, the tid, and rax = what the function
 * returned (rdi = its argument, kept by the callee).  Every case runs
 * with the area's RET_PAD_IMAGE off (records without the x87/SSE image:
 * magic "RETB") and on (magic "RETN", the image's MXCSR the thread's,
 * which the child sets to round up first so that it is not the default).
 *
 * Cases, each in a child under an alarm (a crash or a hang fails it):
 *   values      f(i) for 100 i: returns correct, one record each
 *   recursion   r(10) calling itself through its pad: 11 records,
 *               innermost first, rax 0..10, the inner ones returning into r
 *   longjmp     10 rounds of j(5) longjmping out at depth 0, then f(7):
 *               no record of j, one right record of f each round
 *   deep        r(200): 126 entries pushed, 75 counted as fallbacks, the
 *               126 outermost returns recorded in order
 *   full        40 calls into an 8-record ring nobody drains meanwhile:
 *               the trampoline traps when it is full (SIGTRAP, counted),
 *               the handler drains, every return recorded, none lost
 *   threads     8 threads x 5000 calls, a consumer thread draining: each
 *               (thread, i) seen exactly once
 *   hist        the trampoline's own histograms (RET_HIST_*): r's in the
 *               second of two in use, f's in none: r(10) adds 11 returns
 *               to it and writes no record, f(i) still records; the
 *               buckets agree with the sum (1 ns a tick); then with f's
 *               too and 0 ns a tick: 100 returns of f, all in ZERO
 *   hist-threads  8 threads x 5000 calls of f, counted in f's histogram:
 *               exactly 40000, and no record
 * each with rdfsbase (when the kernel allows FSGSBASE) and with the TCB's
 * self pointer (%fs:0).
 *
 * With --bench it measures instead: ns per call through an entry pad and
 * the trampoline (ring drained outside the timing), fxsave and xsave,
 * rdfsbase and %fs:0.
 *
 * Exit 0 pass, 1 failure, 77 no RWX memory, 99 harness.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "arch/arch.h"
#include "arch/x86_64/x86_64.h"

#define OFF_SEQ 832
#define OFF_BASES 840
#define OFF_FRAME 856
#define OFF_BLOCKS 1024
#define RECORD_SHIFT 11
#define RING_OFF 4096

#define NT 8
#define PER 5000
#define ARCH_OPS (&x86_64_arch_ops)

static bool use_fsgsbase, use_xsave, use_image;
static unsigned int ring_prefetch;	/* RING_PREFETCH */

struct rec {
	uint64_t rax, rdi, pc, tag, ticks, ret, fs, gs;
	uint32_t tid, magic, mxcsr;
};

/* The thread's fs base, from the kernel. */
static uint64_t fs_now(void)
{
	uint64_t v = 0;

	syscall(SYS_arch_prctl, 0x1003 /* ARCH_GET_FS */, &v);
	return v;
}

/* int3 leaves the pc past itself. */
static void trap_past(void *ctx)
{
	(void)ctx;
}

/* Each case's child: MXCSR all masked, rounding up (not the default),
 * for the records' image to show. */
static void child_init(void)
{
	uint32_t up = 0x5f80;

	__asm__ volatile("ldmxcsr %0" : : "m"(up));
}

static const char *run_note(void)
{
	static char note[48];

	snprintf(note, sizeof(note), "%s%s%s", use_fsgsbase ? " (rdfsbase)" : " (%fs:0)",
		 use_image ? " (image)" : "", ring_prefetch ? " (prefetch)" : "");
	return note;
}

#define REC_MAGIC (use_image ? RET_REC_MAGIC_VALUE : RET_REC_MAGIC_BARE)
#define RING_PREFETCH ring_prefetch
#include "tests/arch/retpad-exec.h"

__attribute__((noinline)) static long f(long i)
{
	return 3 * i + 1;
}

static void setup(unsigned int records)
{
	ring_map(records, 4 * 4096, use_image,
		 use_xsave ? X86_64_IMAGE_XSAVE : X86_64_IMAGE_FXSAVE, use_fsgsbase);
	pf = make_pad(code + 4096, 1024, (const void *)f, f_tag, use_fsgsbase);
	pr = make_pad(code + 4096 + 1024, 1024, (const void *)r, r_tag, use_fsgsbase);
	pj = make_pad(code + 4096 + 2048, 1024, (const void *)j, j_tag, use_fsgsbase);
}

static uint32_t mxcsr_now(void)
{
	uint32_t v;

	__asm__ volatile("stmxcsr %0" : "=m"(v));
	return v;
}

/* take()'s arch part: the frame's rax, rdi and pc, the image's MXCSR,
 * the fs base. */
static void take_arch(struct rec *out, const uint8_t *rec)
{
	const uint64_t *fr = (const uint64_t *)(rec + OFF_FRAME);

	out->rax = fr[0];
	out->rdi = fr[5];
	out->pc = fr[16];
	memcpy(&out->mxcsr, rec + 24, 4);	/* FXSAVE and XSAVE alike */
	memcpy(&out->fs, rec + OFF_BASES, 8);
	memcpy(&out->gs, rec + OFF_BASES + 8, 8);
}

static void check_rec(const char *c, const struct rec *x, uint64_t tag, uint64_t rax)
{
	uint32_t magic = use_image ? RET_REC_MAGIC_VALUE : RET_REC_MAGIC_BARE;

	if (x->pc != tramp || x->magic != magic || x->tag != tag ||
	    x->rax != rax || !x->ticks || x->tid != tid_now() ||
	    (use_image && x->mxcsr != mxcsr_now()))
		fail("%s: record pc %#llx magic %#x tag %#llx rax %lld ticks %llu tid %u "
		     "mxcsr %#x; want magic %#x tag %#llx rax %lld mxcsr %#x", c,
		     (unsigned long long)x->pc, x->magic,
		     (unsigned long long)x->tag, (long long)x->rax,
		     (unsigned long long)x->ticks, x->tid, x->mxcsr, magic,
		     (unsigned long long)tag, (long long)rax,
		     use_image ? mxcsr_now() : x->mxcsr);
	/* The bases: with rdfsbase always, without it only in a record with
	 * the image, which is read with them: fs from %fs:0, gs from the
	 * table's word (TABLE_GS, not the thread's: it came from there). */
	uint64_t gs = 0;
	syscall(SYS_arch_prctl, 0x1004 /* ARCH_GET_GS */, &gs);
	if (!use_fsgsbase)
		gs = TABLE_GS;
	if ((use_image || use_fsgsbase) && (x->fs != fs_now() || x->gs != gs))
		fail("%s: record bases fs %#llx gs %#llx, want %#llx %#llx", c,
		     (unsigned long long)x->fs, (unsigned long long)x->gs,
		     (unsigned long long)fs_now(), (unsigned long long)gs);
}

static void case_values(void)
{
	struct rec x;
	int n = 0;

	for (long i = 0; i < 100; i++) {
		if (pf(i) != 3 * i + 1)
			fail("values: f(%ld) = %ld", i, pf(i));
		while (take(&x)) {
			check_rec("values", &x, f_tag, 3 * (uint64_t)x.rdi + 1);
			n++;
		}
	}
	if (n != 100)
		fail("values: %d records, want 100", n);
}

/* A thread without TLS in the process (PAD_TID_NOTLS set): without
 * fsgsbase the entry does not read %fs:0 and pushes nothing (each call
 * a fallback, the agent's to take); with rdfsbase the word is not read. */
static void case_notls(void)
{
	struct rec x;
	int n = 0;
	uint64_t fb0 = *(uint64_t *)(area + RET_PAD_FALLBACKS);

	notls_word = 1;
	for (long i = 0; i < 10; i++) {
		if (pf(i) != 3 * i + 1)
			fail("notls: f(%ld) = %ld", i, pf(i));
		while (take(&x)) {
			check_rec("notls", &x, f_tag, 3 * (uint64_t)x.rdi + 1);
			n++;
		}
	}
	notls_word = 0;
	uint64_t fb = *(uint64_t *)(area + RET_PAD_FALLBACKS) - fb0;
	if (use_fsgsbase ? n != 10 || fb != 0 : n != 0 || fb != 10)
		fail("notls: %d records, %llu fallbacks", n, (unsigned long long)fb);
}

static void case_recursion(void)
{
	struct rec x;
	long v = pr(10);

	if (v != 10)
		fail("recursion: r(10) = %ld", v);
	for (uint64_t k = 0; k <= 10; k++) {
		if (!take(&x)) {
			fail("recursion: record %llu missing", (unsigned long long)k);
			return;
		}
		check_rec("recursion", &x, r_tag, k);
		bool inner = k < 10;
		if (inner != (x.ret >= (uint64_t)r && x.ret < (uint64_t)r + 256))
			fail("recursion: return %llu goes to %#llx", (unsigned long long)k,
			     (unsigned long long)x.ret);
	}
	if (take(&x))
		fail("recursion: more records than calls");
}

static void case_longjmp(void)
{
	struct rec x;

	/* Ten rounds: each leaves six entries whose frames are gone; a
	 * return pops them only when they are newer than its own, so they
	 * may stay (their slots still hold the trampoline: as on the trap
	 * path) until the depth limit sends entries to the agent.  What
	 * must hold: no record for the frames longjmp'd over, and every
	 * return after them right. */
	for (volatile int round = 0; round < 10; round++) {
		if (!setjmp(env)) {
			pj(5);
			fail("longjmp: j returned");
		}
		if (take(&x))
			fail("longjmp: a record for a frame longjmp'd over");
		if (pf(7) != 22)
			fail("longjmp: f(7) after the longjmp");
		if (!take(&x))
			fail("longjmp: no record of f(7)");
		else
			check_rec("longjmp", &x, f_tag, 22);
	}
	printf("  longjmp: %u entries of gone frames left after 10 rounds\n", depth());
}

/* threads_drain's view of a record: f's argument stays in rdi. */
static uint64_t rec_arg(const struct rec *x)
{
	return x->rdi;
}

static uint64_t rec_value(const struct rec *x)
{
	return x->rax;
}

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/*
 * The trampoline asks for the lines the return's record `ring_prefetch`
 * positions on will take (prefetchw disp(%r14), 41 0f 0d 8e <disp32>):
 * its sequence word, bases and frame, and the descriptor, each line once;
 * none without prefetch.
 */
static void case_prefetch_lines(void)
{
	static const uint8_t op[] = { 0x41, 0x0f, 0x0d, 0x8e };
	const uint32_t want[] = { 832, 896, 960, 1024 };	/* OFF_SEQ .. descriptor */
	uint32_t disp[16];
	size_t n = 0;

	for (size_t i = 0; i + 8 <= tramp_len; i++) {
		if (memcmp(code + i, op, sizeof(op)))
			continue;
		uint32_t d;
		memcpy(&d, code + i + 4, 4);
		if (n < 16)
			disp[n] = d;
		n++;
	}
	if (!ring_prefetch) {
		if (n)
			fail("prefetch lines: %zu prefetchw with prefetch 0", n);
		return;
	}
	if (n != sizeof(want) / sizeof(want[0])) {
		fail("prefetch lines: %zu prefetchw, want %zu", n, sizeof(want) / sizeof(want[0]));
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (disp[i] != (ring_prefetch << RECORD_SHIFT) + want[i])
			fail("prefetch lines: line %zu at %#x, want %#x", i, disp[i],
			     (ring_prefetch << RECORD_SHIFT) + want[i]);
}

/* --bench: ns per call of f through its entry pad and the trampoline
 * (the push, the return's record, the jumps), the ring drained between
 * batches outside the timing; the best of 20 batches of 4000 calls,
 * against the plain call. */
static void bench(void)
{
	struct rec x;
	volatile long sink = 0;
	long (*volatile plain)(long) = f;
	double best_p = 1e18, best_u = 1e18;

	setup(4096);
	for (int round = 0; round < 20; round++) {
		double a = now_ns();
		for (long i = 0; i < 4000; i++)
			sink += pf(i);
		double b = now_ns();
		while (take(&x))
			;
		double c = now_ns();
		for (long i = 0; i < 4000; i++)
			sink += plain(i);
		double d = now_ns();
		if ((b - a) / 4000 < best_p)
			best_p = (b - a) / 4000;
		if ((d - c) / 4000 < best_u)
			best_u = (d - c) / 4000;
	}
	printf("return probe, %s, %s: %.1f ns per call through the pad and the "
	       "trampoline, %.1f ns plain: %.1f ns more\n",
	       use_fsgsbase ? "rdfsbase" : "%fs:0 (bases by arch_prctl)",
	       !use_image ? "no image" : use_xsave ? "xsave" : "fxsave",
	       best_p, best_u, best_p - best_u);
	if (use_image)
		exit(0);
	/* The same calls counted in a histogram by the trampoline. */
	hist_use(0, f_tag);
	hist_on(1, 1ull << 32);
	double best_h = 1e18;
	for (int round = 0; round < 20; round++) {
		double a = now_ns();
		for (long i = 0; i < 4000; i++)
			sink += pf(i);
		double b = now_ns();
		if ((b - a) / 4000 < best_h)
			best_h = (b - a) / 4000;
	}
	printf("return probe, %s, histogram: %.1f ns per call: %.1f ns more\n",
	       use_fsgsbase ? "rdfsbase" : "%fs:0 (bases by arch_prctl)", best_h,
	       best_h - best_u);
	exit(0);
}

int main(int argc, char **argv)
{
	int bad = 0, r;
	static const struct retpad_case cases[] = {
		{ "values", case_values, 256 },
		{ "recursion", case_recursion, 256 },
		{ "notls", case_notls, 256 },
		{ "longjmp", case_longjmp, 256 },
		{ "deep", case_deep, 256 },
		{ "full", case_full, 8 },
		{ "threads", threads_drain, 1024 },
		{ "hist", case_hist, 256 },
		{ "hist-threads", case_hist_threads, 256 },
		{ "prefetch lines", case_prefetch_lines, 256 },
	};

	setvbuf(stdout, NULL, _IONBF, 0);
#ifndef AT_HWCAP2
#define AT_HWCAP2 26
#endif
	bool fsgs = getauxval(AT_HWCAP2) & 2;
	if (argc > 1 && !strcmp(argv[1], "--bench")) {
		/* xsave faults where the OS did not enable it: its own child. */
		for (int v = 0; v < 8; v++) {
			use_fsgsbase = v & 1;
			use_xsave = v & 2;
			use_image = v & 4;
			if (use_xsave && !use_image)
				continue;	/* the same code as fxsave's */
			if (use_fsgsbase && !fsgs)
				continue;
			pid_t pid = fork();
			int st;
			if (pid == 0)
				bench();
			if (pid < 0 || waitpid(pid, &st, 0) != pid)
				return 99;
			if (!WIFEXITED(st))
				printf("return probe, %s: not measured (signal %d)\n",
				       use_xsave ? "xsave" : "fxsave", WTERMSIG(st));
		}
		return 0;
	}
	/* Each case as the agent builds the trampoline (prefetch 2), and
	 * without the prefetches and with them further on: the code differs,
	 * the records must not. */
	for (int v = 0; v < 12; v++) {
		use_fsgsbase = v & 1;
		use_image = v & 2;
		ring_prefetch = (unsigned int)(v >> 2) * 2;
		if (use_fsgsbase && !fsgs) {
			printf("skip: the cases with rdfsbase%s%s (HWCAP2_FSGSBASE not set)\n",
			       use_image ? " (image)" : "", ring_prefetch ? " (prefetch)" : "");
			continue;
		}
		r = run_cases(cases, sizeof(cases) / sizeof(cases[0]));
		if (r == 77 || r == 99)
			return r;
		bad |= r;
	}
	return bad;
}
