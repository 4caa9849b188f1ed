/*
 * test-ax.c - the agent-expression verifier, interpreter and disassembler.
 *
 * The expressions of the first group are the bytes gdb 13.1 really sent
 * (shared/research/agent-expressions.md, x86-64 -O0 unless noted), written
 * as the hex of the QTDP/Z0 packet, and run against a fake target: a
 * register file, three memory regions laid out like the test program's
 * frame, a TSV store, and logs of every traced block, traced TSV and
 * printf output.  Each test checks the exact result and exactly which
 * blocks were collected.  The disassembly of each is checked too, which
 * also proves the goto offsets in the hex.
 *
 * Frame of compute() in the fake: rbp = 0x7fffffffe600, so the DWARF CFA
 * (rbp + 16) is 0x7fffffffe610 and a = CFA-36, i = CFA-24, b = CFA-40
 * (b's offset is ours; the bytecode shape is gdb's), local2/msg = CFA-32,
 * p = CFA-48.
 *
 * The second group pins down each opcode's semantics, including the
 * corners where gdbserver is undefined (see ax.h); the third checks every
 * verifier rejection and its message.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "protocol/ax.h"
#include "protocol/ax-plan.h"
#include "protocol/ax-simple.h"
#include "protocol/rsp.h"

/* --- The fake target ---------------------------------------------------- */

#define RBP 0x7fffffffe600ull
#define CFA (RBP + 16)
#define ADDR_A (CFA - 36)
#define ADDR_B (CFA - 40)
#define ADDR_I (CFA - 24)
#define ADDR_LOCAL2 (CFA - 32)
#define ADDR_P (CFA - 48)
#define STACK_BASE 0x7fffffffe000ull
#define DATA_BASE 0x555555558000ull
#define ADDR_GARRAY (DATA_BASE + 0x20)
#define ADDR_GS (DATA_BASE + 0x60)
#define ADDR_COUNTER (DATA_BASE + 0x84)
#define HEAP_BASE 0x5555555592a0ull

struct region {
	uint64_t base;
	uint8_t bytes[0x800];
};

struct block {
	uint64_t addr, len;
};

struct fake {
	struct ax_ctx ctx;		/* first: callbacks get &fake.ctx */
	uint64_t regs[32];
	struct region mem[3];		/* stack, data, heap */
	struct {
		unsigned num;
		int64_t value;
	} tsv[8];
	unsigned ntsv;
	struct block blocks[32];
	unsigned nblocks;
	unsigned traced_tsv[8];
	unsigned ntraced_tsv;
	char out[2048];
	size_t nout;
	unsigned out_calls;
	int trace_errno;		/* trace_mem fails with it if set */
};

static struct fake F;

static struct fake *fake_of(const struct ax_ctx *ctx)
{
	return (struct fake *)ctx;
}

static int fake_read_reg(const struct ax_ctx *ctx, unsigned regnum,
			 uint64_t *value)
{
	if (regnum >= 32)
		return -EINVAL;
	*value = fake_of(ctx)->regs[regnum];
	return 0;
}

static long fake_read_mem(const struct ax_ctx *ctx, uint64_t addr, void *buf,
			  size_t len)
{
	struct fake *f = fake_of(ctx);

	for (int i = 0; i < 3; i++) {
		struct region *r = &f->mem[i];
		if (addr < r->base || addr - r->base >= sizeof(r->bytes))
			continue;
		size_t off = addr - r->base;
		size_t n = sizeof(r->bytes) - off < len ? sizeof(r->bytes) - off
							: len;
		memcpy(buf, r->bytes + off, n);
		return (long)n;
	}
	return -EFAULT;
}

static int fake_tsv_get(const struct ax_ctx *ctx, unsigned num,
			int64_t *value)
{
	struct fake *f = fake_of(ctx);

	for (unsigned i = 0; i < f->ntsv; i++) {
		if (f->tsv[i].num == num) {
			*value = f->tsv[i].value;
			return 0;
		}
	}
	return -ENOENT;
}

static int fake_tsv_set(const struct ax_ctx *ctx, unsigned num,
			int64_t value)
{
	struct fake *f = fake_of(ctx);

	for (unsigned i = 0; i < f->ntsv; i++) {
		if (f->tsv[i].num == num) {
			f->tsv[i].value = value;
			return 0;
		}
	}
	return -ENOENT;
}

static int fake_trace_mem(const struct ax_ctx *ctx, uint64_t addr,
			  uint64_t len)
{
	struct fake *f = fake_of(ctx);

	if (f->trace_errno)
		return -f->trace_errno;
	assert_true(f->nblocks < 32);
	f->blocks[f->nblocks].addr = addr;
	f->blocks[f->nblocks].len = len;
	f->nblocks++;
	return 0;
}

static int fake_trace_tsv(const struct ax_ctx *ctx, unsigned num)
{
	struct fake *f = fake_of(ctx);
	int64_t v;

	if (fake_tsv_get(ctx, num, &v))
		return -ENOENT;
	assert_true(f->ntraced_tsv < 8);
	f->traced_tsv[f->ntraced_tsv++] = num;
	return 0;
}

static int fake_printf_out(const struct ax_ctx *ctx, const char *text,
			   size_t len)
{
	struct fake *f = fake_of(ctx);

	assert_true(f->nout + len < sizeof(f->out));
	memcpy(f->out + f->nout, text, len);
	f->nout += len;
	f->out[f->nout] = '\0';
	f->out_calls++;
	return 0;
}

static uint8_t *mem_at(uint64_t addr, size_t len)
{
	for (int i = 0; i < 3; i++) {
		struct region *r = &F.mem[i];
		if (addr >= r->base && addr - r->base + len <= sizeof(r->bytes))
			return r->bytes + (addr - r->base);
	}
	fail_msg("no fake memory at 0x%llx", (unsigned long long)addr);
	return NULL;
}

static void put(uint64_t addr, uint64_t v, size_t size)
{
	uint8_t *p = mem_at(addr, size);

	for (size_t i = 0; i < size; i++)
		p[i] = (uint8_t)(v >> (8 * i));	/* little-endian target */
}

static void put_str(uint64_t addr, const char *s)
{
	memcpy(mem_at(addr, strlen(s) + 1), s, strlen(s) + 1);
}

static void tsv_define(unsigned num, int64_t value)
{
	F.tsv[F.ntsv].num = num;
	F.tsv[F.ntsv].value = value;
	F.ntsv++;
}

static int64_t tsv_value(unsigned num)
{
	int64_t v = 0;

	assert_int_equal(fake_tsv_get(&F.ctx, num, &v), 0);
	return v;
}

static int setup(void **state)
{
	memset(&F, 0, sizeof(F));
	F.ctx.read_reg = fake_read_reg;
	F.ctx.read_mem = fake_read_mem;
	F.ctx.tsv_get = fake_tsv_get;
	F.ctx.tsv_set = fake_tsv_set;
	F.ctx.trace_mem = fake_trace_mem;
	F.ctx.trace_tsv = fake_trace_tsv;
	F.ctx.printf_out = fake_printf_out;
	F.mem[0].base = STACK_BASE;
	F.mem[1].base = DATA_BASE;
	F.mem[2].base = HEAP_BASE;
	F.regs[6] = RBP;
	F.regs[7] = RBP - 0x40;
	tsv_define(1, 0);	/* $trace_timestamp-like */
	tsv_define(2, 41);	/* $hits */
	tsv_define(3, 0);	/* $maxa */
	tsv_define(5, 0);
	return 0;
}

/* --- Running hex the way gdb sends it ----------------------------------- */

struct code {
	uint8_t bytes[512];
	size_t len;
};

static struct code hex(const char *h)
{
	struct code c;
	ssize_t n = rsp_hex_decode(h, strlen(h), c.bytes, sizeof(c.bytes));

	assert_true(n > 0);
	c.len = (size_t)n;
	return c;
}

static void check_disasm(const struct code *c, const char *want)
{
	struct rsp_buf b;

	rsp_buf_init(&b);
	assert_int_equal(ax_disassemble(c->bytes, c->len, &b), 0);
	assert_string_equal(b.data, want);
	rsp_buf_free(&b);
}

