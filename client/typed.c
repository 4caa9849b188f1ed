/*
 * typed.c - typed values: their description in a trace file and how
 * they print (typed.h).
 *
 * Pure: no DWARF here (dwarfval.c makes the descriptions) and no file
 * access (dump hands in the frame through struct typed_src), so the
 * rendering is unit-tested on made-up frames.  Values print the way gdb
 * prints them, shortened: structs as {a=1, b=2}, arrays as {1, 2, 3} (the
 * first TYPED_MAX_ELEMS elements, then "..."), char arrays and strings
 * quoted, pointers in hex, enums by name, bools as true/false.  Bytes the
 * frame does not hold print as <unavailable>, as in gdb's tfind.
 * Targets are little-endian (x86-64, aarch64, arm).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/typed.h"
#include "protocol/ax.h"
#include "protocol/rsp.h"

#define TYPED_MAX_ELEMS 32	/* array elements printed */
#define TYPED_MAX_DEPTH 8	/* nested aggregates printed */
#define TYPED_MAX_BYTES 4096	/* bytes of one value looked at */
#define TYPED_MAX_LINE 400

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);
	if (!p)
		abort();
	return p;
}

static void *xrealloc(void *p, size_t size)
{
	p = realloc(p, size ? size : 1);
	if (!p)
		abort();
	return p;
}

static char *xstrdup(const char *s)
{
	char *r = strdup(s ? s : "");
	if (!r)
		abort();
	return r;
}

/* ---- building ---- */

void typed_probe_init(struct typed_probe *p)
{
	memset(p, 0, sizeof(*p));
	p->pc_reg = -1;
}

void typed_probe_free(struct typed_probe *p)
{
	for (size_t i = 0; i < p->ntypes; i++) {
		struct ty *t = &p->types[i];
		free(t->name);
		for (size_t k = 0; k < t->nmembers; k++)
			free(t->members[k].name);
		free(t->members);
		for (size_t k = 0; k < t->nenums; k++)
			free(t->enums[k].name);
		free(t->enums);
	}
	free(p->types);
	for (size_t i = 0; i < p->nvals; i++) {
		free(p->vals[i].name);
		free(p->vals[i].code);
	}
	free(p->vals);
	typed_probe_init(p);
}

int typed_add_type(struct typed_probe *p, enum ty_kind kind, const char *name,
		   uint64_t size, int target, uint64_t count, bool is_signed)
{
	p->types = xrealloc(p->types, (p->ntypes + 1) * sizeof(*p->types));
	struct ty *t = &p->types[p->ntypes];
	memset(t, 0, sizeof(*t));
	t->kind = kind;
	t->name = xstrdup(name);
	t->size = size;
	t->target = target;
	t->count = count;
	t->is_signed = is_signed;
	return (int)p->ntypes++;
}

void typed_add_member(struct typed_probe *p, int type, const char *name,
		      uint64_t offset, int mtype, unsigned int bit_offset,
		      unsigned int bit_size)
{
	struct ty *t = &p->types[type];

	t->members = xrealloc(t->members, (t->nmembers + 1) * sizeof(*t->members));
	t->members[t->nmembers++] = (struct ty_member){
		.name = xstrdup(name), .offset = offset, .type = mtype,
		.bit_offset = bit_offset, .bit_size = bit_size,
	};
}

void typed_add_enum(struct typed_probe *p, int type, int64_t value,
		    const char *name)
{
	struct ty *t = &p->types[type];

	t->enums = xrealloc(t->enums, (t->nenums + 1) * sizeof(*t->enums));
	t->enums[t->nenums++] = (struct ty_enumerator){ value, xstrdup(name) };
}

struct tv *typed_add_value(struct typed_probe *p, const char *name, int type,
			   enum tv_place place, unsigned int reg,
			   const uint8_t *code, size_t code_len,
			   unsigned int flags)
{
	p->vals = xrealloc(p->vals, (p->nvals + 1) * sizeof(*p->vals));
	struct tv *v = &p->vals[p->nvals++];
	memset(v, 0, sizeof(*v));
	v->name = xstrdup(name);
	v->type = type;
	v->place = place;
	v->reg = place == TV_REG ? reg : 0;
	v->flags = flags;
	if (code && code_len) {
		v->code = xcalloc(code_len, 1);
		memcpy(v->code, code, code_len);
		v->code_len = code_len;
	}
	return v;
}

