/*
 * test-spec.c - probe-trace's probe specs: parsing (what each form
 * means, errors pointing at the right column) and the agent expressions
 * they compile to, run by the agent's own interpreter (protocol/ax.c)
 * against known registers and memory, and checked by its verifier.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "client/spec.h"
#include "protocol/ax-emit.h"
#include "protocol/ax.h"
#include "protocol/rsp.h"

static struct probe_spec parse_ok(const char *text)
{
	struct probe_spec s;
	char err[512];

	if (spec_parse(text, &s, err, sizeof(err)) != 0)
		fail_msg("'%s': %s", text, err);
	return s;
}

static void test_where_forms(void **state)
{
	struct probe_spec s;

	(void)state;
	s = parse_ok("main");
	assert_int_equal(s.where, SPEC_FUNC);
	assert_string_equal(s.func, "main");
	assert_null(s.lib);
	assert_int_equal(s.nitems, 1);			/* args by default */
	assert_int_equal(s.items[0].what, SPEC_ARGS);
	spec_free(&s);

	s = parse_ok("libc:malloc+0x10 regs");
	assert_string_equal(s.lib, "libc");
	assert_string_equal(s.func, "malloc");
	assert_int_equal(s.offset, 0x10);
	assert_int_equal(s.items[0].what, SPEC_REGS);
	spec_free(&s);

	s = parse_ok("ns::Klass::method%return");	/* C++ '::' is not LIB: */
	assert_null(s.lib);
	assert_string_equal(s.func, "ns::Klass::method");
	assert_true(s.ret);
	assert_int_equal(s.items[0].what, SPEC_RETVAL);	/* default */
	spec_free(&s);

	s = parse_ok("libfoo.so.1:ns::f%return retval regs");
	assert_string_equal(s.lib, "libfoo.so.1");
	assert_string_equal(s.func, "ns::f");
	assert_int_equal(s.nitems, 2);
	spec_free(&s);

	s = parse_ok("*0x401000 mem=$rsp,32");
	assert_int_equal(s.where, SPEC_ADDR);
	assert_int_equal(s.addr, 0x401000);
	assert_int_equal(s.items[0].what, SPEC_MEM);
	assert_int_equal(s.items[0].len, 32);
	assert_string_equal(s.items[0].addr_text, "$rsp");
	spec_free(&s);

	s = parse_ok("sdt:myapp:request_start args=2 if arg1 > 100");
	assert_int_equal(s.where, SPEC_SDT);
	assert_string_equal(s.provider, "myapp");
	assert_string_equal(s.name, "request_start");
	assert_null(s.lib);
	assert_int_equal(s.items[0].count, 2);
	assert_non_null(s.cond);
	assert_string_equal(s.cond_text, "arg1 > 100");
	spec_free(&s);

	s = parse_ok("f p@4 s.a[1]@16");
	assert_int_equal(s.items[0].what, SPEC_VALUE);
	assert_string_equal(s.items[0].addr_text, "p@4");
	assert_string_equal(s.items[1].addr_text, "s.a[1]@16");
	spec_free(&s);

	s = parse_ok("demo.c:42 total o->price a.b[3] *p");
	assert_int_equal(s.where, SPEC_LINE);
	assert_null(s.lib);
	assert_string_equal(s.file, "demo.c");
	assert_int_equal(s.line, 42);
	assert_int_equal(s.nitems, 4);
	assert_int_equal(s.items[0].what, SPEC_VALUE);
	assert_string_equal(s.items[0].addr_text, "total");
	assert_string_equal(s.items[1].addr_text, "o->price");
	assert_string_equal(s.items[2].addr_text, "a.b[3]");
	assert_string_equal(s.items[3].addr_text, "*p");
	spec_free(&s);

	s = parse_ok("libfoo:src/foo.c:7");
	assert_int_equal(s.where, SPEC_LINE);
	assert_string_equal(s.lib, "libfoo");
	assert_string_equal(s.file, "src/foo.c");
	assert_int_equal(s.line, 7);
	assert_int_equal(s.items[0].what, SPEC_ARGS);
	spec_free(&s);

	/* hist: no item, the condition kept */
	s = parse_ok("libc:read%return hist if retval > 0");
	assert_true(s.ret);
	assert_true(s.hist);
	assert_int_equal(s.nitems, 0);
	assert_string_equal(s.cond_text, "retval > 0");
	spec_free(&s);

	s = parse_ok("sdt:libpython3.11:python:function__entry");
	assert_string_equal(s.lib, "libpython3.11");
	assert_string_equal(s.provider, "python");
	assert_string_equal(s.name, "function__entry");
	spec_free(&s);
}