/* Verifies (must pass) and evaluates; returns ax_eval's result. */
static int run(const struct code *c, struct ax_result *res)
{
	struct ax_info info;
	char err[160];
	int r = ax_verify(c->bytes, c->len, &info, err, sizeof(err));

	if (r)
		fail_msg("verify: %s", err);
	F.nblocks = F.ntraced_tsv = 0;
	F.nout = 0;
	F.out[0] = '\0';
	r = ax_eval(c->bytes, c->len, &F.ctx, res);
	assert_true(res->steps > 0);
	/* The verifier's depth bound holds in practice too. */
	assert_true(info.max_depth <= AX_STACK_MAX);
	return r;
}

/* Evaluates a condition; fails the test on any error. */
static uint64_t cond(const char *h)
{
	struct code c = hex(h);
	struct ax_result res;
	int r = ax_verify(c.bytes, c.len, NULL, NULL, 0);

	assert_int_equal(r, 0);
	r = ax_eval_cond(c.bytes, c.len, &F.ctx, &res);
	if (r)
		fail_msg("eval: %s", res.message);
	assert_true(res.has_value);
	return res.value;
}

static void check_block(unsigned i, uint64_t addr, uint64_t len)
{
	assert_true(i < F.nblocks);
	assert_int_equal(F.blocks[i].addr, addr);
	assert_int_equal(F.blocks[i].len, len);
}

/* <a>, <b>, <i>: gdb's address computation + fetch of an int local. */
#define A_FETCH "26000622100222dc160802191620"	/* CFA-36 */
#define B_FETCH "26000622100222d8160802191620"	/* CFA-40 */
#define I_FETCH "26000622100222e8160802191620"	/* CFA-24 */
#define A_DIS "reg 6; const8 16; add; const8 220; ext 8; add; ref32; ext 32"
#define B_DIS "reg 6; const8 16; add; const8 216; ext 8; add; ref32; ext 32"

/* --- gdb 13's real expressions ------------------------------------------ */

static void test_collect_a(void **state)
{
	struct code c = hex("26000622100222dc16080222040c27");
	struct ax_result res;
	struct ax_info info;

	check_disasm(&c, "reg 6; const8 16; add; const8 220; ext 8; add; "
		     "const8 4; trace; end");
	assert_int_equal(ax_verify(c.bytes, c.len, &info, NULL, 0), 0);
	assert_int_equal(info.reg_mask, 1ull << 6);
	assert_false(info.reg_high);
	assert_true(info.traces_mem);
	assert_false(info.reads_mem);
	assert_int_equal(info.max_depth, 2);
	assert_true(info.may_end_empty);
	assert_int_equal(info.ntsvs, 0);
	assert_int_equal(info.ninsns, 9);

	assert_int_equal(run(&c, &res), 0);
	assert_false(res.has_value);
	assert_int_equal(F.nblocks, 1);
	check_block(0, CFA - 36, 4);
	assert_int_equal(res.steps, 9);

	/* As a condition, the empty stack at `end` is an error. */
	assert_int_equal(ax_eval_cond(c.bytes, c.len, &F.ctx, &res), -EINVAL);
	assert_int_equal(res.error, AX_ERR_EMPTY_STACK);
}

static void test_collect_global_struct(void **state)
{
	/* collect gs: X0000000D,25000055555555806022200c27 */
	struct code c = hex("25000055555555806022200c27");
	struct ax_result res;

	check_disasm(&c, "const64 93824992247904; const8 32; trace; end");
	assert_int_equal(run(&c, &res), 0);
	assert_int_equal(F.nblocks, 1);
	check_block(0, ADDR_GS, 32);
}

static void test_collect_array_slice(void **state)
{
	/* collect garray[2]@3 */
	struct code c = hex("2500005555555580202202220404022a40220c0c27");
	struct ax_result res;

	check_disasm(&c, "const64 93824992247840; const8 2; const8 4; mul; "
		     "add; zero_ext 64; const8 12; trace; end");
	assert_int_equal(run(&c, &res), 0);
	assert_int_equal(F.nblocks, 1);
	check_block(0, ADDR_GARRAY + 8, 12);
}

static void test_collect_deref_pointer(void **state)
{
	const uint64_t p = HEAP_BASE + 0x10;
	struct ax_result res;

	put(ADDR_P, p, 8);
	/* collect *p: the pointer is recorded too (trace_quick 8). */
	struct code c = hex("26000622100222d01608020d081a22040c27");
	check_disasm(&c, "reg 6; const8 16; add; const8 208; ext 8; add; "
		     "trace_quick 8; ref64; const8 4; trace; end");
	assert_int_equal(run(&c, &res), 0);
	assert_int_equal(F.nblocks, 2);
	check_block(0, ADDR_P, 8);
	check_block(1, p, 4);

	/* collect p[1] */
	c = hex("26000622100222d01608020d081a2201220404022a4022040c27");
	check_disasm(&c, "reg 6; const8 16; add; const8 208; ext 8; add; "
		     "trace_quick 8; ref64; const8 1; const8 4; mul; add; "
		     "zero_ext 64; const8 4; trace; end");
	assert_int_equal(run(&c, &res), 0);
	assert_int_equal(F.nblocks, 2);
	check_block(0, ADDR_P, 8);
	check_block(1, p + 4, 4);
}

static void test_collect_pointer_chain(void **state)
{
	/* collect np->next->tag (-O1, np in rdi = gdb register 5) */
	const uint64_t np = HEAP_BASE + 0x40, next = HEAP_BASE + 0x80;
	struct code c = hex("2600052a40220802" "0d081a22100222080c27");
	struct ax_result res;

	F.regs[5] = np;
	put(np + 8, next, 8);
	check_disasm(&c, "reg 5; zero_ext 64; const8 8; add; trace_quick 8; "
		     "ref64; const8 16; add; const8 8; trace; end");
	assert_int_equal(run(&c, &res), 0);
	assert_int_equal(F.nblocks, 2);
	check_block(0, np + 8, 8);
	check_block(1, next + 16, 8);

	/* A dangling np->next: ref64 reads unmapped memory -> error, and
	 * the block collected before the error stays collected. */
	put(np + 8, 0xdead0000, 8);
	/* reg 5; const8 8; add; trace_quick 8; ref64; ref64; end */
	c = hex("260005" "2208" "02" "0d08" "1a" "1a" "27");
	assert_int_equal(run(&c, &res), -EFAULT);
	assert_int_equal(res.error, AX_ERR_MEMORY);
	assert_int_equal(res.sys_errno, EFAULT);
	assert_int_equal(res.pc, 9);
	assert_string_equal(res.message, "unreadable memory at 0xdead0000 "
			    "(8 bytes) at offset 9");
	assert_int_equal(F.nblocks, 1);
}

static void test_collect_tsv(void **state)
{
	/* collect $hits: getv 1; tracev 1; pop; end */
	struct code c = hex("2c00012e00012927");
	struct ax_result res;
	struct ax_info info;

	check_disasm(&c, "getv 1; tracev 1; pop; end");
	assert_int_equal(ax_verify(c.bytes, c.len, &info, NULL, 0), 0);
	assert_int_equal(info.ntsvs, 1);
	assert_int_equal(info.tsvs[0].num, 1);
	assert_int_equal(info.tsvs[0].how, AX_TSV_GET | AX_TSV_TRACE);
	assert_int_equal(run(&c, &res), 0);
	assert_int_equal(F.ntraced_tsv, 1);
	assert_int_equal(F.traced_tsv[0], 1);
	assert_int_equal(F.nblocks, 0);
}

static void test_teval_increment(void **state)
{
	/* teval $hits = $hits + 1: X0000000C,2c000222010216402d000227 */
	struct code c = hex("2c000222010216402d000227");
	struct ax_result res;
	struct ax_info info;

	check_disasm(&c, "getv 2; const8 1; add; ext 64; setv 2; end");
	assert_int_equal(ax_verify(c.bytes, c.len, &info, NULL, 0), 0);
	assert_int_equal(info.ntsvs, 1);
	assert_int_equal(info.tsvs[0].how, AX_TSV_GET | AX_TSV_SET);
	assert_int_equal(run(&c, &res), 0);
	assert_int_equal(tsv_value(2), 42);
	assert_true(res.has_value);	/* setv leaves the value */
	assert_int_equal(res.value, 42);
	assert_int_equal(run(&c, &res), 0);
	assert_int_equal(tsv_value(2), 43);
	assert_int_equal(F.nblocks, 0);
}

