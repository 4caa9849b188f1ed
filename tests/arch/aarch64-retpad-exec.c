/*
 * aarch64-retpad-exec.c - return probes with no stop on aarch64,
 * executed.  Built for aarch64 and run under qemu-aarch64 (or natively on
 * an arm64 host) by aarch64-retpad-exec.sh.
 *
 * Built from arch_ops only, as the agent builds them (struct
 * arch_ret_pad): the trampoline (emit_ret_exit) and, per probed
 * function, an entry pad:
 *
 *   pad:  emit_save_regs(pc = fn)
 *         emit_ret_entry(area, tramp)   push, x30 = tramp; what cannot be
 *                                       pushed goes on (counted): here
 *                                       straight to the restore
 *         emit_restore_regs()
 *         emit_jump_abs(fn)             the function itself (x16)
 *
 * The functions are called through their pad's address (blr), so the pad
 * sees x30 = a real return address, exactly as at a probed entry.  This
 * program plays the agent: it consumes the ring as pad.c does (seq ==
 * pos + 1: written; then seq = pos + nrecords) and checks each record:
 * pc and x30 fields = the trampoline, descriptor magic, the real return
 * address, the function's tag, the counter's ticks from entry to return
 * (CNTVCT_EL0: at tens of MHz a short call may take 0 ticks; never
 * wrapped) and its reading at the return (never backwards on one
 * thread), the tid, and x0 = what
 * the function returned (x9 = its argument, which f keeps there).
 *
 * Cases, each in a child under an alarm (a crash or a hang fails it):
 *   values      f(i) for 100 i through an assembly caller that notes its
 *               return address: returns correct, one record each, whose
 *               real address is the caller's, x30 back to it
 *   recording   f through a pad that also records its entry (a stand-in
 *               collector copies the frame's x30; emit_ret_stamp): the
 *               entry's frame keeps the caller's x30, the return is
 *               recorded
 *   recursion   r(10) calling itself through its pad: 11 records,
 *               innermost first, x0 0..10, the inner ones returning into r
 *   tailcall    t(i) saves x30 (the trampoline), restores it and
 *               branches to f's pad: one return, two records (f's, then
 *               t's), both with the real address of t's caller
 *   longjmp     10 rounds of j(5) longjmping out at depth 0, then f(7):
 *               no record of j, one right record of f each round, and
 *               the gone entries dropped by f's entry (link rule)
 *   latency     slow(ms) sleeps 2, 4, 8 ms: the record's ticks by
 *               CNTFRQ_EL0 at least that, and within the clock's time
 *               around the call
 *   deep        r(200): 126 entries pushed, 75 counted as fallbacks, the
 *               126 outermost returns recorded in order
 *   full        40 calls into an 8-record ring nobody drains meanwhile:
 *               the trampoline traps (BRK) when it is full, the handler
 *               drains and steps past the BRK, every return recorded
 *   threads     4 threads x 3000 calls, a consumer thread draining: each
 *               (thread, i) seen exactly once, each thread its own stack
 *
 * Exit 0 pass, 1 failure, 77 no RWX memory, 99 harness.
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "arch/arch.h"
#include "arch/aarch64/aarch64.h"

/* The agent's layout (aarch64_pad_layout, pad-int.h): 2 KiB records,
 * the block area from 1 KiB. */
#define OFF_SEQ 800
#define OFF_BASES 808
#define OFF_FRAME 528
#define OFF_BLOCKS 1024
#define RECORD_SHIFT 11
#define RING_OFF 4096

#define NT 4
#define PER 3000
#define ARCH_OPS (&aarch64_arch_ops)

struct rec {
	uint64_t x0, x9, x30, sp, pc, tag, ticks, tsc, ret;
	uint32_t tid, magic;
};

/* The BRK leaves the pc on itself: on past it, as the agent does. */
static void trap_past(void *ctx)
{
	ucontext_t *uc = ctx;

	uc->uc_mcontext.pc += 4;
}

static void child_init(void)
{
}

static const char *run_note(void)
{
	return "";
}

#include "tests/arch/retpad-exec.h"

static fn_t ps, pc_f;
fn_t pt_tail, pf_for_tail;
static const uint64_t t_tag = 0x4444, s_tag = 0x5555, c_tag = 0x6666;
/* What the recording pad's stand-in collector saw of the frame's x30. */
static volatile uint64_t entry_x30;

