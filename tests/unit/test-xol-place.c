/*
 * test-xol-place.c - where the agent puts an XOL area (agent/xol-place.c),
 * for each arch's reach: the nearest free place, and none rather than
 * one beyond the reach (aarch64: a B back from the slot goes +-128 MiB;
 * x86-64: a rel32 jmp +-2 GiB).
 *
 * Maps are written as /proc/PID/maps would list them; each case says
 * what the place must be, and every place found is checked against
 * arch_xol_in_reach and, on aarch64, against the B encoder's own reach
 * from the area's last slot word.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent/xol-place.h"
#include "arch/aarch64/aarch64.h"
#include "arch/arm/arm.h"

#define AREA 4096ull
#define MIB (1ull << 20)

static uint64_t place(const struct arch_ops *ops, const struct xol_map_range *m,
		      size_t n, uint64_t near)
{
	uint64_t at = xol_place(m, n, near, AREA, ops);

	if (at) {
		assert_true(arch_xol_in_reach(ops, near, at, AREA));
		assert_int_equal(at % AREA, 0);
		for (size_t i = 0; i < n; i++)
			assert_true(at + AREA <= m[i].start || at >= m[i].end);
		if (ops == &aarch64_arch_ops)
			assert_true(aarch64_in_b_reach(at + AREA - 4, near + 4) &&
				    aarch64_in_b_reach(at, near + 4));
	}
	return at;
}

/* A small program and its libraries: the gap next to the code wins. */
static void test_nearest(void **state)
{
	static const struct xol_map_range m[] = {
		{ 0x400000, 0x401000 }, { 0x401000, 0x500000 },
		{ 0x7f0000000000, 0x7f0000200000 }, { 0x7ffffffde000, 0x7ffffffff000 },
	};
	const struct arch_ops *arches[] = { &aarch64_arch_ops, &x86_64_arch_ops };

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(place(arches[i], m, 4, 0x400100), 0x3ff000);
		assert_int_equal(place(arches[i], m, 4, 0x4ff000), 0x500000);
		assert_int_equal(place(arches[i], m, 4, 0x7f0000100000), 0x7f0000200000);
	}
}

/*
 * A library in the middle of 600 MiB of mappings: the nearest gap is
 * 300 MiB away.  x86-64 takes it; aarch64 must not (its B back cannot
 * reach): no place at all, and the probe is refused.
 */
static void test_beyond_b(void **state)
{
	const uint64_t lib = 0x7f0040000000ull;
	const struct xol_map_range m[] = {
		{ lib - 300 * MIB, lib }, { lib, lib + 0x100000 },
		{ lib + 0x100000, lib + 300 * MIB },
	};

	(void)state;
	assert_int_equal(place(&x86_64_arch_ops, m, 3, lib + 0x800), lib + 300 * MIB);
	assert_int_equal(place(&aarch64_arch_ops, m, 3, lib + 0x800), 0);
}

/* The edge of aarch64's reach: a gap whose nearest page still fits, and
 * the same gap one page farther. */
static void test_edge(void **state)
{
	const struct arch_ops *ops = &aarch64_arch_ops;
	const uint64_t near = 0x10000000000ull;
	const uint64_t reach = ops->xol_reach;
	/* everything mapped from the floor up to the gap, the gap one page */
	uint64_t gap = (near + reach - AREA) & ~(AREA - 1);
	struct xol_map_range m[] = {
		{ 0x10000, gap }, { gap + AREA, XOL_PLACE_TOP },
	};

	(void)state;
	while (!arch_xol_in_reach(ops, near, gap, AREA))
		gap -= AREA;
	m[0].end = gap;
	m[1].start = gap + AREA;
	assert_int_equal(place(ops, m, 2, near), gap);
	m[0].end = gap + AREA;
	m[1].start = gap + 2 * AREA;
	assert_false(arch_xol_in_reach(ops, near, gap + AREA, AREA));
	assert_int_equal(place(ops, m, 2, near), 0);
	/* below: the mirror image */
	gap = (near - reach + AREA) & ~(AREA - 1);
	while (!arch_xol_in_reach(ops, near, gap, AREA))
		gap += AREA;
	m[0].end = gap;
	m[1].start = gap + AREA;
	assert_int_equal(place(ops, m, 2, near), gap);
	m[0].end = gap - AREA;
	m[1].start = gap;
	assert_int_equal(place(ops, m, 2, near), 0);
}

/* Overlapping and unsorted-looking entries (a mapping inside another),
 * a gap too small, and nothing mapped at all. */
static void test_odd_maps(void **state)
{
	static const struct xol_map_range m[] = {
		{ 0x400000, 0x600000 }, { 0x500000, 0x501000 },
		{ 0x600800, 0x700000 },
	};

	(void)state;
	/* 0x600000-0x600800 is too small: below 0x400000 or above 0x700000 */
	assert_int_equal(place(&aarch64_arch_ops, m, 3, 0x600400), 0x700000);
	assert_int_equal(place(&aarch64_arch_ops, m, 3, 0x400400), 0x3ff000);
	assert_int_equal(place(&aarch64_arch_ops, NULL, 0, 0x12345678), 0x12345000);
	/* below the floor: the floor */
	assert_int_equal(place(&aarch64_arch_ops, NULL, 0, 0x100), XOL_PLACE_FLOOR);
}

