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

#define DV_MAX_COLLECT 4096	/* bytes of one object collected */
#define DV_MAX_TYPES 256	/* types described per probe location */

struct dv_module {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Dwarf *dw;
	Dwarf_Addr dwbias;	/* dwfl address = DWARF address + dwbias */
	Dwarf_Addr link_to_dw;	/* DWARF address = link address + this */
	Dwarf_CFI *cfi;		/* .eh_frame of the file, else .debug_frame */
	Dwarf_Addr cfi_bias;
	char *path;
};

static int fail(char *err, size_t errsize, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t errsize, int code, const char *fmt, ...)
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

/* ---- scopes ---- */

/* The unit around DWARF address a, or NULL. */
static Dwarf_Die *cu_of(struct dv_module *m, Dwarf_Addr a, Dwarf_Die *cu)
{
	Dwarf_Addr bias;
	Dwarf_Die *d = dwfl_module_addrdie(m->mod, a + m->dwbias, &bias);

	if (!d)
		return NULL;
	*cu = *d;
	return cu;
}

/*
 * Scopes around DWARF address a, innermost first, the unit last.
 * libdw's dwarf_getscopes follows an inlined copy to its abstract
 * definition's scopes and so loses the function it was inlined into;
 * the probe wants that function (its frame, its parameters), so the
 * tree is walked here: from the unit down through every function,
 * inlined copy and lexical block whose ranges hold a (namespaces and
 * classes, which have no ranges, are looked into).
 * -ENOENT without a function among them.  *fn: the innermost function
 * or inlined copy; *outer: the innermost real (not inlined) function,
 * whose frame the probe is in.
 */
#define MAX_SCOPES 64

