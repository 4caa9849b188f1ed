/*
 * test-sdt.c - USDT argument parsing (client/sdt.c) and the bytecode
 * sdt_arg_emit() writes for each argument.
 *
 * The parser is checked on a table: one row per operand form as
 * compilers write it after <sys/sdt.h>, with what each field must hold,
 * then one row per kind of bad operand with a word its message must
 * contain.  The emitter is checked by meaning, not bytes: each argument
 * is compiled, verified by ax_verify() and run by ax_eval() against a
 * fake register file and memory, and the value it leaves must be the
 * one the CPU would have had (sizes, sign extension, sub-registers,
 * %ah, scaled indexes, rip-relative symbols moved by a load bias).
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "client/sdt.h"
#include "protocol/ax.h"
#include "protocol/ax-emit.h"

enum { RAX, RBX, RCX, RDX, RSI, RDI, RBP, RSP, R8, R9, R10, R11, R12, R13,
       R14, R15, RIP };

#define NONE (-1)
#define REG_ (SDT_ARG_REG)
#define IMM_ (SDT_ARG_IMM)
#define MEM_ (SDT_ARG_MEM)
#define STA_ (SDT_ARG_STATIC)

struct parse_row {
	const char *text;
	unsigned int size;
	bool is_signed;
	enum sdt_arg_kind kind;
	int reg, reg_size, reg_shift;	/* REG: the register; MEM: base */
	int index, index_size;
	unsigned int scale;
	int64_t imm, disp;
	const char *symbol;
};