static void test_teval_gdb_setv_bug(void **state)
{
	/* teval $maxa = a: gdb 13 applies setv to &a, before ref32.  We run
	 * exactly what gdb sends: $maxa becomes the address of a. */
	struct code c = hex("26000622100222dc1608022d0003191620" "27");
	struct ax_result res;

	put(ADDR_A, 9, 4);
	check_disasm(&c, "reg 6; const8 16; add; const8 220; ext 8; add; "
		     "setv 3; ref32; ext 32; end");
	assert_int_equal(run(&c, &res), 0);
	assert_int_equal(tsv_value(3), (int64_t)ADDR_A);
	assert_int_equal(res.value, 9);
}

static void test_cond_i_greater_5(void **state)
{
	const char *h = I_FETCH "22052b1427";

	struct code c = hex(h);
	check_disasm(&c, "reg 6; const8 16; add; const8 232; ext 8; add; "
		     "ref32; ext 32; const8 5; swap; less_signed; end");
	put(ADDR_I, 3, 4);
	assert_int_equal(cond(h), 0);
	put(ADDR_I, 5, 4);
	assert_int_equal(cond(h), 0);
	put(ADDR_I, 6, 4);
	assert_int_equal(cond(h), 1);
	put(ADDR_I, (uint32_t)-7, 4);	/* signed compare after ext 32 */
	assert_int_equal(cond(h), 0);
	put(ADDR_I, 0x7fffffff, 4);
	assert_int_equal(cond(h), 1);
}

static void test_cond_a_equal_5(void **state)
{
	const char *h = A_FETCH "22051327";

	put(ADDR_A, 5, 4);
	assert_int_equal(cond(h), 1);
	put(ADDR_A, 0x100000005ull, 8);	/* high bytes are not a's */
	assert_int_equal(cond(h), 1);
	put(ADDR_A, 4, 4);
	assert_int_equal(cond(h), 0);
}

static void test_cond_divide_by_zero(void **state)
{
	/* 10/(a-3) != 99 */
	const char *h = "220a" A_FETCH "2203031620051620226313" "0e27";
	struct code c = hex(h);
	struct ax_result res;

	check_disasm(&c, "const8 10; " A_DIS "; const8 3; sub; ext 32; "
		     "div_signed; ext 32; const8 99; equal; log_not; end");
	put(ADDR_A, 4, 4);
	assert_int_equal(cond(h), 1);
	put(ADDR_A, (uint32_t)-7, 4);	/* 10 / -10 = -1 */
	assert_int_equal(cond(h), 1);
	put(ADDR_A, 3, 4);
	assert_int_equal(ax_eval_cond(c.bytes, c.len, &F.ctx, &res), -EDOM);
	assert_int_equal(res.error, AX_ERR_DIV_ZERO);
	assert_int_equal(res.pc, 21);
	assert_string_equal(res.message, "divide by zero at offset 21");
	assert_string_equal(ax_error_name(res.error), "divide by zero");
	assert_false(ax_error_is_structural(res.error));
}

static void test_cond_and(void **state)
{
	/* a > 5 && b < 3 */
	const char *h = A_FETCH "22052b14" "200018" "210034" B_FETCH
		"220314" "20002f" "210034" "2201" "210036" "2200" "27";
	struct code c = hex(h);
	static const struct {
		int32_t a, b;
		uint64_t want;
	} rows[] = {
		{ 6, 2, 1 }, { 6, 3, 0 }, { 5, 2, 0 }, { 5, 3, 0 },
		{ 100, -100, 1 }, { -6, 2, 0 },
	};

	check_disasm(&c, A_DIS "; const8 5; swap; less_signed; if_goto 24; "
		     "goto 52; " B_DIS "; const8 3; less_signed; if_goto 47; "
		     "goto 52; const8 1; goto 54; const8 0; end");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		put(ADDR_A, (uint32_t)rows[i].a, 4);
		put(ADDR_B, (uint32_t)rows[i].b, 4);
		if (cond(h) != rows[i].want)
			fail_msg("a=%d b=%d", rows[i].a, rows[i].b);
	}
}

static void test_cond_or(void **state)
{
	/* a == 5 || counter != 0 */
	const char *h = A_FETCH "220513" "20002c" "250000555555558084"
		"191620" "220013" "0e" "20002c" "2200" "21002e" "2201" "27";
	struct code c = hex(h);
	static const struct {
		int32_t a, counter;
		uint64_t want;
	} rows[] = {
		{ 5, 0, 1 }, { 5, 7, 1 }, { 4, 0, 0 }, { 4, -1, 1 },
	};

	check_disasm(&c, A_DIS "; const8 5; equal; if_goto 44; const64 "
		     "93824992247940; ref32; ext 32; const8 0; equal; "
		     "log_not; if_goto 44; const8 0; goto 46; const8 1; end");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		put(ADDR_A, (uint32_t)rows[i].a, 4);
		put(ADDR_COUNTER, (uint32_t)rows[i].counter, 4);
		if (cond(h) != rows[i].want)
			fail_msg("a=%d counter=%d", rows[i].a,
				 rows[i].counter);
	}
}

static void test_ternary(void **state)
{
	/* a > 2 ? a : b */
	const char *h = A_FETCH "22022b140e" "200027" A_FETCH "210035"
		B_FETCH "27";
	struct code c = hex(h);

	check_disasm(&c, A_DIS "; const8 2; swap; less_signed; log_not; "
		     "if_goto 39; " A_DIS "; goto 53; " B_DIS "; end");
	put(ADDR_A, 3, 4);
	put(ADDR_B, (uint32_t)-9, 4);
	assert_int_equal(cond(h), 3);
	put(ADDR_A, 2, 4);
	assert_int_equal(cond(h), (uint64_t)-9);
}

static void test_casts(void **state)
{
	/* (char)local2, local2 a long at CFA-32 */
	const char *h = "26000622100222e01608021a16401608" "27";
	/* (unsigned short)b */
	const char *h2 = B_FETCH "2a10" "27";
	struct code c = hex(h);

	check_disasm(&c, "reg 6; const8 16; add; const8 224; ext 8; add; "
		     "ref64; ext 64; ext 8; end");
	put(ADDR_LOCAL2, 0x12345678901234ffull, 8);
	assert_int_equal(cond(h), UINT64_MAX);	/* (char)0xff == -1 */
	put(ADDR_LOCAL2, 0x123456789012347full, 8);
	assert_int_equal(cond(h), 0x7f);
	put(ADDR_B, (uint32_t)-2, 4);
	assert_int_equal(cond(h2), 0xfffe);
}

static void test_rsp_register(void **state)
{
	/* $rsp in an expression: reg 7; zero_ext 64 */
	assert_int_equal(cond("2600072a4027"), RBP - 0x40);
}

static void test_dprintf(void **state)
{
	/* dprintf ...,"a=%d b=%d\n", a, b: args pushed last to first, then
	 * chan and fn as const8 0; the \n arrives as two characters. */
	const char *h = B_FETCH A_FETCH "2200" "2200" "3402000c"
		"613d25642062" "3d25645c6e00" "27";
	struct code c = hex(h);
	struct ax_result res;
	struct ax_info info;

	check_disasm(&c, B_DIS "; " A_DIS "; const8 0; const8 0; "
		     "printf 2 \"a=%d b=%d\\n\"; end");
	assert_int_equal(ax_verify(c.bytes, c.len, &info, NULL, 0), 0);
	assert_true(info.uses_printf);
	assert_int_equal(info.max_depth, 4);
	put(ADDR_A, 3, 4);
	put(ADDR_B, (uint32_t)-2, 4);
	assert_int_equal(run(&c, &res), 0);
	assert_string_equal(F.out, "a=3 b=-2\n");
	assert_false(res.has_value);
}

