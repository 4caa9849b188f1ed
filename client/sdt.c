/*
 * sdt.c - USDT probe notes: reading them, parsing their arguments, and
 * compiling an argument to agent-expression bytecode (see sdt.h).
 *
 * Three layers, each usable alone:
 *
 *   - the operand parser turns one `[-]SIZE@OPERAND` into a struct
 *     sdt_arg.  The size prefix is the same on every arch and is read
 *     here; the operand is the arch's assembler syntax, so the arch of
 *     the file's e_machine parses it (arch_ops.sdt_operand_parse:
 *     x86-64 today; aarch64 "[sp, 8]", "x0" and arm "[r1, #8]" are one
 *     arch/ file each).  No register name is spelled here.
 *   - the note reader walks the SHT_NOTE sections with libelf, keeps the
 *     "stapsdt" notes of type 3, adjusts each pc by the .stapsdt.base
 *     difference and resolves the symbols that rip-relative operands
 *     name.
 *   - sdt_arg_emit() writes bytecode for protocol/ax.c, so that `record`
 *     can collect an argument with a QTDP action or test it in a
 *     condition.
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/sdt.h"

/* Longest operand the parser accepts; compilers write a few dozen bytes. */
#define SDT_OPERAND_MAX 256

static int fail(char *err, size_t errsize, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errsize, int code, const char *fmt, ...)
{
	va_list ap;

	if (errsize) {
		va_start(ap, fmt);
		vsnprintf(err, errsize, fmt, ap);
		va_end(ap);
	}
	return code;
}

/* ---- Operands ---------------------------------------------------------- */

/* Copies what the arch's parser found into *a; the symbol, a span of
 * the operand's text, becomes a string of its own. */
static int take_operand(struct sdt_arg *a, const struct arch_operand *op,
			const char *text, char *err, size_t errsize)
{
	a->kind = (enum sdt_arg_kind)op->kind;
	a->reg = op->reg;
	a->index = op->index;
	a->scale = op->scale;
	a->imm = op->imm;
	a->disp = op->disp;
	if (op->sym_len && !(a->symbol = strndup(text + op->sym_off, op->sym_len)))
		return fail(err, errsize, -ENOMEM, "out of memory");
	return 0;
}

int sdt_parse_arg(uint16_t machine, const char *text, size_t len,
		  struct sdt_arg *a, char *err, size_t errsize)
{
	const struct arch_ops *ops = arch_for_elf_machine(machine);
	char buf[SDT_OPERAND_MAX];
	struct arch_operand op;
	const char *p = buf, *at;
	int ret;

	memset(a, 0, sizeof(*a));
	a->reg.regnum = a->index.regnum = -1;
	if (!ops) {
		char why[200];

		return fail(err, errsize, -EOPNOTSUPP, "probe arguments are not "
			    "parsed yet: %s", arch_machine_unsupported(machine,
			    why, sizeof(why)));
	}
	if (!ops->sdt_operand_parse)
		return fail(err, errsize, -EOPNOTSUPP, "probe arguments of %s "
			    "are not parsed yet", ops->name);
	if (len == 0)
		return fail(err, errsize, -EINVAL, "empty argument");
	if (len >= sizeof(buf))
		return fail(err, errsize, -EINVAL, "argument longer than %d "
			    "bytes", SDT_OPERAND_MAX - 1);
	memcpy(buf, text, len);
	buf[len] = '\0';

	/* [-]SIZE@ when the text before the first '@' is an integer */
	a->size = 8;
	at = strchr(buf, '@');
	if (at) {
		const char *q = buf + (buf[0] == '-');
		int64_t size;

		if (q < at && strspn(q, "0123456789") == (size_t)(at - q)) {
			size = strtoll(q, NULL, 10);
			if (size != 1 && size != 2 && size != 4 && size != 8)
				return fail(err, errsize, -EINVAL, "size %.*s is "
					    "not 1, 2, 4 or 8 bytes",
					    (int)(at - buf), buf);
			a->size = (unsigned int)size;
			a->is_signed = buf[0] == '-';
			p = at + 1;
		}
	}
	if (!*p)
		return fail(err, errsize, -EINVAL, "no operand after the size");
	ret = ops->sdt_operand_parse(p, &op, err, errsize);
	if (!ret)
		ret = take_operand(a, &op, p, err, errsize);
	if (ret)
		sdt_arg_clear(a);
	return ret;
}

