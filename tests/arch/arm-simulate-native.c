/*
 * arm-simulate-native.c - the arm simulations and next pcs against the
 * CPU.
 *
 * Cross-compiled (static) with the arch/ sources and run on 32-bit ARM:
 * under qemu-arm-static on another host (arm-simulate-native.sh).  For
 * every simulated form, thousands of random instances (random encodings,
 * r0-r14 and NZCV random, fixed seed) are run twice:
 *
 *   natively: the instruction is written at a random address A of an
 *   RWX page whose other bytes are UDF of its instruction set; the
 *   harness enters it through a signal return with the random registers
 *   (cpsr.T set for Thumb) and catches the state at the first signal:
 *   the UDF after it, or the fault of a branch target (A lies in the
 *   middle of 80 MiB that is readable, or not mapped, but never
 *   executable, so every target faults where it lands);
 *
 *   simulated: arm_arch_ops.insn_decode (which must say "emulate") and
 *   insn_emulate on the same registers, reading and writing memory
 *   through arch_mem.
 *
 * r0-r14, pc, NZCV and the T bit must be equal, so must the stack words
 * an STM wrote, and the pc the CPU reached (with its T bit) must be one
 * insn_next_pcs gives for the same state.  A mismatch prints the
 * instruction, the state and both results.  Exit 0 pass, 1 mismatch,
 * 99 harness.
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

#include "arch/arm/arm.h"
#include "tests/arch/arm-run.h"

#define PAGE 4096u
#define MIB (1u << 20)
#define REGION (80 * MIB)	/* reserved, never executable */
#define WINDOW (64 * 1024u)	/* readable and writable around A */
#define UDF_A32 0xe7fddef1u
#define UDF_T16 0xdefeu

#ifndef SEED
#define SEED 0x243f6a8885a308d3ull
#endif
#include "tests/arch/xorshift.h"
#ifndef SCALE
#define SCALE 1
#endif
#define PER_FORM (1200 * SCALE)

static unsigned long compared, failures, form_failures, misaligned;
static uint8_t *region, *window, *page;

static uint32_t rnd(void)
{
	return (uint32_t)(xorshift_next() >> 32);
}

static uint32_t rndn(uint32_t n)
{
	return rnd() % n;
}

static uint32_t A(const void *p)
{
	return (uint32_t)(uintptr_t)p;
}

/* ---- memory as the simulation sees it: the window only ---- */

static int mem_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	if (addr < A(window) || addr + len > A(window) + WINDOW)
		return -EFAULT;
	memcpy(buf, (void *)(uintptr_t)addr, len);
	return 0;
}

static int mem_write(void *ctx, uint64_t addr, const void *buf, size_t len)
{
	(void)ctx;
	if (addr < A(window) || addr + len > A(window) + WINDOW)
		return -EFAULT;
	memcpy((void *)(uintptr_t)addr, buf, len);
	return 0;
}

static const struct arch_mem mem = { NULL, mem_read, mem_write };

/* ---- the instruction forms ---- */

enum isa { I_A32, I_T16, I_T32 };

struct form {
	const char *name;
	enum isa isa;
	/* a random instance; may also set registers and memory */
	uint32_t (*gen)(struct arm_state *s, uint32_t at);
};

/* A branch target for a register: inside the region, bit 0 random. */
static uint32_t target_value(void)
{
	uint32_t v = A(region) + rndn(REGION);

	return rndn(2) ? v | 1 : v & ~3u;
}

static uint32_t cond(void)
{
	return rndn(15);
}

static uint32_t low_reg(void) { return rndn(8); }
/* r0-r12 and lr, not sp (the stack pointer stays where the stack is) */
static uint32_t any_reg(void)
{
	uint32_t r = rndn(14);

	return r == 13 ? 14 : r;
}

static uint32_t g_a32_b(struct arm_state *s, uint32_t at)
{
	(void)s; (void)at;
	/* offsets within +-8 MiB: targets in the region */
	return cond() << 28 | (0xa + rndn(2)) << 24 | (rnd() & 0x7fffff) |
	       (rndn(2) ? 0xc00000 : 0);
}

