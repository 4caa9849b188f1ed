/*
 * dwarfval.c - typed values from DWARF, compiled to agent expressions
 * (dwarfval.h).
 *
 * A value is found as gdb finds it: the scopes around the pc
 * (dwarf_getscopes), the variable by name, its location expression for
 * that pc (dwarf_getlocation_addr: location lists give the entry valid
 * there), and the frame base and CFA from the unit's frame base and the
 * call frame information.  The location expression is translated op by
 * op into an agent expression computing the value's address (or, with
 * DW_OP_stack_value, the value); a register location stays a register
 * number, read from the frame's register block.  What cannot be
 * translated (DW_OP_entry_value, pieces) is "optimized out", as far as
 * the probe is concerned.
 *
 * Every memory byte an address expression reads (a pointer followed by
 * `->`) is collected before the value itself, so that dump can run the
 * same expression on the frame and find the value's bytes there.
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

int fail(char *err, size_t errsize, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errsize, fmt, ap);
	va_end(ap);
	return code;
}

/* ---- the module ---- */

int dv_open(struct dv_module **out, const char *path, char *err,
	    size_t errsize)
{
	static const Dwfl_Callbacks cb = {
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = NULL,
	};
	Dwfl_Callbacks *cbs;
	struct dv_module *m = calloc(1, sizeof(*m) + sizeof(*cbs));
	Dwarf_Addr mainbias = 0;
	const char *debug = NULL;

	if (!m)
		abort();
	/* The callbacks live as long as the Dwfl: with the module. */
	cbs = (Dwfl_Callbacks *)(m + 1);
	*cbs = cb;
	cbs->debuginfo_path = elfsym_debuginfo_path();
	m->dwfl = dwfl_begin(cbs);
	if (!m->dwfl)
		goto none;
	m->mod = dwfl_report_offline(m->dwfl, "", path, -1);
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (!m->mod || !dwfl_module_getelf(m->mod, &mainbias))
		goto none;
	elfsym_debuginfod_watch(m->dwfl, path);
	m->dw = dwfl_module_getdwarf(m->mod, &m->dwbias);
	elfsym_debuginfod_unwatch();
	if (!m->dw)
		goto none;
	m->link_to_dw = mainbias - m->dwbias;
	m->cfi = dwfl_module_eh_cfi(m->mod, &m->cfi_bias);
	if (m->cfi)
		m->cfi_bias -= mainbias;	/* CFI address = link + this */
	else if ((m->cfi = dwfl_module_dwarf_cfi(m->mod, &m->cfi_bias)))
		m->cfi_bias -= mainbias;
	dwfl_module_info(m->mod, NULL, NULL, NULL, NULL, NULL, NULL, &debug);
	m->path = strdup(debug ? debug : path);
	*out = m;
	return 0;
none:
	dv_close(m);
	return fail(err, errsize, -ENODATA, "%s has no DWARF debug information, "
		    "and no debug file of it was found (build with -g, or install "
		    "its debug symbols: Debian's -dbg or -dbgsym package, or name "
		    "a debuginfod server that has it in DEBUGINFOD_URLS)", path);
}

void dv_close(struct dv_module *m)
{
	if (!m)
		return;
	if (m->dwfl)
		dwfl_end(m->dwfl);
	free(m->path);
	free(m);
}

const char *dv_path(const struct dv_module *m)
{
	return m->path;
}

void dv_collect_free(struct dv_collect *c)
{
	for (size_t i = 0; i < c->n; i++)
		ax_emit_free(&c->code[i]);
	free(c->code);
	memset(c, 0, sizeof(*c));
}

/* ---- values ---- */

static struct ax_emit *new_collect(struct dv_collect *c)
{
	c->code = realloc(c->code, (c->n + 1) * sizeof(*c->code));
	if (!c->code)
		abort();
	ax_emit_init(&c->code[c->n]);
	return &c->code[c->n++];
}

/* Collects [address the place's code pushes, + len). */
static void collect_mem(struct dv_collect *c, const struct place *pl,
			uint64_t len)
{
	struct ax_emit *e = new_collect(c);

	append_code(e, &pl->code);
	ax_emit_const(e, (int64_t)(len < DV_MAX_COLLECT ? len : DV_MAX_COLLECT));
	ax_emit_op(e, AX_OP_TRACE);
	ax_emit_op(e, AX_OP_END);
}

/* Replaces the place's code by code pushing the value it holds (8 bytes
 * at most: a pointer).  Memory read here is collected. */
