/*
 * fuzz-ax.c - libFuzzer target for the agent-expression verifier and VM.
 *
 * Bytecode comes from gdb, which over a socket is an untrusted peer, and
 * runs inside the traced program's hot path, so:
 *
 *   1. ax_verify() must survive any bytes and either accept them or say
 *      why, with a return code from its documented set;
 *   2. ax_eval() must survive any bytes too, verified or not (it keeps its
 *      own bound checks), and stop within its step budget;
 *   3. code the verifier accepted must never hit a structural error at run
 *      time (unknown opcode, bad goto, running off the end, stack under-
 *      or overflow, bad printf format): that is the verifier's promise,
 *      which lets the agent skip nothing but report real errors only;
 *   4. a condition whose every path ends with a value (!may_end_empty)
 *      never ends with an empty stack;
 *   5. the disassembler prints any bytes and succeeds on verified code.
 *
 * Random bytes rarely verify (most lack an `end` or underflow at once),
 * so each input is also read as a program description: every byte picks
 * an implemented opcode, the next bytes give its immediates, printf
 * formats come from a list or from the input bytes themselves (so the
 * format parser sees escapes, flags, widths and conversions it must
 * refuse), jump targets are mapped onto instruction boundaries, and four
 * values are pushed first.  About a quarter of those programs verify,
 * which is where property 3 gets its workout.
 *
 * The fake target has registers pointing into a 4 KiB memory window with
 * NULs sprinkled in (so %s and tracenz terminate), eight TSVs, and
 * callbacks that check their arguments.  A violated property aborts,
 * which libFuzzer reports as a crash with the input.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/ax.h"
#include "protocol/rsp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MEM_BASE 0x1000u
#define MEM_SIZE 0x1000u
#define BUDGET 20000

static uint8_t mem[MEM_SIZE];
static int64_t tsvs[8];
static size_t printed;

static void check(bool ok)
{
	if (!ok)
		abort();
}

static int f_read_reg(const struct ax_ctx *ctx, unsigned regnum,
		      uint64_t *value)
{
	if (regnum >= 40)
		return -EINVAL;
	*value = regnum < 16 ? MEM_BASE + regnum * 0x40u
			     : 0x8000000000000000ull >> (regnum - 16);
	return 0;
}

static long f_read_mem(const struct ax_ctx *ctx, uint64_t addr, void *buf,
		       size_t len)
{
	check(len > 0 && len <= 4096);
	if (addr < MEM_BASE || addr - MEM_BASE >= MEM_SIZE)
		return -EFAULT;
	size_t off = addr - MEM_BASE;
	size_t n = MEM_SIZE - off < len ? MEM_SIZE - off : len;
	memcpy(buf, mem + off, n);
	return (long)n;
}

static int f_tsv_get(const struct ax_ctx *ctx, unsigned num, int64_t *value)
{
	if (num >= 8)
		return -ENOENT;
	*value = tsvs[num];
	return 0;
}

static int f_tsv_set(const struct ax_ctx *ctx, unsigned num, int64_t value)
{
	if (num >= 8)
		return -ENOENT;
	tsvs[num] = value;
	return 0;
}

static int f_trace_mem(const struct ax_ctx *ctx, uint64_t addr, uint64_t len)
{
	/* Refuse huge blocks as a real trace buffer would. */
	return len > 65536 ? -ENOBUFS : 0;
}

static int f_trace_tsv(const struct ax_ctx *ctx, unsigned num)
{
	return num >= 8 ? -ENOENT : 0;
}

static int f_printf_out(const struct ax_ctx *ctx, const char *text,
			size_t len)
{
	check(len > 0);
	/* Touch every byte so ASan checks the range. */
	for (size_t i = 0; i < len; i++)
		printed += (unsigned char)text[i] != 0;
	return 0;
}

static const struct ax_ctx fake = {
	.read_reg = f_read_reg,
	.read_mem = f_read_mem,
	.tsv_get = f_tsv_get,
	.tsv_set = f_tsv_set,
	.trace_mem = f_trace_mem,
	.trace_tsv = f_trace_tsv,
	.printf_out = f_printf_out,
	.step_budget = BUDGET,
};

