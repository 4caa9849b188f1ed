/*
 * test-typed.c - typed values (client/typed.c): rendering from a made-up
 * frame, and the description's round trip through the trace file's
 * "#pt" lines.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "client/typed.h"
#include "protocol/ax-emit.h"
#include "protocol/rsp.h"

/* The frame: 4 registers of 8 bytes and 16 bytes of xmm0 (regnum 4),
 * two memory blocks. */
struct fake {
	uint8_t regs[5][16];
	uint64_t addr[2];
	uint8_t data[2][64];
	size_t len[2];
	bool no_regs;
};

static const uint8_t *fake_reg(void *ctx, unsigned int regnum, size_t *size)
{
	struct fake *f = ctx;

	if (f->no_regs || regnum > 4)
		return NULL;
	*size = regnum == 4 ? 16 : 8;
	return f->regs[regnum];
}

static size_t fake_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct fake *f = ctx;

	for (int i = 0; i < 2; i++)
		if (addr >= f->addr[i] && addr < f->addr[i] + f->len[i]) {
			size_t n = (size_t)(f->addr[i] + f->len[i] - addr);
			n = n < len ? n : len;
			memcpy(buf, f->data[i] + (addr - f->addr[i]), n);
			return n;
		}
	return 0;
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/*
 *   struct order { int id; double price; enum color c; char tag[4];
 *                  unsigned lo:3, hi:5; short v[3]; }   (32 bytes)
 *   o:     const struct order * in register 0 (rdi), pointee collected
 *   name:  const char * at [reg 1 + 8] (memory), string collected
 *   neg:   int, the value of `reg 2` (x)
 *   gone:  optimized out
 *   ret:   double in xmm0, the return value
 */
static void make_probe(struct typed_probe *p)
{
	struct ax_emit e;

	typed_probe_init(p);
	p->tpnum = 1;
	p->addr = 0x401000;
	p->pc_reg = 3;
	p->hide_regs = true;
	int tint = typed_add_type(p, TY_INT, "int", 4, -1, 0, true);
	int tuns = typed_add_type(p, TY_INT, "unsigned int", 4, -1, 0, false);
	int tdbl = typed_add_type(p, TY_FLOAT, "double", 8, -1, 0, false);
	int tchr = typed_add_type(p, TY_CHAR, "char", 1, -1, 0, true);
	int tshort = typed_add_type(p, TY_INT, "short", 2, -1, 0, true);
	int ten = typed_add_type(p, TY_ENUM, "enum color", 4, -1, 0, false);
	typed_add_enum(p, ten, 0, "RED");
	typed_add_enum(p, ten, 5, "GREEN");
	int ttag = typed_add_type(p, TY_ARRAY, "char [4]", 4, tchr, 4, false);
	int tv = typed_add_type(p, TY_ARRAY, "short [3]", 6, tshort, 3, false);
	int tst = typed_add_type(p, TY_STRUCT, "struct order", 32, -1, 0, false);
	typed_add_member(p, tst, "id", 0, tint, 0, 0);
	typed_add_member(p, tst, "price", 8, tdbl, 0, 0);
	typed_add_member(p, tst, "c", 16, ten, 0, 0);
	typed_add_member(p, tst, "tag", 20, ttag, 0, 0);
	typed_add_member(p, tst, "lo", 24, tuns, 0, 3);
	typed_add_member(p, tst, "hi", 24, tuns, 3, 5);
	typed_add_member(p, tst, "v", 26, tv, 0, 0);
	int tptr = typed_add_type(p, TY_PTR, "const struct order *", 8, tst, 0, false);
	int tcp = typed_add_type(p, TY_PTR, "const char *", 8, tchr, 0, false);

	typed_add_value(p, "o", tptr, TV_REG, 0, NULL, 0, TV_DEREF);
	ax_emit_init(&e);
	ax_emit_reg(&e, 1);
	ax_emit_const(&e, 8);
	ax_emit_op(&e, AX_OP_ADD);
	typed_add_value(p, "name", tcp, TV_MEM, 0, e.code, e.len, TV_STRING);
	ax_emit_free(&e);
	ax_emit_init(&e);
	ax_emit_reg(&e, 2);
	typed_add_value(p, "neg", tint, TV_VALUE, 0, e.code, e.len, 0);
	ax_emit_free(&e);
	typed_add_value(p, "gone", tint, TV_NONE, 0, NULL, 0, 0);
}

