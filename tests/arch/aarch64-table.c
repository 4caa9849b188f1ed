/*
 * aarch64-table.c - table tests of the AArch64 engine (cmocka).
 *
 * Each row is an instruction word, produced once with
 * `aarch64-linux-gnu-as` and checked with objdump, with its source beside
 * it and the strategy the classifier must choose (and for a rejection a
 * piece of the reason).  Simulations run on a fake register file and a
 * fake memory; relocations are checked by running the slot's words on a
 * tiny interpreter of the few forms relocation emits (MOVZ, MOVK, B,
 * B.cond ...) and asserting where execution goes, plus golden words.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "arch/aarch64/aarch64.h"

#define E ARCH_EMULATE
#define B ARCH_BOOST
#define R ARCH_REJECT

static const struct row {
	uint32_t word;
	const char *src;	/* the assembler source it came from */
	int strategy;
	const char *reason;	/* a piece of the rejection's reason */
} rows[] = {
	{ 0x14000040, "b .+0x100",                       E, NULL },
	{ 0x97fffc00, "bl .-0x1000",                     E, NULL },
	{ 0x54000201, "b.ne .+0x40",                     E, NULL },
	{ 0x54000050, "bc.eq .+8",                       E, NULL },
	{ 0x34000103, "cbz w3, .+0x20",                  E, NULL },
	{ 0xb5ffffc4, "cbnz x4, .-8",                    E, NULL },
	{ 0x36180085, "tbz w5, #3, .+0x10",              E, NULL },
	{ 0xb7ffff86, "tbnz x6, #63, .-0x10",            E, NULL },
	{ 0xd61f0200, "br x16",                          E, NULL },
	{ 0xd63f0100, "blr x8",                          E, NULL },
	{ 0xd65f03c0, "ret",                             E, NULL },
	{ 0xd65f0060, "ret x3",                          E, NULL },
	{ 0xd61f083f, "braaz x1",                        B, NULL },
	{ 0xd73f0843, "blraa x2, x3",                    B, NULL },
	{ 0xd65f0bff, "retaa",                           B, NULL },
	{ 0x100091a0, "adr x0, .+0x1234",                E, NULL },
	{ 0x90000001, "adrp x1, .+0x5000",               E, NULL },
	{ 0x18000802, "ldr w2, .+0x100",                 E, NULL },
	{ 0x58fff803, "ldr x3, .-0x100",                 E, NULL },
	{ 0x98000404, "ldrsw x4, .+0x80",                E, NULL },
	{ 0xd8000200, "prfm pldl1keep, .+0x40",          E, NULL },
	{ 0x1c000085, "ldr s5, .+0x10",                  B, NULL },
	{ 0x5c000086, "ldr d6, .+0x10",                  B, NULL },
	{ 0x9c000087, "ldr q7, .+0x10",                  B, NULL },
	{ 0xd503201f, "nop",                             E, NULL },
	{ 0xd503245f, "bti c",                           E, NULL },
	{ 0xd503233f, "paciasp",                         B, NULL },
	{ 0xd50323bf, "autiasp",                         B, NULL },
	{ 0xa9be7bfd, "stp x29, x30, [sp, #-32]!",       B, NULL },
	{ 0x910003fd, "mov x29, sp",                     B, NULL },
	{ 0x91004020, "add x0, x1, #16",                 B, NULL },
	{ 0xf9400420, "ldr x0, [x1, #8]",                B, NULL },
	{ 0xd53bd040, "mrs x0, tpidr_el0",               B, NULL },
	{ 0xd53be041, "mrs x1, cntvct_el0",              B, NULL },
	{ 0xd51b4202, "msr nzcv, x2",                    B, NULL },
	{ 0xd51b4403, "msr fpcr, x3",                    B, NULL },
	{ 0xd5033bbf, "dmb ish",                         B, NULL },
	{ 0xd5033f5f, "clrex",                           B, NULL },
	{ 0xd50b7420, "dc zva, x0",                      B, NULL },
	{ 0x1e622820, "fadd d0, d1, d2",                 B, NULL },
	{ 0xc8e0fc41, "casal x0, x1, [x2]",              B, NULL },
	{ 0xb8200041, "ldadd w0, w1, [x2]",              B, NULL },
	{ 0xc8dffc20, "ldar x0, [x1]",                   B, NULL },
	{ 0xc85f7c20, "ldxr x0, [x1]",                   R, "load-exclusive" },
	{ 0x885ffc20, "ldaxr w0, [x1]",                  R, "load-exclusive" },
	{ 0xc8027c20, "stxr w2, x0, [x1]",               R, "store-exclusive" },
	{ 0x8802fc20, "stlxr w2, w0, [x1]",              R, "store-exclusive" },
	{ 0xc87f0440, "ldxp x0, x1, [x2]",               R, "load-exclusive" },
	{ 0xc8238440, "stlxp w3, x0, x1, [x2]",          R, "store-exclusive" },
	{ 0xd4000001, "svc #0",                          R, "system call" },
	{ 0xd4000002, "hvc #0",                          R, "privileged" },
	{ 0xd4000003, "smc #0",                          R, "privileged" },
	{ 0xd4200000, "brk #0",                          R, "already a breakpoint" },
	{ 0xd4207d00, "brk #0x3e8",                      R, "already a breakpoint" },
	{ 0xd4400000, "hlt #0",                          R, "halting" },
	{ 0xd4a00001, "dcps1",                           R, "privileged" },
	{ 0xd69f03e0, "eret",                            R, "exception return" },
	{ 0xd50342df, "msr daifset, #2",                 R, "PSTATE field" },
	{ 0xd50041bf, "msr spsel, #1",                   R, "PSTATE field" },
	{ 0xd503415f, "msr dit, #1",                     B, NULL },
	{ 0xd503403f, "msr ssbs, #0",                    B, NULL },
	{ 0xd503419f, "msr tco, #1",                     B, NULL },
	{ 0xd503477f, "smstart",                         R, "streaming" },
	{ 0xd503467f, "smstop",                          R, "streaming" },
	{ 0xd51b4240, "msr svcr, x0",                    R, "streaming" },
	{ 0xd5181000, "msr sctlr_el1, x0",               R, "EL1 register" },
	{ 0xd508871f, "tlbi vmalle1",                    R, "privileged" },
	{ 0x00000000, "udf #0",                          R, "permanently undefined" },
	{ 0x19010440, "cpyfp [x0]!, [x1]!, x2!",         R, "memory copy/set" },
	{ 0x19c20420, "setp [x0]!, x1!, x2",             R, "memory copy/set" },
	{ 0xd503205f, "wfe",                             B, NULL },
	{ 0xd503203f, "yield",                           B, NULL },
	{ 0xd500401f, "cfinv",                           B, NULL },
};

static void put_word(uint8_t *b, uint32_t w)
{
	b[0] = (uint8_t)w;
	b[1] = (uint8_t)(w >> 8);
	b[2] = (uint8_t)(w >> 16);
	b[3] = (uint8_t)(w >> 24);
}

static int decode_word(uint32_t w, uint64_t addr, struct arch_insn *ai)
{
	uint8_t b[4];

	put_word(b, w);
	return aarch64_arch_ops.insn_decode(b, 4, addr, ai);
}

static void test_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct arch_insn ai;

		print_message("%08x  %s\n", r->word, r->src);
		assert_int_equal(decode_word(r->word, 0x400000, &ai), 0);
		assert_int_equal(ai.len, 4);
		assert_int_equal(ai.strategy, r->strategy);
		assert_non_null(ai.reason);
		if (r->reason)
			assert_non_null(strstr(ai.reason, r->reason));
	}
}

/* Too short, misaligned, unallocated: an error, the reason still set. */
static void test_decode_errors(void **state)
{
	static const uint8_t nop[4] = { 0x1f, 0x20, 0x03, 0xd5 };
	struct arch_insn ai;

	(void)state;
	assert_int_equal(aarch64_arch_ops.insn_decode(nop, 3, 0x1000, &ai), -ENODATA);
	assert_non_null(ai.reason);
	assert_int_equal(aarch64_arch_ops.insn_decode(nop, 4, 0x1002, &ai), -EILSEQ);
	assert_non_null(strstr(ai.reason, "aligned"));
	/* op0 0001 and 0011 are unallocated; the length is still known */
	assert_int_equal(decode_word(0x02000000, 0x1000, &ai), -EILSEQ);
	assert_int_equal(ai.len, 4);
	assert_int_equal(ai.strategy, ARCH_REJECT);
	assert_non_null(strstr(ai.reason, "unallocated"));
	assert_int_equal(decode_word(0x06000000, 0x1000, &ai), -EILSEQ);
	/* op0 0000 without bit 31, past UDF's imm16 */
	assert_int_equal(decode_word(0x00010000, 0x1000, &ai), -EILSEQ);
}

/* Targets computed at decode time, from the instruction's address. */
static void test_targets(void **state)
{
	struct aarch64_insn in;

	(void)state;
	aarch64_decode(&in, 0x14000040, 0x400000);	/* b .+0x100 */
	assert_int_equal(in.op, AARCH64_OP_B);
	assert_int_equal(in.target, 0x400100);
	aarch64_decode(&in, 0x97fffc00, 0x401000);	/* bl .-0x1000 */
	assert_int_equal(in.target, 0x400000);
	aarch64_decode(&in, 0x17ffffff, 0x400000);	/* b .-4 */
	assert_int_equal(in.target, 0x3ffffc);
	aarch64_decode(&in, 0x54000201, 0x400000);	/* b.ne .+0x40 */
	assert_int_equal(in.cond, 1);
	assert_int_equal(in.target, 0x400040);
	aarch64_decode(&in, 0xb5ffffc4, 0x400010);	/* cbnz x4, .-8 */
	assert_true(in.sf);
	assert_int_equal(in.rd, 4);
	assert_int_equal(in.target, 0x400008);
	aarch64_decode(&in, 0xb7ffff86, 0x400020);	/* tbnz x6, #63, .-0x10 */
	assert_int_equal(in.bit, 63);
	assert_int_equal(in.target, 0x400010);
	aarch64_decode(&in, 0x36180085, 0x400020);	/* tbz w5, #3, .+0x10 */
	assert_int_equal(in.bit, 3);
	assert_int_equal(in.target, 0x400030);
	aarch64_decode(&in, 0x100091a0, 0x400000);	/* adr x0, .+0x1234 */
	assert_int_equal(in.target, 0x401234);
	/* adrp x1, .+0x5000 at an address inside its page: the page of
	 * the instruction plus 5 pages */
	aarch64_decode(&in, 0xb0000021, 0x400abc);	/* adrp x1, imm 5 */
	assert_int_equal(in.op, AARCH64_OP_ADRP);
	assert_int_equal(in.target, 0x405000);
	aarch64_decode(&in, 0xf0ffffe1, 0x400abc);	/* adrp x1, imm -1 */
	assert_int_equal(in.target, 0x3ff000);
	aarch64_decode(&in, 0x58fff803, 0x400100);	/* ldr x3, .-0x100 */
	assert_int_equal(in.target, 0x400000);
	assert_int_equal(in.size, 8);
	aarch64_decode(&in, 0x98000404, 0x400000);	/* ldrsw x4, .+0x80 */
	assert_true(in.sign);
	assert_int_equal(in.size, 4);
	assert_int_equal(in.target, 0x400080);
	aarch64_decode(&in, 0x9c000087, 0x400000);	/* ldr q7, .+0x10 */
	assert_int_equal(in.op, AARCH64_OP_LDR_LIT_FP);
	assert_int_equal(in.size, 16);
}

