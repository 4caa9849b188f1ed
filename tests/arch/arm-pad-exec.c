/*
 * arm-pad-exec.c - 32-bit ARM jump pads with their ring collector, the
 * calls of the in-process collector and the hand-off, executed.  Built for armhf and run under qemu-arm-static
 * (or natively on a 32-bit ARM host) by arm-pad-exec.sh.
 *
 * Each pad is built from arch/arm's pad parts as the agent builds it:
 *
 *   site: b pad / b.w pad               (arm_emit_jump over the probed code)
 *         udf                           where the branch back lands: the end
 *   pad:  arm_emit_save_regs(site)
 *         arm_emit_pad_collect(ring)    b restore when recorded
 *         arm_emit_pad_handoff(table)   the full ring's path: ends at its udf
 *   restore:
 *         arm_emit_restore_regs()
 *         arm_relocate_window(site)     the copy, b site + len
 *
 * and entered through arm_run (every register and NZCV, T from random
 * values; sp inside a stack buffer).  Sites: A32 `add r0, r0, r1`; A32
 * `addsne r2, r3, #5` (conditional, sets the flags); a Thumb window of
 * two 16-bit instructions `add r0, r1 ; mov r2, r3`; a Thumb 32-bit
 * `add.w r4, r5, r6, lsl #3` at an address 2 mod 4; A32 `blne` (lr and
 * the pc from literals under the condition); Thumb `push {r4, lr}`
 * then `bl`, a window of 6 bytes; literal loads (A32 `ldrsh`, `ldrne`,
 * Thumb `ldr` after a USDT nop, `adr` then `ldrd`) from the pad's
 * literal of the address; the PIC add of the pc, added as immediates at
 * the pad (A32 `addne r0, r1, pc`, Thumb `add r5, pc`).  Far pads (the
 * pad 96 MiB away, beyond B and B.W: the site's jump and the way back
 * literal loads into the pc): A32 add then mov, add then blne, ldrsh
 * literal then addsne, ldr literal then `add r3, pc, r3` (8 bytes);
 * Thumb four 16-bit instructions at 0 mod 4 (8 bytes), 16/32/16/16-bit
 * at 2 mod 4 (10 bytes), nop, ldr literal, two 16-bit and a 32-bit one
 * at 2 mod 4 (12 bytes, the last 2 a udf at the site), nop, ldr
 * literal, mov, `add r1, pc`, adds at 2 mod 4 (a USDT site at -O2),
 * push, adds then bl at 0 mod 4.  Checks, for 300
 * random states each: the run ends at the udf after the site (or at the
 * branch's target, with lr) with every
 * register as the same code gives in place (sp included, the stack
 * above sp untouched), the record's sequence word is its position + 1,
 * its frame holds r0-r12, sp, lr, pc (the site), cpsr's NZCV and T as at
 * the site, its tid the thread's; once the
 * 2-record ring is full (not consumed), the next run ends at the
 * hand-off's udf with r5 the entry it claimed (owner the thread's id,
 * ready 1, the frame the same) and r4 the frame.  The same sites with a
 * pad that calls a stub of the in-process collector (ipa_site_case):
 * its answers no, record and IPA_TRAP.  Then 4 threads x 3000
 * calls through one recording pad (threads_case): the threads' ids by
 * the system call, then from the table, then with the time from the
 * counter rather than clock_gettime64.
 *
 * Exit 0 pass, 1 failure, 99 harness.
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "arch/arch.h"
#include "arch/arm/arm.h"
#include "tests/arch/arm-run.h"

#define PAGE 4096
#define REGION (64 * PAGE)
#define NREC 2
#define NW ARM_PAD_FRAME_WORDS

static uint8_t *region;		/* code: site page, pad pages */
static uint8_t *far_region;	/* the far pads' page */
static uint8_t *shm;		/* table (256 entries of 1 KiB), ring */
static uint8_t stack[8192] __attribute__((aligned(8)));
static int failures, compared;
static uint32_t seed = 12345;

#define A(p) ((uint32_t)(uintptr_t)(p))

static uint32_t rnd(void)
{
	seed = seed * 1103515245u + 12345u;
	return seed ^ (seed >> 15) * 2654435761u;
}

struct site {
	const char *name;
	bool thumb;
	unsigned int off;		/* in the site page */
	uint8_t code[12];
	unsigned int len;		/* bytes of the window */
	bool far;			/* the pad 96 MiB away: ldr pc, = at the site */
};

