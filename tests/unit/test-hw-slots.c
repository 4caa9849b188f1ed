/*
 * test-hw-slots.c - gdb's hardware breakpoints and watchpoints (Z1-Z4)
 * packed into debug register slots (agent/hw-slots.c), for the two slot
 * models the agent knows: one shared pool of 4 slots that take either
 * kind and watch up to 8 bytes each (x86-64's DR0-3), and separate
 * breakpoint and watchpoint slots (aarch64's DBGBCR/DBGWCR pairs).
 *
 * Each case writes out the slots the pieces must take: a range is cut
 * into aligned pieces no longer than a slot covers, the same piece of
 * the same kind shares one slot, and a point that does not fit leaves
 * every slot as it was.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "agent/hw-slots.h"

static const struct ptrace_hw_caps x86 = {
	.n_break = 4, .shared = true, .max_len = 8, .can_read_watch = false,
};
static const struct ptrace_hw_caps arm = {
	.n_break = 6, .n_watch = 4, .shared = false, .max_len = 8,
	.can_read_watch = true,
};

static void assert_slot(const struct hw_slot *s, uint64_t addr,
			unsigned int len, enum hw_kind kind, unsigned int refs)
{
	assert_int_equal(s->refs, refs);
	if (!refs)
		return;
	assert_int_equal(s->addr, addr);
	assert_int_equal(s->len, len);
	assert_int_equal(s->kind, kind);
}

static unsigned int used(const struct hw_slot *slots)
{
	unsigned int n = 0;

	for (int i = 0; i < MAX_HW_SLOTS; i++)
		n += slots[i].refs != 0;
	return n;
}

/* 16 bytes at 0x1004: 4 + 8 + 4, each aligned to its length. */
static void test_pieces(void **state)
{
	struct hw_slot s[MAX_HW_SLOTS] = { 0 };

	(void)state;
	assert_int_equal(hw_slots_take(s, &x86, HW_WRITE, 0x1004, 16), 0);
	assert_slot(&s[0], 0x1004, 4, HW_WRITE, 1);
	assert_slot(&s[1], 0x1008, 8, HW_WRITE, 1);
	assert_slot(&s[2], 0x1010, 4, HW_WRITE, 1);
	assert_int_equal(used(s), 3);
	/* an odd byte: 1, then 2, then 4 up to the next 8-byte boundary */
	memset(s, 0, sizeof(s));
	assert_int_equal(hw_slots_take(s, &x86, HW_ACCESS, 0x2001, 7), 0);
	assert_slot(&s[0], 0x2001, 1, HW_ACCESS, 1);
	assert_slot(&s[1], 0x2002, 2, HW_ACCESS, 1);
	assert_slot(&s[2], 0x2004, 4, HW_ACCESS, 1);
	/* length 0 (a Z1 kind 0 from a stub that says so): one byte */
	memset(s, 0, sizeof(s));
	assert_int_equal(hw_slots_take(s, &x86, HW_EXEC, 0x401000, 0), 0);
	assert_slot(&s[0], 0x401000, 1, HW_EXEC, 1);
}

/* The same piece of the same kind shares a slot; another kind does not;
 * dropping gives the references back one by one. */
static void test_sharing(void **state)
{
	struct hw_slot s[MAX_HW_SLOTS] = { 0 };

	(void)state;
	assert_int_equal(hw_slots_take(s, &x86, HW_WRITE, 0x3000, 8), 0);
	assert_int_equal(hw_slots_take(s, &x86, HW_WRITE, 0x3000, 8), 0);
	assert_slot(&s[0], 0x3000, 8, HW_WRITE, 2);
	assert_int_equal(hw_slots_take(s, &x86, HW_ACCESS, 0x3000, 8), 0);
	assert_slot(&s[1], 0x3000, 8, HW_ACCESS, 1);
	assert_int_equal(used(s), 2);
	hw_slots_drop(s, &x86, HW_WRITE, 0x3000, 8);
	assert_slot(&s[0], 0x3000, 8, HW_WRITE, 1);
	hw_slots_drop(s, &x86, HW_WRITE, 0x3000, 8);
	assert_slot(&s[0], 0, 0, HW_EXEC, 0);
	/* the freed slot is the first one a new point takes */
	assert_int_equal(hw_slots_take(s, &x86, HW_EXEC, 0x401000, 1), 0);
	assert_slot(&s[0], 0x401000, 1, HW_EXEC, 1);
	assert_slot(&s[1], 0x3000, 8, HW_ACCESS, 1);
}

/* x86: 4 slots for both kinds.  A point needing 2 slots when 1 is left
 * fails and takes none; a 1-slot point then still fits. */
