/*
 * sdt.c - USDT probe notes: reading them, parsing their arguments, and
 * compiling an argument to agent-expression bytecode (see sdt.h).
 *
 * Three layers, each usable alone:
 *
 *   - the operand parser turns one `[-]SIZE@OPERAND` into a struct
 *     sdt_arg.  The size prefix is the same on every arch; the operand
 *     is the arch's assembler syntax, so it goes through a per-machine
 *     table of parsers (x86-64 only today; aarch64 "[sp, 8]", "x0",
 *     "#imm" and arm would be one more row).  Register names are never
 *     spelled here: the arch's asm_reg() maps them to gdb numbers.
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

static bool is_sym_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	       c == '.';
}

static bool is_sym_char(char c)
{
	return is_sym_start(c) || (c >= '0' && c <= '9') || c == '$';
}

/*
 * A number as the assembler writes it: optional '-', then decimal, 0x
 * hex or 0 octal.  Stores it in *v and returns the bytes used, 0 when
 * `s` does not start with a number.
 */
static size_t parse_number(const char *s, int64_t *v)
{
	const char *p = s;
	bool neg = false;
	char *end;
	uint64_t u;

	if (*p == '-' || *p == '+') {
		neg = *p == '-';
		p++;
	}
	if (*p < '0' || *p > '9')
		return 0;
	errno = 0;
	u = strtoull(p, &end, 0);
	if (errno)
		return 0;
	*v = neg ? (int64_t)(0 - u) : (int64_t)u;
	return (size_t)(end - s);
}

/*
 * x86-64, AT&T syntax.  `s` is the operand alone, NUL-terminated.
 *
 *	%reg | $imm | [disp](base[,index[,scale]]) | disp
 *
 * with disp = number | sym | sym+number | sym-number.
 */
static int x86_64_reg(const char **p, struct arch_asm_reg *r, char *err,
		      size_t errsize)
{
	const char *s = *p + 1, *e = s;

	if (**p != '%')
		return fail(err, errsize, -EINVAL, "expected a register at '%s'",
			    *p);
	while ((*e >= 'a' && *e <= 'z') || (*e >= '0' && *e <= '9'))
		e++;
	if (e == s || x86_64_arch_ops.asm_reg(s, (size_t)(e - s), r))
		return fail(err, errsize, -EINVAL, "unknown register %%%.*s",
			    (int)(strcspn(s, ",)")), s);
	*p = e;
	return 0;
}

static int x86_64_addr_reg(const char **p, struct arch_asm_reg *r,
			   const char *what, char *err, size_t errsize)
{
	const char *at = *p;
	int ret = x86_64_reg(p, r, err, errsize);

	if (ret)
		return ret;
	if (r->size != 8 && r->size != 4)
		return fail(err, errsize, -EINVAL, "%s register %.*s is not "
			    "64 or 32 bits wide", what, (int)(*p - at), at);
	return 0;
}

static int x86_64_disp(const char **p, struct sdt_arg *a, char *err,
		       size_t errsize)
{
	const char *s = *p;
	size_t n;

	if (is_sym_start(*s)) {
		const char *e = s + 1;

		while (is_sym_char(*e))
			e++;
		a->symbol = strndup(s, (size_t)(e - s));
		if (!a->symbol)
			return fail(err, errsize, -ENOMEM, "out of memory");
		s = e;
		if (*s != '+' && *s != '-') {
			*p = s;
			return 0;
		}
		if (!(n = parse_number(s, &a->disp)))
			return fail(err, errsize, -EINVAL, "expected a number "
				    "after '%c' at '%s'", *s, s);
		*p = s + n;
		return 0;
	}
	if ((n = parse_number(s, &a->disp)))
		*p = s + n;
	return 0;
}