/*
 * f(i) = 3i + 1, keeping i in x9 for the record's check.
 * t(i): a prologue that saves x30 (the trampoline's address, after its
 * pad), i + 5, the epilogue, and a tail call into f's pad.
 * call_via(i, fn, &ret): calls fn(i) with blr and notes the address it
 * returns to.
 */
long f_asm(long i);
long t_asm(long i);
long call_via(long i, fn_t fn, uint64_t *ret);
__asm__(".text\n"
	".globl f_asm\n.type f_asm, %function\n"
	"f_asm:\n"
	"\tmov x9, x0\n"
	"\tadd x0, x0, x0, lsl #1\n"
	"\tadd x0, x0, #1\n"
	"\tret\n"
	".globl t_asm\n.type t_asm, %function\n"
	"t_asm:\n"
	"\tstp x29, x30, [sp, #-16]!\n"
	"\tmov x29, sp\n"
	"\tadd x0, x0, #5\n"
	"\tldp x29, x30, [sp], #16\n"
	"\tadrp x16, pf_for_tail\n"
	"\tldr x16, [x16, :lo12:pf_for_tail]\n"
	"\tbr x16\n"
	".globl call_via\n.type call_via, %function\n"
	"call_via:\n"
	"\tstp x29, x30, [sp, #-16]!\n"
	"\tmov x29, sp\n"
	"\tadr x3, 1f\n"
	"\tstr x3, [x2]\n"
	"\tblr x1\n"
	"1:\tldp x29, x30, [sp], #16\n"
	"\tret\n");

/* Sleeps `ms` milliseconds: the latency case's function. */
__attribute__((noinline)) static long slow(long ms)
{
	struct timespec ts = { 0, ms * 1000000 };

	nanosleep(&ts, NULL);
	return ms;
}

/*
 * An entry pad that also records the entry, as pad.c builds one:
 *
 *   emit_save_regs(pc = fn)
 *   emit_ret_entry(done_at NULL)      fallback: on to the restore
 *   ldr x5, [x19, #240] ; str x5, [&entry_x30]
 *                                     the stand-in collector: the
 *                                     frame's x30 as a record copies it
 *   emit_ret_stamp()                  the time again, x30 = trampoline
 *   emit_restore_regs() ; emit_jump_abs(fn)
 */
static fn_t make_rec_pad(uint8_t *at, size_t size, const void *fn, uint64_t tag)
{
	struct aarch64_out o = { at, size, 0, 0, false };
	size_t fb = 0;
	int m;
	struct arch_ret_pad rp = { .area = (uint64_t)area, .tramp = tramp,
				   .func_run = tag };

	if ((m = ops->emit_save_regs(at, size, (uint64_t)fn)) < 0)
		exit(99);
	o.len = (size_t)m;
	if ((m = ops->emit_ret_entry(at + o.len, size - o.len, &rp, &fb, NULL)) < 0)
		exit(99);
	fb += o.len;
	o.len += (size_t)m;
	aarch64_put32(&o, 0xf9407a65u);			/* ldr x5, [x19, #240] */
	aarch64_emit_mov_imm(&o, 6, (uint64_t)&entry_x30);
	aarch64_put32(&o, 0xf90000c5u);			/* str x5, [x6] */
	if (o.overflow || (m = ops->emit_ret_stamp(at + o.len, size - o.len)) < 0)
		exit(99);
	o.len += (size_t)m;
	if (ops->patch_branch(at, fb, o.len) < 0 ||
	    (m = ops->emit_restore_regs(at + o.len, size - o.len)) < 0)
		exit(99);
	o.len += (size_t)m;
	if ((m = ops->emit_jump_abs(at + o.len, size - o.len, (uint64_t)fn)) < 0)
		exit(99);
	o.len += (size_t)m;
	__builtin___clear_cache((char *)at, (char *)at + o.len);
	return (fn_t)(void *)at;
}