/* ---- simulation ---- */

struct fake_mem {
	uint64_t base;
	uint8_t bytes[64];
	unsigned int reads;
};

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct fake_mem *m = ctx;

	m->reads++;
	if (addr < m->base || addr + len > m->base + sizeof(m->bytes))
		return -EFAULT;
	memcpy(buf, m->bytes + (addr - m->base), len);
	return 0;
}

static int sim(uint32_t w, uint64_t addr, struct arch_gpregs *r,
	       struct fake_mem *fm)
{
	struct arch_mem mem = { fm, fake_read, NULL };
	struct arch_insn ai;

	assert_int_equal(decode_word(w, addr, &ai), 0);
	assert_int_equal(ai.strategy, ARCH_EMULATE);
	r->pc = addr;
	return aarch64_arch_ops.insn_emulate(&ai, r, fm ? &mem : NULL);
}

static void fill(struct arch_gpregs *r)
{
	for (int i = 0; i < 32; i++)
		r->gpr[i] = 0x1000 + (uint64_t)i;
	r->flags = 0;
}

static void test_sim_branches(void **state)
{
	struct arch_gpregs r;

	(void)state;
	fill(&r);
	assert_int_equal(sim(0x14000040, 0x400000, &r, NULL), 0);	/* b .+0x100 */
	assert_int_equal(r.pc, 0x400100);
	assert_int_equal(r.gpr[30], 0x101e);				/* lr untouched */
	assert_int_equal(sim(0x97fffc00, 0x401000, &r, NULL), 0);	/* bl .-0x1000 */
	assert_int_equal(r.pc, 0x400000);
	assert_int_equal(r.gpr[30], 0x401004);

	/* b.ne: taken with Z clear, not taken with Z set */
	r.flags = 0;
	sim(0x54000201, 0x400000, &r, NULL);
	assert_int_equal(r.pc, 0x400040);
	r.flags = AARCH64_PSTATE_Z;
	sim(0x54000201, 0x400000, &r, NULL);
	assert_int_equal(r.pc, 0x400004);
	/* bc.eq .+8 */
	sim(0x54000050, 0x400000, &r, NULL);
	assert_int_equal(r.pc, 0x400008);
}

/* Every condition against the Arm ARM's definitions, all 16 NZCV values. */
static void test_sim_conditions(void **state)
{
	(void)state;
	for (unsigned int nzcv = 0; nzcv < 16; nzcv++) {
		bool n = nzcv & 8, z = nzcv & 4, c = nzcv & 2, v = nzcv & 1;
		bool want[16] = { z, !z, c, !c, n, !n, v, !v, c && !z, !c || z,
				  n == v, n != v, !z && n == v, z || n != v,
				  true, true };

		for (unsigned int cond = 0; cond < 16; cond++) {
			struct arch_gpregs r;
			/* b.<cond> .+0x20: 0101010 0 imm19=8 0 cond */
			uint32_t w = 0x54000000u | 8u << 5 | cond;

			fill(&r);
			r.flags = (uint64_t)nzcv << 28;
			assert_int_equal(sim(w, 0x400000, &r, NULL), 0);
			assert_int_equal(r.pc, want[cond] ? 0x400020 : 0x400004);
		}
	}
}

static void test_sim_cb_tb(void **state)
{
	struct arch_gpregs r;

	(void)state;
	fill(&r);
	/* cbz w3: only the low 32 bits count */
	r.gpr[3] = 0xffffffff00000000ull;
	sim(0x34000103, 0x400000, &r, NULL);
	assert_int_equal(r.pc, 0x400020);
	r.gpr[3] = 1;
	sim(0x34000103, 0x400000, &r, NULL);
	assert_int_equal(r.pc, 0x400004);
	/* cbnz x4, .-8: all 64 */
	r.gpr[4] = 0xffffffff00000000ull;
	sim(0xb5ffffc4, 0x400010, &r, NULL);
	assert_int_equal(r.pc, 0x400008);
	r.gpr[4] = 0;
	sim(0xb5ffffc4, 0x400010, &r, NULL);
	assert_int_equal(r.pc, 0x400014);
	/* tbz w5, #3 */
	r.gpr[5] = ~8ull;
	sim(0x36180085, 0x400000, &r, NULL);
	assert_int_equal(r.pc, 0x400010);
	r.gpr[5] = 8;
	sim(0x36180085, 0x400000, &r, NULL);
	assert_int_equal(r.pc, 0x400004);
	/* tbnz x6, #63 */
	r.gpr[6] = 1ull << 63;
	sim(0xb7ffff86, 0x400020, &r, NULL);
	assert_int_equal(r.pc, 0x400010);
	r.gpr[6] = ~(1ull << 63);
	sim(0xb7ffff86, 0x400020, &r, NULL);
	assert_int_equal(r.pc, 0x400024);
}

static void test_sim_indirect(void **state)
{
	struct arch_gpregs r;

	(void)state;
	fill(&r);
	r.gpr[16] = 0x7000;
	r.flags = 3u << AARCH64_PSTATE_BTYPE_SHIFT;
	sim(0xd61f0200, 0x400000, &r, NULL);			/* br x16 */
	assert_int_equal(r.pc, 0x7000);
	assert_int_equal(r.flags, 1u << AARCH64_PSTATE_BTYPE_SHIFT);
	r.gpr[8] = 0x8000;
	sim(0xd63f0100, 0x400000, &r, NULL);			/* blr x8 */
	assert_int_equal(r.pc, 0x8000);
	assert_int_equal(r.gpr[30], 0x400004);
	assert_int_equal(r.flags, 2u << AARCH64_PSTATE_BTYPE_SHIFT);
	r.gpr[30] = 0x9000;
	sim(0xd63f03c0, 0x400000, &r, NULL);			/* blr x30 */
	assert_int_equal(r.pc, 0x9000);
	assert_int_equal(r.gpr[30], 0x400004);
	sim(0xd65f03c0, 0x500000, &r, NULL);			/* ret */
	assert_int_equal(r.pc, 0x400004);
	assert_int_equal(r.flags, 0);
	r.gpr[3] = 0xa000;
	sim(0xd65f0060, 0x500000, &r, NULL);			/* ret x3 */
	assert_int_equal(r.pc, 0xa000);
}

/*
 * Linux runs EL0 with top-byte-ignore (TCR_EL1.TBI0, no TBID0): an
 * indirect branch to a tagged lower-half address goes to the address
 * without its tag, as qemu and the CPU do (aarch64-simulate-native.c
 * found the simulation keeping the tag).  Bit 55 set: the value as is.
 */
static void test_sim_indirect_tagged(void **state)
{
	struct arch_gpregs r;
	uint64_t pcs[2];
	struct arch_insn ai;

	(void)state;
	fill(&r);
	r.gpr[1] = 0x2c00005508faab18ull;
	sim(0xd61f0020, 0x400000, &r, NULL);			/* br x1 */
	assert_int_equal(r.pc, 0x5508faab18ull);
	assert_int_equal(r.gpr[1], 0x2c00005508faab18ull);	/* x1 kept */
	r.gpr[29] = 0x8f000d7426f2306cull;
	sim(0xd63f03a0, 0x400000, &r, NULL);			/* blr x29 */
	assert_int_equal(r.pc, 0x000d7426f2306cull);
	assert_int_equal(r.gpr[30], 0x400004);
	r.gpr[30] = 0xff00000000401234ull;
	decode_word(0xd65f03c0, 0x500000, &ai);			/* ret */
	assert_int_equal(aarch64_arch_ops.insn_next_pcs(&ai, &r, NULL, pcs), 1);
	assert_int_equal(pcs[0], 0x401234);
	sim(0xd65f03c0, 0x500000, &r, NULL);
	assert_int_equal(r.pc, 0x401234);
	r.gpr[3] = 0x0080000000401234ull;			/* bit 55: kept */
	sim(0xd65f0060, 0x500000, &r, NULL);			/* ret x3 */
	assert_int_equal(r.pc, 0x0080000000401234ull);
}

static void test_sim_adr(void **state)
{
	struct arch_gpregs r;

	(void)state;
	fill(&r);
	sim(0x100091a0, 0x400000, &r, NULL);			/* adr x0, .+0x1234 */
	assert_int_equal(r.gpr[0], 0x401234);
	assert_int_equal(r.pc, 0x400004);
	sim(0xb0000021, 0x400abc, &r, NULL);			/* adrp x1, +5 pages */
	assert_int_equal(r.gpr[1], 0x405000);
	sim(0xf0ffffe1, 0x400abc, &r, NULL);			/* adrp x1, -1 page */
	assert_int_equal(r.gpr[1], 0x3ff000);
	/* adr xzr: nothing written (gpr[31] is sp) */
	sim(0x100091bf, 0x400000, &r, NULL);
	assert_int_equal(r.gpr[31], 0x101f);
	assert_int_equal(r.pc, 0x400004);
}

static void test_sim_literal(void **state)
{
	struct fake_mem fm = { .base = 0x400100 };
	struct arch_gpregs r, before;

	(void)state;
	for (unsigned int i = 0; i < sizeof(fm.bytes); i++)
		fm.bytes[i] = (uint8_t)(0xf0 + i);
	fill(&r);
	sim(0x18000802, 0x400000, &r, &fm);			/* ldr w2, .+0x100 */
	assert_int_equal(r.gpr[2], 0xf3f2f1f0);			/* zero-extended */
	assert_int_equal(r.pc, 0x400004);
	sim(0x58fff803, 0x400200, &r, &fm);			/* ldr x3, .-0x100 */
	assert_int_equal(r.gpr[3], 0xf7f6f5f4f3f2f1f0ull);
	sim(0x98000404, 0x400080, &r, &fm);			/* ldrsw x4, .+0x80 */
	assert_int_equal(r.gpr[4], 0xfffffffff3f2f1f0ull);	/* sign-extended */
	fm.bytes[3] = 0x7f;
	sim(0x98000404, 0x400080, &r, &fm);
	assert_int_equal(r.gpr[4], 0x7ff2f1f0);
	/* prfm: a hint, memory is never read */
	fm.reads = 0;
	sim(0xd8000200, 0x400000, &r, &fm);
	assert_int_equal(fm.reads, 0);
	assert_int_equal(r.pc, 0x400004);
	/* a failing read: the error, registers untouched */
	before = r;
	before.pc = 0x500000;
	assert_int_equal(sim(0x18000802, 0x500000, &r, &fm), -EFAULT);
	assert_memory_equal(&r, &before, sizeof(r));
}