static int load_value(struct place *pl, uint64_t size, struct dv_collect *c,
		      char *err, size_t errsize)
{
	switch (pl->kind) {
	case TV_MEM:
		collect_mem(c, pl, size);
		ax_emit_load(&pl->code, (unsigned)size, 0);
		break;
	case TV_REG:
		ax_emit_reg(&pl->code, pl->reg);
		c->regs = true;
		break;
	case TV_VALUE:
		break;
	default:
		return fail(err, errsize, -ENODATA, "%s", pl->why);
	}
	pl->kind = TV_VALUE;
	return 0;
}

struct lookup {
	struct dv_module *m;
	const struct dv_target *t;
	Dwarf_Addr pc;		/* DWARF address */
	Dwarf_Die *scopes;
	int nscopes, fn, outer;
};

static int lookup_begin(struct lookup *lk, struct dv_module *m, uint64_t pc,
			const struct dv_target *t, char *err, size_t errsize)
{
	memset(lk, 0, sizeof(*lk));
	lk->m = m;
	lk->t = t;
	lk->pc = pc + m->link_to_dw;
	lk->nscopes = scopes_at(m, lk->pc, &lk->scopes, &lk->fn, &lk->outer);
	if (lk->nscopes < 0)
		return fail(err, errsize, -ENOENT, "DWARF of %s describes no "
			    "function at 0x%" PRIx64, m->path, pc);
	return 0;
}

/* The place of variable `var` at the pc. */
static int var_place(struct lookup *lk, Dwarf_Die *var, struct place *pl,
		     char *err, size_t errsize)
{
	Dwarf_Attribute a;
	Dwarf_Op *ops;
	size_t nops;
	struct loc_ctx lc = { lk->m, lk->t, lk->pc, &lk->scopes[lk->outer], 0 };

	ax_emit_init(&pl->code);
	if (!dwarf_attr(var, DW_AT_location, &a)) {
		pl->kind = TV_NONE;
		pl->why = "optimized out";
		return 0;
	}
	int r = dwarf_getlocation_addr(&a, lk->pc, &ops, &nops, 1);
	if (r < 0)
		return fail(err, errsize, -EINVAL, "%s: bad location: %s",
			    die_name(var) ? die_name(var) : "?", dwarf_errmsg(-1));
	if (r == 0) {
		pl->kind = TV_NONE;
		pl->why = "optimized out";
		return 0;
	}
	return compile_ops(&lc, ops, nops, pl, err, errsize);
}

/* Variable `name` around the pc: innermost scope first. */
static bool find_var(struct lookup *lk, const char *name, size_t len,
		     Dwarf_Die *out)
{
	for (int i = 0; i < lk->nscopes; i++) {
		Dwarf_Die child;
		if (dwarf_child(&lk->scopes[i], &child) != 0)
			continue;
		do {
			int tag = dwarf_tag(&child);
			const char *n;
			if (tag != DW_TAG_formal_parameter && tag != DW_TAG_variable)
				continue;
			n = die_name(&child);
			if (n && strlen(n) == len && memcmp(n, name, len) == 0) {
				*out = child;
				return true;
			}
		} while (dwarf_siblingof(&child, &child) == 0);
		/* On through an inlined copy to the function it is inlined
		 * into: a probe on FUNC may land in code inlined at its very
		 * start, and FUNC's names are what the user means. */
	}
	return false;
}

/*
 * Records value `name` of type `type` at place `pl`: its bytes, and for
 * a pointer at the top level what it points to (a struct or scalar) or
 * the string (char *).
 */