static uint32_t g_a32_blx_imm(struct arm_state *s, uint32_t at)
{
	(void)s; (void)at;
	return 0xfa000000u | rndn(2) << 24 | (rnd() & 0x7fffff) |
	       (rndn(2) ? 0xc00000 : 0);
}

static uint32_t g_a32_bx(struct arm_state *s, uint32_t at)
{
	uint32_t rm = any_reg();

	(void)at;
	s->r[rm] = target_value();
	return cond() << 28 | (rndn(2) ? 0x012fff10u : 0x012fff30u) | rm;
}

static uint32_t g_a32_ldr_lit(struct arm_state *s, uint32_t at)
{
	static const uint32_t forms[] = {
		0x051f0000, 0x055f0000,			/* ldr, ldrb */
		0x015f00b0, 0x015f00d0, 0x015f00f0,	/* ldrh, ldrsb, ldrsh */
		0x014f00d0,				/* ldrd */
	};
	uint32_t f = forms[rndn(6)], rt = any_reg() & ~1u, w;

	(void)s; (void)at;
	w = cond() << 28 | f | rndn(2) << 23 | rt << 12;
	if (f & 0x04000000)
		return w | rndn(4096);
	if (f == 0x014f00d0)		/* ldrd: word-aligned */
		return w | (rnd() & 0xf0c);
	return w | (rnd() & 0xf0f);
}

static uint32_t g_a32_dp(struct arm_state *s, uint32_t at)
{
	/* data processing reading the pc, rd not the pc: every opcode,
	 * S, immediate or shifted register */
	uint32_t opc = rndn(16), sf = rndn(2), rd = any_reg(), w;

	(void)s; (void)at;
	bool mov = opc == 13 || opc == 15;

	if ((opc & 0xc) == 0x8)
		sf = 1, rd = 0;			/* tst teq cmp cmn: Rd 0000 */
	w = cond() << 28 | opc << 21 | sf << 20 | rd << 12;
	if (rndn(2) && !mov)
		return w | 1u << 25 | 15u << 16 | rndn(4096);
	if (rndn(2) && !mov)
		w |= 15u << 16 | any_reg();		/* rn = pc */
	else
		w |= (mov ? 0 : any_reg()) << 16 | 15;	/* rm = pc */
	return w | rndn(32) << 7 | rndn(4) << 5;
}

static uint32_t g_a32_dp_pc(struct arm_state *s, uint32_t at)
{
	/* add / sub / mov pc, with the result inside the region */
	uint32_t rm = any_reg(), t = target_value();

	switch (rndn(3)) {
	case 0:		/* mov pc, rm */
		s->r[rm] = t;
		return cond() << 28 | 0x01a0f000u | rm;
	case 1:		/* add pc, pc, rm */
		s->r[rm] = t - (at + 8);
		return cond() << 28 | 0x008ff000u | rm;
	default:	/* sub pc, rm, #imm */
		s->r[rm] = t + 0x40;
		return cond() << 28 | 0x024ff040u | rm << 16;
	}
}

/* Words at sp for a load to the pc or a pop: targets. */
static void stack_targets(struct arm_state *s)
{
	uint32_t *sp = (uint32_t *)(uintptr_t)s->r[13];

	for (int i = -16; i < 16; i++)
		sp[i] = rndn(4) ? target_value() : rnd();
}

static uint32_t g_a32_ldr_pc(struct arm_state *s, uint32_t at)
{
	(void)at;
	stack_targets(s);
	if (rndn(2)) {		/* ldr pc, [sp], #+-imm or [sp, #+-imm]{!} */
		uint32_t p = rndn(2), w = p ? rndn(2) : 0;

		return cond() << 28 | 0x0410f000u | p << 24 | rndn(2) << 23 |
		       w << 21 | 13u << 16 | (rndn(16) * 4);
	}
	/* ldr pc, [sp, rm, lsl #2] */
	{
		uint32_t rm = rndn(13);

		s->r[rm] = rndn(8);
		return cond() << 28 | 0x0790f100u | 13u << 16 | rm;
	}
}

static uint32_t g_a32_ldm(struct arm_state *s, uint32_t at)
{
	uint32_t list = (rnd() & 0x5fff) | 0x8000;

	(void)at;
	stack_targets(s);
	/* ldm{ia,ib,da,db} sp{!}, {..., pc} (sp itself not in the list) */
	return cond() << 28 | 0x08100000u | rndn(4) << 23 | rndn(2) << 21 |
	       13u << 16 | (list & ~(1u << 13));
}