static const struct site sites[] = {
	{ "a32 add", false, 64, { 0x01, 0x00, 0x80, 0xe0 }, 4 },	/* add r0, r0, r1 */
	{ "a32 addsne", false, 128, { 0x05, 0x20, 0x93, 0x12 }, 4 },	/* addsne r2, r3, #5 */
	{ "t16 pair", true, 192, { 0x08, 0x44, 0x1a, 0x46 }, 4 },	/* add r0, r1; mov r2, r3 */
	{ "t32 at 2 mod 4", true, 258, { 0x05, 0xeb, 0xc6, 0x04 }, 4 },	/* add.w r4, r5, r6, lsl #3 */
	{ "a32 blne", false, 320, { 0x3e, 0x00, 0x00, 0x1b }, 4 },	/* blne .+0x100 */
	/* push {r4, lr}; bl .+0xfe (the bl's own address + 0xfe) */
	{ "t16 push, t32 bl", true, 400, { 0x10, 0xb5, 0x00, 0xf0, 0x7d, 0xf8 }, 6 },
	{ "a32 ldrsh literal", false, 640, { 0xf6, 0x30, 0xdf, 0xe1 }, 4 },	/* ldrsh r3, [pc, #6] */
	{ "a32 ldrne literal", false, 704, { 0x10, 0x40, 0x1f, 0x15 }, 4 },	/* ldrne r4, [pc, #-16] */
	/* nop; ldr r7, [pc, #112] (a USDT site) */
	{ "t16 nop, ldr literal", true, 770, { 0x00, 0xbf, 0x1c, 0x4f }, 4 },
	/* adr r3, #16; ldrd r0, r1, [pc, #8] */
	{ "t16 adr, t32 ldrd literal", true, 900, { 0x04, 0xa3, 0xdf, 0xe9, 0x02, 0x01 }, 6 },
	/* Far pads: the site's jump is a literal load into the pc (8 bytes,
	 * 10 at a Thumb site 2 mod 4), the way back too. */
	/* add r0, r0, r1; mov r2, r3 */
	{ "far a32 add, mov", false, 1024,
	  { 0x01, 0x00, 0x80, 0xe0, 0x03, 0x20, 0xa0, 0xe1 }, 8, true },
	/* add r0, r0, r1; blne .+0xfc (to the site + 0x100) */
	{ "far a32 add, blne", false, 1088,
	  { 0x01, 0x00, 0x80, 0xe0, 0x3d, 0x00, 0x00, 0x1b }, 8, true },
	/* ldrsh r3, [pc, #6]; addsne r2, r3, #5 */
	{ "far a32 ldrsh literal, addsne", false, 1152,
	  { 0xf6, 0x30, 0xdf, 0xe1, 0x05, 0x20, 0x93, 0x12 }, 8, true },
	/* add r0, r1; mov r2, r3; adds r4, #1; subs r5, r5, r6 (0 mod 4) */
	{ "far t16 x4 at 0 mod 4", true, 1216,
	  { 0x08, 0x44, 0x1a, 0x46, 0x01, 0x34, 0xad, 0x1b }, 8, true },
	/* add r0, r1; add.w r4, r5, r6, lsl #3; mov r2, r3; adds r4, #1 */
	{ "far t16, t32, t16 x2 at 2 mod 4", true, 1282,
	  { 0x08, 0x44, 0x05, 0xeb, 0xc6, 0x04, 0x1a, 0x46, 0x01, 0x34 }, 10, true },
	/* nop; ldr r7, [pc, #112]; add r0, r1; mov r2, r3; add.w r4, r5, r6,
	 * lsl #3: 12 bytes (the last 2 a udf at the site) */
	{ "far nop, ldr literal, t16 x2, t32 at 2 mod 4", true, 1346,
	  { 0x00, 0xbf, 0x1c, 0x4f, 0x08, 0x44, 0x1a, 0x46, 0x05, 0xeb, 0xc6, 0x04 }, 12,
	  true },
	/* The PIC add of the pc, as immediates added at the pad: */
	/* nop; ldr r1, [pc, #148]; mov r2, r4; add r1, pc; adds r0, #1 (a
	 * USDT site at -O2, 2 mod 4) */
	{ "far nop, ldr literal, mov, add pc at 2 mod 4", true, 1474,
	  { 0x00, 0xbf, 0x25, 0x49, 0x22, 0x46, 0x79, 0x44, 0x01, 0x30 }, 10, true },
	/* ldr r3, [pc, #164]; add r3, pc, r3 */
	{ "far a32 ldr literal, add pc", false, 1536,
	  { 0xa4, 0x30, 0x9f, 0xe5, 0x03, 0x30, 0x8f, 0xe0 }, 8, true },
	/* addne r0, r1, pc */
	{ "a32 addne r0, r1, pc", false, 1600, { 0x0f, 0x00, 0x81, 0x10 }, 4 },
	/* add r5, pc; mov r2, r3 */
	{ "t16 add r5, pc, mov", true, 1664, { 0x7d, 0x44, 0x1a, 0x46 }, 4 },
	/* push {r4, lr}; adds r0, #1; bl .+0xfc (to the site + 0x100), 0 mod 4 */
	{ "far t16 push, adds, t32 bl", true, 1408,
	  { 0x10, 0xb5, 0x01, 0x30, 0x00, 0xf0, 0x7c, 0xf8 }, 8, true },
};

static void fill_udf(uint8_t *p, size_t n, bool thumb);

/* The site's jump to the pad, as the agent writes it: B / B.W, or the
 * far literal load, and 16-bit udfs over the rest of a Thumb window. */
static int put_jump(const struct site *s, uint8_t *site_page, uint32_t pad)
{
	uint32_t at = A(site_page) + s->off;
	uint64_t pc = at | (s->thumb ? 1 : 0);
	int m = s->far ? arm_emit_jump_far(site_page + s->off, s->len, pc,
					   pad | (s->thumb ? 1 : 0))
		       : arm_emit_jump(site_page + s->off, 4, pc, pad | (s->thumb ? 1 : 0));

	if (m > 0 && (unsigned int)m < s->len)
		fill_udf(site_page + s->off + m, s->len - (unsigned int)m, s->thumb);
	return m;
}