static void test_collect_string(void **state)
{
	/* collect/s msg: msg (char *) at CFA-32; ...; ref64; const8 200;
	 * tracenz; end */
	const char *h = "26000622100222e01608021a" "22c8" "2f" "27";
	struct code c = hex(h);
	struct ax_result res;
	const uint64_t s = HEAP_BASE + 0x100;

	check_disasm(&c, "reg 6; const8 16; add; const8 224; ext 8; add; "
		     "ref64; const8 200; tracenz; end");
	put(ADDR_LOCAL2, s, 8);
	put_str(s, "hello");
	assert_int_equal(run(&c, &res), 0);
	assert_int_equal(F.nblocks, 1);
	check_block(0, s, 6);		/* NUL included */

	/* Longer than the limit: limit bytes, no NUL. */
	memset(mem_at(s, 300), 'x', 300);
	assert_int_equal(run(&c, &res), 0);
	check_block(0, s, 200);

	/* Running into unmapped memory: the readable prefix. */
	const uint64_t tail = HEAP_BASE + sizeof(F.mem[2].bytes) - 10;
	memset(mem_at(tail, 10), 'y', 10);
	put(ADDR_LOCAL2, tail, 8);
	assert_int_equal(run(&c, &res), 0);
	assert_int_equal(F.nblocks, 1);
	check_block(0, tail, 10);

	/* A NULL string collects nothing and is not an error. */
	put(ADDR_LOCAL2, 0, 8);
	assert_int_equal(run(&c, &res), 0);
	assert_int_equal(F.nblocks, 0);

	/* The empty string: its NUL. */
	put(ADDR_LOCAL2, s, 8);
	put_str(s, "");
	assert_int_equal(run(&c, &res), 0);
	check_block(0, s, 1);
}

/* --- Per-opcode semantics ----------------------------------------------- */

/* Builds code: const64 a; const64 b; op; end. */
static struct code binop_code(uint8_t op, uint64_t a, uint64_t b)
{
	struct code c = { .len = 0 };

	c.bytes[c.len++] = AX_OP_CONST64;
	for (int i = 7; i >= 0; i--)
		c.bytes[c.len++] = (uint8_t)(a >> (8 * i));
	c.bytes[c.len++] = AX_OP_CONST64;
	for (int i = 7; i >= 0; i--)
		c.bytes[c.len++] = (uint8_t)(b >> (8 * i));
	c.bytes[c.len++] = op;
	c.bytes[c.len++] = AX_OP_END;
	return c;
}

static uint64_t binop(uint8_t op, uint64_t a, uint64_t b)
{
	struct code c = binop_code(op, a, b);
	struct ax_result res;

	if (run(&c, &res))
		fail_msg("%s: %s", ax_opcode_name(op), res.message);
	return res.value;
}

/* const64 v; op n; end */
static uint64_t unop_n(uint8_t op, uint64_t v, uint8_t n)
{
	struct code c = binop_code(AX_OP_END, v, 0);
	struct ax_result res;

	c.len = 9;
	c.bytes[c.len++] = op;
	c.bytes[c.len++] = n;
	c.bytes[c.len++] = AX_OP_END;
	if (run(&c, &res))
		fail_msg("%s: %s", ax_opcode_name(op), res.message);
	return res.value;
}

#define I64(x) ((uint64_t)(int64_t)(x))

static void test_arith(void **state)
{
	assert_int_equal(binop(AX_OP_ADD, UINT64_MAX, 2), 1);
	assert_int_equal(binop(AX_OP_SUB, 1, 2), UINT64_MAX);
	assert_int_equal(binop(AX_OP_MUL, 1ull << 63, 2), 0);
	assert_int_equal(binop(AX_OP_MUL, I64(-3), 7), I64(-21));
	/* C's truncating division */
	assert_int_equal(binop(AX_OP_DIV_SIGNED, I64(-7), 2), I64(-3));
	assert_int_equal(binop(AX_OP_REM_SIGNED, I64(-7), 2), I64(-1));
	assert_int_equal(binop(AX_OP_REM_SIGNED, 7, I64(-2)), 1);
	assert_int_equal(binop(AX_OP_DIV_UNSIGNED, I64(-7), 2),
			 (UINT64_MAX - 6) / 2);
	assert_int_equal(binop(AX_OP_REM_UNSIGNED, I64(-7), 2), 1);
	/* INT64_MIN / -1: defined here as INT64_MIN, remainder 0 */
	assert_int_equal(binop(AX_OP_DIV_SIGNED, I64(INT64_MIN), I64(-1)),
			 I64(INT64_MIN));
	assert_int_equal(binop(AX_OP_REM_SIGNED, I64(INT64_MIN), I64(-1)), 0);
	assert_int_equal(binop(AX_OP_DIV_SIGNED, 5, I64(-1)), I64(-5));
	assert_int_equal(binop(AX_OP_DIV_UNSIGNED, I64(INT64_MIN), I64(-1)),
			 0);
	assert_int_equal(binop(AX_OP_DIV_SIGNED, I64(INT64_MIN), 2),
			 I64(INT64_MIN / 2));

	static const uint8_t divs[] = {
		AX_OP_DIV_SIGNED, AX_OP_DIV_UNSIGNED, AX_OP_REM_SIGNED,
		AX_OP_REM_UNSIGNED,
	};
	for (size_t i = 0; i < sizeof(divs); i++) {
		struct code c = binop_code(divs[i], 1, 0);
		struct ax_result res;
		assert_int_equal(run(&c, &res), -EDOM);
		assert_int_equal(res.error, AX_ERR_DIV_ZERO);
		assert_int_equal(res.pc, 18);
	}
}

static void test_shifts(void **state)
{
	assert_int_equal(binop(AX_OP_LSH, 1, 63), 1ull << 63);
	assert_int_equal(binop(AX_OP_LSH, 1, 64), 0);
	assert_int_equal(binop(AX_OP_LSH, 1, 65), 0);
	assert_int_equal(binop(AX_OP_LSH, 1, UINT64_MAX), 0);
	assert_int_equal(binop(AX_OP_RSH_SIGNED, I64(-8), 1), I64(-4));
	assert_int_equal(binop(AX_OP_RSH_SIGNED, I64(-8), 63), UINT64_MAX);
	assert_int_equal(binop(AX_OP_RSH_SIGNED, I64(-8), 64), UINT64_MAX);
	assert_int_equal(binop(AX_OP_RSH_SIGNED, I64(-1), 200), UINT64_MAX);
	assert_int_equal(binop(AX_OP_RSH_SIGNED, 8, 64), 0);
	assert_int_equal(binop(AX_OP_RSH_SIGNED, I64(INT64_MAX), 62), 1);
	assert_int_equal(binop(AX_OP_RSH_UNSIGNED, I64(-8), 1),
			 UINT64_MAX >> 1 & ~3ull);
	assert_int_equal(binop(AX_OP_RSH_UNSIGNED, I64(-8), 64), 0);
	assert_int_equal(binop(AX_OP_RSH_UNSIGNED, 1ull << 63, 63), 1);
}

static void test_compare_logic(void **state)
{
	assert_int_equal(binop(AX_OP_LESS_SIGNED, I64(-1), 1), 1);
	assert_int_equal(binop(AX_OP_LESS_UNSIGNED, I64(-1), 1), 0);
	assert_int_equal(binop(AX_OP_LESS_SIGNED, 1, 1), 0);
	assert_int_equal(binop(AX_OP_EQUAL, 5, 5), 1);
	assert_int_equal(binop(AX_OP_EQUAL, 5, 6), 0);
	assert_int_equal(binop(AX_OP_BIT_AND, 0xf0f0, 0xff00), 0xf000);
	assert_int_equal(binop(AX_OP_BIT_OR, 0xf0f0, 0xff00), 0xfff0);
	assert_int_equal(binop(AX_OP_BIT_XOR, 0xf0f0, 0xff00), 0x0ff0);
	assert_int_equal(cond("2200" "0e27"), 1);
	assert_int_equal(cond("2205" "0e27"), 0);
	assert_int_equal(cond("2200" "1227"), UINT64_MAX);
}

