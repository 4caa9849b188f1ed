/*
 * ax.c - GDB agent expressions: verifier, interpreter, disassembler.
 *
 * The three parts share one decoder (ax_decode) built on the opcode table
 * of ax.h, and the verifier and the printf op share one format parser
 * (fmt_next), so "what the verifier accepted" and "what the interpreter
 * runs" cannot drift apart.  See ax.h for the semantics and the decisions
 * taken where gdbserver is undefined.
 *
 * Stack layout in the interpreter: stack[0..sp) holds the values, the top
 * is stack[sp - 1].  gdbserver caches the top in a variable and keeps one
 * junk slot at the bottom, which makes it accept one pop too many; we do
 * not, and the verifier rejects such code instead.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "protocol/ax.h"
#include "protocol/rsp.h"

/* --- The opcode table --------------------------------------------------- */

struct ax_opinfo {
	const char *name;	/* NULL: not an opcode */
	uint8_t imm;		/* fixed immediate bytes */
	int8_t pops, pushes;	/* pops -1: depends on the immediate */
	bool implemented;
};

static const struct ax_opinfo ax_ops[256] = {
#define AX_TABLE_ROW(v, up, nm, im, po, pu, impl) \
	[v] = { .name = nm, .imm = im, .pops = po, .pushes = pu, \
		.implemented = impl },
	AX_OPCODES(AX_TABLE_ROW)
#undef AX_TABLE_ROW
};

const char *ax_opcode_name(uint8_t op)
{
	return ax_ops[op].name;
}

static const char *const error_names[AX_ERR_COUNT] = {
	[AX_OK] = "no error",
	[AX_ERR_EMPTY_EXPR] = "empty expression",
	[AX_ERR_BAD_OPCODE] = "bad opcode",
	[AX_ERR_TRUNCATED] = "truncated instruction",
	[AX_ERR_INVALID_GOTO] = "invalid goto",
	[AX_ERR_NO_END] = "no end",
	[AX_ERR_UNDERFLOW] = "stack underflow",
	[AX_ERR_OVERFLOW] = "stack overflow",
	[AX_ERR_BAD_FORMAT] = "bad printf format",
	[AX_ERR_EMPTY_STACK] = "empty stack",
	[AX_ERR_DIV_ZERO] = "divide by zero",
	[AX_ERR_MEMORY] = "unreadable memory",
	[AX_ERR_REGISTER] = "bad register",
	[AX_ERR_TSV] = "unknown trace state variable",
	[AX_ERR_COLLECT] = "collection failed",
	[AX_ERR_STEP_BUDGET] = "step budget exceeded",
};

const char *ax_error_name(enum ax_error e)
{
	if ((unsigned)e >= AX_ERR_COUNT)
		return "unknown error";
	return error_names[e];
}

bool ax_error_is_structural(enum ax_error e)
{
	return e >= AX_ERR_EMPTY_EXPR && e <= AX_ERR_BAD_FORMAT;
}

/* --- Decoding ----------------------------------------------------------- */

struct ax_insn {
	uint8_t op;
	size_t size;		/* bytes, opcode included */
	uint64_t imm;		/* big-endian immediate, zero-extended */
	/* printf only */
	uint8_t nargs;
	const char *fmt;	/* format, NUL-terminated inside the code */
	size_t fmt_size;	/* bytes of the format field, NUL included */
	/* stack effect */
	unsigned need;		/* values the op reads */
	int delta;		/* depth change */
};

static uint64_t get_be(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v = (v << 8) | p[i];
	return v;
}

/*
 * Decodes the instruction at `pc` (< len).  Returns 0, AX_ERR_BAD_OPCODE
 * for an unknown or unimplemented opcode (insn->op is still set) or
 * AX_ERR_TRUNCATED when an immediate or the printf format runs past len.
 */
static enum ax_error ax_decode(const uint8_t *code, size_t len, size_t pc,
			       struct ax_insn *insn)
{
	const struct ax_opinfo *oi = &ax_ops[code[pc]];
	size_t avail = len - pc - 1;

	memset(insn, 0, sizeof(*insn));
	insn->op = code[pc];
	if (!oi->name || !oi->implemented)
		return AX_ERR_BAD_OPCODE;
	if (avail < oi->imm)
		return AX_ERR_TRUNCATED;
	insn->size = 1 + oi->imm;
	switch (insn->op) {
	case AX_OP_PRINTF:
		/* printf nargs:1 len:2 format:len (NUL-terminated) */
		insn->nargs = code[pc + 1];
		insn->fmt_size = get_be(code + pc + 2, 2);
		if (avail - 3 < insn->fmt_size)
			return AX_ERR_TRUNCATED;
		insn->fmt = (const char *)code + pc + 4;
		insn->size += insn->fmt_size;
		insn->need = insn->nargs + 2u;	/* args, chan, fn */
		insn->delta = -(int)insn->need;
		return AX_OK;
	case AX_OP_PICK:
		insn->imm = code[pc + 1];
		insn->need = (unsigned)insn->imm + 1;
		insn->delta = 1;
		return AX_OK;
	default:
		insn->imm = get_be(code + pc + 1, oi->imm);
		insn->need = (unsigned)oi->pops;
		insn->delta = oi->pushes - oi->pops;
		return AX_OK;
	}
}

/* --- printf formats ----------------------------------------------------- */

/*
 * A piece of a printf format, as gdb's format_pieces cuts it: a literal
 * byte (with the C escapes gdb sends unprocessed already interpreted) or
 * one conversion.
 */
struct fmt_piece {
	char conv;		/* 0: literal `lit`; else d i u o x X c s p */
	char lit;
	bool minus, plus, space, hash, zero;
	int width;		/* -1: none */
	int prec;		/* -1: none */
	int lcount;		/* 0, 1 (l, z), 2 (ll) */
	bool h;
};

/* Reads a decimal field; -2 if it exceeds AX_PRINTF_WIDTH_MAX. */
static int fmt_number(const char *f, size_t n, size_t *pos)
{
	int v = 0;

	while (*pos < n && f[*pos] >= '0' && f[*pos] <= '9') {
		if (v <= AX_PRINTF_WIDTH_MAX)
			v = v * 10 + (f[*pos] - '0');
		(*pos)++;
	}
	return v > AX_PRINTF_WIDTH_MAX ? -2 : v;
}