static void fill_udf(uint8_t *p, size_t n, bool thumb)
{
	for (size_t i = 0; i < n; i += thumb ? 2 : 4) {
		if (thumb) {
			p[i] = 0x01;
			p[i + 1] = 0xde;
		} else {
			uint32_t w = ARM_BKPT_A32;
			memcpy(p + i, &w, 4);
		}
	}
}

static uint64_t ring_at(void)
{
	return A(shm) + (256u << 10);
}

static uint8_t *record(unsigned int pos)
{
	return shm + (256u << 10) + 4096 + ((size_t)(pos % NREC) << 11);
}

/*
 * A stub of the in-process collector (ipa_site_wants, ipa_collect_site),
 * for the pads that call it: the entries, one A32 and one Thumb, note sp
 * at the call and go on to C (Thumb as the compiler builds it), which
 * notes the arguments and the frame they point at, scribbles on the
 * block area, clobbers every caller-saved register and the flags, and
 * answers as stub_mode says.
 */
enum stub_mode { STUB_NO, STUB_RECORD, STUB_TRAP };
static enum stub_mode stub_mode;

struct stub_seen {
	unsigned int calls;
	uint32_t site, regs, nregs, out, out_size, sp;
	uint64_t frame[NW];
};
static struct stub_seen seen_wants, seen_collect;
uint32_t stub_sp[2];		/* sp at the collect and the wants entries */

#define SITE_COOKIE 0x5173e008u	/* the ipa_site the pads pass */
#define BLOCKS_MARK 0xb10c5b10c5ull

static void clobber(void)
{
	volatile uint8_t junk[512];

	for (unsigned int i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)i;
	__asm__ volatile("mov r0, #0x10\n\tmov r1, #0x11\n\tmov r2, #0x12\n\t"
			 "mov r3, #0x13\n\tmov r12, #0x1c\n\tcmp r0, r1"
			 ::: "r0", "r1", "r2", "r3", "r12", "cc", "memory");
}

static void note(struct stub_seen *w, uint32_t site, const uint64_t *regs, uint32_t nregs,
		 uint32_t sp)
{
	w->calls++;
	w->site = site;
	w->regs = A(regs);
	w->nregs = nregs;
	w->sp = sp;
	if (nregs == NW)
		memcpy(w->frame, regs, sizeof(w->frame));
}

int stub_wants_c(uint32_t site, const uint64_t *regs, uint32_t nregs);
int stub_wants_c(uint32_t site, const uint64_t *regs, uint32_t nregs)
{
	note(&seen_wants, site, regs, nregs, stub_sp[1]);
	clobber();
	return stub_mode != STUB_NO;
}

int stub_collect_c(uint32_t site, const uint64_t *regs, uint32_t nregs, uint8_t *out,
		   uint32_t out_size);
int stub_collect_c(uint32_t site, const uint64_t *regs, uint32_t nregs, uint8_t *out,
		   uint32_t out_size)
{
	note(&seen_collect, site, regs, nregs, stub_sp[0]);
	seen_collect.out = A(out);
	seen_collect.out_size = out_size;
	memcpy(out, &(uint64_t){ BLOCKS_MARK }, 8);
	clobber();
	return stub_mode == STUB_TRAP ? 3 : 1;
}

void stub_collect(void);
void stub_wants(void);
__asm__(
	"	.text\n"
	"	.arm\n"
	"	.globl	stub_collect\n"
	"	.type	stub_collect, %function\n"
	"stub_collect:\n"			/* A32 */
	"	ldr	r12, 1f\n"
	"	str	sp, [r12]\n"
	"	ldr	r12, 2f\n"
	"	bx	r12\n"
	"1:	.word	stub_sp\n"
	"2:	.word	stub_collect_c\n"
	"	.size	stub_collect, . - stub_collect\n"
	"	.thumb\n"
	"	.globl	stub_wants\n"
	"	.type	stub_wants, %function\n"
	"	.thumb_func\n"
	"stub_wants:\n"			/* Thumb */
	"	mov	r3, sp\n"
	"	ldr	r12, 3f\n"
	"	str	r3, [r12, #4]\n"
	"	ldr	r12, 4f\n"
	"	bx	r12\n"
	"	.balign	4\n"
	"3:	.word	stub_sp\n"
	"4:	.word	stub_wants_c\n"
	"	.size	stub_wants, . - stub_wants\n"
	"	.arm\n");

/* Builds the pad of site `s` at pad_page (with `ipa`, calling the stub
 * collector); returns the trap's address. */