/* The error names the problem and puts a caret under column `col`. */
static void expect_error(const char *text, const char *msg, int col)
{
	struct probe_spec s;
	char err[512], caret[160];

	assert_int_equal(spec_parse(text, &s, err, sizeof(err)), -22);
	if (!strstr(err, msg))
		fail_msg("'%s': message '%s' lacks '%s'", text, err, msg);
	snprintf(caret, sizeof(caret), "\n  %*s^", col, "");
	if (!strstr(err, caret))
		fail_msg("'%s': caret not at column %d in:\n%s", text, col, err);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("", "empty spec", 0);
	expect_error("f%retur", "expected '%return'", 1);
	expect_error("*0x12zz", "expected an address after '*'", 1);
	expect_error("*0x1000%return", "needs a function", 0);
	expect_error("f+", "expected an offset after '+'", 2);
	expect_error("f+8%return", "no +OFF", 0);
	expect_error(":f", "expected a library", 0);
	expect_error("sdt:onlyone", "expected sdt:PROVIDER:NAME", 0);
	expect_error("f a+b", "expected regs, args", 2);
	expect_error("f p->", "expected regs, args", 2);
	expect_error("f 3x", "expected regs, args", 2);
	expect_error("f a[]", "expected regs, args", 2);
	expect_error("f p@", "expected regs, args", 2);
	expect_error("f p@2.x", "expected regs, args", 2);
	expect_error("f.c:0", "expected a line number", 4);
	expect_error("f.c:3%return", "needs a function, not FILE:LINE", 0);
	expect_error("f args=0", "expected args=N", 7);
	expect_error("f retval", "only known in a return probe", 2);
	expect_error("f hist", "only a return probe (FUNC%return) keeps a "
		     "latency histogram", 2);
	expect_error("f%return hist retval", "give hist alone", 14);
	expect_error("f%return args=1 hist", "give hist alone", 16);
	expect_error("f%return hist hist", "give hist alone", 14);
	expect_error("f mem=arg0", "expected mem=ADDR-EXPR,LEN", 6);
	expect_error("f mem=arg0,70000", "1 to 65535", 11);
	expect_error("f mem=,4", "expected mem=ADDR-EXPR,LEN", 6);
	expect_error("f if", "expected an expression", 4);
	expect_error("f if arg0 +", "expected an expression", 11);
	expect_error("f if (arg0", "expected ')'", 10);
	expect_error("f if u32[arg0", "expected ']'", 13);
	expect_error("f if arg0 arg1", "unexpected 'a' after", 10);
	expect_error("f if foo == 1", "unknown name 'foo'", 5);
	expect_error("f if $", "expected a register name", 6);
	expect_error("f if 0x1g", "bad number", 5);
	expect_error("f if retval == 0", "only known in a return probe", 5);
	expect_error("f mem=retval,8", "only known in a return probe", 6);
}

/* ---- compiled expressions, run by the agent's interpreter ---- */

static const uint64_t regs[] = {
	[0] = 0xdead,		/* rax */
	[4] = 7,		/* rsi */
	[5] = 0x1000,		/* rdi */
	[7] = 0x7ff0,		/* rsp */
};
static uint8_t memory[64];

static int read_reg(const struct ax_ctx *ctx, unsigned regnum, uint64_t *v)
{
	(void)ctx;
	if (regnum >= sizeof(regs) / sizeof(regs[0]))
		return -22;
	*v = regs[regnum];
	return 0;
}

