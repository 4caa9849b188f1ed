/*
 * arm-table.c - table tests of the 32-bit ARM engine (cmocka).
 *
 * Each row is an instruction, produced once with arm-linux-gnueabihf-as
 * (.syntax unified, armv7-a) and checked with objdump, with its source
 * beside it, and the strategy the classifier must choose (for a
 * rejection a piece of the reason).  A32 words are the word; T32 is the
 * first halfword << 16 | the second, as objdump prints them.  The few
 * UNPREDICTABLE forms gas refuses to assemble are encoded by hand (their
 * fields are in the comment).  Simulations and next pcs run on a fake
 * register file and a fake memory, so they run on every host.
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "arch/arm/arm.h"

#define E ARCH_EMULATE
#define B ARCH_BOOST
#define S ARCH_STEP
#define R ARCH_REJECT

enum isa { A32, T16, T32 };

static const struct row {
	enum isa isa;
	uint32_t word;
	const char *src;	/* the assembler source it came from */
	int strategy;
	const char *reason;	/* a piece of the rejection's reason */
} rows[] = {
	{ A32, 0xea00003e, "b .+0x100",                    E, NULL },
	{ A32, 0xebfffbfe, "bl .-0x1000",                  E, NULL },
	{ A32, 0x1a00000e, "bne .+0x40",                   E, NULL },
	{ A32, 0xfa000006, "blx .+0x20",                   E, NULL },
	{ A32, 0xe12fff1e, "bx lr",                        E, NULL },
	{ A32, 0x112fff33, "blxne r3",                     E, NULL },
	{ A32, 0xe59f0010, "ldr r0, [pc, #16]",            E, NULL },
	{ A32, 0xe55f1008, "ldrb r1, [pc, #-8]",           E, NULL },
	{ A32, 0xe1df20b4, "ldrh r2, [pc, #4]",            E, NULL },
	{ A32, 0xe1cf20d8, "ldrd r2, r3, [pc, #8]",        E, NULL },
	{ A32, 0xe28f0008, "add r0, pc, #8",               E, NULL },
	{ A32, 0xe08f3003, "add r3, pc, r3",               E, NULL },
	{ A32, 0xe09f3003, "adds r3, pc, r3",              E, NULL },
	{ A32, 0xe1a0f00e, "mov pc, lr",                   E, NULL },
	{ A32, 0x908ff103, "addls pc, pc, r3, lsl #2",     E, NULL },
	{ A32, 0xe49df004, "ldr pc, [sp], #4",             E, NULL },
	{ A32, 0xe793f102, "ldr pc, [r3, r2, lsl #2]",     E, NULL },
	{ A32, 0xe5bcf008, "ldr pc, [ip, #8]!",            E, NULL },
	{ A32, 0xe8bd8010, "pop {r4, pc}",                 E, NULL },
	{ A32, 0xe8b08006, "ldmia r0!, {r1, r2, pc}",      E, NULL },
	{ A32, 0xe92d8010, "stmdb sp!, {r4, pc}",          E, NULL },
	{ A32, 0xf5dff008, "pld [pc, #8]",                 E, NULL },
	{ A32, 0xe320f000, "nop",                          E, NULL },
	{ A32, 0xe52df004, "str pc, [sp, #-4]!",           S, NULL },
	{ A32, 0xe79f0001, "ldr r0, [pc, r1]",             S, NULL },
	{ A32, 0xed9f0b02, "vldr d0, [pc, #8]",            S, NULL },
	{ A32, 0xe92d4010, "push {r4, lr}",                B, NULL },
	{ A32, 0xe0810002, "add r0, r1, r2",               B, NULL },
	{ A32, 0x02810004, "addeq r0, r1, #4",             B, NULL },
	{ A32, 0xe5910004, "ldr r0, [r1, #4]",             B, NULL },
	{ A32, 0xee1d0f70, "mrc p15, 0, r0, c13, c0, 3",   B, NULL },
	{ A32, 0xee310b02, "vadd.f64 d0, d1, d2",          B, NULL },
	{ A32, 0xf57ff05b, "dmb ish",                      B, NULL },
	{ A32, 0xe3010234, "movw r0, #0x1234",             B, NULL },
	{ A32, 0xe0203291, "mla r0, r1, r2, r3",           B, NULL },
	{ A32, 0xed2d8b10, "vpush {d8-d15}",               B, NULL },
	{ A32, 0xe1910f9f, "ldrex r0, [r1]",               R, "exclusive" },
	{ A32, 0xe1812f90, "strex r2, r0, [r1]",           R, "exclusive" },
	{ A32, 0xe1b20f9f, "ldrexd r0, r1, [r2]",          R, "exclusive" },
	{ A32, 0xef000000, "svc #0",                       R, "system call" },
	{ A32, 0xe1200070, "bkpt #0",                      R, "breakpoint" },
	{ A32, 0xe7f001f0, "udf #16",                      R, "undefined" },
	{ A32, 0xe25ef004, "subs pc, lr, #4",              R, "exception return" },
	{ A32, 0xe08f0211, "add r0, pc, r1, lsl r2",       R, "UNPREDICTABLE" },
	{ A32, 0xe8fd8001, "ldmia sp!, {r0, pc}^",         R, "user mode" },
	{ A32, 0xf10c0080, "cpsid i",                      R, "privileged" },
	/* cond 0101 1101 Rn=0000 Rt=1111 imm12=0 */
	{ A32, 0xe5d0f000, "ldrb pc, [r0]",                R, "UNPREDICTABLE" },
	{ T16, 0xe00e,     "b.n .+0x20",                   E, NULL },
	{ T16, 0xd006,     "beq.n .+0x10",                 E, NULL },
	{ T32, 0xf000bffe, "b.w .+0x1000",                 E, NULL },
	{ T32, 0xf47faf7e, "bne.w .-0x100",                E, NULL },
	{ T32, 0xf001fffe, "bl .+0x2000",                  E, NULL },
	{ T32, 0xf000e87e, "blx .+0x100",                  E, NULL },
	{ T16, 0x4770,     "bx lr",                        E, NULL },
	{ T16, 0x4798,     "blx r3",                       E, NULL },
	{ T16, 0xb130,     "cbz r0, .+0x10",               E, NULL },
	{ T16, 0xb971,     "cbnz r1, .+0x20",              E, NULL },
	{ T16, 0x4802,     "ldr r0, [pc, #8]",             E, NULL },
	{ T32, 0xf85f1008, "ldr.w r1, [pc, #-8]",          E, NULL },
	{ T32, 0xf89f2004, "ldrb.w r2, [pc, #4]",          E, NULL },
	{ T32, 0xf9bf3004, "ldrsh.w r3, [pc, #4]",         E, NULL },
	{ T32, 0xe9df2302, "ldrd r2, r3, [pc, #8]",        E, NULL },
	{ T16, 0xa001,     "adr r0, .+8",                  E, NULL },
	{ T32, 0xf2af0108, "subw r1, pc, #8",              E, NULL },
	{ T32, 0xf20f0264, "addw r2, pc, #100",            E, NULL },
	{ T16, 0x447b,     "add r3, pc",                   E, NULL },
	{ T16, 0x4678,     "mov r0, pc",                   E, NULL },
	{ T16, 0x468f,     "mov pc, r1",                   E, NULL },
	{ T16, 0xbd10,     "pop {r4, pc}",                 E, NULL },
	{ T32, 0xe8bd8030, "pop.w {r4, r5, pc}",           E, NULL },
	{ T32, 0xf85dfb04, "ldr.w pc, [sp], #4",           E, NULL },
	{ T32, 0xf850f021, "ldr pc, [r0, r1, lsl #2]",     E, NULL },
	{ T32, 0xe8dff003, "tbb [pc, r3]",                 E, NULL },
	{ T32, 0xe8d0f011, "tbh [r0, r1, lsl #1]",         E, NULL },
	{ T16, 0xbf08,     "it eq",                        E, NULL },
	{ T16, 0xbf00,     "nop",                          E, NULL },
	{ T32, 0xf3af8000, "nop.w",                        E, NULL },
	{ T32, 0xf89ff008, "pld [pc, #8]",                 E, NULL },
	{ T32, 0xed9f0b02, "vldr d0, [pc, #8]",            S, NULL },
	{ T16, 0xb510,     "push {r4, lr}",                B, NULL },
	{ T32, 0xe92d4ff0, "push.w {r4-r11, lr}",          B, NULL },
	{ T32, 0xee1d0f70, "mrc p15, 0, r0, c13, c0, 3",   B, NULL },
	{ T32, 0xeb010002, "add.w r0, r1, r2",             B, NULL },
	{ T32, 0xf8d10004, "ldr.w r0, [r1, #4]",           B, NULL },
	{ T32, 0xf04f0000, "mov.w r0, #0",                 B, NULL },
	{ T16, 0x2001,     "movs r0, #1",                  B, NULL },
	{ T32, 0xf890f000, "pld [r0]",                     B, NULL },
	{ T16, 0x9b01,     "ldr r3, [sp, #4]",             B, NULL },
	{ T32, 0xf1b00f01, "cmp.w r0, #1",                 B, NULL },
	{ T32, 0xf3bf8f5b, "dmb ish",                      B, NULL },
	{ T32, 0xe8510f00, "ldrex r0, [r1]",               R, "exclusive" },
	{ T32, 0xe8410200, "strex r2, r0, [r1]",           R, "exclusive" },
	{ T16, 0xdf00,     "svc #0",                       R, "system call" },
	{ T16, 0xbe00,     "bkpt #0",                      R, "breakpoint" },
	{ T16, 0xde01,     "udf #1",                       R, "undefined" },
	{ T32, 0xf7f0a000, "udf.w #0",                     R, "undefined" },
	{ T16, 0xb672,     "cpsid i",                      R, "privileged" },
	/* 1111 1000 1100 Rn=1101 | Rt=1111 imm12=0 */
	{ T32, 0xf8cdf000, "str.w pc, [sp]",               R, "UNPREDICTABLE" },
	/* 1110 1011 0000 Rn=0000 | 0 000 Rd=1111 00 00 Rm=0001 */
	{ T32, 0xeb000f01, "add.w pc, r0, r1",             R, "UNPREDICTABLE" },
	/* 1110 1000 1001 Rn=0000 | P=1 M=1 0 list={r1} */
	{ T32, 0xe890c002, "ldm.w r0, {r1, lr, pc}",       R, "UNPREDICTABLE" },
};

#define BASE 0x10000u

/* The bytes of a row, little-endian, halfwords in order for T32. */
static size_t row_bytes(enum isa isa, uint32_t w, uint8_t *b)
{
	if (isa == T16) {
		b[0] = (uint8_t)w;
		b[1] = (uint8_t)(w >> 8);
		return 2;
	}
	if (isa == T32)
		w = w >> 16 | w << 16;
	b[0] = (uint8_t)w;
	b[1] = (uint8_t)(w >> 8);
	b[2] = (uint8_t)(w >> 16);
	b[3] = (uint8_t)(w >> 24);
	return 4;
}

static int decode(enum isa isa, uint32_t w, uint64_t addr, struct arch_insn *ai)
{
	uint8_t b[4];
	size_t n = row_bytes(isa, w, b);

	return arm_arch_ops.insn_decode(b, n, addr | (isa != A32), ai);
}

static void test_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct arch_insn ai;
		int err = decode(r->isa, r->word, BASE, &ai);

		if (err || (int)ai.strategy != r->strategy ||
		    ai.len != (r->isa == T16 ? 2u : 4u) ||
		    (r->reason && !strstr(ai.reason, r->reason)))
			fail_msg("%s (%08x): err %d, %s, len %u (%s); want %s%s%s",
				 r->src, r->word, err, arch_strategy_name(ai.strategy),
				 ai.len, ai.reason, arch_strategy_name(r->strategy),
				 r->reason ? " with " : "", r->reason ? r->reason : "");
	}
}

static void test_decode_errors(void **state)
{
	struct arch_insn ai;
	uint8_t b[4] = { 0x4f, 0xf0, 0x00, 0x00 };	/* mov.w r0, #0 */

	(void)state;
	assert_int_equal(arm_arch_ops.insn_decode(b, 2, BASE | 1, &ai), -ENODATA);
	assert_int_equal(arm_arch_ops.insn_decode(b, 1, BASE | 1, &ai), -ENODATA);
	assert_int_equal(arm_arch_ops.insn_decode(b, 3, BASE, &ai), -ENODATA);
	assert_int_equal(arm_arch_ops.insn_decode(b, 4, BASE + 2, &ai), -EILSEQ);
	assert_non_null(strstr(ai.reason, "misaligned"));
	/* A32 1111 1111 ...: no user-space instruction */
	b[3] = 0xff;
	b[2] = 0xff;
	assert_int_equal(arm_arch_ops.insn_decode(b, 4, BASE, &ai), 0);
	assert_int_equal(ai.strategy, ARCH_REJECT);
	assert_non_null(strstr(ai.reason, "unallocated"));
}