static uint32_t build_pad(const struct site *s, uint8_t *site_page, uint8_t *pad_page,
			  bool ipa)
{
	const struct arch_pad_layout *l = &arm_pad_layout;
	uint8_t code[1024];
	size_t n = 0, done = 0, trap = 0, inlen = 0;
	uint32_t at = A(site_page) + s->off, pad = A(pad_page);
	uint64_t pc = at | (s->thumb ? 1 : 0);
	struct arch_pad_ring r = {
		.ring = ring_at(), .off_records = 4096, .record_shift = 11,
		.nrecords = NREC, .off_seq = l->off_seq, .off_frame = l->off_frame,
		.off_bases = l->off_bases, .time_tid = true, .off_tid = l->off_tid,
		.off_time = l->off_time, .image = true,
	};
	struct arch_pad_handoff h = {
		.table = A(shm), .entry_shift = 10, .nentries = 256,
		.off_owner = l->off_owner, .off_ready = l->off_ready,
		.off_bases = l->off_bases, .off_frame = l->off_frame,
	};
	int m;

	if (ipa) {
		r.ipa_call = A(stub_collect);
		r.ipa_wants = A(stub_wants);
		r.ipa_site = SITE_COOKIE;
		r.off_blocks = 1024;
		r.blocks_size = 1024;
	}
	fill_udf(site_page, PAGE, s->thumb);
	memcpy(site_page + s->off, s->code, s->len);
	m = arm_emit_save_regs(code, sizeof(code), pc);
	n += (size_t)m;
	m = arm_emit_pad_collect(code + n, sizeof(code) - n, &r, &done);
	if (m < 0)
		goto fail;
	done += n;
	n += (size_t)m;
	m = arm_emit_pad_handoff(code + n, sizeof(code) - n, &h, &trap);
	if (m < 0)
		goto fail;
	trap += n;
	n += (size_t)m;
	if (arm_patch_branch(code, done, n) < 0)
		goto fail;
	m = arm_emit_restore_regs(code + n, sizeof(code) - n);
	n += (size_t)m;
	uint8_t jump[16];
	int jl = s->far ? arm_emit_jump_far(jump, sizeof(jump), pc, pad) : 4;
	if (s->far && (arm_in_b_reach(at, pad) || arm_in_bw_reach(at, pad))) {
		printf("ERROR: the far pad of %s is within a branch's reach\n", s->name);
		exit(99);
	}
	m = arm_relocate_window(site_page + s->off, s->len, pc, pc, (size_t)jl, pad + n,
				code + n, sizeof(code) - n, &inlen);
	if (m < 0 || inlen != s->len)
		goto fail;
	n += (size_t)m;
	memcpy(pad_page, code, n);
	/* The site: the jump, as the agent writes it. */
	if (put_jump(s, site_page, pad) != jl)
		goto fail;
	__builtin___clear_cache((char *)region, (char *)region + REGION);
	__builtin___clear_cache((char *)pad_page, (char *)pad_page + 4 * PAGE);
	return pad + (uint32_t)trap;
fail:
	printf("ERROR: cannot build the pad of %s (%d)\n", s->name, m);
	exit(99);
}

static uint32_t build(const struct site *s, uint8_t *site_page, uint8_t *pad_page)
{
	return build_pad(s, site_page, pad_page, false);
}

static void reset_shm(void)
{
	memset(shm, 0, (256u << 10) + 4096 + (NREC << 11));
	for (unsigned int i = 0; i < NREC; i++)
		memcpy(record(i) + arm_pad_layout.off_seq, &(uint64_t){ i }, 8);
}

static void fail(const struct site *s, const char *what, const struct arm_state *in,
		 const struct arm_state *a, const struct arm_state *b)
{
	failures++;
	if (failures > 10)
		return;
	printf("FAIL %s: %s\n", s->name, what);
	arm_print_state("in", in);
	if (a)
		arm_print_state("in place", a);
	if (b)
		arm_print_state("through the pad", b);
}

static bool same(const struct arm_state *a, const struct arm_state *b)
{
	for (int i = 0; i < 16; i++)
		if (a->r[i] != b->r[i])
			return false;
	return ((a->r[16] ^ b->r[16]) & ARM_RUN_CPSR_SET) == 0;
}

/* A frame's words against the state at the site. */
static bool words_ok(const uint64_t *f, const struct arm_state *in, uint32_t at)
{
	for (int i = 0; i < 15; i++)
		if (f[i] != in->r[i])
			return false;
	return f[ARM_PC] == at &&
	       (f[ARM_CPSR] & 0xffffffffu & ARM_RUN_CPSR_SET) == (in->r[16] & ARM_RUN_CPSR_SET);
}

/* The frame of entry / record `e` against the state at the site. */
static bool frame_ok(const uint8_t *e, const struct arm_state *in, uint32_t at)
{
	uint64_t f[NW];

	memcpy(f, e + arm_pad_layout.off_frame, sizeof(f));
	for (int i = 0; i < 15; i++)
		if (f[i] != in->r[i])
			return false;
	return f[ARM_PC] == at &&
	       (f[ARM_CPSR] & 0xffffffffu & ARM_RUN_CPSR_SET) == (in->r[16] & ARM_RUN_CPSR_SET);
}