/* NOP and BTI advance the pc and clear BTYPE, nothing else. */
static void test_sim_nop_bti(void **state)
{
	struct arch_gpregs r, want;

	(void)state;
	fill(&r);
	r.flags = AARCH64_PSTATE_N | 2u << AARCH64_PSTATE_BTYPE_SHIFT;
	want = r;
	want.pc = 0x400004;
	want.flags = AARCH64_PSTATE_N;
	sim(0xd503245f, 0x400000, &r, NULL);			/* bti c */
	assert_memory_equal(&r, &want, sizeof(r));
	sim(0xd503201f, 0x400000, &r, NULL);			/* nop */
	assert_memory_equal(&r, &want, sizeof(r));
}

static void test_sim_not_emulated(void **state)
{
	struct arch_gpregs r;
	struct arch_insn ai;

	(void)state;
	fill(&r);
	assert_int_equal(decode_word(0x91004020, 0x400000, &ai), 0);	/* add */
	assert_int_equal(aarch64_arch_ops.insn_emulate(&ai, &r, NULL), -ENOSYS);
}

/* ---- exclusive sequences ---- */

static void test_exclusive_sequence(void **state)
{
	/* 0x400000: mov w3, w4 before the loop, then
	 * 1: ldaxr w1, [x0]; add w1, w1, #1; cmp w1, #5; b.eq 2f;
	 *    stlxr w2, w1, [x0]; cbnz w2, 1b; 2: ret */
	static const uint32_t code[] = {
		0x2a0403e3, 0x885ffc01, 0x11000421, 0x7100143f, 0x54000060,
		0x8802fc01, 0x35ffff62, 0xd65f03c0,
	};
	static const int want[] = { B, R, R, R, R, R, E, E };
	uint8_t buf[sizeof(code)];
	struct arch_insn ai;

	(void)state;
	for (size_t i = 0; i < sizeof(code) / 4; i++)
		put_word(buf + 4 * i, code[i]);
	for (size_t i = 0; i < sizeof(code) / 4; i++) {
		assert_int_equal(aarch64_arch_ops.insn_decode(buf + 4 * i,
			sizeof(buf) - 4 * i, 0x400000 + 4 * i, &ai), 0);
		print_message("%zu: %s: %s\n", i, arch_strategy_name(ai.strategy),
			      ai.reason);
		assert_int_equal(ai.strategy, want[i]);
		if (i >= 2 && i <= 4)
			assert_non_null(strstr(ai.reason, "between a load-exclusive"));
	}
	/* Seen alone (no bytes after it), the add is not known to be in
	 * a sequence: the look-ahead sees only what it is given. */
	assert_int_equal(aarch64_arch_ops.insn_decode(buf + 8, 4, 0x400008, &ai), 0);
	assert_int_equal(ai.strategy, B);
}

/* ---- relocation, run on a tiny interpreter ---- */

/*
 * Runs the slot's words from `at` until the pc leaves the slot: the
 * forms relocation emits (movz, movk, b, b.cond, cbz/cbnz, tbz/tbnz, nop,
 * br); any other word is "the copied instruction" and only advances.
 * Returns the number of words executed.
 */
static unsigned int run_slot(const uint8_t *code, size_t len, uint64_t slot,
			     struct arch_gpregs *r)
{
	unsigned int n = 0;

	r->pc = slot;
	while (r->pc >= slot && r->pc < slot + len && n < 64) {
		uint32_t w = aarch64_word(code + (r->pc - slot));
		struct aarch64_insn in;

		n++;
		aarch64_decode(&in, w, r->pc);
		if ((w & 0xff800000u) == 0xd2800000u) {		/* movz */
			unsigned int hw = (w >> 21) & 3;
			r->gpr[w & 31] = (uint64_t)((w >> 5) & 0xffff) << (16 * hw);
			r->pc += 4;
		} else if ((w & 0xff800000u) == 0xf2800000u) {	/* movk */
			unsigned int hw = (w >> 21) & 3;
			r->gpr[w & 31] &= ~(0xffffull << (16 * hw));
			r->gpr[w & 31] |= (uint64_t)((w >> 5) & 0xffff) << (16 * hw);
			r->pc += 4;
		} else if (in.op == AARCH64_OP_BR) {
			r->pc = r->gpr[in.rn];
		} else if (aarch64_simulate(&in, r, NULL) != 0) {
			r->pc += 4;			/* the copied instruction */
		}
	}
	return n;
}

static int prepare(uint32_t w, uint64_t addr, int strategy, uint64_t slot,
		   uint8_t *code, size_t size, struct arch_xol *xol)
{
	struct arch_insn ai;

	decode_word(w, addr, &ai);
	ai.strategy = strategy;
	return aarch64_arch_ops.xol_prepare(&ai, slot, code, size, xol);
}

/* A boosted add: the word itself, then b back; golden and by meaning. */
static void test_xol_boost(void **state)
{
	uint8_t code[64];
	struct arch_xol xol;
	struct arch_gpregs r;
	struct arch_insn ai;
	int n;

	(void)state;
	n = prepare(0x91004020, 0x400000, B, 0x410000, code, sizeof(code), &xol);
	assert_int_equal(n, 8);
	assert_false(xol.step);
	assert_int_equal(xol.insn_len, 4);
	assert_int_equal(xol.scratch_gpr, -1);
	assert_int_equal(aarch64_word(code), 0x91004020);
	/* b .-0x10000: 0x410004 -> 0x400004 */
	assert_int_equal(aarch64_word(code + 4), 0x17ffc000);
	fill(&r);
	run_slot(code, n, 0x410000, &r);
	assert_int_equal(r.pc, 0x400004);

	/* fixup after a step: pc at the end of the copy goes back */
	decode_word(0x91004020, 0x400000, &ai);
	r.pc = 0x410004;
	assert_int_equal(aarch64_arch_ops.xol_fixup(&ai, &xol, &r), 0);
	assert_int_equal(r.pc, 0x400004);
	r.pc = 0x410000;	/* not run yet: not the fixup's */
	assert_int_equal(aarch64_arch_ops.xol_fixup(&ai, &xol, &r), -EINVAL);

	/* too small */
	assert_int_equal(prepare(0x91004020, 0x400000, B, 0x410000, code, 4, &xol),
			 -ENOSPC);
	/* emulate / reject: not for a slot */
	assert_int_equal(prepare(0x91004020, 0x400000, E, 0x410000, code,
				 sizeof(code), &xol), -ENOSYS);
}

/* Beyond the B's reach the copy is single-stepped, then fixed up. */
static void test_xol_far(void **state)
{
	uint64_t slot = 0x400000 + (1ull << 28);
	uint8_t code[64];
	struct arch_xol xol;
	struct arch_gpregs r;
	struct arch_insn ai;
	int n;

	(void)state;
	n = prepare(0x91004020, 0x400000, B, slot, code, sizeof(code), &xol);
	assert_int_equal(n, 4);
	assert_true(xol.step);
	decode_word(0x91004020, 0x400000, &ai);
	fill(&r);
	r.pc = slot + 4;
	assert_int_equal(aarch64_arch_ops.xol_fixup(&ai, &xol, &r), 0);
	assert_int_equal(r.pc, 0x400004);
	/* a relocated branch cannot reach: refused */
	assert_int_equal(prepare(0x14000040, 0x400000, B, slot, code, sizeof(code),
				 &xol), -ERANGE);
	/* the agent's auto choice tries a near copy: ok there */
	assert_int_equal(prepare(0x14000040, 0x400000, B, 0x410000, code,
				 sizeof(code), &xol), 4);
}

/*
 * The agent hands out only slots that arch_xol_in_reach accepts
 * (agent/xol.c).  On aarch64 that must mean: the B back reaches from
 * every word of the slot, so a boosted copy is never stepped for being
 * far, and a slot one page farther is out.
 */
static void test_xol_reach(void **state)
{
	const struct arch_ops *ops = &aarch64_arch_ops;
	const uint64_t addr = 0x40000000;
	const uint64_t reach = ops->xol_reach;
	const uint64_t slot_size = 64;
	/* the farthest slot-aligned slots the predicate accepts */
	const uint64_t hi = (addr + reach - slot_size) & ~(slot_size - 1);
	const uint64_t lo = (addr - reach + slot_size) & ~(slot_size - 1);
	const uint64_t edges[] = { hi, lo, addr + slot_size, addr - slot_size };
	uint8_t code[64];
	struct arch_xol xol;

	(void)state;
	assert_true(reach > (100ull << 20) && reach <= (1ull << 27));
	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
		uint64_t s = edges[i];

		assert_true(arch_xol_in_reach(ops, addr, s, slot_size));
		/* add x0, x1, #16: the copy, then b back from s + 4 */
		assert_int_equal(prepare(0x91004020, addr, B, s, code, sizeof(code),
					 &xol), 8);
		assert_false(xol.step);
		assert_true(aarch64_in_b_reach(s + slot_size - 4, addr + 4));
		/* bl .+0x100: x30 = A+4 by movz/movk, then b: boosted */
		assert_true(prepare(0x94000040, addr, B, s, code, sizeof(code),
				    &xol) > 0);
	}
	/* a page beyond, either way, and slots straddling the edge */
	assert_false(arch_xol_in_reach(ops, addr, hi + 4096, slot_size));
	assert_false(arch_xol_in_reach(ops, addr, lo - 4096, slot_size));
	assert_false(arch_xol_in_reach(ops, addr, addr + reach - 32, slot_size));
	assert_false(arch_xol_in_reach(ops, addr, addr - reach, slot_size));
	/* just beyond B's own limit the copy would be stepped: out */
	assert_false(arch_xol_in_reach(ops, addr, addr + (1ull << 27) + 64,
				       slot_size));
	prepare(0x91004020, addr, B, addr + (1ull << 27) + 64, code, sizeof(code),
		&xol);
	assert_true(xol.step);
	/* a whole 4 KiB area, and an area wrapping around: out */
	assert_true(arch_xol_in_reach(ops, addr, addr + (64ull << 20), 4096));
	assert_false(arch_xol_in_reach(ops, addr, addr + reach - 2048, 4096));
	assert_false(arch_xol_in_reach(ops, 0x1000, ~0ull - 100, 4096));
}

