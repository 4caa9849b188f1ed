/*
 * ax.h - GDB agent expressions: verifier, interpreter, disassembler.
 *
 * gdb compiles tracepoint conditions, collection actions (`collect a`,
 * `teval $v = ...`), target-side breakpoint conditions and agent dprintf
 * into a small stack bytecode (gdbsupport/ax.def) and sends it in QTDP and
 * Z0 packets.  The agent runs that bytecode every time a tracepoint or
 * breakpoint is hit, so this module is split in two:
 *
 *   - ax_verify() walks an expression once, when gdb installs it.  It
 *     decodes every instruction, checks immediates and jump targets, and
 *     computes the stack depth on every path by abstract interpretation
 *     (an interval [min,max] of depths per instruction, iterated to a
 *     fixed point across back edges).  Anything gdb 13 would never send,
 *     anything gdbserver leaves unimplemented and anything that could
 *     overflow or underflow the stack is rejected here, with a message
 *     meant for gdb (`E.<text>`), so that a broken expression fails at
 *     `tstart` rather than in the middle of a trace run.
 *
 *   - ax_eval() interprets a verified expression with gdbserver 13's
 *     semantics (64-bit stack, wrap-around arithmetic, big-endian
 *     immediates, `const8` zero-extended, `setv` leaving its value, `rot`
 *     as gdbserver does it).  It reaches the target only through the
 *     callbacks of `struct ax_ctx`.  It never allocates, never blocks on
 *     its own and uses a fixed ~1 KiB of stack, so it is safe to call on a
 *     hot path (a trap handler, a jump pad's collection routine).  It still
 *     checks every bound at run time, so that even unverified bytes cannot
 *     make it read or write outside its arguments; verified code never
 *     fails those checks (the fuzzer asserts it).
 *
 * Invariants of a verified expression (all checked by ax_verify):
 *   - 1 <= len <= AX_MAX_LEN; every byte belongs to a decoded instruction
 *     with a known, implemented opcode and in-bounds immediates;
 *   - goto/if_goto targets are instruction boundaries inside the code;
 *   - no reachable instruction falls through past the last byte, and some
 *     `end` is reachable;
 *   - on every path every instruction finds the operands it needs and the
 *     stack never holds more than AX_STACK_MAX values;
 *   - printf formats are NUL-terminated, use only conversions the agent
 *     implements and consume exactly the number of arguments passed.
 *
 * Decisions where gdbserver is undefined or sloppy (see doc comments of
 * enum ax_error and ax_eval for the full list):
 *   - INT64_MIN / -1 = INT64_MIN and INT64_MIN % -1 = 0 (gdbserver
 *     computes it in C: undefined, SIGFPE on x86-64);
 *   - shift counts are unsigned 64-bit; a count >= 64 gives 0 for lsh and
 *     rsh_unsigned and the sign fill (0 or -1) for rsh_signed;
 *   - `ext 0` is rejected by the verifier (gdbserver: 1 << -1);
 *     `zero_ext 0` gives 0; ext/zero_ext with n >= 64 are no-ops;
 *   - ref8..ref64 on unreadable memory stop the evaluation with an error
 *     ("unreadable memory at 0x..."), which the agent turns into `terror`
 *     and gdb shows in tstatus; gdbserver pushes garbage instead;
 *   - tracenz records the readable prefix up to and including the NUL,
 *     at most `limit` bytes, and nothing (no error) if the first byte is
 *     unreadable: a NULL string must not stop a trace experiment;
 *   - a `%s` argument of 0 prints "(null)", as glibc's printf does in
 *     gdbserver; an unreadable %s string is an error.
 */
#ifndef PROBE_AX_H
#define PROBE_AX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rsp_buf;

/* Deepest stack an expression may use (gdbserver's STACK_MAX). */
#define AX_STACK_MAX 100
/* Longest expression accepted: more than a QTDP or Z0 packet can carry
 * (RSP_MAX_PAYLOAD bytes of hex), and below the 64 KiB goto range. */
#define AX_MAX_LEN 16384
/* Instructions one ax_eval() may execute unless the context says otherwise:
 * a loop made of gotos stops with AX_ERR_STEP_BUDGET. */
#define AX_STEP_BUDGET 1000000
/* Distinct trace state variables ax_verify() lists in struct ax_info. */
#define AX_INFO_MAX_TSVS 16
/* A %s argument prints at most this many bytes of the target string. */
#define AX_PRINTF_STRING_MAX 4096
/* printf widths and precisions above this are rejected by the verifier. */
#define AX_PRINTF_WIDTH_MAX 1024
/* tracenz scans at most this many bytes for the NUL, whatever its limit. */
#define AX_TRACENZ_SCAN_MAX (1u << 20)