static void one_site(const struct site *s, uint8_t *site_page, uint8_t *pad_page)
{
	uint32_t trap = build(s, site_page, pad_page);
	uint32_t at = A(site_page) + s->off;

	for (int k = 0; k < 300; k++) {
		struct arm_state in, ref, out;
		uint8_t above[64];

		memset(&in, 0, sizeof(in));
		for (int i = 0; i < 15; i++)
			in.r[i] = rnd();
		in.r[13] = A(stack) + sizeof(stack) - 64 - 4 * (rnd() % 8);
		in.r[16] = (rnd() & 0xf0000000u) | (s->thumb ? ARM_PSR_T : 0);
		reset_shm();

		/* In place: the original code, then the udf after it. */
		memcpy(site_page + s->off, s->code, s->len);
		__builtin___clear_cache((char *)site_page, (char *)site_page + PAGE);
		in.r[15] = at;
		arm_run(&in, &ref);
		if (ref.r[15] != at + s->len && ref.r[15] != at + 0x100) {
			fail(s, "the original code did not end after itself or at its "
			     "branch's target", &in, &ref, NULL);
			continue;
		}
		put_jump(s, site_page, A(pad_page));
		__builtin___clear_cache((char *)site_page, (char *)site_page + PAGE);

		/* Through the pad: NREC records, then the hand-off. */
		memcpy(above, (uint8_t *)(uintptr_t)in.r[13], sizeof(above));
		for (unsigned int pos = 0; pos <= NREC; pos++) {
			arm_run(&in, &out);
			compared++;
			if (pos < NREC) {
				uint64_t seq;
				memcpy(&seq, record(pos) + arm_pad_layout.off_seq, 8);
				if (!same(&ref, &out))
					fail(s, "registers differ after the pad", &in, &ref, &out);
				else if (memcmp(above, (uint8_t *)(uintptr_t)in.r[13], sizeof(above)))
					fail(s, "the pad wrote above sp", &in, NULL, NULL);
				else if (seq != pos + 1)
					fail(s, "the record is not published", &in, NULL, NULL);
				else if (!frame_ok(record(pos), &in, at))
					fail(s, "the record's frame differs", &in, NULL, NULL);
				else if (*(uint32_t *)(record(pos) + arm_pad_layout.off_tid) !=
					 (uint32_t)syscall(SYS_gettid))
					fail(s, "the record's tid differs", &in, NULL, NULL);
				continue;
			}
			uint8_t *e = shm + (out.r[5] - A(shm));
			if (out.r[15] != trap || out.r[5] < A(shm) ||
			    out.r[5] >= A(shm) + (256u << 10)) {
				fail(s, "a full ring did not end at the hand-off's trap", &in,
				     NULL, &out);
				continue;
			}
			uint32_t owner, ready;
			memcpy(&owner, e + arm_pad_layout.off_owner, 4);
			memcpy(&ready, e + arm_pad_layout.off_ready, 4);
			if (owner != (uint32_t)syscall(SYS_gettid) || ready != PAD_READY ||
			    !frame_ok(e, &in, at))
				fail(s, "the hand-off's entry differs", &in, NULL, &out);
			if (out.r[4] != in.r[13] - NW * 8)
				fail(s, "r4 is not the frame", &in, NULL, &out);
		}
	}
}

/* What a stub call saw, against the hit at `at` from `in`; `regs` the
 * frame it must have been given.  NULL when right, else what is wrong. */
static const char *call_wrong(const struct stub_seen *w, const struct arm_state *in,
			      uint32_t at, uint32_t regs)
{
	uint32_t frame = in->r[13] - NW * 8;

	if (w->calls != 1)
		return "the collector was not called once";
	if (w->site != SITE_COOKIE || w->nregs != NW || w->regs != regs)
		return "the collector's site, frame or count differs";
	if ((w->sp & 15) || w->sp > frame)
		return "sp at the call is not 16-aligned below the frame";
	if (!words_ok(w->frame, in, at))
		return "the frame the collector read differs";
	return NULL;
}

/*
 * The pads that call the collector (the stub above), for each site and
 * 100 random states: ipa_site_wants says no (the code's own result, no
 * record claimed, ipa_collect_site not called), the hit is recorded
 * (the code's own result, the record published with the collector's
 * blocks, which it got at off_blocks with its size, and its frame), and
 * IPA_TRAP (the record published all the same, then the hand-off's
 * trap with the entry's frame).  ipa_site_wants is given the frame on
 * the stack, both calls the site, 17 and a 16-aligned sp below the
 * frame, and the stubs clobber r0-r3, r12, lr and the flags.
 */
