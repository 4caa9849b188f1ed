/*
 * aarch64-pad-exec.c - an aarch64 jump pad with its in-process collector,
 * executed.  Built for aarch64 and run under qemu-aarch64 (or natively on
 * an arm64 host) by aarch64-pad-exec.sh.
 *
 * The pad is built from arch/aarch64's pad parts, as the agent would:
 *
 *   site: b pad                         the probed instruction replaced
 *   pad:  aarch64_emit_save_regs(pc = site)
 *         aarch64_emit_pad_collect(ring)     b restore when recorded
 *         (full) stand-in hand-off: full_count++ (ldaxr/stlxr)
 *   restore:
 *         aarch64_emit_restore_regs()
 *         aarch64_relocate_window(site)      the instruction, b site + 4
 *
 * pad_call (assembly below) loads a known value into x0-x15, x18-x29
 * and NZCV, calls the function with blr x16, and stores them all after
 * the return, with sp and the return address.  Three probed sites:
 *   f_add   +0  add x0, x0, x0, lsl #1  (copied)      ; add x0, x0, #1 ; ret
 *   f_adr   +0  adr x1, datum  (becomes movz/movk x1) ; ldr x0, [x1] ; ret
 *   f_call  +8  bl f_add (movz/movk x30, #site+4 ; b f_add), after
 *               stp x29, x30, [sp, #-16]! ; mov x29, sp
 * Checks: each function returns what it returns unprobed and every other
 * register and the flags come back unchanged; each record's seq is its
 * position + 1 and its frame holds x0-x30, sp, pc and nzcv as they were
 * at the site (with the thread's id and a time between two clock reads);
 * a 4-record ring takes 4 of 10 calls, the 6 others take the hand-off
 * path, and once consumed (seq = position + nrecords) it takes 4 more;
 * 4 threads x 3000 calls into one ring: every (thread, call) once.
 * With a stub in-process collector (ipa_site_wants, ipa_collect_site in
 * C, which clobber the caller-saved registers and the flags): a false
 * condition leaves no record and no call of the collector; a true one
 * calls it with the site, the record's frame, 34, the block area and its
 * size on a 16-byte aligned stack below the frame, and publishes the
 * record with what it wrote; its IPA_TRAP publishes the record and takes
 * the hand-off; the registers come back unchanged in every case.
 * A native condition before the save (x0 > 5 signed; a memory word,
 * sign-extended, < -1; x15 == a value, which the check itself borrows):
 * a record exactly for the calls where it holds, the others counted,
 * registers and flags unchanged either way.
 * With the agent's thread id table (tid_table) and the counter for the
 * time (tsc_time): a thread the table names gets the table's tid (a
 * made-up one, so a system call would show), found past a PAD_TID_GONE
 * entry and at the last of its PAD_TID_PROBES entries; tid 0 in its
 * entry, no entry (a free one ends the search) and PAD_TID_PROBES other
 * keys in its place make the pad ask the kernel; the time is
 * CNTVCT_EL0 between two readings around the call, with PAD_TIME_TSC
 * where tv_nsec would be.
 *
 * Exit 0 pass, 1 failure, 99 harness.
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "arch/arch.h"
#include "arch/aarch64/aarch64.h"

#define NW AARCH64_PAD_FRAME_WORDS

/* in/out: x0..x29 at 0..29, nzcv at 31, sp before the call at 32, the
 * return address at 33 (out only). */