static void check_result(int r, const struct ax_result *res)
{
	check((unsigned)res->error < AX_ERR_COUNT);
	check((r == 0) == (res->error == AX_OK));
	check(r <= 0);
	check(res->steps <= BUDGET);
	check(memchr(res->message, '\0', sizeof(res->message)) != NULL);
	check((res->message[0] != '\0') == (res->error != AX_OK));
	check(ax_error_name(res->error) != NULL);
}

/* --- Programs built from the input ---------------------------------- */

static const uint8_t implemented[] = {
	AX_OP_ADD, AX_OP_SUB, AX_OP_MUL, AX_OP_DIV_SIGNED, AX_OP_DIV_UNSIGNED,
	AX_OP_REM_SIGNED, AX_OP_REM_UNSIGNED, AX_OP_LSH, AX_OP_RSH_SIGNED,
	AX_OP_RSH_UNSIGNED, AX_OP_TRACE, AX_OP_TRACE_QUICK, AX_OP_LOG_NOT,
	AX_OP_BIT_AND, AX_OP_BIT_OR, AX_OP_BIT_XOR, AX_OP_BIT_NOT,
	AX_OP_EQUAL, AX_OP_LESS_SIGNED, AX_OP_LESS_UNSIGNED, AX_OP_EXT,
	AX_OP_REF8, AX_OP_REF16, AX_OP_REF32, AX_OP_REF64, AX_OP_IF_GOTO,
	AX_OP_GOTO, AX_OP_CONST8, AX_OP_CONST16, AX_OP_CONST32,
	AX_OP_CONST64, AX_OP_REG, AX_OP_END, AX_OP_DUP, AX_OP_POP,
	AX_OP_ZERO_EXT, AX_OP_SWAP, AX_OP_GETV, AX_OP_SETV, AX_OP_TRACEV,
	AX_OP_TRACENZ, AX_OP_PICK, AX_OP_ROT, AX_OP_PRINTF,
	/* the common ones again, to keep the stack fed */
	AX_OP_CONST8, AX_OP_REG, AX_OP_DUP, AX_OP_CONST64,
};

static const struct {
	uint8_t nargs;
	const char *fmt;
} formats[] = {
	{ 0, "hello\\n" },
	{ 1, "%d\\n" },
	{ 2, "a=%-5d b=%#x\\t" },
	{ 1, "<%s>" },
	{ 1, "<%8.3s|%%>" },
	{ 3, "%c%p%lld" },
	{ 2, "%+08.3ld %hu" },
	{ 1, "%-12p" },
	{ 2, "%lu %llX" },
	{ 1, "%.0o %%" },
};

#define MAX_BUILT 4096

