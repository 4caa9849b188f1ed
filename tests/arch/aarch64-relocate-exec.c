/*
 * aarch64-relocate-exec.c - XOL slots for aarch64 must do what the
 * original instruction does, near it and far from it.
 *
 * Cross-compiled with the arch/ sources and run on aarch64 (under
 * qemu-aarch64-static on an x86-64 host: tlib_cross_arch_test in tests/lib/common.sh).  For every
 * PC reader the relocation rewrites (b, bl, b.cond, cbz, tbz, br, blr,
 * ret, adr, adrp, the integer and SIMD&FP literal loads, prfm) and a few
 * instructions copied as they are (add, adds, ldr, str, stp to sp, msr
 * nzcv), random instances at a random address A are run
 *
 *   in place: the word at A, with a random register file (x0-x30, sp,
 *   NZCV, BTYPE, v0-v31), caught at the first signal (aarch64-run.h);
 *
 *   from a slot S filled by aarch64_arch_ops.xol_prepare, with the
 *   strategy the agent would force (boost: the copy and a B back to A+4;
 *   step: the copy alone, the agent's scratch register loaded, run to
 *   its end, then xol_fixup as probe_step_done does),
 *
 * with S at six distances from A: +-256 KiB and -512 KiB (the literal
 * and every branch re-encoded), +-100 MiB (beyond a literal's +-1 MiB:
 * MOVZ/MOVK; B back in reach) and +-300 MiB (beyond B's +-128 MiB: the
 * copy is stepped; a branch form whose target is out of reach must be
 * refused with -ERANGE, and only then).  Registers, pc, NZCV, BTYPE, the
 * v registers and the data the code stores must come out equal; the one
 * allowed difference is BTYPE 01 instead of 10 after a relocated blr (it
 * becomes `br`; 01 is accepted by every landing pad that accepts 10).
 *
 * A sits in the middle of 800 MiB of memory that is not executable, so
 * every branch target faults where it lands.  Exit 0 pass, 1 failure,
 * 99 harness.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "arch/aarch64/aarch64.h"
#include "tests/arch/aarch64-run.h"

#define PAGE 4096ull
#define MIB (1ull << 20)
#define REGION (800 * MIB)
#define DATA_SPAN (MIB + 2 * PAGE)	/* readable around A's page */
#define SLOT_SIZE 64			/* the agent's (agent/xol.c) */
#define STORE_AT 0x8000			/* stores go to the 512 bytes at
					 * the page + STORE_AT */
#define STORE_LEN 512
/* Fixed seed and counts; -DSEED=n -DSCALE=n for a longer run by hand. */
#ifndef SEED
#define SEED 0x13198a2e03707344ull
#endif
#include "tests/arch/xorshift.h"
#ifndef SCALE
#define SCALE 1
#endif
#define CASES (300 * SCALE)		/* per form, distance and strategy */

static uint8_t *orig;			/* A's page */
static unsigned long runs, refused, failures;
static uint8_t store_init[STORE_LEN];

static const struct place {
	const char *name;
	int64_t dist;
	uint8_t *page;
} places_init[] = {
	{ "near +256K", 256 * 1024, NULL },
	{ "near -512K", -512 * 1024, NULL },
	{ "mid +100M", 100 * MIB, NULL },
	{ "mid -100M", -100 * (int64_t)MIB, NULL },
	{ "far +300M", 300 * MIB, NULL },
	{ "far -300M", -300 * (int64_t)MIB, NULL },
};
#define NPLACES (sizeof(places_init) / sizeof(places_init[0]))
static struct place places[NPLACES];

static uint64_t rnd(void)
{
	return xorshift_next();
}

static unsigned int rndn(unsigned int n)
{
	return (unsigned int)(rnd() % n);
}