/* Forced into a slot, the PC readers compute what they would at A. */
static void test_xol_relocated(void **state)
{
	static const struct {
		uint32_t w;
		const char *src;
	} forms[] = {
		{ 0x14000040, "b .+0x100" },
		{ 0x97fffc00, "bl .-0x1000" },
		{ 0x54000201, "b.ne .+0x40" },
		{ 0x34000103, "cbz w3, .+0x20" },
		{ 0xb5ffffc4, "cbnz x4, .-8" },
		{ 0x36180085, "tbz w5, #3, .+0x10" },
		{ 0xb7ffff86, "tbnz x6, #63, .-0x10" },
		{ 0xd63f0100, "blr x8" },
		{ 0xd65f0060, "ret x3" },
		{ 0x100091a0, "adr x0, .+0x1234" },
		{ 0xb0000021, "adrp x1, +5 pages" },
		{ 0xd503245f, "bti c" },
	};
	static const uint64_t addr = 0x10000000;
	static const uint64_t slots[] = { addr + 0x100000, addr - 0x7000000 };

	(void)state;
	for (size_t s = 0; s < 2; s++) {
		for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
			for (unsigned int k = 0; k < 4; k++) {
				uint64_t slot = slots[s];
				struct arch_gpregs want, got;
				uint8_t code[64];
				struct arch_xol xol;
				int n;

				print_message("%s (slot %zu, state %u)\n", forms[i].src, s, k);
				fill(&want);
				want.flags = (uint64_t)(k * 5) << 28;	/* NZCV */
				want.gpr[4] = k & 2 ? 0 : 1ull << 40;
				want.gpr[5] = k & 1 ? 8 : 0;
				want.gpr[6] = k & 2 ? 1ull << 63 : 0;
				want.gpr[8] = 0x8000;
				want.gpr[3] = k & 1 ? 0 : 0x30000;
				got = want;
				n = prepare(forms[i].w, addr, B, slot, code, sizeof(code), &xol);
				assert_true(n > 0);
				assert_false(xol.step);
				run_slot(code, (size_t)n, slot, &got);
				want.pc = addr;
				sim(forms[i].w, addr, &want, NULL);
				/* BTYPE is the slot's business (not a guarded page) */
				got.flags = want.flags;
				assert_memory_equal(&got, &want, sizeof(want));
			}
		}
	}
}

static void test_xol_literal(void **state)
{
	uint8_t code[64];
	struct arch_xol xol;
	struct aarch64_insn in;
	int n;

	(void)state;
	/* within +-1 MiB of the slot: one re-encoded word */
	n = prepare(0x58fff803, 0x400100, B, 0x480000, code, sizeof(code), &xol);
	assert_int_equal(n, 8);
	aarch64_decode(&in, aarch64_word(code), 0x480000);
	assert_int_equal(in.op, AARCH64_OP_LDR_LIT);
	assert_int_equal(in.rd, 3);
	assert_int_equal(in.target, 0x400000);

	/* far: x3 = the address, then ldr x3, [x3] */
	n = prepare(0x58fff803, 0x400100, B, 0x400100 + (100u << 20), code,
		    sizeof(code), &xol);
	assert_true(n >= 12);
	assert_false(xol.step);
	{
		struct arch_gpregs r;
		fill(&r);
		run_slot(code, (size_t)n - 4, 0x400100 + (100u << 20), &r);
		/* the movz/movk built the literal's address in x3 */
		assert_int_equal(r.gpr[3], 0x400000);
		assert_int_equal(aarch64_word(code + n - 8), 0xf9400063);	/* ldr x3, [x3] */
	}
	/* ldrsw: the signed load through the register */
	n = prepare(0x98000404, 0x400000, B, 0x400000 + (100u << 20), code,
		    sizeof(code), &xol);
	assert_int_equal(aarch64_word(code + n - 8), 0xb9800084);	/* ldrsw x4, [x4] */

	/* ldr q7: near, re-encoded; far, stepped with x16 borrowed */
	n = prepare(0x9c000087, 0x400000, B, 0x400800, code, sizeof(code), &xol);
	aarch64_decode(&in, aarch64_word(code), 0x400800);
	assert_int_equal(in.op, AARCH64_OP_LDR_LIT_FP);
	assert_int_equal(in.target, 0x400010);
	assert_false(xol.step);
	n = prepare(0x9c000087, 0x400000, B, 0x400000 + (2u << 20), code,
		    sizeof(code), &xol);
	assert_int_equal(n, 4);
	assert_true(xol.step);
	assert_int_equal(xol.scratch_gpr, 16);
	assert_int_equal(xol.scratch_value, 0x400010);
	assert_int_equal(aarch64_word(code), 0x3dc00207);		/* ldr q7, [x16] */
	{
		struct arch_insn ai;
		struct arch_gpregs r;
		struct arch_xol x = xol;

		decode_word(0x9c000087, 0x400000, &ai);
		fill(&r);
		x.scratch_saved = 0x1234;
		r.gpr[16] = 0x400010;
		r.pc = x.slot + 4;
		assert_int_equal(aarch64_arch_ops.xol_fixup(&ai, &x, &r), 0);
		assert_int_equal(r.pc, 0x400004);
		assert_int_equal(r.gpr[16], 0x1234);
	}
	/* prfm far: a nop */
	n = prepare(0xd8000200, 0x400000, B, 0x400000 + (2u << 20), code,
		    sizeof(code), &xol);
	assert_int_equal(aarch64_word(code), AARCH64_NOP);
}

/* No register left for the target: refused (it is simulated instead). */
static void test_xol_refused(void **state)
{
	uint8_t code[64];
	struct arch_xol xol;

	(void)state;
	assert_int_equal(prepare(0xd63f03c0, 0x400000, B, 0x410000, code,
				 sizeof(code), &xol), -EINVAL);	/* blr x30 */
	assert_int_equal(prepare(0xc85f7c20, 0x400000, B, 0x410000, code,
				 sizeof(code), &xol), -EINVAL);	/* ldxr */
	/* blraa x2, x3: lr set, then braa */
	assert_int_equal(prepare(0xd73f0843, 0x400000, B, 0x410000, code,
				 sizeof(code), &xol) > 0, 1);
}

/* ---- emitters, next pcs, calls ---- */

static void test_emit(void **state)
{
	uint8_t b[16];
	struct aarch64_insn in;

	(void)state;
	assert_int_equal(aarch64_arch_ops.emit_jump(b, sizeof(b), 0x400000, 0x400100), 4);
	assert_int_equal(aarch64_word(b), 0x14000040);
	assert_int_equal(aarch64_arch_ops.emit_jump(b, sizeof(b), 0x400000,
						    0x400000 + (1ull << 27) - 4), 4);
	aarch64_decode(&in, aarch64_word(b), 0x400000);
	assert_int_equal(in.target, 0x400000 + (1ull << 27) - 4);
	assert_int_equal(aarch64_arch_ops.emit_jump(b, sizeof(b), 0x400000,
						    0x400000 - (1ull << 27)), 4);
	aarch64_decode(&in, aarch64_word(b), 0x400000);
	assert_int_equal(in.target, 0x400000 - (1ull << 27));
	assert_int_equal(aarch64_arch_ops.emit_jump(b, sizeof(b), 0x400000,
						    0x400000 + (1ull << 27)), -ERANGE);
	assert_int_equal(aarch64_arch_ops.emit_jump(b, 3, 0x400000, 0x400100), -ENOSPC);
	assert_int_equal(aarch64_arch_ops.emit_jump_abs(b, sizeof(b), 0x1122334455667788ull), 16);
	assert_int_equal(aarch64_word(b), 0x58000050);			/* ldr x16, 8 */
	assert_int_equal(aarch64_word(b + 4), 0xd61f0200);		/* br x16 */
	assert_int_equal(aarch64_word(b + 8), 0x55667788);
	assert_int_equal(aarch64_word(b + 12), 0x11223344);
	assert_int_equal(aarch64_arch_ops.emit_jump_abs(b, 12, 0), -ENOSPC);
}

static void test_next_pcs(void **state)
{
	struct arch_gpregs r;
	struct arch_insn ai;
	uint64_t pcs[2];

	(void)state;
	fill(&r);
	decode_word(0x54000201, 0x400000, &ai);			/* b.ne .+0x40 */
	assert_int_equal(aarch64_arch_ops.insn_next_pcs(&ai, &r, NULL, pcs), 2);
	assert_true((pcs[0] == 0x400040 && pcs[1] == 0x400004) ||
		    (pcs[1] == 0x400040 && pcs[0] == 0x400004));
	decode_word(0x14000040, 0x400000, &ai);			/* b .+0x100 */
	assert_int_equal(aarch64_arch_ops.insn_next_pcs(&ai, &r, NULL, pcs), 1);
	assert_int_equal(pcs[0], 0x400100);
	r.gpr[30] = 0x1234;
	decode_word(0xd65f03c0, 0x400000, &ai);			/* ret */
	assert_int_equal(aarch64_arch_ops.insn_next_pcs(&ai, &r, NULL, pcs), 1);
	assert_int_equal(pcs[0], 0x1234);
	r.gpr[30] = 0x0023000000401234ull;			/* signed lr */
	decode_word(0xd65f0bff, 0x400000, &ai);			/* retaa */
	assert_int_equal(aarch64_arch_ops.insn_next_pcs(&ai, &r, NULL, pcs), 1);
	assert_int_equal(pcs[0], 0x401234);
	decode_word(0x91004020, 0x400000, &ai);			/* add */
	assert_int_equal(aarch64_arch_ops.insn_next_pcs(&ai, &r, NULL, pcs), 1);
	assert_int_equal(pcs[0], 0x400004);
}

/* A step from a load-exclusive goes over the whole sequence. */
static void test_next_pcs_exclusive(void **state)
{
	/* the loop of test_exclusive_sequence, at 0x400000 */
	static const uint32_t code[] = {
		0x2a0403e3, 0x885ffc01, 0x11000421, 0x7100143f, 0x54000060,
		0x8802fc01, 0x35ffff62, 0xd65f03c0,
	};
	struct fake_mem fm = { .base = 0x400000 };
	struct arch_mem mem = { &fm, fake_read, NULL };
	struct arch_gpregs r;
	struct arch_insn ai;
	uint64_t pcs[2];

	(void)state;
	for (size_t i = 0; i < sizeof(code) / 4; i++)
		put_word(fm.bytes + 4 * i, code[i]);
	fill(&r);
	decode_word(code[1], 0x400004, &ai);			/* ldaxr */
	/* after the stlxr, and the b.eq's way out to the ret */
	assert_int_equal(aarch64_arch_ops.insn_next_pcs(&ai, &r, &mem, pcs), 2);
	assert_int_equal(pcs[0], 0x400018);
	assert_int_equal(pcs[1], 0x40001c);
	/* without memory: the plain next instruction */
	assert_int_equal(aarch64_arch_ops.insn_next_pcs(&ai, &r, NULL, pcs), 1);
	assert_int_equal(pcs[0], 0x400008);
	/* an unreadable sequence: the read's error */
	fm.base = 0x500000;
	assert_int_equal(aarch64_arch_ops.insn_next_pcs(&ai, &r, &mem, pcs), -EFAULT);
}

