/*
 * ax-simple.h - agent-expression conditions simple enough for native code.
 *
 * gdb compiles `if gate == 1`, `if $rdi != 0` or `if n < 10` into a
 * handful of bytecodes: one value (a register, or a word of memory at a
 * constant address), its width conversions, a compare with a constant,
 * maybe a logical not.  ax_simple_cond() recognises exactly that shape
 * and says it as one compare, which an arch can emit as a few
 * instructions run before a jump pad saves anything (arch_ops
 * .emit_pad_cond): a false condition then costs a load and a compare.
 * Everything else (two values, arithmetic, and/or, trace state
 * variables) is refused, and the interpreter evaluates it as before.
 *
 * Pure: no system call, no allocation.
 */
#ifndef PROBE_AX_SIMPLE_H
#define PROBE_AX_SIMPLE_H

#include <stddef.h>
#include <stdint.h>

/* The compare, value OP imm; _S signed, _U unsigned (64-bit). */
enum ax_simple_op {
	AXS_EQ, AXS_NE,
	AXS_LT_S, AXS_GE_S, AXS_GT_S, AXS_LE_S,
	AXS_LT_U, AXS_GE_U, AXS_GT_U, AXS_LE_U,
};

#define AXS_CONV_MAX 4

struct ax_simple_cond {
	int mem;		/* 1: `size` bytes at `addr` (zero-extended);
				 * 0: register `regnum` (gdb's numbering) */
	unsigned int regnum;
	uint64_t addr;
	unsigned int size;	/* 1, 2, 4 or 8 */
	unsigned int nconv;	/* conversions of the value, in order */
	struct {
		int sign;	/* ext (1) or zero_ext (0) */
		unsigned int bits;	/* 8, 16 or 32 */
	} conv[AXS_CONV_MAX];
	enum ax_simple_op op;
	int64_t imm;		/* always within int32_t */
};

/* 0 and *out when `code` (a condition, `len` bytes) is one such compare;
 * -ENOTSUP when it is anything else. */
int ax_simple_cond(const uint8_t *code, size_t len, struct ax_simple_cond *out);

/* The same compare on a value already loaded and converted (the
 * interpreter's reference for tests): 1 true, 0 false. */
int ax_simple_eval(const struct ax_simple_cond *c, uint64_t raw);

/*
 * A collect of one memory range whose address is a register plus a
 * constant, or a constant (gdb's `collect *p`, `collect p->field`,
 * `collect *(char *)($rdi + 8)@16`):
 *
 *   reg R | constK A    [ext 64 | zero_ext 64]
 *   [constK OFF  add|sub  [ext 64 | zero_ext 64]]
 *   constK LEN  trace        (or: trace_quick LEN [pop])
 *   end
 *
 * which collects exactly what an `M` range (register R or none, offset,
 * length) collects: one trace of LEN bytes at the address.
 */
struct ax_simple_trace {
	int has_reg;		/* 1: the address is register `regnum` + offset */
	unsigned int regnum;
	uint64_t offset;	/* added to the register (mod 2^64), or the address */
	uint64_t len;
};

/* 0 and *out when `code` (an action's expression) is one such range;
 * -ENOTSUP when it is anything else. */
int ax_simple_trace(const uint8_t *code, size_t len, struct ax_simple_trace *out);

#endif