/*
 * The opcode table (gdbsupport/ax.def, gdb 13.1), one row per opcode:
 * X(value, NAME, "name", immediate bytes, values popped, values pushed,
 *   implemented).  Pops -1 marks a stack effect that depends on the
 * immediate (pick, printf).  Immediates are big-endian.  Rows with
 * implemented = 0 are valid opcodes that gdbserver 13 does not implement
 * either (the float family, trace16) or a placeholder (invalid2); gdb 13
 * never emits them.
 */
#define AX_OPCODES(X)							\
	X(0x01, FLOAT,           "float",           0,  0, 0, 0)	\
	X(0x02, ADD,             "add",             0,  2, 1, 1)	\
	X(0x03, SUB,             "sub",             0,  2, 1, 1)	\
	X(0x04, MUL,             "mul",             0,  2, 1, 1)	\
	X(0x05, DIV_SIGNED,      "div_signed",      0,  2, 1, 1)	\
	X(0x06, DIV_UNSIGNED,    "div_unsigned",    0,  2, 1, 1)	\
	X(0x07, REM_SIGNED,      "rem_signed",      0,  2, 1, 1)	\
	X(0x08, REM_UNSIGNED,    "rem_unsigned",    0,  2, 1, 1)	\
	X(0x09, LSH,             "lsh",             0,  2, 1, 1)	\
	X(0x0a, RSH_SIGNED,      "rsh_signed",      0,  2, 1, 1)	\
	X(0x0b, RSH_UNSIGNED,    "rsh_unsigned",    0,  2, 1, 1)	\
	X(0x0c, TRACE,           "trace",           0,  2, 0, 1)	\
	X(0x0d, TRACE_QUICK,     "trace_quick",     1,  1, 1, 1)	\
	X(0x0e, LOG_NOT,         "log_not",         0,  1, 1, 1)	\
	X(0x0f, BIT_AND,         "bit_and",         0,  2, 1, 1)	\
	X(0x10, BIT_OR,          "bit_or",          0,  2, 1, 1)	\
	X(0x11, BIT_XOR,         "bit_xor",         0,  2, 1, 1)	\
	X(0x12, BIT_NOT,         "bit_not",         0,  1, 1, 1)	\
	X(0x13, EQUAL,           "equal",           0,  2, 1, 1)	\
	X(0x14, LESS_SIGNED,     "less_signed",     0,  2, 1, 1)	\
	X(0x15, LESS_UNSIGNED,   "less_unsigned",   0,  2, 1, 1)	\
	X(0x16, EXT,             "ext",             1,  1, 1, 1)	\
	X(0x17, REF8,            "ref8",            0,  1, 1, 1)	\
	X(0x18, REF16,           "ref16",           0,  1, 1, 1)	\
	X(0x19, REF32,           "ref32",           0,  1, 1, 1)	\
	X(0x1a, REF64,           "ref64",           0,  1, 1, 1)	\
	X(0x1b, REF_FLOAT,       "ref_float",       0,  0, 0, 0)	\
	X(0x1c, REF_DOUBLE,      "ref_double",      0,  0, 0, 0)	\
	X(0x1d, REF_LONG_DOUBLE, "ref_long_double", 0,  0, 0, 0)	\
	X(0x1e, L_TO_D,          "l_to_d",          0,  0, 0, 0)	\
	X(0x1f, D_TO_L,          "d_to_l",          0,  0, 0, 0)	\
	X(0x20, IF_GOTO,         "if_goto",         2,  1, 0, 1)	\
	X(0x21, GOTO,            "goto",            2,  0, 0, 1)	\
	X(0x22, CONST8,          "const8",          1,  0, 1, 1)	\
	X(0x23, CONST16,         "const16",         2,  0, 1, 1)	\
	X(0x24, CONST32,         "const32",         4,  0, 1, 1)	\
	X(0x25, CONST64,         "const64",         8,  0, 1, 1)	\
	X(0x26, REG,             "reg",             2,  0, 1, 1)	\
	X(0x27, END,             "end",             0,  0, 0, 1)	\
	X(0x28, DUP,             "dup",             0,  1, 2, 1)	\
	X(0x29, POP,             "pop",             0,  1, 0, 1)	\
	X(0x2a, ZERO_EXT,        "zero_ext",        1,  1, 1, 1)	\
	X(0x2b, SWAP,            "swap",            0,  2, 2, 1)	\
	X(0x2c, GETV,            "getv",            2,  0, 1, 1)	\
	X(0x2d, SETV,            "setv",            2,  1, 1, 1)	\
	X(0x2e, TRACEV,          "tracev",          2,  0, 0, 1)	\
	X(0x2f, TRACENZ,         "tracenz",         0,  2, 0, 1)	\
	X(0x30, TRACE16,         "trace16",         2,  1, 1, 0)	\
	X(0x31, INVALID2,        "invalid2",        0,  0, 0, 0)	\
	X(0x32, PICK,            "pick",            1, -1, 1, 1)	\
	X(0x33, ROT,             "rot",             0,  3, 3, 1)	\
	X(0x34, PRINTF,          "printf",          3, -1, 0, 1)