static uint64_t A_(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

/* A register value: often one that makes a test go the rarer way. */
static uint64_t rnd_value(void)
{
	return xorshift_value();
}

/* An indirect branch target: in the region, not in any page that holds
 * code (A's page but A+4 on, the slot pages, the harness). */
static uint64_t rnd_target(uint64_t a)
{
	for (;;) {
		uint64_t t = (a + rnd() % (600 * MIB) - 300 * MIB) & ~3ull;
		bool bad = t >= A_(orig) && t < A_(orig) + PAGE &&
			   (t <= a || t >= a + 64);

		for (size_t i = 0; i < NPLACES; i++)
			if (t >= A_(places[i].page) && t < A_(places[i].page) + PAGE)
				bad = true;
		if (!bad)
			return rndn(4) ? t : t | rnd() << 56;	/* tagged */
	}
}

/* ---- the forms ---- */

struct form {
	const char *name;
	uint32_t (*gen)(struct a64_state *s);
	bool with_v;
};

static uint32_t rt(void) { return rndn(32); }

static uint32_t g_b(struct a64_state *s) { (void)s; return 0x14000000u | (uint32_t)(rnd() & 0x3ffffff); }
static uint32_t g_bl(struct a64_state *s) { (void)s; return 0x94000000u | (uint32_t)(rnd() & 0x3ffffff); }
static uint32_t g_bcond(struct a64_state *s)
{
	(void)s;
	return 0x54000000u | (uint32_t)(rnd() & 0x7ffff) << 5 | rndn(16);
}

static uint32_t g_cb(struct a64_state *s)
{
	uint32_t r = rt();

	if (rndn(2) && r != 31)
		s->x[r] = rndn(2) ? 0 : rnd() << 32;
	return (uint32_t)rndn(2) << 31 | 0x34000000u | rndn(2) << 24 |
	       (uint32_t)(rnd() & 0x7ffff) << 5 | r;
}

static uint32_t g_tb(struct a64_state *s)
{
	uint32_t bit = rndn(64);

	(void)s;
	return (bit >> 5) << 31 | 0x36000000u | rndn(2) << 24 | (bit & 31) << 19 |
	       (uint32_t)(rnd() & 0x3fff) << 5 | rt();
}

static uint32_t g_indirect(struct a64_state *s)
{
	static const uint32_t ops[] = { 0xd61f0000u, 0xd63f0000u, 0xd65f0000u };
	uint32_t n = rndn(31);

	s->x[n] = rnd_target(s->pc);
	return ops[rndn(3)] | n << 5;
}

static uint32_t g_adr(struct a64_state *s)
{
	(void)s;
	return (rndn(2) ? 0x90000000u : 0x10000000u) |
	       (uint32_t)(rnd() & 0x601fffe0) | rt();
}

/* opc 011 V 00 imm19 Rt: V 0 opc 0-3 = ldr w, ldr x, ldrsw, prfm */
static uint32_t g_lit(struct a64_state *s)
{
	(void)s;
	return rndn(4) << 30 | 0x18000000u | (uint32_t)(rnd() & 0x7ffff) << 5 | rt();
}

/* V 1 opc 0-2 = ldr s, d, q */
static uint32_t g_lit_fp(struct a64_state *s)
{
	(void)s;
	return rndn(3) << 30 | 0x1c000000u | (uint32_t)(rnd() & 0x7ffff) << 5 | rt();
}

/* Copied as they are: ALU, flags, loads and stores. */
static uint32_t g_plain(struct a64_state *s)
{
	uint64_t store = A_(orig) + STORE_AT;
	uint32_t d = rndn(31), n = rndn(31), m = rndn(31);

	switch (rndn(6)) {
	case 0:		/* add xd, xn, #imm12 */
		return 0x91000000u | (uint32_t)rndn(4096) << 10 | n << 5 | d;
	case 1:		/* adds xd, xn, xm */
		return 0xab000000u | m << 16 | n << 5 | d;
	case 2:		/* ldr xd, [xn, #imm*8] */
		s->x[n] = store + 8 * rndn(16);
		return 0xf9400000u | rndn(32) << 10 | n << 5 | d;
	case 3:		/* str xd, [xn, #imm*8] */
		s->x[n] = store + 8 * rndn(16);
		return 0xf9000000u | rndn(32) << 10 | n << 5 | d;
	case 4:		/* stp xd, xm, [sp, #-16]! */
		s->sp = store + 256 + 16 * rndn(8);
		return 0xa9bf0000u | m << 10 | 31 << 5 | d;
	default:	/* msr nzcv, xd */
		return 0xd51b4200u | d;
	}
}

static const struct form forms[] = {
	{ "b", g_b, false },
	{ "bl", g_bl, false },
	{ "b.cond", g_bcond, false },
	{ "cbz/cbnz", g_cb, false },
	{ "tbz/tbnz", g_tb, false },
	{ "br/blr/ret", g_indirect, false },
	{ "adr/adrp", g_adr, false },
	{ "ldr/ldrsw/prfm lit", g_lit, false },
	{ "ldr s/d/q lit", g_lit_fp, true },
	{ "plain", g_plain, false },
};

/* ---- one case ---- */

static bool same(const struct a64_state *o, const struct a64_state *r,
		 bool with_v, bool blr)
{
	uint64_t bo = o->pstate & A64_PSTATE_BTYPE, br = r->pstate & A64_PSTATE_BTYPE;

	if (memcmp(o->x, r->x, sizeof(o->x)) || o->sp != r->sp || o->pc != r->pc ||
	    (o->pstate & A64_PSTATE_NZCV) != (r->pstate & A64_PSTATE_NZCV))
		return false;
	if (bo != br && !(blr && bo == 2u << 10 && br == 1u << 10))
		return false;
	return !with_v || memcmp(o->v, r->v, sizeof(o->v)) == 0;
}

/* Whether refusing to relocate is right: a branch whose target (or,
 * conditional, whose fall-through A+4) is beyond B's reach of the slot's
 * words, or blr x30. */
static bool refusal_ok(const struct aarch64_insn *in, uint64_t slot, int err)
{
	uint64_t end = slot + SLOT_SIZE - 4;

	if (err == -EINVAL)
		return in->op == AARCH64_OP_BLR && in->rn == 30;
	if (err != -ERANGE)
		return false;
	switch (in->op) {
	case AARCH64_OP_B:
	case AARCH64_OP_BL:
		return !aarch64_in_b_reach(slot, in->target) ||
		       !aarch64_in_b_reach(end, in->target);
	case AARCH64_OP_BCOND:
	case AARCH64_OP_CBZ:
	case AARCH64_OP_CBNZ:
	case AARCH64_OP_TBZ:
	case AARCH64_OP_TBNZ:
		return !aarch64_in_b_reach(slot, in->target) ||
		       !aarch64_in_b_reach(end, in->target) ||
		       !aarch64_in_b_reach(slot, in->addr + 4) ||
		       !aarch64_in_b_reach(end, in->addr + 4);
	default:
		return false;
	}
}

static void show(const char *what, const struct form *f, const struct place *pl,
		 uint32_t w, uint64_t a, uint64_t slot, const uint8_t *code, int n)
{
	printf("FAIL %s [%s, %s]: word %08x at %#llx, slot %#llx:", what, f->name,
	       pl->name, w, (unsigned long long)a, (unsigned long long)slot);
	for (int i = 0; i + 4 <= n; i += 4)
		printf(" %08x", aarch64_word(code + i));
	printf("\n");
}

static int one_case(const struct form *f, const struct place *pl,
		    enum arch_strategy strategy, unsigned int *shown)
{
	uint64_t a = A_(orig) + 4 * rndn(PAGE / 4 - 16);
	uint64_t slot = A_(pl->page) + SLOT_SIZE * rndn(PAGE / SLOT_SIZE);
	struct a64_state in, in2, o, r;
	uint8_t word[4], code[SLOT_SIZE], mem_o[STORE_LEN];
	struct arch_insn insn;
	struct arch_xol xol;
	uint32_t w;
	int n;

	memset(&in, 0, sizeof(in));
	for (int i = 0; i < 31; i++)
		in.x[i] = rnd_value();
	for (int i = 0; i < 32; i++)
		in.v[i] = (unsigned __int128)rnd() << 64 | rnd();
	in.sp = rnd_value();
	in.pc = a;
	in.pstate = (rnd() & A64_PSTATE_NZCV) | (uint64_t)rndn(4) << 10;
	w = f->gen(&in);
	memcpy(word, &w, 4);

	if (aarch64_arch_ops.insn_decode(word, 4, a, &insn) ||
	    insn.strategy == ARCH_REJECT) {
		failures++;
		printf("FAIL decode [%s]: word %08x: %s\n", f->name, w, insn.reason);
		return 1;
	}
	insn.strategy = strategy;
	memset(code, 0, sizeof(code));
	n = aarch64_arch_ops.xol_prepare(&insn, slot, code, sizeof(code), &xol);
	if (n < 0) {
		if (refusal_ok((const struct aarch64_insn *)insn.priv, slot, n)) {
			refused++;
			return 0;
		}
		failures++;
		if ((*shown)++ < 5)
			show("refused", f, pl, w, a, slot, code, 0),
			printf("  xol_prepare: %s\n", strerror(-n));
		return 1;
	}

	memcpy((void *)(uintptr_t)slot, code, SLOT_SIZE);
	memcpy((void *)(uintptr_t)a, word, 4);
	__builtin___clear_cache((char *)pl->page, (char *)pl->page + PAGE);
	__builtin___clear_cache((char *)orig, (char *)orig + PAGE);

	memcpy(orig + STORE_AT, store_init, STORE_LEN);
	a64_run(&in, &o, f->with_v);
	memcpy(mem_o, orig + STORE_AT, STORE_LEN);

	in2 = in;
	in2.pc = slot;
	if (xol.step && xol.scratch_gpr >= 0) {
		xol.scratch_saved = in.x[xol.scratch_gpr];
		in2.x[xol.scratch_gpr] = xol.scratch_value;
	}
	memcpy(orig + STORE_AT, store_init, STORE_LEN);
	a64_run(&in2, &r, f->with_v);
	if (xol.step) {
		/* probe_step_done: the copy's end, or a branch that left */
		struct arch_gpregs g;

		memcpy(g.gpr, r.x, sizeof(r.x));
		g.gpr[31] = r.sp;
		g.pc = r.pc;
		g.flags = r.pstate;
		if (aarch64_arch_ops.xol_fixup(&insn, &xol, &g) != 0 &&
		    xol.scratch_gpr >= 0)
			g.gpr[xol.scratch_gpr] = xol.scratch_saved;
		memcpy(r.x, g.gpr, sizeof(r.x));
		r.pc = g.pc;
	}
	memset((void *)(uintptr_t)slot, 0, SLOT_SIZE);
	memset((void *)(uintptr_t)a, 0, 4);
	runs++;

	if (same(&o, &r, f->with_v,
		 ((const struct aarch64_insn *)insn.priv)->op == AARCH64_OP_BLR) &&
	    memcmp(mem_o, orig + STORE_AT, STORE_LEN) == 0)
		return 0;
	failures++;
	if ((*shown)++ < 5) {
		show(xol.step ? "stepped slot" : "boosted slot", f, pl, w, a, slot,
		     code, n);
		if (memcmp(mem_o, orig + STORE_AT, STORE_LEN))
			printf("  stored data differ\n");
		a64_print_state("state", &in, f->with_v);
		a64_print_state("in place", &o, f->with_v);
		a64_print_state("from the slot", &r, f->with_v);
	}
	return 1;
}

int main(void)
{
	uint8_t *region;
	int err;

	setvbuf(stdout, NULL, _IONBF, 0);
	if ((err = a64_run_init())) {
		printf("ERROR: signal set-up: %s\n", strerror(-err));
		return 99;
	}
	region = mmap(NULL, REGION, PROT_NONE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (region == MAP_FAILED) {
		printf("ERROR: cannot reserve %llu MiB\n", REGION / MIB);
		return 99;
	}
	orig = (uint8_t *)(uintptr_t)((A_(region) + REGION / 2) & ~(PAGE - 1));
	if (mprotect(orig - DATA_SPAN, 2 * DATA_SPAN + PAGE, PROT_READ | PROT_WRITE)) {
		printf("ERROR: mprotect: %s\n", strerror(errno));
		return 99;
	}
	for (uint64_t *p = (uint64_t *)(orig - DATA_SPAN);
	     p < (uint64_t *)(orig + PAGE + DATA_SPAN); p++)
		*p = rnd();
	memcpy(store_init, orig + STORE_AT, STORE_LEN);
	memcpy(places, places_init, sizeof(places));
	for (size_t i = 0; i < NPLACES; i++) {
		places[i].page = orig + places[i].dist;
		if (mprotect(places[i].page, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC)) {
			printf("ERROR: mprotect %s: %s\n", places[i].name, strerror(errno));
			return 99;
		}
		memset(places[i].page, 0, PAGE);
	}
	if (mprotect(orig, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC)) {
		printf("ERROR: mprotect: %s\n", strerror(errno));
		return 99;
	}
	memset(orig, 0, PAGE);	/* udf #0 */
	printf("A's page %p\n", (void *)orig);

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		for (size_t k = 0; k < NPLACES; k++) {
			unsigned long r0 = runs, f0 = failures, x0 = refused;
			unsigned int shown = 0;

			for (unsigned int c = 0; c < CASES; c++) {
				one_case(&forms[i], &places[k], ARCH_BOOST, &shown);
				one_case(&forms[i], &places[k], ARCH_STEP, &shown);
			}
			printf("%-20s %-11s %4lu run, %4lu refused, %lu differ\n",
			       forms[i].name, places[k].name, runs - r0,
			       refused - x0, failures - f0);
		}
	}
	printf("%lu slots run and compared, %lu refused (out of reach), %lu failures\n",
	       runs, refused, failures);
	return failures ? 1 : 0;
}