/*
 * Parses the piece at f[*pos] (n = format length without its NUL).
 * Returns 1 with *p filled, 0 at the end, or -EINVAL / -EOPNOTSUPP with a
 * message in err.  The checks are format_pieces' (gdbsupport/format.cc):
 * which flags each conversion takes and which length modifiers exist;
 * floating-point, wide and `*` conversions are refused as the agent
 * cannot print them.
 */
static int fmt_next(const char *f, size_t n, size_t *pos,
		    struct fmt_piece *p, char *err, size_t errlen)
{
	size_t start = *pos;
	bool bad = false, seen_prec, big_l = false, z = false;
	char c;

	if (*pos >= n)
		return 0;
	memset(p, 0, sizeof(*p));
	p->width = p->prec = -1;
	c = f[(*pos)++];
	if (c == '\\') {
		if (*pos >= n) {
			snprintf(err, errlen, "bad escape at end of format");
			return -EINVAL;
		}
		c = f[(*pos)++];
		switch (c) {
		case '\\': p->lit = '\\'; break;
		case 'a': p->lit = '\a'; break;
		case 'b': p->lit = '\b'; break;
		case 'e': p->lit = '\033'; break;
		case 'f': p->lit = '\f'; break;
		case 'n': p->lit = '\n'; break;
		case 'r': p->lit = '\r'; break;
		case 't': p->lit = '\t'; break;
		case 'v': p->lit = '\v'; break;
		case '"': p->lit = '"'; break;
		default:
			snprintf(err, errlen,
				 "unrecognized escape character \\%c in format",
				 c);
			return -EINVAL;
		}
		return 1;
	}
	if (c != '%') {
		p->lit = c;
		return 1;
	}
	if (*pos < n && f[*pos] == '%') {
		(*pos)++;
		p->lit = '%';
		return 1;
	}
	/* flags, width, precision, length, conversion */
	while (*pos < n && strchr("0-+ #", f[*pos])) {
		switch (f[(*pos)++]) {
		case '0': p->zero = true; break;
		case '-': p->minus = true; break;
		case '+': p->plus = true; break;
		case ' ': p->space = true; break;
		case '#': p->hash = true; break;
		}
	}
	if (*pos < n && f[*pos] >= '1' && f[*pos] <= '9')
		p->width = fmt_number(f, n, pos);
	else if (*pos < n && f[*pos] == '*')
		goto unsupported_here;
	seen_prec = *pos < n && f[*pos] == '.';
	if (seen_prec) {
		(*pos)++;
		if (*pos < n && f[*pos] == '*')
			goto unsupported_here;
		p->prec = fmt_number(f, n, pos);
	}
	if (p->width == -2 || p->prec == -2) {
		snprintf(err, errlen, "printf width or precision above %d",
			 AX_PRINTF_WIDTH_MAX);
		return -EINVAL;
	}
	if (*pos < n) {
		switch (f[*pos]) {
		case 'h': p->h = true; (*pos)++; break;
		case 'l':
			(*pos)++;
			p->lcount = 1;
			if (*pos < n && f[*pos] == 'l') {
				(*pos)++;
				p->lcount = 2;
			}
			break;
		case 'L': big_l = true; (*pos)++; break;
		case 'z': z = true; (*pos)++; break;
		case 'H': case 'D':
			goto unsupported_here;	/* decimal float */
		}
	}
	if (*pos >= n) {
		snprintf(err, errlen,
			 "incomplete format specifier at end of format");
		return -EINVAL;
	}
	c = f[(*pos)++];
	p->conv = c;
	switch (c) {
	case 'u':
		bad |= p->hash;
		/* fall through */
	case 'o': case 'x': case 'X':
		bad |= p->space || p->plus;
		/* fall through */
	case 'd': case 'i':
		bad |= big_l;
		if (z)
			p->lcount = 1;
		break;
	case 'c':
		if (p->lcount)
			goto unsupported;	/* wide character */
		bad |= p->h || big_l || z || seen_prec || p->zero ||
		       p->space || p->plus;
		break;
	case 'p':
		bad |= p->lcount || p->h || big_l || z || seen_prec ||
		       p->hash || p->zero || p->space || p->plus;
		break;
	case 's':
		if (p->lcount)
			goto unsupported;	/* wide string */
		bad |= p->h || big_l || z || p->zero || p->space || p->plus;
		break;
	case 'e': case 'f': case 'g': case 'E': case 'G': case 'a': case 'A':
		goto unsupported;
	case 'n':
		snprintf(err, errlen,
			 "format specifier `n' not supported in printf");
		return -EINVAL;
	default:
		snprintf(err, errlen,
			 "unrecognized format specifier '%c' in printf", c);
		return -EINVAL;
	}
	if (bad) {
		snprintf(err, errlen, "inappropriate modifiers to format "
			 "specifier '%c' in printf", c);
		return -EINVAL;
	}
	return 1;

unsupported_here:
	(*pos)++;		/* the offending character */
unsupported:
	snprintf(err, errlen, "printf conversion '%.*s' not supported by the "
		 "agent", (int)(*pos - start > 16 ? 16 : *pos - start),
		 f + start);
	return -EOPNOTSUPP;
}

/* Length of the format text: up to its first NUL (fmt_size >= 1 and the
 * last byte is a NUL once verified). */
static size_t fmt_len(const struct ax_insn *insn)
{
	const char *nul = memchr(insn->fmt, '\0', insn->fmt_size);

	return nul ? (size_t)(nul - insn->fmt) : insn->fmt_size;
}

