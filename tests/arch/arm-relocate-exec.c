/*
 * arm-relocate-exec.c - arm XOL slots run by the CPU against the original
 * instruction in place.
 *
 * Cross-compiled (static) with the arch/ sources and run under
 * qemu-arm-static (arm-relocate-exec.sh).  For random boostable
 * instructions (A32 data processing, loads, stores, multiplies, in every
 * condition; T16 and T32 arithmetic, moves, loads) and random instructions
 * of the emulate class (A32 `ldr rt, [pc, rm]`, `ldrh rt, [pc, rm]`,
 * `str pc, [rn, #imm]`, `str pc, [pc, #imm]`), with random registers
 * and NZCV:
 *
 *   in place: the instruction at A, UDF after it, run until the UDF;
 *   in a slot: arm_arch_ops.xol_prepare at S, a page 32 KiB away (B /
 *   B.W back) or 39 MiB away (beyond both: the `ldr pc, =` jump back),
 *   run from S with the scratch register loaded as the agent would; a
 *   boost slot must come back to A + len by itself, an emulate slot stops
 *   at its breakpoint, where xol_fixup moves the pc and restores the
 *   scratch register.
 *
 * r0-r14, pc, NZCV, T and the 64 KiB of data around A must be equal.
 * Exit 0 pass, 1 mismatch, 99 harness.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "arch/arm/arm.h"
#include "tests/arch/arm-run.h"

#define PAGE 4096u
#define MIB (1u << 20)
#define REGION (80 * MIB)
#define WINDOW (64 * 1024u)
#define UDF_A32 0xe7fddef1u
#define UDF_T16 0xdefeu

#ifndef SEED
#define SEED 0x13198a2e03707344ull
#endif
#include "tests/arch/xorshift.h"
#ifndef SCALE
#define SCALE 1
#endif
#define PER_FORM (600 * SCALE)

static unsigned long compared, failures, form_failures;
static uint8_t *region, *window, *page, *near_slot, *far_slot;
static uint8_t snapshot[WINDOW], after_native[WINDOW];

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

enum isa { I_A32, I_T16, I_T32 };

struct form {
	const char *name;
	enum isa isa;
	uint32_t (*gen)(struct arm_state *s);
};

static uint32_t cond(void) { return rndn(15); }
static uint32_t reg12(void) { return rndn(13); }
static uint32_t low(void) { return rndn(8); }

/* A base register for a load or store: inside the window. */
static void base(struct arm_state *s, uint32_t r)
{
	s->r[r] = A(window) + 1024 + 4 * rndn((WINDOW - 8192) / 4);
}

static uint32_t g_a32_dp(struct arm_state *s)
{
	uint32_t opc = rndn(16), sf = rndn(2), rd = reg12(), rn = reg12(), w;

	(void)s;
	if ((opc & 0xc) == 0x8)
		sf = 1, rd = 0;
	if (opc == 13 || opc == 15)
		rn = 0;
	w = cond() << 28 | opc << 21 | sf << 20 | rn << 16 | rd << 12;
	if (rndn(2))
		return w | 1u << 25 | rndn(4096);
	return w | rndn(32) << 7 | rndn(4) << 5 | reg12();
}

static uint32_t g_a32_ldst(struct arm_state *s)
{
	uint32_t rn = reg12(), rt = reg12();

	while (rt == rn)
		rt = reg12();
	base(s, rn);
	/* cond 010 1 U B 0 L Rn Rt imm12: offset form */
	return cond() << 28 | 0x05000000u | rndn(2) << 23 | rndn(2) << 22 |
	       rndn(2) << 20 | rn << 16 | rt << 12 | rndn(1024);
}

static uint32_t g_a32_mul(struct arm_state *s)
{
	/* cond 0000 00AS Rd Ra Rm 1001 Rn: mul (Ra 0000) / mla */
	uint32_t a = rndn(2);

	(void)s;
	return cond() << 28 | a << 21 | rndn(2) << 20 | reg12() << 16 |
	       (a ? reg12() : 0) << 12 | reg12() << 8 | 0x90 | reg12();
}

static uint32_t g_t16(struct arm_state *s)
{
	uint32_t rn = low(), rt = low();

	switch (rndn(6)) {
	case 0: return 0x1c00u | rndn(2) << 9 | rndn(8) << 6 | low() << 3 | low();
	case 1: return 0x2000u | rndn(4) << 11 | low() << 8 | rndn(256);
	case 2: return 0x0000u | rndn(3) << 11 | rndn(32) << 6 | low() << 3 | low();
	case 3: return 0x4000u | rndn(16) << 6 | low() << 3 | low();
	default:	/* ldr / str rt, [rn, #imm5 * 4] */
		while (rt == rn)
			rt = low();
		base(s, rn);
		return 0x6000u | rndn(2) << 11 | rndn(32) << 6 | rn << 3 | rt;
	}
}