static void test_ext_zero_ext(void **state)
{
	assert_int_equal(unop_n(AX_OP_EXT, 1, 1), UINT64_MAX);
	assert_int_equal(unop_n(AX_OP_EXT, 2, 1), 0);
	assert_int_equal(unop_n(AX_OP_EXT, 0x80, 8), I64(-128));
	assert_int_equal(unop_n(AX_OP_EXT, 0x17f, 8), 0x7f);
	assert_int_equal(unop_n(AX_OP_EXT, 0x80000000, 32), I64(INT32_MIN));
	assert_int_equal(unop_n(AX_OP_EXT, 0xffffffff7fffffffull, 32),
			 INT32_MAX);
	assert_int_equal(unop_n(AX_OP_EXT, 1ull << 62, 63), 3ull << 62);
	assert_int_equal(unop_n(AX_OP_EXT, 1ull << 63, 63), 0);
	assert_int_equal(unop_n(AX_OP_EXT, 0x8000000000000000ull, 64),
			 0x8000000000000000ull);
	assert_int_equal(unop_n(AX_OP_EXT, 0x1234, 200), 0x1234);

	assert_int_equal(unop_n(AX_OP_ZERO_EXT, UINT64_MAX, 0), 0);
	assert_int_equal(unop_n(AX_OP_ZERO_EXT, UINT64_MAX, 1), 1);
	assert_int_equal(unop_n(AX_OP_ZERO_EXT, UINT64_MAX, 8), 0xff);
	assert_int_equal(unop_n(AX_OP_ZERO_EXT, UINT64_MAX, 32), 0xffffffff);
	assert_int_equal(unop_n(AX_OP_ZERO_EXT, UINT64_MAX, 63),
			 UINT64_MAX >> 1);
	assert_int_equal(unop_n(AX_OP_ZERO_EXT, UINT64_MAX, 64), UINT64_MAX);
	assert_int_equal(unop_n(AX_OP_ZERO_EXT, UINT64_MAX, 255), UINT64_MAX);
}

static void test_consts(void **state)
{
	assert_int_equal(cond("22ff27"), 0xff);		/* zero-extended */
	assert_int_equal(cond("23ff0127"), 0xff01);	/* big-endian */
	assert_int_equal(cond("24fffffffe27"), 0xfffffffe);
	assert_int_equal(cond("25010203040506070827"), 0x0102030405060708);
}

static void test_stack_ops(void **state)
{
	/* 1 2 3 rot -> 3 1 2 (gdbserver's order, 2 on top) */
	assert_int_equal(cond("2201220222033327"), 2);
	assert_int_equal(cond("220122022203332927"), 1);
	assert_int_equal(cond("22012202220333292927"), 3);
	/* pick 0 = dup; pick n copies the n-th value below the top */
	assert_int_equal(cond("2207" "3200" "02" "27"), 14);
	assert_int_equal(cond("220122022203" "3201" "27"), 2);
	assert_int_equal(cond("220122022203" "3202" "27"), 1);
	assert_int_equal(cond("220122022203" "3202" "29" "27"), 3);
	assert_int_equal(cond("2207" "28" "02" "27"), 14);	/* dup */
	assert_int_equal(cond("22012202" "2b" "03" "27"), 1);	/* 2 - 1 */
	assert_int_equal(cond("22012202" "29" "27"), 1);	/* pop */
}

static void test_memory_and_byte_order(void **state)
{
	put(DATA_BASE, 0x0807060504030201ull, 8);
	assert_int_equal(cond("250000555555558000" "1727"), 0x01);
	assert_int_equal(cond("250000555555558000" "1827"), 0x0201);
	assert_int_equal(cond("250000555555558000" "1927"), 0x04030201);
	assert_int_equal(cond("250000555555558000" "1a27"),
			 0x0807060504030201ull);
	F.ctx.big_endian = true;
	assert_int_equal(cond("250000555555558000" "1827"), 0x0102);
	assert_int_equal(cond("250000555555558000" "1a27"),
			 0x0102030405060708ull);
	F.ctx.big_endian = false;
	/* ref32 straddling the end of a region: unreadable */
	struct code c = hex("250000555555558" "7fe" "1927");
	struct ax_result res;
	assert_int_equal(run(&c, &res), -EFAULT);
	assert_int_equal(res.error, AX_ERR_MEMORY);
	assert_string_equal(res.message, "unreadable memory at "
			    "0x5555555587fe (4 bytes) at offset 9");
}

static void test_registers_tsvs_errors(void **state)
{
	struct ax_result res;
	struct code c = hex("26004027");	/* reg 64 */
	struct ax_info info;

	assert_int_equal(ax_verify(c.bytes, c.len, &info, NULL, 0), 0);
	assert_true(info.reg_high);
	assert_int_equal(info.reg_max, 64);
	assert_int_equal(info.reg_mask, 0);
	assert_int_equal(run(&c, &res), -EINVAL);
	assert_int_equal(res.error, AX_ERR_REGISTER);
	assert_string_equal(res.message, "bad register number 64 at offset 0");

	c = hex("2c006327");			/* getv 99 */
	assert_int_equal(run(&c, &res), -ENOENT);
	assert_int_equal(res.error, AX_ERR_TSV);
	assert_string_equal(res.message, "unknown trace state variable 99 at "
			    "offset 0");
	c = hex("22012d006327");		/* setv 99 */
	assert_int_equal(run(&c, &res), -ENOENT);
	c = hex("2e006327");			/* tracev 99 */
	assert_int_equal(run(&c, &res), -ENOENT);
	assert_int_equal(res.error, AX_ERR_TSV);

	/* setv leaves the value on the stack */
	c = hex("22072d000527");
	assert_int_equal(run(&c, &res), 0);
	assert_int_equal(res.value, 7);
	assert_int_equal(tsv_value(5), 7);

	/* trace_mem fails (trace buffer full) */
	F.trace_errno = ENOBUFS;
	c = hex("26000622100222dc16080222040c27");
	assert_int_equal(run(&c, &res), -ENOBUFS);
	assert_int_equal(res.error, AX_ERR_COLLECT);
	assert_int_equal(res.sys_errno, ENOBUFS);
	F.trace_errno = 0;

	/* A context without callbacks: every target access fails cleanly. */
	struct ax_ctx none = { .opaque = NULL };
	c = hex("26000627");
	assert_int_equal(ax_eval(c.bytes, c.len, &none, &res), -ENOSYS);
	c = hex("22001727");
	assert_int_equal(ax_eval(c.bytes, c.len, &none, &res), -EFAULT);
	assert_int_equal(res.sys_errno, ENOSYS);
}

static void test_step_budget(void **state)
{
	/* 0: const8 1; 2: if_goto 0; 5: end -- loops forever */
	struct code c = hex("2201200000" "27");
	struct ax_result res;
	struct ax_info info;

	assert_int_equal(ax_verify(c.bytes, c.len, &info, NULL, 0), 0);
	assert_true(info.has_loops);
	assert_int_equal(run(&c, &res), -ELOOP);
	assert_int_equal(res.error, AX_ERR_STEP_BUDGET);
	assert_int_equal(res.steps, AX_STEP_BUDGET);
	assert_string_equal(res.message, "step budget exceeded (1000000 "
			    "instructions) at offset 0");
	F.ctx.step_budget = 11;
	assert_int_equal(run(&c, &res), -ELOOP);
	assert_int_equal(res.steps, 11);
	assert_int_equal(res.pc, 2 * (11 % 2));
	/* A bounded loop: count down from 5 with $v5. */
	F.ctx.step_budget = 0;
	/* 0: const8 5; 2: setv 5; 5: pop; 6: getv 5; 9: const8 1; 11: sub;
	 * 12: setv 5; 15: if_goto 6; 18: getv 5; 21: end */
	c = hex("22052d000529" "2c0005220103" "2d0005" "200006" "2c0005" "27");
	check_disasm(&c, "const8 5; setv 5; pop; getv 5; const8 1; sub; "
		     "setv 5; if_goto 6; getv 5; end");
	assert_int_equal(run(&c, &res), 0);
	assert_int_equal(res.value, 0);
	assert_int_equal(res.steps, 3 + 5 * 5 + 2);
}