static uint32_t g_a32_stm(struct arm_state *s, uint32_t at)
{
	uint32_t list = (rnd() & 0x5fff) | 0x8000;

	(void)s; (void)at;
	return cond() << 28 | 0x08000000u | rndn(4) << 23 | rndn(2) << 21 |
	       13u << 16 | (list & ~(1u << 13));
}

/* ---- Thumb ---- */

static uint32_t g_t16_b(struct arm_state *s, uint32_t at)
{
	(void)s; (void)at;
	if (rndn(2))
		return 0xd000u | cond() << 8 | rndn(256);
	return 0xe000u | rndn(2048);
}

static uint32_t g_t32_b(struct arm_state *s, uint32_t at)
{
	/* targets within +-4 MiB: I1 = I2 = S, so J1 = J2 = 1 */
	uint32_t hw1 = 0xf000u | rndn(2) << 10 | rndn(1024), hw2 = rndn(2048);

	(void)s; (void)at;
	switch (rndn(4)) {
	case 0:		/* b<c>.w: S cond imm6 | 10 J1 0 J2 imm11 */
		hw1 = 0xf000u | rndn(2) << 10 | cond() << 6 | rndn(64);
		return hw1 << 16 | 0x8000u | rndn(2) << 13 | rndn(2) << 11 | hw2;
	case 1:		/* b.w */
		return hw1 << 16 | 0xb800u | hw2;
	case 2:		/* bl */
		return hw1 << 16 | 0xf800u | hw2;
	default:	/* blx to A32 */
		return hw1 << 16 | 0xe800u | (hw2 & 0x7fe);
	}
}

static uint32_t g_t16_bx(struct arm_state *s, uint32_t at)
{
	uint32_t rm = any_reg();

	(void)at;
	s->r[rm] = target_value();
	return (rndn(2) ? 0x4700u : 0x4780u) | rm << 3;
}

static uint32_t g_t16_cb(struct arm_state *s, uint32_t at)
{
	uint32_t rn = low_reg();

	(void)at;
	s->r[rn] = rndn(2) ? 0 : rnd();
	return 0xb100u | rndn(2) << 11 | rndn(2) << 9 | rndn(32) << 3 | rn;
}

static uint32_t g_t_lit(struct arm_state *s, uint32_t at)
{
	static const uint32_t forms[] = {
		0xf85f0000, 0xf81f0000, 0xf83f0000, 0xf91f0000, 0xf93f0000,
	};
	uint32_t rt = rndn(13);

	(void)s; (void)at;
	switch (rndn(4)) {
	case 0:
		return 0x4800u | low_reg() << 8 | rndn(256);		/* T16 */
	case 1:		/* ldrd */
		return 0xe95f0000u | rndn(2) << 23 | rt << 12 |
		       ((rt + 1 + rndn(11)) % 13) << 8 | rndn(256);
	default:
		return forms[rndn(5)] | rndn(2) << 23 | rt << 12 | rndn(4096);
	}
}

static uint32_t g_t_adr(struct arm_state *s, uint32_t at)
{
	(void)s; (void)at;
	switch (rndn(3)) {
	case 0:
		return 0xa000u | low_reg() << 8 | rndn(256);
	case 1:
		return 0xf20f0000u | rndn(2) << 26 | rndn(8) << 12 | rndn(13) << 8 |
		       rndn(256);
	default:
		return 0xf2af0000u | rndn(2) << 26 | rndn(8) << 12 | rndn(13) << 8 |
		       rndn(256);
	}
}

static uint32_t g_t16_hi(struct arm_state *s, uint32_t at)
{
	uint32_t r = any_reg();

	switch (rndn(3)) {
	case 0:		/* add rd, pc */
		return 0x4478u | ((r & 8) << 4) | (r & 7);
	case 1:		/* mov rd, pc */
		return 0x4678u | ((r & 8) << 4) | (r & 7);
	default:	/* mov pc, rm: a branch in Thumb */
		s->r[r] = target_value() | 1;
		(void)at;
		return 0x4687u | r << 3;
	}
}