static bool find_inner(Dwarf_Die *parent, Dwarf_Addr a, Dwarf_Die *out,
		       int depth)
{
	Dwarf_Die child;

	if (depth > 8 || dwarf_child(parent, &child) != 0)
		return false;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
		case DW_TAG_inlined_subroutine:
		case DW_TAG_lexical_block:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
			if (dwarf_haspc(&child, a) > 0) {
				*out = child;
				return true;
			}
			break;
		case DW_TAG_namespace:
		case DW_TAG_structure_type:
		case DW_TAG_class_type:
			if (find_inner(&child, a, out, depth + 1))
				return true;
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

static int scopes_at(struct dv_module *m, Dwarf_Addr a, Dwarf_Die **scopes,
		     int *fn, int *outer)
{
	Dwarf_Die chain[MAX_SCOPES];
	int n = 0;

	*scopes = NULL;
	if (!cu_of(m, a, &chain[0]))
		return -ENOENT;
	n = 1;
	while (n < MAX_SCOPES && find_inner(&chain[n - 1], a, &chain[n], 0))
		n++;
	*scopes = calloc((size_t)n, sizeof(**scopes));
	if (!*scopes)
		abort();
	for (int i = 0; i < n; i++)
		(*scopes)[i] = chain[n - 1 - i];
	*fn = *outer = -1;
	for (int i = 0; i < n; i++) {
		int tag = dwarf_tag(&(*scopes)[i]);
		if ((tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) &&
		    *fn < 0)
			*fn = i;
		if (tag == DW_TAG_subprogram && *outer < 0)
			*outer = i;
	}
	if (*fn < 0 || *outer < 0) {
		free(*scopes);
		*scopes = NULL;
		return -ENOENT;
	}
	return n;
}

static const char *die_name(Dwarf_Die *d)
{
	Dwarf_Attribute a;

	return dwarf_formstring(dwarf_attr_integrate(d, DW_AT_name, &a));
}

static bool die_type(Dwarf_Die *d, Dwarf_Die *out)
{
	Dwarf_Attribute a;

	return dwarf_attr_integrate(d, DW_AT_type, &a) && dwarf_formref_die(&a, out);
}

/* Does any variable under d have a location list?  (The walk stops at
 * the first.) */
static bool has_loclist(Dwarf_Die *d, int depth)
{
	Dwarf_Die child;

	if (depth > 32 || dwarf_child(d, &child) != 0)
		return false;
	do {
		Dwarf_Attribute a;
		int tag = dwarf_tag(&child);
		if ((tag == DW_TAG_formal_parameter || tag == DW_TAG_variable) &&
		    dwarf_attr(&child, DW_AT_location, &a)) {
			unsigned form = dwarf_whatform(&a);
			if (form == DW_FORM_sec_offset || form == DW_FORM_loclistx ||
			    form == DW_FORM_data4 || form == DW_FORM_data8)
				return true;
		}
		if (dwarf_haschildren(&child) > 0 && has_loclist(&child, depth + 1))
			return true;
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

int dv_after_prologue(struct dv_module *m, uint64_t entry, uint64_t *out)
{
	Dwarf_Addr a = entry + m->link_to_dw;
	Dwarf_Die cu, *scopes = NULL;
	Dwarf_Lines *lines;
	Dwarf_Addr low = 0, high = 0;
	size_t nlines;
	int fn, outer;

	if (scopes_at(m, a, &scopes, &fn, &outer) < 0)
		return -ENOENT;
	if (dwarf_lowpc(&scopes[outer], &low) != 0 || low != a)
		low = a;
	if (dwarf_highpc(&scopes[outer], &high) != 0)
		high = a + 1;
	free(scopes);
	*out = entry;
	if (!cu_of(m, a, &cu))
		return 0;
	/* As gdb decides: a unit whose variables have location lists was
	 * optimized, and its compiler tracked every variable from the
	 * first instruction on; its "second line" may well be inside a
	 * loop of the body.  The entry it is. */
	if (has_loclist(&cu, 0))
		return 0;
	if (dwarf_getsrclines(&cu, &lines, &nlines) != 0)
		return 0;
	/* The rows are sorted by address: the first one past the entry
	 * (inside the function, a real line) ends the prologue. */
	Dwarf_Addr best = 0;
	for (size_t i = 0; i < nlines; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr la;
		int ln = 0;
		bool stmt = true;
		if (!l || dwarf_lineaddr(l, &la) != 0 || la <= low || la >= high)
			continue;
		dwarf_lineno(l, &ln);
		dwarf_linebeginstatement(l, &stmt);
		if (ln == 0 || !stmt)
			continue;
		if (!best || la < best)
			best = la;
	}
	if (best)
		*out = best - m->link_to_dw;
	return 0;
}

/* ---- source lines ---- */

int dv_line_addrs(struct dv_module *m, const char *file, int line,
		  uint64_t *addrs, size_t max, char *err, size_t errsize)
{
	Dwarf_Line **srcs = NULL;
	size_t nsrcs = 0, n = 0;
	uint64_t keys[256];
	int nearest = 0;

	if (dwarf_getsrc_file(m->dw, file, line, 0, &srcs, &nsrcs) != 0 || !nsrcs) {
		free(srcs);
		return fail(err, errsize, -ENOENT, "no source file '%s' in the "
			    "line table of %s", file, m->path);
	}
	for (size_t i = 0; i < nsrcs; i++) {
		Dwarf_Addr a;
		int ln = 0;
		dwarf_lineno(srcs[i], &ln);
		if (ln != line) {
			nearest = ln;
			continue;
		}
		bool stmt = true;
		dwarf_linebeginstatement(srcs[i], &stmt);
		/* a row that is no statement's beginning is an instruction
		 * scheduled early: the line's state is not there yet */
		if (!stmt || dwarf_lineaddr(srcs[i], &a) != 0)
			continue;
		/* one address per function or inlined copy: the lowest */
		Dwarf_Die *scopes;
		int fn, outer;
		uint64_t key = a;
		if (scopes_at(m, a, &scopes, &fn, &outer) > 0) {
			key = dwarf_dieoffset(&scopes[fn]);
			free(scopes);
		}
		size_t k;
		for (k = 0; k < n; k++)
			if (keys[k] == key)
				break;
		uint64_t link = a - m->link_to_dw;
		if (k < n) {
			if (link < addrs[k])
				addrs[k] = link;
			continue;
		}
		if (n == max || n == sizeof(keys) / sizeof(keys[0])) {
			free(srcs);
			return fail(err, errsize, -E2BIG, "%s:%d has code in more "
				    "than %zu places", file, line, n);
		}
		keys[n] = key;
		addrs[n++] = link;
	}
	free(srcs);
	if (n == 0) {
		if (nearest)
			return fail(err, errsize, -ENOENT, "no code at %s:%d (the "
				    "nearest line with code is %d)", file, line,
				    nearest);
		return fail(err, errsize, -ENOENT, "no code at %s:%d", file, line);
	}
	return (int)n;
}

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

/* ---- location expressions ---- */

struct place {
	enum tv_place kind;
	unsigned int reg;
	struct ax_emit code;
	const char *why;	/* TV_NONE: what could not be read */
	bool tsv_only;		/* TV_VALUE from trace state variables only */
};

struct loc_ctx {
	struct dv_module *m;
	const struct dv_target *t;
	Dwarf_Addr pc;		/* DWARF address */
	Dwarf_Die *frame_fn;	/* the real function, for DW_AT_frame_base */
	int depth;
};

static int compile_ops(struct loc_ctx *lc, const Dwarf_Op *ops, size_t n,
		       struct place *pl, char *err, size_t errsize);

static void append_code(struct ax_emit *e, const struct ax_emit *from)
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
static int compile_ops(struct loc_ctx *lc, const Dwarf_Op *ops, size_t n,
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

/* ---- types ---- */

struct tbuild {
	struct typed_probe *p;
	struct {
		Dwarf_Off off;
		bool expand;
		int idx;
	} map[DV_MAX_TYPES];
	size_t n;
};

static uint64_t type_size(Dwarf_Die *t)
{
	Dwarf_Word w;
	Dwarf_Die peeled;
	int tag;

	if (dwarf_peel_type(t, &peeled) == 0) {
		tag = dwarf_tag(&peeled);
		if (tag == DW_TAG_pointer_type || tag == DW_TAG_reference_type ||
		    tag == DW_TAG_rvalue_reference_type) {
			Dwarf_Attribute a;
			if (dwarf_attr_integrate(&peeled, DW_AT_byte_size, &a) &&
			    dwarf_formudata(&a, &w) == 0)
				return w;
			return 8;
		}
	}
	return dwarf_aggregate_size(t, &w) == 0 ? w : 0;
}

/* The C spelling of type t: "const struct order *". */
static void type_name(Dwarf_Die *t, char *buf, size_t size, int depth)
{
	Dwarf_Die target;
	char inner[256];
	const char *name = die_name(t);
	bool has_target = die_type(t, &target);

	if (depth > 8) {
		snprintf(buf, size, "...");
		return;
	}
	switch (dwarf_tag(t)) {
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type: {
		const char *mark = dwarf_tag(t) == DW_TAG_pointer_type ? "*" :
				   dwarf_tag(t) == DW_TAG_reference_type ? "&" : "&&";
		if (!has_target)
			snprintf(buf, size, "void %s", mark);
		else if (dwarf_tag(&target) == DW_TAG_subroutine_type)
			snprintf(buf, size, "function %s", mark);
		else {
			type_name(&target, inner, sizeof(inner), depth + 1);
			snprintf(buf, size, "%s %s", inner, mark);
		}
		return;
	}
	case DW_TAG_const_type:
	case DW_TAG_volatile_type: {
		const char *q = dwarf_tag(t) == DW_TAG_const_type ? "const" : "volatile";
		if (!has_target) {
			snprintf(buf, size, "%s void", q);
			return;
		}
		type_name(&target, inner, sizeof(inner), depth + 1);
		if (dwarf_tag(&target) == DW_TAG_pointer_type)
			snprintf(buf, size, "%s %s", inner, q);
		else
			snprintf(buf, size, "%s %s", q, inner);
		return;
	}
	case DW_TAG_restrict_type:
	case DW_TAG_atomic_type:
		if (has_target)
			type_name(&target, buf, size, depth + 1);
		else
			snprintf(buf, size, "void");
		return;
	case DW_TAG_array_type: {
		Dwarf_Die child;
		size_t used;
		if (has_target)
			type_name(&target, inner, sizeof(inner), depth + 1);
		else
			snprintf(inner, sizeof(inner), "?");
		used = (size_t)snprintf(buf, size, "%s ", inner);
		if (dwarf_child(t, &child) == 0) {
			do {
				Dwarf_Attribute a;
				Dwarf_Word w;
				if (dwarf_tag(&child) != DW_TAG_subrange_type || used >= size)
					continue;
				if (dwarf_attr_integrate(&child, DW_AT_count, &a) &&
				    dwarf_formudata(&a, &w) == 0)
					used += (size_t)snprintf(buf + used, size - used, "[%" PRIu64 "]", (uint64_t)w);
				else if (dwarf_attr_integrate(&child, DW_AT_upper_bound, &a) &&
					 dwarf_formudata(&a, &w) == 0)
					used += (size_t)snprintf(buf + used, size - used, "[%" PRIu64 "]", (uint64_t)w + 1);
				else
					used += (size_t)snprintf(buf + used, size - used, "[]");
			} while (dwarf_siblingof(&child, &child) == 0);
		}
		return;
	}
	case DW_TAG_structure_type:
		snprintf(buf, size, "struct %s", name ? name : "{...}");
		return;
	case DW_TAG_class_type:
		snprintf(buf, size, "class %s", name ? name : "{...}");
		return;
	case DW_TAG_union_type:
		snprintf(buf, size, "union %s", name ? name : "{...}");
		return;
	case DW_TAG_enumeration_type:
		snprintf(buf, size, "enum %s", name ? name : "{...}");
		return;
	case DW_TAG_subroutine_type:
		snprintf(buf, size, "function");
		return;
	default:
		snprintf(buf, size, "%s", name ? name : "?");
		return;
	}
}

static int add_type(struct tbuild *b, Dwarf_Die *t, bool expand, int depth);

static bool member_offset(Dwarf_Die *mem, uint64_t *out)
{
	Dwarf_Attribute a;
	Dwarf_Word w;
	Dwarf_Op *ops;
	size_t nops;

	*out = 0;
	if (!dwarf_attr_integrate(mem, DW_AT_data_member_location, &a))
		return true;	/* union members: at 0 */
	if (dwarf_formudata(&a, &w) == 0) {
		*out = w;
		return true;
	}
	if (dwarf_getlocation(&a, &ops, &nops) == 0 && nops == 1 &&
	    ops[0].atom == DW_OP_plus_uconst) {
		*out = ops[0].number;
		return true;
	}
	return false;
}

/* Array dimensions of t (outermost first); how many. */
static int array_dims(Dwarf_Die *t, uint64_t *dims, int max)
{
	Dwarf_Die child;
	int n = 0;

	if (dwarf_child(t, &child) != 0)
		return 0;
	do {
		Dwarf_Attribute a;
		Dwarf_Word w;
		if (dwarf_tag(&child) != DW_TAG_subrange_type || n == max)
			continue;
		if (dwarf_attr_integrate(&child, DW_AT_count, &a) &&
		    dwarf_formudata(&a, &w) == 0)
			dims[n++] = w;
		else if (dwarf_attr_integrate(&child, DW_AT_upper_bound, &a) &&
			 dwarf_formudata(&a, &w) == 0)
			dims[n++] = w + 1;
		else
			dims[n++] = 0;	/* flexible */
	} while (dwarf_siblingof(&child, &child) == 0);
	return n;
}

/*
 * The index of type t in the description, adding it (and what it is
 * made of) if new.  `expand`: a pointer's target is described too (the
 * top level of a value); deeper pointers print as addresses only.
 */
static int add_type(struct tbuild *b, Dwarf_Die *t, bool expand, int depth)
{
	struct typed_probe *p = b->p;
	char name[256];
	Dwarf_Die peeled, target;
	Dwarf_Attribute a;
	Dwarf_Word w;
	Dwarf_Off off = dwarf_dieoffset(t);
	int idx;

	for (size_t i = 0; i < b->n; i++)
		if (b->map[i].off == off && b->map[i].expand == expand)
			return b->map[i].idx;
	type_name(t, name, sizeof(name), 0);
	if (b->n == DV_MAX_TYPES || depth > 12 || dwarf_peel_type(t, &peeled) != 0)
		return typed_add_type(p, TY_OPAQUE, name, type_size(t), -1, 0, false);
	uint64_t size = type_size(t);
	switch (dwarf_tag(&peeled)) {
	case DW_TAG_base_type: {
		enum ty_kind k = TY_OPAQUE;
		bool sign = false;
		if (dwarf_attr_integrate(&peeled, DW_AT_encoding, &a) &&
		    dwarf_formudata(&a, &w) == 0) {
			switch (w) {
			case DW_ATE_signed: k = TY_INT; sign = true; break;
			case DW_ATE_unsigned: k = TY_INT; break;
			case DW_ATE_signed_char: k = TY_CHAR; sign = true; break;
			case DW_ATE_unsigned_char: k = TY_CHAR; break;
			case DW_ATE_UTF: k = TY_CHAR; break;
			case DW_ATE_boolean: k = TY_BOOL; break;
			case DW_ATE_float: k = TY_FLOAT; break;
			default: break;
			}
		}
		idx = typed_add_type(p, k, name, size, -1, 0, sign);
		break;
	}
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
		idx = typed_add_type(p, TY_PTR, name, size, -1, 0, false);
		if (expand && die_type(&peeled, &target)) {
			int ti = add_type(b, &target, false, depth + 1);
			p->types[idx].target = ti;
		}
		break;
	case DW_TAG_enumeration_type: {
		Dwarf_Die child, under;
		bool sign = false;
		if (die_type(&peeled, &under) && dwarf_peel_type(&under, &under) == 0 &&
		    dwarf_attr_integrate(&under, DW_AT_encoding, &a) &&
		    dwarf_formudata(&a, &w) == 0)
			sign = w == DW_ATE_signed || w == DW_ATE_signed_char;
		idx = typed_add_type(p, TY_ENUM, name, size, -1, 0, sign);
		if (dwarf_child(&peeled, &child) == 0) {
			do {
				Dwarf_Sword sv;
				if (dwarf_tag(&child) != DW_TAG_enumerator ||
				    !dwarf_attr(&child, DW_AT_const_value, &a))
					continue;
				if (dwarf_formsdata(&a, &sv) != 0)
					continue;
				typed_add_enum(p, idx, sv, die_name(&child) ? die_name(&child) : "?");
			} while (dwarf_siblingof(&child, &child) == 0);
		}
		break;
	}
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
	case DW_TAG_union_type: {
		Dwarf_Die child;
		if (dwarf_hasattr(&peeled, DW_AT_declaration)) {
			idx = typed_add_type(p, TY_OPAQUE, name, 0, -1, 0, false);
			break;
		}
		idx = typed_add_type(p, dwarf_tag(&peeled) == DW_TAG_union_type ?
				     TY_UNION : TY_STRUCT, name, size, -1, 0, false);
		/* registered before its members: a member pointing back
		 * finds it */
		b->map[b->n].off = off;
		b->map[b->n].expand = expand;
		b->map[b->n++].idx = idx;
		if (dwarf_child(&peeled, &child) == 0) {
			do {
				Dwarf_Die mt;
				uint64_t moff;
				unsigned bo = 0, bs = 0;
				if (dwarf_tag(&child) != DW_TAG_member ||
				    dwarf_hasattr(&child, DW_AT_external) ||
				    !die_type(&child, &mt) || !member_offset(&child, &moff))
					continue;
				if (dwarf_attr_integrate(&child, DW_AT_bit_size, &a) &&
				    dwarf_formudata(&a, &w) == 0) {
					bs = (unsigned)w;
					if (dwarf_attr_integrate(&child, DW_AT_data_bit_offset, &a) &&
					    dwarf_formudata(&a, &w) == 0) {
						moff = w / 8;
						bo = (unsigned)(w % 8);
					} else if (dwarf_attr_integrate(&child, DW_AT_bit_offset, &a) &&
						   dwarf_formudata(&a, &w) == 0) {
						/* DWARF 2/3: from the storage unit's
						 * most significant bit */
						uint64_t unit = type_size(&mt) * 8;
						uint64_t lsb = unit - w - bs;
						moff += lsb / 8;
						bo = (unsigned)(lsb % 8);
					}
				}
				int ti = add_type(b, &mt, false, depth + 1);
				const char *mn = die_name(&child);
				typed_add_member(p, idx, mn ? mn : "", moff, ti, bo, bs);
			} while (dwarf_siblingof(&child, &child) == 0);
		}
		return idx;
	}
	case DW_TAG_array_type: {
		uint64_t dims[8];
		int nd = array_dims(&peeled, dims, 8);
		if (!die_type(&peeled, &target) || nd == 0) {
			idx = typed_add_type(p, TY_OPAQUE, name, size, -1, 0, false);
			break;
		}
		int elem = add_type(b, &target, false, depth + 1);
		uint64_t esize = p->types[elem].size;
		/* innermost dimension first: int m[2][3] is 2 of int[3] */
		for (int d = nd - 1; d >= 0; d--) {
			char nm[64];
			esize *= dims[d];
			if (d)
				snprintf(nm, sizeof(nm), "%s[%" PRIu64 "]",
					 p->types[elem].name, dims[d]);
			elem = typed_add_type(p, TY_ARRAY, d ? nm : name, esize,
					      elem, dims[d], false);
		}
		idx = elem;
		break;
	}
	default:
		idx = typed_add_type(p, TY_OPAQUE, name, size, -1, 0, false);
		break;
	}
	if (b->n < DV_MAX_TYPES) {
		b->map[b->n].off = off;
		b->map[b->n].expand = expand;
		b->map[b->n++].idx = idx;
	}
	return idx;
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

int dv_add_path(struct dv_module *m, uint64_t pc, const char *path,
		const struct dv_target *t, struct typed_probe *p,
		struct dv_collect *c, char *err, size_t errsize)
{
	struct lookup lk;
	Dwarf_Die var, type, pt;
	struct place pl;
	const char *s = path;
	bool star = false;
	size_t n;
	unsigned long long elems = 0;
	char *copy = NULL;
	int r = lookup_begin(&lk, m, pc, t, err, errsize);

	if (r < 0)
		return r;
	ax_emit_init(&pl.code);
	/* PATH@N: N elements from where PATH points (a pointer) or starts
	 * (an array), as gdb's p *ptr@N */
	const char *at = strchr(path, '@');
	if (at) {
		char *end;
		elems = strtoull(at + 1, &end, 10);
		if (end == at + 1 || *end || elems == 0 || elems > 4096) {
			r = fail(err, errsize, -EINVAL, "'%s': expected @N with N from "
				 "1 to 4096 after the value", path);
			goto out;
		}
		copy = strndup(path, (size_t)(at - path));
		if (!copy)
			abort();
		s = copy;
	}
	if (*s == '*') {
		star = true;
		s++;
	}
	n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
	if (n == 0) {
		r = fail(err, errsize, -EINVAL, "'%s': expected a name", path);
		goto out;
	}
	if (!find_var(&lk, s, n, &var)) {
		r = fail(err, errsize, -ENOENT, "'%.*s' is not a parameter or "
			 "variable in scope at the probe", (int)n, s);
		goto out;
	}
	if (!die_type(&var, &type)) {
		r = fail(err, errsize, -EINVAL, "'%.*s' has no type", (int)n, s);
		goto out;
	}
	ax_emit_free(&pl.code);
	if ((r = var_place(&lk, &var, &pl, err, errsize)) < 0)
		goto out;
	s += n;
	while (*s) {
		if (pl.kind == TV_NONE) {
			r = fail(err, errsize, -ENODATA, "'%.*s' is %s at the probe",
				 (int)(s - path), path, pl.why);
			goto out;
		}
		if (!peel(&type, &pt)) {
			r = fail(err, errsize, -EINVAL, "'%.*s': bad type", (int)(s - path), path);
			goto out;
		}
		int tag = dwarf_tag(&pt);
		if (tag == DW_TAG_reference_type || tag == DW_TAG_rvalue_reference_type) {
			/* a C++ reference is its object: follow it first */
			Dwarf_Die target;
			if (!die_type(&pt, &target) ||
			    (r = load_value(&pl, 8, c, err, errsize)) < 0) {
				if (r == 0)
					r = fail(err, errsize, -EINVAL, "'%.*s': a "
						 "reference to nothing", (int)(s - path), path);
				goto out;
			}
			pl.kind = TV_MEM;
			type = target;
			continue;
		}
		if (s[0] == '.' || (s[0] == '-' && s[1] == '>')) {
			bool arrow = s[0] == '-';
			Dwarf_Die st, member;
			uint64_t off;
			const char *mname = s + (arrow ? 2 : 1);
			size_t mlen = strspn(mname, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
			if (arrow) {
				if (tag != DW_TAG_pointer_type || !die_type(&pt, &st) ||
				    !peel(&st, &st)) {
					r = fail(err, errsize, -EINVAL, "'%.*s' is not a "
						 "pointer to a struct: no '->'",
						 (int)(s - path), path);
					goto out;
				}
				if ((r = load_value(&pl, 8, c, err, errsize)) < 0)
					goto out;
				pl.kind = TV_MEM;
			} else {
				st = pt;
				if (pl.kind != TV_MEM) {
					r = fail(err, errsize, -ENOTSUP, "'%.*s' is in a "
						 "register at the probe: its members "
						 "have no address", (int)(s - path), path);
					goto out;
				}
			}
			int stag = dwarf_tag(&st);
			if (stag != DW_TAG_structure_type && stag != DW_TAG_union_type &&
			    stag != DW_TAG_class_type) {
				r = fail(err, errsize, -EINVAL, "'%.*s' is not a struct "
					 "or union", (int)(s - path), path);
				goto out;
			}
			if (!mlen || !find_member(&st, mname, mlen, &member, &off)) {
				char sn[256];
				type_name(&st, sn, sizeof(sn), 0);
				r = fail(err, errsize, -ENOENT, "%s has no member '%.*s'",
					 sn, (int)mlen, mname);
				goto out;
			}
			if (dwarf_hasattr(&member, DW_AT_bit_size)) {
				r = fail(err, errsize, -ENOTSUP, "'%.*s' is a bit-field: "
					 "name its struct instead", (int)(mname + mlen - path), path);
				goto out;
			}
			ax_emit_const(&pl.code, (int64_t)off);
			ax_emit_op(&pl.code, AX_OP_ADD);
			die_type(&member, &type);
			s = mname + mlen;
			continue;
		}
		if (s[0] == '[') {
			char *end;
			unsigned long long idx = strtoull(s + 1, &end, 0);
			Dwarf_Die elem;
			if (end == s + 1 || *end != ']') {
				r = fail(err, errsize, -EINVAL, "'%s': expected [NUMBER]", path);
				goto out;
			}
			if (tag == DW_TAG_array_type) {
				uint64_t dims[8];
				int nd = array_dims(&pt, dims, 8);
				if (nd != 1) {
					r = fail(err, errsize, -ENOTSUP, "'%.*s': only "
						 "one-dimensional arrays can be indexed",
						 (int)(s - path), path);
					goto out;
				}
				if (dims[0] && idx >= dims[0]) {
					r = fail(err, errsize, -ERANGE, "'%.*s' has %" PRIu64
						 " elements: [%llu] is out of bounds",
						 (int)(s - path), path, dims[0], idx);
					goto out;
				}
				if (pl.kind != TV_MEM) {
					r = fail(err, errsize, -ENOTSUP, "'%.*s' has no "
						 "address at the probe", (int)(s - path), path);
					goto out;
				}
			} else if (tag == DW_TAG_pointer_type) {
				if ((r = load_value(&pl, 8, c, err, errsize)) < 0)
					goto out;
				pl.kind = TV_MEM;
			} else {
				r = fail(err, errsize, -EINVAL, "'%.*s' is neither an "
					 "array nor a pointer", (int)(s - path), path);
				goto out;
			}
			if (!die_type(&pt, &elem)) {
				r = fail(err, errsize, -EINVAL, "'%.*s' points to void",
					 (int)(s - path), path);
				goto out;
			}
			ax_emit_const(&pl.code, (int64_t)(idx * type_size(&elem)));
			ax_emit_op(&pl.code, AX_OP_ADD);
			type = elem;
			s = end + 1;
			continue;
		}
		r = fail(err, errsize, -EINVAL, "'%s': unexpected '%s' (expected "
			 ".MEMBER, ->MEMBER or [N])", path, s);
		goto out;
	}
	if (elems) {
		/* the elements: from a pointer's target or an array's start */
		Dwarf_Die elem;
		const char *vp = copy;
		if (!peel(&type, &pt) || !die_type(&pt, &elem) ||
		    (dwarf_tag(&pt) != DW_TAG_pointer_type &&
		     dwarf_tag(&pt) != DW_TAG_array_type)) {
			r = fail(err, errsize, -EINVAL, "'%s': @N needs a pointer or "
				 "an array", vp);
			goto out;
		}
		if (dwarf_tag(&pt) == DW_TAG_pointer_type) {
			if ((r = load_value(&pl, 8, c, err, errsize)) < 0)
				goto out;
		} else if (pl.kind != TV_MEM) {
			r = fail(err, errsize, -ENOTSUP, "'%s' has no address at the "
				 "probe", vp);
			goto out;
		}
		pl.kind = TV_MEM;
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
			collect_mem(c, &pl, esize * elems);
		c->regs = true;
		if (pl.code.error)
			r = fail(err, errsize, -ENOMEM, "%s: cannot compile its location", path);
		else
			typed_add_value(p, path, ai, TV_MEM, 0, pl.code.code, pl.code.len, 0);
		goto out;
	}
	if (star) {
		Dwarf_Die target;
		if (!peel(&type, &pt) || dwarf_tag(&pt) != DW_TAG_pointer_type ||
		    !die_type(&pt, &target)) {
			r = fail(err, errsize, -EINVAL, "'%s': only a pointer can be "
				 "dereferenced", path + 1);
			goto out;
		}
		if ((r = load_value(&pl, 8, c, err, errsize)) < 0)
			goto out;
		pl.kind = TV_MEM;
		type = target;
	}
	r = add_value(&lk, path, &type, &pl, 0, p, c, err, errsize);
out:
	free(copy);
	ax_emit_free(&pl.code);
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