void pad_call(uint64_t fn, const uint64_t *in, uint64_t *out);
__asm__(".text\n"
	".globl pad_call\n"
	".type pad_call, %function\n"
	"pad_call:\n"
	"\tsub sp, sp, #112\n"
	"\tstp x19, x20, [sp]\n"
	"\tstp x21, x22, [sp, #16]\n"
	"\tstp x23, x24, [sp, #32]\n"
	"\tstp x25, x26, [sp, #48]\n"
	"\tstp x27, x28, [sp, #64]\n"
	"\tstp x29, x30, [sp, #80]\n"
	"\tstr x2, [sp, #96]\n"
	"\tmov x16, x0\n"
	"\tmov x17, x1\n"
	"\tmov x9, sp\n"
	"\tstr x9, [x2, #256]\n"
	"\tadr x9, 1f\n"
	"\tstr x9, [x2, #264]\n"
	"\tldr x0, [x17, #248]\n"
	"\tmsr nzcv, x0\n"
	"\tldp x0, x1, [x17]\n"
	"\tldp x2, x3, [x17, #16]\n"
	"\tldp x4, x5, [x17, #32]\n"
	"\tldp x6, x7, [x17, #48]\n"
	"\tldp x8, x9, [x17, #64]\n"
	"\tldp x10, x11, [x17, #80]\n"
	"\tldp x12, x13, [x17, #96]\n"
	"\tldp x14, x15, [x17, #112]\n"
	"\tldp x18, x19, [x17, #144]\n"
	"\tldp x20, x21, [x17, #160]\n"
	"\tldp x22, x23, [x17, #176]\n"
	"\tldp x24, x25, [x17, #192]\n"
	"\tldp x26, x27, [x17, #208]\n"
	"\tldp x28, x29, [x17, #224]\n"
	"\tblr x16\n"
	"1:\tldr x17, [sp, #96]\n"
	"\tstp x0, x1, [x17]\n"
	"\tstp x2, x3, [x17, #16]\n"
	"\tstp x4, x5, [x17, #32]\n"
	"\tstp x6, x7, [x17, #48]\n"
	"\tstp x8, x9, [x17, #64]\n"
	"\tstp x10, x11, [x17, #80]\n"
	"\tstp x12, x13, [x17, #96]\n"
	"\tstp x14, x15, [x17, #112]\n"
	"\tstp x18, x19, [x17, #144]\n"
	"\tstp x20, x21, [x17, #160]\n"
	"\tstp x22, x23, [x17, #176]\n"
	"\tstp x24, x25, [x17, #192]\n"
	"\tstp x26, x27, [x17, #208]\n"
	"\tstp x28, x29, [x17, #224]\n"
	"\tmrs x0, nzcv\n"
	"\tstr x0, [x17, #248]\n"
	"\tldp x19, x20, [sp]\n"
	"\tldp x21, x22, [sp, #16]\n"
	"\tldp x23, x24, [sp, #32]\n"
	"\tldp x25, x26, [sp, #48]\n"
	"\tldp x27, x28, [sp, #64]\n"
	"\tldp x29, x30, [sp, #80]\n"
	"\tadd sp, sp, #112\n"
	"\tret\n"
	".size pad_call, .-pad_call\n");

static int failures;