static uint32_t g_t_pop(struct arm_state *s, uint32_t at)
{
	(void)at;
	stack_targets(s);
	switch (rndn(3)) {
	case 0:
		return 0xbd00u | rndn(256);
	case 1:		/* pop.w / ldmia.w sp!, list with pc, no sp, no lr */
		return 0xe8bd8000u | (rnd() & 0x1fff);
	default:	/* ldr.w pc, [sp], #+-imm8 */
		return 0xf85df000u | 0x900u | rndn(2) << 9 | rndn(16) * 4;
	}
}

static uint32_t g_t_tb(struct arm_state *s, uint32_t at)
{
	uint32_t rm = rndn(13);

	(void)at;
	s->r[rm] = rndn(64);
	if (rndn(2))
		return 0xe8dff000u | rm;		/* tbb [pc, rm] */
	s->r[0] = A(window) + rndn(WINDOW / 2);
	if (rm == 0)
		rm = 1, s->r[1] = rndn(64);
	return 0xe8d0f010u | rm;			/* tbh [r0, rm, lsl #1] */
}

static const struct form forms[] = {
	{ "a32 b/bl", I_A32, g_a32_b },
	{ "a32 blx imm", I_A32, g_a32_blx_imm },
	{ "a32 bx/blx reg", I_A32, g_a32_bx },
	{ "a32 literal loads", I_A32, g_a32_ldr_lit },
	{ "a32 data processing reading pc", I_A32, g_a32_dp },
	{ "a32 data processing to pc", I_A32, g_a32_dp_pc },
	{ "a32 ldr pc", I_A32, g_a32_ldr_pc },
	{ "a32 ldm with pc", I_A32, g_a32_ldm },
	{ "a32 stm with pc", I_A32, g_a32_stm },
	{ "t16 b/b<c>", I_T16, g_t16_b },
	{ "t32 b.w/b<c>.w/bl/blx", I_T32, g_t32_b },
	{ "t16 bx/blx", I_T16, g_t16_bx },
	{ "t16 cbz/cbnz", I_T16, g_t16_cb },
	{ "thumb literal loads", I_T32, g_t_lit },
	{ "thumb adr", I_T32, g_t_adr },
	{ "t16 add/mov with pc", I_T16, g_t16_hi },
	{ "thumb pop/ldr pc", I_T32, g_t_pop },
	{ "t32 tbb/tbh", I_T32, g_t_tb },
};

/* Writes the instruction at `at`, UDF all around it. */
static unsigned int place(enum isa isa, uint32_t w, uint32_t at)
{
	uint8_t *p = (uint8_t *)(uintptr_t)at;

	for (uint32_t i = 0; i < PAGE; i += 4) {
		uint32_t u = isa == I_A32 ? UDF_A32 : (UDF_T16 | UDF_T16 << 16);

		memcpy(page + i, &u, 4);
	}
	if (isa == I_A32 || w > 0xffff) {
		uint32_t v = isa == I_A32 ? w : (w >> 16 | w << 16);

		memcpy(p, &v, 4);
		__builtin___clear_cache((char *)page, (char *)page + PAGE);
		return 4;
	}
	memcpy(p, &w, 2);
	__builtin___clear_cache((char *)page, (char *)page + PAGE);
	return 2;
}