static void make_frame(struct fake *f)
{
	memset(f, 0, sizeof(*f));
	put64(f->regs[0], 0x1000);		/* o */
	put64(f->regs[1], 0x2000 - 8);		/* &name - 8 */
	put64(f->regs[2], (uint64_t)-3);	/* neg */
	put64(f->regs[3], 0x401000);		/* pc */
	double d = 2.5;
	memcpy(f->regs[4], &d, 8);		/* xmm0 */
	/* *o at 0x1000 */
	uint8_t *o = f->data[0];
	f->addr[0] = 0x1000;
	f->len[0] = 32;
	o[0] = 100;				/* id */
	d = 1.25;
	memcpy(o + 8, &d, 8);			/* price */
	o[16] = 5;				/* c = GREEN */
	memcpy(o + 20, "ab\0", 4);		/* tag */
	o[24] = 0x5 | (0x11 << 3);		/* lo = 5, hi = 17 */
	o[26] = 0xff; o[27] = 0xff;		/* v[0] = -1 */
	o[28] = 7;				/* v[1] = 7 */
	o[30] = 0; o[31] = 1;			/* v[2] = 256 */
	/* name's slot at 0x2000 and its string at 0x2010 */
	f->addr[1] = 0x2000;
	put64(f->data[1], 0x2010);
	memcpy(f->data[1] + 16, "hi \"x\"\n", 8);
	f->len[1] = 24;
}

static char *render(const struct typed_probe *p, struct fake *f, bool json)
{
	struct typed_src src = { fake_reg, fake_mem, f, NULL };
	struct rsp_buf b;

	rsp_buf_init(&b);
	if (json)
		typed_render_json(p, &src, &b);
	else
		typed_render_text(p, &src, &b);
	rsp_buf_putc(&b, '\0');
	return b.data;
}

static const char *want_text =
	"(o=0x1000 {id=100, price=1.25, c=GREEN, tag=\"ab\", lo=5, hi=17, "
	"v={-1, 7, 256}}, name=0x2010 \"hi \\\"x\\\"\\n\", neg=-3, gone=<optimized out>)";
static const char *want_json =
	"\"typed\":{\"o\":\"0x1000\",\"*o\":{\"id\":100,\"price\":1.25,\"c\":\"GREEN\","
	"\"tag\":\"ab\",\"lo\":5,\"hi\":17,\"v\":[-1,7,256]},\"name\":\"0x2010\","
	"\"*name\":\"hi \\\"x\\\"\\n\",\"neg\":-3,\"gone\":null},"
	"\"types\":{\"o\":\"const struct order *\",\"name\":\"const char *\","
	"\"neg\":\"int\",\"gone\":\"int\"}";

static void test_render(void **state)
{
	struct typed_probe p;
	struct fake f;
	char *s;

	(void)state;
	make_probe(&p);
	make_frame(&f);
	s = render(&p, &f, false);
	assert_string_equal(s, want_text);
	free(s);
	s = render(&p, &f, true);
	assert_string_equal(s, want_json);
	free(s);
	typed_probe_free(&p);
}

static void test_unavailable(void **state)
{
	struct typed_probe p;
	struct fake f;
	char *s;

	(void)state;
	make_probe(&p);
	make_frame(&f);
	f.len[0] = 12;		/* *o cut after price's first 4 bytes */
	f.len[1] = 0;		/* no name */
	s = render(&p, &f, false);
	assert_string_equal(s, "(o=0x1000 {id=100, price=<unavailable>, c=<unavailable>, "
			    "tag=<unavailable>, lo=<unavailable>, hi=<unavailable>, "
			    "v=<unavailable>}, name=<unavailable>, neg=-3, gone=<optimized out>)");
	free(s);
	f.no_regs = true;
	s = render(&p, &f, true);
	assert_string_equal(s, "\"typed\":{\"o\":null,\"name\":null,\"neg\":null,\"gone\":null},"
			    "\"types\":{\"o\":\"const struct order *\",\"name\":\"const char *\","
			    "\"neg\":\"int\",\"gone\":\"int\"}");
	free(s);
	typed_probe_free(&p);
}