/* Checks a printf instruction; returns 0 or -errno with a message. */
static int check_printf(const struct ax_insn *insn, size_t pc, char *err,
			size_t errlen, bool *reads_mem)
{
	char why[96];
	size_t pos = 0, n, args = 0;
	struct fmt_piece p;
	int r;

	if (insn->fmt_size == 0 || insn->fmt[insn->fmt_size - 1] != '\0') {
		snprintf(err, errlen, "unterminated format string in printf "
			 "at offset %zu", pc);
		return -EINVAL;
	}
	n = fmt_len(insn);
	while ((r = fmt_next(insn->fmt, n, &pos, &p, why, sizeof(why))) > 0) {
		if (p.conv)
			args++;
		if (p.conv == 's')
			*reads_mem = true;
	}
	if (r < 0) {
		snprintf(err, errlen, "%s (printf at offset %zu)", why, pc);
		return r;
	}
	if (args != insn->nargs) {
		snprintf(err, errlen, "printf at offset %zu: format wants %zu "
			 "arguments, bytecode passes %u", pc, args,
			 insn->nargs);
		return -EINVAL;
	}
	return 0;
}

/* --- Verifier ----------------------------------------------------------- */

#define UNREACHED 0xff

struct vstate {
	uint8_t lo[AX_MAX_LEN];		/* min depth before pc, or UNREACHED */
	uint8_t hi[AX_MAX_LEN];		/* max depth before pc */
	uint8_t start[AX_MAX_LEN / 8];	/* instruction boundaries */
	uint8_t dirty[AX_MAX_LEN / 8];	/* to (re)visit */
};

static bool bit_get(const uint8_t *m, size_t i)
{
	return m[i / 8] & (1u << (i % 8));
}

static void bit_put(uint8_t *m, size_t i, bool v)
{
	if (v)
		m[i / 8] |= (uint8_t)(1u << (i % 8));
	else
		m[i / 8] &= (uint8_t)~(1u << (i % 8));
}

static void note_tsv(struct ax_info *info, unsigned num, uint8_t how)
{
	for (unsigned i = 0; i < info->ntsvs; i++) {
		if (info->tsvs[i].num == num) {
			info->tsvs[i].how |= how;
			return;
		}
	}
	if (info->ntsvs == AX_INFO_MAX_TSVS) {
		info->tsvs_truncated = true;
		return;
	}
	info->tsvs[info->ntsvs].num = (uint16_t)num;
	info->tsvs[info->ntsvs].how = how;
	info->ntsvs++;
}

/* Merges the interval [l, h] into the state before `pc`; true if it grew. */
static bool merge(struct vstate *vs, size_t pc, unsigned l, unsigned h)
{
	if (vs->lo[pc] == UNREACHED) {
		vs->lo[pc] = (uint8_t)l;
		vs->hi[pc] = (uint8_t)h;
	} else if (l < vs->lo[pc] || h > vs->hi[pc]) {
		if (l < vs->lo[pc])
			vs->lo[pc] = (uint8_t)l;
		if (h > vs->hi[pc])
			vs->hi[pc] = (uint8_t)h;
	} else {
		return false;
	}
	bit_put(vs->dirty, pc, true);
	return true;
}

/* Pass 1: decodes everything once; fills info; checks ops and targets. */
static int verify_decode(const uint8_t *code, size_t len, struct vstate *vs,
			 struct ax_info *info, char *err, size_t errlen)
{
	struct ax_insn insn;
	size_t pc;
	int r;

	for (pc = 0; pc < len; pc += insn.size) {
		enum ax_error e = ax_decode(code, len, pc, &insn);
		const struct ax_opinfo *oi = &ax_ops[insn.op];

		if (e == AX_ERR_BAD_OPCODE) {
			snprintf(err, errlen, "%s bytecode 0x%02x at offset %zu",
				 oi->name ? "unsupported" : "unknown", insn.op,
				 pc);
			return oi->name ? -EOPNOTSUPP : -EINVAL;
		}
		if (e == AX_ERR_TRUNCATED) {
			snprintf(err, errlen, "truncated %s at offset %zu",
				 oi->name, pc);
			return -EINVAL;
		}
		bit_put(vs->start, pc, true);
		info->ninsns++;
		switch (insn.op) {
		case AX_OP_EXT:
			if (insn.imm == 0) {
				snprintf(err, errlen,
					 "ext 0 at offset %zu is undefined",
					 pc);
				return -EINVAL;
			}
			break;
		case AX_OP_REG:
			if (insn.imm < 64)
				info->reg_mask |= 1ull << insn.imm;
			else
				info->reg_high = true;
			if (insn.imm > info->reg_max)
				info->reg_max = (unsigned)insn.imm;
			break;
		case AX_OP_REF8: case AX_OP_REF16:
		case AX_OP_REF32: case AX_OP_REF64:
			info->reads_mem = true;
			break;
		case AX_OP_TRACE: case AX_OP_TRACE_QUICK: case AX_OP_TRACENZ:
			info->traces_mem = true;
			break;
		case AX_OP_GETV:
			note_tsv(info, (unsigned)insn.imm, AX_TSV_GET);
			break;
		case AX_OP_SETV:
			note_tsv(info, (unsigned)insn.imm, AX_TSV_SET);
			break;
		case AX_OP_TRACEV:
			note_tsv(info, (unsigned)insn.imm, AX_TSV_TRACE);
			break;
		case AX_OP_PRINTF:
			info->uses_printf = true;
			r = check_printf(&insn, pc, err, errlen,
					 &info->reads_mem);
			if (r)
				return r;
			break;
		}
	}
	/* Jump targets, now that all boundaries are known. */
	for (pc = 0; pc < len; pc += insn.size) {
		ax_decode(code, len, pc, &insn);
		if (insn.op != AX_OP_GOTO && insn.op != AX_OP_IF_GOTO)
			continue;
		if (insn.imm >= len || !bit_get(vs->start, insn.imm)) {
			snprintf(err, errlen, "%s at offset %zu: target %u is %s",
				 ax_ops[insn.op].name, pc, (unsigned)insn.imm,
				 insn.imm >= len ? "outside the expression"
				 : "not an instruction boundary");
			return -EINVAL;
		}
		if (insn.imm <= pc)
			info->has_loops = true;
	}
	return 0;
}

/* Pass 2: stack depths by abstract interpretation to a fixed point. */
static int verify_stack(const uint8_t *code, size_t len, struct vstate *vs,
			struct ax_info *info, char *err, size_t errlen)
{
	struct ax_insn insn;
	bool again, end_reached = false;