static const struct arm_insn *decoded(enum isa isa, uint32_t w, uint64_t addr,
				      struct arch_insn *ai)
{
	assert_int_equal(decode(isa, w, addr, ai), 0);
	return arm_priv(ai);
}

/* Targets are known at decode time; bit 0 says a Thumb target. */
static void test_targets(void **state)
{
	struct arch_insn ai;

	(void)state;
	assert_int_equal(decoded(A32, 0xea00003e, BASE, &ai)->target, BASE + 0x100);
	assert_int_equal(decoded(A32, 0xebfffbfe, BASE, &ai)->target, BASE - 0x1000);
	assert_int_equal(decoded(A32, 0xfa000006, BASE, &ai)->target, (BASE + 0x20) | 1);
	assert_int_equal(decoded(T16, 0xe00e, BASE, &ai)->target, (BASE + 0x20) | 1);
	assert_int_equal(decoded(T16, 0xd006, BASE, &ai)->target, (BASE + 0x10) | 1);
	assert_int_equal(decoded(T32, 0xf000bffe, BASE, &ai)->target, (BASE + 0x1000) | 1);
	assert_int_equal(decoded(T32, 0xf47faf7e, BASE, &ai)->target, (BASE - 0x100) | 1);
	assert_int_equal(decoded(T32, 0xf001fffe, BASE, &ai)->target, (BASE + 0x2000) | 1);
	/* blx from Thumb: to A32 at Align(pc, 4) + offset */
	assert_int_equal(decoded(T32, 0xf000e87e, BASE, &ai)->target, BASE + 0x100);
	assert_int_equal(decoded(T32, 0xf000e87e, BASE + 2, &ai)->target, BASE + 0x100);
	assert_int_equal(decoded(T16, 0xb130, BASE, &ai)->target, (BASE + 0x10) | 1);
	assert_int_equal(decoded(T16, 0xb971, BASE, &ai)->target, (BASE + 0x20) | 1);
	/* literals: A32 pc + 8; Thumb Align(pc + 4, 4) */
	assert_int_equal(decoded(A32, 0xe59f0010, BASE, &ai)->target, BASE + 8 + 16);
	assert_int_equal(decoded(A32, 0xe55f1008, BASE, &ai)->target, BASE);
	assert_int_equal(decoded(T16, 0x4802, BASE + 2, &ai)->target, BASE + 4 + 8);
	assert_int_equal(decoded(T32, 0xf85f1008, BASE, &ai)->target, BASE - 4);
	assert_int_equal(decoded(T16, 0xa001, BASE + 2, &ai)->target, BASE + 8);
	assert_int_equal(decoded(T32, 0xf2af0108, BASE, &ai)->target, BASE - 4);
	assert_int_equal(decoded(T32, 0xf20f0264, BASE, &ai)->target, BASE + 104);
}

/* ---- a fake memory: 4 KiB at 0x10000 and 4 KiB of stack at 0x80000 ---- */

static uint8_t code_mem[4096], stack_mem[4096];

static uint8_t *mem_at(uint64_t addr, size_t len)
{
	if (addr >= BASE && addr + len <= BASE + sizeof(code_mem))
		return code_mem + (addr - BASE);
	if (addr >= 0x80000 && addr + len <= 0x80000 + sizeof(stack_mem))
		return stack_mem + (addr - 0x80000);
	return NULL;
}

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	uint8_t *p = mem_at(addr, len);

	(void)ctx;
	if (!p)
		return -EFAULT;
	memcpy(buf, p, len);
	return 0;
}

static int fake_write(void *ctx, uint64_t addr, const void *buf, size_t len)
{
	uint8_t *p = mem_at(addr, len);

	(void)ctx;
	if (!p)
		return -EFAULT;
	memcpy(p, buf, len);
	return 0;
}

static const struct arch_mem fake = { NULL, fake_read, fake_write };

static void put32(uint64_t addr, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
			 (uint8_t)(v >> 24) };

	assert_int_equal(fake_write(NULL, addr, b, 4), 0);
}

static uint32_t get32(uint64_t addr)
{
	uint8_t b[4];

	assert_int_equal(fake_read(NULL, addr, b, 4), 0);
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
	       (uint32_t)b[3] << 24;
}

/* Registers as the cpu would hold them at `addr`. */
static struct arch_gpregs regs_at(enum isa isa, uint64_t addr)
{
	struct arch_gpregs r;

	memset(&r, 0, sizeof(r));
	for (int i = 0; i < 15; i++)
		r.gpr[i] = 0x1000u * (unsigned int)i + (unsigned int)i;
	r.gpr[ARM_SP] = 0x80800;
	r.pc = addr;
	r.flags = 0x10 | (isa != A32 ? ARM_PSR_T : 0);	/* user mode */
	return r;
}

static struct arch_gpregs sim(enum isa isa, uint32_t w, uint64_t addr,
			      struct arch_gpregs r)
{
	struct arch_insn ai;

	assert_int_equal(decode(isa, w, addr, &ai), 0);
	assert_int_equal(ai.strategy, ARCH_EMULATE);
	assert_int_equal(arm_arch_ops.insn_emulate(&ai, &r, &fake), 0);
	return r;
}

static void test_sim_branches(void **state)
{
	struct arch_gpregs r0 = regs_at(A32, BASE), r;

	(void)state;
	r = sim(A32, 0xea00003e, BASE, r0);			/* b .+0x100 */
	assert_int_equal(r.pc, BASE + 0x100);
	r = sim(A32, 0xebfffbfe, BASE, r0);			/* bl .-0x1000 */
	assert_int_equal(r.pc, BASE - 0x1000);
	assert_int_equal(r.gpr[ARM_LR], BASE + 4);
	/* bne .+0x40: taken with Z clear, not with Z set */
	r = sim(A32, 0x1a00000e, BASE, r0);
	assert_int_equal(r.pc, BASE + 0x40);
	r0.flags |= ARM_PSR_Z;
	r = sim(A32, 0x1a00000e, BASE, r0);
	assert_int_equal(r.pc, BASE + 4);
	r0.flags &= ~(uint64_t)ARM_PSR_Z;
	/* blx .+0x20: to Thumb, lr the A32 return */
	r = sim(A32, 0xfa000006, BASE, r0);
	assert_int_equal(r.pc, BASE + 0x20);
	assert_true(r.flags & ARM_PSR_T);
	assert_int_equal(r.gpr[ARM_LR], BASE + 4);
	/* bx lr: interworking on bit 0 */
	r0.gpr[ARM_LR] = 0x20001;
	r = sim(A32, 0xe12fff1e, BASE, r0);
	assert_int_equal(r.pc, 0x20000);
	assert_true(r.flags & ARM_PSR_T);
	/* blxne r3 with Z set: skipped, lr untouched */
	r0.flags |= ARM_PSR_Z;
	r = sim(A32, 0x112fff33, BASE, r0);
	assert_int_equal(r.pc, BASE + 4);
	assert_int_equal(r.gpr[ARM_LR], 0x20001);
	r0.flags &= ~(uint64_t)ARM_PSR_Z;
	r0.gpr[3] = 0x30000;
	r = sim(A32, 0x112fff33, BASE, r0);
	assert_int_equal(r.pc, 0x30000);
	assert_false(r.flags & ARM_PSR_T);
	assert_int_equal(r.gpr[ARM_LR], BASE + 4);
}

static void test_sim_thumb_branches(void **state)
{
	struct arch_gpregs r0 = regs_at(T16, BASE), r;

	(void)state;
	r = sim(T16, 0xe00e, BASE, r0);				/* b.n .+0x20 */
	assert_int_equal(r.pc, BASE + 0x20);
	assert_true(r.flags & ARM_PSR_T);
	r = sim(T32, 0xf001fffe, BASE, r0);			/* bl .+0x2000 */
	assert_int_equal(r.pc, BASE + 0x2000);
	assert_int_equal(r.gpr[ARM_LR], (BASE + 4) | 1);
	r = sim(T32, 0xf000e87e, BASE + 2, r0);			/* blx .+0x100 */
	assert_int_equal(r.pc, BASE + 0x100);
	assert_false(r.flags & ARM_PSR_T);
	assert_int_equal(r.gpr[ARM_LR], (BASE + 6) | 1);
	r0.gpr[3] = 0x40000;					/* blx r3 */
	r = sim(T16, 0x4798, BASE, r0);
	assert_int_equal(r.pc, 0x40000);
	assert_false(r.flags & ARM_PSR_T);
	assert_int_equal(r.gpr[ARM_LR], (BASE + 2) | 1);
	/* cbz r0 / cbnz r1 */
	r0.gpr[0] = 0;
	r = sim(T16, 0xb130, BASE, r0);
	assert_int_equal(r.pc, BASE + 0x10);
	r0.gpr[0] = 5;
	r = sim(T16, 0xb130, BASE, r0);
	assert_int_equal(r.pc, BASE + 2);
	r0.gpr[1] = 5;
	r = sim(T16, 0xb971, BASE, r0);
	assert_int_equal(r.pc, BASE + 0x20);
	/* bne.w: flags */
	r0.flags |= ARM_PSR_Z;
	r = sim(T32, 0xf47faf7e, BASE, r0);
	assert_int_equal(r.pc, BASE + 4);
	r0.flags &= ~(uint64_t)ARM_PSR_Z;
	r = sim(T32, 0xf47faf7e, BASE, r0);
	assert_int_equal(r.pc, BASE - 0x100);
	/* mov pc, r1: a branch that stays in Thumb */
	r0.gpr[1] = 0x50000;
	r = sim(T16, 0x468f, BASE, r0);
	assert_int_equal(r.pc, 0x50000);
	assert_true(r.flags & ARM_PSR_T);
}

static void test_sim_pc_values(void **state)
{
	struct arch_gpregs r0 = regs_at(A32, BASE), r, t0 = regs_at(T16, BASE + 2);

	(void)state;
	r = sim(A32, 0xe28f0008, BASE, r0);			/* add r0, pc, #8 */
	assert_int_equal(r.gpr[0], BASE + 16);
	r0.gpr[3] = 0x100;
	r = sim(A32, 0xe08f3003, BASE, r0);			/* add r3, pc, r3 */
	assert_int_equal(r.gpr[3], BASE + 8 + 0x100);
	assert_int_equal(r.pc, BASE + 4);
	/* adds r3, pc, r3 with r3 = -(pc): zero, carry */
	r0.gpr[3] = (uint32_t)-(int32_t)(BASE + 8);
	r = sim(A32, 0xe09f3003, BASE, r0);
	assert_int_equal(r.gpr[3], 0);
	assert_true(r.flags & ARM_PSR_Z);
	assert_true(r.flags & ARM_PSR_C);
	assert_false(r.flags & ARM_PSR_N);
	/* addls pc, pc, r3, lsl #2: a jump table, ls = C clear or Z set */
	r0.gpr[3] = 2;
	r0.flags = 0x10;
	r = sim(A32, 0x908ff103, BASE, r0);
	assert_int_equal(r.pc, BASE + 8 + 8);
	r0.flags = 0x10 | ARM_PSR_C;
	r = sim(A32, 0x908ff103, BASE, r0);
	assert_int_equal(r.pc, BASE + 4);
	/* mov pc, lr: interworking in A32 */
	r0.gpr[ARM_LR] = 0x60001;
	r = sim(A32, 0xe1a0f00e, BASE, r0);
	assert_int_equal(r.pc, 0x60000);
	assert_true(r.flags & ARM_PSR_T);
	/* Thumb: adr r0, .+8 at BASE + 2 -> Align(BASE + 6, 4) + 4 */
	r = sim(T16, 0xa001, BASE + 2, t0);
	assert_int_equal(r.gpr[0], BASE + 8);
	assert_int_equal(r.pc, BASE + 4);
	t0.gpr[3] = 0x10;
	r = sim(T16, 0x447b, BASE + 2, t0);			/* add r3, pc */
	assert_int_equal(r.gpr[3], BASE + 6 + 0x10);
	r = sim(T16, 0x4678, BASE + 2, t0);			/* mov r0, pc */
	assert_int_equal(r.gpr[0], BASE + 6);
	r = sim(T32, 0xf2af0108, BASE + 2, t0);			/* subw r1, pc, #8 */
	assert_int_equal(r.gpr[1], BASE + 4 - 8);
}