static void test_follows_call(void **state)
{
	static const uint32_t calls[] = { 0x97fffc00 /* bl */, 0xd63f0100 /* blr x8 */,
					  0xd63f0c5f /* blrabz x2 */,
					  0xd73f0843 /* blraa x2, x3 */ };
	static const uint32_t others[] = { 0x14000040 /* b */, 0xd61f0200 /* br x16 */,
					   0xd65f03c0 /* ret */, 0x91004020 /* add */ };
	uint8_t b[8] = { 0 };

	(void)state;
	for (size_t i = 0; i < 4; i++) {
		put_word(b + 4, calls[i]);
		assert_true(aarch64_arch_ops.follows_call(b, 8));
		put_word(b + 4, others[i]);
		assert_false(aarch64_arch_ops.follows_call(b, 8));
	}
	assert_false(aarch64_arch_ops.follows_call(b, 3));
}

/* Every simulated form but the literal loads costs what a boost does. */
static void test_emulate_pc_only(void **state)
{
	struct arch_insn ai;

	(void)state;
	decode_word(0x97fffc00, 0x400000, &ai);			/* bl */
	assert_true(aarch64_arch_ops.emulate_pc_only(&ai));
	assert_false(arch_prefers_boost(&aarch64_arch_ops, &ai));
	decode_word(0x58fff803, 0x400000, &ai);			/* ldr x3, lit */
	assert_false(aarch64_arch_ops.emulate_pc_only(&ai));
	/* auto: a literal load runs from a near slot rather than read
	 * memory through the agent */
	assert_true(arch_prefers_boost(&aarch64_arch_ops, &ai));
	decode_word(0x91004020, 0x400000, &ai);			/* add: boost */
	assert_false(aarch64_arch_ops.emulate_pc_only(&ai));
}

/* ---- USDT operands ---- */

static void test_sdt(void **state)
{
	static const struct {
		const char *text;
		int kind, reg, size, index, scale;
		int64_t imm, disp;
	} ok[] = {
		{ "x0", ARCH_OPERAND_REG, 0, 8, -1, 1, 0, 0 },
		{ "w7", ARCH_OPERAND_REG, 7, 4, -1, 1, 0, 0 },
		{ "x30", ARCH_OPERAND_REG, 30, 8, -1, 1, 0, 0 },
		{ "sp", ARCH_OPERAND_REG, 31, 8, -1, 1, 0, 0 },
		{ "12", ARCH_OPERAND_IMM, -1, 0, -1, 1, 12, 0 },
		{ "-1", ARCH_OPERAND_IMM, -1, 0, -1, 1, -1, 0 },
		{ "#0x10", ARCH_OPERAND_IMM, -1, 0, -1, 1, 16, 0 },
		{ "[x1]", ARCH_OPERAND_MEM, 1, 8, -1, 1, 0, 0 },
		{ "[sp, 12]", ARCH_OPERAND_MEM, 31, 8, -1, 1, 0, 12 },
		{ "[x29, -8]", ARCH_OPERAND_MEM, 29, 8, -1, 1, 0, -8 },
		{ "[x1,#16]", ARCH_OPERAND_MEM, 1, 8, -1, 1, 0, 16 },
		{ "[x1, x2]", ARCH_OPERAND_MEM, 1, 8, 2, 1, 0, 0 },
		{ "[x1, x2, lsl 3]", ARCH_OPERAND_MEM, 1, 8, 2, 8, 0, 0 },
	};
	static const char *const bad[] = {
		"x31", "w31", "x01", "v0", "[x1", "[w1]", "[x1, sp]", "[x1, w2]",
		"[x1, x2, lsl 4]", "x0 ", "sym", "[x1, x2, asr 2]", "",
	};
	struct arch_operand op;
	char err[128];

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		print_message("%s\n", ok[i].text);
		assert_int_equal(aarch64_arch_ops.sdt_operand_parse(ok[i].text, &op,
						err, sizeof(err)), 0);
		assert_int_equal(op.kind, ok[i].kind);
		if (ok[i].kind == ARCH_OPERAND_IMM) {
			assert_int_equal(op.imm, ok[i].imm);
			continue;
		}
		assert_int_equal(op.reg.regnum, ok[i].reg);
		assert_int_equal(op.reg.size, ok[i].size);
		assert_int_equal(op.index.regnum, ok[i].index);
		assert_int_equal(op.scale, ok[i].scale);
		assert_int_equal(op.disp, ok[i].disp);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		print_message("bad: '%s'\n", bad[i]);
		err[0] = 0;
		assert_int_equal(aarch64_arch_ops.sdt_operand_parse(bad[i], &op,
						err, sizeof(err)), -EINVAL);
		assert_true(err[0] != 0);
	}
}

/* ---- registers and target.xml ---- */

static void test_target_xml(void **state)
{
	static char xml[32768];
	const struct arch_ops *a = &aarch64_arch_ops;
	unsigned int n = a->nregs_for(0);
	int len = a->target_xml(0, xml, sizeof(xml));
	const char *p = xml;
	char want[128];

	(void)state;
	assert_true(len > 0);
	assert_int_equal(strlen(xml), (size_t)len);
	assert_int_equal(n, 68);
	assert_int_equal(a->regblock_size_for(0), 788);
	assert_non_null(strstr(xml, "<architecture>aarch64</architecture>"));
	assert_non_null(strstr(xml, "<feature name=\"org.gnu.gdb.aarch64.core\">"));
	assert_non_null(strstr(xml, "<feature name=\"org.gnu.gdb.aarch64.fpu\">"));
	/* every register, in order, at its regnum and size; packed */
	for (unsigned int i = 0; i < n; i++) {
		snprintf(want, sizeof(want), "<reg name=\"%s\" bitsize=\"%u\" regnum=\"%u\"",
			 a->regs[i].name, a->regs[i].bitsize, i);
		p = strstr(p, want);
		assert_non_null(p);
		if (i)
			assert_int_equal(a->regs[i].offset, a->regs[i - 1].offset +
					 a->regs[i - 1].bitsize / 8);
	}
	/* the g packet's order as gdb knows it */
	assert_string_equal(a->regs[0].name, "x0");
	assert_string_equal(a->regs[30].name, "x30");
	assert_string_equal(a->regs[31].name, "sp");
	assert_string_equal(a->regs[32].name, "pc");
	assert_string_equal(a->regs[33].name, "cpsr");
	assert_int_equal(a->regs[33].bitsize, 32);
	assert_string_equal(a->regs[34].name, "v0");
	assert_int_equal(a->regs[34].bitsize, 128);
	assert_string_equal(a->regs[65].name, "v31");
	assert_string_equal(a->regs[66].name, "fpsr");
	assert_string_equal(a->regs[67].name, "fpcr");
	/* elements balance (a well-formed document; tests/arch/aarch64-xml.sh
	 * has an XML parser and gdb read it) */
	{
		int depth = 0;
		for (const char *q = xml; (q = strchr(q, '<')); q++) {
			const char *e = strchr(q, '>');
			assert_non_null(e);
			if (q[1] == '?' || q[1] == '!')
				continue;
			if (q[1] == '/')
				depth--;
			else if (e[-1] != '/')
				depth++;
			assert_true(depth >= 0);
		}
		assert_int_equal(depth, 0);
	}
	assert_int_equal(a->target_xml(0, xml, 100), -ENOSPC);
	assert_int_equal(a->target_xml(0, xml, 0), -ENOSPC);
}

static void test_asm_reg(void **state)
{
	struct arch_asm_reg r;

	(void)state;
	assert_int_equal(aarch64_arch_ops.asm_reg("x29", 3, &r), 0);
	assert_int_equal(r.regnum, 29);
	assert_int_equal(aarch64_arch_ops.asm_reg("fp", 2, &r), 0);
	assert_int_equal(r.regnum, 29);
	assert_int_equal(aarch64_arch_ops.asm_reg("lr", 2, &r), 0);
	assert_int_equal(r.regnum, 30);
	assert_int_equal(aarch64_arch_ops.asm_reg("wsp", 3, &r), 0);
	assert_int_equal(r.regnum, 31);
	assert_int_equal(r.size, 4);
	assert_int_equal(aarch64_arch_ops.asm_reg("w0", 2, &r), 0);
	assert_int_equal(r.size, 4);
	assert_int_equal(aarch64_arch_ops.asm_reg("xzr", 3, &r), -ENOENT);
	assert_int_equal(aarch64_arch_ops.asm_reg("x", 1, &r), -ENOENT);
	assert_int_equal(aarch64_arch_ops.asm_reg("x3a", 3, &r), -ENOENT);
}

/* --- jump pad parts (aarch64-pad.c) --------------------------------------- */

static uint32_t word_at(const uint8_t *b, size_t i)
{
	return aarch64_word(b + 4 * i);
}

static void test_pad_save_restore(void **state)
{
	uint8_t b[256];
	int n;

	(void)state;
	n = aarch64_emit_save_regs(b, sizeof(b), 0x400858);
	assert_int_equal(n, 104);
	assert_int_equal(word_at(b, 0), 0xd10443ff);	/* sub sp, sp, #0x110 */
	assert_int_equal(word_at(b, 1), 0xa90007e0);	/* stp x0, x1, [sp] */
	assert_int_equal(word_at(b, 15), 0xa90e77fc);	/* stp x28, x29, [sp, #224] */
	assert_int_equal(word_at(b, 16), 0xf9007bfe);	/* str x30, [sp, #240] */
	assert_int_equal(word_at(b, 19), 0xd2810b00);	/* mov x0, #0x858 */
	assert_int_equal(word_at(b, 20), 0xf2a00800);	/* movk x0, #0x40, lsl #16 */
	assert_int_equal(word_at(b, 22), 0xd53b4200);	/* mrs x0, nzcv */
	assert_int_equal(word_at(b, 24), 0x910003f3);	/* mov x19, sp */
	assert_int_equal(word_at(b, 25), 0x910003e0);	/* mov x0, sp */
	assert_int_equal(aarch64_emit_save_regs(b, 100, 0x400858), -ENOSPC);
	n = aarch64_emit_restore_regs(b, sizeof(b));
	assert_int_equal(n, 80);
	assert_int_equal(word_at(b, 0), 0x9100027f);	/* mov sp, x19 */
	assert_int_equal(word_at(b, 1), 0xf94087e0);	/* ldr x0, [sp, #264] */
	assert_int_equal(word_at(b, 2), 0xd51b4200);	/* msr nzcv, x0 */
	assert_int_equal(word_at(b, 3), 0xa94007e0);	/* ldp x0, x1, [sp] */
	assert_int_equal(word_at(b, 18), 0xf9407bfe);	/* ldr x30, [sp, #240] */
	assert_int_equal(word_at(b, 19), 0x910443ff);	/* add sp, sp, #0x110 */
}

