/*
 * aarch64-retpad-table.c - the words of aarch64's return probes with no
 * stop (arch/aarch64/aarch64-retpad.c), on any host (cmocka).
 *
 * The words named here were produced with aarch64-linux-gnu-as and read
 * back with objdump (source beside each).  The code's meaning is checked
 * by running it (aarch64-retpad-exec.c, under qemu-aarch64); here: the
 * instructions that carry the scheme are there and in their order, every
 * branch lands inside the code, the only system calls are gettid, the
 * caller's branches are where the contract says, and bad layouts are
 * refused.
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

#define AREA 0x7f0000000000ull
#define TRAMP 0x7f1000004000ull

#define RT_SVC 0xd4000001u		/* svc #0 */
#define RT_GETTID 0xd2801648u		/* mov x8, #178 */
#define RT_IMAGE_BYTES AARCH64_PAD_IMAGE_BYTES
#include "tests/arch/retpad-table.h"

/* Where the branch at `off` goes (an offset of the same code), or -1
 * when the word is no direct branch. */
static long target_of(const uint8_t *b, size_t off)
{
	uint32_t w = word_at(b, off);

	if ((w & 0xfc000000u) == 0x14000000u)			/* b */
		return (long)off + 4 * (long)aarch64_sext(w, 26);
	if ((w & 0xff000010u) == 0x54000000u)			/* b.cond */
		return (long)off + 4 * (long)aarch64_sext(w >> 5, 19);
	if ((w & 0x7e000000u) == 0x34000000u)			/* cbz, cbnz */
		return (long)off + 4 * (long)aarch64_sext(w >> 5, 19);
	return -1;
}

static const struct arch_ret_pad rp = {
	.area = AREA, .tramp = TRAMP, .func_run = 0x0001000000401234ull,
	.ring = { .ring = 0x7e0000004000ull, .off_records = 4096, .record_shift = 11,
		  .nrecords = 4096, .off_seq = 800, .off_bases = 808, .off_frame = 528,
		  .off_blocks = 1024, .blocks_size = 1024 },
};

static void test_ops(void **state)
{
	(void)state;
	assert_ptr_equal(aarch64_arch_ops.emit_ret_entry, aarch64_emit_ret_entry);
	assert_ptr_equal(aarch64_arch_ops.emit_ret_exit, aarch64_emit_ret_exit);
	assert_ptr_equal(aarch64_arch_ops.emit_ret_stamp, aarch64_emit_ret_stamp);
}

static void test_entry(void **state)
{
	uint8_t b[2048];
	size_t fb = 0, done = 0;
	int n;

	(void)state;
	n = aarch64_emit_ret_entry(b, sizeof(b), &rp, &fb, NULL);
	assert_true(n > 0 && n % 4 == 0);
	static const uint32_t order[] = {
		0xd53bd04a,	/* mrs x10, tpidr_el0        the key */
		0x9b0c7d4b,	/* mul x11, x10, x12         its hash */
		0xd378fd6b,	/* lsr x11, x11, #56 */
		0x8b0b312d,	/* add x13, x9, x11, lsl #12 the slot */
		0x914005ad,	/* add x13, x13, #1, lsl #12 */
		0xc85ffdae,	/* ldaxr x14, [x13]          claim a free one */
		0xc80ffdaa,	/* stlxr w15, x10, [x13] */
		0xf9407e70,	/* ldr x16, [x19, #248]      sp at entry */
		0xf9407a71,	/* ldr x17, [x19, #240]      x30: the return */
		0x7101f9ff,	/* cmp w15, #126             depth */
		0x8b0f15b6,	/* add x22, x13, x15, lsl #5 the new entry */
		0x92800017,	/* mov x23, #-1              not complete yet */
		0xd53be057,	/* mrs x23, cntvct_el0       the entry's time */
		0xaa1503fc,	/* mov x28, x21              the trampoline, and */
		0xaa1603fb,	/* mov x27, x22              the entry, for the stamp */
		0xaa1f03fb,	/* mov x27, xzr              the fallback's */
	};
	in_order(b, (size_t)n, order, sizeof(order) / sizeof(order[0]));
	/* Without done_at the stamp writes x30, after the entry's record. */
	assert_int_equal(find(b, (size_t)n, 0, 0xf9007a75u), -1);	/* str x21, [x19, #240] */
	/* The fallback's branch, left for the caller, is last: patched, it
	 * goes where it says. */
	assert_int_equal(fb, (size_t)n - 4);
	assert_int_equal(word_at(b, fb), 0x14000000u);
	assert_true(branches_inside(b, (size_t)n) > 10);
	assert_int_equal(aarch64_patch_branch(b, fb, fb + 400), 0);
	assert_int_equal(target_of(b, fb), (long)(fb + 400));
	assert_int_equal(svcs(b, (size_t)n), 2);	/* a claim's, a cleared tid's */
	/* The trampoline's address is built into x21 (movz/movk x21, #TRAMP):
	 * its high half. */
	assert_true(find(b, (size_t)n, 0, 0xf2cfe215u) >= 0);	/* movk x21, #0x7f10, lsl #32 */

	/* With done_at: success branches to *done_at's target instead,
	 * x30 = the trampoline written in the frame by the entry itself. */
	n = aarch64_emit_ret_entry(b, sizeof(b), &rp, &fb, &done);
	assert_true(n > 0);
	assert_true(find(b, (size_t)n, 0, 0xf9007a75u) >= 0);	/* str x21, [x19, #240] */
	assert_int_equal(find(b, (size_t)n, 0, 0xaa1503fcu), -1);
	assert_int_equal(word_at(b, done), 0x14000000u);
	assert_true(done < fb);
	assert_int_equal(aarch64_patch_branch(b, done, (size_t)n + 64), 0);
	/* the same hit again goes to that branch too */
	int to_done = 0;
	for (size_t off = 0; off < (size_t)n; off += 4)
		to_done += target_of(b, off) == (long)done;
	assert_int_equal(to_done, 1);
}