/* "%.*s" of a name, cut to fit a line. */
#define NAME_MAX_LEN 200

int typed_write(const struct typed_probe *p,
		int (*line)(void *ctx, const char *text), void *ctx)
{
	char buf[TYPED_MAX_LINE + 64];
	int e;

#define OUT(...) do { snprintf(buf, sizeof(buf), __VA_ARGS__); \
		      if ((e = line(ctx, buf)) < 0) return e; } while (0)
	if (p->pc_reg >= 0)
		OUT("#pt pc %d", p->pc_reg);
	if (p->hide_regs)
		OUT("#pt h R");
	if (p->hide_mem)
		OUT("#pt h M");
	for (size_t i = 0; i < p->ntypes; i++) {
		const struct ty *t = &p->types[i];
		OUT("#pt t %zu %c %" PRIu64 " %d %" PRIu64 " %d %.*s", i,
		    (char)t->kind, t->size, t->target, t->count, t->is_signed,
		    NAME_MAX_LEN, t->name);
		for (size_t k = 0; k < t->nmembers; k++) {
			const struct ty_member *m = &t->members[k];
			OUT("#pt m %zu %" PRIu64 " %d %u %u %.*s", i, m->offset,
			    m->type, m->bit_offset, m->bit_size, NAME_MAX_LEN,
			    m->name);
		}
		for (size_t k = 0; k < t->nenums; k++)
			OUT("#pt k %zu %" PRId64 " %.*s", i, t->enums[k].value,
			    NAME_MAX_LEN, t->enums[k].name);
	}
	for (size_t i = 0; i < p->nvals; i++) {
		const struct tv *v = &p->vals[i];
		char code[2 * 80 + 1] = "-", flags[4];
		size_t nf = 0;

		if (v->code_len > 80)
			return -E2BIG;
		for (size_t k = 0; k < v->code_len; k++)
			snprintf(code + 2 * k, 3, "%02x", v->code[k]);
		if (v->flags & TV_DEREF)
			flags[nf++] = 'd';
		if (v->flags & TV_STRING)
			flags[nf++] = 's';
		if (v->flags & TV_RETURN)
			flags[nf++] = 'r';
		if (!nf)
			flags[nf++] = '-';
		flags[nf] = '\0';
		OUT("#pt v %d %c %u %s %s %.*s", v->type, (char)v->place, v->reg,
		    code, flags, NAME_MAX_LEN, v->name);
	}
#undef OUT
	return 0;
}

/* ---- reading ---- */

void typed_file_free(struct typed_file *f)
{
	for (size_t i = 0; i < f->nprobes; i++)
		typed_probe_free(&f->probes[i]);
	free(f->probes);
	memset(f, 0, sizeof(*f));
}

static struct typed_probe *location(struct typed_file *f, long tpnum,
				    uint64_t addr)
{
	for (size_t i = 0; i < f->nprobes; i++)
		if (f->probes[i].tpnum == tpnum && f->probes[i].addr == addr)
			return &f->probes[i];
	f->probes = xrealloc(f->probes, (f->nprobes + 1) * sizeof(*f->probes));
	struct typed_probe *p = &f->probes[f->nprobes++];
	typed_probe_init(p);
	p->tpnum = tpnum;
	p->addr = addr;
	return p;
}

/* The rest of the line after n space-separated fields, or NULL. */
static const char *after_fields(const char *s, int n)
{
	while (n-- > 0) {
		s = strchr(s, ' ');
		if (!s)
			return NULL;
		s++;
	}
	return s;
}

static bool valid_type(const struct typed_probe *p, int t, bool none_ok)
{
	return (none_ok && t == -1) || (t >= 0 && (size_t)t < p->ntypes);
}