static void test_pad_collect(void **state)
{
	uint8_t b[1024];
	size_t done = 0;
	struct arch_pad_ring r = {
		.ring = 0x7f0012345000, .off_records = 64, .record_shift = 9,
		.nrecords = 16, .off_seq = 0, .off_frame = 32,
		.time_tid = true, .off_tid = 8, .off_time = 16,
	};
	int n;

	(void)state;
	n = aarch64_emit_pad_collect(b, sizeof(b), &r, &done);
	assert_int_equal(n, 280);
	assert_int_equal(done, 256);
	assert_int_equal(word_at(b, 0), 0xd28a0001);	/* mov x1, #0x5000 */
	assert_int_equal(word_at(b, 2), 0xf2cfe001);	/* movk x1, #0x7f00, lsl #32 */
	assert_int_equal(word_at(b, 3), 0xd28001e9);	/* mov x9, #15 */
	assert_int_equal(word_at(b, 4), 0xc8dffc22);	/* retry: ldar x2, [x1] */
	assert_int_equal(word_at(b, 6), 0x8b032423);	/* add x3, x1, x3, lsl #9 */
	assert_int_equal(word_at(b, 7), 0x91010063);	/* add x3, x3, #0x40 */
	assert_int_equal(word_at(b, 11), 0x54000701);	/* b.ne notfree */
	assert_int_equal(word_at(b, 12), 0xc85ffc26);	/* ldaxr x6, [x1] */
	assert_int_equal(word_at(b, 13), 0xeb0200df);	/* cmp x6, x2 */
	assert_int_equal(word_at(b, 14), 0x54000661);	/* b.ne lost */
	assert_int_equal(word_at(b, 16), 0xc808fc27);	/* stlxr w8, x7, [x1] */
	assert_int_equal(word_at(b, 17), 0x35fffe68);	/* cbnz w8, retry */
	assert_int_equal(word_at(b, 18), 0xd2801648);	/* mov x8, #178 (gettid) */
	assert_int_equal(word_at(b, 19), 0xd4000001);	/* svc #0 */
	assert_int_equal(word_at(b, 63), 0xc89ffc87);	/* stlr x7, [x4] */
	assert_int_equal(word_at(b, 65), 0xd503305f);	/* lost: clrex */
	assert_int_equal(word_at(b, 66), 0x17ffffc2);	/* b retry */
	assert_int_equal(word_at(b, 67), 0xc8dffc26);	/* notfree: ldar x6, [x1] */
	assert_int_equal(word_at(b, 69), 0x54fff7e1);	/* b.ne retry */
	/* The branch left for the caller, pointed past the collector. */
	assert_int_equal(aarch64_patch_branch(b, done, (size_t)n), 0);
	assert_int_equal(word_at(b, 64), 0x14000006);	/* b +24 */
	assert_int_equal(aarch64_patch_branch(b, 0, 1u << 27), -ERANGE);
	assert_int_equal(aarch64_patch_branch(b, 0, 2), -ERANGE);
	/* What it refuses. */
	struct arch_pad_ring bad = r;
	bad.nrecords = 12;
	assert_int_equal(aarch64_emit_pad_collect(b, sizeof(b), &bad, &done), -EINVAL);
	bad = r;
	bad.record_shift = 8;		/* 256 bytes: the frame at 32 needs 304 */
	assert_int_equal(aarch64_emit_pad_collect(b, sizeof(b), &bad, &done), -EINVAL);
	bad = r;
	bad.off_seq = 40;		/* inside the frame */
	assert_int_equal(aarch64_emit_pad_collect(b, sizeof(b), &bad, &done), -EINVAL);
	bad = r;
	bad.off_tid = 4;		/* over seq */
	assert_int_equal(aarch64_emit_pad_collect(b, sizeof(b), &bad, &done), -EINVAL);
	bad = r;
	bad.time_tid = false;
	bad.off_tid = 4;		/* not used: fine */
	assert_int_equal(aarch64_emit_pad_collect(b, sizeof(b), &bad, &done), 280 - 32);
	assert_int_equal(aarch64_emit_pad_collect(b, 100, &r, &done), -ENOSPC);
}

/* With the in-process collector: ipa_site_wants before the claim,
 * ipa_collect_site before the publish, IPA_TRAP on to the hand-off. */
static void test_pad_collect_ipa(void **state)
{
	uint8_t b[2048];
	size_t done = 0;
	struct arch_pad_ring r = {
		.ring = 0x7f0012345000, .off_records = 64, .record_shift = 11,
		.nrecords = 16, .off_seq = 0, .off_frame = 32,
		.ipa_call = 0x7f0000401230, .ipa_site = 0x7f0000480040,
		.ipa_wants = 0x7f0000401400, .off_blocks = 1024, .blocks_size = 1024,
	};
	int n;

	(void)state;
	n = aarch64_emit_pad_collect(b, sizeof(b), &r, &done);
	assert_int_equal(n, 368);
	assert_int_equal(done, 344);
	assert_int_equal(word_at(b, 0), 0x9100027f);	/* mov sp, x19 */
	assert_int_equal(word_at(b, 1), 0xd2800800);	/* mov x0, #0x40 (site) */
	assert_int_equal(word_at(b, 3), 0xf2cfe000);	/* movk x0, #0x7f00, lsl #32 */
	assert_int_equal(word_at(b, 4), 0xaa1303e1);	/* mov x1, x19 */
	assert_int_equal(word_at(b, 5), 0xd2800442);	/* mov x2, #34 */
	assert_int_equal(word_at(b, 6), 0xd2828010);	/* mov x16, #0x1400 (wants) */
	assert_int_equal(word_at(b, 9), 0xd63f0200);	/* blr x16 */
	assert_int_equal(word_at(b, 10), 0x34000980);	/* cbz w0, out (+0x130) */
	assert_int_equal(word_at(b, 11), 0xd28a0001);	/* mov x1, #0x5000 (ring) */
	assert_int_equal(word_at(b, 15), 0xc8dffc22);	/* retry: ldar x2, [x1] */
	assert_int_equal(word_at(b, 17), 0x8b032c23);	/* add x3, x1, x3, lsl #11 */
	/* After the frame's copy: the call, p and the record kept. */
	assert_int_equal(word_at(b, 64), 0xaa0203f4);	/* mov x20, x2 */
	assert_int_equal(word_at(b, 65), 0xaa0303f5);	/* mov x21, x3 */
	assert_int_equal(word_at(b, 66), 0x9100027f);	/* mov sp, x19 */
	assert_int_equal(word_at(b, 70), 0x91008061);	/* add x1, x3, #0x20 (frame) */
	assert_int_equal(word_at(b, 71), 0xd2800442);	/* mov x2, #34 */
	assert_int_equal(word_at(b, 72), 0x91100063);	/* add x3, x3, #0x400 (blocks) */
	assert_int_equal(word_at(b, 73), 0xd2808004);	/* mov x4, #0x400 (size) */
	assert_int_equal(word_at(b, 74), 0xd2824610);	/* mov x16, #0x1230 (call) */
	assert_int_equal(word_at(b, 77), 0xd63f0200);	/* blr x16 */
	assert_int_equal(word_at(b, 78), 0x2a0003f6);	/* mov w22, w0 */
	assert_int_equal(word_at(b, 79), 0xaa1403e2);	/* mov x2, x20 */
	assert_int_equal(word_at(b, 80), 0xaa1503e3);	/* mov x3, x21 */
	assert_int_equal(word_at(b, 83), 0xc89ffc87);	/* stlr x7, [x4]: published */
	assert_int_equal(word_at(b, 84), 0x71000edf);	/* cmp w22, #IPA_TRAP */
	assert_int_equal(word_at(b, 85), 0x540000e0);	/* b.eq end (+0x1c: n) */
	assert_int_equal(done, 86 * 4);			/* out: b done */
	assert_int_equal(word_at(b, 89), 0xc8dffc26);	/* notfree: ldar x6, [x1] */
	/* Without ipa_site_wants: the claim first, the call as before. */
	struct arch_pad_ring nw = r;
	nw.ipa_wants = 0;
	assert_int_equal(aarch64_emit_pad_collect(b, sizeof(b), &nw, &done), 368 - 44);
	assert_int_equal(word_at(b, 0), 0xd28a0001);	/* mov x1, #0x5000 */
	assert_int_equal(done, 344 - 44);
	/* The block area must lie in the record, apart from the rest. */
	struct arch_pad_ring bad = r;
	bad.off_blocks = 256;		/* over the frame */
	assert_int_equal(aarch64_emit_pad_collect(b, sizeof(b), &bad, &done), -EINVAL);
	bad = r;
	bad.blocks_size = 1028;		/* past the record */
	assert_int_equal(aarch64_emit_pad_collect(b, sizeof(b), &bad, &done), -EINVAL);
	bad = r;
	bad.blocks_size = 0;
	assert_int_equal(aarch64_emit_pad_collect(b, sizeof(b), &bad, &done), -EINVAL);
	bad = r;
	bad.off_blocks = 1020;		/* not 8-aligned */
	assert_int_equal(aarch64_emit_pad_collect(b, sizeof(b), &bad, &done), -EINVAL);
	bad = r;
	bad.image = true;		/* blocks over the image (520 bytes at 0) */
	bad.off_frame = 600;
	bad.off_seq = 880;
	bad.off_blocks = 256;
	bad.blocks_size = 512;
	assert_int_equal(aarch64_emit_pad_collect(b, sizeof(b), &bad, &done), -EINVAL);
	bad.off_blocks = 1024;		/* the same, apart: fine */
	assert_true(aarch64_emit_pad_collect(b, sizeof(b), &bad, &done) > 0);
	bad.off_blocks = 256;
	assert_int_equal(aarch64_emit_pad_collect(b, sizeof(b), &bad, &done), -EINVAL);
	assert_int_equal(aarch64_emit_pad_collect(b, 300, &r, &done), -ENOSPC);
}