static void test_sim_loads(void **state)
{
	struct arch_gpregs r0 = regs_at(A32, BASE), r, t0 = regs_at(T16, BASE);

	(void)state;
	memset(code_mem, 0, sizeof(code_mem));
	put32(BASE + 24, 0xdeadbeef);
	r = sim(A32, 0xe59f0010, BASE, r0);			/* ldr r0, [pc, #16] */
	assert_int_equal(r.gpr[0], 0xdeadbeef);
	put32(BASE + 16, 0x8001ff80);
	put32(BASE + 20, 0xdeadbeef);
	r = sim(A32, 0xe1cf20d8, BASE, r0);			/* ldrd r2, r3, [pc, #8] */
	assert_int_equal(r.gpr[2], 0x8001ff80);
	assert_int_equal(r.gpr[3], 0xdeadbeef);
	put32(BASE + 12, 0x0000ff80);
	r = sim(A32, 0xe1df20b4, BASE, r0);			/* ldrh r2, [pc, #4] */
	assert_int_equal(r.gpr[2], 0xff80);
	/* Thumb at BASE + 2: ldr r0, [pc, #8] reads Align(BASE + 6, 4) + 8 */
	put32(BASE + 12, 0x11223344);
	r = sim(T16, 0x4802, BASE + 2, t0);
	assert_int_equal(r.gpr[0], 0x11223344);
	put32(BASE + 8, 0x0000ff80);
	r = sim(T32, 0xf9bf3004, BASE, t0);			/* ldrsh.w r3, [pc, #4] */
	assert_int_equal(r.gpr[3], 0xffffff80);
	/* a literal out of memory: -EFAULT, registers untouched */
	{
		struct arch_insn ai;
		struct arch_gpregs keep;

		assert_int_equal(decode(A32, 0xe59f0010, 0x70000, &ai), 0);
		r = regs_at(A32, 0x70000);
		keep = r;
		assert_int_equal(arm_arch_ops.insn_emulate(&ai, &r, &fake), -EFAULT);
		assert_memory_equal(&r, &keep, sizeof(r));
	}
	/* ldr pc, [ip, #8]! (a PLT entry): writeback and interworking */
	r0.gpr[ARM_IP] = 0x80100;
	put32(0x80108, 0x12345);
	r = sim(A32, 0xe5bcf008, BASE, r0);
	assert_int_equal(r.gpr[ARM_IP], 0x80108);
	assert_int_equal(r.pc, 0x12344);
	assert_true(r.flags & ARM_PSR_T);
	/* ldr pc, [r3, r2, lsl #2] */
	r0.gpr[3] = 0x80200;
	r0.gpr[2] = 3;
	put32(0x8020c, 0x20000);
	r = sim(A32, 0xe793f102, BASE, r0);
	assert_int_equal(r.pc, 0x20000);
	assert_false(r.flags & ARM_PSR_T);
}

static void test_sim_ldm_stm(void **state)
{
	struct arch_gpregs r0 = regs_at(A32, BASE), r, t0 = regs_at(T16, BASE);

	(void)state;
	put32(0x80800, 0x44);
	put32(0x80804, 0x30001);
	r = sim(A32, 0xe8bd8010, BASE, r0);			/* pop {r4, pc} */
	assert_int_equal(r.gpr[4], 0x44);
	assert_int_equal(r.pc, 0x30000);
	assert_true(r.flags & ARM_PSR_T);
	assert_int_equal(r.gpr[ARM_SP], 0x80808);
	r = sim(T16, 0xbd10, BASE, t0);				/* pop {r4, pc} */
	assert_int_equal(r.gpr[4], 0x44);
	assert_int_equal(r.pc, 0x30000);
	assert_int_equal(r.gpr[ARM_SP], 0x80808);
	put32(0x80808, 0x40000);
	r = sim(T32, 0xe8bd8030, BASE, t0);			/* pop.w {r4, r5, pc} */
	assert_int_equal(r.gpr[4], 0x44);
	assert_int_equal(r.gpr[5], 0x30001);
	assert_int_equal(r.pc, 0x40000);
	assert_false(r.flags & ARM_PSR_T);			/* to A32 */
	assert_int_equal(r.gpr[ARM_SP], 0x8080c);
	r = sim(T32, 0xf85dfb04, BASE, t0);			/* ldr.w pc, [sp], #4 */
	assert_int_equal(r.pc, 0x44 & ~3u);
	assert_int_equal(r.gpr[ARM_SP], 0x80804);
	/* stmdb sp!, {r4, pc}: stores r4 and the instruction's address + 8 */
	r = sim(A32, 0xe92d8010, BASE, r0);
	assert_int_equal(r.gpr[ARM_SP], 0x807f8);
	assert_int_equal(get32(0x807f8), r0.gpr[4]);
	assert_int_equal(get32(0x807fc), BASE + 8);
	assert_int_equal(r.pc, BASE + 4);
}

static void test_sim_table_branch(void **state)
{
	struct arch_gpregs t0 = regs_at(T16, BASE), r;

	(void)state;
	/* tbb [pc, r3]: the table follows the instruction */
	code_mem[4 + 2] = 0x10;
	t0.gpr[3] = 2;
	r = sim(T32, 0xe8dff003, BASE, t0);
	assert_int_equal(r.pc, BASE + 4 + 0x20);
	/* tbh [r0, r1, lsl #1] */
	t0.gpr[0] = 0x80400;
	t0.gpr[1] = 3;
	put32(0x80406, 0x0123);
	r = sim(T32, 0xe8d0f011, BASE, t0);
	assert_int_equal(r.pc, BASE + 4 + 2 * 0x123);
}

/* IT: sets ITSTATE; an instruction in a block honours it and advances it. */
static void test_sim_it(void **state)
{
	struct arch_gpregs t0 = regs_at(T16, BASE), r;

	(void)state;
	r = sim(T16, 0xbf0c, BASE, t0);				/* ite eq */
	assert_int_equal(arm_itstate(r.flags), 0x0c);
	assert_int_equal(r.pc, BASE + 2);
	/* bx lr inside the block, condition eq with Z clear: skipped, and
	 * the block advances to its 'else' */
	r.gpr[ARM_LR] = 0x20001;
	r = sim(T16, 0x4770, BASE + 2, r);
	assert_int_equal(r.pc, BASE + 4);
	assert_int_equal(arm_itstate(r.flags), 0x18);
	/* the last one: ne holds, it runs and ends the block */
	r = sim(T16, 0x4770, BASE + 4, r);
	assert_int_equal(r.pc, 0x20000);
	assert_int_equal(arm_itstate(r.flags), 0);
}

/* Memory for next pcs: the IT test's code at BASE (see the comment). */
static void load_it_code(void)
{
	/* 0: ite eq; 2: moveq r0, #1; 4: movne.w r0, #2; 8: bx lr */
	static const uint8_t code[] = { 0x0c, 0xbf, 0x01, 0x20, 0x4f, 0xf0,
					0x02, 0x00, 0x70, 0x47 };

	memset(code_mem, 0, sizeof(code_mem));
	memcpy(code_mem, code, sizeof(code));
}

static int next_pcs(enum isa isa, uint32_t w, uint64_t addr,
		    const struct arch_gpregs *r, uint64_t pcs[2])
{
	struct arch_insn ai;

	assert_int_equal(decode(isa, w, addr, &ai), 0);
	return arm_arch_ops.insn_next_pcs(&ai, r, &fake, pcs);
}

static void test_next_pcs(void **state)
{
	struct arch_gpregs r = regs_at(A32, BASE), t = regs_at(T16, BASE);
	uint64_t pcs[2];

	(void)state;
	/* a plain instruction: the next one, bit 0 the set */
	assert_int_equal(next_pcs(A32, 0xe0810002, BASE, &r, pcs), 1);
	assert_int_equal(pcs[0], BASE + 4);
	assert_int_equal(next_pcs(T32, 0xeb010002, BASE, &t, pcs), 1);
	assert_int_equal(pcs[0], (BASE + 4) | 1);
	assert_int_equal(next_pcs(T16, 0x2001, BASE, &t, pcs), 1);
	assert_int_equal(pcs[0], (BASE + 2) | 1);
	/* bne: the way it goes, then the other */
	assert_int_equal(next_pcs(A32, 0x1a00000e, BASE, &r, pcs), 2);
	assert_int_equal(pcs[0], BASE + 0x40);
	assert_int_equal(pcs[1], BASE + 4);
	r.flags |= ARM_PSR_Z;
	assert_int_equal(next_pcs(A32, 0x1a00000e, BASE, &r, pcs), 2);
	assert_int_equal(pcs[0], BASE + 4);
	assert_int_equal(pcs[1], BASE + 0x40);
	/* cbz: both */
	t.gpr[0] = 1;
	assert_int_equal(next_pcs(T16, 0xb130, BASE, &t, pcs), 2);
	assert_int_equal(pcs[0], (BASE + 2) | 1);
	assert_int_equal(pcs[1], (BASE + 0x10) | 1);
	/* bx lr to A32, blx .+0x100 (to A32): one */
	t.gpr[ARM_LR] = 0x20000;
	assert_int_equal(next_pcs(T16, 0x4770, BASE, &t, pcs), 1);
	assert_int_equal(pcs[0], 0x20000);
	assert_int_equal(next_pcs(T32, 0xf000e87e, BASE, &t, pcs), 1);
	assert_int_equal(pcs[0], BASE + 0x100);
	/* pop {r4, pc}: the loaded address, Thumb from its bit 0 */
	put32(0x80800, 0x44);
	put32(0x80804, 0x30001);
	assert_int_equal(next_pcs(T16, 0xbd10, BASE, &t, pcs), 1);
	assert_int_equal(pcs[0], 0x30001);
	/* stmdb sp!, {r4, pc} is looked at, not done */
	put32(0x807f8, 0x5a5a5a5a);
	assert_int_equal(next_pcs(A32, 0xe92d8010, BASE, &r, pcs), 1);
	assert_int_equal(get32(0x807f8), 0x5a5a5a5a);
}

static void test_next_pcs_it(void **state)
{
	struct arch_gpregs t = regs_at(T16, BASE);
	uint64_t pcs[2];

	(void)state;
	load_it_code();
	/* ite eq, Z clear: the 'then' (moveq) is skipped */
	assert_int_equal(next_pcs(T16, 0xbf0c, BASE, &t, pcs), 1);
	assert_int_equal(pcs[0], (BASE + 4) | 1);
	t.flags |= ARM_PSR_Z;
	assert_int_equal(next_pcs(T16, 0xbf0c, BASE, &t, pcs), 1);
	assert_int_equal(pcs[0], (BASE + 2) | 1);
	/* at moveq with Z set (it runs, may change the flags): the movne
	 * if they change, else past it */
	t.flags = arm_with_itstate(t.flags, 0x0c);
	assert_int_equal(next_pcs(T16, 0x2001, BASE + 2, &t, pcs), 2);
	assert_int_equal(pcs[0], (BASE + 4) | 1);
	assert_int_equal(pcs[1], (BASE + 8) | 1);
	/* at moveq with Z clear: skipped, movne is next */
	t.flags &= ~(uint64_t)ARM_PSR_Z;
	assert_int_equal(next_pcs(T16, 0x2001, BASE + 2, &t, pcs), 1);
	assert_int_equal(pcs[0], (BASE + 4) | 1);
	/* at movne (last of the block) with Z set: skipped, bx lr next */
	t.flags = arm_with_itstate(t.flags | ARM_PSR_Z, 0x18);
	assert_int_equal(next_pcs(T32, 0xf04f0002, BASE + 4, &t, pcs), 1);
	assert_int_equal(pcs[0], (BASE + 8) | 1);
}

/* Where the IT blocks are comes from the function's start. */
static void test_decode_in_it(void **state)
{
	/* 0: it eq; 2: addeq r0, r0, r1; 4: bx lr; 6: it eq; 8: bxeq lr;
	 * a: mov.w r0, #0 */
	static const uint8_t f[] = { 0x08, 0xbf, 0x40, 0x18, 0x70, 0x47,
				     0x08, 0xbf, 0x70, 0x47, 0x4f, 0xf0,
				     0x00, 0x00 };
	struct arch_insn ai;

	(void)state;
	assert_int_equal(arch_insn_decode_in(&arm_arch_ops, f, sizeof(f),
					     BASE | 1, (BASE + 2) | 1, &ai), 0);
	assert_int_equal(ai.strategy, ARCH_REJECT);
	assert_non_null(strstr(ai.reason, "IT block"));
	/* the same bytes without the context: boosted */
	assert_int_equal(arm_arch_ops.insn_decode(f + 2, 2, (BASE + 2) | 1, &ai), 0);
	assert_int_equal(ai.strategy, ARCH_BOOST);
	/* after the block, and a simulated one inside: fine */
	assert_int_equal(arch_insn_decode_in(&arm_arch_ops, f, sizeof(f),
					     BASE | 1, (BASE + 4) | 1, &ai), 0);
	assert_int_equal(ai.strategy, ARCH_EMULATE);
	assert_int_equal(arch_insn_decode_in(&arm_arch_ops, f, sizeof(f),
					     BASE | 1, (BASE + 8) | 1, &ai), 0);
	assert_int_equal(ai.strategy, ARCH_EMULATE);
	assert_int_equal(arch_insn_decode_in(&arm_arch_ops, f, sizeof(f),
					     BASE | 1, (BASE + 10) | 1, &ai), 0);
	assert_int_equal(ai.strategy, ARCH_BOOST);
	/* the middle of mov.w */
	assert_int_equal(arch_insn_decode_in(&arm_arch_ops, f, sizeof(f),
					     BASE | 1, (BASE + 12) | 1, &ai), -EILSEQ);
	assert_non_null(strstr(ai.reason, "boundary"));
}