/* printf with one argument pushed by const64; the format as C text. */
static const char *printf1(const char *fmt, uint64_t arg)
{
	struct code c = { .len = 0 };
	struct ax_result res;
	size_t n = strlen(fmt) + 1;

	c.bytes[c.len++] = AX_OP_CONST64;
	for (int i = 7; i >= 0; i--)
		c.bytes[c.len++] = (uint8_t)(arg >> (8 * i));
	memcpy(c.bytes + c.len, "\x22\x00\x22\x00\x34\x01", 6);
	c.len += 6;
	c.bytes[c.len++] = (uint8_t)(n >> 8);
	c.bytes[c.len++] = (uint8_t)n;
	memcpy(c.bytes + c.len, fmt, n);
	c.len += n;
	c.bytes[c.len++] = AX_OP_END;
	if (run(&c, &res))
		fail_msg("printf \"%s\": %s", fmt, res.message);
	return F.out;
}

static void test_printf_conversions(void **state)
{
	static const struct {
		const char *fmt;
		uint64_t arg;
	} ints[] = {
		{ "%d", I64(-5) }, { "%i", 42 }, { "%u", I64(-1) },
		{ "%x", 0xbeef }, { "%X", 0xbeef }, { "%o", 8 },
		{ "%5d|", 42 }, { "%-5d|", 42 }, { "%05d", I64(-42) },
		{ "%+d", 3 }, { "% d", 3 }, { "%#x", 255 }, { "%#x", 0 },
		{ "%#o", 8 }, { "%#o", 0 }, { "%.3d", 7 }, { "%.0d", 0 },
		{ "%8.3x|", 10 }, { "%-8.3d|", I64(-10) }, { "%08.3d", 5 },
		{ "%c", 'A' }, { "%3c|", 'z' }, { "%-3c|", 'z' },
		{ "%hd", 0x18000 }, { "%hu", I64(-1) },
		{ "%d", 0x100000005ull }, { "%x", I64(-1) },
		{ "%+.0d", 0 }, { "%#X", 0xabc }, { "%#10x|", 0xabc },
		{ "%#010x", 0xabc }, { "%-#10o|", 8 },
	};
	char want[64];

	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		/* The host's printf with the same C arguments gdbserver
		 * passes (an int for int_arg) is the oracle. */
		int v = (int)ints[i].arg;
		if (strchr(ints[i].fmt, 'h'))
			v = strchr(ints[i].fmt, 'u') ? (unsigned short)v
						     : (short)v;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
		snprintf(want, sizeof(want), ints[i].fmt, v);
#pragma GCC diagnostic pop
		if (strcmp(printf1(ints[i].fmt, ints[i].arg), want) != 0)
			fail_msg("\"%s\": got \"%s\", want \"%s\"",
				 ints[i].fmt, F.out, want);
	}

	assert_string_equal(printf1("%ld", I64(-5000000000)), "-5000000000");
	assert_string_equal(printf1("%lld", I64(INT64_MIN)),
			    "-9223372036854775808");
	assert_string_equal(printf1("%lu", UINT64_MAX),
			    "18446744073709551615");
	assert_string_equal(printf1("%llx", 0x123456789abcdefull),
			    "123456789abcdef");
	assert_string_equal(printf1("%zu", 1ull << 40), "1099511627776");
	F.ctx.long_size = 4;			/* a 32-bit target */
	assert_string_equal(printf1("%ld", I64(-5000000000)), "-705032704");
	assert_string_equal(printf1("%lld", I64(-5000000000)), "-5000000000");
	F.ctx.long_size = 0;

	/* %p as gdb prints it: %#llx, or (nil) */
	assert_string_equal(printf1("%p", 0x7fffffffe5ec), "0x7fffffffe5ec");
	assert_string_equal(printf1("%p", 0), "(nil)");
	assert_string_equal(printf1("[%8p]", 0), "[   (nil)]");
	assert_string_equal(printf1("[%-8p]", 0x10), "[0x10    ]");
	assert_string_equal(printf1("[%12p]", 0x10), "[        0x10]");

	/* Escapes are interpreted, %% is a percent sign */
	assert_string_equal(printf1("\\t%d%%\\n\\\\\\\"\\a\\e", 1),
			    "\t1%\n\\\"\a\033");

	/* %s reads the target */
	const uint64_t s = HEAP_BASE + 0x200;
	put_str(s, "hello");
	assert_string_equal(printf1("<%s>", s), "<hello>");
	assert_string_equal(printf1("<%.2s>", s), "<he>");
	assert_string_equal(printf1("<%8s>", s), "<   hello>");
	assert_string_equal(printf1("<%-8s>", s), "<hello   >");
	assert_string_equal(printf1("<%8.3s>", s), "<     hel>");
	assert_string_equal(printf1("<%s>", 0), "<(null)>");
	assert_string_equal(printf1("<%.3s>", 0), "<(nu>");

	/* A long string goes out in several printf_out calls; a string
	 * longer than AX_PRINTF_STRING_MAX is cut. */
	memset(mem_at(HEAP_BASE, 0x7ff), 'q', 0x7ff);
	mem_at(HEAP_BASE + 0x7ff, 1)[0] = 0;
	F.out_calls = 0;
	assert_int_equal(strlen(printf1("%s", HEAP_BASE)), 0x7ff);
	assert_true(F.out_calls > 1);
}

static void test_printf_errors(void **state)
{
	/* %s on unreadable memory */
	struct code c = hex("250000000000001000" "2200220034010003"
			    "257300" "27");
	struct ax_result res;

	check_disasm(&c, "const64 4096; const8 0; const8 0; printf 1 \"%s\"; "
		     "end");
	assert_int_equal(run(&c, &res), -EFAULT);
	assert_int_equal(res.error, AX_ERR_MEMORY);
	/* A string that runs off mapped memory without a NUL */
	memset(mem_at(HEAP_BASE + 0x7f0, 16), 'x', 16);
	c = hex("250000555555559a90" "2200220034010003" "257300" "27");
	assert_int_equal(run(&c, &res), -EFAULT);
	assert_int_equal(res.error, AX_ERR_MEMORY);
}

/* --- Verifier rejections ------------------------------------------------ */

static void reject(const char *h, int want_rc, const char *want_msg)
{
	struct code c = hex(h);
	char err[160];
	struct ax_result res;

	memset(err, 'x', sizeof(err));
	int r = ax_verify(c.bytes, c.len, NULL, err, sizeof(err));
	if (r != want_rc || strcmp(err, want_msg) != 0)
		fail_msg("%s: %d \"%s\", want %d \"%s\"", h, r, err, want_rc,
			 want_msg);
	/* Unverified code is still safe to run, and bounded. */
	F.ctx.step_budget = 1000;
	ax_eval(c.bytes, c.len, &F.ctx, &res);
	F.ctx.step_budget = 0;
}

