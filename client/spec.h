/*
 * spec.h - probe specifications of `probe-trace record -e SPEC`.
 *
 *   SPEC  := WHERE { WHAT } [ "if" COND ]
 *   WHERE := FUNC[+OFF] | LIB:FUNC[+OFF] | *ADDR
 *          | FUNC%return | LIB:FUNC%return
 *          | FILE:LINE | LIB:FILE:LINE
 *          | sdt:PROVIDER:NAME | sdt:LIB:PROVIDER:NAME
 *   WHAT  := regs | args | args=N | retval | mem=EXPR,LEN | VALUE | hist
 *   VALUE := [*] NAME { .MEMBER | ->MEMBER | [N] } [@N]   (from DWARF:
 *            a parameter, a local in scope or a global, with its type;
 *            @N: N elements from where a pointer points, as gdb's *p@N)
 *   EXPR  := C-like 64-bit integer expression over numbers, argN, retval,
 *            $REG (gdb register names), *E (8-byte load), u8[E] .. u64[E]
 *            and s8[E] .. s64[E] (sized loads), ( ) and the operators
 *            || && | ^ & == != < <= > >= << >> + - * / % ! ~ unary -.
 *
 * Parsing is pure; the result is compiled to agent expressions by
 * spec_compile_expr with callbacks for what depends on the probe (where
 * argN lives).
 */
#ifndef PROBE_CLIENT_SPEC_H
#define PROBE_CLIENT_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ax_emit;

enum spec_where {
	SPEC_FUNC,		/* func (+ offset), in lib or the program */
	SPEC_ADDR,		/* *ADDR: a runtime address */
	SPEC_SDT,		/* sdt:[LIB:]PROVIDER:NAME */
	SPEC_LINE,		/* [LIB:]FILE:LINE */
};

enum spec_what {
	SPEC_REGS,
	SPEC_ARGS,
	SPEC_RETVAL,
	SPEC_MEM,
	SPEC_VALUE,		/* a value by name, typed from DWARF */
};

enum expr_op {
	EX_NUM, EX_ARG, EX_RETVAL, EX_REG,
	EX_LOAD,		/* a = address; size, is_signed */
	EX_NEG, EX_NOT, EX_BITNOT,
	EX_MUL, EX_DIV, EX_MOD, EX_ADD, EX_SUB, EX_SHL, EX_SHR,
	EX_LT, EX_LE, EX_GT, EX_GE, EX_EQ, EX_NE,
	EX_BITAND, EX_BITXOR, EX_BITOR, EX_AND, EX_OR,
};

struct expr {
	enum expr_op op;
	struct expr *a, *b;
	int64_t value;		/* EX_NUM; EX_ARG: n */
	char *reg;		/* EX_REG: name */
	unsigned int size;	/* EX_LOAD */
	bool is_signed;
};

struct spec_item {
	enum spec_what what;
	struct expr *addr;	/* SPEC_MEM */
	char *addr_text;	/* SPEC_MEM; SPEC_VALUE: the access path */
	uint64_t len;
	unsigned int count;	/* SPEC_ARGS: args=N, 0 = all */
};

#define SPEC_MAX_ITEMS 16

struct probe_spec {
	char *text;			/* as given */
	enum spec_where where;
	char *lib;			/* NULL: the program */
	char *func;
	uint64_t offset, addr;
	char *provider, *name;		/* SDT */
	char *file;			/* SPEC_LINE */
	int line;
	bool ret;			/* %return */
	struct spec_item items[SPEC_MAX_ITEMS];
	size_t nitems;
	struct expr *cond;
	char *cond_text;
	bool hist;			/* `hist`: nitems is 0 */
};

/*
 * Parses one spec.  On error returns -EINVAL and writes a message that
 * quotes the spec and points at the offending character.
 */
int spec_parse(const char *text, struct probe_spec *out, char *err,
	       size_t errsize);
void spec_free(struct probe_spec *s);
/* The probe's name in output: the WHERE part as written. */
const char *spec_where_text(const struct probe_spec *s, char *buf,
			    size_t size);
/* Is [w, w + n) a VALUE (see the grammar above)? */
bool spec_is_value_path(const char *w, size_t n);
/* Does the expression use argN (the largest N + 1), retval? */
int expr_max_arg(const struct expr *e);
bool expr_uses_retval(const struct expr *e);

struct spec_compile {
	/* Push argument n; 0 or a negative errno with a message in err. */
	int (*emit_arg)(void *ctx, unsigned int n, struct ax_emit *e,
			char *err, size_t errsize);
	/* gdb register number for a name, or -1. */
	int (*regnum)(void *ctx, const char *name);
	void *ctx;
	int retval_regnum;
};

/* Appends code pushing the expression's value.  0 or -EINVAL (err). */
int spec_compile_expr(const struct expr *x, const struct spec_compile *c,
		      struct ax_emit *e, char *err, size_t errsize);

#endif
