/*
 * ax-simple.c - see ax-simple.h.
 *
 * A symbolic run of the bytecode: each stack slot is a constant, the one
 * value (with the conversions applied to it so far), or a compare of that
 * value with a constant.  Any opcode or operand shape outside that small
 * world refuses the whole condition.
 */
#include <errno.h>
#include <string.h>

#include "protocol/ax.h"
#include "protocol/ax-simple.h"

enum slot_kind { S_CONST, S_VALUE, S_BOOL };

struct slot {
	enum slot_kind kind;
	uint64_t v;		/* S_CONST */
};

#define DEPTH 4

static uint64_t get_be(const uint8_t *p, size_t n)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static uint64_t convert(uint64_t v, int sign, unsigned int bits)
{
	uint64_t mask = (1ull << bits) - 1;

	v &= mask;
	if (sign && (v >> (bits - 1)) & 1)
		v |= ~mask;
	return v;
}

static enum ax_simple_op negate(enum ax_simple_op op)
{
	static const enum ax_simple_op neg[] = {
		[AXS_EQ] = AXS_NE, [AXS_NE] = AXS_EQ,
		[AXS_LT_S] = AXS_GE_S, [AXS_GE_S] = AXS_LT_S,
		[AXS_GT_S] = AXS_LE_S, [AXS_LE_S] = AXS_GT_S,
		[AXS_LT_U] = AXS_GE_U, [AXS_GE_U] = AXS_LT_U,
		[AXS_GT_U] = AXS_LE_U, [AXS_LE_U] = AXS_GT_U,
	};
	return neg[op];
}

int ax_simple_cond(const uint8_t *code, size_t len, struct ax_simple_cond *out)
{
	struct slot st[DEPTH];
	size_t sp = 0, pc = 0;
	int have_value = 0, have_bool = 0;

	memset(out, 0, sizeof(*out));
	while (pc < len) {
		uint8_t op = code[pc];
		size_t imm = 0;

		switch (op) {
		case AX_OP_CONST8: imm = 1; break;
		case AX_OP_CONST16: case AX_OP_REG: imm = 2; break;
		case AX_OP_CONST32: imm = 4; break;
		case AX_OP_CONST64: imm = 8; break;
		case AX_OP_EXT: case AX_OP_ZERO_EXT: imm = 1; break;
		default: break;
		}
		if (len - pc - 1 < imm)
			return -ENOTSUP;
		uint64_t arg = get_be(code + pc + 1, imm);
		pc += 1 + imm;

		switch (op) {
		case AX_OP_CONST8: case AX_OP_CONST16:
		case AX_OP_CONST32: case AX_OP_CONST64:
			if (sp == DEPTH)
				return -ENOTSUP;
			st[sp++] = (struct slot){ S_CONST, arg };
			break;
		case AX_OP_REG:
			if (sp == DEPTH || have_value)
				return -ENOTSUP;
			have_value = 1;
			out->mem = 0;
			out->regnum = (unsigned int)arg;
			st[sp++] = (struct slot){ S_VALUE, 0 };
			break;
		case AX_OP_REF8: case AX_OP_REF16:
		case AX_OP_REF32: case AX_OP_REF64:
			if (!sp || st[sp - 1].kind != S_CONST || have_value)
				return -ENOTSUP;
			have_value = 1;
			out->mem = 1;
			out->addr = st[sp - 1].v;
			out->size = 1u << (op - AX_OP_REF8);
			st[sp - 1] = (struct slot){ S_VALUE, 0 };
			break;
		case AX_OP_EXT: case AX_OP_ZERO_EXT:
			if (!sp)
				return -ENOTSUP;
			if (arg >= 64 || st[sp - 1].kind == S_BOOL) {
				/* 0 or 1 survives any width of 2 bits on;
				 * 64 bits change nothing. */
				if (arg < 2)
					return -ENOTSUP;
				break;
			}
			if (st[sp - 1].kind == S_CONST) {
				if (arg == 0)
					return -ENOTSUP;
				st[sp - 1].v = convert(st[sp - 1].v, op == AX_OP_EXT,
						       (unsigned int)arg);
				break;
			}
			if ((arg != 8 && arg != 16 && arg != 32) ||
			    out->nconv == AXS_CONV_MAX)
				return -ENOTSUP;
			out->conv[out->nconv].sign = op == AX_OP_EXT;
			out->conv[out->nconv].bits = (unsigned int)arg;
			out->nconv++;
			break;
		case AX_OP_SWAP:
			if (sp < 2)
				return -ENOTSUP;
			struct slot t = st[sp - 1];
			st[sp - 1] = st[sp - 2];
			st[sp - 2] = t;
			break;
		case AX_OP_EQUAL: case AX_OP_LESS_SIGNED: case AX_OP_LESS_UNSIGNED: {
			/* a OP b with a = next, b = top: one value, one constant. */
			if (sp < 2 || have_bool)
				return -ENOTSUP;
			struct slot a = st[sp - 2], b = st[sp - 1];
			int value_left;
			if (a.kind == S_VALUE && b.kind == S_CONST)
				value_left = 1;
			else if (a.kind == S_CONST && b.kind == S_VALUE)
				value_left = 0;
			else
				return -ENOTSUP;
			uint64_t c = value_left ? b.v : a.v;
			if ((int64_t)c != (int32_t)c)
				return -ENOTSUP;
			out->imm = (int64_t)c;
			if (op == AX_OP_EQUAL)
				out->op = AXS_EQ;
			else if (op == AX_OP_LESS_SIGNED)
				out->op = value_left ? AXS_LT_S : AXS_GT_S;
			else
				out->op = value_left ? AXS_LT_U : AXS_GT_U;
			have_bool = 1;
			sp--;
			st[sp - 1] = (struct slot){ S_BOOL, 0 };
			break;
		}
		case AX_OP_LOG_NOT:
			if (!sp)
				return -ENOTSUP;
			if (st[sp - 1].kind == S_CONST) {
				st[sp - 1].v = !st[sp - 1].v;
			} else if (st[sp - 1].kind == S_BOOL) {
				out->op = negate(out->op);
			} else {
				if (have_bool)
					return -ENOTSUP;
				have_bool = 1;
				out->op = AXS_EQ;
				out->imm = 0;
				st[sp - 1].kind = S_BOOL;
			}
			break;
		case AX_OP_END:
			if (sp != 1 || !have_value || st[0].kind == S_CONST)
				return -ENOTSUP;
			if (st[0].kind == S_VALUE) {
				out->op = AXS_NE;	/* true when not zero */
				out->imm = 0;
			}
			return 0;
		default:
			return -ENOTSUP;
		}
	}
	return -ENOTSUP;
}

