/*
 * arm-retpad-table.c - the words of 32-bit ARM's return probes with no
 * stop (arch/arm/arm-retpad.c), on any host (cmocka).
 *
 * The words named here were produced with arm-linux-gnueabihf-as and
 * read back with objdump (source beside each).  The code's meaning is
 * checked by running it (arm-retpad-exec.c, under qemu-arm-static); here:
 * the instructions that carry the scheme are there and in their order,
 * every branch lands inside the code, the only system calls are gettid,
 * the caller's branches are where the contract says, and bad layouts are
 * refused; with a histograms' page (ret_hist), the trampoline's count of
 * a return in it, and that it goes on as a recorded return does.
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

#include "arch/arm/arm.h"

#define AREA 0x40000000u
#define TRAMP 0x3fff0000u

#define RT_SVC 0xef000000u		/* svc #0 */
#define RT_GETTID 0xe3a070e0u		/* mov r7, #224 */
#define RT_IMAGE_BYTES ARM_PAD_IMAGE_BYTES
#include "tests/arch/retpad-table.h"

/* Where the B<c> at `off` goes (an offset of the same code), or -1. */
static long target_of(const uint8_t *b, size_t off)
{
	uint32_t w = word_at(b, off);
	int32_t imm;

	if ((w & 0x0f000000u) != 0x0a000000u || (w >> 28) == 15)
		return -1;
	imm = (int32_t)(w << 8) >> 8;
	return (long)off + 8 + 4 * (long)imm;
}

static const struct arch_ret_pad rp = {
	.area = AREA, .tramp = TRAMP, .func_run = 0x0001000000401235ull,
	.ring = { .ring = 0x3e000000u, .off_records = 4096, .record_shift = 11,
		  .nrecords = 4096, .off_seq = 400, .off_bases = 408, .off_frame = 264,
		  .off_blocks = 1024, .blocks_size = 1024 },
};

static void test_ops(void **state)
{
	(void)state;
	assert_ptr_equal(arm_arch_ops.emit_ret_entry, arm_emit_ret_entry);
	assert_ptr_equal(arm_arch_ops.emit_ret_exit, arm_emit_ret_exit);
	assert_ptr_equal(arm_arch_ops.emit_ret_stamp, arm_emit_ret_stamp);
	assert_true(arm_arch_ops.ret_hist);
}

static void test_entry(void **state)
{
	uint8_t b[2048];
	size_t fb = 0, done = 0;
	int n;
	static const uint32_t scheme[] = {
		0xee1daf70u,	/* mrc p15, 0, r10, c13, c0, 3: TPIDRURO */
		0xe0832c9au,	/* umull r2, r3, r10, r12 */
		0xe0233c9au,	/* mla r3, r10, r12, r3 */
		0xe1a0bc23u,	/* lsr r11, r3, #24: the hash's top 8 bits */
		0xe089860bu,	/* add r8, r9, r11, lsl #12 */
		0xe2888a01u,	/* add r8, r8, #4096: the slot */
		0xe1981f9fu,	/* ldrex r1, [r8]: the claim */
		0xe1882f9au,	/* strex r2, r10, [r8] */
		0xe5942068u,	/* ldr r2, [r4, #104]: sp at the entry */
		0xe5943070u,	/* ldr r3, [r4, #112]: lr, the return address */
		0xe356007eu,	/* cmp r6, #126: the depth */
		0xe28cc040u,	/* add r12, r12, #64: entry n */
		0xec510f1eu,	/* mrrc p15, 1, r0, r1, c14: CNTVCT */
		0xe58c0010u,	/* str r0, [r12, #16] */
		0xe58c1014u,	/* str r1, [r12, #20] */
		0xe58c2000u,	/* str r2, [r12]: the slot, last */
		0xe5845070u,	/* str r5, [r4, #112]: lr = trampoline (done_at) */
		0xe584c02cu,	/* str r12, [r4, #44]: the entry, for the stamp */
	};

	(void)state;
	n = arm_emit_ret_entry(b, sizeof(b), &rp, &fb, &done);
	assert_true(n > 0);
	in_order(b, (size_t)n, scheme, sizeof(scheme) / sizeof(scheme[0]));
	assert_true(branches_inside(b, (size_t)n) > 10);
	assert_int_equal(svcs(b, (size_t)n), 2);
	/* The caller's branches: the fallback's and done's B, unpatched. */
	assert_true(fb < (size_t)n && done < (size_t)n && fb != done);
	assert_int_equal(word_at(b, fb) >> 24, 0xea);
	assert_int_equal(word_at(b, done) >> 24, 0xea);
	/* The tramp and func_run as movw/movt: movw r5, #0 ; movt r5, #0x3fff */
	assert_true(find(b, (size_t)n, 0, 0xe3005000u) >= 0);
	assert_true(find(b, (size_t)n, 0, 0xe3435fffu) >= 0);
	/* Without done_at the trampoline waits in the frame's stash. */
	n = arm_emit_ret_entry(b, sizeof(b), &rp, &fb, NULL);
	assert_true(n > 0);
	assert_true(find(b, (size_t)n, 0, 0xe5845034u) >= 0);	/* str r5, [r4, #52] */
	assert_true(find(b, (size_t)n, 0, 0xe5845070u) < 0);
	assert_int_equal(word_at(b, fb) >> 24, 0xea);
	assert_int_equal(arm_emit_ret_entry(b, 16, &rp, &fb, NULL), -ENOSPC);
}