void sdt_arg_clear(struct sdt_arg *a)
{
	free(a->symbol);
	memset(a, 0, sizeof(*a));
	a->reg.regnum = a->index.regnum = -1;
}

/*
 * Bytes of the operand at `p`: up to the next blank outside brackets.
 * Arguments are separated by blanks, and aarch64 writes a blank inside
 * a memory operand ("-4@[sp, 12]").
 */
static size_t arg_len(const char *p)
{
	size_t n = 0;
	int depth = 0;

	for (; p[n] && (depth > 0 || (p[n] != ' ' && p[n] != '\t')); n++) {
		if (p[n] == '[')
			depth++;
		else if (p[n] == ']' && depth > 0)
			depth--;
	}
	return n;
}

int sdt_parse_args(uint16_t machine, const char *text, struct sdt_arg **args,
		   size_t *nargs, char *err, size_t errsize)
{
	struct sdt_arg *v = NULL;
	size_t n = 0, cap = 0;
	const char *p = text;
	char why[256];
	int ret = 0;

	for (;;) {
		size_t len;

		p += strspn(p, " \t");
		if (!*p)
			break;
		len = arg_len(p);
		if (n == cap) {
			struct sdt_arg *nv;

			cap = cap ? 2 * cap : 4;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				ret = fail(err, errsize, -ENOMEM, "out of memory");
				goto out;
			}
			v = nv;
		}
		ret = sdt_parse_arg(machine, p, len, &v[n], why, sizeof(why));
		if (ret) {
			fail(err, errsize, ret, "argument %zu '%.*s': %s", n + 1,
			     (int)len, p, why);
			goto out;
		}
		n++;
		p += len;
	}
	*args = v;
	*nargs = n;
	return 0;
out:
	sdt_args_free(v, n);
	*args = NULL;
	*nargs = 0;
	return ret;
}

void sdt_args_free(struct sdt_arg *args, size_t nargs)
{
	for (size_t i = 0; i < nargs; i++)
		free(args[i].symbol);
	free(args);
}

/* ---- Bytecode ---------------------------------------------------------- */

/* Keeps the low `bits` of the top of the stack, sign- or zero-extended. */
static void emit_extend(struct ax_emit *e, unsigned int bits, bool is_signed)
{
	if (bits >= 64)
		return;
	ax_emit_op8(e, is_signed ? AX_OP_EXT : AX_OP_ZERO_EXT, bits);
}

/* Pushes a register slice, zero-extended: reg; [const s; rsh]; zero_ext. */
static void emit_reg(struct ax_emit *e, const struct arch_asm_reg *r)
{
	ax_emit_reg(e, (unsigned int)r->regnum);
	if (r->shift) {
		ax_emit_const(e, r->shift);
		ax_emit_op(e, AX_OP_RSH_UNSIGNED);
	}
	emit_extend(e, 8 * r->size, false);
}

int sdt_arg_emit(const struct sdt_arg *a, struct ax_emit *e, uint64_t bias)
{
	unsigned int bits;
	uint64_t disp;
	bool term = false;

	if (a->size != 1 && a->size != 2 && a->size != 4 && a->size != 8)
		return -EINVAL;
	if (a->symbol && !a->sym_resolved)
		return -ENOENT;
	/* a symbol's address moves with the object; a bare number in a
	 * register-based operand is a plain offset and does not */
	disp = (uint64_t)a->disp + (a->symbol ? a->sym_addr + bias : 0);

	switch (a->kind) {
	case SDT_ARG_REG:
		if (a->reg.regnum < 0)
			return -EINVAL;
		/* the narrower of the slice and the declared size holds the
		 * value; a signed one is extended from there */
		bits = 8 * (a->reg.size < a->size ? a->reg.size : a->size);
		ax_emit_reg(e, (unsigned int)a->reg.regnum);
		if (a->reg.shift) {
			ax_emit_const(e, a->reg.shift);
			ax_emit_op(e, AX_OP_RSH_UNSIGNED);
		}
		emit_extend(e, bits, a->is_signed);
		break;
	case SDT_ARG_IMM: {
		uint64_t v = (uint64_t)a->imm;

		if (a->size < 8) {
			uint64_t m = (1ull << (8 * a->size)) - 1;
			uint64_t sign = 1ull << (8 * a->size - 1);

			v &= m;
			if (a->is_signed && (v & sign))
				v |= ~m;
		}
		ax_emit_const(e, (int64_t)v);
		break;
	}
	case SDT_ARG_MEM:
		if (a->reg.regnum >= 0) {
			emit_reg(e, &a->reg);
			term = true;
		}
		if (a->index.regnum >= 0) {
			emit_reg(e, &a->index);
			if (a->scale > 1) {
				ax_emit_const(e, a->scale);
				ax_emit_op(e, AX_OP_MUL);
			}
			if (term)
				ax_emit_op(e, AX_OP_ADD);
			term = true;
		}
		if (!term)
			return -EINVAL;
		if (disp) {
			ax_emit_const(e, (int64_t)disp);
			ax_emit_op(e, AX_OP_ADD);
		}
		ax_emit_load(e, a->size, a->is_signed);
		break;
	case SDT_ARG_STATIC:
		/* a number without a symbol is an absolute link-time
		 * address: it moves with the object too */
		if (!a->symbol)
			disp += bias;
		ax_emit_const(e, (int64_t)disp);
		ax_emit_load(e, a->size, a->is_signed);
		break;
	default:
		return -EINVAL;
	}
	return e->error;
}

