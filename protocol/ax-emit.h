/*
 * ax-emit.h - building agent-expression bytecode.
 *
 * Clients (probe-trace) compile their conditions and collections to the
 * bytecode that protocol/ax.c verifies and runs.  The builder grows one
 * byte array; an allocation failure makes it sticky-failed (error set,
 * later calls do nothing) so callers check once at the end.
 *
 *	struct ax_emit e;
 *	ax_emit_init(&e);
 *	ax_emit_reg(&e, 5);			// rdi
 *	ax_emit_const(&e, 8);
 *	ax_emit_op(&e, AX_OP_ADD);
 *	ax_emit_op(&e, AX_OP_REF64);
 *	ax_emit_op(&e, AX_OP_END);
 *	if (e.error) ...
 */
#ifndef PROBE_AX_EMIT_H
#define PROBE_AX_EMIT_H

#include <stddef.h>
#include <stdint.h>

#include "protocol/ax.h"

struct ax_emit {
	uint8_t *code;
	size_t len, cap;
	int error;		/* 0 or -ENOMEM / -ERANGE, sticky */
};

void ax_emit_init(struct ax_emit *e);
void ax_emit_free(struct ax_emit *e);

/* An opcode without immediate. */
void ax_emit_op(struct ax_emit *e, enum ax_opcode op);
/* An opcode with a 1- or 2-byte immediate (ext, zero_ext, pick, trace_quick;
 * reg, getv, setv, tracev); -ERANGE if imm does not fit. */
void ax_emit_op8(struct ax_emit *e, enum ax_opcode op, unsigned int imm);
void ax_emit_op16(struct ax_emit *e, enum ax_opcode op, unsigned int imm);
/* Pushes v (the shortest const, sign-extended from it when negative). */
void ax_emit_const(struct ax_emit *e, int64_t v);
void ax_emit_reg(struct ax_emit *e, unsigned int regnum);
/* Loads `size` (1, 2, 4, 8) bytes at the address on top of the stack,
 * sign-extended when is_signed. */
void ax_emit_load(struct ax_emit *e, unsigned int size, int is_signed);
/*
 * Forward jumps: ax_emit_jump returns the offset of its 2-byte target,
 * ax_emit_patch points it at the current end.
 */
size_t ax_emit_jump(struct ax_emit *e, enum ax_opcode op);
void ax_emit_patch(struct ax_emit *e, size_t where);
/* Appends "<len in hex>,<code in hex>" (QTDP X actions and conditions). */
struct rsp_buf;
void ax_emit_put_hex(const struct ax_emit *e, struct rsp_buf *b);

#endif