static const struct parse_row parse_rows[] = {
	/* every GPR family, each width */
	{ "8@%rax",   8, 0, REG_, RAX, 8, 0, NONE, 0, 1, 0, 0, NULL },
	{ "-4@%eax",  4, 1, REG_, RAX, 4, 0, NONE, 0, 1, 0, 0, NULL },
	{ "2@%ax",    2, 0, REG_, RAX, 2, 0, NONE, 0, 1, 0, 0, NULL },
	{ "-1@%al",   1, 1, REG_, RAX, 1, 0, NONE, 0, 1, 0, 0, NULL },
	{ "1@%ah",    1, 0, REG_, RAX, 1, 8, NONE, 0, 1, 0, 0, NULL },
	{ "1@%bh",    1, 0, REG_, RBX, 1, 8, NONE, 0, 1, 0, 0, NULL },
	{ "1@%ch",    1, 0, REG_, RCX, 1, 8, NONE, 0, 1, 0, 0, NULL },
	{ "-1@%dh",   1, 1, REG_, RDX, 1, 8, NONE, 0, 1, 0, 0, NULL },
	{ "4@%ebx",   4, 0, REG_, RBX, 4, 0, NONE, 0, 1, 0, 0, NULL },
	{ "2@%cx",    2, 0, REG_, RCX, 2, 0, NONE, 0, 1, 0, 0, NULL },
	{ "1@%dl",    1, 0, REG_, RDX, 1, 0, NONE, 0, 1, 0, 0, NULL },
	{ "-1@%sil",  1, 1, REG_, RSI, 1, 0, NONE, 0, 1, 0, 0, NULL },
	{ "-1@%dil",  1, 1, REG_, RDI, 1, 0, NONE, 0, 1, 0, 0, NULL },
	{ "1@%bpl",   1, 0, REG_, RBP, 1, 0, NONE, 0, 1, 0, 0, NULL },
	{ "1@%spl",   1, 0, REG_, RSP, 1, 0, NONE, 0, 1, 0, 0, NULL },
	{ "2@%si",    2, 0, REG_, RSI, 2, 0, NONE, 0, 1, 0, 0, NULL },
	{ "4@%edi",   4, 0, REG_, RDI, 4, 0, NONE, 0, 1, 0, 0, NULL },
	{ "8@%rbp",   8, 0, REG_, RBP, 8, 0, NONE, 0, 1, 0, 0, NULL },
	{ "8@%rsp",   8, 0, REG_, RSP, 8, 0, NONE, 0, 1, 0, 0, NULL },
	{ "-8@%r8",   8, 1, REG_, R8,  8, 0, NONE, 0, 1, 0, 0, NULL },
	{ "4@%r9d",   4, 0, REG_, R9,  4, 0, NONE, 0, 1, 0, 0, NULL },
	{ "-2@%r10w", 2, 1, REG_, R10, 2, 0, NONE, 0, 1, 0, 0, NULL },
	{ "1@%r11b",  1, 0, REG_, R11, 1, 0, NONE, 0, 1, 0, 0, NULL },
	{ "8@%r12",   8, 0, REG_, R12, 8, 0, NONE, 0, 1, 0, 0, NULL },
	{ "-4@%r13d", 4, 1, REG_, R13, 4, 0, NONE, 0, 1, 0, 0, NULL },
	{ "2@%r14w",  2, 0, REG_, R14, 2, 0, NONE, 0, 1, 0, 0, NULL },
	{ "-1@%r15b", 1, 1, REG_, R15, 1, 0, NONE, 0, 1, 0, 0, NULL },
	/* no SIZE@: 8 bytes, unsigned */
	{ "%rdi",     8, 0, REG_, RDI, 8, 0, NONE, 0, 1, 0, 0, NULL },
	{ "-8(%rbp)", 8, 0, MEM_, RBP, 8, 0, NONE, 0, 1, 0, -8, NULL },
	/* constants */
	{ "-4@$17",   4, 1, IMM_, NONE, 0, 0, NONE, 0, 1, 17, 0, NULL },
	{ "8@$-1",    8, 0, IMM_, NONE, 0, 0, NONE, 0, 1, -1, 0, NULL },
	{ "4@$0x10",  4, 0, IMM_, NONE, 0, 0, NONE, 0, 1, 16, 0, NULL },
	{ "$0xffffffffffffffff", 8, 0, IMM_, NONE, 0, 0, NONE, 0, 1, -1, 0, NULL },
	/* memory */
	{ "-4@-20(%rbp)",       4, 1, MEM_, RBP, 8, 0, NONE, 0, 1, 0, -20, NULL },
	{ "8@(%rax)",           8, 0, MEM_, RAX, 8, 0, NONE, 0, 1, 0, 0, NULL },
	{ "4@0x18(%r12)",       4, 0, MEM_, R12, 8, 0, NONE, 0, 1, 0, 24, NULL },
	{ "4@8(%rax,%rbx,4)",   4, 0, MEM_, RAX, 8, 0, RBX, 8, 4, 0, 8, NULL },
	{ "-2@(%rax,%rcx)",     2, 1, MEM_, RAX, 8, 0, RCX, 8, 1, 0, 0, NULL },
	{ "1@-1(%rsi,%r9,2)",   1, 0, MEM_, RSI, 8, 0, R9, 8, 2, 0, -1, NULL },
	{ "8@(,%rdx,8)",        8, 0, MEM_, NONE, 0, 0, RDX, 8, 8, 0, 0, NULL },
	{ "4@-8(%ebp)",         4, 0, MEM_, RBP, 4, 0, NONE, 0, 1, 0, -8, NULL },
	{ "4@tab+4(%rbx,%rcx,4)", 4, 0, MEM_, RBX, 8, 0, RCX, 8, 4, 0, 4, "tab" },
	/* rip-relative and absolute: a link-time address */
	{ "-4@g(%rip)",         4, 1, STA_, NONE, 0, 0, NONE, 0, 1, 0, 0, "g" },
	{ "8@gl+8(%rip)",       8, 0, STA_, NONE, 0, 0, NONE, 0, 1, 0, 8, "gl" },
	{ "2@_ZN2ns1vE-4(%rip)", 2, 0, STA_, NONE, 0, 0, NONE, 0, 1, 0, -4, "_ZN2ns1vE" },
	{ "4@.Lvar.1(%rip)",    4, 0, STA_, NONE, 0, 0, NONE, 0, 1, 0, 0, ".Lvar.1" },
	{ "4@16(%rip)",         4, 0, STA_, NONE, 0, 0, NONE, 0, 1, 0, 16, NULL },
	{ "4@0x601040",         4, 0, STA_, NONE, 0, 0, NONE, 0, 1, 0, 0x601040, NULL },
	{ "-8@counter",         8, 1, STA_, NONE, 0, 0, NONE, 0, 1, 0, 0, "counter" },
};