static void ipa_site_case(const struct site *s, uint8_t *site_page, uint8_t *pad_page)
{
	uint32_t trap = build_pad(s, site_page, pad_page, true);
	uint32_t at = A(site_page) + s->off;
	const struct arch_pad_layout *l = &arm_pad_layout;

	for (int k = 0; k < 100; k++) {
		struct arm_state in, ref, out;

		memset(&in, 0, sizeof(in));
		for (int i = 0; i < 15; i++)
			in.r[i] = rnd();
		in.r[13] = A(stack) + sizeof(stack) - 64 - 4 * (rnd() % 8);
		in.r[16] = (rnd() & 0xf0000000u) | (s->thumb ? ARM_PSR_T : 0);
		memcpy(site_page + s->off, s->code, s->len);
		__builtin___clear_cache((char *)site_page, (char *)site_page + PAGE);
		in.r[15] = at;
		arm_run(&in, &ref);
		arm_emit_jump(site_page + s->off, 4, at | (s->thumb ? 1 : 0),
			      A(pad_page) | (s->thumb ? 1 : 0));
		__builtin___clear_cache((char *)site_page, (char *)site_page + PAGE);

		for (stub_mode = STUB_NO; stub_mode <= STUB_TRAP; stub_mode++) {
			const char *wrong = NULL;
			uint64_t seq, head;

			reset_shm();
			memset(&seen_wants, 0, sizeof(seen_wants));
			memset(&seen_collect, 0, sizeof(seen_collect));
			arm_run(&in, &out);
			compared++;
			memcpy(&seq, record(0) + l->off_seq, 8);
			memcpy(&head, shm + (256u << 10), 8);
			wrong = call_wrong(&seen_wants, &in, at, in.r[13] - NW * 8);
			if (wrong)
				;
			else if (stub_mode == STUB_NO)
				wrong = !same(&ref, &out) ? "registers differ after a skipped hit" :
					head || seq ? "a skipped hit claimed a record" :
					seen_collect.calls ? "ipa_collect_site ran on a skipped hit" :
					NULL;
			else if ((wrong = call_wrong(&seen_collect, &in, at,
						     A(record(0)) + l->off_frame)))
				;
			else if (seen_collect.out != A(record(0)) + 1024 ||
				 seen_collect.out_size != 1024)
				wrong = "the block area passed differs";
			else if (seq != 1 || head != 1)
				wrong = "the record is not published";
			else if (memcmp(record(0) + 1024, &(uint64_t){ BLOCKS_MARK }, 8))
				wrong = "the collector's blocks are not in the record";
			else if (!frame_ok(record(0), &in, at))
				wrong = "the record's frame differs";
			else if (stub_mode == STUB_RECORD && !same(&ref, &out))
				wrong = "registers differ after a recorded hit";
			else if (stub_mode == STUB_TRAP) {
				uint8_t *e = shm + (out.r[5] - A(shm));
				uint32_t owner = 0;
				if (out.r[15] != trap || out.r[5] < A(shm) ||
				    out.r[5] >= A(shm) + (256u << 10))
					wrong = "IPA_TRAP did not end at the hand-off's trap";
				else if (memcpy(&owner, e + l->off_owner, 4),
					 owner != (uint32_t)syscall(SYS_gettid) ||
					 !frame_ok(e, &in, at) || out.r[4] != in.r[13] - NW * 8)
					wrong = "the hand-off's entry after IPA_TRAP differs";
			}
			if (wrong) {
				char what[160];
				snprintf(what, sizeof(what), "collector %s: %s",
					 stub_mode == STUB_NO ? "says no" :
					 stub_mode == STUB_RECORD ? "records" : "traps", wrong);
				fail(s, what, &in, &ref, &out);
			}
		}
	}
}

/*
 * Threads: an A32 function `add r0, r0, r1; bx lr` whose add jumps to a
 * recording pad, called by THREADS threads THREAD_CALLS times each with
 * (t, i); the ring has room for every call.  Each call must return t + i
 * and each (t, i) be in exactly one record, published (seq = position +
 * 1), with the function's address as its pc: the claims are atomic.
 */
#define THREADS 4
#define THREAD_CALLS 3000
#define MT_RECORDS 16384

static uint8_t *mt_ring;
static uint32_t (*mt_fn)(uint32_t, uint32_t);
static int mt_bad;

/* The agent's thread id table (PAD_TID_*), where the threads enter
 * themselves: thread t by its TPIDRURO with the made-up tid 1000 + t,
 * and thread 0 with tid 0 (a pointer two threads share: the pad asks
 * the kernel).  mt_tids: what the kernel says each thread is. */
struct tid_entry {
	uint64_t key;
	uint32_t tid, unused;
};
static struct tid_entry mt_table[PAD_TID_ENTRIES];
static bool mt_use_table;
static pthread_mutex_t mt_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t mt_tids[THREADS];

static uint32_t table_tid(uint32_t t)
{
	return mt_use_table && t ? 1000 + t : mt_tids[t];
}

static void enter_self(uint32_t t)
{
	uint32_t tp;

	__asm__ volatile("mrc p15, 0, %0, c13, c0, 3" : "=r"(tp));
	unsigned int h = (unsigned int)(((uint64_t)tp * PAD_TID_HASH) >> (64 - PAD_TID_BITS));
	pthread_mutex_lock(&mt_lock);
	for (unsigned int i = 0; i < PAD_TID_PROBES; i++) {
		struct tid_entry *e = &mt_table[h + i];
		if (e->key)
			continue;
		e->tid = t ? 1000 + t : 0;
		__atomic_store_n(&e->key, (uint64_t)tp, __ATOMIC_RELEASE);
		break;
	}
	pthread_mutex_unlock(&mt_lock);
}

static void *mt_thread(void *arg)
{
	uint32_t t = (uint32_t)(uintptr_t)arg;

	mt_tids[t] = (uint32_t)syscall(SYS_gettid);
	if (mt_use_table)
		enter_self(t);
	for (uint32_t i = 0; i < THREAD_CALLS; i++)
		if (mt_fn(t, i) != t + i)
			__atomic_add_fetch(&mt_bad, 1, __ATOMIC_RELAXED);
	return NULL;
}

