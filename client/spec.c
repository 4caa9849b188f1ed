/*
 * spec.c - parsing probe specifications and compiling their expressions
 * (spec.h).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/spec.h"
#include "protocol/ax-emit.h"

/* ---- errors pointing into the spec ---- */

struct parser {
	const char *text;	/* the whole spec */
	const char *p;		/* cursor (expressions) */
	const char *end;	/* end of the expression being parsed */
	char *err;
	size_t errsize;
	bool failed;
};

static void fail_at(struct parser *ps, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail_at(struct parser *ps, const char *where, const char *fmt, ...)
{
	char msg[160];
	va_list ap;
	int col = (int)(where - ps->text);

	if (ps->failed)
		return;
	ps->failed = true;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(ps->err, ps->errsize, "bad probe spec: %s\n  %s\n  %*s^",
		 msg, ps->text, col, "");
}

static char *xstrndup(const char *s, size_t n)
{
	char *r = strndup(s, n);
	if (!r)
		abort();
	return r;
}

/* ---- expressions: precedence climbing ---- */

static struct expr *node(enum expr_op op, struct expr *a, struct expr *b)
{
	struct expr *e = calloc(1, sizeof(*e));
	if (!e)
		abort();
	e->op = op;
	e->a = a;
	e->b = b;
	return e;
}

static void expr_free(struct expr *e)
{
	if (!e)
		return;
	expr_free(e->a);
	expr_free(e->b);
	free(e->reg);
	free(e);
}

static void skip_ws(struct parser *ps)
{
	while (ps->p < ps->end && isspace((unsigned char)*ps->p))
		ps->p++;
}

static bool eat(struct parser *ps, const char *tok)
{
	size_t n = strlen(tok);

	skip_ws(ps);
	if ((size_t)(ps->end - ps->p) >= n && memcmp(ps->p, tok, n) == 0) {
		ps->p += n;
		return true;
	}
	return false;
}

static size_t ident_len(const char *p, const char *end)
{
	size_t n = 0;

	while (p + n < end && (isalnum((unsigned char)p[n]) || p[n] == '_'))
		n++;
	return n;
}

static struct expr *parse_binary(struct parser *ps, int level);

static struct expr *parse_unary(struct parser *ps);

static struct expr *parse_primary(struct parser *ps)
{
	const char *start;
	size_t n;

	skip_ws(ps);
	start = ps->p;
	if (ps->p >= ps->end) {
		fail_at(ps, ps->p, "expected an expression");
		return NULL;
	}
	if (eat(ps, "(")) {
		struct expr *e = parse_binary(ps, 0);
		if (e && !eat(ps, ")")) {
			fail_at(ps, ps->p, "expected ')'");
			expr_free(e);
			return NULL;
		}
		return e;
	}
	if (isdigit((unsigned char)*ps->p)) {
		char buf[32];
		char *endp;
		n = ident_len(ps->p, ps->end);
		if (n >= sizeof(buf)) {
			fail_at(ps, start, "number too long");
			return NULL;
		}
		memcpy(buf, ps->p, n);
		buf[n] = '\0';
		errno = 0;
		unsigned long long v = strtoull(buf, &endp, 0);
		if (*endp || errno) {
			fail_at(ps, start, "bad number '%s'", buf);
			return NULL;
		}
		ps->p += n;
		struct expr *e = node(EX_NUM, NULL, NULL);
		e->value = (int64_t)v;
		return e;
	}
	if (*ps->p == '$' || *ps->p == '%') {
		ps->p++;
		n = ident_len(ps->p, ps->end);
		if (n == 0) {
			fail_at(ps, ps->p, "expected a register name");
			return NULL;
		}
		struct expr *e = node(EX_REG, NULL, NULL);
		e->reg = xstrndup(ps->p, n);
		ps->p += n;
		return e;
	}
	n = ident_len(ps->p, ps->end);
	if (n == 6 && memcmp(ps->p, "retval", 6) == 0) {
		ps->p += n;
		return node(EX_RETVAL, NULL, NULL);
	}
	if (n > 3 && memcmp(ps->p, "arg", 3) == 0) {
		char *endp;
		long v = strtol(ps->p + 3, &endp, 10);
		if (endp == ps->p + n && v >= 0 && v < 64 &&
		    isdigit((unsigned char)ps->p[3])) {
			ps->p += n;
			struct expr *e = node(EX_ARG, NULL, NULL);
			e->value = v;
			return e;
		}
	}
	if ((n == 2 || n == 3) && (ps->p[0] == 'u' || ps->p[0] == 's')) {
		long bits = strtol(ps->p + 1, NULL, 10);
		const char *q = ps->p + n;
		if ((bits == 8 || bits == 16 || bits == 32 || bits == 64) &&
		    q < ps->end && *q == '[') {
			bool is_signed = ps->p[0] == 's';
			ps->p = q + 1;
			struct expr *a = parse_binary(ps, 0);
			if (!a)
				return NULL;
			if (!eat(ps, "]")) {
				fail_at(ps, ps->p, "expected ']'");
				expr_free(a);
				return NULL;
			}
			struct expr *e = node(EX_LOAD, a, NULL);
			e->size = (unsigned int)bits / 8;
			e->is_signed = is_signed;
			return e;
		}
	}
	if (n)
		fail_at(ps, start, "unknown name '%.*s' (use argN, retval, $REG, "
			"u8[..]..u64[..], s8[..]..s64[..])", (int)n, start);
	else
		fail_at(ps, start, "unexpected '%c'", *start);
	return NULL;
}

static struct expr *parse_unary(struct parser *ps)
{
	enum expr_op op;
	struct expr *a;

	skip_ws(ps);
	if (ps->p < ps->end && (*ps->p == '-' || *ps->p == '!' ||
				*ps->p == '~' || *ps->p == '*')) {
		char c = *ps->p++;
		if (c == '!' && ps->p < ps->end && *ps->p == '=') {
			fail_at(ps, ps->p - 1, "unexpected '!='");
			return NULL;
		}
		a = parse_unary(ps);
		if (!a)
			return NULL;
		op = c == '-' ? EX_NEG : c == '!' ? EX_NOT :
		     c == '~' ? EX_BITNOT : EX_LOAD;
		struct expr *e = node(op, a, NULL);
		if (op == EX_LOAD)
			e->size = 8;
		return e;
	}
	return parse_primary(ps);
}

/* Binary operators, lowest precedence first; longer tokens first. */
static const struct binop {
	const char *tok;
	int level;
	enum expr_op op;
} binops[] = {
	{ "||", 0, EX_OR }, { "&&", 1, EX_AND }, { "|", 2, EX_BITOR },
	{ "^", 3, EX_BITXOR }, { "&", 4, EX_BITAND },
	{ "==", 5, EX_EQ }, { "!=", 5, EX_NE },
	{ "<=", 6, EX_LE }, { ">=", 6, EX_GE }, { "<<", 7, EX_SHL },
	{ ">>", 7, EX_SHR }, { "<", 6, EX_LT }, { ">", 6, EX_GT },
	{ "+", 8, EX_ADD }, { "-", 8, EX_SUB },
	{ "*", 9, EX_MUL }, { "/", 9, EX_DIV }, { "%", 9, EX_MOD },
};
#define MAX_LEVEL 9

static const struct binop *peek_binop(struct parser *ps, int level)
{
	skip_ws(ps);
	for (size_t i = 0; i < sizeof(binops) / sizeof(binops[0]); i++) {
		size_t n = strlen(binops[i].tok);
		if ((size_t)(ps->end - ps->p) < n ||
		    memcmp(ps->p, binops[i].tok, n) != 0)
			continue;
		/* `|` must not be the start of `||` (listed first). */
		return binops[i].level == level ? &binops[i] : NULL;
	}
	return NULL;
}

static struct expr *parse_binary(struct parser *ps, int level)
{
	struct expr *lhs;
	const struct binop *b;

	if (level > MAX_LEVEL)
		return parse_unary(ps);
	lhs = parse_binary(ps, level + 1);
	while (lhs && (b = peek_binop(ps, level))) {
		ps->p += strlen(b->tok);
		struct expr *rhs = parse_binary(ps, level + 1);
		if (!rhs) {
			expr_free(lhs);
			return NULL;
		}
		lhs = node(b->op, lhs, rhs);
	}
	return lhs;
}

/* Parses [start, end) as one whole expression. */
static struct expr *parse_expr(struct parser *ps, const char *start,
			       const char *end)
{
	struct expr *e;

	ps->p = start;
	ps->end = end;
	e = parse_binary(ps, 0);
	skip_ws(ps);
	if (e && ps->p < ps->end) {
		fail_at(ps, ps->p, "unexpected '%c' after the expression",
			*ps->p);
		expr_free(e);
		return NULL;
	}
	if (!e && !ps->failed)
		fail_at(ps, start, "expected an expression");
	return e;
}

int expr_max_arg(const struct expr *e)
{
	int m = -1, t;

	if (!e)
		return -1;
	if (e->op == EX_ARG)
		m = (int)e->value;
	if ((t = expr_max_arg(e->a)) > m)
		m = t;
	if ((t = expr_max_arg(e->b)) > m)
		m = t;
	return m;
}

bool expr_uses_retval(const struct expr *e)
{
	return e && (e->op == EX_RETVAL || expr_uses_retval(e->a) ||
		     expr_uses_retval(e->b));
}

/* ---- the spec ---- */

static int parse_where(struct parser *ps, const char *w, size_t n,
		       struct probe_spec *s)
{
	char *tok = xstrndup(w, n);
	char *pct = strchr(tok, '%');
	int err = -EINVAL;

	if (pct) {
		if (strcmp(pct, "%return") != 0) {
			fail_at(ps, w + (pct - tok),
				"expected '%%return' (a return probe)");
			goto out;
		}
		*pct = '\0';
		s->ret = true;
	}
	if (tok[0] == '*') {
		char *endp;
		if (s->ret) {
			fail_at(ps, w, "a return probe needs a function, not *ADDR");
			goto out;
		}
		errno = 0;
		s->addr = strtoull(tok + 1, &endp, 0);
		if (!tok[1] || *endp || errno) {
			fail_at(ps, w + 1, "expected an address after '*'");
			goto out;
		}
		s->where = SPEC_ADDR;
		err = 0;
		goto out;
	}
	if (strncmp(tok, "sdt:", 4) == 0) {
		char *parts[3];
		int np = 0;
		char *q = tok + 4;
		if (s->ret) {
			fail_at(ps, w, "USDT probes have no return probe");
			goto out;
		}
		while (np < 3) {
			parts[np++] = q;
			q = strchr(q, ':');
			if (!q)
				break;
			*q++ = '\0';
		}
		if (q || np < 2 || !*parts[np - 1] || !*parts[np - 2] ||
		    (np == 3 && !*parts[0])) {
			fail_at(ps, w, "expected sdt:PROVIDER:NAME or "
				"sdt:LIB:PROVIDER:NAME");
			goto out;
		}
		s->where = SPEC_SDT;
		if (np == 3)
			s->lib = xstrndup(parts[0], strlen(parts[0]));
		s->provider = xstrndup(parts[np - 2], strlen(parts[np - 2]));
		s->name = xstrndup(parts[np - 1], strlen(parts[np - 1]));
		err = 0;
		goto out;
	}
	/* [LIB:]FILE:LINE: what follows the last ':' is a number (no
	 * function name begins with a digit). */
	char *last = strrchr(tok, ':');
	if (last && last > tok && last[-1] != ':' && last[1] &&
	    strspn(last + 1, "0123456789") == strlen(last + 1)) {
		char *endp;
		long line = strtol(last + 1, &endp, 10);
		if (s->ret) {
			fail_at(ps, w, "a return probe needs a function, not FILE:LINE");
			goto out;
		}
		if (line <= 0 || line > 10000000) {
			fail_at(ps, w + (last - tok) + 1, "expected a line number");
			goto out;
		}
		*last = '\0';
		char *file = tok, *c = strchr(tok, ':');
		if (c) {
			*c = '\0';
			if (!*tok) {
				fail_at(ps, w, "expected a library before ':'");
				goto out;
			}
			s->lib = xstrndup(tok, strlen(tok));
			file = c + 1;
		}
		if (!*file) {
			fail_at(ps, w + (file - tok), "expected a source file name");
			goto out;
		}
		s->where = SPEC_LINE;
		s->file = xstrndup(file, strlen(file));
		s->line = (int)line;
		err = 0;
		goto out;
	}
	/* [LIB:]FUNC[+OFF]; C++ names contain "::", so LIB is what comes
	 * before the first single ':'. */
	char *fn = tok;
	for (char *c = tok; *c; c++) {
		if (c[0] == ':' && c[1] == ':') {
			c++;
			continue;
		}
		if (c[0] == ':') {
			*c = '\0';
			if (!*tok) {
				fail_at(ps, w, "expected a library before ':'");
				goto out;
			}
			s->lib = xstrndup(tok, strlen(tok));
			fn = c + 1;
			break;
		}
	}
	char *plus = strrchr(fn, '+');
	if (plus && plus != fn) {
		char *endp;
		errno = 0;
		s->offset = strtoull(plus + 1, &endp, 0);
		if (!plus[1] || *endp || errno) {
			fail_at(ps, w + (plus - tok) + 1, "expected an offset after '+'");
			goto out;
		}
		if (s->ret) {
			fail_at(ps, w, "a return probe is at a function's entry: no +OFF");
			goto out;
		}
		*plus = '\0';
	}
	if (!*fn) {
		fail_at(ps, w + (fn - tok), "expected a function name");
		goto out;
	}
	s->where = SPEC_FUNC;
	s->func = xstrndup(fn, strlen(fn));
	err = 0;
out:
	free(tok);
	return err;
}

bool spec_is_value_path(const char *w, size_t n)
{
	size_t i = 0, k;

	if (i < n && w[i] == '*')
		i++;
	k = ident_len(w + i, w + n);
	if (k == 0 || isdigit((unsigned char)w[i]))
		return false;
	i += k;
	while (i < n) {
		if (w[i] == '.' || (w[i] == '-' && i + 1 < n && w[i + 1] == '>')) {
			i += w[i] == '.' ? 1 : 2;
			k = ident_len(w + i, w + n);
			if (k == 0 || isdigit((unsigned char)w[i]))
				return false;
			i += k;
		} else if (w[i] == '[') {
			k = 0;
			i++;
			while (i < n && isalnum((unsigned char)w[i]))
				i++, k++;
			if (k == 0 || i >= n || w[i] != ']')
				return false;
			i++;
		} else if (w[i] == '@') {
			/* @N: the last thing, a count */
			k = 0;
			i++;
			while (i < n && isdigit((unsigned char)w[i]))
				i++, k++;
			return k > 0 && i == n;
		} else {
			return false;
		}
	}
	return true;
}

static int parse_item(struct parser *ps, const char *w, size_t n,
		      struct probe_spec *s)
{
	struct spec_item *it;

	if (s->nitems == SPEC_MAX_ITEMS) {
		fail_at(ps, w, "more than %d things to collect", SPEC_MAX_ITEMS);
		return -EINVAL;
	}
	it = &s->items[s->nitems];
	if (n == 4 && memcmp(w, "regs", 4) == 0) {
		it->what = SPEC_REGS;
	} else if (n == 4 && memcmp(w, "args", 4) == 0) {
		it->what = SPEC_ARGS;
	} else if (n > 5 && memcmp(w, "args=", 5) == 0) {
		char *endp;
		unsigned long c = strtoul(w + 5, &endp, 10);
		if (endp != w + n || c == 0 || c > 64) {
			fail_at(ps, w + 5, "expected args=N with N from 1 to 64");
			return -EINVAL;
		}
		it->what = SPEC_ARGS;
		it->count = (unsigned int)c;
	} else if (n == 6 && memcmp(w, "retval", 6) == 0) {
		if (!s->ret) {
			fail_at(ps, w, "retval is only known in a return probe (FUNC%%return)");
			return -EINVAL;
		}
		it->what = SPEC_RETVAL;
	} else if (n > 4 && memcmp(w, "mem=", 4) == 0) {
		const char *comma = memrchr(w, ',', n);
		char *endp;
		if (!comma || comma == w + 4) {
			fail_at(ps, w + 4, "expected mem=ADDR-EXPR,LEN");
			return -EINVAL;
		}
		char *lentext = xstrndup(comma + 1, (size_t)(w + n - comma - 1));
		errno = 0;
		it->len = strtoull(lentext, &endp, 0);
		bool bad = !*lentext || *endp || errno || it->len == 0 ||
			   it->len > 65535;
		free(lentext);
		if (bad) {
			fail_at(ps, comma + 1, "expected a length of 1 to 65535 bytes");
			return -EINVAL;
		}
		it->addr = parse_expr(ps, w + 4, comma);
		if (!it->addr)
			return -EINVAL;
		it->addr_text = xstrndup(w + 4, (size_t)(comma - w - 4));
		it->what = SPEC_MEM;
	} else if (spec_is_value_path(w, n)) {
		it->what = SPEC_VALUE;
		it->addr_text = xstrndup(w, n);
	} else {
		fail_at(ps, w, "expected regs, args, args=N, retval, mem=ADDR-EXPR,LEN, "
			"a parameter or variable (NAME, p->member, s.member, a[N], *p) or if");
		return -EINVAL;
	}
	s->nitems++;
	return 0;
}

int spec_parse(const char *text, struct probe_spec *s, char *err,
	       size_t errsize)
{
	struct parser ps = { .text = text, .err = err, .errsize = errsize };
	const char *p = text, *w;

	memset(s, 0, sizeof(*s));
	s->text = xstrndup(text, strlen(text));
	while (isspace((unsigned char)*p))
		p++;
	if (!*p) {
		fail_at(&ps, p, "empty spec: expected a function, *ADDR or sdt:PROVIDER:NAME");
		goto fail;
	}
	w = p;
	while (*p && !isspace((unsigned char)*p))
		p++;
	if (parse_where(&ps, w, (size_t)(p - w), s) < 0)
		goto fail;
	for (;;) {
		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		w = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		if (p - w == 2 && memcmp(w, "if", 2) == 0) {
			const char *c = p;
			while (isspace((unsigned char)*c))
				c++;
			s->cond = parse_expr(&ps, c, c + strlen(c));
			if (!s->cond)
				goto fail;
			if (expr_uses_retval(s->cond) && !s->ret) {
				fail_at(&ps, c, "retval is only known in a return probe");
				goto fail;
			}
			s->cond_text = xstrndup(c, strlen(c));
			break;
		}
		if (p - w == 4 && memcmp(w, "hist", 4) == 0) {
			if (!s->ret) {
				fail_at(&ps, w, "hist: only a return probe (FUNC%%return) "
					"keeps a latency histogram");
				goto fail;
			}
			if (s->nitems || s->hist) {
				fail_at(&ps, w, "hist: a histogram probe collects nothing "
					"else: give hist alone (and a condition with if)");
				goto fail;
			}
			s->hist = true;
			continue;
		}
		if (s->hist) {
			fail_at(&ps, w, "hist: a histogram probe collects nothing "
				"else: give hist alone (and a condition with if)");
			goto fail;
		}
		if (parse_item(&ps, w, (size_t)(p - w), s) < 0)
			goto fail;
	}
	for (size_t i = 0; i < s->nitems; i++)
		if (s->items[i].what == SPEC_MEM && !s->ret &&
		    expr_uses_retval(s->items[i].addr)) {
			fail_at(&ps, strstr(text, s->items[i].addr_text),
				"retval is only known in a return probe");
			goto fail;
		}
	if (s->nitems == 0 && !s->hist)
		s->items[s->nitems++].what = s->ret ? SPEC_RETVAL : SPEC_ARGS;
	return 0;
fail:
	spec_free(s);
	return -EINVAL;
}

void spec_free(struct probe_spec *s)
{
	free(s->text);
	free(s->lib);
	free(s->func);
	free(s->provider);
	free(s->name);
	free(s->file);
	for (size_t i = 0; i < s->nitems; i++) {
		expr_free(s->items[i].addr);
		free(s->items[i].addr_text);
	}
	expr_free(s->cond);
	free(s->cond_text);
	memset(s, 0, sizeof(*s));
}

const char *spec_where_text(const struct probe_spec *s, char *buf,
			    size_t size)
{
	const char *t = s->text;

	while (isspace((unsigned char)*t))
		t++;
	size_t n = strcspn(t, " \t\n");
	snprintf(buf, size, "%.*s", (int)n, t);
	return buf;
}

/* ---- compiling ---- */

int spec_compile_expr(const struct expr *x, const struct spec_compile *c,
		      struct ax_emit *e, char *err, size_t errsize)
{
	static const enum ax_opcode binop_code[] = {
		[EX_MUL] = AX_OP_MUL, [EX_DIV] = AX_OP_DIV_SIGNED,
		[EX_MOD] = AX_OP_REM_SIGNED, [EX_ADD] = AX_OP_ADD,
		[EX_SUB] = AX_OP_SUB, [EX_SHL] = AX_OP_LSH,
		[EX_SHR] = AX_OP_RSH_UNSIGNED, [EX_LT] = AX_OP_LESS_SIGNED,
		[EX_EQ] = AX_OP_EQUAL, [EX_BITAND] = AX_OP_BIT_AND,
		[EX_BITXOR] = AX_OP_BIT_XOR, [EX_BITOR] = AX_OP_BIT_OR,
	};
	int r, regnum;
	size_t j1, j2;

#define SUB(y) do { if ((r = spec_compile_expr((y), c, e, err, errsize)) < 0) return r; } while (0)
	switch (x->op) {
	case EX_NUM:
		ax_emit_const(e, x->value);
		break;
	case EX_ARG:
		return c->emit_arg(c->ctx, (unsigned int)x->value, e, err,
				   errsize);
	case EX_RETVAL:
		ax_emit_reg(e, (unsigned int)c->retval_regnum);
		break;
	case EX_REG:
		regnum = c->regnum(c->ctx, x->reg);
		if (regnum < 0) {
			snprintf(err, errsize, "unknown register '$%s'", x->reg);
			return -EINVAL;
		}
		ax_emit_reg(e, (unsigned int)regnum);
		break;
	case EX_LOAD:
		SUB(x->a);
		ax_emit_load(e, x->size, x->is_signed);
		break;
	case EX_NEG:	/* 0 - a */
		ax_emit_const(e, 0);
		SUB(x->a);
		ax_emit_op(e, AX_OP_SUB);
		break;
	case EX_NOT:
		SUB(x->a);
		ax_emit_op(e, AX_OP_LOG_NOT);
		break;
	case EX_BITNOT:
		SUB(x->a);
		ax_emit_op(e, AX_OP_BIT_NOT);
		break;
	case EX_GT:	/* b < a */
	case EX_LE:	/* !(b < a) */
		SUB(x->b);
		SUB(x->a);
		ax_emit_op(e, AX_OP_LESS_SIGNED);
		if (x->op == EX_LE)
			ax_emit_op(e, AX_OP_LOG_NOT);
		break;
	case EX_GE:	/* !(a < b) */
		SUB(x->a);
		SUB(x->b);
		ax_emit_op(e, AX_OP_LESS_SIGNED);
		ax_emit_op(e, AX_OP_LOG_NOT);
		break;
	case EX_NE:
		SUB(x->a);
		SUB(x->b);
		ax_emit_op(e, AX_OP_EQUAL);
		ax_emit_op(e, AX_OP_LOG_NOT);
		break;
	case EX_AND:	/* a ? !!b : 0 */
	case EX_OR:	/* a ? 1 : !!b */
		SUB(x->a);
		j1 = ax_emit_jump(e, AX_OP_IF_GOTO);
		/* a false */
		if (x->op == EX_AND) {
			ax_emit_const(e, 0);
		} else {
			SUB(x->b);
			ax_emit_op(e, AX_OP_LOG_NOT);
			ax_emit_op(e, AX_OP_LOG_NOT);
		}
		j2 = ax_emit_jump(e, AX_OP_GOTO);
		ax_emit_patch(e, j1);
		/* a true */
		if (x->op == EX_AND) {
			SUB(x->b);
			ax_emit_op(e, AX_OP_LOG_NOT);
			ax_emit_op(e, AX_OP_LOG_NOT);
		} else {
			ax_emit_const(e, 1);
		}
		ax_emit_patch(e, j2);
		break;
	default:
		SUB(x->a);
		SUB(x->b);
		ax_emit_op(e, binop_code[x->op]);
		break;
	}
#undef SUB
	if (e->error) {
		snprintf(err, errsize, "expression too large to compile");
		return -EINVAL;
	}
	return 0;
}