static void test_verify_rejects(void **state)
{
	char err[64];
	static uint8_t big[AX_MAX_LEN + 1];

	assert_int_equal(ax_verify(big, 0, NULL, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "empty expression");
	memset(big, AX_OP_END, sizeof(big));
	assert_int_equal(ax_verify(big, sizeof(big), NULL, err, sizeof(err)),
			 -E2BIG);
	assert_string_equal(err, "expression too long (16385 bytes, the limit "
			    "is 16384)");
	assert_int_equal(ax_verify(big, AX_MAX_LEN, NULL, err, sizeof(err)),
			 0);

	/* Unsupported: the float family, trace16, invalid2 */
	reject("2201" "01" "27", -EOPNOTSUPP,
	       "unsupported bytecode 0x01 at offset 2");
	reject("22011b27", -EOPNOTSUPP, "unsupported bytecode 0x1b at offset 2");
	reject("22011c27", -EOPNOTSUPP, "unsupported bytecode 0x1c at offset 2");
	reject("22011d27", -EOPNOTSUPP, "unsupported bytecode 0x1d at offset 2");
	reject("22011e27", -EOPNOTSUPP, "unsupported bytecode 0x1e at offset 2");
	reject("22011f27", -EOPNOTSUPP, "unsupported bytecode 0x1f at offset 2");
	reject("2201300004" "27", -EOPNOTSUPP,
	       "unsupported bytecode 0x30 at offset 2");
	reject("3127", -EOPNOTSUPP, "unsupported bytecode 0x31 at offset 0");
	reject("00", -EINVAL, "unknown bytecode 0x00 at offset 0");
	reject("2201" "35" "27", -EINVAL, "unknown bytecode 0x35 at offset 2");
	reject("22ff" "ff", -EINVAL, "unknown bytecode 0xff at offset 2");

	/* Immediates out of bounds */
	reject("22", -EINVAL, "truncated const8 at offset 0");
	reject("2201" "250000", -EINVAL, "truncated const64 at offset 2");
	reject("2600", -EINVAL, "truncated reg at offset 0");
	reject("2200220034000005" "2500", -EINVAL,
	       "truncated printf at offset 4");

	/* Jumps */
	reject("210010" "27", -EINVAL,
	       "goto at offset 0: target 16 is outside the expression");
	reject("2201200001" "27", -EINVAL,
	       "if_goto at offset 2: target 1 is not an instruction boundary");
	reject("2201200006" "27", -EINVAL,
	       "if_goto at offset 2: target 6 is outside the expression");

	/* Stack depth on every path */
	reject("0227", -EINVAL, "stack underflow at offset 0: add needs 2 "
	       "values, the stack may hold 0");
	reject("2201" "0227", -EINVAL, "stack underflow at offset 2: add needs "
	       "2 values, the stack may hold 1");
	reject("29" "27", -EINVAL, "stack underflow at offset 0: pop needs "
	       "1 value, the stack may hold 0");
	reject("22012202" "3327", -EINVAL, "stack underflow at offset 4: rot "
	       "needs 3 values, the stack may hold 2");
	reject("2201" "320127", -EINVAL, "stack underflow at offset 2: pick "
	       "needs 2 values, the stack may hold 1");
	reject("22002200" "340100032564" "0027", -EINVAL,
	       "stack underflow at offset 4: printf needs 3 values, the stack "
	       "may hold 2");
	/* one path pushes, the other does not: the join may hold 0 */
	reject("2200" "200007" "2201" "2202" "02" "27", -EINVAL,
	       "stack underflow at offset 9: add needs 2 values, the stack "
	       "may hold 1");
	/* 0: const8 0; 2: const8 1; 4: if_goto 0; 7: end -- grows forever */
	reject("2200" "2201" "200000" "27", -EINVAL, "stack overflow at offset "
	       "2: const8 makes 101 values, the limit is 100");

	/* Termination */
	reject("2201", -EINVAL, "const8 at offset 0 runs off the end of the "
	       "expression (no end)");
	reject("2201" "200000", -EINVAL, "if_goto at offset 2 runs off the end "
	       "of the expression (no end)");
	reject("210000" "27", -EINVAL,
	       "no reachable end: the expression never terminates");
	reject("2201" "1600" "27", -EINVAL, "ext 0 at offset 2 is undefined");

	/* printf formats */
	reject("22002200" "34000002" "2564" "27", -EINVAL,
	       "unterminated format string in printf at offset 4");
	reject("22002200" "3400000000" "27", -EINVAL,
	       "unterminated format string in printf at offset 4");
	reject("220122002200" "34000003256400" "27", -EINVAL,
	       "printf at offset 6: format wants 1 arguments, bytecode passes "
	       "0");
	reject("220122002200" "34010003256600" "27", -EOPNOTSUPP,
	       "printf conversion '%f' not supported by the agent (printf at "
	       "offset 6)");
	reject("220122002200" "34010003257900" "27", -EINVAL,
	       "unrecognized format specifier 'y' in printf (printf at offset "
	       "6)");
	reject("220122002200" "340100035c7100" "27", -EINVAL,
	       "unrecognized escape character \\q in format (printf at offset "
	       "6)");
	reject("220122002200" "34010003256e00" "27", -EINVAL,
	       "format specifier `n' not supported in printf (printf at offset "
	       "6)");
	reject("220122002200" "340100032a6400" "27", -EINVAL,
	       "printf at offset 6: format wants 0 arguments, bytecode passes "
	       "1");
	reject("220122002200" "34010004252a6400" "27", -EOPNOTSUPP,
	       "printf conversion '%*' not supported by the agent (printf at "
	       "offset 6)");
	reject("220122002200" "34010004256c7300" "27", -EOPNOTSUPP,
	       "printf conversion '%ls' not supported by the agent (printf at "
	       "offset 6)");
	reject("220122002200" "34010004252b7300" "27", -EINVAL,
	       "inappropriate modifiers to format specifier 's' in printf "
	       "(printf at offset 6)");
	reject("220122002200" "34010003250000" "27", -EINVAL,
	       "incomplete format specifier at end of format (printf at "
	       "offset 6)");
	reject("220122002200" "34010008" "39393939396400", -EINVAL,
	       "truncated printf at offset 6");
	reject("220122002200" "34010007253939393964" "0027", -EINVAL,
	       "printf width or precision above 1024 (printf at offset 6)");
}

static void test_verify_info(void **state)
{
	struct ax_info info;
	/* Two stacks joining with different depths are fine as long as
	 * nothing underflows: const8 0; if_goto 7; const8 1; end */
	struct code c = hex("2200" "200007" "2201" "27");
	assert_int_equal(ax_verify(c.bytes, c.len, &info, NULL, 0), 0);
	assert_true(info.may_end_empty);
	assert_int_equal(info.max_depth, 1);
	assert_false(info.has_loops);

	/* 100 values are allowed, 101 are not. */
	uint8_t deep[2 * 101 + 1 + 2];
	struct ax_result res;
	char err[96];
	for (int i = 0; i < 101; i++) {
		deep[2 * i] = AX_OP_CONST8;
		deep[2 * i + 1] = (uint8_t)i;
	}
	deep[200] = AX_OP_END;
	assert_int_equal(ax_verify(deep, 201, &info, NULL, 0), 0);
	assert_int_equal(info.max_depth, 100);
	assert_int_equal(ax_eval(deep, 201, &F.ctx, &res), 0);
	assert_int_equal(res.value, 99);
	deep[200] = AX_OP_CONST8;
	deep[201] = 100;
	deep[202] = AX_OP_END;
	assert_int_equal(ax_verify(deep, 203, NULL, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "stack overflow at offset 200: const8 makes "
			    "101 values, the limit is 100");
	/* ...and the interpreter catches it without the verifier. */
	assert_int_equal(ax_eval(deep, 203, &F.ctx, &res), -EINVAL);
	assert_int_equal(res.error, AX_ERR_OVERFLOW);
	assert_int_equal(res.pc, 200);
	assert_true(ax_error_is_structural(res.error));

	/* More distinct TSVs than the list holds */
	uint8_t many[3 * 20 + 1];
	for (int i = 0; i < 20; i++) {
		many[3 * i] = AX_OP_TRACEV;
		many[3 * i + 1] = 0;
		many[3 * i + 2] = (uint8_t)i;
	}
	many[60] = AX_OP_END;
	assert_int_equal(ax_verify(many, 61, &info, NULL, 0), 0);
	assert_int_equal(info.ntsvs, AX_INFO_MAX_TSVS);
	assert_true(info.tsvs_truncated);
}

static void test_disassembler(void **state)
{
	struct rsp_buf b;
	struct code c = hex("2201" "1b" "99" "2602");

	rsp_buf_init(&b);
	assert_int_equal(ax_disassemble(c.bytes, c.len, &b), -EINVAL);
	assert_string_equal(b.data, "const8 1; ref_float; <bad 0x99>; "
			    "<truncated reg>");
	rsp_buf_reset(&b);
	c = hex("2200220034000006" "22090a7f00" "00" "27");
	assert_int_equal(ax_disassemble(c.bytes, c.len, &b), 0);
	assert_string_equal(b.data, "const8 0; const8 0; printf 0 "
			    "\"\\\"\\x09\\x0a\\x7f\"; end");
	rsp_buf_free(&b);
	assert_null(ax_opcode_name(0x99));
	assert_string_equal(ax_opcode_name(AX_OP_TRACENZ), "tracenz");
}

/* --- ax-plan: the recorder's straight-line actions ---------------------- */

static int failing_trace_tsv(const struct ax_ctx *ctx, unsigned num)
{
	(void)ctx;
	(void)num;
	return -ENOSPC;
}

/* Runs `h` through the interpreter and through its plan (which must
 * exist iff `planned`) from the same starting state: same return value,
 * result, variables and V blocks. */
static void plan_vs_eval(const char *h, bool planned)
{
	struct code c = hex(h);
	struct ax_plan *plan = ax_plan_compile(c.bytes, c.len);
	struct ax_result r1, r2;
	struct fake start = F, after_eval;
	int rc1, rc2;

	assert_int_equal(plan != NULL, planned);
	if (!plan)
		return;
	F.ntraced_tsv = 0;
	rc1 = ax_eval(c.bytes, c.len, &F.ctx, &r1);
	after_eval = F;
	F = start;
	F.ntraced_tsv = 0;
	memset(&r2, 0x5a, sizeof(r2));
	rc2 = ax_plan_run(plan, c.bytes, c.len, &F.ctx, &r2);
	assert_int_equal(rc2, rc1);
	assert_int_equal(r2.error, r1.error);
	assert_int_equal(r2.sys_errno, r1.sys_errno);
	assert_int_equal(r2.pc, r1.pc);
	assert_int_equal(r2.has_value, r1.has_value);
	assert_string_equal(r2.message, r1.message);
	if (rc1 == 0)
		assert_int_equal(r2.steps, r1.steps);
	assert_int_equal(F.ntraced_tsv, after_eval.ntraced_tsv);
	assert_memory_equal(F.traced_tsv, after_eval.traced_tsv,
			    sizeof(F.traced_tsv[0]) * F.ntraced_tsv);
	for (unsigned i = 0; i < F.ntsv; i++)
		assert_int_equal(F.tsv[i].value, after_eval.tsv[i].value);
	free(plan);
}

static void test_plan(void **state)
{
	(void)state;
	F.regs[5] = 0x1122334455667788ull;
	F.regs[4] = 42;
	/* probe-trace's frame: tracev 1; tracev 2; reg 5; setv 3; pop;
	 * tracev 3; reg 4; setv 5; pop; tracev 5; end */
	plan_vs_eval("2e00012e0002" "2600052d0003292e0003" "2600042d0005292e0005" "27", true);
	assert_int_equal(tsv_value(3), 0x1122334455667788ll);
	assert_int_equal(tsv_value(5), 42);
	assert_int_equal(F.ntraced_tsv, 4);
	/* a setv without tracev, a lone tracev */
	plan_vs_eval("2600052d000329" "27", true);
	plan_vs_eval("2e0002" "27", true);
	/* errors where the interpreter has them, the steps before done */
	plan_vs_eval("2e0001" "2600052d0009292e0009" "27", true);	/* setv 9 */
	plan_vs_eval("2e0001" "2e0009" "27", true);		/* tracev 9 */
	plan_vs_eval("2e0001" "2600282d0003292e0003" "27", true);	/* reg 40 */
	F.ctx.trace_tsv = failing_trace_tsv;
	plan_vs_eval("2e0001" "27", true);			/* buffer full */
	F.ctx.trace_tsv = fake_trace_tsv;
	F.ctx.step_budget = 3;					/* over budget */
	plan_vs_eval("2e00012e0002" "2600052d0003292e0003" "27", true);
	F.ctx.step_budget = 0;
	/* not the shape: the interpreter's */
	plan_vs_eval("27", false);				/* nothing */
	plan_vs_eval("2205" "2d000329" "27", false);		/* const8 */
	plan_vs_eval("2600052d0003" "27", false);		/* setv kept */
	plan_vs_eval("260005" "220102" "2d000329" "27", false);	/* add */
	plan_vs_eval("2e0001", false);				/* no end */
	plan_vs_eval("2e0001" "27" "27", false);		/* after end */
	plan_vs_eval("2e00", false);				/* truncated */
}

/*
 * ax_simple_trace: the one-range collects it takes as a range, each
 * checked against the interpreter's run of the same bytecode (one block,
 * the same address and length); everything else refused.
 */
static void test_simple_trace(void **state)
{
	static const struct {
		const char *hex, *dis;
		int has_reg;
		unsigned int reg;
		uint64_t off, len;
	} yes[] = {
		{ "2600052a4022400c27", "reg 5; zero_ext 64; const8 64; trace; end",
		  1, 5, 0, 64 },
		{ "260005164022080216402210" "0c27",
		  "reg 5; ext 64; const8 8; add; ext 64; const8 16; trace; end",
		  1, 5, 8, 16 },
		{ "2600062208032204" "0c27", "reg 6; const8 8; sub; const8 4; trace; end",
		  1, 6, (uint64_t)-8, 4 },
		{ "260007231000020d082927", "reg 7; const16 4096; add; trace_quick 8; pop; end",
		  1, 7, 4096, 8 },
		{ "2600070d0827", "reg 7; trace_quick 8; end", 1, 7, 0, 8 },
		{ "250000555555558020" "2240" "0c27",
		  "const64 93824992247840; const8 64; trace; end",
		  0, 0, 0x555555558020ull, 64 },
	};
	static const char *no[] = {
		/* collect *p: the pointer, then what it points to */
		"26000622100222d01608020d081a22040c27",
		"2600051a22080c27",		/* reg 5; ref64; const8 8; trace */
		"2600051620" "22080c27",	/* ext 32: not a no-op */
		"26000522080c2727",		/* a byte after the end */
		"26000522080c",			/* no end */
		"2600052208220802" "0c27",	/* const; const; add: no base */
		"2600052600060222080c27",	/* reg 5; reg 6; add: two registers */
	};
	(void)state;

	F.regs[5] = 0x7ffc00001000ull;
	F.regs[6] = 0x7ffc00002000ull;
	F.regs[7] = 0x555555559000ull;
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		struct code c = hex(yes[i].hex);
		struct ax_simple_trace t;
		struct ax_result res;

		check_disasm(&c, yes[i].dis);
		assert_int_equal(ax_simple_trace(c.bytes, c.len, &t), 0);
		assert_int_equal(t.has_reg, yes[i].has_reg);
		if (t.has_reg)
			assert_int_equal(t.regnum, yes[i].reg);
		assert_int_equal(t.offset, yes[i].off);
		assert_int_equal(t.len, yes[i].len);
		/* the interpreter collects the same range */
		assert_int_equal(run(&c, &res), 0);
		assert_int_equal(F.nblocks, 1);
		check_block(0, (t.has_reg ? F.regs[t.regnum] : 0) + t.offset, t.len);
	}
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		struct code c = hex(no[i]);
		struct ax_simple_trace t;

		if (ax_simple_trace(c.bytes, c.len, &t) != -ENOTSUP)
			fail_msg("taken as one range: %s", no[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup(fn, setup)
		T(test_collect_a),
		T(test_collect_global_struct),
		T(test_collect_array_slice),
		T(test_collect_deref_pointer),
		T(test_simple_trace),
		T(test_collect_pointer_chain),
		T(test_collect_tsv),
		T(test_teval_increment),
		T(test_teval_gdb_setv_bug),
		T(test_cond_i_greater_5),
		T(test_cond_a_equal_5),
		T(test_cond_divide_by_zero),
		T(test_cond_and),
		T(test_cond_or),
		T(test_ternary),
		T(test_casts),
		T(test_rsp_register),
		T(test_dprintf),
		T(test_collect_string),
		T(test_arith),
		T(test_shifts),
		T(test_compare_logic),
		T(test_ext_zero_ext),
		T(test_consts),
		T(test_stack_ops),
		T(test_memory_and_byte_order),
		T(test_registers_tsvs_errors),
		T(test_step_budget),
		T(test_printf_conversions),
		T(test_printf_errors),
		T(test_verify_rejects),
		T(test_verify_info),
		T(test_disassembler),
		T(test_plan),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