/*
 * The hit's time: the generic timer's virtual counter, which qemu-user
 * does not give user mode (`mrrc p15, 1, rX, rY, c14` is undefined
 * there).  For the counter's run a SIGILL handler stands in for a
 * kernel that allows it: nanoseconds of CLOCK_MONOTONIC into the two
 * registers, and on past the instruction.  On a machine that allows it
 * the CPU answers and the handler never runs.
 */
static volatile unsigned long mt_emulated;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void counter_sigill(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	unsigned long *g = &uc->uc_mcontext.arm_r0;
	uint32_t w = *(const uint32_t *)uc->uc_mcontext.arm_pc;

	(void)sig;
	(void)si;
	if ((uc->uc_mcontext.arm_cpsr & ARM_PSR_T) || (w & 0xfff00fffu) != 0xec500f1eu) {
		char msg[80];
		int n = snprintf(msg, sizeof(msg), "ERROR: SIGILL at %#lx (%08x), not at mrrc CNTVCT\n",
				 uc->uc_mcontext.arm_pc, w);
		(void)!write(2, msg, (size_t)n);
		_exit(99);
	}
	uint64_t ns = mono_ns();
	g[w >> 12 & 15] = (uint32_t)ns;
	g[w >> 16 & 15] = (uint32_t)(ns >> 32);
	uc->uc_mcontext.arm_pc += 4;
	__atomic_add_fetch(&mt_emulated, 1, __ATOMIC_RELAXED);
}

