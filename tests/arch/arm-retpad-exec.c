/*
 * arm-retpad-exec.c - return probes with no stop on 32-bit ARM,
 * executed.  Built for armhf and run under qemu-arm-static (or natively
 * on a 32-bit ARM host) by arm-retpad-exec.sh.
 *
 * Built from arch_ops only, as the agent builds them (struct
 * arch_ret_pad): the trampoline (emit_ret_exit) and, per probed
 * function, an entry pad:
 *
 *   pad:  emit_save_regs(pc = fn, bit 0 for a Thumb fn)
 *         emit_ret_entry(area, tramp)   push, lr = tramp; what cannot be
 *                                       pushed goes on (counted): here
 *                                       straight to the restore
 *         emit_restore_regs()
 *         emit_jump_abs(fn)             the function itself (interworking)
 *
 * The functions are called through their pad's address from an A32 or a
 * Thumb caller (blx), so the pad sees lr = a real return address with
 * the caller's set in bit 0, exactly as at a probed entry.  This program
 * plays the agent: it consumes the ring as pad.c does (seq == pos + 1:
 * written; then seq = pos + nrecords) and checks each record: pc and lr
 * fields = the trampoline, descriptor magic, the real return address
 * (inside the caller, its set's bit), the function's tag, the counter's
 * ticks (never wrapped) and its reading at the return (never backwards
 * on one thread), the tid, and r0 = what the function returned.
 *
 * The counter: qemu-user does not give user mode the generic timer (the
 * `mrrc p15, 1, rX, rY, c14` is undefined there), so a SIGILL handler
 * stands in for the kernel that allows it: it reads CLOCK_MONOTONIC in
 * nanoseconds into the two registers and steps past.  On a machine that
 * allows it the CPU answers and the handler never runs.
 *
 * Cases, each in a child under an alarm (a crash or a hang fails it):
 *   values      f(i) for 50 i, A32 and Thumb functions from A32 and
 *               Thumb callers: returns correct, one record each, whose
 *               real address is in the caller with its set's bit
 *   recording   f through a pad that also records its entry (a stand-in
 *               collector copies the frame's lr; emit_ret_stamp): the
 *               entry's frame keeps the caller's lr, the return recorded
 *   recursion   r(10) (A32 and Thumb) calling itself through its pad:
 *               11 records, innermost first, r0 0..10
 *   latency     slow(ms) sleeps 2, 4, 8 ms: the record's ticks (ns here)
 *               at least that, and within the clock's time around it
 *   deep        r(200): 126 entries pushed, 75 counted as fallbacks, the
 *               126 outermost returns recorded in order
 *   full        40 calls into an 8-record ring nobody drains meanwhile:
 *               the trampoline traps (udf) when it is full, the handler
 *               drains and steps past it (only there: anywhere else
 *               fails), every return recorded in order
 *   threads     4 threads x 2000 calls (Thumb code calling an A32
 *               function's pad), this thread draining: each (thread, i)
 *               seen exactly once, with its thread's tid
 *   hist, hist-threads
 *               the trampoline's own histograms (retpad-exec.h)
 *   hist-ns     the histogram's arithmetic on counter readings the
 *               handler makes up: for each (ticks, ns per tick) of a
 *               table, two returns of f add twice the ns the table says
 *               to SUM and 2 to the bucket it names, every other word as
 *               it was (words preset to 0xffffffff: the carries into the
 *               high halves too)
 *
 * The area, ring and trampoline, the plain entry pads, the ring's
 * consumer, deep, full, the threads' producers and the hist cases are
 * retpad-exec.h's, shared with x86-64 and aarch64; full and deep there
 * also check the waits counted (RET_PAD_LOST) and that no return was an
 * orphan.
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
#include "arch/arm/arm.h"

/* A record layout like the agent's (off_frame past the 264-byte image). */
#define OFF_SEQ 400
#define OFF_BASES 408
#define OFF_FRAME 264
#define OFF_BLOCKS 1024
#define RECORD_SHIFT 11
#define RING_OFF 4096

