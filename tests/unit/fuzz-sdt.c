/*
 * fuzz-sdt.c - libFuzzer target for the USDT note reader and the
 * argument parser (client/sdt.c).
 *
 * `probe-trace list` and `record -e sdt:...` read the `.note.stapsdt`
 * notes of whatever program or library the user names, so a damaged or
 * hostile file must give an error or probes with their reasons, never a
 * crash.  Each input is used two ways:
 *
 *   1. as an ELF file (libelf's elf_memory on a private copy): the note
 *      reader must return 0 or one of its documented errors; every
 *      probe it returns has a provider and a name that sdt_find_next()
 *      finds again, and, when it has no error, arguments that compile to
 *      bytecode the agent's verifier accepts and its VM runs without a
 *      structural error, leaving the argument's value on the stack;
 *   2. as an argument string (up to the first NUL): the operand parser
 *      must accept it or say why, and what it accepts compiles as above.
 *
 * A violated property aborts, which libFuzzer reports with the input.
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/sdt.h"
#include "protocol/ax-emit.h"
#include "protocol/ax.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok)
{
	if (!ok)
		abort();
}

static int f_read_reg(const struct ax_ctx *ctx, unsigned regnum,
		      uint64_t *value)
{
	*value = 0x1000 + regnum * 8;
	return 0;
}

static long f_read_mem(const struct ax_ctx *ctx, uint64_t addr, void *buf,
		       size_t len)
{
	check(len >= 1 && len <= 8);
	memset(buf, 0x5a, len);
	return (long)len;
}

static const struct ax_ctx fake = {
	.read_reg = f_read_reg,
	.read_mem = f_read_mem,
};

/* The argument's bytecode verifies and runs to a value, or the emitter
 * refused it for a documented reason. */
static void check_emit(const struct sdt_arg *a, uint64_t bias)
{
	struct ax_emit e;
	struct ax_result res;
	char err[160];
	int r;

	ax_emit_init(&e);
	r = sdt_arg_emit(a, &e, bias);
	check(r == 0 || r == -ENOENT || r == -EINVAL || r == -ERANGE);
	/* a symbol (static or a displacement) must be resolved first */
	check((r == -ENOENT) == (a->symbol && !a->sym_resolved));
	if (r == 0) {
		ax_emit_op(&e, AX_OP_END);
		check(e.error == 0);
		check(ax_verify(e.code, e.len, NULL, err, sizeof(err)) == 0);
		ax_eval_cond(e.code, e.len, &fake, &res);
		check(!ax_error_is_structural(res.error));
		check(res.error != AX_OK || res.has_value);
	}
	ax_emit_free(&e);
}

static void read_notes(const uint8_t *data, size_t size)
{
	struct sdt_file f;
	char err[256], name[600];
	char *copy;
	Elf *elf;
	int r;

	copy = malloc(size ? size : 1);
	check(copy != NULL);
	memcpy(copy, data, size);
	elf = elf_memory(copy, size);
	if (!elf) {
		free(copy);
		return;
	}
	memset(err, 'x', sizeof(err));
	r = sdt_read_elf(&f, elf, err, sizeof(err));
	check(r == 0 || r == -ENOEXEC || r == -EBADMSG || r == -ENOMEM);
	if (r == 0) {
		for (size_t i = 0; i < f.nprobes; i++) {
			const struct sdt_probe *p = &f.probes[i];
			const struct sdt_probe *q = NULL;

			check(p->provider && p->name && p->args_text);
			/* the same name finds this site among its namesakes */
			while ((q = sdt_find_next(&f, q, p->provider, p->name)) &&
			       q != p)
				;
			check(q == p);
			check(sdt_probe_fullname(p, name, sizeof(name)) >= 0);
			if (p->error) {
				check(strlen(p->error) > 0);
				continue;
			}
			for (size_t k = 0; k < p->nargs; k++)
				check_emit(&p->args[k], 0x555555554000ull);
		}
		sdt_close(&f);
	} else {
		check(memchr(err, '\0', sizeof(err)) != NULL && err[0]);
	}
	elf_end(elf);
	free(copy);
}

static void parse_text(const uint8_t *data, size_t size)
{
	size_t len = strnlen((const char *)data, size);
	char *text = malloc(len + 1);
	struct sdt_arg *args = NULL;
	size_t nargs = 0;
	char err[320];
	int r;

	check(text != NULL);
	memcpy(text, data, len);
	text[len] = '\0';
	memset(err, 'x', sizeof(err));
	r = sdt_parse_args(EM_X86_64, text, &args, &nargs, err, sizeof(err));
	check(r == 0 || r == -EINVAL || r == -ENOMEM);
	if (r == 0) {
		for (size_t k = 0; k < nargs; k++) {
			check(args[k].size == 1 || args[k].size == 2 ||
			      args[k].size == 4 || args[k].size == 8);
			check_emit(&args[k], 0);
		}
		sdt_args_free(args, nargs);
	} else {
		check(memchr(err, '\0', sizeof(err)) != NULL && err[0]);
	}
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool init;

	if (!init) {
		check(elf_version(EV_CURRENT) != EV_NONE);
		init = true;
	}
	read_notes(data, size);
	parse_text(data, size);
	return 0;
}