const struct sdt_probe *sdt_find_next(const struct sdt_file *f,
				      const struct sdt_probe *after,
				      const char *provider, const char *name)
{
	size_t i = after ? (size_t)(after - f->probes) + 1 : 0;

	for (; i < f->nprobes; i++)
		if (strcmp(f->probes[i].provider, provider) == 0 &&
		    strcmp(f->probes[i].name, name) == 0)
			return &f->probes[i];
	return NULL;
}

int sdt_probe_fullname(const struct sdt_probe *p, char *buf, size_t size)
{
	return snprintf(buf, size, "sdt:%s:%s", p->provider, p->name);
}

/* ---- Notes ------------------------------------------------------------- */

struct note_reader {
	const uint8_t *p;
	size_t left;
	unsigned int word;	/* 4 or 8 */
	bool big_endian;
};

static bool read_word(struct note_reader *r, uint64_t *v)
{
	if (r->left < r->word)
		return false;
	*v = 0;
	for (unsigned int i = 0; i < r->word; i++) {
		unsigned int b = r->big_endian ? i : r->word - 1 - i;

		*v = (*v << 8) | r->p[b];
	}
	r->p += r->word;
	r->left -= r->word;
	return true;
}

static char *read_string(struct note_reader *r)
{
	const uint8_t *nul = memchr(r->p, '\0', r->left);
	char *s;

	if (!nul)
		return NULL;
	s = strdup((const char *)r->p);
	r->left -= (size_t)(nul + 1 - r->p);
	r->p = nul + 1;
	return s;
}

static void probe_free(struct sdt_probe *p)
{
	free(p->provider);
	free(p->name);
	free(p->args_text);
	free(p->error);
	sdt_args_free(p->args, p->nargs);
}

static int set_error(struct sdt_probe *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int set_error(struct sdt_probe *p, const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	free(p->error);
	p->error = msg;
	return 0;
}

/* The link-time value of the first symbol named `name`, any type. */
static bool lookup_symbol(Elf *elf, const char *name, uint64_t *value)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;
		size_t n;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym s;
			const char *sn;

			if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF)
				continue;
			sn = elf_strptr(elf, sh.sh_link, s.st_name);
			if (sn && strcmp(sn, name) == 0) {
				*value = s.st_value;
				return true;
			}
		}
	}
	return false;
}

/* Parses the probe's arguments and resolves their symbols; a failure is
 * recorded in p->error, only -ENOMEM is returned. */
static int probe_args(Elf *elf, uint16_t machine, struct sdt_probe *p)
{
	char why[320];
	int ret;

	ret = sdt_parse_args(machine, p->args_text, &p->args, &p->nargs, why,
			     sizeof(why));
	if (ret == -ENOMEM)
		return ret;
	if (ret)
		return set_error(p, "sdt:%s:%s: %s", p->provider, p->name, why);
	for (size_t i = 0; i < p->nargs; i++) {
		struct sdt_arg *a = &p->args[i];

		if (!a->symbol)
			continue;
		if (!lookup_symbol(elf, a->symbol, &a->sym_addr)) {
			const char *t = p->args_text;
			size_t len;

			/* the i-th blank-separated operand, for the message */
			for (size_t j = 0;; j++) {
				t += strspn(t, " \t");
				len = arg_len(t);
				if (j == i)
					break;
				t += len;
			}
			return set_error(p, "sdt:%s:%s: argument %zu '%.*s': "
					 "symbol '%s' is not in the symbol table",
					 p->provider, p->name, i + 1, (int)len, t,
					 a->symbol);
		}
		a->sym_resolved = true;
	}
	return 0;
}