#define CHECK(cond, ...) do { if (!(cond)) { failures++; \
	printf("FAIL %s:%d: ", __func__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

static uint8_t *mem;		/* RWX: functions at 0, pads from 0x4000 */
static uint64_t full_count;

enum { F_ADD = 0x0, F_ADR = 0x100, F_CALL = 0x200, DATUM = 0x180 };

static void put(size_t off, uint32_t w)
{
	memcpy(mem + off, &w, 4);
}

/* The functions, then the site and pad for (func, site offset). */
static void build_functions(void)
{
	put(F_ADD + 0, 0x8b000400);	/* add x0, x0, x0, lsl #1 */
	put(F_ADD + 4, 0x91000400);	/* add x0, x0, #1 */
	put(F_ADD + 8, 0xd65f03c0);	/* ret */
	/* adr x1, DATUM: immlo bits 29-30, immhi bits 5-23 */
	uint32_t d = DATUM - F_ADR;
	put(F_ADR + 0, 0x10000001 | (d & 3) << 29 | (d >> 2) << 5);
	put(F_ADR + 4, 0xf9400020);	/* ldr x0, [x1] */
	put(F_ADR + 8, 0xd65f03c0);	/* ret */
	uint64_t datum = 0x0123456789abcdefull;
	memcpy(mem + DATUM, &datum, 8);
	put(F_CALL + 0, 0xa9bf7bfd);	/* stp x29, x30, [sp, #-16]! */
	put(F_CALL + 4, 0x910003fd);	/* mov x29, sp */
	put(F_CALL + 8, aarch64_enc_b(F_CALL + 8, F_ADD, true));	/* bl f_add */
	put(F_CALL + 12, 0xa8c17bfd);	/* ldp x29, x30, [sp], #16 */
	put(F_CALL + 16, 0xd65f03c0);	/* ret */
}

/* Pads at mem + pad_off for the site at mem + site, into ring r; the
 * site becomes `b pad`. */
static int build_pad_cond(size_t func, size_t func_len, size_t site, size_t pad_off,
			  const struct arch_pad_ring *r, const struct arch_pad_cond *cond)
{
	uint64_t base = (uint64_t)(uintptr_t)mem;
	uint8_t *code = mem + pad_off;
	size_t size = 0x1000, n = 0, done, inlen, skip = 0, load, take;
	int m;
	struct aarch64_out o;

	if (cond) {
		if ((m = aarch64_emit_pad_cond(code, size, cond, &skip, &load, &take)) < 0)
			return m;
		n = (size_t)m;
	}
	if ((m = aarch64_emit_save_regs(code + n, size - n, base + site)) < 0)
		return m;
	n += (size_t)m;
	size_t collect = n;
	if ((m = aarch64_emit_pad_collect(code + n, size - n, r, &done)) < 0)
		return m;
	n += (size_t)m;
	/* The stand-in hand-off: full_count++, then on to the restore. */
	o = (struct aarch64_out){ code + n, size - n, 0, base + pad_off + n, false };
	aarch64_emit_mov_imm(&o, 1, (uint64_t)(uintptr_t)&full_count);
	aarch64_put32(&o, 0xc85ffc22);	/* ldaxr x2, [x1] */
	aarch64_put32(&o, 0x91000442);	/* add x2, x2, #1 */
	aarch64_put32(&o, 0xc803fc22);	/* stlxr w3, x2, [x1] */
	aarch64_put32(&o, 0x35ffffa3);	/* cbnz w3, -12 */
	if (o.overflow)
		return -ENOSPC;
	n += o.len;
	if ((m = aarch64_patch_branch(code, collect + done, n)) < 0)
		return m;
	if ((m = aarch64_emit_restore_regs(code + n, size - n)) < 0)
		return m;
	n += (size_t)m;
	/* A false condition goes straight to the displaced instruction. */
	if (cond && (m = aarch64_patch_branch(code, skip, n)) < 0)
		return m;
	m = aarch64_relocate_window(mem + func, func_len, base + func, base + site, 4,
				    base + pad_off + n, code + n, size - n, &inlen);
	if (m < 0)
		return m;
	n += (size_t)m;
	if (inlen != 4)
		return -EINVAL;
	put(site, aarch64_enc_b(base + site, base + pad_off, false));
	__builtin___clear_cache((char *)mem, (char *)mem + 0x10000);
	return 0;
}

static int build_pad(size_t func, size_t func_len, size_t site, size_t pad_off,
		     const struct arch_pad_ring *r)
{
	return build_pad_cond(func, func_len, site, pad_off, r, NULL);
}

static void fill_in(uint64_t *in, uint64_t x0, unsigned int k)
{
	for (int i = 0; i < 30; i++)
		in[i] = 0x1000000000000000ull * (uint64_t)(i % 15 + 1) + 0x10101 * (uint64_t)i + k;
	in[0] = x0;
	in[31] = (uint64_t)(k % 16) << 28;	/* NZCV */
}

struct ring {
	uint8_t *mem;
	struct arch_pad_ring r;
	uint64_t consumed;
};

static uint8_t *record(struct ring *g, uint64_t p)
{
	return g->mem + g->r.off_records + ((p & (g->r.nrecords - 1)) << g->r.record_shift);
}

static void ring_init(struct ring *g, unsigned int nrecords)
{
	size_t len = 64 + ((size_t)nrecords << 9);

	g->mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g->mem == MAP_FAILED) {
		perror("mmap ring");
		exit(99);
	}
	g->r = (struct arch_pad_ring){
		.ring = (uint64_t)(uintptr_t)g->mem, .off_records = 64,
		.record_shift = 9, .nrecords = nrecords, .off_seq = 0,
		.off_frame = 32, .time_tid = true, .off_tid = 8, .off_time = 16,
	};
	for (unsigned int i = 0; i < nrecords; i++)
		*(uint64_t *)record(g, i) = i;
	g->consumed = 0;
}

static uint64_t ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}

/* The tid call_one wants in a record (0: gettid's), and whether its time
 * is the counter's (tsc_time). */
static uint32_t want_tid;
static bool counter_time;

static uint64_t cntvct(void)
{
	uint64_t v;

	__asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v));
	return v;
}

/* One call through the pad; checks the registers after it and, when
 * the ring has a record for it, the record.  `want0`: x0 after. */