static long read_mem(const struct ax_ctx *ctx, uint64_t addr, void *buf,
		     size_t len)
{
	(void)ctx;
	if (addr < 0x1000 || addr + len > 0x1000 + sizeof(memory))
		return -14;
	memcpy(buf, memory + (addr - 0x1000), len);
	return (long)len;
}


static int emit_arg(void *ctx, unsigned int n, struct ax_emit *e, char *err,
		    size_t errsize)
{
	(void)ctx;
	if (n > 1) {
		snprintf(err, errsize, "arg%u: only two", n);
		return -22;
	}
	ax_emit_reg(e, n == 0 ? 5 : 4);
	return 0;
}

static int regnum(void *ctx, const char *name)
{
	static const char *const names[] = { "rax", "rbx", "rcx", "rdx",
					     "rsi", "rdi", "rbp", "rsp" };
	(void)ctx;
	for (int i = 0; i < 8; i++)
		if (strcmp(names[i], name) == 0)
			return i;
	return -1;
}

/* Value of the condition of "f%return if EXPR" (retval allowed). */
static int64_t eval(const char *expr)
{
	char text[256], err[512];
	struct probe_spec s;
	struct spec_compile comp = {
		.emit_arg = emit_arg, .regnum = regnum, .retval_regnum = 0,
	};
	struct ax_ctx ctx = { .read_reg = read_reg, .read_mem = read_mem };
	struct ax_result res;
	struct ax_emit e;

	snprintf(text, sizeof(text), "f%%return if %s", expr);
	s = parse_ok(text);
	ax_emit_init(&e);
	if (spec_compile_expr(s.cond, &comp, &e, err, sizeof(err)) < 0)
		fail_msg("'%s': %s", expr, err);
	ax_emit_op(&e, AX_OP_END);
	assert_int_equal(e.error, 0);
	if (ax_verify(e.code, e.len, NULL, err, sizeof(err)) < 0)
		fail_msg("'%s' does not verify: %s", expr, err);
	if (ax_eval(e.code, e.len, &ctx, &res) < 0)
		fail_msg("'%s': %s", expr, res.message);
	assert_true(res.has_value);
	ax_emit_free(&e);
	spec_free(&s);
	return (int64_t)res.value;
}

static void test_compiled_values(void **state)
{
	(void)state;
	for (int i = 0; i < 64; i++)
		memory[i] = (uint8_t)(0xf0 + i);
	memory[8] = 0x80;	/* a negative byte */

	assert_int_equal(eval("42"), 42);
	assert_int_equal(eval("0x7fffffffffffffff"), INT64_MAX);
	assert_int_equal(eval("-1"), -1);
	assert_int_equal(eval("-300"), -300);
	assert_int_equal(eval("-70000"), -70000);
	assert_int_equal(eval("-5000000000"), -5000000000LL);
	assert_int_equal(eval("arg0"), 0x1000);
	assert_int_equal(eval("arg1 * 6 + 1"), 43);
	assert_int_equal(eval("1 + 2 * 3 - 4 / 2 % 3"), 5);	/* C precedence */
	assert_int_equal(eval("(1 + 2) * 3"), 9);
	assert_int_equal(eval("-7 / 2"), -3);			/* signed */
	assert_int_equal(eval("-7 % 3"), -1);
	assert_int_equal(eval("1 << 40 >> 38"), 4);
	assert_int_equal(eval("0xf0 & 0x3c | 1 ^ 3"), 0x32);
	assert_int_equal(eval("~0"), -1);
	assert_int_equal(eval("!0 + !5"), 1);
	assert_int_equal(eval("retval"), 0xdead);
	assert_int_equal(eval("$rsp - 16"), 0x7fe0);
	assert_int_equal(eval("%rsi"), 7);
	/* comparisons are signed, results 0 or 1 */
	assert_int_equal(eval("-1 < 0"), 1);
	assert_int_equal(eval("3 <= 3"), 1);
	assert_int_equal(eval("3 > 4"), 0);
	assert_int_equal(eval("4 >= 4"), 1);
	assert_int_equal(eval("arg1 == 7"), 1);
	assert_int_equal(eval("arg1 != 7"), 0);
	/* && and || give 0 or 1 and do not evaluate what they need not:
	 * u8[0] would fault */
	assert_int_equal(eval("0 && u8[0]"), 0);
	assert_int_equal(eval("5 || u8[0]"), 1);
	assert_int_equal(eval("5 && 9"), 1);
	assert_int_equal(eval("0 || 0"), 0);
	assert_int_equal(eval("0 || 3 == 3 && 2 > 1"), 1);
	/* loads: little-endian target memory, sized, signed or not */
	assert_int_equal(eval("u8[arg0]"), 0xf0);
	assert_int_equal(eval("u16[arg0]"), 0xf1f0);
	assert_int_equal(eval("u32[arg0 + 4]"), 0xf7f6f5f4);
	assert_int_equal(eval("*arg0"), (int64_t)0xf7f6f5f4f3f2f1f0ULL);
	assert_int_equal(eval("u64[arg0]"), (int64_t)0xf7f6f5f4f3f2f1f0ULL);
	assert_int_equal(eval("s8[arg0 + 8]"), -128);
	assert_int_equal(eval("u8[arg0 + 8]"), 128);
	assert_int_equal(eval("s16[arg0]"), (int16_t)0xf1f0);
	assert_int_equal(eval("s32[arg0 + 4]"), (int32_t)0xf7f6f5f4);
	assert_int_equal(eval("u8[u8[arg0 + 9] - 0xf9 + arg0]"), 0xf0);
}