static uint32_t g_t32(struct arm_state *s)
{
	static const uint32_t ops[] = { 0, 2, 4, 8, 13 };	/* and orr eor add sub */
	uint32_t rd = reg12(), rn = reg12();

	if (rndn(3)) {
		/* 11110 i 0 op S Rn | 0 imm3 Rd imm8 */
		return (0xf000u | rndn(2) << 10 | ops[rndn(5)] << 5 | rndn(2) << 4 | rn) << 16 |
		       rndn(8) << 12 | rd << 8 | rndn(256);
	}
	/* ldr.w / str.w rt, [rn, #imm12]: 1111 1000 1101 / 1100 Rn | Rt imm12 */
	while (rd == rn)
		rd = reg12();
	base(s, rn);
	return (0xf8c0u | rndn(2) << 4 | rn) << 16 | rd << 12 | rndn(1024);
}

static uint32_t g_a32_pc(struct arm_state *s)
{
	uint32_t rm = reg12(), rt = reg12(), rn = reg12();

	switch (rndn(3)) {
	case 0:		/* ldr rt, [pc, rm]: cond 0111 1001 1111 Rt 0000 0000 Rm */
		s->r[rm] = 4 * rndn(512) - 1024;
		return cond() << 28 | 0x079f0000u | rt << 12 | rm;
	case 1:		/* ldrh rt, [pc, rm]: cond 0001 1001 1111 Rt 0000 1011 Rm */
		s->r[rm] = 2 * rndn(1024) - 1024;
		return cond() << 28 | 0x019f00b0u | rt << 12 | rm;
	default:	/* str pc, [rn, #imm]: cond 0101 1000 Rn 1111 imm12,
			 * rn the pc too a quarter of the time */
		if (!rndn(4))
			return cond() << 28 | 0x058ff000u | rndn(1024);
		base(s, rn);
		return cond() << 28 | 0x0580f000u | rn << 16 | rndn(1024);
	}
}

static const struct form forms[] = {
	{ "a32 data processing", I_A32, g_a32_dp },
	{ "a32 ldr/str/ldrb/strb", I_A32, g_a32_ldst },
	{ "a32 mul/mla", I_A32, g_a32_mul },
	{ "t16 arithmetic, loads, stores", I_T16, g_t16 },
	{ "t32 arithmetic, ldr.w/str.w", I_T32, g_t32 },
	{ "a32 reading the pc (emulate)", I_A32, g_a32_pc },
};

static void fill_udf(uint8_t *p, bool thumb)
{
	for (uint32_t i = 0; i < PAGE; i += 4) {
		uint32_t u = thumb ? (UDF_T16 | UDF_T16 << 16) : UDF_A32;

		memcpy(p + i, &u, 4);
	}
}

static bool same(const struct arm_state *a, const struct arm_state *b)
{
	for (int i = 0; i < 16; i++)
		if (a->r[i] != b->r[i])
			return false;
	return ((a->r[16] ^ b->r[16]) & ARM_RUN_CPSR_SET) == 0;
}