#define NT 4
#define PER 2000
#define ARCH_OPS (&arm_arch_ops)
/* A Thumb function's pad is entered in Thumb: its address has fn's bit 0. */
#define PAD_ADDR(at, fn) ((uintptr_t)(at) | ((uintptr_t)(fn) & 1))

struct rec {
	uint32_t r0, lr, sp, pc;
	uint64_t tag, ticks, tsc, ret;
	uint32_t tid, magic;
};

static void trap_past(void *ctx);
static void child_init(void);

static const char *run_note(void)
{
	return "";
}

#include "tests/arch/retpad-exec.h"

static volatile unsigned long emulated;
static fn_t pfa, pft, pra, prt, ps, pcf;
static const uint64_t fa_tag = 0x1111 | 7ull << 48, ft_tag = 0x2222, ra_tag = 0x3333,
		      rt_tag = 0x4444 | 0xffffull << 48, s_tag = 0x5555, c_tag = 0x6666;
static volatile uint32_t entry_lr;

/* The trampoline's udf #16, Linux's breakpoint (SIGTRAP), leaves the pc
 * on itself: on past it, as the agent does.  Nowhere else. */
static void trap_past(void *ctx)
{
	ucontext_t *uc = ctx;

	if (uc->uc_mcontext.arm_pc != trap_at ||
	    *(const uint32_t *)uc->uc_mcontext.arm_pc != ARM_BKPT_A32) {
		(void)!write(2, "ERROR: SIGTRAP not at the trampoline's wait\n", 44);
		_exit(99);
	}
	uc->uc_mcontext.arm_pc += 4;
}

/* hist-ns: the readings the handler gives instead, in order, while
 * any are left. */
static const uint64_t *script;
static volatile unsigned int script_left;

/* CNTVCT where user mode may not read it: nanoseconds of
 * CLOCK_MONOTONIC, or the next of the script's readings. */
static void sigill(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	unsigned long *g = &uc->uc_mcontext.arm_r0;
	uint32_t w = *(const uint32_t *)uc->uc_mcontext.arm_pc;
	struct timespec ts;

	(void)sig;
	(void)si;
	if ((uc->uc_mcontext.arm_cpsr & ARM_PSR_T) || (w & 0xfff00fffu) != 0xec500f1eu) {
		(void)!write(2, "ERROR: SIGILL not at mrrc CNTVCT\n", 33);
		_exit(99);
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	if (script_left) {
		ns = *script++;
		script_left--;
	}
	g[w >> 12 & 15] = (uint32_t)ns;
	g[w >> 16 & 15] = (uint32_t)(ns >> 32);
	uc->uc_mcontext.arm_pc += 4;
	emulated++;
}

static void say_emulated(void)
{
	printf("  %lu counter reads emulated\n", emulated);
}

/* Each case's child: the counter's stand-in, and its count said at the
 * end. */
static void child_init(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = sigill;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGILL, &sa, NULL) < 0 || atexit(say_emulated))
		exit(99);
}

__attribute__((target("arm"), noinline)) long f_arm(long i)
{
	return 3 * i + 1;
}

__attribute__((target("thumb"), noinline)) long f_thumb(long i)
{
	return 3 * i + 2;
}

__attribute__((target("arm"), noinline)) long r_arm(long n)
{
	long v = n ? pra(n - 1) + 1 : 0;
	__asm__ volatile("" ::: "memory");
	return v;
}

__attribute__((target("thumb"), noinline)) long r_thumb(long n)
{
	long v = n ? prt(n - 1) + 1 : 0;
	__asm__ volatile("" ::: "memory");
	return v;
}

__attribute__((noinline)) long slow(long ms)
{
	struct timespec ts = { 0, ms * 1000000 };

	nanosleep(&ts, NULL);
	return ms;
}

/* The callers: blx to the pad, something after it (no tail call). */
__attribute__((target("arm"), noinline)) long call_arm(fn_t p, long i)
{
	long v = p(i);
	__asm__ volatile("" ::: "memory");
	return v + 1000;
}

__attribute__((target("thumb"), noinline)) long call_thumb(fn_t p, long i)
{
	long v = p(i);
	__asm__ volatile("" ::: "memory");
	return v + 1000;
}