static void setup(unsigned int records)
{
	ring_map(records, 8 * 4096, false, 0, false);
	pf = make_pad(code + 4096, 1024, (const void *)f_asm, f_tag, false);
	pr = make_pad(code + 4096 + 1024, 1024, (const void *)r, r_tag, false);
	pj = make_pad(code + 4096 + 2048, 1024, (const void *)j, j_tag, false);
	pt_tail = make_pad(code + 4096 + 3072, 1024, (const void *)t_asm, t_tag, false);
	pf_for_tail = pf;
	ps = make_pad(code + 4096 + 4096, 1024, (const void *)slow, s_tag, false);
	pc_f = make_rec_pad(code + 4096 + 5120, 1024, (const void *)f_asm, c_tag);
}

/* take()'s arch part: the frame's x0, x9, x30, sp and pc, the counter
 * at the return. */
static void take_arch(struct rec *out, const uint8_t *rec)
{
	const uint64_t *fr = (const uint64_t *)(rec + OFF_FRAME);

	out->x0 = fr[0];
	out->x9 = fr[9];
	out->x30 = fr[30];
	out->sp = fr[31];
	out->pc = fr[32];
	memcpy(&out->tsc, rec + OFF_BLOCKS + RET_REC_TSC, 8);
}

/* The counter at the previous record's return (one thread's records:
 * never backwards). */
static uint64_t last_tsc;

static void check_rec(const char *c, const struct rec *x, uint64_t tag, uint64_t x0)
{
	if (x->pc != tramp || x->x30 != tramp || x->magic != RET_REC_MAGIC_VALUE ||
	    x->tag != tag || x->x0 != x0 || x->ticks > (1ull << 40) ||
	    x->tsc < last_tsc ||
	    x->tid != tid_now())
		fail("%s: record pc %#llx x30 %#llx magic %#x tag %#llx x0 %lld ticks %llu "
		     "tid %u; want tag %#llx x0 %lld", c, (unsigned long long)x->pc,
		     (unsigned long long)x->x30, x->magic,
		     (unsigned long long)x->tag, (long long)x->x0,
		     (unsigned long long)x->ticks, x->tid, (unsigned long long)tag,
		     (long long)x0);
}

static void case_values(void)
{
	struct rec x;
	int n = 0;

	for (long i = 0; i < 100; i++) {
		uint64_t ret = 0;
		long v = call_via(i, pf, &ret);
		if (v != 3 * i + 1)
			fail("values: f(%ld) = %ld", i, v);
		while (take(&x)) {
			check_rec("values", &x, f_tag, 3 * x.x9 + 1);
			if (x.x9 != (uint64_t)i || x.ret != ret)
				fail("values: record of f(%llu) returns to %#llx, want f(%ld) "
				     "returning to %#llx", (unsigned long long)x.x9,
				     (unsigned long long)x.ret, i, (unsigned long long)ret);
			n++;
		}
	}
	if (n != 100)
		fail("values: %d records, want 100", n);
	if (depth() != 0)
		fail("values: %u entries left", depth());
}

/* The pad that records the entry too: its record (the stand-in's view)
 * holds the caller's x30, the return goes through the trampoline. */
static void case_recording(void)
{
	struct rec x;

	for (long i = 0; i < 50; i++) {
		uint64_t ret = 0;
		entry_x30 = 0;
		long v = call_via(i, pc_f, &ret);
		if (v != 3 * i + 1)
			fail("recording: f(%ld) = %ld", i, v);
		if (entry_x30 != ret)
			fail("recording: the entry's frame has x30 %#llx, want the caller's %#llx",
			     (unsigned long long)entry_x30, (unsigned long long)ret);
		if (!take(&x)) {
			fail("recording: no return record of f(%ld)", i);
			continue;
		}
		check_rec("recording", &x, c_tag, 3 * (uint64_t)i + 1);
		if (x.ret != ret)
			fail("recording: return to %#llx, want %#llx", (unsigned long long)x.ret,
			     (unsigned long long)ret);
	}
	if (take(&x))
		fail("recording: more records than calls");
	if (depth() != 0)
		fail("recording: %u entries left", depth());
}

static void case_recursion(void)
{
	struct rec x;
	long v = pr(10);

	if (v != 10)
		fail("recursion: r(10) = %ld", v);
	uint64_t sp_prev = 0;
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
		if (k && x.sp <= sp_prev)
			fail("recursion: return %llu at sp %#llx, not above the inner one's",
			     (unsigned long long)k, (unsigned long long)x.sp);
		sp_prev = x.sp;
	}
	if (take(&x))
		fail("recursion: more records than calls");
	if (depth() != 0)
		fail("recursion: %u entries left", depth());
}