static void call_one(struct ring *g, size_t func, size_t site, uint64_t x0,
		     uint64_t want0, unsigned int k, bool want_record)
{
	uint64_t in[34] = { 0 }, out[34] = { 0 };
	uint64_t base = (uint64_t)(uintptr_t)mem;
	struct timespec t0, t1;
	uint64_t head0 = *(volatile uint64_t *)g->mem;

	fill_in(in, x0, k);
	clock_gettime(CLOCK_REALTIME, &t0);
	uint64_t c0 = cntvct();
	pad_call(base + func, in, out);
	uint64_t c1 = cntvct();
	clock_gettime(CLOCK_REALTIME, &t1);
	CHECK(out[0] == want0, "site %#zx: x0 %#lx, want %#lx", site, out[0], want0);
	for (int i = 1; i < 30; i++) {
		if (func == F_ADR && i == 1)
			CHECK(out[1] == base + DATUM, "x1 = %#lx, not &datum", out[1]);
		else if (i != 16 && i != 17)
			CHECK(out[i] == in[i], "site %#zx: x%d %#lx, want %#lx", site, i, out[i], in[i]);
	}
	CHECK(out[31] == in[31], "site %#zx: nzcv %#lx, want %#lx", site, out[31], in[31]);
	if (!want_record) {
		CHECK(*(volatile uint64_t *)g->mem == head0, "a record for a full ring");
		return;
	}
	/* f_call's bl reaches f_add, whose entry is probed too. */
	uint64_t nrec = site == F_CALL + 8 ? 2 : 1;
	CHECK(*(volatile uint64_t *)g->mem == head0 + nrec, "head %lu, want %lu",
	      *(volatile uint64_t *)g->mem, head0 + nrec);
	if (nrec == 2) {
		uint64_t f2[NW];
		memcpy(f2, record(g, head0 + 1) + g->r.off_frame, sizeof(f2));
		CHECK(f2[32] == base + F_ADD && f2[0] == x0 &&
		      f2[30] == base + F_CALL + 12 && f2[31] == out[32] - 16,
		      "f_add's record from f_call: pc %#lx x0 %#lx x30 %#lx sp %#lx",
		      f2[32], f2[0], f2[30], f2[31]);
	}
	uint8_t *rec = record(g, head0);
	uint64_t seq = *(uint64_t *)rec, f[NW];
	uint32_t tid;
	struct timespec ts;
	memcpy(f, rec + g->r.off_frame, sizeof(f));
	memcpy(&tid, rec + g->r.off_tid, 4);
	memcpy(&ts, rec + g->r.off_time, sizeof(ts));
	CHECK(seq == head0 + 1, "seq %lu, want %lu", seq, head0 + 1);
	uint64_t sp = out[32] - (site == F_CALL + 8 ? 16 : 0);
	for (int i = 0; i < 30; i++) {
		uint64_t w = in[i];
		if (i == 16)
			w = base + func;		/* blr x16 */
		else if (i == 17)
			continue;			/* pad_call's in pointer */
		else if (i == 29 && site == F_CALL + 8)
			w = sp;				/* mov x29, sp */
		CHECK(f[i] == w, "site %#zx: frame x%d %#lx, want %#lx", site, i, f[i], w);
	}
	CHECK(f[30] == out[33], "frame x30 %#lx, want %#lx", f[30], out[33]);
	CHECK(f[31] == sp, "frame sp %#lx, want %#lx", f[31], sp);
	CHECK(f[32] == base + site, "frame pc %#lx, want %#lx", f[32], base + site);
	CHECK(f[33] == in[31], "frame nzcv %#lx, want %#lx", f[33], in[31]);
	uint32_t want = want_tid ? want_tid : (uint32_t)syscall(SYS_gettid);
	CHECK(tid == want, "tid %u, want %u", tid, want);
	if (counter_time) {
		int64_t w[2];
		memcpy(w, rec + g->r.off_time, sizeof(w));
		CHECK(w[1] == PAD_TIME_TSC && (uint64_t)w[0] >= c0 && (uint64_t)w[0] <= c1,
		      "counter %#lx (mark %ld) outside %#lx..%#lx", w[0], w[1], c0, c1);
	} else {
		CHECK(ts_ns(&ts) >= ts_ns(&t0) && ts_ns(&ts) <= ts_ns(&t1),
		      "time outside the call");
	}
}

static void consume(struct ring *g);

/* --- a stub in-process collector ----------------------------------------- */

#define STUB_SITE 0x5173000ull
static struct {
	unsigned int wants, collects;	/* calls */
	int want, verdict;		/* what they return */
	uint64_t site, words, size, sp, cfa;
	const uint64_t *frame;
	uint8_t *blocks;
	uint64_t pc, x0;		/* frame[32], frame[0] as the stub saw them */
} stub;