static void test_stamp(void **state)
{
	uint8_t b[64];
	static const uint32_t want[] = {
		0xe594002cu,	/* ldr r0, [r4, #44] */
		0xe3500000u,	/* cmp r0, #0 */
		0x0a000004u,	/* beq 1f */
		0xec521f1eu,	/* mrrc p15, 1, r1, r2, c14 */
		0xe5801010u,	/* str r1, [r0, #16] */
		0xe5802014u,	/* str r2, [r0, #20] */
		0xe5941034u,	/* ldr r1, [r4, #52] */
		0xe5841070u,	/* str r1, [r4, #112] */
	};

	(void)state;
	assert_int_equal(arm_emit_ret_stamp(b, sizeof(b)), (int)sizeof(want));
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_int_equal(word_at(b, 4 * i), want[i]);
	assert_int_equal(target_of(b, 8), (long)sizeof(want));
	assert_int_equal(arm_emit_ret_stamp(b, 8), -ENOSPC);
}

static void test_exit(void **state)
{
	uint8_t b[4096];
	size_t trap = 0;
	int n;
	static const uint32_t scheme[] = {
		0xe24dd088u,	/* sub sp, sp, #136: the save */
		0xee1daf70u,	/* mrc TPIDRURO */
		0xe598600cu,	/* ldr r6, [r8, #12]: n */
		0xe594b068u,	/* ldr r11, [r4, #104]: sp */
		0xe59ce008u,	/* ldr lr, [r12, #8]: the real address */
		0xec510f1eu,	/* mrrc p15, 1, r0, r1, c14: now */
		0xe5995008u,	/* ldr r5, [r9, #8]: records on? */
		0xe1905f9fu,	/* ldrex r5, [r0]: the ring's head */
		0xe1805f93u,	/* strex r5, r3, [r0] */
		0xec820b20u,	/* vstmia r2, {d0-d15}: the image */
		0xe0500005u,	/* subs r0, r0, r5: ticks */
		0xe0c11005u,	/* sbc r1, r1, r5 */
		0xe583e020u,	/* str lr, [r3, #32]: RET */
		0xe7f001f0u,	/* udf #16: the wait for room */
		0xe584e070u,	/* str lr, [r4, #112] */
		0xe28dd088u,	/* add sp, sp, #136: the restore */
		0xe12fff1eu,	/* bx lr */
		0xe7f001f0u,	/* udf #16: an orphan */
	};
	struct arch_ret_pad bad = rp;

	(void)state;
	n = arm_emit_ret_exit(b, sizeof(b), &rp, &trap);
	assert_true(n > 0 && n < 4096);
	in_order(b, (size_t)n, scheme, sizeof(scheme) / sizeof(scheme[0]));
	assert_int_equal(word_at(b, trap), ARM_BKPT_A32);
	assert_true(branches_inside(b, (size_t)n) > 10);
	assert_int_equal(svcs(b, (size_t)n), 0);
	exit_refuses_bad_layouts(arm_emit_ret_exit, &rp);
	bad.ring.nrecords = 3;
	assert_int_equal(arm_emit_ret_exit(b, sizeof(b), &bad, &trap), -EINVAL);
	bad = rp;
	bad.tramp = TRAMP | 1;
	assert_int_equal(arm_emit_ret_exit(b, sizeof(b), &bad, &trap), -EINVAL);
	/* What only 32-bit ARM refuses: addresses beyond 32 bits. */
	bad = rp;
	bad.area = 0x100000000ull;
	assert_int_equal(arm_emit_ret_entry(b, sizeof(b), &bad, &trap, NULL), -EINVAL);
	bad = rp;
	bad.ring.ring = 0x100000000ull;
	assert_int_equal(arm_emit_ret_exit(b, sizeof(b), &bad, &trap), -EINVAL);
}

