/*
 * dwarfval-loc.c - DWARF location expressions translated op by op into
 * agent expressions: the address of a value (TV_MEM), the value itself
 * (TV_VALUE, DW_OP_stack_value), or the register that holds it (TV_REG);
 * with the frame base and the CFA they use, and DWARF register numbers
 * turned into gdb's.
 */
#include "config.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/dwarfval.h"
#include "client/elfsym.h"
#include "client/dwarfval-int.h"

/* ---- registers ---- */

/* gdb's name of DWARF register r of the target's arch, or NULL. */
static const char *dwarf_reg_name(const char *arch, unsigned r, char *buf,
				  size_t size)
{
	static const char *const x86_64[17] = {
		"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
		"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip",
	};

	if (arch && strstr(arch, "x86-64")) {
		if (r < 17)
			return x86_64[r];
		if (r >= 17 && r <= 32) {
			snprintf(buf, size, "xmm%u", r - 17);
			return buf;
		}
		return NULL;
	}
	if (arch && strncmp(arch, "aarch64", 7) == 0) {
		if (r <= 30) {
			snprintf(buf, size, "x%u", r);
			return buf;
		}
		if (r == 31)
			return "sp";
		if (r >= 64 && r <= 95) {
			snprintf(buf, size, "v%u", r - 64);
			return buf;
		}
	}
	return NULL;
}

static int gdb_reg(const struct dv_target *t, unsigned dwreg, char *err,
		   size_t errsize)
{
	char buf[16];
	const char *name = dwarf_reg_name(t->arch, dwreg, buf, sizeof(buf));
	int n = name ? t->regnum(t->ctx, name) : -1;

	if (n < 0)
		return fail(err, errsize, -ENOTSUP, "DWARF register %u has no "
			    "register of the target (%s)", dwreg,
			    t->arch ? t->arch : "?");
	return n;
}

void append_code(struct ax_emit *e, const struct ax_emit *from)
{
	for (size_t i = 0; i < from->len; i++) {
		ax_emit_op(e, (enum ax_opcode)from->code[i]);
	}
}

/* Pushes the CFA at the pc. */
static int emit_cfa(struct loc_ctx *lc, struct ax_emit *e, char *err,
		    size_t errsize)
{
	Dwarf_Frame *frame = NULL;
	Dwarf_Op *ops;
	size_t nops;
	struct place sub = { .kind = TV_MEM };

	if (!lc->m->cfi ||
	    dwarf_cfi_addrframe(lc->m->cfi, lc->pc - lc->m->link_to_dw + lc->m->cfi_bias,
				&frame) != 0 ||
	    dwarf_frame_cfa(frame, &ops, &nops) != 0) {
		free(frame);
		return fail(err, errsize, -ENOTSUP, "no call frame information "
			    "at 0x%" PRIx64, (uint64_t)(lc->pc - lc->m->link_to_dw));
	}
	ax_emit_init(&sub.code);
	int r = compile_ops(lc, ops, nops, &sub, err, errsize);
	free(frame);
	if (r == 0 && sub.kind != TV_MEM)
		r = fail(err, errsize, -ENOTSUP, "a CFA rule this probe cannot compute");
	if (r == 0)
		append_code(e, &sub.code);
	ax_emit_free(&sub.code);
	return r;
}

/* Pushes the frame base of the function. */
static int emit_frame_base(struct loc_ctx *lc, struct ax_emit *e, char *err,
			   size_t errsize)
{
	Dwarf_Attribute a;
	Dwarf_Op *ops;
	size_t nops;
	struct place sub = { .kind = TV_MEM };

	if (!dwarf_attr_integrate(lc->frame_fn, DW_AT_frame_base, &a) ||
	    dwarf_getlocation_addr(&a, lc->pc, &ops, &nops, 1) != 1)
		return fail(err, errsize, -ENOTSUP, "no frame base at the probe");
	ax_emit_init(&sub.code);
	int r = compile_ops(lc, ops, nops, &sub, err, errsize);
	if (r == 0 && sub.kind == TV_REG) {
		/* DW_OP_regN: the register's value is the frame base */
		ax_emit_reg(e, sub.reg);
	} else if (r == 0 && sub.kind == TV_MEM) {
		append_code(e, &sub.code);
	} else if (r == 0) {
		r = fail(err, errsize, -ENOTSUP, "a frame base this probe cannot compute");
	}
	ax_emit_free(&sub.code);
	return r;
}

/*
 * Translates a DWARF location expression.  Result: TV_REG (the value is
 * in a register), TV_MEM (the code pushes its address), TV_VALUE (the
 * code pushes the value) or TV_NONE with pl->why.
 */
int compile_ops(struct loc_ctx *lc, const Dwarf_Op *ops, size_t n,
		struct place *pl, char *err, size_t errsize)
{
	struct ax_emit *e = &pl->code;
	int r;