static void test_parse_forms(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(parse_rows) / sizeof(parse_rows[0]); i++) {
		const struct parse_row *r = &parse_rows[i];
		struct sdt_arg a;
		char err[256] = "";
		int ret;

		ret = sdt_parse_arg(EM_X86_64, r->text, strlen(r->text), &a,
				    err, sizeof(err));
		if (ret)
			fail_msg("'%s': %s", r->text, err);
		assert_int_equal(a.size, r->size);
		assert_int_equal(a.is_signed, r->is_signed);
		assert_int_equal(a.kind, r->kind);
		if (r->kind == SDT_ARG_REG || r->kind == SDT_ARG_MEM) {
			assert_int_equal(a.reg.regnum, r->reg);
			if (r->reg != NONE) {
				assert_int_equal(a.reg.size, r->reg_size);
				assert_int_equal(a.reg.shift, r->reg_shift);
			}
		}
		if (r->kind == SDT_ARG_MEM) {
			assert_int_equal(a.index.regnum, r->index);
			if (r->index != NONE)
				assert_int_equal(a.index.size, r->index_size);
			assert_int_equal(a.scale, r->scale);
		}
		if (r->kind == SDT_ARG_IMM)
			assert_int_equal(a.imm, r->imm);
		if (r->kind == SDT_ARG_MEM || r->kind == SDT_ARG_STATIC) {
			assert_int_equal(a.disp, r->disp);
			if (r->symbol)
				assert_string_equal(a.symbol, r->symbol);
			else
				assert_null(a.symbol);
		}
		sdt_arg_clear(&a);
	}
}

struct bad_row {
	const char *text;
	const char *message;	/* a part of the error message */
};

static const struct bad_row bad_rows[] = {
	{ "3@%eax",            "size 3 is not 1, 2, 4 or 8" },
	{ "-16@%rax",          "size -16 is not" },
	{ "0@%rax",            "size 0 is not" },
	{ "4@%foo",            "unknown register %foo" },
	{ "4@%eaxq",           "unknown register %eaxq" },
	{ "4@%xmm0",           "unknown register %xmm0" },
	{ "8@%r16",            "unknown register %r16" },
	{ "4@$",               "bad constant" },
	{ "4@$abc",            "bad constant" },
	{ "4@$12z",            "unexpected 'z' after the operand" },
	{ "4@8(%rax",          "expected ')'" },
	{ "4@8(%rax)x",        "unexpected 'x'" },
	{ "4@(%rax,%rbx,3)",   "scale is not 1, 2, 4 or 8" },
	{ "4@(%rax,%rbx,)",    "scale is not" },
	{ "4@(%rax,%rsp,2)",   "cannot be an index" },
	{ "4@(%rax,%rip)",     "cannot be an index" },
	{ "4@(%al)",           "base register %al is not 64 or 32 bits" },
	{ "4@(%rax,%bx)",      "index register %bx is not 64 or 32 bits" },
	{ "4@g(%rip,%rax)",    "%rip takes no index" },
	{ "4@()",              "no base or index register" },
	{ "4@(rax)",           "no base or index register" },
	{ "4@",                "no operand after the size" },
	{ "",                  "empty argument" },
	{ "-@%eax",            "not an operand" },
	{ "4@g+(%rip)",        "expected a number after '+'" },
	{ "4@*%rax",           "not an operand" },
};

static void test_parse_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_rows) / sizeof(bad_rows[0]); i++) {
		const struct bad_row *r = &bad_rows[i];
		struct sdt_arg a;
		char err[256] = "";
		int ret;

		ret = sdt_parse_arg(EM_X86_64, r->text, strlen(r->text), &a,
				    err, sizeof(err));
		if (ret != -EINVAL)
			fail_msg("'%s' parsed (%d) but must fail", r->text, ret);
		if (!strstr(err, r->message))
			fail_msg("'%s': message '%s' lacks '%s'", r->text, err,
				 r->message);
		assert_null(a.symbol);
	}
}