enum ax_opcode {
#define AX_ENUM_ROW(v, up, name, imm, pops, pushes, impl) AX_OP_##up = v,
	AX_OPCODES(AX_ENUM_ROW)
#undef AX_ENUM_ROW
};

/*
 * Why an evaluation stopped.  The first group are "structural" errors:
 * ax_verify() rules them out, so ax_eval() reports them only for code
 * that was never verified.  The rest depend on the target's state.
 */
enum ax_error {
	AX_OK = 0,
	/* structural: impossible after ax_verify() */
	AX_ERR_EMPTY_EXPR,	/* zero-length expression */
	AX_ERR_BAD_OPCODE,	/* unknown or unimplemented opcode */
	AX_ERR_TRUNCATED,	/* immediate or printf format past the end */
	AX_ERR_INVALID_GOTO,	/* jump target outside the code */
	AX_ERR_NO_END,		/* ran past the last byte without `end` */
	AX_ERR_UNDERFLOW,	/* an operator found too few values */
	AX_ERR_OVERFLOW,	/* more than AX_STACK_MAX values */
	AX_ERR_BAD_FORMAT,	/* printf format the agent cannot print */
	/* run-time: depend on registers, memory, TSVs and values */
	AX_ERR_EMPTY_STACK,	/* ax_eval_cond(): `end` with nothing */
	AX_ERR_DIV_ZERO,	/* div_* or rem_* by 0 */
	AX_ERR_MEMORY,		/* ref* or a %s string on unreadable memory */
	AX_ERR_REGISTER,	/* read_reg refused the register number */
	AX_ERR_TSV,		/* tsv_get / tsv_set: unknown variable */
	AX_ERR_COLLECT,		/* trace_mem / trace_tsv / printf_out failed */
	AX_ERR_STEP_BUDGET,	/* more instructions than the budget */
	AX_ERR_COUNT
};

/* A short constant name for `e` ("divide by zero"...). */
const char *ax_error_name(enum ax_error e);
/* True for the structural errors ax_verify() rules out. */
bool ax_error_is_structural(enum ax_error e);

/*
 * What ax_eval() needs from the agent.  Every callback gets `ctx` itself
 * (embed it in a larger struct, or use `opaque`) and returns 0 or -errno.
 * Any callback may be NULL: the ops that need it then fail as if it had
 * returned -ENOSYS.  Callbacks run on the evaluating thread, in order.
 */
struct ax_ctx {
	/* Raw value of gdb register `regnum` (tdesc numbering), zero-extended
	 * to 64 bits.  -EINVAL (or any -errno) for a register the agent
	 * does not have or one wider than 8 bytes. */
	int (*read_reg)(const struct ax_ctx *ctx, unsigned regnum,
			uint64_t *value);
	/* Copies up to `len` bytes of target memory at `addr`; returns the
	 * number of bytes read (a short count at the first unreadable byte)
	 * or -errno when nothing could be read. */
	long (*read_mem)(const struct ax_ctx *ctx, uint64_t addr, void *buf,
			 size_t len);
	/* Trace state variables: -ENOENT for a number gdb never defined. */
	int (*tsv_get)(const struct ax_ctx *ctx, unsigned num, int64_t *value);
	int (*tsv_set)(const struct ax_ctx *ctx, unsigned num, int64_t value);
	/* Collects `len` bytes at `addr` into the trace frame (`M` blocks;
	 * the callee splits them).  `len` comes straight off the stack for
	 * `trace`, so the callee bounds it (the trace buffer size).  It decides what to record of memory
	 * that is partly unreadable; any -errno stops the evaluation with
	 * AX_ERR_COLLECT (e.g. -ENOBUFS when the trace buffer is full). */
	int (*trace_mem)(const struct ax_ctx *ctx, uint64_t addr, uint64_t len);
	/* Records a `V` block with TSV `num`'s current value. */
	int (*trace_tsv)(const struct ax_ctx *ctx, unsigned num);
	/* Output of the printf op.  One printf may call it several times;
	 * the pieces concatenate.  `text` is not NUL-terminated. */
	int (*printf_out)(const struct ax_ctx *ctx, const char *text,
			  size_t len);
	void *opaque;		/* for the callbacks */
	/* Instructions allowed per evaluation; 0 = AX_STEP_BUDGET. */
	uint32_t step_budget;
	/* Target facts: byte order of ref16/32/64 and the size of `long`
	 * for printf's %ld/%lu/%zu (0 = 8, as on LP64 targets). */
	bool big_endian;
	uint8_t long_size;
};