static void test_return(void **state)
{
	struct typed_probe p;
	struct fake f;
	char *s;

	(void)state;
	typed_probe_init(&p);
	int tdbl = typed_add_type(&p, TY_FLOAT, "double", 8, -1, 0, false);
	int tint = typed_add_type(&p, TY_INT, "int", 4, -1, 0, true);
	int tb = typed_add_type(&p, TY_BOOL, "_Bool", 1, -1, 0, false);
	typed_add_value(&p, "return", tdbl, TV_REG, 4, NULL, 0, TV_RETURN);
	make_frame(&f);
	s = render(&p, &f, false);
	assert_string_equal(s, " = 2.5");
	free(s);
	typed_probe_free(&p);
	/* a negative int in the low half of a 64-bit register */
	typed_probe_init(&p);
	tint = typed_add_type(&p, TY_INT, "int", 4, -1, 0, true);
	typed_add_value(&p, "return", tint, TV_REG, 2, NULL, 0, TV_RETURN);
	put64(f.regs[2], 0x12345678fffffffdull);
	s = render(&p, &f, false);
	assert_string_equal(s, " = -3");
	free(s);
	typed_probe_free(&p);
	typed_probe_init(&p);
	tb = typed_add_type(&p, TY_BOOL, "_Bool", 1, -1, 0, false);
	typed_add_value(&p, "return", tb, TV_REG, 2, NULL, 0, TV_RETURN);
	s = render(&p, &f, true);
	assert_string_equal(s, "\"typed\":{\"return\":true},\"types\":{\"return\":\"_Bool\"}");
	free(s);
	typed_probe_free(&p);
}

static int collect(void *ctx, const char *text)
{
	struct typed_file *tf = ctx;

	assert_true(strlen(text) < 400);
	assert_int_equal(typed_file_add_line(tf, 1, 0x401000, text), 0);
	return 0;
}

static void test_round_trip(void **state)
{
	struct typed_probe p;
	struct typed_file tf = { 0 };
	struct fake f;
	char *s;

	(void)state;
	make_probe(&p);
	make_frame(&f);
	assert_int_equal(typed_write(&p, collect, &tf), 0);
	/* another tracepoint's lines and plain commands are left alone */
	assert_int_equal(typed_file_add_line(&tf, 1, 0x401000, "collect $regs"), 0);
	assert_null(typed_file_find(&tf, 1, 0x401000));	/* not finished */
	typed_file_finish(&tf);
	const struct typed_probe *q = typed_file_find(&tf, 1, 0x401000);
	assert_non_null(q);
	assert_null(typed_file_find(&tf, 2, 0));
	assert_true(q->hide_regs);
	assert_false(q->hide_mem);
	assert_int_equal(q->pc_reg, 3);
	s = render(q, &f, false);
	assert_string_equal(s, want_text);
	free(s);
	s = render(q, &f, true);
	assert_string_equal(s, want_json);
	free(s);
	typed_file_free(&tf);
	typed_probe_free(&p);
}

static void test_bad_lines(void **state)
{
	struct typed_file tf = { 0 };

	(void)state;
	/* Each malformed line drops its location; the others stay. */
	assert_int_equal(typed_file_add_line(&tf, 1, 1, "#pt t 0 i 4 -1 0 1 int"), 0);
	assert_int_equal(typed_file_add_line(&tf, 1, 1, "#pt v 0 r 2 - - x"), 0);
	assert_int_equal(typed_file_add_line(&tf, 2, 1, "#pt t 1 i 4 -1 0 1 int"), -22);
	assert_int_equal(typed_file_add_line(&tf, 3, 1, "#pt t 0 z 4 -1 0 1 int"), -22);
	assert_int_equal(typed_file_add_line(&tf, 4, 1, "#pt m 0 0 0 0 0 x"), -22);
	assert_int_equal(typed_file_add_line(&tf, 5, 1, "#pt v 0 m 0 zz - x"), -22);
	assert_int_equal(typed_file_add_line(&tf, 6, 1, "#pt t 0 p 8 7 0 0 int *"), 0);
	assert_int_equal(typed_file_add_line(&tf, 6, 1, "#pt v 0 r 0 - d p"), 0);
	/* an array of itself prints, bounded */
	assert_int_equal(typed_file_add_line(&tf, 7, 1, "#pt t 0 a 8 0 4 0 loop"), 0);
	assert_int_equal(typed_file_add_line(&tf, 7, 1, "#pt v 0 r 0 - - x"), 0);
	typed_file_finish(&tf);
	assert_non_null(typed_file_find(&tf, 1, 1));
	assert_null(typed_file_find(&tf, 2, 1));
	assert_null(typed_file_find(&tf, 5, 1));
	/* a pointer to a type the table lacks is not used */
	assert_null(typed_file_find(&tf, 6, 1));
	const struct typed_probe *loop = typed_file_find(&tf, 7, 1);
	assert_non_null(loop);
	struct fake f;
	make_frame(&f);
	char *s = render(loop, &f, false);
	assert_non_null(strstr(s, "{...}"));
	free(s);
	typed_file_free(&tf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_render),
		cmocka_unit_test(test_unavailable),
		cmocka_unit_test(test_return),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_bad_lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