	memset(vs->lo, UNREACHED, len);
	memset(vs->hi, 0, len);
	merge(vs, 0, 0, 0);
	do {
		again = false;
		for (size_t pc = 0; pc < len; pc += insn.size) {
			ax_decode(code, len, pc, &insn);
			if (!bit_get(vs->dirty, pc))
				continue;
			bit_put(vs->dirty, pc, false);

			unsigned lo = vs->lo[pc], hi = vs->hi[pc];
			if (lo < insn.need) {
				snprintf(err, errlen, "stack underflow at offset "
					 "%zu: %s needs %u value%s, the stack "
					 "may hold %u", pc,
					 ax_ops[insn.op].name, insn.need,
					 insn.need == 1 ? "" : "s", lo);
				return -EINVAL;
			}
			if (hi + insn.delta > AX_STACK_MAX) {
				snprintf(err, errlen, "stack overflow at offset "
					 "%zu: %s makes %u values, the limit is "
					 "%d", pc, ax_ops[insn.op].name,
					 hi + insn.delta, AX_STACK_MAX);
				return -EINVAL;
			}
			if (hi > info->max_depth)
				info->max_depth = hi;
			if (hi + insn.delta > info->max_depth)
				info->max_depth = hi + insn.delta;
			lo += insn.delta;
			hi += insn.delta;
			if (insn.op == AX_OP_END) {
				end_reached = true;
				if (lo == 0)
					info->may_end_empty = true;
				continue;
			}
			if (insn.op == AX_OP_GOTO || insn.op == AX_OP_IF_GOTO) {
				if (merge(vs, insn.imm, lo, hi) &&
				    insn.imm <= pc)
					again = true;
				if (insn.op == AX_OP_GOTO)
					continue;
			}
			if (pc + insn.size >= len) {
				snprintf(err, errlen, "%s at offset %zu runs off "
					 "the end of the expression (no end)",
					 ax_ops[insn.op].name, pc);
				return -EINVAL;
			}
			merge(vs, pc + insn.size, lo, hi);
		}
	} while (again);
	if (!end_reached) {
		snprintf(err, errlen, "no reachable end: the expression never "
			 "terminates");
		return -EINVAL;
	}
	return 0;
}

int ax_verify(const uint8_t *code, size_t len, struct ax_info *info,
	      char *errbuf, size_t errlen)
{
	struct vstate vs;
	struct ax_info local;
	char dummy[1];
	int r;

	if (!info)
		info = &local;
	if (!errbuf || !errlen) {
		errbuf = dummy;
		errlen = sizeof(dummy);
	}
	memset(info, 0, sizeof(*info));
	errbuf[0] = '\0';
	if (len == 0) {
		snprintf(errbuf, errlen, "empty expression");
		return -EINVAL;
	}
	if (len > AX_MAX_LEN) {
		snprintf(errbuf, errlen, "expression too long (%zu bytes, the "
			 "limit is %d)", len, AX_MAX_LEN);
		return -E2BIG;
	}
	memset(vs.start, 0, (len + 7) / 8);
	memset(vs.dirty, 0, (len + 7) / 8);
	r = verify_decode(code, len, &vs, info, errbuf, errlen);
	if (r == 0)
		r = verify_stack(code, len, &vs, info, errbuf, errlen);
	return r;
}

/* --- Interpreter -------------------------------------------------------- */

struct ax_vm {
	const struct ax_ctx *ctx;
	struct ax_result *res;
	const uint8_t *code;
	size_t len;
	size_t pc;
	/* printf output, flushed to printf_out when full and at the end */
	char out[128];
	size_t nout;
	int out_err;
};

static int errno_of(enum ax_error e, int sys_errno)
{
	switch (e) {
	case AX_OK: return 0;
	case AX_ERR_MEMORY: return -EFAULT;
	case AX_ERR_DIV_ZERO: return -EDOM;
	case AX_ERR_TSV: return -ENOENT;
	case AX_ERR_STEP_BUDGET: return -ELOOP;
	case AX_ERR_REGISTER:
	case AX_ERR_COLLECT:
		return sys_errno ? -sys_errno : -EIO;
	default: return -EINVAL;
	}
}