__attribute__((target("arm"), noinline)) static uint64_t counter_now(void)
{
	uint32_t lo, hi;

	__asm__ volatile("isb\n\tmrrc p15, 1, %0, %1, c14" : "=r"(lo), "=r"(hi));
	return (uint64_t)hi << 32 | lo;
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * 4 threads x 3000 calls through one recording pad: every record's
 * frame, its thread (by the system call, or with `table` from the
 * table by TPIDRURO) and its time: with `counter` the counter's reading
 * (within two readings around the case, never backwards on one thread)
 * and PAD_TIME_TSC beside it, else CLOCK_REALTIME within two readings.
 */
static void threads_case(uint8_t *site_page, uint8_t *pad_page, bool table, bool counter)
{
	const struct arch_pad_layout *l = &arm_pad_layout;
	static const uint8_t fn[] = { 0x01, 0x00, 0x80, 0xe0, 0x1e, 0xff, 0x2f, 0xe1 };
	uint8_t code[1024];
	size_t n, done, inlen;
	uint32_t at = A(site_page);
	struct arch_pad_ring r = {
		.ring = A(mt_ring), .off_records = 4096, .record_shift = 11,
		.nrecords = MT_RECORDS, .off_seq = l->off_seq, .off_frame = l->off_frame,
		.off_bases = l->off_bases, .time_tid = true, .off_tid = l->off_tid,
		.off_time = l->off_time, .image = true,
		.tid_table = table ? A(mt_table) : 0, .tsc_time = counter,
	};
	struct sigaction sa, old_sa;
	uint64_t from, to, last[THREADS] = { 0 };
	pthread_t th[THREADS];
	static uint8_t seen[THREADS][THREAD_CALLS];
	int m, bad = 0;

	mt_use_table = table;
	memset(mt_table, 0, sizeof(mt_table));
	memset(seen, 0, sizeof(seen));
	memset(mt_ring, 0, 8);					/* the head */
	mt_bad = 0;
	for (unsigned int i = 0; i < MT_RECORDS; i++)
		memcpy(mt_ring + 4096 + ((size_t)i << 11) + l->off_seq, &(uint64_t){ i }, 8);
	fill_udf(site_page, PAGE, false);
	memcpy(site_page, fn, sizeof(fn));
	n = (size_t)arm_emit_save_regs(code, sizeof(code), at);
	m = arm_emit_pad_collect(code + n, sizeof(code) - n, &r, &done);
	if (m < 0)
		goto fail;
	done += n;
	n += (size_t)m;
	/* A full ring would be a bug here: the hand-off's place traps. */
	code[n] = 0xf0; code[n + 1] = 0x01; code[n + 2] = 0xf0; code[n + 3] = 0xe7;
	n += 4;
	if ((m = arm_patch_branch(code, done, n)) < 0)
		goto fail;
	n += (size_t)arm_emit_restore_regs(code + n, sizeof(code) - n);
	m = arm_relocate_window(fn, sizeof(fn), at, at, 4, A(pad_page) + n, code + n,
				sizeof(code) - n, &inlen);
	if (m < 0)
		goto fail;
	n += (size_t)m;
	memcpy(pad_page, code, n);
	if (arm_emit_jump(site_page, 4, at, A(pad_page)) != 4)
		goto fail;
	__builtin___clear_cache((char *)region, (char *)region + REGION);
	mt_fn = (uint32_t (*)(uint32_t, uint32_t))(uintptr_t)at;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = counter_sigill;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (counter && sigaction(SIGILL, &sa, &old_sa) < 0)
		goto fail;
	mt_emulated = 0;
	from = counter ? counter_now() : realtime_ns();
	for (uintptr_t t = 0; t < THREADS; t++)
		if (pthread_create(&th[t], NULL, mt_thread, (void *)t) != 0)
			goto fail;
	for (int t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	to = counter ? counter_now() : realtime_ns();
	if (counter)
		sigaction(SIGILL, &old_sa, NULL);
	for (unsigned int pos = 0; pos < THREADS * THREAD_CALLS; pos++) {
		const uint8_t *rec = mt_ring + 4096 + ((size_t)pos << 11);
		uint64_t seq, f[NW];
		uint32_t tid;
		memcpy(&seq, rec + l->off_seq, 8);
		memcpy(f, rec + l->off_frame, sizeof(f));
		memcpy(&tid, rec + l->off_tid, 4);
		int64_t ts[2];
		memcpy(ts, rec + l->off_time, sizeof(ts));
		uint64_t when = counter ? (uint64_t)ts[0]
					: (uint64_t)ts[0] * 1000000000u + (uint64_t)ts[1];
		bool time_ok = counter ? ts[1] == PAD_TIME_TSC
				       : ts[1] >= 0 && ts[1] < 1000000000;
		time_ok = time_ok && when >= from && when <= to;
		if (counter && f[0] < THREADS) {
			time_ok = time_ok && when >= last[f[0]];
			last[f[0]] = when;
		}
		if (seq != pos + 1 || f[ARM_PC] != at || f[0] >= THREADS ||
		    f[1] >= THREAD_CALLS || seen[f[0]][f[1]]++ ||
		    tid != table_tid((uint32_t)f[0]) || !time_ok) {
			if (bad++ < 3)
				printf("FAIL threads: record %u: seq %llu, pc %#llx, r0 %llu, "
				       "r1 %llu, tid %u (want %u), time %lld %lld (want %s "
				       "from %llu to %llu)\n", pos, (unsigned long long)seq,
				       (unsigned long long)f[ARM_PC], (unsigned long long)f[0],
				       (unsigned long long)f[1], tid,
				       f[0] < THREADS ? table_tid((uint32_t)f[0]) : 0,
				       (long long)ts[0], (long long)ts[1],
				       counter ? "a counter reading, -1," : "a timespec",
				       (unsigned long long)from, (unsigned long long)to);
		}
	}
	uint64_t head;
	memcpy(&head, mt_ring, 8);
	if (head != THREADS * THREAD_CALLS) {
		printf("FAIL threads: the head is %llu, not %d\n", (unsigned long long)head,
		       THREADS * THREAD_CALLS);
		bad++;
	}
	if (mt_bad) {
		printf("FAIL threads: %d calls returned a wrong sum\n", mt_bad);
		bad++;
	}
	printf("%d threads x %d calls through one pad%s, %s: %d records checked, %d bad\n",
	       THREADS, THREAD_CALLS,
	       table ? " (tids from the table by TPIDRURO; thread 0's is 0: gettid)" : "",
	       counter ? "time from the counter" : "time by clock_gettime64",
	       THREADS * THREAD_CALLS, bad);
	if (counter)
		printf("  %lu counter reads emulated\n", (unsigned long)mt_emulated);
	failures += bad;
	return;
fail:
	printf("ERROR: cannot build or run the threads' pad (%d)\n", m);
	exit(99);
}

int main(void)
{
	if (arm_run_init() < 0) {
		printf("ERROR: arm_run_init\n");
		return 99;
	}
	region = mmap(NULL, REGION, PROT_READ | PROT_WRITE | PROT_EXEC,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	shm = mmap(NULL, (256u << 10) + 4096 + (NREC << 11) + PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED || shm == MAP_FAILED) {
		perror("mmap");
		return 99;
	}
	/* The far pads' page: 96 MiB above the sites, beyond B and B.W. */
	far_region = mmap((void *)((uintptr_t)region + (96u << 20)), 8 * PAGE,
			  PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	if (far_region == MAP_FAILED) {
		perror("mmap");
		return 99;
	}
	for (unsigned int i = 0; i < sizeof(sites) / sizeof(sites[0]); i++) {
		uint8_t *pad_page = sites[i].far ? far_region : region + 8 * PAGE;
		int before = failures, runs = compared;
		one_site(&sites[i], region, pad_page);
		printf("%s: pad at %+lld MiB, %d runs, %d failures\n", sites[i].name,
		       ((long long)A(pad_page) - (long long)A(region)) >> 20,
		       compared - runs, failures - before);
	}
	/* The collector's calls: the near sites (the far ones' patch is
	 * their own case's; the pad's body is the same). */
	for (unsigned int i = 0; i < sizeof(sites) / sizeof(sites[0]); i++) {
		int before = failures, runs = compared;
		if (sites[i].far)
			continue;
		ipa_site_case(&sites[i], region, region + 8 * PAGE);
		printf("%s with the collector: %d runs, %d failures\n", sites[i].name,
		       compared - runs, failures - before);
	}
	mt_ring = mmap(NULL, 4096 + ((size_t)MT_RECORDS << 11), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mt_ring == MAP_FAILED) {
		perror("mmap");
		return 99;
	}
	threads_case(region + 16 * PAGE, region + 20 * PAGE, false, false);
	threads_case(region + 16 * PAGE, region + 20 * PAGE, true, false);
	threads_case(region + 16 * PAGE, region + 20 * PAGE, true, true);
	printf("%d runs through pads, %d failures\n", compared, failures);
	return failures ? 1 : 0;
}