static void one(const struct form *f, uint8_t *slot_page, const char *where)
{
	struct arm_state in, out, s_in, s_out;
	struct arch_insn ai;
	struct arch_xol xol;
	struct arch_gpregs r;
	uint8_t code[4], slot[64];
	uint32_t at, w, v;
	bool thumb = f->isa != I_A32;
	unsigned int len;
	int n;

	memset(&in, 0, sizeof(in));
	for (int i = 0; i < 15; i++)
		in.r[i] = rnd();
	in.r[13] = A(window) + WINDOW / 2 + 4 * rndn(256);
	in.r[16] = (rnd() & 0xf0000000u) | (thumb ? ARM_PSR_T : 0);
	w = f->gen(&in);
	at = A(page) + (thumb ? 2 * rndn(PAGE / 2 - 4) : 4 * rndn(PAGE / 4 - 2));
	fill_udf(page, thumb);
	if (f->isa == I_T16) {
		len = 2;
		code[0] = (uint8_t)w;
		code[1] = (uint8_t)(w >> 8);
	} else {
		len = 4;
		v = f->isa == I_A32 ? w : (w >> 16 | w << 16);
		memcpy(code, &v, 4);
	}
	memcpy(page + (at - A(page)), code, len);
	__builtin___clear_cache((char *)page, (char *)page + PAGE);
	if (arm_arch_ops.insn_decode(code, len, at | thumb, &ai) ||
	    (ai.strategy != ARCH_BOOST && ai.strategy != ARCH_STEP))
		return;		/* a draw the engine simulates or rejects */

	/* in place */
	memcpy(snapshot, window, WINDOW);
	in.r[15] = at;
	arm_run(&in, &out);
	memcpy(after_native, window, WINDOW);
	memcpy(window, snapshot, WINDOW);

	/* in a slot */
	fill_udf(slot_page, thumb);
	n = arm_arch_ops.xol_prepare(&ai, A(slot_page) + 64, slot, sizeof(slot), &xol);
	if (n < 0) {
		printf("FAIL %s: %0*x: xol_prepare %d\n", f->name, len * 2, w, n);
		failures++;
		return;
	}
	memcpy(slot_page + 64, slot, (size_t)n);
	__builtin___clear_cache((char *)slot_page, (char *)slot_page + PAGE);
	s_in = in;
	s_in.r[15] = A(slot_page) + 64;
	if (xol.scratch_gpr >= 0) {
		xol.scratch_saved = s_in.r[xol.scratch_gpr];
		s_in.r[xol.scratch_gpr] = (uint32_t)xol.scratch_value;
	}
	arm_run(&s_in, &s_out);
	if (xol.step) {
		memset(&r, 0, sizeof(r));
		for (int i = 0; i < 15; i++)
			r.gpr[i] = s_out.r[i];
		r.pc = s_out.r[15];
		r.flags = s_out.r[16];
		if (arm_arch_ops.xol_fixup(&ai, &xol, &r) == 0) {
			for (int i = 0; i < 15; i++)
				s_out.r[i] = (uint32_t)r.gpr[i];
			s_out.r[15] = (uint32_t)r.pc;
		}
	}
	compared++;
	if (same(&out, &s_out) && memcmp(window, after_native, WINDOW) == 0 &&
	    out.r[15] == at + len)
		return;
	failures++;
	if (form_failures++ < 3) {
		printf("FAIL %s, slot %s: %0*x at %08x (%s), slot %d bytes, step %d, "
		       "scratch r%d\n", f->name, where, len * 2, w, at, ai.reason, n,
		       xol.step, xol.scratch_gpr);
		arm_print_state("in", &in);
		arm_print_state("in place", &out);
		arm_print_state("in the slot", &s_out);
		for (uint32_t i = 0; i < WINDOW; i += 4)
			if (memcmp(window + i, after_native + i, 4)) {
				uint32_t a, b;

				memcpy(&a, after_native + i, 4);
				memcpy(&b, window + i, 4);
				printf("  data at %08x: in place %08x, in the slot "
				       "%08x\n", A(window) + i, a, b);
			}
	}
}

int main(void)
{
	if (arm_run_init()) {
		perror("arm_run_init");
		return 99;
	}
	region = mmap(NULL, REGION, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED) {
		perror("mmap");
		return 99;
	}
	window = region + REGION / 2;
	page = window + WINDOW / 2;
	near_slot = window + WINDOW;
	far_slot = region + MIB;
	if (mprotect(window, WINDOW, PROT_READ | PROT_WRITE) ||
	    mprotect(page, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC) ||
	    mprotect(near_slot, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC) ||
	    mprotect(far_slot, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC)) {
		perror("mprotect");
		return 99;
	}
	for (uint32_t i = 0; i < WINDOW; i += 4) {
		uint32_t v = rnd();

		if (window + i < page || window + i >= page + PAGE)
			memcpy(window + i, &v, 4);
	}
	for (size_t k = 0; k < sizeof(forms) / sizeof(forms[0]); k++) {
		for (int d = 0; d < 2; d++) {
			unsigned long before = compared, fails = failures;

			form_failures = 0;
			for (int i = 0; i < PER_FORM; i++)
				one(&forms[k], d ? far_slot : near_slot,
				    d ? "39 MiB away" : "32 KiB away");
			printf("%-32s %-12s %5lu compared, %lu mismatches\n",
			       forms[k].name, d ? "39 MiB away" : "32 KiB away",
			       compared - before, failures - fails);
			if (compared - before < 300) {
				printf("FAIL %s: fewer than 300 instances\n", forms[k].name);
				failures++;
			}
		}
	}
	printf("%lu slots compared with the original, %lu mismatches\n",
	       compared, failures);
	return failures ? 1 : 0;
}