static size_t put(size_t size, size_t n, int m)
{
	if (m < 0 || (size_t)m > size - n)
		exit(99);
	return n + (size_t)m;
}

/*
 * An entry pad that also records the entry, as pad.c builds one:
 *
 *   emit_save_regs(pc = fn)
 *   emit_ret_entry(done_at NULL)      fallback: on to the stamp
 *   ldr r5, [r4, #112] ; movw/movt r6, #&entry_lr ; str r5, [r6]
 *     (clobbers r0-r3, r5-r12 first: the collector uses them all)
 *                                     the stand-in collector: the frame's
 *                                     lr as a record copies it
 *   emit_ret_stamp()                  the time again, lr = trampoline
 *   emit_restore_regs() ; emit_jump_abs(fn)
 */
static fn_t make_rec_pad(uint8_t *at, size_t size, uintptr_t fn, uint64_t tag)
{
	struct arm_out o = { at, size, 0, 0, false };
	size_t fb = 0, e;
	uint32_t a = (uint32_t)(uintptr_t)&entry_lr;
	struct arch_ret_pad rp = { .area = (uintptr_t)area, .tramp = tramp, .func_run = tag };

	o.len = put(size, 0, ops->emit_save_regs(at, size, fn));
	e = o.len;
	o.len = put(size, o.len, ops->emit_ret_entry(at + o.len, size - o.len, &rp, &fb, NULL));
	for (unsigned int r = 0; r <= 12; r++)
		if (r != 4)
			arm_put32(&o, 0xe3a00000u | r << 12 | 0x5a);	/* mov rN, #0x5a */
	arm_put32(&o, 0xe5945070u);				/* ldr r5, [r4, #112] */
	arm_put32(&o, 0xe3006000u | (a >> 12 & 0xf) << 16 | (a & 0xfff));
	arm_put32(&o, 0xe3406000u | (a >> 28) << 16 | (a >> 16 & 0xfff));
	arm_put32(&o, 0xe5865000u);				/* str r5, [r6] */
	if (o.overflow || ops->patch_branch(at, e + fb, o.len) < 0)
		exit(99);
	o.len = put(size, o.len, ops->emit_ret_stamp(at + o.len, size - o.len));
	o.len = put(size, o.len, ops->emit_restore_regs(at + o.len, size - o.len));
	o.len = put(size, o.len, ops->emit_jump_abs(at + o.len, size - o.len, fn));
	__builtin___clear_cache((char *)at, (char *)at + o.len);
	return (fn_t)(void *)((uintptr_t)at | (fn & 1));
}

static void setup(unsigned int records)
{
	ring_map(records, 8 * 4096, false, 0, false);
	/* The shared cases' pads (f, r, j), then A32 and Thumb ones. */
	pf = make_pad(code + 4096, 1024, (const void *)f_arm, f_tag, false);
	pr = make_pad(code + 4096 + 1024, 1024, (const void *)r, r_tag, false);
	pfa = make_pad(code + 4096 + 2048, 1024, (const void *)f_arm, fa_tag, false);
	pft = make_pad(code + 4096 + 3072, 1024, (const void *)f_thumb, ft_tag, false);
	pra = make_pad(code + 4096 + 4096, 1024, (const void *)r_arm, ra_tag, false);
	prt = make_pad(code + 4096 + 5120, 1024, (const void *)r_thumb, rt_tag, false);
	ps = make_pad(code + 4096 + 6144, 1024, (const void *)slow, s_tag, false);
	pcf = make_rec_pad(code + 4096 + 7168, 1024, (uintptr_t)f_arm, c_tag);
}

/* take()'s arch part: the frame's r0, sp, lr and pc (the low halves of
 * its words), the counter at the return. */
static void take_arch(struct rec *out, const uint8_t *rec)
{
	const uint64_t *fr = (const uint64_t *)(rec + OFF_FRAME);

	out->r0 = (uint32_t)fr[0];
	out->sp = (uint32_t)fr[13];
	out->lr = (uint32_t)fr[14];
	out->pc = (uint32_t)fr[15];
	memcpy(&out->tsc, rec + OFF_BLOCKS + RET_REC_TSC, 8);
}

