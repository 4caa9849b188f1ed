/*
 * aarch64-simulate-native.c - the aarch64 simulations against the CPU.
 *
 * Cross-compiled with the arch/ sources and run on aarch64 (under
 * qemu-aarch64-static on an x86-64 host: tlib_cross_arch_test in tests/lib/common.sh).  For every
 * simulated form, thousands of random instances (random encodings, all
 * of x0-x30, sp, NZCV and BTYPE random, fixed seed) are run twice:
 *
 *   natively: the word is written at a random address A of an RWX page
 *   whose other words are UDF; a64_run enters it with the random
 *   register file and catches the state at the first signal (the UDF at
 *   A+4, or the fault of a branch target: A sits in the middle of
 *   256 MiB of memory that is not executable, so every target of B,
 *   B.cond, CBZ, TBZ ... faults where it lands);
 *
 *   simulated: aarch64_arch_ops.insn_decode (which must say "emulate")
 *   and insn_emulate on the same register file, reading memory (the
 *   literals: +-1 MiB of random bytes around A) through arch_mem.
 *
 * x0-x30, sp, pc, NZCV and BTYPE must be equal, and the pc the CPU
 * reached must be one insn_next_pcs gives for the same state (where a
 * software step would stop).  A mismatch prints the word, the state and
 * both results.  Exit 0 pass, 1 mismatch, 99 harness.
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
/* Every B target from the page lies inside [base, base + REGION). */
#define REGION ((256 * MIB) + 32 * PAGE)
#define DATA_SPAN (MIB + 2 * PAGE)	/* readable on each side of the page */

static uint8_t *region, *page;		/* page: the RWX page of A */
/* Fixed seed and counts; -DSEED=n -DSCALE=n for a longer run by hand. */
#ifndef SEED
#define SEED 0x243f6a8885a308d3ull
#endif
#include "tests/arch/xorshift.h"
#ifndef SCALE
#define SCALE 1
#endif
static unsigned long compared, failures;

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

/* ---- executable mappings a random branch target must not hit ---- */

struct range {
	uint64_t lo, hi;
};
static struct range exec_maps[64];
static size_t n_exec_maps;

static void read_maps(void)
{
	char line[512], perms[8];
	unsigned long long lo, hi;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && n_exec_maps < 64)
		if (sscanf(line, "%llx-%llx %7s", &lo, &hi, perms) == 3 &&
		    perms[2] == 'x' && lo != A_(page))
			exec_maps[n_exec_maps++] = (struct range){ lo, hi };
	fclose(f);
}

/* Whether a jump to `t`, with or without its top byte, could run the
 * harness's own code. */
static bool hits_harness(uint64_t t)
{
	uint64_t tbi = (uint64_t)aarch64_sext(t, 56);

	for (size_t i = 0; i < n_exec_maps; i++)
		if ((t >= exec_maps[i].lo && t < exec_maps[i].hi) ||
		    (tbi >= exec_maps[i].lo && tbi < exec_maps[i].hi))
			return true;
	return false;
}

/* A value for an indirect branch: in the region (aligned or not), the
 * same with a tag in the top byte, near A, or anything at all.  Never A
 * itself: `blr x30` there would run again with the x30 it just wrote. */
static uint64_t rnd_target(uint64_t a)
{
	for (;;) {
		uint64_t t = a + (rnd() % (200 * MIB)) - 100 * MIB;

		switch (rndn(5)) {
		case 0: t &= ~3ull; break;
		case 1: break;			/* maybe misaligned */
		case 2: t = (t & ~3ull) | (rnd() << 56); break;
		case 3: t = a + 4 + 4 * rndn(8); break;
		default: t = rnd(); break;
		}
		if (!hits_harness(t) && t != a && (uint64_t)aarch64_sext(t, 56) != a)
			return t;
	}
}

/* ---- memory as the simulation sees it: the mapped data around A ---- */

