/*
 * ax-emit.c - the agent-expression bytecode builder (ax-emit.h).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/ax-emit.h"
#include "protocol/rsp.h"

void ax_emit_init(struct ax_emit *e)
{
	memset(e, 0, sizeof(*e));
}

void ax_emit_free(struct ax_emit *e)
{
	free(e->code);
	memset(e, 0, sizeof(*e));
}

static uint8_t *room(struct ax_emit *e, size_t n)
{
	if (e->error)
		return NULL;
	if (e->len + n > e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 32;
		while (cap < e->len + n)
			cap *= 2;
		uint8_t *p = realloc(e->code, cap);
		if (!p) {
			e->error = -ENOMEM;
			return NULL;
		}
		e->code = p;
		e->cap = cap;
	}
	uint8_t *p = e->code + e->len;
	e->len += n;
	return p;
}

void ax_emit_op(struct ax_emit *e, enum ax_opcode op)
{
	uint8_t *p = room(e, 1);
	if (p)
		p[0] = (uint8_t)op;
}

void ax_emit_op8(struct ax_emit *e, enum ax_opcode op, unsigned int imm)
{
	if (imm > 0xff) {
		e->error = e->error ? e->error : -ERANGE;
		return;
	}
	uint8_t *p = room(e, 2);
	if (p) {
		p[0] = (uint8_t)op;
		p[1] = (uint8_t)imm;
	}
}

void ax_emit_op16(struct ax_emit *e, enum ax_opcode op, unsigned int imm)
{
	if (imm > 0xffff) {
		e->error = e->error ? e->error : -ERANGE;
		return;
	}
	uint8_t *p = room(e, 3);
	if (p) {
		p[0] = (uint8_t)op;
		p[1] = (uint8_t)(imm >> 8);	/* immediates are big-endian */
		p[2] = (uint8_t)imm;
	}
}

/* const8/16/32/64 push their operand zero-extended. */
static void emit_uconst(struct ax_emit *e, uint64_t v, unsigned int bytes)
{
	static const enum ax_opcode op[9] = {
		[1] = AX_OP_CONST8, [2] = AX_OP_CONST16,
		[4] = AX_OP_CONST32, [8] = AX_OP_CONST64,
	};
	uint8_t *p = room(e, 1 + bytes);
	if (!p)
		return;
	p[0] = (uint8_t)op[bytes];
	for (unsigned int i = 0; i < bytes; i++)
		p[1 + i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
}

static unsigned int bytes_for(uint64_t v)
{
	if (v <= 0xff)
		return 1;
	if (v <= 0xffff)
		return 2;
	if (v <= 0xffffffffu)
		return 4;
	return 8;
}

void ax_emit_const(struct ax_emit *e, int64_t v)
{
	if (v >= 0) {
		emit_uconst(e, (uint64_t)v, bytes_for((uint64_t)v));
		return;
	}
	/* Negative: the shortest two's-complement form, then ext. */
	for (unsigned int bytes = 1; bytes < 8; bytes *= 2) {
		int64_t lo = -((int64_t)1 << (8 * bytes - 1));
		if (v >= lo) {
			uint64_t mask = ((uint64_t)1 << (8 * bytes)) - 1;
			emit_uconst(e, (uint64_t)v & mask, bytes);
			ax_emit_op8(e, AX_OP_EXT, 8 * bytes);
			return;
		}
	}
	emit_uconst(e, (uint64_t)v, 8);
}

void ax_emit_reg(struct ax_emit *e, unsigned int regnum)
{
	ax_emit_op16(e, AX_OP_REG, regnum);
}

void ax_emit_load(struct ax_emit *e, unsigned int size, int is_signed)
{
	switch (size) {
	case 1: ax_emit_op(e, AX_OP_REF8); break;
	case 2: ax_emit_op(e, AX_OP_REF16); break;
	case 4: ax_emit_op(e, AX_OP_REF32); break;
	case 8: ax_emit_op(e, AX_OP_REF64); return;
	default:
		e->error = e->error ? e->error : -ERANGE;
		return;
	}
	if (is_signed)
		ax_emit_op8(e, AX_OP_EXT, 8 * size);
}

size_t ax_emit_jump(struct ax_emit *e, enum ax_opcode op)
{
	ax_emit_op16(e, op, 0);
	return e->error ? 0 : e->len - 2;
}

void ax_emit_patch(struct ax_emit *e, size_t where)
{
	if (e->error)
		return;
	if (e->len > 0xffff || where + 2 > e->len) {
		e->error = -ERANGE;
		return;
	}
	e->code[where] = (uint8_t)(e->len >> 8);
	e->code[where + 1] = (uint8_t)e->len;
}

void ax_emit_put_hex(const struct ax_emit *e, struct rsp_buf *b)
{
	rsp_buf_printf(b, "%zx,", e->len);
	rsp_buf_put_hex(b, e->code, e->len);
}