static uint64_t last_tsc;

/* leaf: the function returned with `bx lr`, so lr is the trampoline;
 * else (`pop {..., pc}`) lr is whatever the function left there.  Set
 * by the cases whose functions all are (each case runs in its child). */
static bool leaf;

/* One record of the calling thread: the trampoline's pc (and lr, for a
 * leaf), the magic, the tag, r0 = what the function returned, ticks
 * never wrapped, the counter never backwards. */
static void check_rec(const char *c, const struct rec *x, uint64_t tag, uint64_t r0)
{
	if (x->pc != tramp || (leaf && x->lr != tramp) || x->magic != RET_REC_MAGIC_VALUE ||
	    x->tag != tag || x->r0 != r0 || x->ticks > (1ull << 40) || x->tsc < last_tsc ||
	    x->tid != tid_now())
		fail("%s: record pc %#x lr %#x magic %#x tag %#llx r0 %u ticks %llu tsc %llu "
		     "(last %llu) tid %u; want pc (lr if leaf) = %#llx, tag %#llx, r0 %llu", c,
		     x->pc, x->lr, x->magic, (unsigned long long)x->tag, x->r0,
		     (unsigned long long)x->ticks, (unsigned long long)x->tsc,
		     (unsigned long long)last_tsc, x->tid, (unsigned long long)tramp,
		     (unsigned long long)tag, (unsigned long long)r0);
	last_tsc = x->tsc;
}

/* The real address: inside `caller` (within 256 bytes), with its set. */
static void check_ret(const char *c, const struct rec *x, uintptr_t caller)
{
	uintptr_t start = caller & ~(uintptr_t)1;

	if (x->ret < start || x->ret >= start + 256 || (x->ret & 1) != (caller & 1))
		fail("%s: real return address %#llx, want in %#lx..+256 with bit 0 = %u", c,
		     (unsigned long long)x->ret, (unsigned long)start, (unsigned)(caller & 1));
}

/* The calling thread's depth, its slot found by TPIDRURO hashed as the
 * agent hashes it (not by its tid, as depth() does): no slot there,
 * 0xffffffff. */
static uint32_t slot_depth(void)
{
	uint32_t tp, i;

	__asm__ volatile("mrc p15, 0, %0, c13, c0, 3" : "=r"(tp));
	i = (uint32_t)(((uint64_t)tp * RET_PAD_HASH) >> RET_PAD_HASH_SHIFT);
	for (int k = 0; k < RET_PAD_SLOTS; k++, i = (i + 1) & (RET_PAD_SLOTS - 1)) {
		uint8_t *s = area + 4096 + (size_t)i * RET_PAD_SLOT_SIZE;
		if (*(uint32_t *)s == tp)
			return *(uint32_t *)(s + RET_SLOT_DEPTH);
		if (!*(uint32_t *)s)
			break;
	}
	return 0xffffffffu;
}

static void case_values(void)
{
	static const struct {
		const char *name;
		fn_t *pad;
		uint64_t tag;
		long add;
	} v[] = {
		{ "arm->arm", &pfa, fa_tag, 1 }, { "arm->thumb", &pft, ft_tag, 2 },
		{ "thumb->arm", &pfa, fa_tag, 1 }, { "thumb->thumb", &pft, ft_tag, 2 },
	};
	struct rec x;

	leaf = true;

	for (int k = 0; k < 4; k++) {
		long (*call)(fn_t, long) = k < 2 ? call_arm : call_thumb;
		for (long i = 0; i < 50; i++) {
			long got = call(*v[k].pad, i);
			if (got != 3 * i + v[k].add + 1000)
				fail("values %s: f(%ld) returned %ld, want %ld", v[k].name, i, got,
				     3 * i + v[k].add + 1000);
			if (!take(&x)) {
				fail("values %s: no record for f(%ld)", v[k].name, i);
				continue;
			}
			check_rec(v[k].name, &x, v[k].tag, (uint32_t)(3 * i + v[k].add));
			check_ret(v[k].name, &x, (uintptr_t)call);
			if (take(&x))
				fail("values %s: a second record for f(%ld)", v[k].name, i);
		}
	}
	if (slot_depth() != 0)
		fail("values: %u entries left on the stack", slot_depth());
}