static int mem_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	if (addr < A_(page) - DATA_SPAN || addr + len > A_(page) + PAGE + DATA_SPAN)
		return -EFAULT;
	memcpy(buf, (void *)(uintptr_t)addr, len);
	return 0;
}

static const struct arch_mem sim_mem = { NULL, mem_read, NULL };

/* ---- the forms: each makes a random word and may adjust the state ---- */

typedef uint32_t gen_fn(struct a64_state *s);

static uint32_t rt(void)
{
	return rndn(32);
}

static uint32_t gen_b(struct a64_state *s)
{
	(void)s;
	return 0x14000000u | (uint32_t)(rnd() & 0x3ffffff);
}

static uint32_t gen_bl(struct a64_state *s)
{
	(void)s;
	return 0x94000000u | (uint32_t)(rnd() & 0x3ffffff);
}

/* b.cond: 0101010 0 imm19 0 cond */
static uint32_t gen_bcond(struct a64_state *s)
{
	(void)s;
	return 0x54000000u | (uint32_t)(rnd() & 0x7ffff) << 5 | rndn(16);
}

/* bc.cond (FEAT_HBC): b.cond with o0 set */
static uint32_t gen_bccond(struct a64_state *s)
{
	return gen_bcond(s) | 0x10;
}

/* cbz / cbnz: sf 011010 op imm19 Rt */
static uint32_t gen_cb(struct a64_state *s, uint32_t op)
{
	uint32_t r = rt();

	if (rndn(3) == 0 && r != 31)
		s->x[r] = rndn(2) ? 0 : rnd() << 32;
	return (uint32_t)rndn(2) << 31 | 0x34000000u | op << 24 |
	       (uint32_t)(rnd() & 0x7ffff) << 5 | r;
}

static uint32_t gen_cbz(struct a64_state *s) { return gen_cb(s, 0); }
static uint32_t gen_cbnz(struct a64_state *s) { return gen_cb(s, 1); }

/* tbz / tbnz: b5 011011 op b40 imm14 Rt */
static uint32_t gen_tb(struct a64_state *s, uint32_t op)
{
	uint32_t bit = rndn(64);

	(void)s;
	return (bit >> 5) << 31 | 0x36000000u | op << 24 | (bit & 31) << 19 |
	       (uint32_t)(rnd() & 0x3fff) << 5 | rt();
}

static uint32_t gen_tbz(struct a64_state *s) { return gen_tb(s, 0); }
static uint32_t gen_tbnz(struct a64_state *s) { return gen_tb(s, 1); }

/* br / blr / ret: 1101011 0 0 op 11111 000000 Rn 00000 */
static uint32_t gen_indirect(struct a64_state *s, uint32_t base)
{
	uint32_t n = rt();

	if (n != 31)
		s->x[n] = rnd_target(s->pc);
	return base | n << 5;
}

static uint32_t gen_br(struct a64_state *s) { return gen_indirect(s, 0xd61f0000u); }
static uint32_t gen_blr(struct a64_state *s) { return gen_indirect(s, 0xd63f0000u); }
static uint32_t gen_ret(struct a64_state *s) { return gen_indirect(s, 0xd65f0000u); }

/* adr / adrp: op immlo 10000 immhi Rd */
static uint32_t gen_adr(struct a64_state *s)
{
	(void)s;
	return 0x10000000u | (uint32_t)(rnd() & 0x601fffe0) | rt();
}

static uint32_t gen_adrp(struct a64_state *s)
{
	(void)s;
	return 0x90000000u | (uint32_t)(rnd() & 0x601fffe0) | rt();
}

/* ldr literal: opc 011 0 00 imm19 Rt, the literal within the data */
static uint32_t gen_lit(struct a64_state *s, uint32_t opc)
{
	(void)s;
	return opc << 30 | 0x18000000u | (uint32_t)(rnd() & 0x7ffff) << 5 | rt();
}