/* With a histograms' page: its search and count between the records-on
 * test and the ring's claim, none of it without one, and a page beyond
 * 32 bits or off 8 bytes refused. */
static void test_exit_hist(void **state)
{
	uint8_t b[4096];
	size_t trap = 0;
	int n;
	long at;
	static const uint32_t scheme[] = {
		0xe5995008u,	/* ldr r5, [r9, #8]: records on? */
		0xe300a000u,	/* movw r10, #0 */
		0xe343af00u,	/* movt r10, #0x3f00: the page */
		0xe59a2000u,	/* ldr r2, [r10]: N */
		0xe59c0018u,	/* ldr r0, [r12, #24]: the entry's func_run */
		0xe59c101cu,	/* ldr r1, [r12, #28] */
		0xe28aa040u,	/* add r10, r10, #64: the first histogram */
		0xe59a3000u,	/* ldr r3, [r10]: its FUNC */
		0x059a3004u,	/* ldreq r3, [r10, #4] */
		0xe28aac02u,	/* add r10, r10, #512: the next */
		0xe0500002u,	/* subs r0, r0, r2: ticks */
		0xe0d11003u,	/* sbcs r1, r1, r3 */
		0x43a00000u,	/* movmi r0, #0: the counter went back */
		0xe5932008u,	/* ldr r2, [r3, #8]: MULT */
		0xe0857290u,	/* umull r7, r5, r0, r2 */
		0xe0a75390u,	/* umlal r5, r7, r0, r3 */
		0xe0a75291u,	/* umlal r5, r7, r1, r2 */
		0xe0277391u,	/* mla r7, r1, r3, r7 */
		0xe28a2008u,	/* add r2, r10, #8: SUM */
		0xe1b20f9fu,	/* ldrexd r0, r1, [r2] */
		0xe1a23f90u,	/* strexd r3, r0, r1, [r2] */
		0xe16f0f17u,	/* clz r0, r7 */
		0x016f0f15u,	/* clzeq r0, r5 */
		0xe260003fu,	/* rsb r0, r0, #63: k */
		0xc3a0003cu,	/* movgt r0, #60: the last bucket */
		0xe08a2180u,	/* add r2, r10, r0, lsl #3 */
		0xe2822018u,	/* add r2, r2, #24: B + 8k */
		0xe1b20f9fu,	/* ldrexd r0, r1, [r2] */
		0xe1905f9fu,	/* ldrex r5, [r0]: the ring's head */
	};
	struct arch_ret_pad h = rp;

	(void)state;
	h.hist = 0x3f000000u;
	n = arm_emit_ret_exit(b, sizeof(b), &h, &trap);
	assert_true(n > 0 && n < 4096);
	in_order(b, (size_t)n, scheme, sizeof(scheme) / sizeof(scheme[0]));
	assert_true(branches_inside(b, (size_t)n) > 10);
	assert_int_equal(word_at(b, trap), ARM_BKPT_A32);
	/* A histogram's return goes where a recorded one goes: the B after
	 * the bucket's count lands where the record's publish goes on to. */
	at = find(b, (size_t)n, 0, 0xe1a23f90u);		/* the SUM's strexd */
	at = find(b, (size_t)n, (size_t)at + 4, 0xe1a23f90u);	/* the bucket's */
	assert_true(at > 0);
	long popped = target_of(b, (size_t)at + 12);
	assert_true(popped > at);
	long pub = find(b, (size_t)n, 0, 0xe5825190u);	/* str r5, [r2, #400]: published */
	assert_true(pub > 0);
	assert_int_equal(target_of(b, (size_t)pub + 4), popped);
	/* None of it without a page. */
	n = arm_emit_ret_exit(b, sizeof(b), &rp, &trap);
	assert_true(n > 0);
	assert_true(find(b, (size_t)n, 0, 0xe1b20f9fu) < 0);
	assert_true(find(b, (size_t)n, 0, 0xe0a75390u) < 0);
	h.hist = 0x100000000ull;
	assert_int_equal(arm_emit_ret_exit(b, sizeof(b), &h, &trap), -EINVAL);
	h.hist = 0xfffff000u + 8;
	assert_int_equal(arm_emit_ret_exit(b, sizeof(b), &h, &trap), -EINVAL);
	h.hist = 0x3f000004u;
	assert_int_equal(arm_emit_ret_exit(b, sizeof(b), &h, &trap), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ops),
		cmocka_unit_test(test_entry),
		cmocka_unit_test(test_stamp),
		cmocka_unit_test(test_exit),
		cmocka_unit_test(test_exit_hist),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