static void case_recording(void)
{
	struct rec x;

	leaf = true;

	for (long i = 0; i < 20; i++) {
		entry_lr = 0;
		long got = call_thumb(pcf, i);
		if (got != 3 * i + 1 + 1000)
			fail("recording: f(%ld) returned %ld", i, got);
		uintptr_t c = (uintptr_t)call_thumb & ~(uintptr_t)1;
		if (entry_lr < c || entry_lr >= c + 256 || !(entry_lr & 1))
			fail("recording: the entry's frame had lr %#x, want the caller's (in %#lx)",
			     entry_lr, (unsigned long)c);
		if (!take(&x)) {
			fail("recording: no record for f(%ld)", i);
			continue;
		}
		check_rec("recording", &x, c_tag, (uint32_t)(3 * i + 1));
		check_ret("recording", &x, (uintptr_t)call_thumb);
	}
	if (depth() != 0)
		fail("recording: %u entries left", depth());
}

static void case_recursion(void)
{
	struct rec x;

	for (int t = 0; t < 2; t++) {
		const char *name = t ? "recursion thumb" : "recursion arm";
		long got = call_arm(t ? prt : pra, 10);
		if (got != 1010)
			fail("%s: r(10) returned %ld, want 10 + 1000", name, got);
		for (uint32_t d = 0; d <= 10; d++) {
			if (!take(&x)) {
				fail("%s: no record %u", name, d);
				break;
			}
			check_rec(name, &x, t ? rt_tag : ra_tag, d);
			if (d == 10)
				check_ret(name, &x, (uintptr_t)call_arm);
			else
				check_ret(name, &x, t ? (uintptr_t)r_thumb : (uintptr_t)r_arm);
		}
		if (take(&x))
			fail("%s: more than 11 records", name);
		if (depth() != 0)
			fail("%s: %u entries left", name, depth());
	}
}

static void case_latency(void)
{
	struct rec x;
	struct timespec a, b;

	for (long ms = 2; ms <= 8; ms *= 2) {
		clock_gettime(CLOCK_MONOTONIC, &a);
		long got = call_arm(ps, ms);
		clock_gettime(CLOCK_MONOTONIC, &b);
		uint64_t around = (uint64_t)(b.tv_sec - a.tv_sec) * 1000000000u +
				  (uint64_t)(b.tv_nsec - a.tv_nsec);
		if (got != ms + 1000 || !take(&x)) {
			fail("latency: slow(%ld) returned %ld, or no record", ms, got);
			continue;
		}
		check_rec("latency", &x, s_tag, (uint32_t)ms);
		/* The counter is in ns only where the handler stands in. */
		if (emulated && (x.ticks < (uint64_t)ms * 1000000u || x.ticks > around))
			fail("latency: slow(%ld): %llu ns recorded, want >= %ld ms and <= %llu",
			     ms, (unsigned long long)x.ticks, ms, (unsigned long long)around);
		printf("latency: slow(%ld) %llu ticks (%llu ns around)\n", ms,
		       (unsigned long long)x.ticks, (unsigned long long)around);
	}
}

/*
 * hist-ns: f's returns in f's histogram, the counter as each row says
 * (the entry's reading, then the return's, twice).  The ns and the
 * bucket are worked out by hand, each row for a part of the sum
 * ns = ticks * MULT >> 32 (bits 32..95 of a 64 x 64 product) or of the
 * bucket's choice; ticks a negative 64-bit value counts 0 ns.
 */