/* What the callee may do to x0-x18, x30 and the flags, done. */
#define CLOBBER() __asm__ volatile( \
	"mov x0, #0xbad\n\tmov x1, x0\n\tmov x2, x0\n\tmov x3, x0\n" \
	"\tmov x4, x0\n\tmov x5, x0\n\tmov x6, x0\n\tmov x7, x0\n" \
	"\tmov x8, x0\n\tmov x9, x0\n\tmov x10, x0\n\tmov x11, x0\n" \
	"\tmov x12, x0\n\tmov x13, x0\n\tmov x14, x0\n\tmov x15, x0\n" \
	"\tmov x16, x0\n\tmov x17, x0\n\tmov x18, x0\n\tcmp x0, #0\n" \
	::: "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", \
	"x10", "x11", "x12", "x13", "x14", "x15", "x16", "x17", "x18", "cc")

static uint64_t sp_now(void)
{
	uint64_t sp;

	__asm__ volatile("mov %0, sp" : "=r"(sp));
	return sp;
}

__attribute__((noinline)) static int stub_site_wants(uint64_t site, const uint64_t *frame,
						     uint32_t words)
{
	CLOBBER();
	stub.wants++;
	stub.site = site;
	stub.frame = frame;
	stub.words = words;
	stub.sp = sp_now();
	stub.cfa = (uint64_t)(uintptr_t)__builtin_dwarf_cfa();	/* sp at the blr */
	stub.pc = frame[32];
	stub.x0 = frame[0];
	return stub.want;
}

__attribute__((noinline)) static int stub_collect_site(uint64_t site, const uint64_t *frame,
						       uint32_t words, uint8_t *blocks,
						       uint32_t size)
{
	CLOBBER();
	stub.collects++;
	stub.site = site;
	stub.frame = frame;
	stub.words = words;
	stub.blocks = blocks;
	stub.size = size;
	stub.sp = sp_now();
	stub.cfa = (uint64_t)(uintptr_t)__builtin_dwarf_cfa();	/* sp at the blr */
	stub.pc = frame[32];
	stub.x0 = frame[0];
	memset(blocks, 0, size);
	memcpy(blocks, &frame[0], 8);		/* the blocks: x0, then a mark */
	memcpy(blocks + 8, "stubmark", 8);
	return stub.verdict;
}

static void ipa_ring(struct ring *g, bool wants)
{
	ring_init(g, 64);
	g->r.ipa_call = (uint64_t)(uintptr_t)stub_collect_site;
	g->r.ipa_site = STUB_SITE;
	g->r.ipa_wants = wants ? (uint64_t)(uintptr_t)stub_site_wants : 0;
	g->r.off_blocks = 320;
	g->r.blocks_size = 192;
}

/* One call of f_add through the collector's pad; `wants`: calls of
 * ipa_site_wants expected, `rec`: a record published. */
static void ipa_call_one(struct ring *g, unsigned int k, unsigned int wants,
			 bool collects, bool rec, uint64_t handoffs)
{
	uint64_t base = (uint64_t)(uintptr_t)mem;
	uint64_t head0 = *(volatile uint64_t *)g->mem;
	unsigned int w0 = stub.wants, c0 = stub.collects;

	call_one(g, F_ADD, F_ADD, k * 5, k * 15 + 1, k, rec);
	CHECK(stub.wants == w0 + wants, "k %u: ipa_site_wants called %u times, want %u",
	      k, stub.wants - w0, wants);
	CHECK(stub.collects == c0 + collects, "k %u: ipa_collect_site called %u times, want %u",
	      k, stub.collects - c0, collects);
	CHECK(full_count == handoffs, "k %u: hand-offs %lu, want %lu", k, full_count, handoffs);
	if (!wants && !collects)
		return;
	CHECK(stub.site == STUB_SITE, "site %#lx", stub.site);
	CHECK(stub.words == NW, "frame words %lu", stub.words);
	CHECK(stub.pc == base + F_ADD && stub.x0 == k * 5, "frame pc %#lx x0 %#lx",
	      stub.pc, stub.x0);
	CHECK(!(stub.sp & 15), "callee's sp %#lx not 16-aligned", stub.sp);
	if (!collects) {
		/* ipa_site_wants: the frame on the stack, sp = frame. */
		CHECK(stub.cfa == (uint64_t)(uintptr_t)stub.frame && stub.sp < stub.cfa,
		      "wants: frame %p, sp at the call %#lx, in it %#lx", (void *)stub.frame,
		      stub.cfa, stub.sp);
		return;
	}
	uint8_t *r = record(g, head0);
	CHECK(stub.frame == (const uint64_t *)(r + g->r.off_frame), "frame %p, want the record's %p",
	      (void *)stub.frame, (void *)(r + g->r.off_frame));
	CHECK(stub.blocks == r + g->r.off_blocks && stub.size == g->r.blocks_size,
	      "blocks %p size %lu", (void *)stub.blocks, stub.size);
	/* sp at the call: the frame on the stack, 16-aligned. */
	CHECK(!(stub.cfa & 15) && stub.sp < stub.cfa &&
	      !memcmp((const void *)(uintptr_t)stub.cfa, r + g->r.off_frame, 8 * NW),
	      "collect: sp at the call %#lx, in it %#lx", stub.cfa, stub.sp);
	uint64_t x0;
	memcpy(&x0, r + g->r.off_blocks, 8);
	CHECK(x0 == k * 5 && !memcmp(r + g->r.off_blocks + 8, "stubmark", 8),
	      "record's blocks: x0 %#lx", x0);
}

