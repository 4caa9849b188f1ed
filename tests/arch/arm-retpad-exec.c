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
 *               drains and steps past it, every return recorded in order
 *   threads     4 threads x 2000 calls, a consumer thread draining: each
 *               (thread, i) seen exactly once, each thread its own stack
 *
 * Exit 0 pass, 1 failure, 77 no RWX memory, 99 harness.
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <pthread.h>
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

static const struct arch_ops *ops = &arm_arch_ops;
static int failures;

static uint8_t *area, *ring, *code;
static unsigned int nrecords;
static uint32_t tramp;
static uint64_t ring_pos;
static volatile unsigned long emulated;
static uint32_t trap_pc;
static volatile long traps;
static uint32_t full_r0[64];
static volatile int full_n;

typedef long (*fn_t)(long);
static fn_t pfa, pft, pra, prt, ps, pcf;
static const uint64_t fa_tag = 0x1111 | 7ull << 48, ft_tag = 0x2222, ra_tag = 0x3333,
		      rt_tag = 0x4444 | 0xffffull << 48, s_tag = 0x5555, c_tag = 0x6666;
static volatile uint32_t entry_lr;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("FAIL: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
	failures++;
}

struct rec {
	uint32_t r0, lr, sp, pc;
	uint64_t tag, ticks, tsc, ret;
	uint32_t tid, magic;
};

static bool take(struct rec *out);

/* CNTVCT where user mode may not read it: nanoseconds of CLOCK_MONOTONIC;
 * and the trampoline's wait for room (the full case). */