/* A gap of exactly one area takes it; a gap one byte short is passed
 * over for the nearer of the places around it. */
static void test_exact_gap(void **state)
{
	const struct xol_map_range fits[] = {
		{ 0x400000, 0x500000 }, { 0x501000, 0x600000 },
	};
	const struct xol_map_range short_gap[] = {
		{ 0x400000, 0x500000 }, { 0x500fff, 0x600000 },
	};

	(void)state;
	assert_int_equal(place(&aarch64_arch_ops, fits, 2, 0x500800), 0x500000);
	assert_int_equal(place(&x86_64_arch_ops, fits, 2, 0x500800), 0x500000);
	/* below 0x400000 is 0x101800 away, above 0x600000 0xff800 */
	assert_int_equal(place(&aarch64_arch_ops, short_gap, 2, 0x500800), 0x600000);
}

/* A jump pad's span is larger than a page and aligned to its size: the
 * 8 KiB gap beside the probe is too small for 16 KiB; the place below
 * the mappings is the nearer. */
static void test_larger_span(void **state)
{
	const uint64_t span = 0x4000;
	const struct xol_map_range m[] = {
		{ 0x400000, 0x401000 }, { 0x403000, 0x500000 },
	};
	uint64_t at = xol_place(m, 2, 0x401800, span, &aarch64_arch_ops);

	(void)state;
	assert_int_equal(at, 0x3fc000);
	assert_int_equal(at % span, 0);
	assert_true(arch_xol_in_reach(&aarch64_arch_ops, 0x401800, at, span));
}

/* The top of the address space: the last page below XOL_PLACE_TOP is a
 * place; with everything mapped up to it there is none. */
static void test_top(void **state)
{
	const struct xol_map_range last_page[] = {
		{ XOL_PLACE_FLOOR, XOL_PLACE_TOP - AREA },
	};
	const struct xol_map_range full[] = {
		{ XOL_PLACE_FLOOR, XOL_PLACE_TOP },
	};

	(void)state;
	assert_int_equal(place(&x86_64_arch_ops, last_page, 1, XOL_PLACE_TOP - 0x100000),
			 XOL_PLACE_TOP - AREA);
	assert_int_equal(place(&x86_64_arch_ops, full, 1, 0x400000), 0);
}

/*
 * A far pad's area on 32-bit ARM (xol_place_far): anywhere, the nearest
 * free place; beyond (PROBE_AGENT_FAR_PADS), every byte XOL_FAR_MIN away
 * from the probe, so neither B nor B.W reaches it; never above the 3 GiB
 * user space.
 */
static void test_far(void **state)
{
	/* a static program at 0x10000, its heap, a stack below 3 GiB */
	static const struct xol_map_range m[] = {
		{ 0x10000, 0x90000 }, { 0xa0000, 0x200000 }, { 0xbefdf000, 0xbf000000 },
		{ 0xffff0000, 0xffff1000 },
	};
	static const struct xol_map_range busy[] = {
		{ 0x10000, 0x90000 }, { 0x90000, 0xbf000000 },
	};
	const uint64_t near = 0x12340;
	uint64_t at;

	(void)state;
	/* anywhere: the gap right after the text */
	at = xol_place_far(m, 4, near, AREA, false, &arm_arch_ops);
	assert_int_equal(at, 0x90000);
	/* beyond: 64 MiB past the probe, rounded up to an area */
	at = xol_place_far(m, 4, near, AREA, true, &arm_arch_ops);
	assert_int_equal(at, (near + XOL_FAR_MIN + AREA - 1) & ~(AREA - 1));
	assert_false(arm_in_b_reach(near, at));
	assert_false(arm_in_b_reach(near, at + AREA - 4));
	assert_false(arm_in_bw_reach(near, at));
	assert_false(arm_in_b_reach(at + AREA - 8, near + 4));
	/* below the probe when that is nearer: a probe just under the stack */
	at = xol_place_far(m, 4, 0xbefe0000, AREA, true, &arm_arch_ops);
	assert_int_equal(at, 0xbefe0000 - XOL_FAR_MIN - AREA);
	assert_false(arm_in_b_reach(0xbefe0000, at + AREA - 4));
	/* nothing free far enough below 3 GiB: none (not above it) */
	assert_int_equal(xol_place_far(busy, 2, near, AREA, true, &arm_arch_ops), 0);
	assert_int_equal(xol_place_far(busy, 2, near, AREA, false, &arm_arch_ops), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nearest),
		cmocka_unit_test(test_beyond_b),
		cmocka_unit_test(test_edge),
		cmocka_unit_test(test_odd_maps),
		cmocka_unit_test(test_exact_gap),
		cmocka_unit_test(test_larger_span),
		cmocka_unit_test(test_top),
		cmocka_unit_test(test_far),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