static int add_value(struct lookup *lk, const char *name, Dwarf_Die *type,
		     struct place *pl, unsigned extra_flags,
		     struct typed_probe *p, struct dv_collect *c, char *err,
		     size_t errsize)
{
	struct tbuild *b = calloc(1, sizeof(*b));
	unsigned flags = extra_flags;
	int r = 0;

	if (!b)
		abort();
	b->p = p;
	int ti = add_type(b, type, true, 0);
	const struct ty *t = &p->types[ti];
	uint64_t size = t->size;

	switch (pl->kind) {
	case TV_MEM:
		if (size)
			collect_mem(c, pl, size);
		c->regs = true;	/* its address is computed from them */
		break;
	case TV_REG:
		c->regs = true;
		break;
	case TV_VALUE:
		if (!pl->tsv_only)
			c->regs = true;
		break;
	default:
		break;
	}
	if (t->kind == TY_PTR && t->target >= 0 && pl->kind != TV_NONE) {
		const struct ty *pt = &p->types[t->target];
		struct place ptr = { .kind = pl->kind, .reg = pl->reg };
		ax_emit_init(&ptr.code);
		append_code(&ptr.code, &pl->code);
		if (pl->kind == TV_MEM)
			ax_emit_load(&ptr.code, 8, 0);
		else if (pl->kind == TV_REG)
			ax_emit_reg(&ptr.code, pl->reg);
		if (pt->kind == TY_CHAR && pt->size == 1) {
			struct ax_emit *e = new_collect(c);
			append_code(e, &ptr.code);
			ax_emit_const(e, lk->t->string_max ? lk->t->string_max : 64);
			ax_emit_op(e, AX_OP_TRACENZ);
			ax_emit_op(e, AX_OP_END);
			flags |= TV_STRING;
		} else if (pt->kind != TY_OPAQUE && pt->size) {
			ptr.kind = TV_MEM;
			collect_mem(c, &ptr, pt->size);
			flags |= TV_DEREF;
		}
		ax_emit_free(&ptr.code);
	}
	if (pl->code.error)
		r = fail(err, errsize, -ENOMEM, "%s: cannot compile its location", name);
	else
		typed_add_value(p, name, ti, pl->kind, pl->reg, pl->code.code,
				pl->code.len, flags);
	free(b);
	return r;
}