static void case_ipa(void)
{
	struct ring g;

	build_functions();
	/* With ipa_site_wants: false, true (RECORD), true (TRAP), SKIP. */
	ipa_ring(&g, true);
	if (build_pad(F_ADD, 12, F_ADD, 0x4000, &g.r) < 0) {
		CHECK(0, "cannot build the collector's pad");
		return;
	}
	full_count = 0;
	memset(&stub, 0, sizeof(stub));
	stub.want = 0;
	for (unsigned int k = 0; k < 3; k++)
		ipa_call_one(&g, k, 1, false, false, 0);
	stub.want = 1;
	stub.verdict = 1;		/* IPA_RECORD */
	for (unsigned int k = 3; k < 6; k++)
		ipa_call_one(&g, k, 1, true, true, 0);
	stub.verdict = 3;		/* IPA_TRAP: published, then the hand-off */
	for (unsigned int k = 6; k < 8; k++)
		ipa_call_one(&g, k, 1, true, true, k - 5);
	stub.verdict = 0;		/* IPA_SKIP: published (the drain drops it) */
	ipa_call_one(&g, 8, 1, true, true, 2);
	consume(&g);
	/* Without it (no condition): the collector alone. */
	ipa_ring(&g, false);
	build_functions();
	if (build_pad(F_ADD, 12, F_ADD, 0x4000, &g.r) < 0) {
		CHECK(0, "cannot build the collector's pad");
		return;
	}
	full_count = 0;
	stub.verdict = 2;		/* IPA_RECORD_STOP */
	for (unsigned int k = 0; k < 3; k++)
		ipa_call_one(&g, k, 0, true, true, 0);
	stub.verdict = 3;
	ipa_call_one(&g, 3, 0, true, true, 1);
	consume(&g);
	printf("ipa: 3 false conditions (no record), 3 records, 2 traps; "
	       "without the question 3 records, 1 trap\n");
}

static volatile int32_t cond_word;

/* One pad with `cond` at f_add; calls with x0 = k (fill_in's registers,
 * x15 = want15 for the odd k), `mem_val(k)` in cond_word; `holds(k)`
 * says which calls must be recorded. */
static void cond_run(const char *what, const struct arch_pad_cond *cond,
		     int32_t (*mem_val)(unsigned int), bool (*holds)(unsigned int))
{
	struct ring g;
	uint64_t skipped = 0;
	struct arch_pad_cond c = *cond;

	ring_init(&g, 64);
	build_functions();
	c.skip_counter = (uint64_t)(uintptr_t)&skipped;
	if (build_pad_cond(F_ADD, 12, F_ADD, 0x4000, &g.r, &c) < 0) {
		CHECK(0, "%s: cannot build the pad", what);
		return;
	}
	unsigned int want_skip = 0, want_rec = 0;
	for (unsigned int k = 0; k < 12; k++) {
		cond_word = mem_val(k);
		bool rec = holds(k);
		call_one(&g, F_ADD, F_ADD, k, 3 * k + 1, k, rec);
		want_skip += !rec;
		want_rec += rec;
	}
	CHECK(skipped == want_skip, "%s: %lu counted as false, want %u", what, skipped, want_skip);
	CHECK(*(volatile uint64_t *)g.mem == want_rec, "%s: %lu records, want %u", what,
	      *(volatile uint64_t *)g.mem, want_rec);
	consume(&g);
	printf("cond %s: %u records, %u counted false\n", what, want_rec, want_skip);
}