static void test_pad_window(void **state)
{
	/* at 0x1000: adr x1, .+0x180 ; ldr x0, [x1] ; ret ; svc #0 */
	static const uint8_t func[] = {
		0x01, 0x0c, 0x00, 0x10, 0x20, 0x00, 0x40, 0xf9,
		0xc0, 0x03, 0x5f, 0xd6, 0x01, 0x00, 0x00, 0xd4,
	};
	uint8_t b[64];
	size_t inlen = 0;
	int n;

	(void)state;
	n = aarch64_relocate_window(func, sizeof(func), 0x1000, 0x1000, 4,
				    0x5000, b, sizeof(b), &inlen);
	assert_int_equal(n, 8);
	assert_int_equal(inlen, 4);
	assert_int_equal(word_at(b, 0), 0xd2823001);	/* mov x1, #0x1180 */
	assert_int_equal(word_at(b, 1), 0x17fff000);	/* b 0x1004 (from 0x5004) */
	n = aarch64_relocate_window(func, sizeof(func), 0x1000, 0x1004, 4,
				    0x5000, b, sizeof(b), &inlen);
	assert_int_equal(n, 8);
	assert_int_equal(word_at(b, 0), 0xf9400020);	/* ldr x0, [x1]: copied */
	assert_int_equal(word_at(b, 1), 0x17fff001);	/* b 0x1008 (from 0x5004) */
	/* svc: rejected; past the function; the way back out of reach. */
	assert_int_equal(aarch64_relocate_window(func, sizeof(func), 0x1000, 0x100c, 4,
						 0x5000, b, sizeof(b), &inlen), -EILSEQ);
	assert_int_equal(aarch64_relocate_window(func, sizeof(func), 0x1000, 0x1010, 4,
						 0x5000, b, sizeof(b), &inlen), -ERANGE);
	assert_int_equal(aarch64_relocate_window(func, sizeof(func), 0x1000, 0x1004, 8,
						 0x5000, b, sizeof(b), &inlen), -ERANGE);
	assert_int_equal(aarch64_relocate_window(func, sizeof(func), 0x1000, 0x1004, 4,
						 0x20000000, b, sizeof(b), &inlen), -ERANGE);
}

static void test_pad_handoff(void **state)
{
	uint8_t b[512];
	size_t trap = 0;
	struct arch_pad_handoff h = {
		.table = 0x7f0012340000, .entry_shift = 10, .nentries = 256,
		.off_owner = 800, .off_ready = 804, .off_frame = 528,
	};
	int n;

	(void)state;
	n = aarch64_emit_pad_handoff(b, sizeof(b), &h, &trap);
	assert_int_equal(n, 252);
	assert_int_equal(trap, 224);
	assert_int_equal(word_at(b, 0), 0xd2801648);	/* mov x8, #178 (gettid) */
	assert_int_equal(word_at(b, 1), 0xd4000001);	/* svc #0 */
	assert_int_equal(word_at(b, 2), 0x2a0003f5);	/* mov w21, w0 */
	assert_int_equal(word_at(b, 6), 0x0a090017);	/* and w23, w0, w9 */
	assert_int_equal(word_at(b, 7), 0x8b172ad4);	/* retry: add x20, x22, x23, lsl #10 */
	assert_int_equal(word_at(b, 8), 0x910c8298);	/* add x24, x20, #0x320 */
	assert_int_equal(word_at(b, 9), 0x885fff19);	/* ldaxr w25, [x24] */
	assert_int_equal(word_at(b, 10), 0x35000099);	/* cbnz w25, next */
	assert_int_equal(word_at(b, 11), 0x881aff15);	/* stlxr w26, w21, [x24] */
	assert_int_equal(word_at(b, 12), 0x35ffff7a);	/* cbnz w26, retry */
	assert_int_equal(word_at(b, 13), 0x14000005);	/* b claimed */
	assert_int_equal(word_at(b, 14), 0xd503305f);	/* next: clrex */
	assert_int_equal(word_at(b, 17), 0x17fffff6);	/* b retry */
	assert_int_equal(word_at(b, 18), 0x91084284);	/* claimed: add x4, x20, #0x210 */
	assert_int_equal(word_at(b, 19), 0xa9401a65);	/* ldp x5, x6, [x19] */
	assert_int_equal(word_at(b, 20), 0xa9001885);	/* stp x5, x6, [x4] */
	assert_int_equal(word_at(b, 53), 0x910c9298);	/* add x24, x20, #0x324 */
	assert_int_equal(word_at(b, 54), 0x52800025);	/* mov w5, #PAD_READY */
	assert_int_equal(word_at(b, 55), 0x889fff05);	/* stlr w5, [x24] */
	assert_int_equal(word_at(b, 56), 0xd4200000);	/* trap: brk #0 */
	assert_int_equal(word_at(b, 57), 0x88dfff05);	/* ldar w5, [x24] */
	assert_int_equal(word_at(b, 58), 0x710008bf);	/* cmp w5, #PAD_DONE */
	assert_int_equal(word_at(b, 59), 0x54ffffa1);	/* b.ne trap */
	assert_int_equal(word_at(b, 60), 0xb900031f);	/* str wzr, [x24] */
	assert_int_equal(word_at(b, 62), 0x889fff1f);	/* stlr wzr, [x24] */
	/* What it refuses. */
	struct arch_pad_handoff bad = h;
	bad.nentries = 100;
	assert_int_equal(aarch64_emit_pad_handoff(b, sizeof(b), &bad, &trap), -EINVAL);
	bad = h;
	bad.off_ready = 600;		/* inside the frame */
	assert_int_equal(aarch64_emit_pad_handoff(b, sizeof(b), &bad, &trap), -EINVAL);
	bad = h;
	bad.table += 8;			/* entries not 64-aligned */
	assert_int_equal(aarch64_emit_pad_handoff(b, sizeof(b), &bad, &trap), -EINVAL);
	bad = h;
	bad.entry_shift = 8;		/* 256 bytes: no room for the frame at 528 */
	assert_int_equal(aarch64_emit_pad_handoff(b, sizeof(b), &bad, &trap), -EINVAL);
	assert_int_equal(aarch64_emit_pad_handoff(b, 100, &h, &trap), -ENOSPC);
}

/* The agent's layout: the emitters take it, with the image. */
static void test_pad_layout(void **state)
{
	const struct arch_pad_layout *l = aarch64_arch_ops.pad_layout;
	uint8_t b[1024];
	size_t done, trap;

	(void)state;
	assert_non_null(l);
	assert_int_equal(l->frame_words, AARCH64_PAD_FRAME_WORDS);
	assert_int_equal(l->frame_pc, 32);
	assert_true(l->image_bytes <= l->off_frame);
	struct arch_pad_ring r = {
		.ring = 0x7f0012380000, .off_records = 4096,
		.record_shift = l->entry_shift, .nrecords = 4096,
		.off_seq = l->off_seq, .off_bases = l->off_bases,
		.off_frame = l->off_frame, .time_tid = true,
		.off_tid = l->off_tid, .off_time = l->off_time, .image = true,
	};
	int n = aarch64_emit_pad_collect(b, sizeof(b), &r, &done);
	assert_int_equal(n, 360);
	/* After the frame's copy: the v registers, fpsr, fpcr at 0. */
	assert_int_equal(word_at(b, 61), 0xad000460);	/* stp q0, q1, [x3] */
	assert_int_equal(word_at(b, 76), 0xad0f7c7e);	/* stp q30, q31, [x3, #480] */
	assert_int_equal(word_at(b, 77), 0xd53b4425);	/* mrs x5, fpsr */
	assert_int_equal(word_at(b, 78), 0xb9020065);	/* str w5, [x3, #512] */
	assert_int_equal(word_at(b, 79), 0xd53b4406);	/* mrs x6, fpcr */
	assert_int_equal(word_at(b, 80), 0xb9020466);	/* str w6, [x3, #516] */
	/* An image over the frame is refused. */
	struct arch_pad_ring bad = r;
	bad.off_frame = 256;
	bad.off_seq = 900;
	assert_int_equal(aarch64_emit_pad_collect(b, sizeof(b), &bad, &done), -EINVAL);
	struct arch_pad_handoff h = {
		.table = 0x7f0012340000, .entry_shift = l->entry_shift, .nentries = 256,
		.off_owner = l->off_owner, .off_ready = l->off_ready,
		.off_frame = l->off_frame,
	};
	assert_true(aarch64_emit_pad_handoff(b, sizeof(b), &h, &trap) > 0);
}

/* Stepping out of a pad: an exclusive load or store rewinds, all else
 * steps. */
static void test_pad_step(void **state)
{
	static const struct { uint32_t w; int how; } t[] = {
		{ 0x885fff19, ARCH_PAD_REWIND },	/* ldaxr w25, [x24] */
		{ 0x881aff15, ARCH_PAD_REWIND },	/* stlxr w26, w21, [x24] */
		{ 0xc85ffc26, ARCH_PAD_REWIND },	/* ldaxr x6, [x1] */
		{ 0xc808fc27, ARCH_PAD_REWIND },	/* stlxr w8, x7, [x1] */
		{ 0xc87f0c41, ARCH_PAD_REWIND },	/* ldxp x1, x3, [x2] */
		{ 0xc8dffc22, ARCH_PAD_STEP },		/* ldar x2, [x1] */
		{ 0x889fff05, ARCH_PAD_STEP },		/* stlr w5, [x24] */
		{ 0xd503305f, ARCH_PAD_STEP },		/* clrex */
		{ 0xd4000001, ARCH_PAD_STEP },		/* svc #0 */
		{ 0xa9001885, ARCH_PAD_STEP },		/* stp x5, x6, [x4] */
	};
	struct arch_gpregs g = { .pc = 0x1000 };

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint8_t b[4] = { (uint8_t)t[i].w, (uint8_t)(t[i].w >> 8),
				 (uint8_t)(t[i].w >> 16), (uint8_t)(t[i].w >> 24) };
		assert_int_equal(aarch64_arch_ops.pad_step(b, 4, &g, NULL), t[i].how);
		assert_int_equal(g.pc, 0x1000);
	}
}

static int fake_write(void *ctx, uint64_t addr, const void *buf, size_t len)
{
	struct fake_mem *m = ctx;

	if (addr < m->base || addr + len > m->base + sizeof(m->bytes))
		return -EFAULT;
	memcpy(m->bytes + (addr - m->base), buf, len);
	return 0;
}

/* Stepping out of the collector: its exclusive loop (an atomic add),
 * done by hand as a plain load and a store that succeeds; the rest
 * steps. */