/*
 * An exclusive sequence, as libc's abort() has it (Thumb):
 *   +0  e850 2f00  ldrex r2, [r0]       +8  e840 3100  strex r1, r3, [r0]
 *   +4  2a00       cmp r2, #0           +12 2900       cmp r1, #0
 *   +6  d105       bne.n +0x14          +14 d1f7       bne.n +0
 *                                       +16 f3bf 8f5b  dmb ish
 */
static const uint8_t excl_seq[] = {
	0x50, 0xe8, 0x00, 0x2f, 0x00, 0x2a, 0x05, 0xd1, 0x40, 0xe8, 0x00, 0x31,
	0x00, 0x29, 0xf7, 0xd1, 0xbf, 0xf3, 0x5b, 0x8f,
};

static void test_exclusive(void **state)
{
	struct arch_insn ai;
	struct arch_gpregs t = regs_at(T16, BASE);
	uint64_t pcs[2];
	size_t n = sizeof(excl_seq);

	(void)state;
	assert_int_equal(arm_arch_ops.insn_decode(excl_seq, n, BASE | 1, &ai), 0);
	assert_int_equal(ai.strategy, ARCH_REJECT);
	assert_non_null(strstr(ai.reason, "load-exclusive"));
	assert_int_equal(arm_arch_ops.insn_decode(excl_seq + 4, n - 4, (BASE + 4) | 1, &ai), 0);
	assert_int_equal(ai.strategy, ARCH_REJECT);
	assert_non_null(strstr(ai.reason, "between a load-exclusive"));
	assert_int_equal(arm_arch_ops.insn_decode(excl_seq + 6, n - 6, (BASE + 6) | 1, &ai), 0);
	assert_int_equal(ai.strategy, ARCH_REJECT);
	assert_int_equal(arm_arch_ops.insn_decode(excl_seq + 8, n - 8, (BASE + 8) | 1, &ai), 0);
	assert_non_null(strstr(ai.reason, "store-exclusive"));
	/* after the store: free again */
	assert_int_equal(arm_arch_ops.insn_decode(excl_seq + 12, n - 12, (BASE + 12) | 1, &ai), 0);
	assert_int_equal(ai.strategy, ARCH_BOOST);
	/* without the look-ahead bytes the cmp looks free */
	assert_int_equal(arm_arch_ops.insn_decode(excl_seq + 4, 2, (BASE + 4) | 1, &ai), 0);
	assert_int_equal(ai.strategy, ARCH_BOOST);
	/* a step from the ldrex stops after the strex or at the bne's exit */
	memset(code_mem, 0, sizeof(code_mem));
	memcpy(code_mem, excl_seq, n);
	assert_int_equal(arm_arch_ops.insn_decode(excl_seq, n, BASE | 1, &ai), 0);
	assert_int_equal(arm_arch_ops.insn_next_pcs(&ai, &t, &fake, pcs), 2);
	assert_int_equal(pcs[0], (BASE + 12) | 1);
	assert_int_equal(pcs[1], (BASE + 0x14) | 1);
	/* no store within reach: a plain step */
	memset(code_mem + 8, 0, 4);
	assert_int_equal(arm_arch_ops.insn_next_pcs(&ai, &t, &fake, pcs), 1);
	assert_int_equal(pcs[0], (BASE + 4) | 1);
}

static void test_xol(void **state)
{
	uint8_t out[32];
	struct arch_insn ai, back;
	struct arch_xol xol;
	struct arch_gpregs r;
	int n;

	(void)state;
	/* A32 boost: the word, then b A+4 */
	assert_int_equal(decode(A32, 0xe0810002, BASE, &ai), 0);
	n = arm_arch_ops.xol_prepare(&ai, 0x200000, out, sizeof(out), &xol);
	assert_int_equal(n, 8);
	assert_false(xol.step);
	assert_int_equal(out[0] | out[1] << 8 | out[2] << 16 | (uint32_t)out[3] << 24,
			 0xe0810002);
	assert_int_equal(arm_arch_ops.insn_decode(out + 4, 4, 0x200004, &back), 0);
	assert_int_equal(arm_priv(&back)->op, ARM_OP_B);
	assert_int_equal(arm_priv(&back)->target, BASE + 4);
	/* Thumb boost: the instruction, then b.w back to Thumb */
	assert_int_equal(decode(T32, 0xeb010002, BASE + 2, &ai), 0);
	n = arm_arch_ops.xol_prepare(&ai, 0x200000, out, sizeof(out), &xol);
	assert_int_equal(n, 8);
	assert_int_equal(arm_arch_ops.insn_decode(out + 4, 4, 0x200005, &back), 0);
	assert_string_equal(arm_priv(&back)->name, "b.w");
	assert_int_equal(arm_priv(&back)->target, (BASE + 6) | 1);
	/* Thumb, 2 bytes, slot beyond B.W's reach: nop to align, then
	 * ldr.w pc, [pc, #0] and the address with bit 0 */
	assert_int_equal(decode(T16, 0x2001, BASE, &ai), 0);
	n = arm_arch_ops.xol_prepare(&ai, 0x4000000, out, sizeof(out), &xol);
	assert_int_equal(n, 12);
	assert_int_equal(out[2] | out[3] << 8, 0xbf00);
	assert_int_equal(out[4] | out[5] << 8, 0xf8df);
	assert_int_equal(out[6] | out[7] << 8, 0xf000);
	assert_int_equal(out[8] | out[9] << 8 | out[10] << 16 | (uint32_t)out[11] << 24,
			 (BASE + 2) | 1);
	/* emulate: vldr d0, [pc, #8] with the pc renamed to r1 (r0 is Vd's
	 * field, r2 the offset's), then the A32 breakpoint */
	assert_int_equal(decode(A32, 0xed9f0b02, BASE, &ai), 0);
	n = arm_arch_ops.xol_prepare(&ai, 0x200000, out, sizeof(out), &xol);
	assert_int_equal(n, 8);
	assert_true(xol.step);
	assert_int_equal(xol.scratch_gpr, 1);
	assert_int_equal(xol.scratch_value, BASE + 8);
	assert_int_equal(xol.insn_len, 4);
	assert_int_equal(out[0] | out[1] << 8 | out[2] << 16 | (uint32_t)out[3] << 24,
			 0xed910b02);
	assert_int_equal(out[4] | out[5] << 8 | out[6] << 16 | (uint32_t)out[7] << 24,
			 ARM_BKPT_A32);
	/* ... and the fixup */
	r = regs_at(A32, 0x200004);
	xol.scratch_saved = 0x1111;
	assert_int_equal(arm_arch_ops.xol_fixup(&ai, &xol, &r), 0);
	assert_int_equal(r.pc, BASE + 4);
	assert_int_equal(r.gpr[1], 0x1111);
	r.pc = 0x200000;
	assert_int_equal(arm_arch_ops.xol_fixup(&ai, &xol, &r), -EINVAL);
	/* Thumb vldr at BASE + 2: the scratch holds Align(pc, 4) */
	assert_int_equal(decode(T32, 0xed9f0b02, BASE + 2, &ai), 0);
	n = arm_arch_ops.xol_prepare(&ai, 0x200000, out, sizeof(out), &xol);
	assert_int_equal(n, 6);
	assert_int_equal(xol.scratch_value, BASE + 4);
	assert_int_equal(out[4] | out[5] << 8, ARM_BKPT_T16);
	/* str pc, [sp, #-4]!: the stored register renamed */
	assert_int_equal(decode(A32, 0xe52df004, BASE, &ai), 0);
	n = arm_arch_ops.xol_prepare(&ai, 0x200000, out, sizeof(out), &xol);
	assert_int_equal(n, 8);
	assert_int_equal(out[0] | out[1] << 8 | out[2] << 16 | (uint32_t)out[3] << 24,
			 0xe52d0004u | (uint32_t)xol.scratch_gpr << 12);
	/* r0 is spared: the offset's low nibble reads as a register field */
	assert_int_equal(xol.scratch_gpr, 1);
	/* simulated and rejected ones have no slot */
	assert_int_equal(decode(A32, 0xea00003e, BASE, &ai), 0);
	assert_int_equal(arm_arch_ops.xol_prepare(&ai, 0x200000, out, sizeof(out),
						  &xol), -ENOSYS);
	assert_int_equal(decode(A32, 0xe0810002, BASE, &ai), 0);
	assert_int_equal(arm_arch_ops.xol_prepare(&ai, 0x200000, out, 4, &xol),
			 -ENOSPC);
}

static void test_emit(void **state)
{
	uint8_t out[16];
	struct arch_insn back;

	(void)state;
	assert_int_equal(arm_arch_ops.emit_jump(out, sizeof(out), BASE, BASE + 0x1000), 4);
	assert_int_equal(arm_arch_ops.insn_decode(out, 4, BASE, &back), 0);
	assert_int_equal(arm_priv(&back)->target, BASE + 0x1000);
	assert_int_equal(arm_arch_ops.emit_jump(out, sizeof(out), BASE | 1,
						(BASE - 0x800000) | 1), 4);
	assert_int_equal(arm_arch_ops.insn_decode(out, 4, BASE | 1, &back), 0);
	assert_int_equal(arm_priv(&back)->target, (BASE - 0x800000) | 1);
	assert_int_equal(arm_arch_ops.emit_jump(out, sizeof(out), BASE,
						BASE + 0x4000000), -ERANGE);
	assert_int_equal(arm_arch_ops.emit_jump(out, sizeof(out), BASE | 1, BASE),
			 -ERANGE);
	assert_int_equal(arm_arch_ops.emit_jump_abs(out, sizeof(out), 0x12345), 8);
	assert_int_equal(out[0] | out[1] << 8 | out[2] << 16 | (uint32_t)out[3] << 24,
			 0xe51ff004u);
	assert_int_equal(out[4] | out[5] << 8 | out[6] << 16 | (uint32_t)out[7] << 24,
			 0x12345);
}

static uint32_t w32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* Whether the A32 code of `n` bytes holds `w` (at a word), and where. */
static long find32(const uint8_t *code, size_t n, uint32_t w)
{
	for (size_t i = 0; i + 4 <= n; i += 4)
		if (w32(code + i) == w)
			return (long)i;
	return -1;
}

/*
 * The pad's save and restore: the frame of 17 64-bit words below sp
 * (str r<i>, [sp, #8i], the high halves zero), the probe's address by
 * movw/movt, cpsr by mrs (with T for a Thumb site, whose pad starts with
 * bx pc; nop), r4 = r0 = frame; the restore from r4, every register but
 * sp and pc.  The bytes run under qemu-arm in arm-pad-exec.sh.
 */
static void test_pad_save_restore(void **state)
{
	uint8_t out[512];
	int n;

	(void)state;
	n = arm_arch_ops.emit_save_regs(out, sizeof(out), 0x12345678);
	assert_true(n > 0);
	assert_int_equal(w32(out), 0xe24dd088u);		/* sub sp, sp, #136 */
	for (unsigned int r = 0; r <= 12; r++)
		assert_true(find32(out, (size_t)n, 0xe58d0000u | r << 12 | r * 8) > 0);
	for (unsigned int i = 0; i < ARM_PAD_FRAME_WORDS; i++)
		assert_true(find32(out, (size_t)n, 0xe58d0000u | (i * 8 + 4)) > 0);
	assert_true(find32(out, (size_t)n, 0xe3050678u) > 0);	/* movw r0, #0x5678 */
	assert_true(find32(out, (size_t)n, 0xe3410234u) > 0);	/* movt r0, #0x1234 */
	assert_true(find32(out, (size_t)n, 0xe58d0078u) > 0);	/* str r0, [sp, #120] */
	assert_true(find32(out, (size_t)n, 0xe10f0000u) > 0);	/* mrs r0, apsr */
	assert_int_equal(find32(out, (size_t)n, 0xe3800020u), -1);	/* no T */
	assert_int_equal(w32(out + n - 8), 0xe1a0400du);	/* mov r4, sp */
	assert_int_equal(w32(out + n - 4), 0xe1a0000du);	/* mov r0, sp */

	n = arm_arch_ops.emit_save_regs(out, sizeof(out), 0x12345679);
	assert_true(n > 0);
	assert_int_equal(w32(out), 0xbf004778u);		/* bx pc; nop */
	assert_int_equal(w32(out + 4), 0xe24dd088u);
	assert_true(find32(out, (size_t)n, 0xe3050678u) > 0);	/* bit 0 clear */
	assert_true(find32(out, (size_t)n, 0xe3800020u) > 0);	/* orr r0, r0, #T */
	assert_int_equal(arm_arch_ops.emit_save_regs(out, 16, 0x1000), -ENOSPC);

	n = arm_arch_ops.emit_restore_regs(out, sizeof(out));
	assert_true(n > 0);
	assert_int_equal(w32(out), 0xe1a0d004u);		/* mov sp, r4 */
	assert_int_equal(w32(out + 4), 0xe59d0080u);		/* ldr r0, [sp, #128] */
	assert_int_equal(w32(out + 8), 0xe12cf000u);		/* msr apsr_nzcvqg, r0 */
	for (unsigned int r = 0; r <= 12; r++)
		assert_true(find32(out, (size_t)n, 0xe59d0000u | r << 12 | r * 8) > 0);
	assert_int_equal(find32(out, (size_t)n, 0xe59dd068u), -1);	/* never sp */
	assert_true(find32(out, (size_t)n, 0xe59de070u) > 0);	/* ldr lr, [sp, #112] */
	assert_int_equal(w32(out + n - 4), 0xe28dd088u);	/* add sp, sp, #136 */
}