/* How an expression uses a trace state variable (bits of `how`). */
#define AX_TSV_GET 1u
#define AX_TSV_SET 2u
#define AX_TSV_TRACE 4u

/* What ax_verify() learnt about an expression. */
struct ax_info {
	size_t ninsns;		/* instructions in the code */
	unsigned max_depth;	/* deepest stack on any path */
	bool may_end_empty;	/* some path reaches `end` with no value */
	bool has_loops;		/* a backward goto/if_goto exists */
	uint64_t reg_mask;	/* bit n: `reg n` for n < 64 */
	bool reg_high;		/* some `reg n` with n >= 64 */
	unsigned reg_max;	/* highest register number used */
	bool reads_mem;		/* ref8..ref64 (and printf %s) */
	bool traces_mem;	/* trace, trace_quick, tracenz */
	bool uses_printf;
	unsigned ntsvs;		/* entries of tsvs[] */
	bool tsvs_truncated;	/* more distinct TSVs than AX_INFO_MAX_TSVS */
	struct {
		uint16_t num;
		uint8_t how;	/* AX_TSV_* bits */
	} tsvs[AX_INFO_MAX_TSVS];
};

/*
 * Verifies `len` bytes of bytecode (see the invariants above) and fills
 * *info (may be NULL).  Returns 0, -EINVAL for malformed code, -EOPNOTSUPP
 * for a valid opcode or printf conversion the agent does not implement,
 * or -E2BIG for code longer than AX_MAX_LEN; on error writes a one-line
 * message to errbuf (e.g. "unsupported bytecode 0x1b at offset 5").
 * Uses about 40 KiB of stack, no heap.
 */
int ax_verify(const uint8_t *code, size_t len, struct ax_info *info,
	      char *errbuf, size_t errlen);

/* Outcome of one evaluation. */
struct ax_result {
	enum ax_error error;	/* AX_OK on success */
	int sys_errno;		/* positive errno a callback returned, or 0 */
	size_t pc;		/* offset of the instruction that failed */
	uint64_t value;		/* top of the stack at `end`... */
	bool has_value;		/* ...when the stack was not empty */
	uint32_t steps;		/* instructions executed */
	char message[128];	/* e.g. "divide by zero at offset 12" */
};

/*
 * Runs the expression until `end` and fills *res.  Returns 0 or a negative
 * errno summarising res->error: -EFAULT (memory), -EDOM (divide by zero),
 * -ENOENT (TSV), -ELOOP (step budget), the callback's own -errno for
 * AX_ERR_REGISTER / AX_ERR_COLLECT, -EINVAL for the rest.  Collection side
 * effects (trace_mem, tsv_set, printf_out) that happened before an error
 * stay done, as in gdbserver.  Never allocates; reentrant.
 */
int ax_eval(const uint8_t *code, size_t len, const struct ax_ctx *ctx,
	    struct ax_result *res);
/* The same for a condition: `end` with an empty stack is
 * AX_ERR_EMPTY_STACK (gdbserver's expr_eval_empty_stack). */
int ax_eval_cond(const uint8_t *code, size_t len, const struct ax_ctx *ctx,
		 struct ax_result *res);

/*
 * Appends a `maint agent`-like listing, one line: "reg 6; const8 16; add;
 * ... end".  Immediates are printed in decimal as gdb does (const8 220,
 * if_goto 24), printf as `printf 2 "a=%d\n"`.  Bad bytes print as
 * `<bad 0xNN>` / `<truncated name>` and make it return -EINVAL; the
 * listing still covers the whole code.
 */
int ax_disassemble(const uint8_t *code, size_t len, struct rsp_buf *out);
/* One instruction at `pc`; returns the offset of the next one or -EINVAL
 * (after printing what it could) for a bad opcode or truncated immediate. */
long ax_disassemble_insn(const uint8_t *code, size_t len, size_t pc,
			 struct rsp_buf *out);
/* "add", "const8"... or NULL for an unknown opcode. */
const char *ax_opcode_name(uint8_t op);

#endif
