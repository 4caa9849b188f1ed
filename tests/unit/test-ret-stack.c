/*
 * test-ret-stack.c - which return-probe entries are stale (agent/
 * ret-stack.c): the shadow stack of a thread after longjmp, a signal
 * handler on a sigaltstack, tail calls and recursion, for both places a
 * return address lives (x86-64: a stack slot, whose memory is asked
 * through the callback; aarch64: the link register, by stack pointers
 * alone, the kernel's uretprobe rule).
 *
 * The fake stack is the set of slots that still hold the trampoline.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "agent/ret-stack.h"

#define MAX 16

struct fake_stack {
	uint64_t tramp_at[MAX];	/* slots holding the trampoline */
	size_t n;
	unsigned int asked;
};

static bool holds(uint64_t slot, void *arg)
{
	struct fake_stack *f = arg;

	f->asked++;
	for (size_t i = 0; i < f->n; i++)
		if (f->tramp_at[i] == slot)
			return true;
	return false;
}

static struct ret_entry entries[MAX];

/* A stack of entries with these slots, oldest first; ret = slot + 1. */
static struct ret_stack make(const uint64_t *slots, size_t n)
{
	struct ret_stack rs = { .e = entries, .n = n, .cap = MAX };

	for (size_t i = 0; i < n; i++)
		entries[i] = (struct ret_entry){ .slot = slots[i], .ret = slots[i] + 1 };
	return rs;
}

static void assert_slots(const struct ret_stack *rs, const uint64_t *slots,
			 size_t n)
{
	assert_int_equal(rs->n, n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(rs->e[i].slot, slots[i]);
		assert_int_equal(rs->e[i].ret, slots[i] + 1);
	}
}

/* longjmp from the innermost of three frames back into the outermost,
 * which calls a probed function again: the two frames in between are
 * gone (their slots reused, no trampoline there), the outer one stays. */
static void test_longjmp_stack(void **state)
{
	static const uint64_t in[] = { 0x7fe0, 0x7f00, 0x7e00 };
	static const uint64_t out[] = { 0x7fe0 };
	struct fake_stack f = { { 0x7fe0 }, 1, 0 };
	struct ret_stack rs = make(in, 3);

	(void)state;
	ret_stack_drop_stale_entry(&rs, 0x7f80, false, false, holds, &f);
	assert_slots(&rs, out, 1);
	/* the entry above sp was not even looked at */
	assert_int_equal(f.asked, 2);
	/* the same call again after the longjmp: its slot is the old
	 * entry's, which now holds the call's own return address */
	static const uint64_t again[] = { 0x7fe0, 0x7f80, 0x7e00 };
	rs = make(again, 3);
	ret_stack_drop_stale_entry(&rs, 0x7f80, false, false, holds, &f);
	assert_slots(&rs, out, 1);
}

/* A signal handler on a sigaltstack (above the thread's stack) enters a
 * probed function: the interrupted frames are below its sp but their
 * slots still hold the trampoline, so they stay. */
static void test_sigaltstack(void **state)
{
	static const uint64_t in[] = { 0x7fe0, 0x7f00 };
	struct fake_stack f = { { 0x7fe0, 0x7f00 }, 2, 0 };
	struct ret_stack rs = make(in, 2);

	(void)state;
	ret_stack_drop_stale_entry(&rs, 0x90000, false, false, holds, &f);
	assert_slots(&rs, in, 2);
	/* on the link register the same entries go: sp alone decides */
	ret_stack_drop_stale_entry(&rs, 0x90000, true, false, holds, &f);
	assert_int_equal(rs.n, 0);
}

/* Link register: an entry at the same sp is the caller's frame unless
 * x30 already is the trampoline (a tail call chains on it). */
static void test_link_same_sp(void **state)
{
	static const uint64_t in[] = { 0x7f00, 0x7e00 };
	static const uint64_t outer[] = { 0x7f00 };
	struct fake_stack f = { { 0 }, 0, 0 };
	struct ret_stack rs = make(in, 2);

	(void)state;
	ret_stack_drop_stale_entry(&rs, 0x7e00, true, true, holds, &f);
	assert_slots(&rs, in, 2);
	ret_stack_drop_stale_entry(&rs, 0x7e00, true, false, holds, &f);
	assert_slots(&rs, outer, 1);
	assert_int_equal(f.asked, 0);	/* no memory read for x30 */
	/* a deeper entry never drops an older one */
	rs = make(in, 2);
	ret_stack_drop_stale_entry(&rs, 0x7d00, true, false, holds, &f);
	assert_slots(&rs, in, 2);
}

/* Stack: a tail call (jmp) lands with [sp] already the trampoline: the
 * entry of that slot is kept for the chain. */
static void test_tail_call_stack(void **state)
{
	static const uint64_t in[] = { 0x7f00, 0x7e00 };
	struct fake_stack f = { { 0x7f00, 0x7e00 }, 2, 0 };
	struct ret_stack rs = make(in, 2);

	(void)state;
	ret_stack_drop_stale_entry(&rs, 0x7e00, false, true, holds, &f);
	assert_slots(&rs, in, 2);
}

/* A return through entry 1: newer entries below its slot whose frames
 * were longjmp'd past go; on the stack one whose slot still holds the
 * trampoline (another stack's frame) stays, on the link register not. */
static void test_return(void **state)
{
	static const uint64_t in[] = { 0x7fe0, 0x7f00, 0x7e00, 0x7d00 };
	static const uint64_t kept[] = { 0x7fe0, 0x7f00, 0x7d00 };
	struct fake_stack f = { { 0x7fe0, 0x7f00, 0x7d00 }, 3, 0 };
	struct ret_stack rs = make(in, 4);

	(void)state;
	ret_stack_drop_stale_return(&rs, 1, 0x7f00, false, holds, &f);
	assert_slots(&rs, kept, 3);
	rs = make(in, 4);
	ret_stack_drop_stale_return(&rs, 1, 0x7f00, true, holds, &f);
	assert_slots(&rs, in, 2);
	/* the newest entry returning: nothing newer to drop */
	rs = make(in, 4);
	ret_stack_drop_stale_return(&rs, 3, 0x7d00, true, holds, &f);
	assert_slots(&rs, in, 4);
}

/* find: the newest entry of a slot (a chain shares one); drop keeps the
 * others' order. */
static void test_find_drop(void **state)
{
	static const uint64_t in[] = { 0x7f00, 0x7e00, 0x7e00, 0x7d00 };
	static const uint64_t after[] = { 0x7f00, 0x7e00, 0x7d00 };
	struct ret_stack rs = make(in, 4);

	(void)state;
	assert_int_equal(ret_stack_find(&rs, 0x7e00), 2);
	assert_int_equal(ret_stack_find(&rs, 0x7f00), 0);
	assert_int_equal(ret_stack_find(&rs, 0x1234), -1);
	ret_stack_drop(&rs, 2);
	assert_slots(&rs, after, 3);
	assert_int_equal(ret_stack_find(&rs, 0x7e00), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_longjmp_stack),
		cmocka_unit_test(test_sigaltstack),
		cmocka_unit_test(test_link_same_sp),
		cmocka_unit_test(test_tail_call_stack),
		cmocka_unit_test(test_return),
		cmocka_unit_test(test_find_drop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