static int parse_line(struct typed_probe *p, const char *s)
{
	const char *name;
	int n = 0;

	if (sscanf(s, "pc %d%n", &p->pc_reg, &n) == 1 && !s[n])
		return 0;
	if (strcmp(s, "h R") == 0) {
		p->hide_regs = true;
		return 0;
	}
	if (strcmp(s, "h M") == 0) {
		p->hide_mem = true;
		return 0;
	}
	switch (s[0]) {
	case 't': {
		size_t idx;
		char kind;
		uint64_t size, count;
		int target, sign;
		if (sscanf(s, "t %zu %c %" SCNu64 " %d %" SCNu64 " %d", &idx, &kind,
			   &size, &target, &count, &sign) != 6 ||
		    idx != p->ntypes || !strchr("icbfpsuaeo", kind) ||
		    !(name = after_fields(s, 7)))
			return -EINVAL;
		/* a target may come later in the table (a forward index) */
		if (target < -1 || target > 100000)
			return -EINVAL;
		typed_add_type(p, (enum ty_kind)kind, name, size, target, count,
			       sign != 0);
		return 0;
	}
	case 'm': {
		size_t idx;
		uint64_t off;
		int type;
		unsigned bo, bs;
		if (sscanf(s, "m %zu %" SCNu64 " %d %u %u", &idx, &off, &type,
			   &bo, &bs) != 5 || !valid_type(p, (int)idx, false) ||
		    type < 0 || !(name = after_fields(s, 6)) || bs > 64)
			return -EINVAL;
		typed_add_member(p, (int)idx, name, off, type, bo, bs);
		return 0;
	}
	case 'k': {
		size_t idx;
		int64_t value;
		if (sscanf(s, "k %zu %" SCNd64, &idx, &value) != 2 ||
		    !valid_type(p, (int)idx, false) || !(name = after_fields(s, 3)))
			return -EINVAL;
		typed_add_enum(p, (int)idx, value, name);
		return 0;
	}
	case 'v': {
		int type;
		char place;
		unsigned reg;
		char code[200], flags[8];
		uint8_t bytes[100];
		size_t len = 0;
		unsigned fl = 0;
		if (sscanf(s, "v %d %c %u %199s %7s", &type, &place, &reg, code,
			   flags) != 5 || type < 0 || !strchr("mrxn", place) ||
		    !(name = after_fields(s, 6)))
			return -EINVAL;
		if (strcmp(code, "-") != 0) {
			ssize_t got = rsp_hex_decode(code, strlen(code), bytes,
						     sizeof(bytes));
			if (got <= 0 || (size_t)got * 2 != strlen(code))
				return -EINVAL;
			len = (size_t)got;
		}
		if ((place == 'm' || place == 'x') && !len)
			return -EINVAL;
		fl |= strchr(flags, 'd') ? TV_DEREF : 0;
		fl |= strchr(flags, 's') ? TV_STRING : 0;
		fl |= strchr(flags, 'r') ? TV_RETURN : 0;
		typed_add_value(p, name, type, (enum tv_place)place, reg, bytes,
				len, fl);
		return 0;
	}
	default:
		return -EINVAL;
	}
}

/* Every type index a description uses names a type of it. */
static bool consistent(const struct typed_probe *p)
{
	for (size_t i = 0; i < p->ntypes; i++) {
		const struct ty *t = &p->types[i];
		if (!valid_type(p, t->target, true))
			return false;
		for (size_t k = 0; k < t->nmembers; k++)
			if (!valid_type(p, t->members[k].type, false))
				return false;
	}
	for (size_t i = 0; i < p->nvals; i++)
		if (!valid_type(p, p->vals[i].type, false))
			return false;
	return true;
}

int typed_file_add_line(struct typed_file *f, long tpnum, uint64_t addr,
			const char *text)
{
	if (strncmp(text, "#pt ", 4) != 0)
		return 0;
	struct typed_probe *p = location(f, tpnum, addr);
	if (p->tpnum < 0)
		return -EINVAL;		/* dropped already */
	if (parse_line(p, text + 4) < 0) {
		typed_probe_free(p);
		p->tpnum = -1;
		return -EINVAL;
	}
	return 0;
}

void typed_file_finish(struct typed_file *f)
{
	for (size_t i = 0; i < f->nprobes; i++)
		if (f->probes[i].tpnum >= 0 && !consistent(&f->probes[i])) {
			typed_probe_free(&f->probes[i]);
			f->probes[i].tpnum = -1;
		}
	f->finished = true;
}