/*
 * The collector: one ldrex/strex claim of the head, dmb around the
 * sequence word, the record published by a str of p + 1, and the branch
 * to the restore left at *done for patch_branch; the hand-off's claim of
 * an entry, its udf #16 at *trap_off and the wait for PAD_DONE.  Rings
 * and tables the code cannot address are refused.
 */
static void test_pad_collect_handoff(void **state)
{
	const struct arch_pad_layout *l = arm_arch_ops.pad_layout;
	struct arch_pad_ring r = {
		.ring = 0x40000, .off_records = 4096, .record_shift = 11,
		.nrecords = 4096, .off_seq = l->off_seq, .off_frame = l->off_frame,
		.off_bases = l->off_bases, .time_tid = true, .off_tid = l->off_tid,
		.off_time = l->off_time, .image = true,
	};
	struct arch_pad_handoff h = {
		.table = 0x80000, .entry_shift = 10, .nentries = 256,
		.off_owner = l->off_owner, .off_ready = l->off_ready,
		.off_bases = l->off_bases, .off_frame = l->off_frame,
	};
	uint8_t out[1024];
	size_t done = 0, trap = 0;
	int n;

	(void)state;
	n = arm_arch_ops.emit_pad_collect(out, sizeof(out), &r, &done);
	assert_true(n > 0);
	assert_true(find32(out, (size_t)n, 0xe1916f9fu) > 0);	/* ldrex r6, [r1] */
	assert_true(find32(out, (size_t)n, 0xe1818f97u) > 0);	/* strex r8, r7, [r1] */
	assert_true(find32(out, (size_t)n, 0xf57ff05bu) > 0);	/* dmb ish */
	assert_true(find32(out, (size_t)n, 0xe5837190u) > 0);	/* str r7, [r3, #400] */
	assert_true(find32(out, (size_t)n, 0xe3007193u) > 0);	/* movw r7, #403 */
	assert_true(find32(out, (size_t)n, 0xec830b20u) > 0);	/* vstmia r3, {d0-d15} */
	assert_int_equal(w32(out + done) >> 24, 0xeau);		/* b */
	assert_int_equal(arm_arch_ops.patch_branch(out, done, done + 0x100), 0);
	assert_int_equal(w32(out + done), 0xea00003eu);		/* b .+0x100 */
	assert_int_equal(arm_arch_ops.patch_branch(out, done, done + 2), -ERANGE);
	r.image = false;
	r.time_tid = false;
	assert_true(arm_arch_ops.emit_pad_collect(out, sizeof(out), &r, &done) < n);
	r.nrecords = 3000;
	assert_int_equal(arm_arch_ops.emit_pad_collect(out, sizeof(out), &r, &done), -EINVAL);
	r.nrecords = 4096;
	r.off_seq = l->off_frame + 8;		/* inside the frame */
	assert_int_equal(arm_arch_ops.emit_pad_collect(out, sizeof(out), &r, &done), -EINVAL);

	n = arm_arch_ops.emit_pad_handoff(out, sizeof(out), &h, &trap);
	assert_true(n > 0);
	assert_int_equal(w32(out + trap), ARM_BKPT_A32);
	assert_true(find32(out, (size_t)n, 0xe19b7f9fu) > 0);	/* ldrex r7, [r11] */
	assert_true(find32(out, (size_t)n, 0xe18b7f96u) > 0);	/* strex r7, r6, [r11] */
	assert_int_equal(w32(out + trap + 12), 0xe3570002u);	/* cmp r7, #DONE */
	assert_int_equal(w32(out + trap + 16), 0x1afffffau);	/* bne trap */
	assert_int_equal(arm_arch_ops.pad_entry_regnum, 5);
	assert_int_equal(arm_arch_ops.pad_frame_regnum, 4);
	h.table = 0x80010;
	assert_int_equal(arm_arch_ops.emit_pad_handoff(out, sizeof(out), &h, &trap), -EINVAL);
	h.table = 0x80000;
	assert_int_equal(arm_arch_ops.emit_pad_handoff(out, 64, &h, &trap), -ENOSPC);
}

/* How many times the A32 code of `n` bytes holds `w`. */
static unsigned int count32(const uint8_t *code, size_t n, uint32_t w)
{
	unsigned int k = 0;

	for (size_t i = 0; i + 4 <= n; i += 4)
		k += w32(code + i) == w;
	return k;
}

/* The target (offset in the code) of the A32 B<c> at offset `at`. */
static long b_target(const uint8_t *code, size_t at)
{
	int32_t imm = (int32_t)(w32(code + at) << 8) >> 8;

	return (long)at + 8 + 4l * imm;
}

/*
 * The collector with the in-process collector's calls: ipa_site_wants
 * first (site in r0, the frame r4 in r1, 17 words in r2, sp 16-aligned
 * below the frame, blx r12 to its address with the Thumb bit kept), a
 * false answer to the restore's branch; ipa_collect_site on the
 * record's frame and blocks (the fifth argument at [sp]) before the
 * publish, and IPA_TRAP on to the hand-off after the code.  Without
 * ipa_wants one call only; blocks that overlap the record's other parts
 * or addresses beyond 32 bits are refused.
 */
static void test_pad_collect_ipa(void **state)
{
	const struct arch_pad_layout *l = arm_arch_ops.pad_layout;
	struct arch_pad_ring r = {
		.ring = 0x40000, .off_records = 4096, .record_shift = 11,
		.nrecords = 4096, .off_seq = l->off_seq, .off_frame = l->off_frame,
		.off_bases = l->off_bases, .time_tid = true, .off_tid = l->off_tid,
		.off_time = l->off_time, .image = true,
		.ipa_call = 0x21001, .ipa_site = 0x30040, .ipa_wants = 0x20801,
		.off_blocks = 1024, .blocks_size = 1024,
	};
	static const uint32_t wants[] = {
		0xe3000040u,	/* movw r0, #0x40 */
		0xe3400003u,	/* movt r0, #3: the site */
		0xe1a01004u,	/* mov r1, r4: the frame */
		0xe3a02011u,	/* mov r2, #17 */
		0xe3c4c00fu,	/* bic r12, r4, #15 */
		0xe1a0d00cu,	/* mov sp, r12 */
		0xe300c801u,	/* movw r12, #0x801 */
		0xe340c002u,	/* movt r12, #2: ipa_site_wants, Thumb */
		0xe12fff3cu,	/* blx r12 */
		0xe3500000u,	/* cmp r0, #0 */
	};
	uint8_t out[1024];
	size_t done = 0;
	long at;
	int n;

	(void)state;
	n = arm_arch_ops.emit_pad_collect(out, sizeof(out), &r, &done);
	assert_true(n > 0);
	for (size_t i = 0; i < sizeof(wants) / sizeof(wants[0]); i++)
		assert_int_equal(w32(out + 4 * i), wants[i]);
	assert_int_equal(w32(out + 40) >> 24, 0x0au);		/* beq */
	assert_int_equal(b_target(out, 40), (long)done);	/* to b done */
	assert_int_equal(w32(out + done) >> 24, 0xeau);
	assert_int_equal(count32(out, (size_t)n, 0xe12fff3cu), 2);
	/* ipa_collect_site's arguments, the record in r3 */
	at = find32(out, (size_t)n, 0xe1a0a003u);		/* mov r10, r3 */
	assert_true(at > 0);
	assert_int_equal(w32(out + at + 4), 0xe1a0b002u);	/* mov r11, r2 */
	assert_int_equal(w32(out + at + 8), 0xe3000040u);	/* movw r0, #0x40 */
	assert_int_equal(w32(out + at + 12), 0xe3400003u);	/* movt r0, #3 */
	assert_int_equal(w32(out + at + 16), 0xe2831f42u);	/* add r1, r3, #264 */
	assert_int_equal(w32(out + at + 20), 0xe3a02011u);	/* mov r2, #17 */
	assert_int_equal(w32(out + at + 24), 0xe2833b01u);	/* add r3, r3, #1024 */
	assert_int_equal(w32(out + at + 28), 0xe3c4c00fu);	/* bic r12, r4, #15 */
	assert_int_equal(w32(out + at + 32), 0xe24cd010u);	/* sub sp, r12, #16 */
	assert_int_equal(w32(out + at + 36), 0xe300c400u);	/* movw r12, #1024 */
	assert_int_equal(w32(out + at + 40), 0xe58dc000u);	/* str r12, [sp] */
	assert_int_equal(w32(out + at + 44), 0xe301c001u);	/* movw r12, #0x1001 */
	assert_int_equal(w32(out + at + 48), 0xe340c002u);	/* movt r12, #2 */
	assert_int_equal(w32(out + at + 52), 0xe12fff3cu);	/* blx r12 */
	assert_int_equal(w32(out + at + 56), 0xe1a0300au);	/* mov r3, r10 */
	assert_int_equal(w32(out + at + 60), 0xe1a0200bu);	/* mov r2, r11 */
	/* the publish, then the verdict: IPA_TRAP to the end (the hand-off) */
	assert_int_equal(w32(out + done - 12), 0xe5837190u);	/* str r7, [r3, #400] */
	assert_int_equal(w32(out + done - 8), 0xe3500003u);	/* cmp r0, #3 */
	assert_int_equal(w32(out + done - 4) >> 24, 0x0au);	/* beq */
	assert_int_equal(b_target(out, done - 4), (long)n);

	r.ipa_wants = 0;
	n = arm_arch_ops.emit_pad_collect(out, sizeof(out), &r, &done);
	assert_true(n > 0);
	assert_int_equal(count32(out, (size_t)n, 0xe12fff3cu), 1);
	assert_int_equal(w32(out), 0xe3000000u | 1 << 12);	/* movw r1, #ring */
	r.off_blocks = l->off_frame;				/* over the frame */
	assert_int_equal(arm_arch_ops.emit_pad_collect(out, sizeof(out), &r, &done), -EINVAL);
	r.off_blocks = 1024;
	r.blocks_size = 2048;					/* past the record */
	assert_int_equal(arm_arch_ops.emit_pad_collect(out, sizeof(out), &r, &done), -EINVAL);
	r.blocks_size = 1024;
	r.ipa_call = 0x100000001ull;
	assert_int_equal(arm_arch_ops.emit_pad_collect(out, sizeof(out), &r, &done), -EINVAL);
}

/*
 * The window: an A32 instruction of the boost class copied with a B
 * back; a bl or blne as loads of lr and the pc; one a slot steps
 * (ldr r1, [pc, r2]) refused; in Thumb the
 * switch from A32 (ldr pc, =win+8|1), then a 32-bit instruction, or a
 * 16-bit one and the next (both whole, no branch into the second),
 * and b.w back to the end, whose length says the jump's window; a
 * branch ends a window, never starts one of two.
 */
