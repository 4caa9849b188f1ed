/*
 * test-regblock.c - single registers of a gdb register block, and the
 * emulator's register view, driven by every arch's register table.
 *
 * Nothing here names a register: each check walks the arch's table
 * (offsets and bitsizes) and asserts what must hold for any arch: a set
 * register reads back truncated to its width, no other byte of the block
 * changes, and struct arch_gpregs round-trips through the block with
 * gpr[i] = regnum i below pc_regnum.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agent/regblock.h"
#include "arch/arch.h"

static const struct arch_ops *const arches[] = { &x86_64_arch_ops, &aarch64_arch_ops,
						  &arm_arch_ops };

/* A value unlike any other register's, with every byte set. */
static uint64_t pattern(unsigned int regnum)
{
	return 0x8192a3b4c5d6e7f0ull ^ ((uint64_t)regnum * 0x0101010101010101ull);
}

static uint64_t truncated(const struct arch_ops *a, unsigned int regnum, uint64_t v)
{
	unsigned int bits = a->regs[regnum].bitsize;

	return bits >= 64 ? v : v & ((1ull << bits) - 1);
}

/* The largest block the arch has, every feature on. */
static size_t block_size(const struct arch_ops *a, unsigned int *nregs)
{
	*nregs = a->nregs_for(~0u);
	return a->regblock_size_for(~0u);
}

static void test_set_get_each(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof(arches) / sizeof(arches[0]); k++) {
		const struct arch_ops *a = arches[k];
		unsigned int n;
		size_t size = block_size(a, &n);
		uint8_t *blk = malloc(size), *before = malloc(size);

		assert_non_null(blk);
		assert_non_null(before);
		for (unsigned int r = 0; r < n; r++) {
			const struct arch_reg *reg = &a->regs[r];
			if (reg->bitsize > 64)
				continue;
			memset(blk, 0x5a, size);
			memcpy(before, blk, size);
			regblock_set(a, blk, r, pattern(r));
			assert_int_equal(regblock_get(a, blk, r), truncated(a, r, pattern(r)));
			/* Nothing outside the register's bytes moved. */
			for (size_t i = 0; i < size; i++)
				if (i < reg->offset || i >= reg->offset + reg->bitsize / 8)
					assert_int_equal(blk[i], before[i]);
		}
		free(blk);
		free(before);
	}
}

static void test_gpregs_round_trip(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof(arches) / sizeof(arches[0]); k++) {
		const struct arch_ops *a = arches[k];
		unsigned int n;
		size_t size = block_size(a, &n);
		uint8_t *blk = calloc(1, size), *copy = calloc(1, size);
		struct arch_gpregs g, g2;

		assert_non_null(blk);
		assert_non_null(copy);
		assert_true(a->pc_regnum > 0 && a->flags_regnum >= 0);
		assert_true((unsigned int)a->pc_regnum <= sizeof(g.gpr) / sizeof(g.gpr[0]));
		for (unsigned int r = 0; r < n; r++)
			if (a->regs[r].bitsize <= 64)
				regblock_set(a, blk, r, pattern(r));
		regblock_to_gpregs(a, blk, &g);
		for (int i = 0; i < a->pc_regnum; i++)
			assert_int_equal(g.gpr[i], truncated(a, i, pattern(i)));
		assert_int_equal(g.pc, truncated(a, a->pc_regnum, pattern(a->pc_regnum)));
		assert_int_equal(g.flags, truncated(a, a->flags_regnum, pattern(a->flags_regnum)));
		/* The view written back changes nothing. */
		memcpy(copy, blk, size);
		regblock_from_gpregs(a, copy, &g);
		assert_memory_equal(copy, blk, size);
		/* Changes made through the view land in those registers only. */
		g.gpr[0] += 1;
		g.pc += 2;
		regblock_from_gpregs(a, copy, &g);
		regblock_to_gpregs(a, copy, &g2);
		assert_int_equal(g2.gpr[0], truncated(a, 0, g.gpr[0]));
		assert_int_equal(g2.pc, truncated(a, a->pc_regnum, g.pc));
		for (unsigned int r = 1; r < n; r++)
			if (a->regs[r].bitsize <= 64 && (int)r != a->pc_regnum)
				assert_int_equal(regblock_get(a, copy, r), regblock_get(a, blk, r));
		free(blk);
		free(copy);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set_get_each),
		cmocka_unit_test(test_gpregs_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