const struct typed_probe *typed_file_find(const struct typed_file *f,
					  long tpnum, uint64_t pc)
{
	const struct typed_probe *first = NULL;

	if (!f->finished)
		return NULL;
	for (size_t i = 0; i < f->nprobes; i++) {
		const struct typed_probe *p = &f->probes[i];
		if (p->tpnum != tpnum || !p->nvals)
			continue;
		if (p->addr == pc)
			return p;
		if (!first)
			first = p;
	}
	return first;
}

/* ---- evaluating a place on a frame ---- */

static int eval_read_reg(const struct ax_ctx *ctx, unsigned regnum,
			 uint64_t *value)
{
	const struct typed_src *src = ctx->opaque;
	size_t size = 0;
	const uint8_t *b = src->reg ? src->reg(src->ctx, regnum, &size) : NULL;

	if (!b || size == 0 || size > 8)
		return -EINVAL;
	*value = 0;
	for (size_t i = size; i-- > 0;)
		*value = (*value << 8) | b[i];
	return 0;
}

static long eval_read_mem(const struct ax_ctx *ctx, uint64_t addr, void *buf,
			  size_t len)
{
	const struct typed_src *src = ctx->opaque;
	size_t n = src->mem ? src->mem(src->ctx, addr, buf, len) : 0;

	return n ? (long)n : -EFAULT;
}

static int eval_tsv_get(const struct ax_ctx *ctx, unsigned num, int64_t *value)
{
	const struct typed_src *src = ctx->opaque;

	return src->tsv ? src->tsv(src->ctx, num, value) : -ENOENT;
}

static int eval(const struct tv *v, const struct typed_src *src, uint64_t *out)
{
	struct ax_ctx ctx = {
		.read_reg = eval_read_reg, .read_mem = eval_read_mem,
		.tsv_get = eval_tsv_get, .opaque = (void *)src,
	};
	struct ax_result res;
	uint8_t code[256];

	/* the description holds the expression without its `end` */
	if (v->code_len + 1 > sizeof(code))
		return -E2BIG;
	memcpy(code, v->code, v->code_len);
	code[v->code_len] = AX_OP_END;
	if (ax_eval(code, v->code_len + 1, &ctx, &res) < 0 || !res.has_value)
		return -EFAULT;
	*out = res.value;
	return 0;
}

/* ---- printing ---- */

struct printer {
	const struct typed_probe *p;
	const struct typed_src *src;
	struct rsp_buf *out;
	bool json;
};

static uint64_t le(const uint8_t *b, size_t n)
{
	uint64_t v = 0;

	for (size_t i = n > 8 ? 8 : n; i-- > 0;)
		v = (v << 8) | b[i];
	return v;
}

static int64_t sign_extend(uint64_t v, size_t bytes)
{
	if (bytes >= 8)
		return (int64_t)v;
	unsigned bits = (unsigned)bytes * 8;
	uint64_t m = 1ull << (bits - 1);
	v &= (1ull << bits) - 1;
	return (int64_t)((v ^ m) - m);
}

static void put_char_escaped(struct rsp_buf *o, unsigned char c, char quote,
			     bool json)
{
	if (c == (unsigned char)quote || c == '\\')
		rsp_buf_printf(o, "\\%c", c);
	else if (c == '\n')
		rsp_buf_puts(o, "\\n");
	else if (c == '\t')
		rsp_buf_puts(o, "\\t");
	else if (c < 0x20 || c == 0x7f || (json && c >= 0x80))
		rsp_buf_printf(o, json ? "\\u%04x" : "\\%03o", c);
	else
		rsp_buf_putc(o, (char)c);
}

/* Bytes up to the first NUL (or n), quoted; "..." when no NUL came. */
static void put_string(struct printer *pr, const uint8_t *b, size_t n,
		       bool complete)
{
	size_t len = 0;

	while (len < n && b[len])
		len++;
	rsp_buf_putc(pr->out, '"');
	for (size_t i = 0; i < len; i++)
		put_char_escaped(pr->out, b[i], '"', pr->json);
	rsp_buf_putc(pr->out, '"');
	if (len == n && !complete && !pr->json)
		rsp_buf_puts(pr->out, "...");
}

static void put_unavailable(struct printer *pr)
{
	rsp_buf_puts(pr->out, pr->json ? "null" : "<unavailable>");
}

static const struct ty *type_of(const struct printer *pr, int idx)
{
	return idx >= 0 && (size_t)idx < pr->p->ntypes ? &pr->p->types[idx] : NULL;
}