static void test_all_or_nothing(void **state)
{
	struct hw_slot s[MAX_HW_SLOTS] = { 0 }, before[MAX_HW_SLOTS];

	(void)state;
	assert_int_equal(hw_slots_take(s, &x86, HW_EXEC, 0x401000, 1), 0);
	assert_int_equal(hw_slots_take(s, &x86, HW_WRITE, 0x5000, 8), 0);
	assert_int_equal(hw_slots_take(s, &x86, HW_WRITE, 0x6000, 8), 0);
	memcpy(before, s, sizeof(s));
	assert_int_equal(hw_slots_take(s, &x86, HW_WRITE, 0x7000, 16), -ENOSPC);
	assert_memory_equal(s, before, sizeof(s));
	assert_int_equal(used(s), 3);
	assert_int_equal(hw_slots_take(s, &x86, HW_WRITE, 0x7000, 8), 0);
	assert_slot(&s[3], 0x7000, 8, HW_WRITE, 1);
	assert_int_equal(hw_slots_take(s, &x86, HW_EXEC, 0x402000, 1), -ENOSPC);
	/* nothing beyond the arch's 4, whatever MAX_HW_SLOTS allows */
	assert_int_equal(used(s), 4);
}

/* aarch64: breakpoints in slots 0-5, watchpoints in 6-9, each pool full
 * on its own. */
static void test_separate_pools(void **state)
{
	struct hw_slot s[MAX_HW_SLOTS] = { 0 };

	(void)state;
	assert_int_equal(hw_slots_take(s, &arm, HW_WRITE, 0x9000, 8), 0);
	assert_slot(&s[6], 0x9000, 8, HW_WRITE, 1);
	for (unsigned int i = 0; i < 6; i++) {
		assert_int_equal(hw_slots_take(s, &arm, HW_EXEC, 0x400000 + 4 * i, 4), 0);
		assert_slot(&s[i], 0x400000 + 4 * i, 4, HW_EXEC, 1);
	}
	assert_int_equal(hw_slots_take(s, &arm, HW_EXEC, 0x400100, 4), -ENOSPC);
	/* the watchpoints' slots are still there: 3 left of 4 */
	assert_int_equal(hw_slots_take(s, &arm, HW_READ, 0xa000, 24), 0);
	assert_slot(&s[7], 0xa000, 8, HW_READ, 1);
	assert_slot(&s[8], 0xa008, 8, HW_READ, 1);
	assert_slot(&s[9], 0xa010, 8, HW_READ, 1);
	assert_int_equal(hw_slots_take(s, &arm, HW_WRITE, 0xb000, 1), -ENOSPC);
	assert_int_equal(used(s), 10);
	hw_slots_drop(s, &arm, HW_READ, 0xa000, 24);
	assert_int_equal(used(s), 7);
	assert_int_equal(s[7].refs + s[8].refs + s[9].refs, 0);
}

/* Which slot a trap's reported address names: a breakpoint's word, a
 * watch slot's granule (8 bytes on aarch64, 4 on 32-bit ARM), else the
 * watch slot nearest above (an access that began below the watch). */
static void test_hit(void **state)
{
	struct hw_slot s[MAX_HW_SLOTS] = { 0 };

	(void)state;
	assert_int_equal(hw_slots_hit(s, &arm, 0x400000, 8), -ENOENT);
	assert_int_equal(hw_slots_take(s, &arm, HW_EXEC, 0x400000, 4), 0);
	assert_int_equal(hw_slots_take(s, &arm, HW_EXEC, 0x400102, 2), 0);
	assert_int_equal(hw_slots_take(s, &arm, HW_WRITE, 0x9004, 4), 0);
	assert_int_equal(hw_slots_take(s, &arm, HW_WRITE, 0x9020, 8), 0);
	assert_int_equal(hw_slots_hit(s, &arm, 0x400000, 8), 0);
	assert_int_equal(hw_slots_hit(s, &arm, 0x400100, 8), 1);	/* its word */
	assert_int_equal(hw_slots_hit(s, &arm, 0x400104, 8), -ENOENT);
	assert_int_equal(hw_slots_hit(s, &arm, 0x9000, 8), 6);	/* its doubleword */
	assert_int_equal(hw_slots_hit(s, &arm, 0x9000, 4), 6);	/* nearest above */
	assert_int_equal(hw_slots_hit(s, &arm, 0x9018, 4), 7);	/* nearest above */
	assert_int_equal(hw_slots_hit(s, &arm, 0x9024, 8), 7);
	assert_int_equal(hw_slots_hit(s, &arm, 0x9030, 8), -ENOENT);	/* above all */
	hw_slots_drop(s, &arm, HW_WRITE, 0x9020, 8);
	assert_int_equal(hw_slots_hit(s, &arm, 0x9018, 4), -ENOENT);	/* 7 is off */
	assert_int_equal(hw_slots_hit(s, &arm, 0x9001, 4), 6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pieces),
		cmocka_unit_test(test_sharing),
		cmocka_unit_test(test_all_or_nothing),
		cmocka_unit_test(test_separate_pools),
		cmocka_unit_test(test_hit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