static int32_t mem_none(unsigned int k) { (void)k; return 0; }
static int32_t mem_alt(unsigned int k) { return k % 3 ? 3 : -5; }
static bool gt5(unsigned int k) { return (int64_t)k > 5; }
static bool alt_lt(unsigned int k) { return mem_alt(k) < -1; }
/* fill_in's x15: 0xf000000000000000 + 0x10101 * 15 + k */
static bool x15_is_7(unsigned int k) { return k == 7; }

static void case_cond(void)
{
	struct arch_pad_cond c = { .cmp = ARCH_CMP_GT_S, .imm = 5 };

	c.regnum = 0;				/* x0 > 5 */
	cond_run("x0 > 5", &c, mem_none, gt5);
	c = (struct arch_pad_cond){ .mem = true, .size = 4, .nconv = 1,
				    .conv = { { true, 32 } }, .cmp = ARCH_CMP_LT_S, .imm = -1 };
	c.addr = (uint64_t)(uintptr_t)&cond_word;	/* (int32_t)cond_word < -1 */
	cond_run("word < -1", &c, mem_alt, alt_lt);
	/* x15 (which the check saves and borrows) low 32 bits == its k = 7 value */
	c = (struct arch_pad_cond){ .regnum = 15, .nconv = 1, .conv = { { false, 32 } },
				    .cmp = ARCH_CMP_EQ,
				    .imm = (int32_t)(uint32_t)(0x10101u * 15 + 7) };
	cond_run("x15 == 7's", &c, mem_none, x15_is_7);
}

static void consume(struct ring *g)
{
	uint64_t head = *(volatile uint64_t *)g->mem;

	for (; g->consumed < head; g->consumed++) {
		uint8_t *rec = record(g, g->consumed);
		CHECK(*(uint64_t *)rec == g->consumed + 1, "consume %lu: seq %lu",
		      g->consumed, *(uint64_t *)rec);
		__atomic_store_n((uint64_t *)rec, g->consumed + g->r.nrecords, __ATOMIC_RELEASE);
	}
}

static void case_sites(void)
{
	struct ring g;

	ring_init(&g, 64);
	build_functions();
	if (build_pad(F_ADD, 12, F_ADD, 0x4000, &g.r) < 0 ||
	    build_pad(F_ADR, 12, F_ADR, 0x5000, &g.r) < 0 ||
	    build_pad(F_CALL, 20, F_CALL + 8, 0x6000, &g.r) < 0) {
		CHECK(0, "cannot build the pads");
		return;
	}
	for (unsigned int k = 0; k < 12; k++) {
		call_one(&g, F_ADD, F_ADD, k * 7, k * 21 + 1, k, true);
		call_one(&g, F_ADR, F_ADR, k, 0x0123456789abcdefull, k, true);
		call_one(&g, F_CALL, F_CALL + 8, k + 100, (k + 100) * 3 + 1, k, true);
	}
	consume(&g);
	printf("sites: 36 calls through 3 pads, 48 records (f_call's bl reaches f_add's pad)\n");
}

static void case_full(void)
{
	struct ring g;

	ring_init(&g, 4);
	build_functions();
	if (build_pad(F_ADD, 12, F_ADD, 0x4000, &g.r) < 0) {
		CHECK(0, "cannot build the pad");
		return;
	}
	full_count = 0;
	for (unsigned int k = 0; k < 10; k++)
		call_one(&g, F_ADD, F_ADD, k, 3 * k + 1, k, k < 4);
	CHECK(full_count == 6, "hand-offs %lu, want 6", full_count);
	consume(&g);
	for (unsigned int k = 0; k < 4; k++)
		call_one(&g, F_ADD, F_ADD, k, 3 * k + 1, k, true);
	CHECK(full_count == 6, "hand-offs %lu after consuming, want 6", full_count);
	consume(&g);
	printf("full: 4 records, 6 hand-offs, 4 records after consuming\n");
}

/* The thread id table's entries, as the agent keeps them (pad-tid.c). */
struct tid_entry {
	uint64_t key;
	uint32_t tid, unused;
};