static int add_probe(struct sdt_file *f, size_t *cap, struct sdt_probe *p)
{
	if (f->nprobes == *cap) {
		struct sdt_probe *np;

		*cap = *cap ? 2 * *cap : 16;
		np = realloc(f->probes, *cap * sizeof(*np));
		if (!np)
			return -ENOMEM;
		f->probes = np;
	}
	f->probes[f->nprobes++] = *p;
	return 0;
}

int sdt_read_elf(struct sdt_file *f, void *elf_, char *err, size_t errsize)
{
	Elf *elf = elf_;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	size_t shstrndx, cap = 0;
	uint64_t base = 0;
	bool have_base = false;
	int ret = 0;

	memset(f, 0, sizeof(*f));
	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh))
		return fail(err, errsize, -ENOEXEC, "not an ELF file");
	f->machine = eh.e_machine;
	if (elf_getshdrstrndx(elf, &shstrndx))
		return fail(err, errsize, -ENOEXEC, "no section names: %s",
			    elf_errmsg(-1));
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (n && strcmp(n, SDT_BASE_SECTION) == 0) {
			base = sh.sh_addr;
			have_base = true;
		}
	}

	scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;
		GElf_Nhdr nh;
		size_t off = 0, next, name_off, desc_off;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		while ((next = gelf_getnote(d, off, &nh, &name_off, &desc_off))) {
			struct note_reader r = {
				(const uint8_t *)d->d_buf + desc_off, nh.n_descsz,
				eh.e_ident[EI_CLASS] == ELFCLASS64 ? 8 : 4,
				eh.e_ident[EI_DATA] == ELFDATA2MSB,
			};
			struct sdt_probe p = { 0 };

			off = next;
			if (nh.n_type != SDT_NOTE_TYPE ||
			    nh.n_namesz != sizeof(SDT_NOTE_OWNER) ||
			    memcmp((const char *)d->d_buf + name_off,
				   SDT_NOTE_OWNER, sizeof(SDT_NOTE_OWNER)) != 0)
				continue;
			if (!read_word(&r, &p.note_pc) ||
			    !read_word(&r, &p.note_base) ||
			    !read_word(&r, &p.semaphore) ||
			    !(p.provider = read_string(&r)) ||
			    !(p.name = read_string(&r)) ||
			    !(p.args_text = read_string(&r))) {
				probe_free(&p);
				ret = fail(err, errsize, -EBADMSG, "malformed "
					   "stapsdt note %zu: too short or "
					   "unterminated strings", f->nprobes + 1);
				goto out;
			}
			/* prelink moved the sections, not the notes */
			p.base = have_base ? base : p.note_base;
			p.pc = p.note_pc;
			if (have_base && p.note_base)
				p.pc += p.base - p.note_base;
			if ((ret = probe_args(elf, f->machine, &p)) ||
			    (ret = add_probe(f, &cap, &p))) {
				probe_free(&p);
				ret = fail(err, errsize, ret, "out of memory");
				goto out;
			}
		}
	}
	return 0;
out:
	sdt_close(f);
	return ret;
}

int sdt_open(struct sdt_file *f, const char *path, char *err, size_t errsize)
{
	char why[256];
	Elf *elf;
	int fd, ret;

	memset(f, 0, sizeof(*f));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return fail(err, errsize, -EIO, "libelf: %s", elf_errmsg(-1));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(err, errsize, -errno, "%s: %s", path, strerror(errno));
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		close(fd);
		return fail(err, errsize, -ENOEXEC, "%s: not an ELF file", path);
	}
	ret = sdt_read_elf(f, elf, why, sizeof(why));
	if (ret)
		fail(err, errsize, ret, "%s: %s", path, why);
	elf_end(elf);
	close(fd);
	return ret;
}

void sdt_close(struct sdt_file *f)
{
	for (size_t i = 0; i < f->nprobes; i++)
		probe_free(&f->probes[i]);
	free(f->probes);
	memset(f, 0, sizeof(*f));
}