static int x86_64_operand(const char *s, struct sdt_arg *a, char *err,
			  size_t errsize)
{
	const char *p = s;
	int64_t scale;
	size_t n;
	int ret;

	if (*p == '%') {
		a->kind = SDT_ARG_REG;
		if ((ret = x86_64_reg(&p, &a->reg, err, errsize)))
			return ret;
		goto end;
	}
	if (*p == '$') {
		a->kind = SDT_ARG_IMM;
		if (!(n = parse_number(p + 1, &a->imm)))
			return fail(err, errsize, -EINVAL, "bad constant '%s'", s);
		p += 1 + n;
		goto end;
	}

	a->reg.regnum = a->index.regnum = -1;
	a->scale = 1;
	if ((ret = x86_64_disp(&p, a, err, errsize)))
		return ret;
	if (*p != '(') {
		if (p == s)
			return fail(err, errsize, -EINVAL, "not an operand: '%s'",
				    s);
		a->kind = SDT_ARG_STATIC;	/* absolute: sym or number */
		goto end;
	}
	p++;
	if (*p == '%' && (ret = x86_64_addr_reg(&p, &a->reg, "base", err,
						 errsize)))
		return ret;
	if (a->reg.regnum == x86_64_arch_ops.pc_regnum) {
		/* sym(%rip): the note is never assembled; see sdt.h */
		if (*p != ')')
			return fail(err, errsize, -EINVAL, "%%rip takes no "
				    "index in '%s'", s);
		a->kind = SDT_ARG_STATIC;
		a->reg.regnum = -1;
		p++;
		goto end;
	}
	a->kind = SDT_ARG_MEM;
	if (*p == ',') {
		p++;
		if ((ret = x86_64_addr_reg(&p, &a->index, "index", err,
					   errsize)))
			return ret;
		if (a->index.regnum == x86_64_arch_ops.sp_regnum ||
		    a->index.regnum == x86_64_arch_ops.pc_regnum)
			return fail(err, errsize, -EINVAL, "%%rsp and %%rip "
				    "cannot be an index in '%s'", s);
		if (*p == ',') {
			p++;
			if (!(n = parse_number(p, &scale)) ||
			    (scale != 1 && scale != 2 && scale != 4 &&
			     scale != 8))
				return fail(err, errsize, -EINVAL, "scale is "
					    "not 1, 2, 4 or 8 in '%s'", s);
			a->scale = (unsigned int)scale;
			p += n;
		}
	}
	if (a->reg.regnum < 0 && a->index.regnum < 0)
		return fail(err, errsize, -EINVAL, "no base or index register "
			    "in '%s'", s);
	if (*p != ')')
		return fail(err, errsize, -EINVAL, "expected ')' at '%s' in "
			    "'%s'", p, s);
	p++;
end:
	if (*p)
		return fail(err, errsize, -EINVAL, "unexpected '%s' after the "
			    "operand", p);
	return 0;
}

/* Operand syntax per e_machine: one row per arch whose notes we parse. */
static const struct {
	uint16_t machine;
	int (*operand)(const char *s, struct sdt_arg *a, char *err,
		       size_t errsize);
} sdt_arches[] = {
	{ EM_X86_64, x86_64_operand },
};

int sdt_parse_arg(uint16_t machine, const char *text, size_t len,
		  struct sdt_arg *a, char *err, size_t errsize)
{
	int (*operand)(const char *, struct sdt_arg *, char *, size_t) = NULL;
	char buf[SDT_OPERAND_MAX];
	const char *p = buf, *at;
	int ret;

	memset(a, 0, sizeof(*a));
	a->reg.regnum = a->index.regnum = -1;
	for (size_t i = 0; i < sizeof(sdt_arches) / sizeof(sdt_arches[0]); i++)
		if (sdt_arches[i].machine == machine)
			operand = sdt_arches[i].operand;
	if (!operand)
		return fail(err, errsize, -EOPNOTSUPP, "probe arguments of "
			    "e_machine %u are not parsed yet", machine);
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
	ret = operand(p, a, err, errsize);
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
		len = strcspn(p, " \t");
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
				len = strcspn(t, " \t");
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