static uint32_t gen_ldr_w(struct a64_state *s) { return gen_lit(s, 0); }
static uint32_t gen_ldr_x(struct a64_state *s) { return gen_lit(s, 1); }
static uint32_t gen_ldrsw(struct a64_state *s) { return gen_lit(s, 2); }
static uint32_t gen_prfm(struct a64_state *s) { return gen_lit(s, 3); }

static uint32_t gen_nop(struct a64_state *s)
{
	(void)s;
	return AARCH64_NOP;
}

/* bti {, c, j, jc}: hint #32, 34, 36, 38 */
static uint32_t gen_bti(struct a64_state *s)
{
	(void)s;
	return 0xd503241fu | rndn(4) << 6;
}

static const struct form {
	const char *name;
	gen_fn *gen;
	unsigned int cases;
	uint32_t probe;		/* a word to try first: the form is compared
				 * only if the CPU has it (no SIGILL) */
} forms[] = {
	{ "b", gen_b, 2000 },
	{ "bl", gen_bl, 2000 },
	{ "b.cond", gen_bcond, 8000 },	/* 500 per condition */
	{ "bc.cond", gen_bccond, 2000, 0x5400005e },	/* bc.al .+8 */
	{ "cbz", gen_cbz, 2000 },
	{ "cbnz", gen_cbnz, 2000 },
	{ "tbz", gen_tbz, 2000 },
	{ "tbnz", gen_tbnz, 2000 },
	{ "br", gen_br, 2000 },
	{ "blr", gen_blr, 2000 },
	{ "ret", gen_ret, 2000 },
	{ "adr", gen_adr, 2000 },
	{ "adrp", gen_adrp, 2000 },
	{ "ldr w, literal", gen_ldr_w, 2000 },
	{ "ldr x, literal", gen_ldr_x, 2000 },
	{ "ldrsw, literal", gen_ldrsw, 2000 },
	{ "prfm, literal", gen_prfm, 2000 },
	{ "nop", gen_nop, 1000 },
	{ "bti", gen_bti, 1000 },
};

static void to_gpregs(const struct a64_state *s, struct arch_gpregs *r)
{
	memset(r, 0, sizeof(*r));
	memcpy(r->gpr, s->x, sizeof(s->x));
	r->gpr[31] = s->sp;
	r->pc = s->pc;
	r->flags = s->pstate;
}

static void from_gpregs(const struct arch_gpregs *r, struct a64_state *s)
{
	memset(s, 0, sizeof(*s));
	memcpy(s->x, r->gpr, sizeof(s->x));
	s->sp = r->gpr[31];
	s->pc = r->pc;
	s->pstate = r->flags;
}

static bool same(const struct a64_state *a, const struct a64_state *b)
{
	const uint64_t m = A64_PSTATE_NZCV | A64_PSTATE_BTYPE;

	return memcmp(a->x, b->x, sizeof(a->x)) == 0 && a->sp == b->sp &&
	       a->pc == b->pc && (a->pstate & m) == (b->pstate & m);
}