static size_t build(const uint8_t *data, size_t size, uint8_t *out)
{
	size_t pos = 0, n = 0, ninsns = 0;
	size_t starts[MAX_BUILT];
	size_t fix[MAX_BUILT];		/* jumps to patch */
	size_t nfix = 0;

#define BYTE() (pos < size ? data[pos++] : 0)
	/* Four pointer-ish values into the fake memory. */
	for (int i = 0; i < 4; i++) {
		starts[ninsns++] = n;
		out[n++] = AX_OP_CONST16;
		out[n++] = (uint8_t)((MEM_BASE >> 8) + (i * 3));
		out[n++] = (uint8_t)(i * 40);
	}
	while (pos < size && n < MAX_BUILT - 300) {
		uint8_t op = implemented[BYTE() % sizeof(implemented)];
		const char *f;
		size_t flen;
		unsigned k;

		starts[ninsns++] = n;
		out[n++] = op;
		switch (op) {
		case AX_OP_REG:
			out[n++] = 0;
			out[n++] = BYTE() % 40;
			break;
		case AX_OP_GETV: case AX_OP_SETV: case AX_OP_TRACEV:
			out[n++] = 0;
			out[n++] = BYTE() % 10;
			break;
		case AX_OP_EXT:
			out[n++] = 1 + BYTE() % 70;
			break;
		case AX_OP_ZERO_EXT:
			out[n++] = BYTE() % 70;
			break;
		case AX_OP_PICK:
			out[n++] = BYTE() % 8;
			break;
		case AX_OP_TRACE_QUICK:
		case AX_OP_CONST8:
			out[n++] = BYTE();
			break;
		case AX_OP_CONST16:
			out[n++] = BYTE();
			out[n++] = BYTE();
			break;
		case AX_OP_CONST32:
			for (int i = 0; i < 4; i++)
				out[n++] = BYTE();
			break;
		case AX_OP_CONST64:
			for (int i = 0; i < 8; i++)
				out[n++] = BYTE();
			break;
		case AX_OP_GOTO: case AX_OP_IF_GOTO:
			fix[nfix++] = n;
			out[n++] = BYTE();	/* instruction index for now */
			out[n++] = 0;
			break;
		case AX_OP_PRINTF:
			k = BYTE() % (sizeof(formats) / sizeof(formats[0]) + 2);
			if (k >= sizeof(formats) / sizeof(formats[0])) {
				/* A format from the input itself, up to
				 * 24 bytes: the parser's escapes, flags,
				 * widths and refusals get their turn. */
				out[n++] = BYTE() % 4;
				out[n++] = 0;
				flen = 1 + BYTE() % 24;
				out[n++] = (uint8_t)flen;
				for (size_t i = 0; i + 1 < flen; i++) {
					uint8_t c = BYTE();
					out[n++] = c ? c : '%';
				}
				out[n++] = '\0';
				break;
			}
			f = formats[k].fmt;
			flen = strlen(f) + 1;
			out[n++] = formats[k].nargs;
			out[n++] = 0;
			out[n++] = (uint8_t)flen;
			memcpy(out + n, f, flen);
			n += flen;
			break;
		}
	}
#undef BYTE
	starts[ninsns++] = n;
	out[n++] = AX_OP_END;
	for (size_t i = 0; i < nfix; i++) {
		size_t t = starts[out[fix[i]] % ninsns];
		out[fix[i]] = (uint8_t)(t >> 8);
		out[fix[i] + 1] = (uint8_t)t;
	}
	return n;
}

static unsigned long built_total, built_verified;

/* Checks properties 1-5 on one program; returns ax_verify's result. */
static int run_one(const uint8_t *data, size_t size)
{
	struct ax_info info;
	struct ax_result res;
	struct rsp_buf b;
	char err[160];
	int v, r, d;

	if (size > AX_MAX_LEN)
		size = AX_MAX_LEN + 1;	/* enough to see -E2BIG */

	for (size_t i = 0; i < MEM_SIZE; i++)
		mem[i] = i % 37 == 36 ? 0 : (uint8_t)(i * 7 + (i >> 5));
	memset(tsvs, 0, sizeof(tsvs));

	memset(err, 'x', sizeof(err));
	v = ax_verify(data, size, &info, err, sizeof(err));
	check(v == 0 || v == -EINVAL || v == -EOPNOTSUPP || v == -E2BIG);
	check(memchr(err, '\0', sizeof(err)) != NULL);
	check((v == 0) == (err[0] == '\0'));
	if (v == 0) {
		check(info.max_depth <= AX_STACK_MAX);
		check(info.ntsvs <= AX_INFO_MAX_TSVS);
		check(info.ninsns >= 1 && info.ninsns <= size);
	}

	r = ax_eval(data, size, &fake, &res);
	check_result(r, &res);
	if (v == 0) {
		check(!ax_error_is_structural(res.error));
		check(res.error != AX_ERR_EMPTY_STACK);
	}

	r = ax_eval_cond(data, size, &fake, &res);
	check_result(r, &res);
	if (v == 0) {
		check(!ax_error_is_structural(res.error));
		if (!info.may_end_empty)
			check(res.error != AX_ERR_EMPTY_STACK);
		if (res.error == AX_OK)
			check(res.has_value);
	}

	rsp_buf_init(&b);
	d = ax_disassemble(data, size, &b);
	check(d == 0 || d == -EINVAL);
	if (v == 0)
		check(d == 0);
	check(size == 0 || b.len > 0);
	rsp_buf_free(&b);
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t built[MAX_BUILT];
	size_t n;

	run_one(data, size);
	n = build(data, size, built);
	if (run_one(built, n) == 0)
		built_verified++;
	/* The share of built programs that verify, for the final stats. */
	if (++built_total % 10000 == 0)
		fprintf(stderr, "fuzz-ax: %lu of %lu built programs verified\n",
			built_verified, built_total);
	return 0;
}