	if (++lc->depth > 4) {
		lc->depth--;
		return fail(err, errsize, -ELOOP, "location expressions nest too deep");
	}
	pl->kind = TV_MEM;
	if (n == 0) {
		pl->kind = TV_NONE;
		pl->why = "optimized out";
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		uint8_t op = ops[i].atom;
		int64_t n1 = (int64_t)ops[i].number;

		if (op >= DW_OP_reg0 && op <= DW_OP_reg31) {
			r = gdb_reg(lc->t, op - DW_OP_reg0, err, errsize);
			if (r < 0)
				goto fail;
			pl->kind = TV_REG;
			pl->reg = (unsigned)r;
			if (i + 1 != n) {
				pl->kind = TV_NONE;
				pl->why = "in pieces";
			}
			goto out;
		}
		if (op >= DW_OP_breg0 && op <= DW_OP_breg31) {
			if ((r = gdb_reg(lc->t, op - DW_OP_breg0, err, errsize)) < 0)
				goto fail;
			ax_emit_reg(e, (unsigned)r);
			ax_emit_const(e, n1);
			ax_emit_op(e, AX_OP_ADD);
			continue;
		}
		if (op >= DW_OP_lit0 && op <= DW_OP_lit31) {
			ax_emit_const(e, op - DW_OP_lit0);
			continue;
		}
		switch (op) {
		case DW_OP_regx:
			if ((r = gdb_reg(lc->t, (unsigned)ops[i].number, err, errsize)) < 0)
				goto fail;
			pl->kind = i + 1 == n ? TV_REG : TV_NONE;
			pl->reg = (unsigned)r;
			pl->why = "in pieces";
			goto out;
		case DW_OP_bregx:
			if ((r = gdb_reg(lc->t, (unsigned)ops[i].number, err, errsize)) < 0)
				goto fail;
			ax_emit_reg(e, (unsigned)r);
			ax_emit_const(e, (int64_t)ops[i].number2);
			ax_emit_op(e, AX_OP_ADD);
			break;
		case DW_OP_addr:
			ax_emit_const(e, (int64_t)(ops[i].number - lc->m->link_to_dw +
						   lc->t->bias));
			break;
		case DW_OP_fbreg:
			if ((r = emit_frame_base(lc, e, err, errsize)) < 0)
				goto fail;
			ax_emit_const(e, n1);
			ax_emit_op(e, AX_OP_ADD);
			break;
		case DW_OP_call_frame_cfa:
			if ((r = emit_cfa(lc, e, err, errsize)) < 0)
				goto fail;
			break;
		case DW_OP_const1u: case DW_OP_const2u: case DW_OP_const4u:
		case DW_OP_const8u: case DW_OP_constu:
		case DW_OP_const1s: case DW_OP_const2s: case DW_OP_const4s:
		case DW_OP_const8s: case DW_OP_consts:
			ax_emit_const(e, n1);
			break;
		case DW_OP_plus_uconst:
			ax_emit_const(e, n1);
			ax_emit_op(e, AX_OP_ADD);
			break;
		case DW_OP_plus: ax_emit_op(e, AX_OP_ADD); break;
		case DW_OP_minus: ax_emit_op(e, AX_OP_SUB); break;
		case DW_OP_mul: ax_emit_op(e, AX_OP_MUL); break;
		case DW_OP_and: ax_emit_op(e, AX_OP_BIT_AND); break;
		case DW_OP_or: ax_emit_op(e, AX_OP_BIT_OR); break;
		case DW_OP_xor: ax_emit_op(e, AX_OP_BIT_XOR); break;
		case DW_OP_shl: ax_emit_op(e, AX_OP_LSH); break;
		case DW_OP_shr: ax_emit_op(e, AX_OP_RSH_UNSIGNED); break;
		case DW_OP_shra: ax_emit_op(e, AX_OP_RSH_SIGNED); break;
		case DW_OP_not: ax_emit_op(e, AX_OP_BIT_NOT); break;
		case DW_OP_dup: ax_emit_op(e, AX_OP_DUP); break;
		case DW_OP_neg:
			ax_emit_const(e, -1);
			ax_emit_op(e, AX_OP_MUL);
			break;
		case DW_OP_deref:
			ax_emit_load(e, 8, 0);
			break;
		case DW_OP_deref_size:
			if (ops[i].number != 1 && ops[i].number != 2 &&
			    ops[i].number != 4 && ops[i].number != 8) {
				pl->kind = TV_NONE;
				pl->why = "an unusual location";
				goto out;
			}
			ax_emit_load(e, (unsigned)ops[i].number, 0);
			break;
		case DW_OP_stack_value:
			pl->kind = TV_VALUE;
			if (i + 1 != n) {
				pl->kind = TV_NONE;
				pl->why = "in pieces";
			}
			goto out;
		case DW_OP_entry_value:
		case DW_OP_GNU_entry_value:
			pl->kind = TV_NONE;
			pl->why = "optimized out (known only at the function's entry)";
			goto out;
		case DW_OP_piece:
		case DW_OP_bit_piece:
			pl->kind = TV_NONE;
			pl->why = "in pieces";
			goto out;
		default:
			pl->kind = TV_NONE;
			pl->why = "a location this probe cannot compute";
			goto out;
		}
	}
out:
	lc->depth--;
	return 0;
fail:
	lc->depth--;
	return r;
}