static void test_entry_refused(void **state)
{
	uint8_t b[2048];
	size_t fb, done;
	struct arch_ret_pad bad = rp;

	(void)state;
	bad.area = AREA + 8;
	assert_int_equal(aarch64_emit_ret_entry(b, sizeof(b), &bad, &fb, &done), -EINVAL);
	bad = rp;
	bad.tramp = TRAMP + 2;
	assert_int_equal(aarch64_emit_ret_entry(b, sizeof(b), &bad, &fb, &done), -EINVAL);
	bad.tramp = 0;
	assert_int_equal(aarch64_emit_ret_entry(b, sizeof(b), &bad, &fb, &done), -EINVAL);
	assert_int_equal(aarch64_emit_ret_entry(b, 64, &rp, &fb, &done), -ENOSPC);
}

static void test_stamp(void **state)
{
	uint8_t b[64];

	(void)state;
	assert_int_equal(aarch64_emit_ret_stamp(b, sizeof(b)), 16);
	assert_int_equal(word_at(b, 0), 0xb400009bu);	/* cbz x27, .+16 */
	assert_int_equal(word_at(b, 4), 0xd53be05au);	/* mrs x26, cntvct_el0 */
	assert_int_equal(word_at(b, 8), 0xf9000b7au);	/* str x26, [x27, #16] */
	assert_int_equal(word_at(b, 12), 0xf9007a7cu);	/* str x28, [x19, #240] */
	assert_int_equal(aarch64_emit_ret_stamp(b, 8), -ENOSPC);
}

static void test_exit(void **state)
{
	uint8_t b[4096], save[256], restore[256];
	size_t trap = 0;
	int n, ns, nr;

	(void)state;
	n = aarch64_emit_ret_exit(b, sizeof(b), &rp, &trap);
	assert_true(n > 0 && n % 4 == 0);
	/* It opens with the register save, pc = the trampoline. */
	ns = aarch64_emit_save_regs(save, sizeof(save), TRAMP);
	assert_memory_equal(b, save, (size_t)ns);
	static const uint32_t order[] = {
		0xd53bd04a,	/* mrs x10, tpidr_el0        the key */
		0xf9407e70,	/* ldr x16, [x19, #248]      sp: the entry's */
		0xd53be05a,	/* mrs x26, cntvct_el0       now */
		0xc85ffc26,	/* ldaxr x6, [x1]            the ring's record */
		0xc808fc27,	/* stlxr w8, x7, [x1] */
		0xad000460,	/* stp q0, q1, [x3]          the image */
		0xd53b4425,	/* mrs x5, fpsr */
		0xcb050345,	/* sub x5, x26, x5           ticks */
		0xc89ffc87,	/* stlr x7, [x4]             published */
		0xd4200000,	/* brk #0                    a full ring's wait */
		0xf9007a74,	/* str x20, [x19, #240]      x30 = the real address */
		0xd65f03c0,	/* ret */
		0xd4200000,	/* brk #0                    an orphan */
	};
	in_order(b, (size_t)n, order, sizeof(order) / sizeof(order[0]));
	/* The wait: BRK, then back to take the record again. */
	assert_int_equal(word_at(b, trap), 0xd4200000u);
	long back = target_of(b, trap + 4);
	assert_true(back >= ns && back < (long)trap);
	/* The way out: x30, the restore, ret. */
	nr = aarch64_emit_restore_regs(restore, sizeof(restore));
	long out = find(b, (size_t)n, 0, 0xf9007a74u);
	assert_memory_equal(b + out + 4, restore, (size_t)nr);
	assert_int_equal(word_at(b, (size_t)out + 4 + (size_t)nr), 0xd65f03c0u);
	/* The last word: the orphan's BRK, after its restore. */
	assert_int_equal(word_at(b, (size_t)n - 4), 0xd4200000u);
	assert_memory_equal(b + n - 4 - nr, restore, (size_t)nr);
	assert_true(branches_inside(b, (size_t)n) > 10);
	assert_int_equal(svcs(b, (size_t)n), 0);
}