int dv_add_args(struct dv_module *m, uint64_t pc, const struct dv_target *t,
		struct typed_probe *p, struct dv_collect *c, char *err,
		size_t errsize)
{
	struct lookup lk;
	Dwarf_Die child;
	int r = lookup_begin(&lk, m, pc, t, err, errsize);

	if (r < 0)
		return r;
	/* the parameters of the function whose frame it is: an inlined
	 * copy at the very pc is part of its body */
	if (dwarf_child(&lk.scopes[lk.outer], &child) == 0) {
		do {
			Dwarf_Die type;
			struct place pl;
			const char *name;
			if (dwarf_tag(&child) != DW_TAG_formal_parameter)
				continue;
			name = die_name(&child);
			if (!die_type(&child, &type))
				continue;
			if ((r = var_place(&lk, &child, &pl, err, errsize)) < 0)
				break;
			r = add_value(&lk, name ? name : "?", &type, &pl, 0, p, c,
				      err, errsize);
			ax_emit_free(&pl.code);
			if (r < 0)
				break;
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	free(lk.scopes);
	return r;
}

/* Skips cv-qualifiers and typedefs. */
static bool peel(Dwarf_Die *t, Dwarf_Die *out)
{
	return dwarf_peel_type(t, out) == 0;
}

static bool find_member(Dwarf_Die *st, const char *name, size_t len,
			Dwarf_Die *member, uint64_t *off)
{
	Dwarf_Die child;

	if (dwarf_child(st, &child) != 0)
		return false;
	do {
		const char *n;
		if (dwarf_tag(&child) != DW_TAG_member)
			continue;
		n = die_name(&child);
		if (!n) {
			/* anonymous struct/union: look inside */
			Dwarf_Die mt, inner;
			uint64_t base, sub;
			if (die_type(&child, &mt) && peel(&mt, &mt) &&
			    member_offset(&child, &base) &&
			    find_member(&mt, name, len, &inner, &sub)) {
				*member = inner;
				*off = base + sub;
				return true;
			}
			continue;
		}
		if (strlen(n) == len && memcmp(n, name, len) == 0)
			return member_offset(&child, off) && (*member = child, true);
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

#define NAME_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"

/*
 * A value path being walked (dv_add_path): the value so far, as a place
 * and a type, and the text left.  `text` is what `s` walks (the path
 * without its @N), so a message can quote the path up to `s`.
 */
struct walk {
	const char *path;	/* the whole path, as given */
	const char *text;	/* the path without @N */
	const char *s;		/* the rest of text */
	Dwarf_Die type;
	struct place pl;
	struct dv_collect *c;
	char *err;
	size_t errsize;
};

/* How much of the path is walked, for messages: "'%.*s'". */
#define WALKED(w) (int)((w)->s - (w)->text), (w)->text

/* A C++ reference is its object: follow it first. */
static int walk_reference(struct walk *w, Dwarf_Die *pt)
{
	Dwarf_Die target;
	int r = 0;

	if (!die_type(pt, &target) ||
	    (r = load_value(&w->pl, 8, w->c, w->err, w->errsize)) < 0) {
		if (r == 0)
			r = fail(w->err, w->errsize, -EINVAL, "'%.*s': a "
				 "reference to nothing", WALKED(w));
		return r;
	}
	w->pl.kind = TV_MEM;
	w->type = target;
	return 0;
}

/* .MEMBER or ->MEMBER: the member's address, from the struct's. */
static int walk_member(struct walk *w, Dwarf_Die *pt, int tag)
{
	bool arrow = w->s[0] == '-';
	Dwarf_Die st, member;
	uint64_t off;
	const char *mname = w->s + (arrow ? 2 : 1);
	size_t mlen = strspn(mname, NAME_CHARS);
	int r;

	if (arrow) {
		if (tag != DW_TAG_pointer_type || !die_type(pt, &st) ||
		    !peel(&st, &st))
			return fail(w->err, w->errsize, -EINVAL, "'%.*s' is not a "
				    "pointer to a struct: no '->'", WALKED(w));
		if ((r = load_value(&w->pl, 8, w->c, w->err, w->errsize)) < 0)
			return r;
		w->pl.kind = TV_MEM;
	} else {
		st = *pt;
		if (w->pl.kind != TV_MEM)
			return fail(w->err, w->errsize, -ENOTSUP, "'%.*s' is in a "
				    "register at the probe: its members "
				    "have no address", WALKED(w));
	}
	int stag = dwarf_tag(&st);
	if (stag != DW_TAG_structure_type && stag != DW_TAG_union_type &&
	    stag != DW_TAG_class_type)
		return fail(w->err, w->errsize, -EINVAL, "'%.*s' is not a struct "
			    "or union", WALKED(w));
	if (!mlen || !find_member(&st, mname, mlen, &member, &off)) {
		char sn[256];
		type_name(&st, sn, sizeof(sn), 0);
		return fail(w->err, w->errsize, -ENOENT, "%s has no member '%.*s'",
			    sn, (int)mlen, mname);
	}
	if (dwarf_hasattr(&member, DW_AT_bit_size))
		return fail(w->err, w->errsize, -ENOTSUP, "'%.*s' is a bit-field: "
			    "name its struct instead",
			    (int)(mname + mlen - w->text), w->text);
	ax_emit_const(&w->pl.code, (int64_t)off);
	ax_emit_op(&w->pl.code, AX_OP_ADD);
	die_type(&member, &w->type);
	w->s = mname + mlen;
	return 0;
}

/* [N] of an array (bounds checked) or a pointer: the element's address. */
static int walk_index(struct walk *w, Dwarf_Die *pt, int tag)
{
	char *end;
	unsigned long long idx = strtoull(w->s + 1, &end, 0);
	Dwarf_Die elem;
	int r;

	if (end == w->s + 1 || *end != ']')
		return fail(w->err, w->errsize, -EINVAL, "'%s': expected [NUMBER]",
			    w->path);
	if (tag == DW_TAG_array_type) {
		uint64_t dims[8];
		int nd = array_dims(pt, dims, 8);
		if (nd != 1)
			return fail(w->err, w->errsize, -ENOTSUP, "'%.*s': only "
				    "one-dimensional arrays can be indexed",
				    WALKED(w));
		if (dims[0] && idx >= dims[0])
			return fail(w->err, w->errsize, -ERANGE, "'%.*s' has %" PRIu64
				    " elements: [%llu] is out of bounds",
				    WALKED(w), dims[0], idx);
		if (w->pl.kind != TV_MEM)
			return fail(w->err, w->errsize, -ENOTSUP, "'%.*s' has no "
				    "address at the probe", WALKED(w));
	} else if (tag == DW_TAG_pointer_type) {
		if ((r = load_value(&w->pl, 8, w->c, w->err, w->errsize)) < 0)
			return r;
		w->pl.kind = TV_MEM;
	} else {
		return fail(w->err, w->errsize, -EINVAL, "'%.*s' is neither an "
			    "array nor a pointer", WALKED(w));
	}
	if (!die_type(pt, &elem))
		return fail(w->err, w->errsize, -EINVAL, "'%.*s' points to void",
			    WALKED(w));
	ax_emit_const(&w->pl.code, (int64_t)(idx * type_size(&elem)));
	ax_emit_op(&w->pl.code, AX_OP_ADD);
	w->type = elem;
	w->s = end + 1;
	return 0;
}

/* One step of the path: a reference followed, a member, an element. */
static int walk_step(struct walk *w)
{
	Dwarf_Die pt;

	if (w->pl.kind == TV_NONE)
		return fail(w->err, w->errsize, -ENODATA, "'%.*s' is %s at the probe",
			    WALKED(w), w->pl.why);
	if (!peel(&w->type, &pt))
		return fail(w->err, w->errsize, -EINVAL, "'%.*s': bad type", WALKED(w));
	int tag = dwarf_tag(&pt);
	if (tag == DW_TAG_reference_type || tag == DW_TAG_rvalue_reference_type)
		return walk_reference(w, &pt);
	if (w->s[0] == '.' || (w->s[0] == '-' && w->s[1] == '>'))
		return walk_member(w, &pt, tag);
	if (w->s[0] == '[')
		return walk_index(w, &pt, tag);
	return fail(w->err, w->errsize, -EINVAL, "'%s': unexpected '%s' (expected "
		    ".MEMBER, ->MEMBER or [N])", w->path, w->s);
}

/* PATH@N: N elements from where the walked value points (a pointer) or
 * starts (an array), recorded as one array value. */
static int add_elements(struct walk *w, unsigned long long elems,
			struct typed_probe *p)
{
	Dwarf_Die pt, elem;
	const char *vp = w->text;
	int r;

	if (!peel(&w->type, &pt) || !die_type(&pt, &elem) ||
	    (dwarf_tag(&pt) != DW_TAG_pointer_type &&
	     dwarf_tag(&pt) != DW_TAG_array_type))
		return fail(w->err, w->errsize, -EINVAL, "'%s': @N needs a pointer "
			    "or an array", vp);
	if (dwarf_tag(&pt) == DW_TAG_pointer_type) {
		if ((r = load_value(&w->pl, 8, w->c, w->err, w->errsize)) < 0)
			return r;
	} else if (w->pl.kind != TV_MEM) {
		return fail(w->err, w->errsize, -ENOTSUP, "'%s' has no address at "
			    "the probe", vp);
	}
	w->pl.kind = TV_MEM;
	struct tbuild *b = calloc(1, sizeof(*b));
	if (!b)
		abort();
	b->p = p;
	int ei = add_type(b, &elem, false, 1);
	free(b);
	uint64_t esize = p->types[ei].size;
	char tn[300];
	snprintf(tn, sizeof(tn), "%s [%llu]", p->types[ei].name, elems);
	int ai = typed_add_type(p, TY_ARRAY, tn, esize * elems, ei, elems, false);
	if (esize)
		collect_mem(w->c, &w->pl, esize * elems);
	w->c->regs = true;
	if (w->pl.code.error)
		return fail(w->err, w->errsize, -ENOMEM, "%s: cannot compile its "
			    "location", w->path);
	typed_add_value(p, w->path, ai, TV_MEM, 0, w->pl.code.code,
			w->pl.code.len, 0);
	return 0;
}

/* *PATH: the pointer's target. */
static int walk_deref(struct walk *w)
{
	Dwarf_Die pt, target;
	int r;

	if (!peel(&w->type, &pt) || dwarf_tag(&pt) != DW_TAG_pointer_type ||
	    !die_type(&pt, &target))
		return fail(w->err, w->errsize, -EINVAL, "'%s': only a pointer can "
			    "be dereferenced", w->path + 1);
	if ((r = load_value(&w->pl, 8, w->c, w->err, w->errsize)) < 0)
		return r;
	w->pl.kind = TV_MEM;
	w->type = target;
	return 0;
}

/* The @N of PATH@N (0 without one) and the path without it (*copy, to be
 * freed, when there was one). */
static int split_elements(const char *path, unsigned long long *elems,
			  char **copy, char *err, size_t errsize)
{
	const char *at = strchr(path, '@');
	char *end;

	*elems = 0;
	*copy = NULL;
	if (!at)
		return 0;
	*elems = strtoull(at + 1, &end, 10);
	if (end == at + 1 || *end || *elems == 0 || *elems > 4096)
		return fail(err, errsize, -EINVAL, "'%s': expected @N with N from "
			    "1 to 4096 after the value", path);
	*copy = strndup(path, (size_t)(at - path));
	if (!*copy)
		abort();
	return 0;
}

int dv_add_path(struct dv_module *m, uint64_t pc, const char *path,
		const struct dv_target *t, struct typed_probe *p,
		struct dv_collect *c, char *err, size_t errsize)
{
	struct lookup lk;
	struct walk w = { .path = path, .text = path, .c = c, .err = err,
			  .errsize = errsize };
	Dwarf_Die var;
	bool star = false;
	size_t n;
	unsigned long long elems;
	char *copy = NULL;
	int r = lookup_begin(&lk, m, pc, t, err, errsize);

	if (r < 0)
		return r;
	ax_emit_init(&w.pl.code);
	/* PATH@N: N elements from where PATH points (a pointer) or starts
	 * (an array), as gdb's p *ptr@N */
	if ((r = split_elements(path, &elems, &copy, err, errsize)) < 0)
		goto out;
	if (copy)
		w.text = copy;
	w.s = w.text;
	if (*w.s == '*') {
		star = true;
		w.s++;
	}
	n = strspn(w.s, NAME_CHARS);
	if (n == 0) {
		r = fail(err, errsize, -EINVAL, "'%s': expected a name", path);
		goto out;
	}
	if (!find_var(&lk, w.s, n, &var)) {
		r = fail(err, errsize, -ENOENT, "'%.*s' is not a parameter or "
			 "variable in scope at the probe", (int)n, w.s);
		goto out;
	}
	if (!die_type(&var, &w.type)) {
		r = fail(err, errsize, -EINVAL, "'%.*s' has no type", (int)n, w.s);
		goto out;
	}
	ax_emit_free(&w.pl.code);
	if ((r = var_place(&lk, &var, &w.pl, err, errsize)) < 0)
		goto out;
	w.s += n;
	while (*w.s)
		if ((r = walk_step(&w)) < 0)
			goto out;
	if (elems) {
		r = add_elements(&w, elems, p);
		goto out;
	}
	if (star && (r = walk_deref(&w)) < 0)
		goto out;
	r = add_value(&lk, path, &w.type, &w.pl, 0, p, c, err, errsize);
out:
	free(copy);
	ax_emit_free(&w.pl.code);
	free(lk.scopes);
	return r;
}

int dv_add_retval(struct dv_module *m, uint64_t pc, const struct dv_target *t,
		  struct typed_probe *p, struct dv_collect *c, char *err,
		  size_t errsize)
{
	struct lookup lk;
	Dwarf_Die type, pt;
	struct place pl = { .kind = TV_REG };
	const char *reg = NULL;
	bool x86 = t->arch && strstr(t->arch, "x86-64");
	int r = lookup_begin(&lk, m, pc, t, err, errsize);

	if (r < 0)
		return r;
	ax_emit_init(&pl.code);
	if (!die_type(&lk.scopes[lk.outer], &type)) {
		r = 0;		/* void: nothing to show */
		goto out;
	}
	if (!peel(&type, &pt)) {
		r = fail(err, errsize, -EINVAL, "the return type is unreadable");
		goto out;
	}
	uint64_t size = type_size(&type);
	int tag = dwarf_tag(&pt);
	bool is_float = false;
	Dwarf_Attribute a;
	Dwarf_Word w;
	if (tag == DW_TAG_base_type && dwarf_attr_integrate(&pt, DW_AT_encoding, &a) &&
	    dwarf_formudata(&a, &w) == 0)
		is_float = w == DW_ATE_float;
	if (is_float && size <= 8)
		reg = x86 ? "xmm0" : "v0";
	else if (tag == DW_TAG_base_type || tag == DW_TAG_pointer_type ||
		 tag == DW_TAG_enumeration_type || tag == DW_TAG_reference_type ||
		 tag == DW_TAG_rvalue_reference_type)
		reg = size <= 8 && !is_float ? (x86 ? "rax" : "x0") : NULL;
	if (!reg) {
		r = fail(err, errsize, -ENOTSUP, "a return value of this type "
			 "cannot be read from the registers at the return");
		goto out;
	}
	int n = t->regnum(t->ctx, reg);
	if (n < 0) {
		r = fail(err, errsize, -ENOTSUP, "the target has no register %s", reg);
		goto out;
	}
	pl.reg = (unsigned)n;
	if (t->retval_tsv && !is_float) {
		pl.kind = TV_VALUE;
		pl.tsv_only = true;
		ax_emit_op16(&pl.code, AX_OP_GETV, t->retval_tsv);
	}
	/* at the return, what the pointer points to is as the function
	 * left it: worth showing too */
	r = add_value(&lk, "return", &type, &pl, TV_RETURN, p, c, err, errsize);
out:
	ax_emit_free(&pl.code);
	free(lk.scopes);
	return r;
}