static void test_pad_window(void **state)
{
	uint8_t out[64];
	size_t inlen = 0;
	struct arch_insn back;
	int n;
	/* A32: add r0, r0, r1; bl .; ldr r1, [pc, r2] */
	static const uint8_t a32[] = { 0x01, 0x00, 0x80, 0xe0, 0xfe, 0xff, 0xff, 0xeb,
				       0x02, 0x10, 0x9f, 0xe7 };
	/* Thumb: add r0, r1; mov r2, r3; add.w r4, r5, r6, lsl #3; bx lr;
	 * push {r4, lr}; cbz r0, <offset 16>; nop */
	static const uint8_t t[] = { 0x08, 0x44, 0x1a, 0x46, 0x05, 0xeb, 0xc6, 0x04,
				     0x70, 0x47, 0x10, 0xb5, 0x00, 0xb1, 0x00, 0xbf };
	(void)state;

	n = arm_arch_ops.relocate_window(a32, sizeof(a32), BASE, BASE, 4, BASE + 0x1000,
					 out, sizeof(out), &inlen);
	assert_int_equal(n, 8);
	assert_int_equal(inlen, 4);
	assert_int_equal(w32(out), 0xe0800001u);
	assert_int_equal(arm_arch_ops.insn_decode(out + 4, 4, BASE + 0x1004, &back), 0);
	assert_int_equal(arm_priv(&back)->target, BASE + 4);
	/* bl: lr and the pc from literals */
	n = arm_arch_ops.relocate_window(a32, sizeof(a32), BASE, BASE + 4, 4,
					 BASE + 0x1000, out, sizeof(out), &inlen);
	assert_int_equal(n, 16);
	assert_int_equal(w32(out), 0xe59fe000u);		/* ldr lr, [pc] */
	assert_int_equal(w32(out + 4), 0xe59ff000u);		/* ldr pc, [pc] */
	assert_int_equal(w32(out + 8), BASE + 8);
	assert_int_equal(w32(out + 12), BASE + 4);
	/* blne: the same loads conditional, then the branch back */
	static const uint8_t blne[] = { 0x3e, 0x00, 0x00, 0x1b };
	n = arm_arch_ops.relocate_window(blne, 4, BASE, BASE, 4, BASE + 0x1000, out,
					 sizeof(out), &inlen);
	assert_int_equal(n, 20);
	assert_int_equal(w32(out), 0x159fe004u);		/* ldrne lr, [pc, #4] */
	assert_int_equal(w32(out + 4), 0x159ff004u);		/* ldrne pc, [pc, #4] */
	assert_int_equal(arm_arch_ops.insn_decode(out + 8, 4, BASE + 0x1008, &back), 0);
	assert_int_equal(arm_priv(&back)->target, BASE + 4);
	assert_int_equal(w32(out + 12), BASE + 4);
	assert_int_equal(w32(out + 16), BASE + 0x100);
	/* Thumb push {r4, lr}; bl <+0x100>: a window of 6 */
	static const uint8_t tbl[] = { 0x10, 0xb5, 0x00, 0xf0, 0x7d, 0xf8 };
	n = arm_arch_ops.relocate_window(tbl, sizeof(tbl), BASE | 1, BASE | 1, 4,
					 BASE + 0x1000, out, sizeof(out), &inlen);
	assert_int_equal(n, 28);
	assert_int_equal(inlen, 6);
	assert_int_equal(out[8] | out[9] << 8, 0xb510);
	assert_int_equal(out[10] | out[11] << 8, 0xf8df);	/* ldr.w lr, [pc, #8] */
	assert_int_equal(out[12] | out[13] << 8, 0xe008);
	assert_int_equal(out[14] | out[15] << 8, 0xf8df);	/* ldr.w pc, [pc, #8] */
	assert_int_equal(out[16] | out[17] << 8, 0xf008);
	assert_int_equal(w32(out + 20), (BASE + 6) | 1);
	assert_int_equal(w32(out + 24), (BASE + 0x100) | 1);
	/* nop (left out); ldr r7, [pc, #112]: ldr.w r7, =lit; ldr.w r7, [r7] */
	static const uint8_t tlit[] = { 0x00, 0xbf, 0x1c, 0x4f };
	n = arm_arch_ops.relocate_window(tlit, sizeof(tlit), BASE | 1, BASE | 1, 4,
					 BASE + 0x1000, out, sizeof(out), &inlen);
	assert_int_equal(inlen, 4);
	assert_int_equal(n, 8 + 8 + 4 + 4);
	assert_int_equal(out[8] | out[9] << 8, 0xf8df);		/* ldr.w r7, [pc, #8] */
	assert_int_equal(out[10] | out[11] << 8, 0x7008);
	assert_int_equal(out[12] | out[13] << 8, 0xf8d7);	/* ldr.w r7, [r7] */
	assert_int_equal(out[14] | out[15] << 8, 0x7000);
	assert_int_equal(w32(out + 20), ((BASE + 2 + 4) & ~3u) + 112);
	/* ldr pc, [pc, #4] stays out */
	static const uint8_t ldrpc[] = { 0x04, 0xf0, 0x9f, 0xe5 };
	assert_int_equal(arm_arch_ops.relocate_window(ldrpc, 4, BASE, BASE, 4, BASE + 0x1000,
						      out, sizeof(out), &inlen), -EILSEQ);
	/* a B.W first would leave the instruction after it in the window */
	static const uint8_t tb[] = { 0x00, 0xe0, 0x00, 0xbf };	/* b .+4; nop */
	assert_int_equal(arm_arch_ops.relocate_window(tb, sizeof(tb), BASE | 1, BASE | 1, 4,
						      BASE + 0x1000, out, sizeof(out), &inlen),
			 -EILSEQ);
	assert_int_equal(arm_arch_ops.relocate_window(a32, sizeof(a32), BASE, BASE + 8, 4,
						      BASE + 0x1000, out, sizeof(out), &inlen),
			 -EILSEQ);
	assert_int_equal(arm_arch_ops.relocate_window(a32, sizeof(a32), BASE, BASE + 2, 4,
						      BASE + 0x1000, out, sizeof(out), &inlen),
			 -ERANGE);

	/* Two 16-bit instructions */
	n = arm_arch_ops.relocate_window(t, sizeof(t), BASE | 1, BASE | 1, 4, BASE + 0x1000,
					 out, sizeof(out), &inlen);
	assert_int_equal(n, 16);
	assert_int_equal(inlen, 4);
	assert_int_equal(w32(out), 0xe51ff004u);
	assert_int_equal(w32(out + 4), (BASE + 0x1008) | 1);
	assert_int_equal(w32(out + 8), 0x461a4408u);
	assert_int_equal(arm_arch_ops.insn_decode(out + 12, 4, (BASE + 0x100c) | 1, &back), 0);
	assert_int_equal(arm_priv(&back)->target, (BASE + 4) | 1);
	/* mov r2, r3 and the 32-bit add.w after it: a window of 6 */
	n = arm_arch_ops.relocate_window(t, sizeof(t), BASE | 1, (BASE + 2) | 1, 4,
					 BASE + 0x1000, out, sizeof(out), &inlen);
	assert_int_equal(n, 8 + 6 + 4);
	assert_int_equal(inlen, 6);
	/* add.w alone */
	n = arm_arch_ops.relocate_window(t, sizeof(t), BASE | 1, (BASE + 4) | 1, 4,
					 BASE + 0x1000, out, sizeof(out), &inlen);
	assert_int_equal(inlen, 4);
	assert_int_equal(arm_arch_ops.insn_decode(out + 12, 4, (BASE + 0x100c) | 1, &back), 0);
	assert_int_equal(arm_priv(&back)->target, (BASE + 8) | 1);
	/* bx lr is simulated: not in a pad */
	assert_int_equal(arm_arch_ops.relocate_window(t, sizeof(t), BASE | 1, (BASE + 8) | 1,
						      4, BASE + 0x1000, out, sizeof(out),
						      &inlen), -EILSEQ);
	/* push {r4, lr}; cbz r0 ... : the cbz is simulated */
	assert_int_equal(arm_arch_ops.relocate_window(t, sizeof(t), BASE | 1, (BASE + 10) | 1,
						      4, BASE + 0x1000, out, sizeof(out),
						      &inlen), -EILSEQ);
	/* a window that starts with the cbz */
	assert_int_equal(arm_arch_ops.relocate_window(t + 12, 4, (BASE + 12) | 1,
						      (BASE + 12) | 1, 4, BASE + 0x1000,
						      out, sizeof(out), &inlen), -EILSEQ);
	/* add r0, r1; mov r2, r3; b <the mov>: a branch into the window */
	static const uint8_t t2[] = { 0x08, 0x44, 0x1a, 0x46, 0xfd, 0xe7 };
	assert_int_equal(arm_arch_ops.relocate_window(t2, sizeof(t2), BASE | 1, BASE | 1, 4,
						      BASE + 0x1000, out, sizeof(out), &inlen),
			 -EXDEV);
	/* the window's code 4-aligned; the function ends first */
	assert_int_equal(arm_arch_ops.relocate_window(t, sizeof(t), BASE | 1, BASE | 1, 4,
						      BASE + 0x1002, out, sizeof(out), &inlen),
			 -EINVAL);
	assert_int_equal(arm_arch_ops.relocate_window(t, 2, BASE | 1, BASE | 1, 4,
						      BASE + 0x1000, out, sizeof(out), &inlen),
			 -ERANGE);
	assert_int_equal(arm_arch_ops.pad_window_isa_switch, 8);
}

/*
 * Far sites: the literal load into the pc at the site (A32 8 bytes,
 * Thumb 8 at 0 mod 4, 10 at 2 mod 4 with the literal 4-aligned after a
 * udf), decoded back: the load's literal address holds the pad's.
 */
static void test_emit_far(void **state)
{
	uint8_t out[16];
	struct arch_insn back;
	const struct arm_insn *in;
	const uint32_t pad = 0x7f001000u;

	(void)state;
	assert_int_equal(arm_arch_ops.emit_jump_far(out, sizeof(out), BASE, pad), 8);
	assert_int_equal(w32(out), 0xe51ff004u);		/* ldr pc, [pc, #-4] */
	assert_int_equal(arm_arch_ops.insn_decode(out, 8, BASE, &back), 0);
	in = arm_priv(&back);
	assert_int_equal(in->op, ARM_OP_LDR_LIT);
	assert_int_equal(in->rt, 15);
	assert_int_equal(in->target, BASE + 4);
	assert_int_equal(w32(out + 4), pad);
	/* Thumb at 0 mod 4: ldr.w pc, [pc, #0]; the pad's Thumb entry */
	assert_int_equal(arm_arch_ops.emit_jump_far(out, sizeof(out), BASE | 1, pad | 1), 8);
	assert_int_equal(arm_arch_ops.insn_decode(out, 8, BASE | 1, &back), 0);
	in = arm_priv(&back);
	assert_int_equal(in->op, ARM_OP_LDR_LIT);
	assert_int_equal(in->rt, 15);
	assert_int_equal(in->target, BASE + 4);
	assert_int_equal(w32(out + 4), pad | 1);
	/* Thumb at 2 mod 4: ldr.w pc, [pc, #4]; udf #1; the word at A+6 */
	assert_int_equal(arm_arch_ops.emit_jump_far(out, sizeof(out), (BASE + 2) | 1,
						    pad | 1), 10);
	assert_int_equal(arm_arch_ops.insn_decode(out, 10, (BASE + 2) | 1, &back), 0);
	in = arm_priv(&back);
	assert_int_equal(in->op, ARM_OP_LDR_LIT);
	assert_int_equal(in->rt, 15);
	assert_int_equal(in->target, BASE + 8);
	assert_int_equal(in->target & 3, 0);
	assert_int_equal(out[4] | out[5] << 8, ARM_BKPT_T16);
	assert_int_equal(w32(out + 6), pad | 1);
	/* an A32 site off a word; no room */
	assert_int_equal(arm_arch_ops.emit_jump_far(out, sizeof(out), BASE + 2, pad), -EINVAL);
	assert_int_equal(arm_arch_ops.emit_jump_far(out, 9, (BASE + 2) | 1, pad), -ENOSPC);
}

/*
 * Far windows: two A32 instructions, up to five Thumb ones, the jump
 * back a literal load when the pad is beyond B / B.W; a branch into the
 * window, or a table branch in the function, refuses it; a branch must
 * be the window's last instruction.
 */