/* One instance: 0 equal, 1 different. */
static int one_case(const struct form *f, unsigned int *shown)
{
	struct a64_state in, cpu, sim;
	struct arch_gpregs regs;
	struct arch_insn insn;
	uint64_t a = A_(page) + 4 * rndn(PAGE / 4), pcs[2] = { 0, 0 };
	bool step_ok;
	int npcs;
	uint8_t b[4];
	uint32_t w;
	int err;

	memset(&in, 0, sizeof(in));
	for (int i = 0; i < 31; i++)
		in.x[i] = rnd_value();
	in.sp = rnd_value();
	in.pc = a;
	in.pstate = (rnd() & A64_PSTATE_NZCV) | (uint64_t)rndn(4) << 10;
	w = f->gen(&in);

	b[0] = (uint8_t)w;
	b[1] = (uint8_t)(w >> 8);
	b[2] = (uint8_t)(w >> 16);
	b[3] = (uint8_t)(w >> 24);
	err = aarch64_arch_ops.insn_decode(b, 4, a, &insn);
	to_gpregs(&in, &regs);
	npcs = err ? 0 : aarch64_arch_ops.insn_next_pcs(&insn, &regs, &sim_mem, pcs);
	if (err == 0 && insn.strategy == ARCH_EMULATE)
		err = aarch64_arch_ops.insn_emulate(&insn, &regs, &sim_mem);
	else if (err == 0)
		err = -EPROTO;		/* not classified as simulated */
	from_gpregs(&regs, &sim);

	memcpy((void *)(uintptr_t)a, b, 4);
	__builtin___clear_cache((char *)page, (char *)page + PAGE);
	a64_run(&in, &cpu, false);
	memset((void *)(uintptr_t)a, 0, 4);	/* back to udf */

	compared++;
	/* a step from the same state stops where the CPU went */
	step_ok = (npcs >= 1 && pcs[0] == cpu.pc) || (npcs == 2 && pcs[1] == cpu.pc);
	if (err == 0 && same(&cpu, &sim) && step_ok)
		return 0;
	failures++;
	if ((*shown)++ < 5) {
		printf("FAIL %s: word %08x at %#llx", f->name, w, (unsigned long long)a);
		if (err)
			printf(" (decode/simulate error %d, strategy %s: %s)", err,
			       arch_strategy_name(insn.strategy),
			       insn.reason ? insn.reason : "");
		if (!step_ok)
			printf(" (insn_next_pcs: %d, %#llx %#llx)", npcs,
			       (unsigned long long)pcs[0], (unsigned long long)pcs[1]);
		printf("\n");
		a64_print_state("state", &in, false);
		a64_print_state("cpu", &cpu, false);
		a64_print_state("simulated", &sim, false);
	}
	return 1;
}

/* Whether the CPU runs `w` (at the page's start) without SIGILL there. */
static bool cpu_has(uint32_t w)
{
	struct a64_state in, out;

	memset(&in, 0, sizeof(in));
	in.pc = A_(page);
	memcpy(page, &w, 4);
	__builtin___clear_cache((char *)page, (char *)page + PAGE);
	a64_run(&in, &out, false);
	memset(page, 0, 4);
	return !(out.sig == SIGILL && out.pc == in.pc);
}

int main(void)
{
	uint64_t base;
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
	base = (A_(region) + 16 * PAGE) & ~(PAGE - 1);
	page = (uint8_t *)(uintptr_t)(base + 128 * MIB);
	if (mprotect(page - DATA_SPAN, 2 * DATA_SPAN + PAGE, PROT_READ | PROT_WRITE) ||
	    mprotect(page, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC)) {
		printf("ERROR: mprotect: %s\n", strerror(errno));
		return 99;
	}
	for (uint64_t *p = (uint64_t *)(page - DATA_SPAN);
	     p < (uint64_t *)(page + PAGE + DATA_SPAN); p++)
		*p = rnd();
	memset(page, 0, PAGE);		/* udf #0 everywhere */
	read_maps();
	printf("code page %p, %zu executable mappings avoided\n", (void *)page,
	       n_exec_maps);

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		unsigned int bad = 0, shown = 0;

		if (forms[i].probe && !cpu_has(forms[i].probe)) {
			printf("%-16s not compared: undefined on this CPU (SIGILL)\n",
			       forms[i].name);
			continue;
		}
		for (unsigned int k = 0; k < forms[i].cases * SCALE; k++)
			bad += one_case(&forms[i], &shown);
		printf("%-16s %5u states, %u differ\n", forms[i].name,
		       forms[i].cases * SCALE, bad);
	}
	printf("%lu instances compared, %lu differ\n", compared, failures);
	return failures ? 1 : 0;
}
