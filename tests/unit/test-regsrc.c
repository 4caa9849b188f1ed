/*
 * test-regsrc.c - the register source a probe hit is collected from
 * (agent/regsrc.c), with no process: a jump pad record's registers,
 * loaded into a block, read by the agent-expression VM and collected
 * with memory into a trace frame as the agent's collector does it
 * (trace-run.c: `R` from regsrc_block, `M` from a `trace` whose address
 * comes from a register through regsrc_read), for every arch's register
 * table; and a stopped thread's source, whose registers other than the
 * general ones are fetched once asked for, and whose fetch failing is
 * an error and not stale bytes.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agent/regblock.h"
#include "agent/regsrc.h"
#include "arch/arch.h"
#include "protocol/ax.h"
#include "protocol/tbuf.h"

static const struct arch_ops *const arches[] = { &x86_64_arch_ops, &aarch64_arch_ops,
						  &arm_arch_ops };

/* A value unlike any other register's, with every byte set. */
static uint64_t pattern(unsigned int regnum)
{
	return 0x0f1e2d3c4b5a6978ull ^ ((uint64_t)regnum * 0x0101010101010101ull);
}

static uint64_t truncated(const struct arch_ops *a, unsigned int regnum, uint64_t v)
{
	unsigned int bits = a->regs[regnum].bitsize;

	return bits >= 64 ? v : v & ((1ull << bits) - 1);
}

/* A block as a record loads it: every register of at most 64 bits set
 * to its pattern, the wider ones to bytes of 0xa5. */
static uint8_t *record_block(const struct arch_ops *a, unsigned int *nregs, size_t *size)
{
	uint8_t *blk;

	*nregs = a->nregs_for(~0u);
	*size = a->regblock_size_for(~0u);
	blk = malloc(*size);
	assert_non_null(blk);
	memset(blk, 0xa5, *size);
	for (unsigned int r = 0; r < *nregs; r++)
		if (a->regs[r].bitsize <= 64)
			regblock_set(a, blk, r, pattern(r));
	return blk;
}

static void test_record_reads_every_register(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof(arches) / sizeof(arches[0]); k++) {
		const struct arch_ops *a = arches[k];
		unsigned int n;
		size_t size;
		uint8_t *blk = record_block(a, &n, &size);
		struct regsrc s;
		uint64_t v;

		regsrc_record(&s, a, ~0u, NULL, blk, 4242);
		/* Nothing to fetch, no thread behind it. */
		assert_true(s.complete);
		assert_null(s.t);
		assert_null(s.fetch_rest);
		assert_int_equal(s.tid, 4242);
		for (unsigned int r = 0; r < n; r++) {
			if (a->regs[r].bitsize > 64) {
				assert_int_equal(regsrc_read(&s, r, &v), -EINVAL);
				continue;
			}
			v = 0;
			assert_int_equal(regsrc_read(&s, r, &v), 0);
			assert_true(v == truncated(a, r, pattern(r)));
		}
		assert_int_equal(regsrc_read(&s, n, &v), -EINVAL);
		assert_ptr_equal(regsrc_block(&s), blk);
		free(blk);
	}
}

/* --- a record collected into a frame --------------------------------- */

/* The process's memory, as the collector's read sees it: MEM_LEN bytes
 * at MEM_BASE, nothing readable elsewhere. */
#define MEM_BASE 0x7ffc0000u
#define MEM_LEN 256
static uint8_t memory[MEM_LEN];

struct collect {
	struct regsrc *src;
	struct tbuf *tb;
};

static int c_read_reg(const struct ax_ctx *ctx, unsigned regnum, uint64_t *value)
{
	const struct collect *c = ctx->opaque;

	return regsrc_read(c->src, regnum, value);
}

static long c_read_mem(const struct ax_ctx *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	if (addr < MEM_BASE || addr >= MEM_BASE + MEM_LEN)
		return -EFAULT;
	if (len > MEM_BASE + MEM_LEN - addr)
		len = MEM_BASE + MEM_LEN - addr;
	memcpy(buf, memory + (addr - MEM_BASE), len);
	return (long)len;
}

static int c_trace_mem(const struct ax_ctx *ctx, uint64_t addr, uint64_t len)
{
	const struct collect *c = ctx->opaque;
	uint8_t buf[MEM_LEN];
	long n = c_read_mem(ctx, addr, buf, len < sizeof(buf) ? len : sizeof(buf));

	return n > 0 ? tbuf_add_mem(c->tb, addr, buf, (size_t)n) : 0;
}

/*
 * `collect $regs, *(char (*)[16])($sp + 8)`: the sp register through
 * the source, 16 bytes from sp + 8 into an `M` block, the whole block
 * into the `R` block.  The frame read back holds the record's block
 * byte for byte and the memory at the address the record's sp gives.
 */