static void test_compile_errors(void **state)
{
	struct probe_spec s = parse_ok("f if arg2 + $nosuch");
	struct spec_compile comp = { .emit_arg = emit_arg, .regnum = regnum };
	struct ax_emit e;
	char err[256];

	(void)state;
	ax_emit_init(&e);
	assert_int_equal(spec_compile_expr(s.cond, &comp, &e, err, sizeof(err)), -22);
	assert_non_null(strstr(err, "arg2: only two"));
	ax_emit_free(&e);
	spec_free(&s);

	s = parse_ok("f if arg0 + $nosuch");
	ax_emit_init(&e);
	assert_int_equal(spec_compile_expr(s.cond, &comp, &e, err, sizeof(err)), -22);
	assert_non_null(strstr(err, "unknown register '$nosuch'"));
	ax_emit_free(&e);
	assert_int_equal(expr_max_arg(s.cond), 0);
	assert_false(expr_uses_retval(s.cond));
	spec_free(&s);
}

/* The builder's encodings, byte for byte. */
static void test_emit_bytes(void **state)
{
	static const uint8_t want[] = {
		AX_OP_CONST8, 5,
		AX_OP_CONST16, 0x12, 0x34,
		AX_OP_CONST8, 0xff, AX_OP_EXT, 8,		/* -1 */
		AX_OP_REG, 0x01, 0x02,
		AX_OP_IF_GOTO, 0x00, 0x12,		/* to the END */
		AX_OP_REF16, AX_OP_EXT, 16,
		AX_OP_END,
	};
	struct ax_emit e;
	struct rsp_buf hex;

	(void)state;
	ax_emit_init(&e);
	ax_emit_const(&e, 5);
	ax_emit_const(&e, 0x1234);
	ax_emit_const(&e, -1);
	ax_emit_reg(&e, 0x102);
	size_t j = ax_emit_jump(&e, AX_OP_IF_GOTO);
	ax_emit_load(&e, 2, 1);
	ax_emit_patch(&e, j);
	ax_emit_op(&e, AX_OP_END);
	assert_int_equal(e.error, 0);
	assert_int_equal(e.len, sizeof(want));
	assert_memory_equal(e.code, want, sizeof(want));
	rsp_buf_init(&hex);
	ax_emit_put_hex(&e, &hex);
	rsp_buf_putc(&hex, '\0');
	assert_string_equal(hex.data, "13,2205231234" "22ff1608" "260102" "200012"
			    "18161027");
	rsp_buf_free(&hex);
	ax_emit_op8(&e, AX_OP_EXT, 300);
	assert_int_equal(e.error, -34);	/* -ERANGE, sticky */
	ax_emit_free(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_where_forms),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_compiled_values),
		cmocka_unit_test(test_compile_errors),
		cmocka_unit_test(test_emit_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