static void case_hist_ns(void)
{
	static const struct {
		const char *what;
		uint64_t t0, t1;	/* the entry's reading, the return's */
		uint64_t mult;		/* ns per tick, 32.32 */
		uint64_t ns;
		int bucket;		/* k of [2^k, 2^(k+1)), -1: ZERO */
	} row[] = {
		{ "1 ns a tick", 5000, 6000, 1ull << 32, 1000, 9 },
		{ "1.5 ns a tick, rounded down", 7, 10, 3ull << 31, 4, 2 },
		{ "ticks' high word x MULT's low", 0, 1ull << 32, 1ull << 31, 1ull << 31, 31 },
		{ "the low words' product's high word", 1, 0x100000000ull, 0xffffffffull,
		  0xfffffffeull, 31 },
		{ "every partial product, carried", 0, 0x1ffffffffull, 0x1ffffffffull,
		  0x3fffffffcull, 33 },
		{ "ticks' high word x MULT's high", 100, 100 + (1ull << 40) + 5, 3ull << 32,
		  3 * (1ull << 40) + 15, 41 },
		{ "above the last bucket's start", 0, 1ull << 60, 4ull << 32, 1ull << 62, 60 },
		{ "1 ns", 41, 42, 1ull << 32, 1, 0 },
		{ "less than 1 ns", 41, 42, (1ull << 32) - 1, 0, -1 },
		{ "the counter back by 1", 1000, 999, 1ull << 32, 0, -1 },
		{ "the counter back by 2^63", 1ull << 63, 0, 1ull << 32, 0, -1 },
	};
	const uint64_t pre = 0xffffffffull;
	uint64_t *h = hist_at(0);
	struct rec x;

	for (size_t i = 0; i < sizeof(row) / sizeof(row[0]); i++) {
		uint64_t t[4] = { row[i].t0, row[i].t1, row[i].t0, row[i].t1 };
		hist_use(0, f_tag);
		for (unsigned int w = RET_HIST_SUM / 8; w < RET_HIST_SIZE / 8; w++)
			h[w] = pre;
		hist_on(1, row[i].mult);
		script = t;
		script_left = 4;
		for (long c = 0; c < 2; c++)
			if (pf(c) != 3 * c + 1)
				fail("hist-ns %s: f(%ld)", row[i].what, c);
		if (script_left == 4) {
			printf("  hist-ns: the CPU reads the counter: no made-up readings\n");
			return;
		}
		if (script_left)
			fail("hist-ns %s: %u of 4 readings left", row[i].what, script_left);
		script_left = 0;
		if (take(&x))
			fail("hist-ns %s: a record of f, whose returns its histogram counts",
			     row[i].what);
		if (h[RET_HIST_SUM / 8] != pre + 2 * row[i].ns)
			fail("hist-ns %s: SUM %#llx, want %#llx + 2 x %#llx", row[i].what,
			     (unsigned long long)h[RET_HIST_SUM / 8], (unsigned long long)pre,
			     (unsigned long long)row[i].ns);
		for (int k = -1; k < RET_HIST_BUCKETS; k++) {
			uint64_t got = h[RET_HIST_B / 8 + k];	/* k = -1: ZERO */
			uint64_t want = pre + (k == row[i].bucket ? 2 : 0);
			if (got != want)
				fail("hist-ns %s: bucket %d holds %#llx, want %#llx", row[i].what, k,
				     (unsigned long long)got, (unsigned long long)want);
		}
	}
}

/* threads_drain's view of a record: f(v) returned r0 = 3v + 1. */
static uint64_t rec_arg(const struct rec *x)
{
	return (x->r0 - 1) / 3;
}

static uint64_t rec_value(const struct rec *x)
{
	return x->r0;
}

int main(void)
{
	static const struct retpad_case cases[] = {
		{ "values", case_values, 512 },
		{ "recording", case_recording, 512 },
		{ "recursion", case_recursion, 512 },
		{ "latency", case_latency, 512 },
		{ "deep", case_deep, 512 },
		{ "full", case_full, 8 },
		{ "threads", threads_drain, 8192 },
		{ "hist", case_hist, 512 },
		{ "hist-threads", case_hist_threads, 512 },
		{ "hist-ns", case_hist_ns, 512 },
	};
	int r;

	setvbuf(stdout, NULL, _IOLBF, 0);
	r = run_cases(cases, sizeof(cases) / sizeof(cases[0]));
	printf("%s\n", r ? "FAIL" : "PASS");
	return r;
}