static void test_record_collected_into_frame(void **state)
{
	(void)state;
	for (size_t i = 0; i < MEM_LEN; i++)
		memory[i] = (uint8_t)(i * 7 + 3);
	for (size_t k = 0; k < sizeof(arches) / sizeof(arches[0]); k++) {
		const struct arch_ops *a = arches[k];
		unsigned int n, sp = (unsigned int)a->sp_regnum;
		size_t size;
		uint8_t *blk = record_block(a, &n, &size);
		const uint64_t sp_value = MEM_BASE + 0x40;
		regblock_set(a, blk, sp, sp_value);

		struct regsrc s;
		regsrc_record(&s, a, ~0u, NULL, blk, 99);
		struct tbuf tb;
		assert_int_equal(tbuf_init(&tb, 1 << 16, size), 0);
		struct collect c = { &s, &tb };
		struct ax_ctx ctx = {
			.read_reg = c_read_reg,
			.read_mem = c_read_mem,
			.trace_mem = c_trace_mem,
			.opaque = &c,
		};
		const uint8_t code[] = {
			AX_OP_REG, (uint8_t)(sp >> 8), (uint8_t)sp,
			AX_OP_CONST8, 8, AX_OP_ADD,
			AX_OP_CONST8, 16, AX_OP_TRACE,
			AX_OP_END,
		};
		struct ax_result res;

		assert_int_equal(tbuf_frame_begin(&tb, 7), 0);
		const uint8_t *whole = regsrc_block(&s);
		assert_non_null(whole);
		assert_int_equal(tbuf_add_regs(&tb, whole), 0);
		assert_int_equal(ax_eval(code, sizeof(code), &ctx, &res), 0);
		size_t fsize;
		assert_int_equal(tbuf_frame_commit(&tb, &fsize), 0);

		struct tbuf_frame f;
		const uint8_t *regs;
		uint8_t got[16];
		size_t gotn = 0;
		assert_int_equal(tbuf_frame_get(&tb, 0, &f), 0);
		assert_int_equal(f.tpnum, 7);
		assert_int_equal(tbuf_frame_regs(&tb, &f, &regs), 0);
		assert_memory_equal(regs, blk, size);
		assert_true(regblock_get(a, regs, sp) == truncated(a, sp, sp_value));
		assert_int_equal(tbuf_frame_read_mem(&tb, &f, sp_value + 8, got, 16, &gotn), 0);
		assert_int_equal(gotn, 16);
		assert_memory_equal(got, memory + (sp_value + 8 - MEM_BASE), 16);
		/* Nothing else of memory went in. */
		assert_int_equal(tbuf_frame_read_mem(&tb, &f, sp_value, got, 8, &gotn), 0);
		assert_int_equal(gotn, 0);
		tbuf_free(&tb);
		free(blk);
	}
}

/* --- a stopped thread's source ------------------------------------------ */

static int fetches;
static int fetch_err;

/* x86-64's general registers: rax .. gs (gdb regnums 0 to 23); st0 is
 * 24, fctrl 32. */
static bool x86_general(unsigned int regnum)
{
	return regnum < 24;
}

/* What regs.c's fetch does: the rest of the block from the kernel. */
static int fake_fetch_rest(struct regsrc *s)
{
	fetches++;
	if (fetch_err)
		return fetch_err;
	memset(s->blk + s->arch->regs[24].offset, 0x11,
	       s->arch->regblock_size_for(s->features) - s->arch->regs[24].offset);
	return 0;
}

static void test_thread_fetches_the_rest_when_asked(void **state)
{
	const struct arch_ops *a = &x86_64_arch_ops;
	unsigned int n;
	size_t size;
	uint8_t *blk = record_block(a, &n, &size);
	struct regsrc s = {
		.arch = a, .features = ~0u, .tid = 1234, .blk = blk,
		.complete = false, .is_general = x86_general,
		.fetch_rest = fake_fetch_rest,
	};
	uint64_t v;

	(void)state;
	fetches = 0;
	fetch_err = 0;
	assert_int_equal(regsrc_read(&s, a->sp_regnum, &v), 0);
	assert_true(v == pattern((unsigned int)a->sp_regnum));
	assert_int_equal(fetches, 0);	/* a general register: fetched already */
	assert_int_equal(regsrc_read(&s, 32, &v), 0);	/* fctrl: the rest */
	assert_int_equal(fetches, 1);
	assert_true(v == 0x11111111u);
	assert_ptr_equal(regsrc_block(&s), blk);
	assert_int_equal(fetches, 2);

	/* The thread is gone: an error, never the block's old bytes. */
	fetch_err = -ESRCH;
	assert_int_equal(regsrc_read(&s, 32, &v), -ESRCH);
	assert_null(regsrc_block(&s));
	assert_int_equal(regsrc_read(&s, 0, &v), 0);
	assert_true(v == pattern(0));
	free(blk);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_reads_every_register),
		cmocka_unit_test(test_record_collected_into_frame),
		cmocka_unit_test(test_thread_fetches_the_rest_when_asked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