static void put_json_key(struct printer *pr, const char *s)
{
	rsp_buf_putc(pr->out, '"');
	for (; *s; s++)
		put_char_escaped(pr->out, (unsigned char)*s, '"', true);
	rsp_buf_puts(pr->out, "\":");
}

static void put_object(struct printer *pr, const struct ty *t,
		       const uint8_t *b, size_t avail, int depth);

static void put_float(struct printer *pr, const struct ty *t, const uint8_t *b)
{
	struct rsp_buf *o = pr->out;
	double d;

	if (t->size == 4) {
		float f;
		memcpy(&f, b, 4);
		d = f;
	} else if (t->size == 8) {
		memcpy(&d, b, 8);
	} else {
		rsp_buf_puts(o, pr->json ? "null" : "<long double>");
		return;
	}
	if (!isfinite(d))
		rsp_buf_printf(o, pr->json ? "\"%g\"" : "%g", d);
	else
		rsp_buf_printf(o, t->size == 4 ? "%.9g" : "%.17g", d);
}

/* An enum by its enumerator's name, or its number when none has it. */
static void put_enum(struct printer *pr, const struct ty *t, const uint8_t *b)
{
	struct rsp_buf *o = pr->out;
	uint64_t v = le(b, t->size);
	int64_t sv = t->is_signed ? sign_extend(v, t->size) : (int64_t)v;
	const char *name = NULL;

	for (size_t k = 0; k < t->nenums; k++)
		if (t->enums[k].value == sv)
			name = t->enums[k].name;
	if (name && pr->json)
		rsp_buf_printf(o, "\"%s\"", name);
	else if (name)
		rsp_buf_puts(o, name);
	else
		rsp_buf_printf(o, "%" PRId64, sv);
}

/* A bit-field: its bits from the member's offset, sign-extended for a
 * signed type, printed as an object of the member's type. */
static void put_bitfield(struct printer *pr, const struct ty_member *m,
			 const struct ty *mt, const uint8_t *b, size_t avail,
			 int depth)
{
	uint64_t first = m->offset + m->bit_offset / 8;
	unsigned shift = m->bit_offset % 8;
	size_t need = (shift + m->bit_size + 7) / 8;

	if (first + need > avail || need > 9) {
		put_unavailable(pr);
		return;
	}
	uint8_t w[16] = { 0 };
	memcpy(w, b + first, need);
	unsigned __int128 x = 0;
	for (size_t i = need; i-- > 0;)
		x = (x << 8) | w[i];
	uint64_t bits = (uint64_t)(x >> shift);
	if (m->bit_size < 64)
		bits &= (1ull << m->bit_size) - 1;
	if (mt->is_signed && m->bit_size < 64 &&
	    (bits >> (m->bit_size - 1)) & 1)
		bits |= ~0ull << m->bit_size;
	uint8_t tmp[8];
	for (int i = 0; i < 8; i++)
		tmp[i] = (uint8_t)(bits >> (8 * i));
	put_object(pr, mt, tmp, mt->size <= 8 ? mt->size : 0, depth + 1);
}

/* {a=1, b=2} or {"a":1,"b":2}. */
static void put_struct(struct printer *pr, const struct ty *t,
		       const uint8_t *b, size_t avail, int depth)
{
	struct rsp_buf *o = pr->out;

	if (depth >= TYPED_MAX_DEPTH) {
		rsp_buf_puts(o, pr->json ? "null" : "{...}");
		return;
	}
	rsp_buf_putc(o, '{');
	for (size_t k = 0; k < t->nmembers; k++) {
		const struct ty_member *m = &t->members[k];
		const struct ty *mt = type_of(pr, m->type);
		if (k)
			rsp_buf_puts(o, pr->json ? "," : ", ");
		if (pr->json)
			put_json_key(pr, m->name);
		else
			rsp_buf_printf(o, "%s=", m->name);
		if (m->bit_size && mt)
			put_bitfield(pr, m, mt, b, avail, depth);
		else if (m->offset >= avail)
			put_unavailable(pr);
		else
			put_object(pr, mt, b + m->offset,
				   (size_t)(avail - m->offset), depth + 1);
	}
	rsp_buf_putc(o, '}');
}