static void test_callee_step(void **state)
{
	struct fake_mem fm = { .base = 0x7000 };
	struct arch_mem mem = { &fm, fake_read, fake_write };
	struct arch_gpregs g = { .pc = 0x1000 };
	uint8_t b[4];
	uint64_t v = 0x1122334455667788ull;

	(void)state;
	memcpy(fm.bytes + 8, &v, 8);
	g.gpr[1] = 0x7008;
	g.gpr[2] = 0xdead;
	put_word(b, 0xc85f7c22);	/* ldxr x2, [x1] */
	assert_int_equal(aarch64_arch_ops.callee_step(b, 4, &g, &mem), ARCH_PAD_DONE);
	assert_true(g.gpr[2] == v);
	assert_true(g.pc == 0x1004);
	g.gpr[2] += 1;			/* add x2, x2, #1 (stepped) */
	g.gpr[3] = 7;
	g.pc = 0x1008;
	put_word(b, 0xc8037c22);	/* stxr w3, x2, [x1] */
	assert_int_equal(aarch64_arch_ops.callee_step(b, 4, &g, &mem), ARCH_PAD_DONE);
	memcpy(&v, fm.bytes + 8, 8);
	assert_true(v == 0x1122334455667789ull);
	assert_true(g.gpr[3] == 0);	/* success: cbnz w3 falls through */
	assert_true(g.pc == 0x100c);
	/* A word: ldaxr w4, [sp], sp = gpr[31]; stlxr w5, w4, [sp]. */
	g.gpr[31] = 0x7010;
	fm.bytes[16] = 0x44;
	put_word(b, 0x885fffe4);	/* ldaxr w4, [sp] */
	assert_int_equal(aarch64_arch_ops.callee_step(b, 4, &g, &mem), ARCH_PAD_DONE);
	assert_true(g.gpr[4] == 0x44);
	g.gpr[4] = 0x55;
	put_word(b, 0x8805ffe4);	/* stlxr w5, w4, [sp] */
	assert_int_equal(aarch64_arch_ops.callee_step(b, 4, &g, &mem), ARCH_PAD_DONE);
	assert_int_equal(fm.bytes[16], 0x55);
	assert_int_equal(fm.bytes[17], 0);	/* a word: the upper bytes of w4, 0 */
	/* Unreadable: the error, registers as they were. */
	g.gpr[1] = 0x9000;
	uint64_t pc = g.pc;
	put_word(b, 0xc85f7c22);
	assert_int_equal(aarch64_arch_ops.callee_step(b, 4, &g, &mem), -EFAULT);
	assert_true(g.pc == pc);
	/* Not exclusive, or a pair: stepped. */
	static const uint32_t steps[] = {
		0xc8dffc22,	/* ldar x2, [x1] */
		0x91000442,	/* add x2, x2, #1 */
		0xc87f0c41,	/* ldxp x1, x3, [x2] */
		0x35ffffa3,	/* cbnz w3, .-12 */
	};
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		put_word(b, steps[i]);
		assert_int_equal(aarch64_arch_ops.callee_step(b, 4, &g, &mem), ARCH_PAD_STEP);
		assert_true(g.pc == pc);
	}
}

/* The native condition: a load, a compare, the count of a false one. */
static void test_pad_cond(void **state)
{
	uint8_t b[512];
	size_t skip = 0, load = 0, take = 0;
	struct arch_pad_cond c = {
		.mem = true, .addr = 0x4a1234, .size = 4, .nconv = 1,
		.conv = { { true, 32 } }, .cmp = ARCH_CMP_LT_S, .imm = -2,
		.pc = 0x400800, .skip_counter = 0x7f0000480100,
	};
	int n;

	(void)state;
	n = aarch64_arch_ops.emit_pad_cond(b, sizeof(b), &c, &skip, &load, &take);
	assert_int_equal(n, 108);
	assert_int_equal(load, 24);
	assert_int_equal(skip, 88);
	assert_int_equal(take, 92);
	assert_int_equal(word_at(b, 0), 0xd10083ff);	/* sub sp, sp, #32 */
	assert_int_equal(word_at(b, 1), 0xa90047f0);	/* stp x16, x17, [sp] */
	assert_int_equal(word_at(b, 2), 0xd53b4211);	/* mrs x17, nzcv */
	assert_int_equal(word_at(b, 3), 0xa9013ff1);	/* stp x17, x15, [sp, #16] */
	assert_int_equal(word_at(b, 4), 0xd2824690);	/* mov x16, #0x1234 */
	assert_int_equal(word_at(b, 6), 0xb9400210);	/* load: ldr w16, [x16] */
	assert_int_equal(word_at(b, 7), 0x93407e10);	/* sxtw x16, w16 */
	assert_int_equal(word_at(b, 8), 0x92800031);	/* mov x17, #-2 (movn) */
	assert_int_equal(word_at(b, 9), 0xeb11021f);	/* cmp x16, x17 */
	assert_int_equal(word_at(b, 10), 0x540001ab);	/* b.lt take */
	assert_int_equal(word_at(b, 14), 0xc85f7e11);	/* ldxr x17, [x16] */
	assert_int_equal(word_at(b, 16), 0xc80f7e11);	/* stxr w15, x17, [x16] */
	assert_int_equal(word_at(b, 17), 0x35ffffaf);	/* cbnz w15, .-12 */
	assert_int_equal(word_at(b, 18), 0xa9413ff1);	/* ldp x17, x15, [sp, #16] */
	assert_int_equal(word_at(b, 19), 0xd51b4211);	/* msr nzcv, x17 */
	assert_int_equal(word_at(b, 20), 0xa94047f0);	/* ldp x16, x17, [sp] */
	assert_int_equal(word_at(b, 21), 0x910083ff);	/* add sp, sp, #32 */
	assert_int_equal(word_at(b, 23), 0xa9413ff1);	/* take: the same four */
	assert_int_equal(aarch64_patch_branch(b, skip, 0x1000), 0);
	assert_int_equal(word_at(b, 22), 0x140003ea);	/* b +0xfa8 */
	/* Registers: x17 and x15 from their saved slots, sp, pc, cpsr. */
	static const struct { unsigned int regnum; uint32_t w; } regs[] = {
		{ 3, 0xaa0303f0 },	/* mov x16, x3 */
		{ 30, 0xaa1e03f0 },	/* mov x16, x30 */
		{ 17, 0xf94007f0 },	/* ldr x16, [sp, #8] */
		{ 15, 0xf9400ff0 },	/* ldr x16, [sp, #24] */
		{ 31, 0x910083f0 },	/* add x16, sp, #32 */
		{ 32, 0xd2810010 },	/* mov x16, #0x800 (then movk) */
		{ 33, 0xaa1103f0 },	/* mov x16, x17 (nzcv) */
	};
	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++) {
		struct arch_pad_cond r = c;
		r.mem = false;
		r.regnum = regs[i].regnum;
		r.nconv = 0;
		n = aarch64_arch_ops.emit_pad_cond(b, sizeof(b), &r, &skip, &load, &take);
		assert_true(n > 0);
		assert_int_equal(load, 0);
		assert_int_equal(word_at(b, 4), regs[i].w);
	}
	struct arch_pad_cond r = c;
	r.mem = false;
	r.regnum = 16;			/* x16 itself: already there */
	r.nconv = 0;
	r.cmp = ARCH_CMP_GT_U;
	r.imm = 0x12345;
	n = aarch64_arch_ops.emit_pad_cond(b, sizeof(b), &r, &skip, &load, &take);
	assert_true(n > 0);
	assert_int_equal(word_at(b, 4), 0xd28468b1);	/* mov x17, #0x2345 */
	assert_int_equal(word_at(b, 5), 0xf2a00031);	/* movk x17, #0x1, lsl #16 */
	assert_int_equal(word_at(b, 7) & 0xff00001f, 0x54000008);	/* b.hi */
	/* What it refuses: v registers, odd sizes and conversions, no counter. */
	r = c;
	r.mem = false;
	r.regnum = 34;
	assert_int_equal(aarch64_arch_ops.emit_pad_cond(b, sizeof(b), &r, &skip, &load, &take),
			 -EINVAL);
	r = c;
	r.size = 3;
	assert_int_equal(aarch64_arch_ops.emit_pad_cond(b, sizeof(b), &r, &skip, &load, &take),
			 -EINVAL);
	r = c;
	r.conv[0].bits = 12;
	assert_int_equal(aarch64_arch_ops.emit_pad_cond(b, sizeof(b), &r, &skip, &load, &take),
			 -EINVAL);
	r = c;
	r.skip_counter = 0;
	assert_int_equal(aarch64_arch_ops.emit_pad_cond(b, sizeof(b), &r, &skip, &load, &take),
			 -EINVAL);
	assert_int_equal(aarch64_arch_ops.emit_pad_cond(b, 40, &c, &skip, &load, &take), -ENOSPC);
	/* Stepping out: the count's pair (on x16) by hand, the claims'
	 * (x1, x24) rewind. */
	struct fake_mem fm = { .base = 0x7000 };
	struct arch_mem mem = { &fm, fake_read, fake_write };
	struct arch_gpregs g = { .pc = 0x2000 };
	g.gpr[16] = 0x7000;
	fm.bytes[0] = 41;
	assert_int_equal(aarch64_arch_ops.pad_step(b + 0, 0, &g, &mem), ARCH_PAD_STEP);
	uint8_t w[4];
	put_word(w, 0xc85f7e11);	/* ldxr x17, [x16] */
	assert_int_equal(aarch64_arch_ops.pad_step(w, 4, &g, &mem), ARCH_PAD_DONE);
	assert_true(g.gpr[17] == 41 && g.pc == 0x2004);
	put_word(w, 0xc85ffc26);	/* ldaxr x6, [x1] */
	assert_int_equal(aarch64_arch_ops.pad_step(w, 4, &g, &mem), ARCH_PAD_REWIND);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_decode_errors),
		cmocka_unit_test(test_targets),
		cmocka_unit_test(test_sim_branches),
		cmocka_unit_test(test_sim_conditions),
		cmocka_unit_test(test_sim_cb_tb),
		cmocka_unit_test(test_sim_indirect),
		cmocka_unit_test(test_sim_indirect_tagged),
		cmocka_unit_test(test_sim_adr),
		cmocka_unit_test(test_sim_literal),
		cmocka_unit_test(test_sim_nop_bti),
		cmocka_unit_test(test_sim_not_emulated),
		cmocka_unit_test(test_exclusive_sequence),
		cmocka_unit_test(test_xol_boost),
		cmocka_unit_test(test_xol_far),
		cmocka_unit_test(test_xol_reach),
		cmocka_unit_test(test_xol_relocated),
		cmocka_unit_test(test_xol_literal),
		cmocka_unit_test(test_xol_refused),
		cmocka_unit_test(test_emit),
		cmocka_unit_test(test_next_pcs),
		cmocka_unit_test(test_next_pcs_exclusive),
		cmocka_unit_test(test_follows_call),
		cmocka_unit_test(test_emulate_pc_only),
		cmocka_unit_test(test_sdt),
		cmocka_unit_test(test_target_xml),
		cmocka_unit_test(test_asm_reg),
		cmocka_unit_test(test_pad_save_restore),
		cmocka_unit_test(test_pad_collect),
		cmocka_unit_test(test_pad_collect_ipa),
		cmocka_unit_test(test_pad_window),
		cmocka_unit_test(test_pad_handoff),
		cmocka_unit_test(test_pad_layout),
		cmocka_unit_test(test_pad_step),
		cmocka_unit_test(test_callee_step),
		cmocka_unit_test(test_pad_cond),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