static void sigill(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	unsigned long *g = &uc->uc_mcontext.arm_r0;
	uint32_t w = *(const uint32_t *)uc->uc_mcontext.arm_pc;
	struct timespec ts;

	(void)sig;
	(void)si;
	if (trap_pc && uc->uc_mcontext.arm_pc == trap_pc && w == ARM_BKPT_A32) {
		/* The trampoline waits for room: drain, as the agent does. */
		struct rec x;
		while (take(&x))
			if (full_n < 64)
				full_r0[full_n++] = x.r0;
		uc->uc_mcontext.arm_pc += 4;
		traps++;
		return;
	}
	if ((uc->uc_mcontext.arm_cpsr & ARM_PSR_T) || (w & 0xfff00fffu) != 0xec500f1eu) {
		(void)!write(2, "ERROR: SIGILL not at mrrc CNTVCT\n", 33);
		_exit(99);
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	g[w >> 12 & 15] = (uint32_t)ns;
	g[w >> 16 & 15] = (uint32_t)(ns >> 32);
	uc->uc_mcontext.arm_pc += 4;
	emulated++;
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

/* One entry pad for `fn` (bit 0: Thumb), tagged `tag`, at `at`: its
 * address (bit 0 as fn's: a Thumb pad starts in Thumb). */
static fn_t make_pad(uint8_t *at, size_t size, uintptr_t fn, uint64_t tag)
{
	size_t n = 0, fb = 0, done = 0;
	struct arch_ret_pad rp = { .area = (uintptr_t)area, .tramp = tramp, .func_run = tag };

	n = put(size, n, ops->emit_save_regs(at, size, fn));
	size_t e = n;
	n = put(size, n, ops->emit_ret_entry(at + n, size - n, &rp, &fb, &done));
	if (ops->patch_branch(at, e + fb, n) < 0 || ops->patch_branch(at, e + done, n) < 0)
		exit(99);
	n = put(size, n, ops->emit_restore_regs(at + n, size - n));
	n = put(size, n, ops->emit_jump_abs(at + n, size - n, fn));
	__builtin___clear_cache((char *)at, (char *)at + n);
	return (fn_t)(void *)((uintptr_t)at | (fn & 1));
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
	size_t ring_size = RING_OFF + ((size_t)records << RECORD_SHIFT);
	size_t tr_off = 0;
	int m;
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = sigill;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	/* the trampoline's udf #16 is Linux's breakpoint: SIGTRAP */
	if (sigaction(SIGILL, &sa, NULL) < 0 || sigaction(SIGTRAP, &sa, NULL) < 0)
		exit(99);
	nrecords = records;
	area = mmap(NULL, RET_PAD_AREA_SIZE + 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ring = mmap(NULL, ring_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	code = mmap(NULL, 8 * 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED || ring == MAP_FAILED)
		exit(99);
	if (code == MAP_FAILED) {
		printf("SKIP: no RWX memory\n");
		exit(77);
	}
	*(uint64_t *)(area + RET_PAD_ON) = 1;
	for (unsigned int i = 0; i < records; i++)
		*(uint64_t *)(ring + RING_OFF + ((size_t)i << RECORD_SHIFT) + OFF_SEQ) = i;
	tramp = (uint32_t)(uintptr_t)code;
	struct arch_ret_pad rp = {
		.area = (uintptr_t)area, .tramp = tramp,
		.ring = { .ring = (uintptr_t)ring, .off_records = RING_OFF,
			  .record_shift = RECORD_SHIFT, .nrecords = records,
			  .off_seq = OFF_SEQ, .off_bases = OFF_BASES, .off_frame = OFF_FRAME,
			  .off_blocks = OFF_BLOCKS, .blocks_size = 1024 },
	};
	if ((m = ops->emit_ret_exit(code, 4096, &rp, &tr_off)) < 0)
		exit(99);
	trap_pc = tramp + (uint32_t)tr_off;
	__builtin___clear_cache((char *)code, (char *)code + m);
	pfa = make_pad(code + 4096, 1024, (uintptr_t)f_arm, fa_tag);
	pft = make_pad(code + 4096 + 1024, 1024, (uintptr_t)f_thumb, ft_tag);
	pra = make_pad(code + 4096 + 2048, 1024, (uintptr_t)r_arm, ra_tag);
	prt = make_pad(code + 4096 + 3072, 1024, (uintptr_t)r_thumb, rt_tag);
	ps = make_pad(code + 4096 + 4096, 1024, (uintptr_t)slow, s_tag);
	pcf = make_rec_pad(code + 4096 + 5120, 1024, (uintptr_t)f_arm, c_tag);
}


/* The next record, as the agent's drain takes it; false: none yet. */
static bool take(struct rec *out)
{
	uint8_t *rec = ring + RING_OFF + ((size_t)(ring_pos & (nrecords - 1)) << RECORD_SHIFT);
	uint64_t *seq = (uint64_t *)(rec + OFF_SEQ);
	uint64_t head = __atomic_load_n((uint64_t *)ring, __ATOMIC_ACQUIRE);

	/* The pads write the low halves of the head and seq. */
	if ((uint32_t)ring_pos == (uint32_t)head ||
	    (uint32_t)__atomic_load_n(seq, __ATOMIC_ACQUIRE) != (uint32_t)(ring_pos + 1))
		return false;
	const uint64_t *fr = (const uint64_t *)(rec + OFF_FRAME);
	const uint8_t *d = rec + OFF_BLOCKS;
	out->r0 = (uint32_t)fr[0];
	out->sp = (uint32_t)fr[13];
	out->lr = (uint32_t)fr[14];
	out->pc = (uint32_t)fr[15];
	memcpy(&out->tag, d + RET_REC_FUNC, 8);
	memcpy(&out->ticks, d + RET_REC_TICKS, 8);
	memcpy(&out->tsc, d + RET_REC_TSC, 8);
	memcpy(&out->tid, d + RET_REC_TID, 4);
	memcpy(&out->magic, d + RET_REC_MAGIC, 4);
	memcpy(&out->ret, d + RET_REC_RET, 8);
	__atomic_store_n(seq, ring_pos + nrecords, __ATOMIC_RELEASE);
	ring_pos++;
	return true;
}

static uint64_t last_tsc;

/* leaf: the function returned with `bx lr`, so lr is the trampoline;
 * else (`pop {..., pc}`) lr is whatever the function left there. */
static bool leaf;

static void check_rec(const char *c, const struct rec *x, uint64_t tag, uint32_t r0)
{
	if (x->pc != tramp || (leaf && x->lr != tramp) || x->magic != RET_REC_MAGIC_VALUE ||
	    x->tag != tag || x->r0 != r0 || x->ticks > (1ull << 40) || x->tsc < last_tsc ||
	    x->tid != (uint32_t)syscall(SYS_gettid))
		fail("%s: record pc %#x lr %#x magic %#x tag %#llx r0 %u ticks %llu tsc %llu "
		     "(last %llu) tid %u; want pc (lr if leaf) = %#x, tag %#llx, r0 %u", c, x->pc,
		     x->lr, x->magic, (unsigned long long)x->tag, x->r0,
		     (unsigned long long)x->ticks, (unsigned long long)x->tsc,
		     (unsigned long long)last_tsc, x->tid, tramp, (unsigned long long)tag, r0);
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

static uint32_t slot_depth(void)
{
	uint32_t tp, i;

	__asm__ volatile("mrc p15, 0, %0, c13, c0, 3" : "=r"(tp));
	i = (uint32_t)(((uint64_t)tp * 0x9e3779b97f4a7c15ull) >> 56);
	for (int k = 0; k < RET_PAD_SLOTS; k++, i = (i + 1) & (RET_PAD_SLOTS - 1)) {
		uint8_t *s = area + 4096 + (size_t)i * RET_PAD_SLOT_SIZE;
		if (*(uint32_t *)s == tp)
			return *(uint32_t *)(s + 12);
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

static void case_deep(void)
{
	struct rec x;
	uint64_t fb0 = *(uint64_t *)(area + RET_PAD_FALLBACKS);

	long got = call_arm(pra, 200);
	if (got != 1200)
		fail("deep: r(200) returned %ld", got);
	uint64_t fb = *(uint64_t *)(area + RET_PAD_FALLBACKS) - fb0;
	if (fb != 201 - RET_PAD_DEPTH)
		fail("deep: %llu fallbacks, want %d", (unsigned long long)fb, 201 - RET_PAD_DEPTH);
	for (uint32_t d = 201 - RET_PAD_DEPTH; d <= 200; d++) {
		if (!take(&x)) {
			fail("deep: no record for depth value %u", d);
			break;
		}
		check_rec("deep", &x, ra_tag, d);
	}
	if (take(&x))
		fail("deep: more records than %d", RET_PAD_DEPTH);
	if (*(uint64_t *)(area + RET_PAD_ORPHANS))
		fail("deep: orphans");
}

static void case_full(void)
{
	struct rec x;

	for (long i = 0; i < 40; i++)
		if (call_arm(pfa, i) != 3 * i + 1 + 1000)
			fail("full: f(%ld) wrong", i);
	while (take(&x))
		if (full_n < 64)
			full_r0[full_n++] = x.r0;
	if (full_n != 40 || !traps)
		fail("full: %d records, %ld traps; want 40 and some", full_n, traps);
	for (int i = 0; i < full_n && i < 40; i++)
		if (full_r0[i] != (uint32_t)(3 * i + 1))
			fail("full: record %d r0 %u, want %d", i, full_r0[i], 3 * i + 1);
	if (*(uint64_t *)(area + RET_PAD_LOST) != (uint64_t)traps)
		fail("full: LOST counter %llu, traps %ld",
		     (unsigned long long)*(uint64_t *)(area + RET_PAD_LOST), traps);
}

#define NTHREADS 4
#define NCALLS 2000
static int producers_done;

static void *producer(void *arg)
{
	long id = (long)arg;

	for (long i = 0; i < NCALLS; i++) {
		long v = id * 100000 + i;
		long got = (id & 1) ? call_thumb(pft, v) : call_arm(pfa, v);
		if (got != 3 * v + ((id & 1) ? 2 : 1) + 1000) {
			fail("threads: thread %ld f(%ld) returned %ld", id, v, got);
			break;
		}
	}
	__atomic_add_fetch(&producers_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void case_threads(void)
{
	pthread_t th[NTHREADS];
	static unsigned char seen[NTHREADS][NCALLS];
	struct rec x;
	long n = 0;

	for (long t = 0; t < NTHREADS; t++)
		if (pthread_create(&th[t], NULL, producer, (void *)t))
			exit(99);
	for (;;) {
		if (take(&x)) {
			uint32_t v = (x.r0 - ((x.tag == ft_tag) ? 2 : 1)) / 3;
			long id = v / 100000, i = v % 100000;
			if (id >= NTHREADS || i >= NCALLS || x.magic != RET_REC_MAGIC_VALUE ||
			    x.pc != tramp || seen[id][i]++)
				fail("threads: record r0 %u tag %#llx (thread %ld, i %ld) unexpected",
				     x.r0, (unsigned long long)x.tag, id, i);
			n++;
			continue;
		}
		if (n == NTHREADS * NCALLS ||
		    __atomic_load_n(&producers_done, __ATOMIC_ACQUIRE) == NTHREADS)
			break;
		sched_yield();
	}
	for (int t = 0; t < NTHREADS; t++)
		pthread_join(th[t], NULL);
	while (take(&x))
		n++;
	if (n != NTHREADS * NCALLS)
		fail("threads: %ld records, want %d", n, NTHREADS * NCALLS);
}

static void run_case(const char *name, void (*fn)(void))
{
	pid_t pid;
	int st;

	fflush(stdout);
	if ((pid = fork()) < 0)
		exit(99);
	if (!pid) {
		alarm(60);
		failures = 0;
		setup(name[0] == 't' ? 8192 : name[0] == 'f' ? 8 : 512);
		fn();
		printf("%s: %s (%lu counter reads emulated)\n", failures ? "FAIL" : "ok",
		       name, emulated);
		fflush(stdout);
		_exit(failures ? 1 : 0);
	}
	if (waitpid(pid, &st, 0) < 0)
		exit(99);
	if (!WIFEXITED(st) || WEXITSTATUS(st) == 99) {
		printf("FAIL: %s: %s %d\n", name, WIFEXITED(st) ? "exit" : "signal",
		       WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		failures++;
	} else if (WEXITSTATUS(st) == 77) {
		exit(77);
	} else if (WEXITSTATUS(st)) {
		failures++;
	}
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	leaf = true;
	run_case("values", case_values);
	run_case("recording", case_recording);
	leaf = false;
	run_case("recursion", case_recursion);
	run_case("latency", case_latency);
	run_case("deep", case_deep);
	run_case("full", case_full);
	run_case("threads", case_threads);
	printf("%s\n", failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}