static void case_tid_table(void)
{
	static struct tid_entry table[PAD_TID_ENTRIES];
	struct ring g;
	uint64_t tp;

	__asm__ volatile("mrs %0, tpidr_el0" : "=r"(tp));
	unsigned int h = (unsigned int)((tp * PAD_TID_HASH) >> (64 - PAD_TID_BITS));
	ring_init(&g, 64);
	g.r.tid_table = (uint64_t)(uintptr_t)table;
	g.r.tsc_time = true;
	build_functions();
	if (build_pad(F_ADD, 12, F_ADD, 0x4000, &g.r) < 0) {
		CHECK(0, "cannot build the pad");
		return;
	}
	counter_time = true;
	struct {
		const char *what;
		unsigned int at;	/* the thread's entry, PAD_TID_PROBES: none */
		uint32_t tid;		/* in it */
		uint64_t before;	/* the keys before it */
		uint32_t want;		/* 0: gettid's */
	} cases[] = {
		{ "its entry first", 0, 0x7777, 0, 0x7777 },
		{ "past a gone entry", 1, 0x7778, PAD_TID_GONE, 0x7778 },
		{ "its last probe", PAD_TID_PROBES - 1, 0x7779, 0x1234, 0x7779 },
		{ "tid 0 (shared)", 0, 0, 0, 0 },
		{ "no entry", PAD_TID_PROBES, 0, 0, 0 },
		{ "others in its place", PAD_TID_PROBES, 0, 0x1234, 0 },
		{ "behind a free entry", 2, 0x777a, 0, 0 },
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		memset(table, 0, sizeof(table));
		for (unsigned int i = 0; i < cases[c].at && i < PAD_TID_PROBES; i++)
			table[h + i].key = cases[c].before ? cases[c].before + i * (cases[c].before > 1) : 0;
		if (cases[c].at < PAD_TID_PROBES) {
			table[h + cases[c].at].tid = cases[c].tid;
			table[h + cases[c].at].key = tp;
		}
		int before = failures;
		want_tid = cases[c].want;
		for (unsigned int k = 0; k < 3; k++)
			call_one(&g, F_ADD, F_ADD, k * 7, k * 21 + 1, k, true);
		consume(&g);
		if (failures != before)
			printf("tid table: case '%s' failed\n", cases[c].what);
	}
	want_tid = 0;
	counter_time = false;
	printf("tid table: the table's tid where it names the thread, gettid's elsewhere; "
	       "the counter for the time\n");
}

#define THREADS 4
#define CALLS 3000
static struct ring tg;

static void *worker(void *arg)
{
	uint64_t id = (uint64_t)(uintptr_t)arg;
	uint64_t in[34], out[34];

	for (unsigned int i = 0; i < CALLS; i++) {
		fill_in(in, id << 20 | i, i);
		pad_call((uint64_t)(uintptr_t)mem + F_ADD, in, out);
		if (out[0] != 3 * (id << 20 | i) + 1)
			__atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void case_threads(void)
{
	pthread_t th[THREADS];
	static uint8_t seen[THREADS][CALLS];

	ring_init(&tg, 16384);
	full_count = 0;
	build_functions();
	if (build_pad(F_ADD, 12, F_ADD, 0x4000, &tg.r) < 0) {
		CHECK(0, "cannot build the pad");
		return;
	}
	for (uintptr_t t = 0; t < THREADS; t++)
		pthread_create(&th[t], NULL, worker, (void *)t);
	for (int t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	uint64_t head = *(volatile uint64_t *)tg.mem;
	CHECK(head == THREADS * CALLS, "head %lu, want %d", head, THREADS * CALLS);
	unsigned int bad = 0;
	for (uint64_t p = 0; p < head; p++) {
		uint8_t *rec = record(&tg, p);
		uint64_t x0;
		memcpy(&x0, rec + tg.r.off_frame, 8);
		uint64_t t = x0 >> 20, i = x0 & 0xfffff;
		if (*(uint64_t *)rec != p + 1 || t >= THREADS || i >= CALLS || seen[t][i]++)
			bad++;
	}
	CHECK(bad == 0, "%u records wrong or twice", bad);
	CHECK(full_count == 0, "hand-offs %lu", full_count);
	printf("threads: %d x %d calls, every one recorded once\n", THREADS, CALLS);
}

int main(void)
{
	mem = mmap(NULL, 0x10000, PROT_READ | PROT_WRITE | PROT_EXEC,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("mmap RWX");
		return 99;
	}
	case_sites();
	case_full();
	case_tid_table();
	case_threads();
	case_ipa();
	case_cond();
	printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