static int vm_fail(struct ax_vm *vm, enum ax_error e, int sys_errno,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int vm_fail(struct ax_vm *vm, enum ax_error e, int sys_errno,
		   const char *fmt, ...)
{
	struct ax_result *res = vm->res;

	res->error = e;
	res->sys_errno = sys_errno;
	res->pc = vm->pc;
#ifdef AX_NO_MESSAGES
	/* The in-process collector has no formatted output: the agent
	 * runs a failed evaluation again for the message. */
	(void)fmt;
	res->message[0] = '\0';
#else
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(res->message, sizeof(res->message), fmt, ap);
	va_end(ap);
	n = strlen(res->message);
	if (n < sizeof(res->message))
		snprintf(res->message + n, sizeof(res->message) - n,
			 " at offset %zu", vm->pc);
#endif
	return errno_of(e, sys_errno);
}

static long vm_read(struct ax_vm *vm, uint64_t addr, void *buf, size_t len)
{
	const struct ax_ctx *ctx = vm->ctx;

	return ctx->read_mem ? ctx->read_mem(ctx, addr, buf, len) : -ENOSYS;
}

/* ref8..ref64: `size` bytes in the target's byte order, zero-extended. */
static int vm_ref(struct ax_vm *vm, uint64_t addr, unsigned size,
		  uint64_t *value)
{
	uint8_t b[8];
	long n = vm_read(vm, addr, b, size);

	if (n != (long)size)
		return vm_fail(vm, AX_ERR_MEMORY, n < 0 ? (int)-n : EFAULT,
			       "unreadable memory at 0x%llx (%u bytes)",
			       (unsigned long long)addr, size);
	*value = 0;
	for (unsigned i = 0; i < size; i++) {
		unsigned k = vm->ctx->big_endian ? i : size - 1 - i;
		*value = (*value << 8) | b[k];
	}
	return 0;
}

static int vm_trace(struct ax_vm *vm, uint64_t addr, uint64_t len)
{
	const struct ax_ctx *ctx = vm->ctx;
	int r = ctx->trace_mem ? ctx->trace_mem(ctx, addr, len) : -ENOSYS;

	if (r < 0)
		return vm_fail(vm, AX_ERR_COLLECT, -r, "cannot collect %llu "
			       "bytes at 0x%llx", (unsigned long long)len,
			       (unsigned long long)addr);
	return 0;
}

/* tracenz: the readable bytes up to and including the first NUL, at most
 * `limit`; nothing when the first byte is unreadable. */
static int vm_tracenz(struct ax_vm *vm, uint64_t addr, uint64_t limit)
{
	uint8_t chunk[64];
	uint64_t total = 0;

	if (limit > AX_TRACENZ_SCAN_MAX)
		limit = AX_TRACENZ_SCAN_MAX;
	while (total < limit) {
		size_t want = limit - total < sizeof(chunk) ?
			(size_t)(limit - total) : sizeof(chunk);
		long n = vm_read(vm, addr + total, chunk, want);

		if (n <= 0)
			break;
		if (n > (long)want)
			n = (long)want;
		const uint8_t *nul = memchr(chunk, 0, (size_t)n);
		if (nul) {
			total += (uint64_t)(nul - chunk) + 1;
			break;
		}
		total += (uint64_t)n;
		if ((size_t)n < want)
			break;
	}
	return total ? vm_trace(vm, addr, total) : 0;
}

#ifndef AX_NO_MESSAGES
/* printf output */

static void out_flush(struct ax_vm *vm)
{
	const struct ax_ctx *ctx = vm->ctx;
	int r;

	if (vm->nout == 0 || vm->out_err)
		return;
	r = ctx->printf_out ? ctx->printf_out(ctx, vm->out, vm->nout)
			    : -ENOSYS;
	if (r < 0)
		vm->out_err = -r;
	vm->nout = 0;
}

static void out_putc(struct ax_vm *vm, char c)
{
	if (vm->nout == sizeof(vm->out))
		out_flush(vm);
	vm->out[vm->nout++] = c;
}

static void out_put(struct ax_vm *vm, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out_putc(vm, s[i]);
}

static void out_pad(struct ax_vm *vm, char c, long n)
{
	while (n-- > 0)
		out_putc(vm, c);
}

/* Sign- or zero-extends the low `bytes` bytes of v. */
static uint64_t cut(uint64_t v, unsigned bytes, bool sign)
{
	unsigned bits = bytes * 8;

	if (bits >= 64)
		return v;
	v &= (1ull << bits) - 1;
	if (sign && (v >> (bits - 1)) & 1)
		v |= ~0ull << bits;
	return v;
}

/* d i u o x X with C's rules for flags, width and precision. */
static void fmt_int(struct ax_vm *vm, const struct fmt_piece *p,
		    uint64_t arg)
{
	unsigned long_size = vm->ctx->long_size ? vm->ctx->long_size : 8;
	unsigned bytes = p->lcount == 2 ? 8 : p->lcount == 1 ? long_size
			 : p->h ? 2 : 4;
	bool is_signed = p->conv == 'd' || p->conv == 'i';
	unsigned base = p->conv == 'o' ? 8 :
			(p->conv == 'x' || p->conv == 'X') ? 16 : 10;
	const char *digits = p->conv == 'X' ? "0123456789ABCDEF"
					    : "0123456789abcdef";
	uint64_t v = cut(arg, bytes, is_signed);
	char sign = 0, buf[24];
	const char *prefix = "";
	long nd = 0, prec, zeros, total;

	if (is_signed && (int64_t)v < 0) {
		sign = '-';
		v = -v;			/* unsigned negation: INT64_MIN ok */
	} else if (is_signed && p->plus) {
		sign = '+';
	} else if (is_signed && p->space) {
		sign = ' ';
	}
	for (uint64_t t = v; t; t /= base)
		buf[sizeof(buf) - 1 - nd++] = digits[t % base];
	prec = p->prec >= 0 ? p->prec : 1;
	if (p->hash && base == 16 && v)
		prefix = p->conv == 'X' ? "0X" : "0x";
	if (p->hash && base == 8 && prec <= nd)
		prec = nd + 1;		/* # forces a leading 0 */
	zeros = prec > nd ? prec - nd : 0;
	total = (sign ? 1 : 0) + (long)strlen(prefix) + zeros + nd;
	if (p->zero && !p->minus && p->prec < 0 && p->width > total) {
		zeros += p->width - total;
		total = p->width;
	}
	if (!p->minus)
		out_pad(vm, ' ', p->width - total);
	if (sign)
		out_putc(vm, sign);
	out_put(vm, prefix, strlen(prefix));
	out_pad(vm, '0', zeros);
	out_put(vm, buf + sizeof(buf) - nd, (size_t)nd);
	if (p->minus)
		out_pad(vm, ' ', p->width - total);
}

/* %s: the target string at `addr` (two passes: length, then text). */
static int fmt_string(struct ax_vm *vm, const struct fmt_piece *p,
		      uint64_t addr)
{
	char chunk[64];
	size_t max = AX_PRINTF_STRING_MAX, n = 0;
	long width = p->width;

	if (p->prec >= 0 && (size_t)p->prec < max)
		max = (size_t)p->prec;
	if (addr == 0) {
		static const char null_text[] = "(null)";
		n = sizeof(null_text) - 1 < max ? sizeof(null_text) - 1 : max;
		if (!p->minus)
			out_pad(vm, ' ', width - (long)n);
		out_put(vm, null_text, n);
		if (p->minus)
			out_pad(vm, ' ', width - (long)n);
		return 0;
	}
	while (n < max) {
		size_t want = max - n < sizeof(chunk) ? max - n : sizeof(chunk);
		long got = vm_read(vm, addr + n, chunk, want);

		if (got <= 0)
			return vm_fail(vm, AX_ERR_MEMORY, got < 0 ? (int)-got
				       : EFAULT, "unreadable memory at 0x%llx "
				       "(printf %%s)",
				       (unsigned long long)(addr + n));
		if (got > (long)want)
			got = (long)want;
		const char *nul = memchr(chunk, 0, (size_t)got);
		if (nul) {
			n += (size_t)(nul - chunk);
			break;
		}
		n += (size_t)got;
	}
	if (!p->minus)
		out_pad(vm, ' ', width - (long)n);
	for (size_t done = 0; done < n;) {
		size_t want = n - done < sizeof(chunk) ? n - done
						       : sizeof(chunk);
		long got = vm_read(vm, addr + done, chunk, want);

		if (got <= 0)
			return vm_fail(vm, AX_ERR_MEMORY, got < 0 ? (int)-got
				       : EFAULT, "unreadable memory at 0x%llx "
				       "(printf %%s)",
				       (unsigned long long)(addr + done));
		if (got > (long)want)
			got = (long)want;
		out_put(vm, chunk, (size_t)got);
		done += (size_t)got;
	}
	if (p->minus)
		out_pad(vm, ' ', width - (long)n);
	return 0;
}

/*
 * The printf op.  gdb pushes the arguments last to first, then chan and
 * fn (both always 0 in gdb 13, ignored here); `base` points at the
 * deepest argument, so the first argument is base[nargs - 1].
 */
static int vm_printf(struct ax_vm *vm, const struct ax_insn *insn,
		     const uint64_t *base)
{
	struct fmt_piece p;
	char why[96];
	size_t pos = 0, n = fmt_len(insn), i = 0;
	int r;

	vm->nout = 0;
	vm->out_err = 0;
	while ((r = fmt_next(insn->fmt, n, &pos, &p, why, sizeof(why))) > 0) {
		if (!p.conv) {
			out_putc(vm, p.lit);
			continue;
		}
		if (i >= insn->nargs)
			return vm_fail(vm, AX_ERR_BAD_FORMAT, 0,
				       "printf format wants more arguments");
		uint64_t a = base[insn->nargs - 1 - i++];
		switch (p.conv) {
		case 'c':
			if (!p.minus)
				out_pad(vm, ' ', p.width - 1);
			out_putc(vm, (char)(uint8_t)a);
			if (p.minus)
				out_pad(vm, ' ', p.width - 1);
			break;
		case 's':
			r = fmt_string(vm, &p, a);
			if (r)
				return r;
			break;
		case 'p':
			/* As gdb's printf_pointer: %#llx, or "(nil)" as %s. */
			if (a == 0) {
				p.prec = -1;
				if (!p.minus)
					out_pad(vm, ' ', p.width - 5);
				out_put(vm, "(nil)", 5);
				if (p.minus)
					out_pad(vm, ' ', p.width - 5);
			} else {
				p.conv = 'x';
				p.hash = true;
				p.lcount = 2;
				fmt_int(vm, &p, a);
			}
			break;
		default:
			fmt_int(vm, &p, a);
			break;
		}
	}
	if (r < 0)
		return vm_fail(vm, AX_ERR_BAD_FORMAT, 0, "%s", why);
	out_flush(vm);
	if (vm->out_err)
		return vm_fail(vm, AX_ERR_COLLECT, vm->out_err,
			       "printf output failed");
	return 0;
}
#endif /* AX_NO_MESSAGES */

/*
 * The interpreter's less common opcode groups, out of vm_run's switch
 * so that it reads as the table of the common ones.  Each is static
 * inline: the switch stays one jump table with the stack pointer in a
 * register, as before.  Each returns 0 or vm_fail's result.
 */

/* The checks before each instruction: the end, the step budget, a
 * decodable opcode, and the stack depth it needs and leaves. */
static inline int vm_check(struct ax_vm *vm, enum ax_error e,
			   const struct ax_insn *insn, size_t sp)
{
	if (e == AX_ERR_BAD_OPCODE)
		return vm_fail(vm, e, 0, "bad bytecode 0x%02x", insn->op);
	if (e)
		return vm_fail(vm, e, 0, "truncated %s", ax_ops[insn->op].name);
	if (sp < insn->need)
		return vm_fail(vm, AX_ERR_UNDERFLOW, 0, "stack underflow (%s)",
			       ax_ops[insn->op].name);
	if ((long)sp + insn->delta > AX_STACK_MAX)
		return vm_fail(vm, AX_ERR_OVERFLOW, 0, "stack overflow (%s)",
			       ax_ops[insn->op].name);
	return 0;
}

/* div_signed, rem_signed, div_unsigned, rem_unsigned: a b -> a OP b. */
static inline int vm_divide(struct ax_vm *vm, uint8_t op, uint64_t *stack,
			    size_t *sp)
{
	uint64_t a = stack[*sp - 2], b = stack[*sp - 1];
	uint64_t *top = &stack[*sp - 2];

	if (b == 0)
		return vm_fail(vm, AX_ERR_DIV_ZERO, 0, "divide by zero");
	(*sp)--;
	if (op == AX_OP_DIV_UNSIGNED)
		*top = a / b;
	else if (op == AX_OP_REM_UNSIGNED)
		*top = a % b;
	else if ((int64_t)b == -1)
		/* INT64_MIN / -1 wraps to INT64_MIN, and
		 * x % -1 is 0: defined here, UB in C. */
		*top = op == AX_OP_DIV_SIGNED ? -a : 0;
	else if (op == AX_OP_DIV_SIGNED)
		*top = (uint64_t)((int64_t)a / (int64_t)b);
	else
		*top = (uint64_t)((int64_t)a % (int64_t)b);
	return 0;
}

/* ext N (sign-extend from bit N) and zero_ext N, on *top. */
static inline int vm_extend(struct ax_vm *vm, const struct ax_insn *insn,
			    uint64_t *top)
{
	if (insn->op == AX_OP_ZERO_EXT) {
		if (insn->imm < 64)
			*top &= (1ull << insn->imm) - 1;
		return 0;
	}
	if (insn->imm == 0)	/* the verifier refuses it */
		return vm_fail(vm, AX_ERR_BAD_OPCODE, 0, "ext 0 is undefined");
	if (insn->imm < 64) {
		uint64_t m = 1ull << (insn->imm - 1);
		*top &= (m << 1) - 1;
		*top = (*top ^ m) - m;
	}
	return 0;
}

/* goto and if_goto (its condition popped already: `taken`): moves the pc,
 * or leaves it for the next instruction. */
static inline int vm_jump(struct ax_vm *vm, const struct ax_insn *insn,
			  bool taken)
{
	if (!taken) {
		vm->pc += insn->size;
		return 0;
	}
	if (insn->imm >= vm->len)
		return vm_fail(vm, AX_ERR_INVALID_GOTO, 0, "invalid goto %u",
			       (unsigned)insn->imm);
	vm->pc = insn->imm;
	return 0;
}

/* reg N: pushes register N's value into *value. */
static inline int vm_reg(struct ax_vm *vm, const struct ax_insn *insn,
			 uint64_t *value)
{
	const struct ax_ctx *ctx = vm->ctx;
	int r = ctx->read_reg ? ctx->read_reg(ctx, (unsigned)insn->imm, value)
			      : -ENOSYS;

	if (r < 0)
		return vm_fail(vm, AX_ERR_REGISTER, -r, "bad register number %u",
			       (unsigned)insn->imm);
	return 0;
}

/* getv, setv, tracev: trace state variable N through the context.
 * getv pushes its value; setv sets it from the top (kept). */
static inline int vm_state_var(struct ax_vm *vm, const struct ax_insn *insn,
			       uint64_t *stack, size_t *sp)
{
	const struct ax_ctx *ctx = vm->ctx;
	unsigned num = (unsigned)insn->imm;
	int64_t v = 0;
	int r;

	switch (insn->op) {
	case AX_OP_GETV:
		r = ctx->tsv_get ? ctx->tsv_get(ctx, num, &v) : -ENOSYS;
		if (r < 0)
			break;
		stack[(*sp)++] = (uint64_t)v;
		return 0;
	case AX_OP_SETV:
		r = ctx->tsv_set ? ctx->tsv_set(ctx, num, (int64_t)stack[*sp - 1])
				 : -ENOSYS;
		break;
	default:	/* AX_OP_TRACEV */
		r = ctx->trace_tsv ? ctx->trace_tsv(ctx, num) : -ENOSYS;
		if (r < 0 && r != -ENOENT)
			return vm_fail(vm, AX_ERR_COLLECT, -r, "cannot collect "
				       "trace state variable %u", num);
		break;
	}
	if (r < 0)
		return vm_fail(vm, AX_ERR_TSV, -r, "unknown trace state "
			       "variable %u", num);
	return 0;
}

/* trace (addr len), trace_quick N (addr, kept) and tracenz (addr
 * limit): memory into the frame. */
static inline int vm_collect(struct ax_vm *vm, const struct ax_insn *insn,
			     uint64_t *stack, size_t *sp)
{
	if (insn->op == AX_OP_TRACE_QUICK)
		return vm_trace(vm, stack[*sp - 1], insn->imm);
	*sp -= 2;
	if (insn->op == AX_OP_TRACE)
		return vm_trace(vm, stack[*sp], stack[*sp + 1]);
	return vm_tracenz(vm, stack[*sp], stack[*sp + 1]);
}

/* end: the value on top, if any, is the result; a condition must have
 * one. */
static inline int vm_end(struct ax_vm *vm, const uint64_t *stack, size_t sp,
			 bool cond)
{
	if (sp) {
		vm->res->value = stack[sp - 1];
		vm->res->has_value = true;
	} else if (cond) {
		return vm_fail(vm, AX_ERR_EMPTY_STACK, 0,
			       "empty stack at end of condition");
	}
	vm->res->pc = vm->pc;
	return 0;
}

static int vm_run(const uint8_t *code, size_t len, const struct ax_ctx *ctx,
		  struct ax_result *res, bool cond)
{
	uint64_t stack[AX_STACK_MAX];
	size_t sp = 0;
	uint32_t budget = ctx->step_budget ? ctx->step_budget : AX_STEP_BUDGET;
	struct ax_vm vm = { .ctx = ctx, .res = res, .code = code, .len = len };
	struct ax_insn insn;
	int r;

	memset(res, 0, sizeof(*res));
	if (len == 0)
		return vm_fail(&vm, AX_ERR_EMPTY_EXPR, 0, "empty expression");
	for (;;) {
		uint64_t a, b;
		enum ax_error e;

		if (vm.pc >= len)
			return vm_fail(&vm, AX_ERR_NO_END, 0,
				       "expression ran off its end");
		if (res->steps >= budget)
			return vm_fail(&vm, AX_ERR_STEP_BUDGET, 0,
				       "step budget exceeded (%u instructions)",
				       budget);
		res->steps++;
		e = ax_decode(code, len, vm.pc, &insn);
		if ((r = vm_check(&vm, e, &insn, sp)))
			return r;

#define TOP stack[sp - 1]
#define NEXT stack[sp - 2]
/* a b -> a OP b, with a = NEXT and b = TOP */
#define BINOP(expr) do { a = NEXT; b = TOP; sp--; TOP = (expr); } while (0)
		switch ((enum ax_opcode)insn.op) {
		case AX_OP_ADD: BINOP(a + b); break;
		case AX_OP_SUB: BINOP(a - b); break;
		case AX_OP_MUL: BINOP(a * b); break;
		case AX_OP_DIV_SIGNED:
		case AX_OP_REM_SIGNED:
		case AX_OP_DIV_UNSIGNED:
		case AX_OP_REM_UNSIGNED:
			if ((r = vm_divide(&vm, insn.op, stack, &sp)))
				return r;
			break;
		case AX_OP_LSH: BINOP(b >= 64 ? 0 : a << b); break;
		case AX_OP_RSH_UNSIGNED: BINOP(b >= 64 ? 0 : a >> b); break;
		case AX_OP_RSH_SIGNED:
			/* Arithmetic shift without relying on the
			 * implementation-defined >> of negative values. */
			BINOP((int64_t)a < 0
			      ? ~(~a >> (b >= 64 ? 63 : b))
			      : a >> (b >= 64 ? 63 : b));
			break;
		case AX_OP_TRACE:
		case AX_OP_TRACE_QUICK:
		case AX_OP_TRACENZ:
			if ((r = vm_collect(&vm, &insn, stack, &sp)))
				return r;
			break;
		case AX_OP_LOG_NOT: TOP = !TOP; break;
		case AX_OP_BIT_AND: BINOP(a & b); break;
		case AX_OP_BIT_OR: BINOP(a | b); break;
		case AX_OP_BIT_XOR: BINOP(a ^ b); break;
		case AX_OP_BIT_NOT: TOP = ~TOP; break;
		case AX_OP_EQUAL: BINOP(a == b); break;
		case AX_OP_LESS_SIGNED: BINOP((int64_t)a < (int64_t)b); break;
		case AX_OP_LESS_UNSIGNED: BINOP(a < b); break;
		case AX_OP_EXT:
		case AX_OP_ZERO_EXT:
			if ((r = vm_extend(&vm, &insn, &TOP)))
				return r;
			break;
		case AX_OP_REF8:
		case AX_OP_REF16:
		case AX_OP_REF32:
		case AX_OP_REF64:
			r = vm_ref(&vm, TOP, 1u << (insn.op - AX_OP_REF8),
				   &TOP);
			if (r)
				return r;
			break;
		case AX_OP_IF_GOTO:
			a = TOP;
			sp--;
			if ((r = vm_jump(&vm, &insn, a != 0)))
				return r;
			continue;
		case AX_OP_GOTO:
			if ((r = vm_jump(&vm, &insn, true)))
				return r;
			continue;
		case AX_OP_CONST8:
		case AX_OP_CONST16:
		case AX_OP_CONST32:
		case AX_OP_CONST64:
			stack[sp++] = insn.imm;	/* zero-extended */
			break;
		case AX_OP_REG:
			if ((r = vm_reg(&vm, &insn, &a)))
				return r;
			stack[sp++] = a;
			break;
		case AX_OP_END:
			return vm_end(&vm, stack, sp, cond);
		case AX_OP_DUP: stack[sp] = TOP; sp++; break;
		case AX_OP_POP: sp--; break;
		case AX_OP_SWAP: a = TOP; TOP = NEXT; NEXT = a; break;
		case AX_OP_GETV:
		case AX_OP_SETV:
		case AX_OP_TRACEV:
			if ((r = vm_state_var(&vm, &insn, stack, &sp)))
				return r;
			break;
		case AX_OP_PICK:
			/* pick n: copy the n-th value below the top */
			stack[sp] = stack[sp - 1 - insn.imm];
			sp++;
			break;
		case AX_OP_ROT:
			/* gdbserver's rot: a b c -> c a b (c on top) */
			a = stack[sp - 3];
			b = stack[sp - 2];
			stack[sp - 3] = TOP;
			stack[sp - 2] = a;
			TOP = b;
			break;
#ifndef AX_NO_MESSAGES
		case AX_OP_PRINTF: {
			/* The popped values stay readable in stack[]. */
			sp -= insn.need;
			r = vm_printf(&vm, &insn, stack + sp);
			if (r)
				return r;
			break;
		}
#endif
		default:
			/* ax_decode refused unimplemented opcodes */
			return vm_fail(&vm, AX_ERR_BAD_OPCODE, 0,
				       "bad bytecode 0x%02x", insn.op);
		}
#undef BINOP
#undef NEXT
#undef TOP
		vm.pc += insn.size;
	}
}

int ax_eval(const uint8_t *code, size_t len, const struct ax_ctx *ctx,
	    struct ax_result *res)
{
	return vm_run(code, len, ctx, res, false);
}

int ax_eval_cond(const uint8_t *code, size_t len, const struct ax_ctx *ctx,
		 struct ax_result *res)
{
	return vm_run(code, len, ctx, res, true);
}

/* --- Disassembler ------------------------------------------------------- */

long ax_disassemble_insn(const uint8_t *code, size_t len, size_t pc,
			 struct rsp_buf *out)
{
	struct ax_insn insn;
	enum ax_error e;

	if (pc >= len)
		return -EINVAL;
	e = ax_decode(code, len, pc, &insn);
	const char *name = ax_ops[insn.op].name;
	if (e == AX_ERR_BAD_OPCODE && !name) {
		rsp_buf_printf(out, "<bad 0x%02x>", insn.op);
		return -EINVAL;
	}
	if (e == AX_ERR_TRUNCATED) {
		rsp_buf_printf(out, "<truncated %s>", name);
		return -EINVAL;
	}
	rsp_buf_puts(out, name);
	if (e == AX_ERR_BAD_OPCODE) {
		/* Known but unimplemented: print it with its immediates
		 * when they fit, so logs still read well. */
		size_t size = 1 + ax_ops[insn.op].imm;
		if (size > len - pc)
			return -EINVAL;
		if (size > 1)
			rsp_buf_printf(out, " %llu", (unsigned long long)
				       get_be(code + pc + 1, size - 1));
		return (long)(pc + size);
	}
	if (insn.op == AX_OP_PRINTF) {
		rsp_buf_printf(out, " %u \"", insn.nargs);
		for (size_t i = 0; i < fmt_len(&insn); i++) {
			unsigned char c = (unsigned char)insn.fmt[i];
			if (c == '"')
				rsp_buf_puts(out, "\\\"");
			else if (c >= 0x20 && c < 0x7f)
				rsp_buf_putc(out, (char)c);
			else
				rsp_buf_printf(out, "\\x%02x", c);
		}
		rsp_buf_putc(out, '"');
	} else if (ax_ops[insn.op].imm) {
		rsp_buf_printf(out, " %llu", (unsigned long long)insn.imm);
	}
	return (long)(pc + insn.size);
}

int ax_disassemble(const uint8_t *code, size_t len, struct rsp_buf *out)
{
	int r = 0;

	for (size_t pc = 0; pc < len;) {
		long next;

		if (pc)
			rsp_buf_puts(out, "; ");
		next = ax_disassemble_insn(code, len, pc, out);
		if (next < 0) {
			r = -EINVAL;
			/* Skip the byte and go on, unless the immediate ran
			 * off the end. */
			if (ax_ops[code[pc]].name)
				break;
			next = (long)pc + 1;
		}
		pc = (size_t)next;
	}
	return r;
}