/* A char array as a string; any other array element by element, up to
 * TYPED_MAX_ELEMS. */
static void put_array(struct printer *pr, const struct ty *t,
		      const uint8_t *b, size_t avail, int depth)
{
	struct rsp_buf *o = pr->out;
	const struct ty *et = type_of(pr, t->target);

	if (!et || et->size == 0) {
		rsp_buf_puts(o, pr->json ? "null" : "{...}");
		return;
	}
	if (et->kind == TY_CHAR && et->size == 1) {
		size_t n = t->count < avail ? t->count : avail;
		if (!n && t->count)
			put_unavailable(pr);
		else
			put_string(pr, b, n, n == t->count);
		return;
	}
	rsp_buf_putc(o, pr->json ? '[' : '{');
	for (uint64_t i = 0; i < t->count; i++) {
		if (i)
			rsp_buf_puts(o, pr->json ? "," : ", ");
		if (i == TYPED_MAX_ELEMS) {
			rsp_buf_puts(o, pr->json ? "null" : "...");
			break;
		}
		uint64_t off = i * et->size;
		if (off >= avail)
			put_unavailable(pr);
		else
			put_object(pr, et, b + off, (size_t)(avail - off),
				   depth + 1);
	}
	rsp_buf_putc(o, pr->json ? ']' : '}');
}

/*
 * One object of type t whose bytes are b[0, avail): avail < t->size
 * means the frame holds only the first avail bytes.
 */
static void put_object(struct printer *pr, const struct ty *t,
		       const uint8_t *b, size_t avail, int depth)
{
	struct rsp_buf *o = pr->out;
	uint64_t v;

	if (!t) {
		put_unavailable(pr);
		return;
	}
	if (depth > TYPED_MAX_DEPTH) {
		/* arrays of arrays of structs..., or a table that loops */
		rsp_buf_puts(o, pr->json ? "null" : "{...}");
		return;
	}
	bool scalar = t->kind != TY_STRUCT && t->kind != TY_UNION &&
		      t->kind != TY_ARRAY && t->kind != TY_OPAQUE;
	if (scalar && (t->size == 0 || t->size > 16 || avail < t->size)) {
		put_unavailable(pr);
		return;
	}
	switch (t->kind) {
	case TY_INT:
	case TY_CHAR:
		v = le(b, t->size);
		if (t->is_signed)
			rsp_buf_printf(o, "%" PRId64, sign_extend(v, t->size));
		else
			rsp_buf_printf(o, "%" PRIu64, v);
		if (t->kind == TY_CHAR && t->size == 1 && !pr->json) {
			rsp_buf_puts(o, " '");
			put_char_escaped(o, (unsigned char)v, '\'', false);
			rsp_buf_putc(o, '\'');
		}
		break;
	case TY_BOOL:
		rsp_buf_puts(o, le(b, t->size) ? "true" : "false");
		break;
	case TY_FLOAT:
		put_float(pr, t, b);
		break;
	case TY_PTR:
		rsp_buf_printf(o, pr->json ? "\"0x%" PRIx64 "\"" : "0x%" PRIx64,
			       le(b, t->size));
		break;
	case TY_ENUM:
		put_enum(pr, t, b);
		break;
	case TY_STRUCT:
	case TY_UNION:
		put_struct(pr, t, b, avail, depth);
		break;
	case TY_ARRAY:
		put_array(pr, t, b, avail, depth);
		break;
	case TY_OPAQUE:
	default:
		if (pr->json)
			rsp_buf_puts(o, "null");
		else
			rsp_buf_printf(o, "<%s>", t->name);
		break;
	}
}

/* The value's bytes into buf (TYPED_MAX_BYTES); returns how many the
 * frame holds, or -1 when the value was optimized out. */