int ax_simple_eval(const struct ax_simple_cond *c, uint64_t raw)
{
	uint64_t v = raw, k = (uint64_t)c->imm;

	if (c->mem && c->size < 8)
		v &= (1ull << (8 * c->size)) - 1;
	for (unsigned int i = 0; i < c->nconv; i++)
		v = convert(v, c->conv[i].sign, c->conv[i].bits);
	switch (c->op) {
	case AXS_EQ: return v == k;
	case AXS_NE: return v != k;
	case AXS_LT_S: return (int64_t)v < (int64_t)k;
	case AXS_GE_S: return (int64_t)v >= (int64_t)k;
	case AXS_GT_S: return (int64_t)v > (int64_t)k;
	case AXS_LE_S: return (int64_t)v <= (int64_t)k;
	case AXS_LT_U: return v < k;
	case AXS_GE_U: return v >= k;
	case AXS_GT_U: return v > k;
	case AXS_LE_U: return v <= k;
	}
	return 0;
}

/* One instruction of `code` at *pc: its opcode and big-endian immediate;
 * -1 past the end or when the immediate does not fit. */
static int next_op(const uint8_t *code, size_t len, size_t *pc, uint64_t *arg)
{
	size_t imm = 0;

	if (*pc >= len)
		return -1;
	uint8_t op = code[*pc];
	switch (op) {
	case AX_OP_CONST8: case AX_OP_TRACE_QUICK:
	case AX_OP_EXT: case AX_OP_ZERO_EXT: imm = 1; break;
	case AX_OP_CONST16: case AX_OP_REG: imm = 2; break;
	case AX_OP_CONST32: imm = 4; break;
	case AX_OP_CONST64: imm = 8; break;
	default: break;
	}
	if (len - *pc - 1 < imm)
		return -1;
	*arg = get_be(code + *pc + 1, imm);
	*pc += 1 + imm;
	return op;
}

static int is_const(int op)
{
	return op == AX_OP_CONST8 || op == AX_OP_CONST16 ||
	       op == AX_OP_CONST32 || op == AX_OP_CONST64;
}

/* The next instruction after a width conversion to 64 bits (a no-op on
 * 64-bit values), if there is one. */
static int next_skip_conv64(const uint8_t *code, size_t len, size_t *pc,
			    uint64_t *arg)
{
	int op = next_op(code, len, pc, arg);

	if ((op == AX_OP_EXT || op == AX_OP_ZERO_EXT) && *arg == 64)
		op = next_op(code, len, pc, arg);
	return op;
}

int ax_simple_trace(const uint8_t *code, size_t len, struct ax_simple_trace *out)
{
	size_t pc = 0;
	uint64_t arg, arg2;
	int op, op2;

	memset(out, 0, sizeof(*out));
	op = next_op(code, len, &pc, &arg);
	if (op == AX_OP_REG) {
		out->has_reg = 1;
		out->regnum = (unsigned int)arg;
	} else if (is_const(op)) {
		out->offset = arg;
	} else {
		return -ENOTSUP;
	}
	op = next_skip_conv64(code, len, &pc, &arg);
	if (is_const(op)) {
		op2 = next_op(code, len, &pc, &arg2);
		if (op2 == AX_OP_ADD || op2 == AX_OP_SUB) {
			/* `constK OFF; add|sub`: the address's offset. */
			out->offset += op2 == AX_OP_ADD ? arg : (uint64_t)0 - arg;
			op = next_skip_conv64(code, len, &pc, &arg);
			if (is_const(op))
				op2 = next_op(code, len, &pc, &arg2);
			else
				op2 = -1;
		}
	} else {
		op2 = -1;
	}
	if (is_const(op) && op2 == AX_OP_TRACE) {
		out->len = arg;		/* constK LEN; trace */
	} else if (op == AX_OP_TRACE_QUICK) {
		out->len = arg;
		size_t save = pc;
		if (next_op(code, len, &pc, &arg) != AX_OP_POP)
			pc = save;
	} else {
		return -ENOTSUP;
	}
	return next_op(code, len, &pc, &arg) == AX_OP_END && pc == len ? 0 : -ENOTSUP;
}