/* A memory of 64 bytes at 0x9000 for the steps done by hand. */
static uint8_t step_mem[64];

static int step_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	if (addr < 0x9000 || addr + len > 0x9000 + sizeof(step_mem))
		return -EFAULT;
	memcpy(buf, step_mem + (addr - 0x9000), len);
	return 0;
}

static int step_write(void *ctx, uint64_t addr, const void *buf, size_t len)
{
	(void)ctx;
	if (addr < 0x9000 || addr + len > 0x9000 + sizeof(step_mem))
		return -EFAULT;
	memcpy(step_mem + (addr - 0x9000), buf, len);
	return 0;
}

/*
 * A thread the agent steps out of the entry pad or the trampoline: the
 * claims' exclusive pairs (x1, x13, x24) send it back, those of the
 * histogram's count (x8) and of the header's counters (x23) are done by
 * hand, so that nothing is counted twice; the histogram's sum, stepped
 * through its pair, is added once.
 */
static void test_step_exclusives(void **state)
{
	struct arch_ret_pad h = rp;
	uint8_t b[4096];
	size_t trap = 0, fb = 0;
	unsigned int by_hand[32] = { 0 }, rewound[32] = { 0 };
	struct arch_mem mem = { NULL, step_read, step_write };

	(void)state;
	h.hist = 0x7f2000000000ull;
	for (int part = 0; part < 2; part++) {
		int n = part ? aarch64_emit_ret_exit(b, sizeof(b), &h, &trap)
			     : aarch64_emit_ret_entry(b, sizeof(b), &h, &fb, NULL);
		assert_true(n > 0);
		for (size_t off = 0; off < (size_t)n; off += 4) {
			uint32_t w = word_at(b, off);
			if ((w & 0x3f800000u) != 0x08000000u)
				continue;
			unsigned int rn = (w >> 5) & 31;
			struct arch_gpregs g = { .pc = 0x4000 };
			g.gpr[rn] = 0x9000;
			int how = aarch64_arch_ops.pad_step(b + off, 4, &g, &mem);
			if (how == ARCH_PAD_DONE) {
				assert_int_equal(g.pc, 0x4004);
				by_hand[rn]++;
			} else {
				assert_int_equal(how, ARCH_PAD_REWIND);
				rewound[rn]++;
			}
		}
	}
	/* the hist's two pairs, the counters' (fallbacks; waits, orphans) */
	assert_int_equal(by_hand[8], 4);
	assert_int_equal(by_hand[23], 6);
	assert_true(rewound[1] >= 2 && rewound[13] == 2);
	assert_int_equal(rewound[8] + rewound[23], 0);

	/* The sum's pair by hand: ldaxr x6, [x8]; (add x6, x6, x4 steps);
	 * stlxr w7, x6, [x8]: the sum once more, the status 0. */
	static const uint8_t ld[] = { 0x06, 0xfd, 0x5f, 0xc8 };	/* ldaxr x6, [x8] */
	static const uint8_t st[] = { 0x06, 0xfd, 0x07, 0xc8 };	/* stlxr w7, x6, [x8] */
	struct arch_gpregs g = { .pc = 0x4000 };
	uint64_t sum = 1000, got;
	memcpy(step_mem + 8, &sum, 8);
	g.gpr[8] = 0x9008;
	g.gpr[4] = 234;
	g.gpr[7] = 1;
	assert_int_equal(aarch64_arch_ops.pad_step(ld, 4, &g, &mem), ARCH_PAD_DONE);
	assert_true(g.gpr[6] == 1000 && g.pc == 0x4004);
	g.gpr[6] += g.gpr[4];
	g.pc += 4;
	assert_int_equal(aarch64_arch_ops.pad_step(st, 4, &g, &mem), ARCH_PAD_DONE);
	memcpy(&got, step_mem + 8, 8);
	assert_true(got == 1234 && g.gpr[7] == 0 && g.pc == 0x400c);
}

static void test_exit_refused(void **state)
{
	uint8_t b[4096];
	size_t trap;

	(void)state;
	exit_refuses_bad_layouts(aarch64_emit_ret_exit, &rp);
	assert_int_equal(aarch64_emit_ret_exit(b, 400, &rp, &trap), -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ops),
		cmocka_unit_test(test_entry),
		cmocka_unit_test(test_entry_refused),
		cmocka_unit_test(test_stamp),
		cmocka_unit_test(test_exit),
		cmocka_unit_test(test_exit_refused),
		cmocka_unit_test(test_step_exclusives),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