static void case_tailcall(void)
{
	struct rec x, y;

	for (long i = 0; i < 20; i++) {
		uint64_t ret = 0;
		long v = call_via(i, pt_tail, &ret);
		if (v != 3 * (i + 5) + 1)
			fail("tailcall: t(%ld) = %ld", i, v);
		if (!take(&x) || !take(&y)) {
			fail("tailcall: t(%ld): fewer than 2 records", i);
			return;
		}
		check_rec("tailcall f", &x, f_tag, 3 * (uint64_t)(i + 5) + 1);
		check_rec("tailcall t", &y, t_tag, 3 * (uint64_t)(i + 5) + 1);
		if (x.ret != ret || y.ret != ret || x.sp != y.sp)
			fail("tailcall: returns to %#llx and %#llx at sp %#llx / %#llx, want %#llx",
			     (unsigned long long)x.ret, (unsigned long long)y.ret,
			     (unsigned long long)x.sp, (unsigned long long)y.sp,
			     (unsigned long long)ret);
		if (take(&x))
			fail("tailcall: a third record");
	}
	if (depth() != 0)
		fail("tailcall: %u entries left", depth());
}

static void case_longjmp(void)
{
	struct rec x;

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
		/* f's entry, above j's frames, dropped their entries. */
		if (depth() != 0)
			fail("longjmp: round %d: %u entries left", round, depth());
	}
}

/* The ticks of CNTVCT_EL0 from entry to return, by CNTFRQ_EL0, against
 * CLOCK_MONOTONIC around the call. */
static void case_latency(void)
{
	struct rec x;
	uint64_t frq;

	__asm__ volatile("mrs %0, cntfrq_el0" : "=r"(frq));
	for (long ms = 2; ms <= 8; ms *= 2) {
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		long v = ps(ms);
		clock_gettime(CLOCK_MONOTONIC, &b);
		double wall = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
		if (v != ms || !take(&x)) {
			fail("latency: slow(%ld) = %ld, or no record", ms, v);
			continue;
		}
		check_rec("latency", &x, s_tag, (uint64_t)ms);
		double ns = frq ? (double)x.ticks * 1e9 / (double)frq : 0;
		printf("  latency: slow(%ld): %.0f ns by the counter (%llu Hz), %.0f ns around\n",
		       ms, ns, (unsigned long long)frq, wall);
		/* Slept at least ms; the counter's span lies inside the
		 * clock's (one tick of slack at each end). */
		if (ns < (double)ms * 1e6 || ns > wall + 2e9 / (double)frq)
			fail("latency: slow(%ld) took %.0f ns by the counter, %.0f around",
			     ms, ns, wall);
	}
}

/* threads_drain's view of a record: f keeps its argument in x9. */
static uint64_t rec_arg(const struct rec *x)
{
	return x->x9;
}

static uint64_t rec_value(const struct rec *x)
{
	return x->x0;
}

/* threads_drain, and one slot claimed per thread. */
static void case_threads(void)
{
	threads_drain();
	unsigned int slots = 0;
	for (unsigned int i = 0; i < RET_PAD_SLOTS; i++)
		slots += *(uint64_t *)(area + 4096 + (size_t)i * RET_PAD_SLOT_SIZE) != 0;
	if (slots != NT)
		fail("threads: %u slots claimed, want %d", slots, NT);
}

int main(void)
{
	static const struct retpad_case cases[] = {
		{ "values", case_values, 256 },
		{ "recording", case_recording, 256 },
		{ "recursion", case_recursion, 256 },
		{ "tailcall", case_tailcall, 256 },
		{ "longjmp", case_longjmp, 256 },
		{ "deep", case_deep, 256 },
		{ "latency", case_latency, 256 },
		{ "full", case_full, 8 },
		{ "threads", case_threads, 1024 },
		{ "hist", case_hist, 256 },
		{ "hist-threads", case_hist_threads, 256 },
	};

	setvbuf(stdout, NULL, _IONBF, 0);
	return run_cases(cases, sizeof(cases) / sizeof(cases[0]));
}