static void one(const struct form *f)
{
	struct arm_state in, out, sim_out;
	struct arch_gpregs r;
	struct arch_insn ai;
	uint32_t at, w, stack_before[32], stack_native[32], *sp;
	uint64_t pcs[2];
	unsigned int len;
	int err, n;
	bool thumb = f->isa != I_A32;

	memset(&in, 0, sizeof(in));
	for (int i = 0; i < 15; i++)
		in.r[i] = rndn(4) ? rnd() : rndn(4) ? 0 : A(window) + rndn(WINDOW);
	in.r[13] = A(window) + WINDOW / 2 + 4 * rndn(256);
	in.r[16] = (rnd() & 0xf0000000u) | (thumb ? ARM_PSR_T : 0);
	at = A(page) + (thumb ? 2 * rndn(PAGE / 2 - 4) : 4 * rndn(PAGE / 4 - 2));
	w = f->gen(&in, at);
	len = place(f->isa, w, at);
	in.r[15] = at;
	if (arm_arch_ops.insn_decode((uint8_t *)(uintptr_t)at, len, at | thumb, &ai) ||
	    ai.strategy != ARCH_EMULATE)
		return;		/* an UNPREDICTABLE draw: not a simulated form */
	sp = (uint32_t *)(uintptr_t)in.r[13] - 16;
	memcpy(stack_before, sp, sizeof(stack_before));
	arm_run(&in, &out);
	memcpy(stack_native, sp, sizeof(stack_native));
	memcpy(sp, stack_before, sizeof(stack_before));

	memset(&r, 0, sizeof(r));
	for (int i = 0; i < 15; i++)
		r.gpr[i] = in.r[i];
	r.pc = at;
	r.flags = in.r[16];
	n = arm_arch_ops.insn_next_pcs(&ai, &r, &mem, pcs);
	err = arm_arch_ops.insn_emulate(&ai, &r, &mem);
	compared++;
	memset(&sim_out, 0, sizeof(sim_out));
	for (int i = 0; i < 15; i++)
		sim_out.r[i] = (uint32_t)r.gpr[i];
	sim_out.r[15] = (uint32_t)r.pc;
	sim_out.r[16] = (uint32_t)r.flags;
	if (err == -EFAULT && out.sig == SIGSEGV && out.r[15] == at)
		return;		/* both fault on the access */
	if (!err && out.sig == SIGBUS && out.r[15] == at) {
		/* qemu faults an unaligned ldrd / ldm where Linux fixes it
		 * up and the simulation reads it: not compared */
		compared--;
		misaligned++;
		return;
	}
	{
		bool same = !err && n > 0;
		uint64_t reached = out.r[15] | ((out.r[16] & ARM_PSR_T) ? 1 : 0);

		for (int i = 0; i < 16 && same; i++)
			same = sim_out.r[i] == out.r[i];
		same = same && ((sim_out.r[16] ^ out.r[16]) & ARM_RUN_CPSR_SET) == 0;
		same = same && memcmp(sp, stack_native, sizeof(stack_native)) == 0;
		same = same && (pcs[0] == reached || (n == 2 && pcs[1] == reached));
		if (same)
			return;
		failures++;
		if (form_failures++ < 3) {
			printf("FAIL %s: %0*x at %08x (%s): emulate %d, next pcs %d: "
			       "%llx %llx\n", f->name, len == 2 ? 4 : 8, w, at,
			       ai.reason, err, n, (unsigned long long)pcs[0],
			       n > 1 ? (unsigned long long)pcs[1] : 0ull);
			arm_print_state("in", &in);
			arm_print_state("cpu", &out);
			arm_print_state("simulated", &sim_out);
		}
	}
}

int main(void)
{
	if (arm_run_init()) {
		perror("run_init");
		return 99;
	}
	region = mmap(NULL, REGION, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED) {
		perror("mmap");
		return 99;
	}
	window = region + REGION / 2 - WINDOW / 2;
	page = window + WINDOW / 2 - PAGE / 2;
	page = (uint8_t *)((uintptr_t)page & ~(uintptr_t)(PAGE - 1));
	if (mprotect(window, WINDOW, PROT_READ | PROT_WRITE) ||
	    mprotect(page, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC)) {
		perror("mprotect");
		return 99;
	}
	for (uint32_t i = 0; i < WINDOW; i += 4) {
		uint32_t v = rnd();

		memcpy(window + i, &v, 4);
	}
	for (size_t k = 0; k < sizeof(forms) / sizeof(forms[0]); k++) {
		unsigned long before = compared, fails = failures;

		form_failures = 0;

		for (int i = 0; i < PER_FORM; i++)
			one(&forms[k]);
		printf("%-32s %6lu compared, %lu mismatches\n", forms[k].name,
		       compared - before, failures - fails);
		if (compared - before < 1000) {
			printf("FAIL %s: fewer than 1000 instances\n", forms[k].name);
			failures++;
		}
	}
	printf("%lu instances compared, %lu mismatches (%lu unaligned accesses "
	       "qemu faults on not compared)\n", compared, failures, misaligned);
	return failures ? 1 : 0;
}