static void test_pad_window_far(void **state)
{
	uint8_t out[128];
	size_t inlen = 0;
	struct arch_insn back;
	const uint64_t far = BASE + 0x4000000;		/* 64 MiB: beyond B */
	int n;
	/* add r0, r0, r1; mov r2, r3; bx lr */
	static const uint8_t a32[] = { 0x01, 0x00, 0x80, 0xe0, 0x03, 0x20, 0xa0, 0xe1,
				       0x1e, 0xff, 0x2f, 0xe1 };
	/* add r0, r0, r1; mov r2, r3; b <the mov> */
	static const uint8_t a32b[] = { 0x01, 0x00, 0x80, 0xe0, 0x03, 0x20, 0xa0, 0xe1,
					0xfd, 0xff, 0xff, 0xea };
	/* add r0, r0, r1; bl BASE+0x100; ldr r1, [pc, r2] */
	static const uint8_t a32bl[] = { 0x01, 0x00, 0x80, 0xe0, 0x3d, 0x00, 0x00, 0xeb,
					 0x02, 0x10, 0x9f, 0xe7 };
	/* adds r0, #1; mov r2, r3; add r0, r1; nop; add.w r4, r5, r6, lsl #3;
	 * bx lr */
	static const uint8_t t[] = { 0x01, 0x30, 0x1a, 0x46, 0x08, 0x44, 0x00, 0xbf,
				     0x05, 0xeb, 0xc6, 0x04, 0x70, 0x47 };
	/* add r0, r1; mov r2, r3; tbb [pc, r0] */
	static const uint8_t ttbb[] = { 0x08, 0x44, 0x1a, 0x46, 0xdf, 0xe8, 0x00, 0xf0 };
	(void)state;

	n = arm_arch_ops.relocate_window(a32, sizeof(a32), BASE, BASE, 8, far, out,
					 sizeof(out), &inlen);
	assert_int_equal(inlen, 8);
	assert_int_equal(n, 16);
	assert_int_equal(w32(out), 0xe0800001u);
	assert_int_equal(w32(out + 4), 0xe1a02003u);
	assert_int_equal(w32(out + 8), 0xe51ff004u);		/* ldr pc, =BASE+8 */
	assert_int_equal(w32(out + 12), BASE + 8);
	/* near the pad, the jump back is a B */
	n = arm_arch_ops.relocate_window(a32, sizeof(a32), BASE, BASE, 8, BASE + 0x1000,
					 out, sizeof(out), &inlen);
	assert_int_equal(n, 12);
	assert_int_equal(arm_arch_ops.insn_decode(out + 8, 4, BASE + 0x1008, &back), 0);
	assert_int_equal(arm_priv(&back)->target, BASE + 8);
	/* the second instruction is a branch's target */
	assert_int_equal(arm_arch_ops.relocate_window(a32b, sizeof(a32b), BASE, BASE, 8, far,
						      out, sizeof(out), &inlen), -EXDEV);
	/* ... which a near window (the first alone) does not mind */
	assert_int_equal(arm_arch_ops.relocate_window(a32b, sizeof(a32b), BASE, BASE, 4, far,
						      out, sizeof(out), &inlen), 12);
	/* add; bl: the bl last, lr and the pc from literals */
	n = arm_arch_ops.relocate_window(a32bl, sizeof(a32bl), BASE, BASE, 8, far, out,
					 sizeof(out), &inlen);
	assert_int_equal(inlen, 8);
	assert_int_equal(n, 20);
	assert_int_equal(w32(out), 0xe0800001u);
	assert_int_equal(w32(out + 4), 0xe59fe000u);		/* ldr lr, [pc] */
	assert_int_equal(w32(out + 8), 0xe59ff000u);		/* ldr pc, [pc] */
	assert_int_equal(w32(out + 12), BASE + 8);		/* the return */
	assert_int_equal(w32(out + 16), BASE + 0x100);		/* the bl's target */
	/* bl first: the instruction after it would not run */
	assert_int_equal(arm_arch_ops.relocate_window(a32bl, sizeof(a32bl), BASE, BASE + 4, 8,
						      far, out, sizeof(out), &inlen), -EILSEQ);
	/* the function ends first; an A32 length off a word */
	assert_int_equal(arm_arch_ops.relocate_window(a32, 4, BASE, BASE, 8, far, out,
						      sizeof(out), &inlen), -ERANGE);
	assert_int_equal(arm_arch_ops.relocate_window(a32, sizeof(a32), BASE, BASE, 10, far,
						      out, sizeof(out), &inlen), -ERANGE);

	/* Thumb at 0 mod 4: adds; mov; add; nop (left out) */
	n = arm_arch_ops.relocate_window(t, sizeof(t), BASE | 1, BASE | 1, 8, far, out,
					 sizeof(out), &inlen);
	assert_int_equal(inlen, 8);
	assert_int_equal(w32(out), 0xe51ff004u);		/* the switch */
	assert_int_equal(w32(out + 4), (uint32_t)(far + 8) | 1);
	assert_int_equal(w32(out + 8), 0x461a3001u);
	assert_int_equal(out[12] | out[13] << 8, 0x4408);
	assert_int_equal(out[14] | out[15] << 8, 0xbf00);	/* to the literal's word */
	assert_int_equal(out[16] | out[17] << 8, 0xf8df);	/* ldr.w pc, [pc, #0] */
	assert_int_equal(out[18] | out[19] << 8, 0xf000);
	assert_int_equal(w32(out + 20), (BASE + 8) | 1);
	assert_int_equal(n, 24);
	/* 10 bytes from 0 mod 4: the add.w reaches 12 */
	n = arm_arch_ops.relocate_window(t, sizeof(t), BASE | 1, BASE | 1, 10, far, out,
					 sizeof(out), &inlen);
	assert_int_equal(inlen, 12);
	assert_int_equal(out[14] | out[15] << 8, 0xeb05);
	assert_int_equal(out[16] | out[17] << 8, 0x04c6);
	assert_int_equal(w32(out + n - 4), (BASE + 12) | 1);
	/* Thumb at 2 mod 4, 10 bytes: mov; add; nop; add.w */
	n = arm_arch_ops.relocate_window(t, sizeof(t), BASE | 1, (BASE + 2) | 1, 10, far,
					 out, sizeof(out), &inlen);
	assert_int_equal(inlen, 10);
	assert_int_equal(w32(out + n - 4), (BASE + 12) | 1);
	/* bx lr would be in a window from the add.w on */
	assert_int_equal(arm_arch_ops.relocate_window(t, sizeof(t), BASE | 1, (BASE + 8) | 1,
						      8, far, out, sizeof(out), &inlen),
			 -EILSEQ);
	/* The PIC add: Thumb add r1, pc at BASE+2 (r1 += BASE+6) as
	 * addw r1, r1, #6; add.w r1, r1, #0x10000; then mov r2, r3 */
	static const uint8_t tpic[] = { 0x00, 0xbf, 0x79, 0x44, 0x1a, 0x46, 0x70, 0x47 };
	n = arm_arch_ops.relocate_window(tpic, sizeof(tpic), BASE | 1, (BASE + 2) | 1, 4,
					 BASE + 0x1000, out, sizeof(out), &inlen);
	assert_int_equal(inlen, 4);
	assert_int_equal(out[8] | out[9] << 8, 0xf201);
	assert_int_equal(out[10] | out[11] << 8, 0x0106);
	assert_int_equal(out[12] | out[13] << 8, 0xf501);	/* #0x80 ror 23 */
	assert_int_equal(out[14] | out[15] << 8, 0x3180);
	assert_int_equal(out[16] | out[17] << 8, 0x461a);
	/* A32 add r3, pc, r3 (r3 += BASE+8): add r3, r3, #8 (2 ror 30);
	 * add r3, r3, #0x10000 */
	static const uint8_t apic[] = { 0x03, 0x30, 0x8f, 0xe0, 0x1e, 0xff, 0x2f, 0xe1 };
	n = arm_arch_ops.relocate_window(apic, sizeof(apic), BASE, BASE, 4, far, out,
					 sizeof(out), &inlen);
	assert_int_equal(n, 16);
	assert_int_equal(w32(out), 0xe2833f02u);
	assert_int_equal(w32(out + 4), 0xe2833801u);
	/* with S, or a shift, it stays out */
	static const uint8_t apics[] = { 0x03, 0x30, 0x9f, 0xe0 };	/* adds r3, pc, r3 */
	assert_int_equal(arm_arch_ops.relocate_window(apics, 4, BASE, BASE, 4, far, out,
						      sizeof(out), &inlen), -EILSEQ);
	static const uint8_t apicl[] = { 0x03, 0x31, 0x8f, 0xe0 };	/* add r3, pc, r3, lsl #2 */
	assert_int_equal(arm_arch_ops.relocate_window(apicl, 4, BASE, BASE, 4, far, out,
						      sizeof(out), &inlen), -EILSEQ);
	/* a table branch in the function: its targets are unknown */
	assert_int_equal(arm_arch_ops.relocate_window(ttbb, sizeof(ttbb), BASE | 1, BASE | 1,
						      4, far, out, sizeof(out), &inlen),
			 -EXDEV);
	assert_int_equal(arm_arch_ops.relocate_window(ttbb, sizeof(ttbb), BASE | 1,
						      (BASE + 4) | 1, 4, far, out,
						      sizeof(out), &inlen), -EILSEQ);
}

/* Stepping out of a pad: the claims' ldrex / strex rewind, the return
 * trampoline's histogram counts (ldrexd / strexd) and the Thumb entry's
 * bx pc are done by hand, the rest steps. */
static void test_pad_step(void **state)
{
	struct arch_gpregs g;
	const uint64_t d = 0x80000 + 128;	/* in stack_mem */
	static const uint8_t ldrex[] = { 0x9f, 0x6f, 0x91, 0xe1 };
	static const uint8_t strex[] = { 0x97, 0x8f, 0x81, 0xe1 };
	static const uint8_t add[] = { 0x01, 0x00, 0x80, 0xe0 };
	static const uint8_t bxpc[] = { 0x78, 0x47, 0x00, 0xbf };
	static const uint8_t ldrexd[] = { 0x9f, 0x0f, 0xb2, 0xe1 };	/* ldrexd r0, r1, [r2] */
	static const uint8_t strexd[] = { 0x90, 0x3f, 0xa2, 0xe1 };	/* strexd r3, r0, r1, [r2] */

	(void)state;
	memset(&g, 0, sizeof(g));
	g.pc = 0x1000;
	g.flags = ARM_PSR_Z;
	assert_int_equal(arm_arch_ops.pad_step(ldrex, 4, &g, &fake), ARCH_PAD_REWIND);
	assert_int_equal(arm_arch_ops.pad_step(strex, 4, &g, &fake), ARCH_PAD_REWIND);
	assert_int_equal(arm_arch_ops.pad_step(add, 4, &g, &fake), ARCH_PAD_STEP);
	memset(stack_mem, 0, sizeof(stack_mem));
	put32(d, 0xffffffff);
	put32(d + 4, 0x7);
	g.gpr[2] = d;
	assert_int_equal(arm_arch_ops.pad_step(ldrexd, 4, &g, &fake), ARCH_PAD_DONE);
	assert_int_equal(g.gpr[0], 0xffffffff);
	assert_int_equal(g.gpr[1], 0x7);
	assert_int_equal(g.pc, 0x1004);
	g.gpr[0] = 0;
	g.gpr[1] = 0x8;
	g.gpr[3] = 1;
	assert_int_equal(arm_arch_ops.pad_step(strexd, 4, &g, &fake), ARCH_PAD_DONE);
	assert_int_equal(get32(d), 0);
	assert_int_equal(get32(d + 4), 0x8);
	assert_int_equal(g.gpr[3], 0);
	assert_int_equal(g.pc, 0x1008);
	g.pc = 0x1000;
	g.flags |= ARM_PSR_T;
	assert_int_equal(arm_arch_ops.pad_step(bxpc, 4, &g, &fake), ARCH_PAD_DONE);
	assert_int_equal(g.pc, 0x1004);
	assert_int_equal(g.flags, ARM_PSR_Z);
	assert_int_equal(arm_arch_ops.pad_layout->frame_pc, ARM_PC);
	assert_int_equal(arm_arch_ops.pad_layout->frame_words, 17);
}

/* One instruction through arm_callee_step: its result, pc moved by 4
 * when done.  `thumb`: two halfwords (T32), else an A32 word. */
static int callee(struct arch_gpregs *g, bool thumb, uint32_t enc)
{
	uint8_t b[4];
	uint64_t pc = g->pc;
	int r;

	if (thumb) {
		b[0] = (uint8_t)(enc >> 16); b[1] = (uint8_t)(enc >> 24);
		b[2] = (uint8_t)enc; b[3] = (uint8_t)(enc >> 8);
		g->flags |= ARM_PSR_T;
	} else {
		memcpy(b, &enc, 4);
		g->flags &= ~(uint64_t)ARM_PSR_T;
	}
	r = arm_arch_ops.callee_step(b, 4, g, &fake);
	assert_int_equal(g->pc, r == ARCH_PAD_DONE ? pc + 4 : pc);
	return r;
}

/* The collector's exclusive loads and stores done by hand for a thread
 * stepped out of it (encodings from arm-linux-gnueabihf-as): each
 * load's value and register, each store's bytes and status 0; what is
 * not one (tbb, add), or names the pc, steps. */