/*
 * aarch64 operands, as gcc writes them into an arm64 program's notes:
 * blanks inside a memory operand do not separate arguments.
 */
static void test_parse_aarch64(void **state)
{
	struct sdt_arg *args;
	size_t n;
	char err[256] = "";

	(void)state;
	assert_int_equal(sdt_parse_args(EM_AARCH64, "1@x19 -4@[sp, 8] "
					"-8@[x0, 8]  -4@17\t8@[x1] -4@w2", &args,
					&n, err, sizeof(err)), 0);
	assert_int_equal(n, 6);
	assert_int_equal(args[0].kind, SDT_ARG_REG);
	assert_int_equal(args[0].reg.regnum, 19);
	assert_int_equal(args[0].size, 1);
	assert_int_equal(args[1].kind, SDT_ARG_MEM);
	assert_int_equal(args[1].reg.regnum, 31);	/* sp */
	assert_int_equal(args[1].disp, 8);
	assert_true(args[1].is_signed);
	assert_int_equal(args[1].size, 4);
	assert_int_equal(args[2].reg.regnum, 0);
	assert_int_equal(args[2].disp, 8);
	assert_int_equal(args[3].kind, SDT_ARG_IMM);
	assert_int_equal(args[3].imm, 17);
	assert_int_equal(args[4].reg.regnum, 1);
	assert_int_equal(args[4].disp, 0);
	assert_int_equal(args[5].reg.regnum, 2);
	assert_int_equal(args[5].reg.size, 4);
	sdt_args_free(args, n);

	assert_int_equal(sdt_parse_args(EM_AARCH64, "-4@x0 8@[x9, v1]", &args,
					&n, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "argument 2 '8@[x9, v1]': unknown register v1");
}

/* A machine the build has no arch for says so (s390: none is planned). */
static void test_parse_no_arch(void **state)
{
	struct sdt_arg a;
	char err[256] = "";

	(void)state;
	assert_int_equal(sdt_parse_arg(EM_S390, "8@%r2", 5, &a, err,
				       sizeof(err)), -EOPNOTSUPP);
	assert_non_null(strstr(err, "e_machine 22 (s390): this build has no "
			       "arch for it"));
	assert_null(a.symbol);
}

static void test_parse_args_string(void **state)
{
	struct sdt_arg *args;
	size_t n;
	char err[256] = "";

	(void)state;
	assert_int_equal(sdt_parse_args(EM_X86_64, "-1@%dil  -2@%ax\t-8@%rsi "
					"-4@g(%rip) 4@$5", &args, &n, err,
					sizeof(err)), 0);
	assert_int_equal(n, 5);
	assert_int_equal(args[0].reg.regnum, RDI);
	assert_int_equal(args[1].size, 2);
	assert_int_equal(args[2].reg.regnum, RSI);
	assert_string_equal(args[3].symbol, "g");
	assert_int_equal(args[4].imm, 5);
	sdt_args_free(args, n);

	assert_int_equal(sdt_parse_args(EM_X86_64, "", &args, &n, err,
					sizeof(err)), 0);
	assert_int_equal(n, 0);
	sdt_args_free(args, n);

	assert_int_equal(sdt_parse_args(EM_X86_64, "-4@%eax 8@%foo 4@$1",
					&args, &n, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "argument 2 '8@%foo': unknown register %foo");
	assert_null(args);
	assert_int_equal(n, 0);
}

/* ---- Emission, run through the agent's VM ------------------------------ */

#define STACK_BASE 0x7ffc0000ull
#define DATA_LINK 0x4000ull		/* link-time address of `data` */
#define DATA_BIAS 0x555555550000ull	/* where the loader put the object */
#define DATA_BASE (DATA_LINK + DATA_BIAS)

struct fake {
	struct ax_ctx ctx;		/* first: callbacks get &fake.ctx */
	uint64_t regs[17];
	struct {
		uint64_t base;
		uint8_t bytes[256];
	} mem[2];
};

static struct fake F;

static int fake_read_reg(const struct ax_ctx *ctx, unsigned regnum,
			 uint64_t *value)
{
	const struct fake *f = (const struct fake *)ctx;

	if (regnum >= sizeof(f->regs) / sizeof(f->regs[0]))
		return -EINVAL;
	*value = f->regs[regnum];
	return 0;
}

static long fake_read_mem(const struct ax_ctx *ctx, uint64_t addr, void *buf,
			  size_t len)
{
	const struct fake *f = (const struct fake *)ctx;

	for (int i = 0; i < 2; i++) {
		uint64_t base = f->mem[i].base;

		if (addr < base || addr + len > base + sizeof(f->mem[i].bytes))
			continue;
		memcpy(buf, f->mem[i].bytes + (addr - base), len);
		return (long)len;
	}
	return -EFAULT;
}

static void put(uint64_t addr, const void *v, size_t len)
{
	for (int i = 0; i < 2; i++)
		if (addr >= F.mem[i].base &&
		    addr + len <= F.mem[i].base + sizeof(F.mem[i].bytes)) {
			memcpy(F.mem[i].bytes + (addr - F.mem[i].base), v, len);
			return;
		}
	fail_msg("put outside the fake memory: %#llx", (unsigned long long)addr);
}

static int setup(void **state)
{
	(void)state;
	memset(&F, 0, sizeof(F));
	F.ctx.read_reg = fake_read_reg;
	F.ctx.read_mem = fake_read_mem;
	F.mem[0].base = STACK_BASE;
	F.mem[1].base = DATA_BASE;
	return 0;
}

/* Parses `text`, resolves its symbol (if any) at `sym_link`, compiles it
 * with `bias`, verifies and runs it; returns the value it pushed. */
static uint64_t eval_bias(const char *text, uint64_t sym_link, uint64_t bias)
{
	struct ax_emit e;
	struct ax_result res;
	struct sdt_arg a;
	char err[256] = "";
	int ret;

	ret = sdt_parse_arg(EM_X86_64, text, strlen(text), &a, err, sizeof(err));
	if (ret)
		fail_msg("'%s': %s", text, err);
	if (a.symbol) {
		a.sym_addr = sym_link;
		a.sym_resolved = true;
	}
	ax_emit_init(&e);
	assert_int_equal(sdt_arg_emit(&a, &e, bias), 0);
	ax_emit_op(&e, AX_OP_END);
	assert_int_equal(e.error, 0);
	if (ax_verify(e.code, e.len, NULL, err, sizeof(err)))
		fail_msg("'%s': the verifier refuses the code: %s", text, err);
	ret = ax_eval(e.code, e.len, &F.ctx, &res);
	if (ret || !res.has_value)
		fail_msg("'%s': %s", text, res.message);
	ax_emit_free(&e);
	sdt_arg_clear(&a);
	return res.value;
}

static uint64_t eval(const char *text)
{
	return eval_bias(text, 0, 0);
}

static void test_emit_registers(void **state)
{
	(void)state;
	F.regs[RAX] = 0x1122334455667788ull;
	F.regs[RBX] = 0x00000000ffffff85ull;
	F.regs[RCX] = 0x000000000000f0c3ull;
	F.regs[RSI] = 0xffffffffffffff9cull;	/* -100 */
	F.regs[R9] = 0x123456789abc8001ull;
	F.regs[R15] = 0xfeull;

	assert_int_equal(eval("8@%rax"), 0x1122334455667788ull);
	assert_int_equal(eval("%rax"), 0x1122334455667788ull);
	assert_int_equal(eval("4@%eax"), 0x55667788ull);
	assert_int_equal(eval("2@%ax"), 0x7788ull);
	assert_int_equal(eval("1@%al"), 0x88ull);
	assert_int_equal(eval("-1@%al"), (uint64_t)-120);
	assert_int_equal(eval("1@%ah"), 0x77ull);
	/* negative values: sign-extended from the declared size */
	assert_int_equal(eval("-4@%ebx"), (uint64_t)-123);
	assert_int_equal(eval("4@%ebx"), 0xffffff85ull);
	assert_int_equal(eval("-1@%bl"), (uint64_t)-123);
	assert_int_equal(eval("1@%ch"), 0xf0ull);
	assert_int_equal(eval("-1@%ch"), (uint64_t)-16);
	assert_int_equal(eval("-1@%cl"), (uint64_t)-61);
	assert_int_equal(eval("-8@%rsi"), (uint64_t)-100);
	assert_int_equal(eval("-1@%sil"), (uint64_t)-100);
	assert_int_equal(eval("2@%si"), 0xff9cull);
	assert_int_equal(eval("-2@%r9w"), (uint64_t)(int64_t)(int16_t)0x8001);
	assert_int_equal(eval("4@%r9d"), 0x9abc8001ull);
	assert_int_equal(eval("-1@%r15b"), (uint64_t)-2);
	assert_int_equal(eval("1@%r15b"), 0xfeull);
	/* a declared size narrower than the register keeps its low bytes */
	assert_int_equal(eval("-2@%rbx"), (uint64_t)(int64_t)(int16_t)0xff85);
}

static void test_emit_constants(void **state)
{
	(void)state;
	assert_int_equal(eval("-4@$17"), 17);
	assert_int_equal(eval("-4@$-5"), (uint64_t)-5);
	assert_int_equal(eval("4@$-5"), 0xfffffffbull);
	assert_int_equal(eval("1@$300"), 44);
	assert_int_equal(eval("-1@$200"), (uint64_t)-56);
	assert_int_equal(eval("8@$0x123456789"), 0x123456789ull);
	assert_int_equal(eval("-8@$-9223372036854775807"),
			 (uint64_t)-9223372036854775807ll);
	assert_int_equal(eval("$0xffffffffffffffff"), ~0ull);
}

static void test_emit_memory(void **state)
{
	int32_t i32 = -123;
	int16_t arr[4] = { 10, -20, 30, -40 };
	int64_t q = -5;
	uint8_t b = 0xe0;

	(void)state;
	F.regs[RBP] = STACK_BASE + 0x80;
	put(STACK_BASE + 0x80 - 20, &i32, sizeof(i32));
	assert_int_equal(eval("-4@-20(%rbp)"), (uint64_t)-123);
	assert_int_equal(eval("4@-20(%rbp)"), 0xffffff85ull);
	assert_int_equal(eval("-1@-20(%rbp)"), (uint64_t)-123);
	assert_int_equal(eval("2@-20(%rbp)"), 0xff85ull);

	F.regs[RAX] = STACK_BASE + 0x10;
	put(STACK_BASE + 0x10, &q, sizeof(q));
	assert_int_equal(eval("-8@(%rax)"), (uint64_t)-5);
	assert_int_equal(eval("(%rax)"), (uint64_t)-5);

	/* base + index * scale + disp */
	F.regs[RBX] = STACK_BASE + 0x40;
	F.regs[RCX] = 3;
	put(STACK_BASE + 0x40 + 8, arr, sizeof(arr));
	assert_int_equal(eval("-2@8(%rbx,%rcx,2)"), (uint64_t)-40);
	assert_int_equal(eval("2@8(%rbx,%rcx,2)"), 0xffd8ull);
	F.regs[RCX] = 4;
	assert_int_equal(eval("-2@8(%rbx,%rcx)"), 30);
	F.regs[RDX] = (STACK_BASE + 0x48) / 8;
	assert_int_equal(eval("-2@2(,%rdx,8)"), (uint64_t)-20);

	/* a 32-bit base: the address is its low half */
	F.regs[RDI] = 0xdead000000000000ull | (STACK_BASE + 0x90);
	put(STACK_BASE + 0x90 - 1, &b, 1);
	assert_int_equal(eval("1@-1(%edi)"), 0xe0);
	assert_int_equal(eval("-1@-1(%edi)"), (uint64_t)-32);
}

static void test_emit_static(void **state)
{
	int32_t g = -7;
	uint64_t gl = 0x0102030405060708ull;
	struct sdt_arg a;
	struct ax_emit e;
	char err[128];

	(void)state;
	put(DATA_BASE + 0x10, &g, sizeof(g));
	put(DATA_BASE + 0x20, &gl, sizeof(gl));
	/* sym(%rip): the symbol's link-time address, moved by the bias */
	assert_int_equal(eval_bias("-4@g(%rip)", DATA_LINK + 0x10, DATA_BIAS),
			 (uint64_t)-7);
	assert_int_equal(eval_bias("4@g(%rip)", DATA_LINK + 0x10, DATA_BIAS),
			 0xfffffff9ull);
	assert_int_equal(eval_bias("8@gl(%rip)", DATA_LINK + 0x20, DATA_BIAS),
			 gl);
	assert_int_equal(eval_bias("2@gl+2(%rip)", DATA_LINK + 0x20, DATA_BIAS),
			 0x0506);
	assert_int_equal(eval_bias("1@gl-8(%rip)", DATA_LINK + 0x28, DATA_BIAS),
			 0x08);
	/* a number is a link-time address too */
	assert_int_equal(eval_bias("-4@0x4010(%rip)", 0, DATA_BIAS),
			 (uint64_t)-7);
	assert_int_equal(eval_bias("-4@0x4010", 0, DATA_BIAS), (uint64_t)-7);
	/* a non-PIE object: no bias, the link-time address is the address */
	assert_int_equal(eval_bias("-4@g(%rip)", DATA_BASE + 0x10, 0),
			 (uint64_t)-7);

	/* a symbol nobody resolved cannot be compiled */
	assert_int_equal(sdt_parse_arg(EM_X86_64, "4@g(%rip)", 9, &a, err,
				       sizeof(err)), 0);
	ax_emit_init(&e);
	assert_int_equal(sdt_arg_emit(&a, &e, 0), -ENOENT);
	assert_int_equal(e.len, 0);
	ax_emit_free(&e);
	sdt_arg_clear(&a);
}

/* The bytecode shape for %ah: reg, shift right by 8, zero_ext 8. */
static void test_emit_high_byte_shape(void **state)
{
	static const uint8_t want[] = {
		AX_OP_REG, 0, 2, AX_OP_CONST8, 8, AX_OP_RSH_UNSIGNED,
		AX_OP_ZERO_EXT, 8,
	};
	struct sdt_arg a;
	struct ax_emit e;
	char err[128];

	(void)state;
	assert_int_equal(sdt_parse_arg(EM_X86_64, "1@%ch", 5, &a, err,
				       sizeof(err)), 0);
	ax_emit_init(&e);
	assert_int_equal(sdt_arg_emit(&a, &e, 0), 0);
	assert_int_equal(e.len, sizeof(want));
	assert_memory_equal(e.code, want, sizeof(want));
	ax_emit_free(&e);
}

/* Every site of a probe name, in note order, and nothing else. */
static void test_find_sites(void **state)
{
	struct sdt_probe probes[] = {
		{ .provider = "app", .name = "tick", .pc = 0x10 },
		{ .provider = "app", .name = "tock", .pc = 0x20 },
		{ .provider = "lib", .name = "tick", .pc = 0x30 },
		{ .provider = "app", .name = "tick", .pc = 0x40 },
	};
	struct sdt_file f = { .probes = probes, .nprobes = 4 };
	const struct sdt_probe *p;
	char buf[32];

	(void)state;
	p = sdt_find_next(&f, NULL, "app", "tick");
	assert_ptr_equal(p, &probes[0]);
	p = sdt_find_next(&f, p, "app", "tick");
	assert_ptr_equal(p, &probes[3]);
	assert_null(sdt_find_next(&f, p, "app", "tick"));
	assert_ptr_equal(sdt_find_next(&f, NULL, "lib", "tick"), &probes[2]);
	assert_null(sdt_find_next(&f, NULL, "app", "tic"));
	assert_int_equal(sdt_probe_fullname(&probes[1], buf, sizeof(buf)), 12);
	assert_string_equal(buf, "sdt:app:tock");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_forms),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_parse_aarch64),
		cmocka_unit_test(test_parse_no_arch),
		cmocka_unit_test(test_parse_args_string),
		cmocka_unit_test_setup(test_emit_registers, setup),
		cmocka_unit_test_setup(test_emit_constants, setup),
		cmocka_unit_test_setup(test_emit_memory, setup),
		cmocka_unit_test_setup(test_emit_static, setup),
		cmocka_unit_test(test_emit_high_byte_shape),
		cmocka_unit_test(test_find_sites),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