static long value_bytes(const struct printer *pr, const struct tv *v,
			const struct ty *t, uint8_t *buf)
{
	size_t size = t->size < TYPED_MAX_BYTES ? (size_t)t->size : TYPED_MAX_BYTES;
	uint64_t x;

	switch (v->place) {
	case TV_MEM:
		if (eval(v, pr->src, &x) < 0)
			return 0;
		return pr->src->mem ? (long)pr->src->mem(pr->src->ctx, x, buf, size) : 0;
	case TV_REG: {
		size_t n = 0;
		const uint8_t *r = pr->src->reg ? pr->src->reg(pr->src->ctx, v->reg, &n)
						: NULL;
		if (!r)
			return 0;
		n = n < size ? n : size;
		memcpy(buf, r, n);
		return (long)n;
	}
	case TV_VALUE:
		if (eval(v, pr->src, &x) < 0)
			return 0;
		for (size_t i = 0; i < 8; i++)
			buf[i] = (uint8_t)(x >> (8 * i));
		return (long)(size < 8 ? size : 8);
	case TV_NONE:
	default:
		return -1;
	}
}

/* The value, then what its pointer points to when that was collected:
 * text "0x... {...}" / "0x... \"str\"", JSON a second key "*NAME". */
static void put_value(struct printer *pr, const struct tv *v)
{
	static uint8_t buf[TYPED_MAX_BYTES], pointee[TYPED_MAX_BYTES];
	const struct ty *t = type_of(pr, v->type);
	long n = t ? value_bytes(pr, v, t, buf) : 0;

	if (pr->json)
		put_json_key(pr, v->name);
	if (!t) {
		put_unavailable(pr);
		return;
	}
	if (n < 0) {
		rsp_buf_puts(pr->out, pr->json ? "null" : "<optimized out>");
		return;
	}
	put_object(pr, t, buf, (size_t)n, 0);
	if (t->kind != TY_PTR || !(v->flags & (TV_DEREF | TV_STRING)) ||
	    (size_t)n < t->size)
		return;
	uint64_t addr = le(buf, t->size);
	const struct ty *pt = type_of(pr, t->target);
	size_t want = v->flags & TV_STRING ? TYPED_MAX_BYTES :
		      pt && pt->size < TYPED_MAX_BYTES ? (size_t)pt->size : 0;
	size_t got = addr && pr->src->mem ?
		     pr->src->mem(pr->src->ctx, addr, pointee, want) : 0;
	if (!addr || !got)
		return;
	if (pr->json) {
		rsp_buf_puts(pr->out, ",");
		rsp_buf_putc(pr->out, '"');
		rsp_buf_putc(pr->out, '*');
		for (const char *s = v->name; *s; s++)
			put_char_escaped(pr->out, (unsigned char)*s, '"', true);
		rsp_buf_puts(pr->out, "\":");
	} else {
		rsp_buf_putc(pr->out, ' ');
	}
	if (v->flags & TV_STRING)
		put_string(pr, pointee, got, memchr(pointee, 0, got) != NULL);
	else
		put_object(pr, pt, pointee, got, 0);
}

void typed_render_text(const struct typed_probe *p, const struct typed_src *src,
		       struct rsp_buf *out)
{
	struct printer pr = { p, src, out, false };
	bool open = false;

	for (size_t i = 0; i < p->nvals; i++) {
		const struct tv *v = &p->vals[i];
		if (v->flags & TV_RETURN) {
			rsp_buf_puts(out, open ? ") = " : " = ");
			if (open)
				open = false;
			put_value(&pr, v);
			continue;
		}
		rsp_buf_puts(out, open ? ", " : "(");
		open = true;
		rsp_buf_printf(out, "%s=", v->name);
		put_value(&pr, v);
	}
	if (open)
		rsp_buf_putc(out, ')');
}

void typed_render_json(const struct typed_probe *p, const struct typed_src *src,
		       struct rsp_buf *out)
{
	struct printer pr = { p, src, out, true };

	rsp_buf_puts(out, "\"typed\":{");
	for (size_t i = 0; i < p->nvals; i++) {
		if (i)
			rsp_buf_putc(out, ',');
		put_value(&pr, &p->vals[i]);
	}
	rsp_buf_puts(out, "},\"types\":{");
	for (size_t i = 0; i < p->nvals; i++) {
		const struct ty *t = type_of(&pr, p->vals[i].type);
		if (i)
			rsp_buf_putc(out, ',');
		put_json_key(&pr, p->vals[i].name);
		rsp_buf_putc(out, '"');
		for (const char *s = t ? t->name : "?"; *s; s++)
			put_char_escaped(out, (unsigned char)*s, '"', true);
		rsp_buf_putc(out, '"');
	}
	rsp_buf_putc(out, '}');
}