static void test_callee_step(void **state)
{
	struct arch_gpregs g;
	const uint64_t d = 0x80000 + 64;	/* in stack_mem */

	(void)state;
	memset(&g, 0, sizeof(g));
	memset(stack_mem, 0, sizeof(stack_mem));
	g.pc = 0x1000;
	put32(d, 0x11223344);
	put32(d + 4, 0x55667788);
	/* ldrexd r4, r5, [r5] (T32) */
	g.gpr[5] = d;
	assert_int_equal(callee(&g, true, 0xe8d5457f), ARCH_PAD_DONE);
	assert_int_equal(g.gpr[4], 0x11223344);
	assert_int_equal(g.gpr[5], 0x55667788);
	/* strexd r1, r4, r5, [lr] (T32): the pair swapped back in */
	g.gpr[14] = d;
	g.gpr[4] = 0xaabbccdd;
	g.gpr[5] = 0x01020304;
	g.gpr[1] = 7;
	assert_int_equal(callee(&g, true, 0xe8ce4571), ARCH_PAD_DONE);
	assert_int_equal(get32(d), 0xaabbccdd);
	assert_int_equal(get32(d + 4), 0x01020304);
	assert_int_equal(g.gpr[1], 0);
	/* ldrex r0, [r1, #8]; strex r2, r3, [r4]; ldrexb r6, [r7];
	 * strexh r8, r9, [sl] (T32) */
	g.gpr[1] = d - 8;
	assert_int_equal(callee(&g, true, 0xe8510f02), ARCH_PAD_DONE);
	assert_int_equal(g.gpr[0], 0xaabbccdd);
	g.gpr[4] = d + 8;
	g.gpr[3] = 0xcafef00d;
	g.gpr[2] = 1;
	assert_int_equal(callee(&g, true, 0xe8443200), ARCH_PAD_DONE);
	assert_int_equal(get32(d + 8), 0xcafef00d);
	assert_int_equal(g.gpr[2], 0);
	g.gpr[7] = d + 9;
	assert_int_equal(callee(&g, true, 0xe8d76f4f), ARCH_PAD_DONE);
	assert_int_equal(g.gpr[6], 0xf0);
	g.gpr[10] = d + 12;
	g.gpr[9] = 0x12345678;
	g.gpr[8] = 1;
	assert_int_equal(callee(&g, true, 0xe8ca9f58), ARCH_PAD_DONE);
	assert_int_equal(get32(d + 12), 0x5678);
	assert_int_equal(g.gpr[8], 0);
	/* tbb [r0, r1] and adds.w r0, r0, #1 step */
	assert_int_equal(callee(&g, true, 0xe8d0f001), ARCH_PAD_STEP);
	assert_int_equal(callee(&g, true, 0xf1100001), ARCH_PAD_STEP);
	/* A32: ldrex r0, [r1]; strex r2, r3, [r4]; ldrexd r2, r3, [r4];
	 * strexd r0, r6, r7, [r8]; ldrexh r5, [r6]; strexb r0, r1, [r2] */
	g.gpr[1] = d;
	assert_int_equal(callee(&g, false, 0xe1910f9f), ARCH_PAD_DONE);
	assert_int_equal(g.gpr[0], 0xaabbccdd);
	g.gpr[4] = d + 16;
	g.gpr[3] = 0x0badf00d;
	g.gpr[2] = 1;
	assert_int_equal(callee(&g, false, 0xe1842f93), ARCH_PAD_DONE);
	assert_int_equal(get32(d + 16), 0x0badf00d);
	assert_int_equal(g.gpr[2], 0);
	g.gpr[4] = d;
	assert_int_equal(callee(&g, false, 0xe1b42f9f), ARCH_PAD_DONE);
	assert_int_equal(g.gpr[2], 0xaabbccdd);
	assert_int_equal(g.gpr[3], 0x01020304);
	g.gpr[8] = d + 24;
	g.gpr[6] = 0x600d;
	g.gpr[7] = 0x700d;
	g.gpr[0] = 1;
	assert_int_equal(callee(&g, false, 0xe1a80f96), ARCH_PAD_DONE);
	assert_int_equal(get32(d + 24), 0x600d);
	assert_int_equal(get32(d + 28), 0x700d);
	assert_int_equal(g.gpr[0], 0);
	g.gpr[6] = d + 12;
	assert_int_equal(callee(&g, false, 0xe1f65f9f), ARCH_PAD_DONE);
	assert_int_equal(g.gpr[5], 0x5678);
	g.gpr[2] = d + 32;
	g.gpr[1] = 0x1ff;
	g.gpr[0] = 1;
	assert_int_equal(callee(&g, false, 0xe1c20f91), ARCH_PAD_DONE);
	assert_int_equal(get32(d + 32), 0xff);
	assert_int_equal(g.gpr[0], 0);
	/* conditional (ldrexne) and add r0, r0, r1 step; an unreadable
	 * address is the caller's error, the registers untouched */
	assert_int_equal(callee(&g, false, 0x11910f9f), ARCH_PAD_STEP);
	assert_int_equal(callee(&g, false, 0xe0800001), ARCH_PAD_STEP);
	g.gpr[1] = 0x10;
	g.gpr[0] = 0x77;
	assert_int_equal(callee(&g, false, 0xe1910f9f), -EFAULT);
	assert_int_equal(g.gpr[0], 0x77);
}

/* gdb's Z0 kinds and the agent's own choice: the words Linux traps on,
 * and a Thumb breakpoint exactly the size of the instruction under it. */
static void test_breakpoints(void **state)
{
	size_t len = 0;
	const uint8_t *b;
	/* bl (T32), then adds r0, #1 (T16), then an A32 mov r0, r0 */
	const uint8_t t32[] = { 0x00, 0xf0, 0x00, 0xf8 };
	const uint8_t t16[] = { 0x01, 0x30 };
	const uint8_t a32[] = { 0x00, 0x00, 0xa0, 0xe1 };

	(void)state;
	b = arm_arch_ops.bp_insn_for_kind(ARM_BP_KIND_A32, &len);
	assert_non_null(b);
	assert_int_equal(len, 4);
	assert_int_equal(b[0] | b[1] << 8 | b[2] << 16 | (uint32_t)b[3] << 24, ARM_BKPT_A32);
	b = arm_arch_ops.bp_insn_for_kind(ARM_BP_KIND_T16, &len);
	assert_non_null(b);
	assert_int_equal(len, 2);
	assert_int_equal(b[0] | b[1] << 8, ARM_BKPT_T16);
	b = arm_arch_ops.bp_insn_for_kind(ARM_BP_KIND_T32, &len);
	assert_non_null(b);
	assert_int_equal(len, 4);
	/* halfwords in order, each little-endian: f7f0 then a000 */
	assert_int_equal((uint32_t)(b[0] | b[1] << 8) << 16 | (b[2] | b[3] << 8),
			 ARM_BKPT_T32);
	assert_null(arm_arch_ops.bp_insn_for_kind(1, &len));
	assert_null(arm_arch_ops.bp_insn_for_kind(0, &len));
	/* The default breakpoint is the A32 one. */
	assert_memory_equal(arm_arch_ops.bp_insn,
			    arm_arch_ops.bp_insn_for_kind(ARM_BP_KIND_A32, &len), 4);
	assert_int_equal(arm_arch_ops.bp_kind_at(BASE, a32, sizeof(a32)), ARM_BP_KIND_A32);
	assert_int_equal(arm_arch_ops.bp_kind_at(BASE | 1, t32, sizeof(t32)), ARM_BP_KIND_T32);
	assert_int_equal(arm_arch_ops.bp_kind_at(BASE | 1, t16, sizeof(t16)), ARM_BP_KIND_T16);
	assert_int_equal(arm_arch_ops.bp_kind_at(BASE | 1, t32, 0), ARM_BP_KIND_T16);
	/* Each decodes as the UDF the classifier rejects. */
	struct arch_insn insn;
	b = arm_arch_ops.bp_insn_for_kind(ARM_BP_KIND_T32, &len);
	assert_int_equal(arm_arch_ops.insn_decode(b, len, BASE | 1, &insn), 0);
	assert_int_equal(insn.len, 4);
	assert_int_equal(insn.strategy, ARCH_REJECT);
	b = arm_arch_ops.bp_insn_for_kind(ARM_BP_KIND_T16, &len);
	assert_int_equal(arm_arch_ops.insn_decode(b, len, BASE | 1, &insn), 0);
	assert_int_equal(insn.len, 2);
	assert_int_equal(insn.strategy, ARCH_REJECT);
}

static void test_follows_call(void **state)
{
	static const uint8_t a32_bl[] = { 0xfe, 0xfb, 0xff, 0xeb };
	static const uint8_t t32_bl[] = { 0x01, 0xf0, 0xfe, 0xff };
	static const uint8_t t16_blx[] = { 0x98, 0x47 };
	static const uint8_t push[] = { 0x10, 0x40, 0x2d, 0xe9 };

	(void)state;
	assert_true(arm_arch_ops.follows_call(a32_bl, 4));
	assert_true(arm_arch_ops.follows_call(t32_bl, 4));
	assert_true(arm_arch_ops.follows_call(t16_blx, 2));
	assert_false(arm_arch_ops.follows_call(push, 4));
}

static void test_sdt(void **state)
{
	struct arch_operand op;
	char err[128];

	(void)state;
	assert_int_equal(arm_arch_ops.sdt_operand_parse("r0", &op, err, sizeof(err)), 0);
	assert_int_equal(op.kind, ARCH_OPERAND_REG);
	assert_int_equal(op.reg.regnum, 0);
	assert_int_equal(op.reg.size, 4);
	assert_int_equal(arm_arch_ops.sdt_operand_parse("#-5", &op, err, sizeof(err)), 0);
	assert_int_equal(op.kind, ARCH_OPERAND_IMM);
	assert_int_equal(op.imm, -5);
	assert_int_equal(arm_arch_ops.sdt_operand_parse("[r1, #8]", &op, err, sizeof(err)), 0);
	assert_int_equal(op.kind, ARCH_OPERAND_MEM);
	assert_int_equal(op.reg.regnum, 1);
	assert_int_equal(op.disp, 8);
	assert_int_equal(arm_arch_ops.sdt_operand_parse("[fp, #-12]", &op, err, sizeof(err)), 0);
	assert_int_equal(op.reg.regnum, 11);
	assert_int_equal(op.disp, -12);
	assert_int_equal(arm_arch_ops.sdt_operand_parse("[sp]", &op, err, sizeof(err)), 0);
	assert_int_equal(op.reg.regnum, ARM_SP);
	assert_int_equal(op.disp, 0);
	assert_int_equal(arm_arch_ops.sdt_operand_parse("[r3, r2]", &op, err, sizeof(err)), 0);
	assert_int_equal(op.index.regnum, 2);
	assert_int_equal(arm_arch_ops.sdt_operand_parse("ip", &op, err, sizeof(err)), 0);
	assert_int_equal(op.reg.regnum, 12);
	assert_int_equal(arm_arch_ops.sdt_operand_parse("[pc, #4]", &op, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "pc"));
	assert_int_equal(arm_arch_ops.sdt_operand_parse("x0", &op, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "unknown register x0"));
	assert_int_equal(arm_arch_ops.sdt_operand_parse("[r1, #8", &op, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "expected ']'"));
	assert_int_equal(arm_arch_ops.sdt_operand_parse("r16", &op, err, sizeof(err)), -EINVAL);
}

static void test_regs(void **state)
{
	char xml[16384];
	int n;

	(void)state;
	assert_ptr_equal(arch_for_elf_machine(EM_ARM), &arm_arch_ops);
	assert_ptr_equal(arch_for_gdb_arch("arm"), &arm_arch_ops);
	assert_int_equal(arm_arch_ops.nregs_for(0), 50);
	assert_int_equal(arm_arch_ops.regblock_size_for(0), 328);
	assert_string_equal(arm_arch_ops.regs[ARM_PC].name, "pc");
	assert_string_equal(arm_arch_ops.regs[ARM_CPSR].name, "cpsr");
	assert_int_equal(arm_arch_ops.regs[ARM_CPSR].offset, 64);
	assert_string_equal(arm_arch_ops.regs[ARM_D0 + 31].name, "d31");
	assert_int_equal(arm_arch_ops.regs[ARM_FPSCR].offset, 324);
	n = arm_arch_ops.target_xml(0, xml, sizeof(xml));
	assert_true(n > 0);
	assert_int_equal((size_t)n, strlen(xml));
	assert_non_null(strstr(xml, "<architecture>arm</architecture>"));
	assert_non_null(strstr(xml, "org.gnu.gdb.arm.core"));
	assert_non_null(strstr(xml, "org.gnu.gdb.arm.vfp"));
	assert_non_null(strstr(xml, "<feature name=\"org.gnu.gdb.arm.neon\"/>\n</target>\n"));
	assert_non_null(strstr(xml, "<reg name=\"cpsr\" bitsize=\"32\" regnum=\"16\""));
	assert_int_equal(arm_arch_ops.target_xml(0, xml, 200), -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_decode_errors),
		cmocka_unit_test(test_targets),
		cmocka_unit_test(test_sim_branches),
		cmocka_unit_test(test_sim_thumb_branches),
		cmocka_unit_test(test_sim_pc_values),
		cmocka_unit_test(test_sim_loads),
		cmocka_unit_test(test_sim_ldm_stm),
		cmocka_unit_test(test_sim_table_branch),
		cmocka_unit_test(test_sim_it),
		cmocka_unit_test(test_next_pcs),
		cmocka_unit_test(test_next_pcs_it),
		cmocka_unit_test(test_decode_in_it),
		cmocka_unit_test(test_exclusive),
		cmocka_unit_test(test_xol),
		cmocka_unit_test(test_emit),
		cmocka_unit_test(test_pad_save_restore),
		cmocka_unit_test(test_pad_collect_handoff),
		cmocka_unit_test(test_pad_collect_ipa),
		cmocka_unit_test(test_pad_window),
		cmocka_unit_test(test_emit_far),
		cmocka_unit_test(test_pad_window_far),
		cmocka_unit_test(test_pad_step),
		cmocka_unit_test(test_callee_step),
		cmocka_unit_test(test_breakpoints),
		cmocka_unit_test(test_follows_call),
		cmocka_unit_test(test_sdt),
		cmocka_unit_test(test_regs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
