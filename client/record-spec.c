/*
 * record-spec.c - probe specs resolved against the program: where each
 * probe goes and what it collects.
 *
 * A spec's WHERE becomes one or more sites (runtime addresses): FUNC and
 * FUNC+OFF through the module's symbols, FILE:LINE through its DWARF
 * line table (every address where the line's code starts), a USDT probe
 * through the module's .note.stapsdt notes (every site of the name), and
 * *ADDR as given.  A LIB:FUNC whose library is not loaded becomes a
 * pending probe (record-pending.c).  Then, with DWARF, `args`, `retval`
 * and values by name become typed values (typed.h), compiled per site
 * to agent expressions; without it they stay the raw ABI registers.
 * setup_probes checks that every argN a spec uses exists, and hands the
 * probes to record-define.c.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/dwarfval.h"
#include "client/elfsym.h"
#include "client/recorder.h"
#include "client/sdt.h"
#include "client/spec.h"
#include "client/target.h"
#include "client/typed.h"

static int resolve_func(struct recorder *r, struct probe *p, char *err,
			size_t errsize)
{
	struct module *m = &r->mods[0];
	struct elfsym_file *f;
	const struct elfsym *hit = NULL;
	char others[512] = "";
	int count = 0;

	if (p->spec.lib && !(m = find_library(r, p->spec.lib, err, errsize)))
		return library_missing(r, p->spec.lib) ? -ENXIO : -ENOENT;
	if (!(f = module_elf(m))) {
		snprintf(err, errsize, "cannot read the symbols of %s", m->local);
		return -ENOENT;
	}
	for (size_t i = 0; i < f->nsyms; i++) {
		const struct elfsym *s = &f->syms[i];
		if (!elfsym_matches(s, p->spec.func))
			continue;
		if (hit && hit->addr == s->addr)
			continue;
		count++;
		size_t used = strlen(others);
		if (used < sizeof(others) - 64)
			snprintf(others + used, sizeof(others) - used,
				 "\n  %s at 0x%llx", elfsym_display(s),
				 (unsigned long long)s->addr);
		hit = s;
	}
	if (count == 0 && f->stripped) {
		/* Every Debian binary is stripped: say what works instead. */
		snprintf(err, errsize, "no function '%s' in %s: the file is "
			 "stripped (%s) and no debug file of it was found%s%s%s; install "
			 "its debug symbols (Debian: the -dbg or -dbgsym package, "
			 "found by build-id under /usr/lib/debug), name a debuginfod "
			 "server that has them in DEBUGINFOD_URLS, give a copy with "
			 "its symbol table (--sysroot DIR holds DIR%s), or probe an "
			 "address in the running process: '*0xADDR'", p->spec.func, m->local,
			 f->nsyms ? "only its exported functions are known"
				  : "it lists no function symbols",
			 f->debug_note ? " (" : "", f->debug_note ? f->debug_note : "",
			 f->debug_note ? ")" : "", m->path);
		return -ENOENT;
	}
	if (count == 0) {
		snprintf(err, errsize, "no function '%s' in %s", p->spec.func,
			 m->local);
		return -ENOENT;
	}
	if (count > 1) {
		snprintf(err, errsize, "'%s' is ambiguous in %s; it names:%s\n"
			 "name one by its full signature or use *ADDR",
			 p->spec.func, m->local, others);
		return -EINVAL;
	}
	if (p->spec.offset >= hit->size) {
		snprintf(err, errsize, "%s+%llu is beyond the end of %s (%llu bytes)",
			 p->spec.func, (unsigned long long)p->spec.offset,
			 elfsym_display(hit), (unsigned long long)hit->size);
		return -ERANGE;
	}
	p->mod = m;
	p->sites[0].addr = hit->addr + m->bias + p->spec.offset;
	p->nsites = 1;
	return 0;
}

/* FILE:LINE: every address where the line's code starts. */
static int resolve_line(struct recorder *r, struct probe *p, char *err,
			size_t errsize)
{
	struct module *m = &r->mods[0];
	struct dv_module *dv;
	uint64_t addrs[MAX_SITES];

	if (p->spec.lib && !(m = find_library(r, p->spec.lib, err, errsize)))
		return -ENOENT;
	if (!module_elf(m)) {
		snprintf(err, errsize, "cannot read %s", m->local);
		return -ENOENT;
	}
	if (!(dv = module_dwarf(m, err, errsize)))
		return -ENOENT;
	int n = dv_line_addrs(dv, p->spec.file, p->spec.line, addrs, MAX_SITES,
			      err, errsize);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++)
		p->sites[i].addr = addrs[i] + m->bias;
	p->nsites = (size_t)n;
	p->mod = m;
	return 0;
}

static int resolve_sdt(struct recorder *r, struct probe *p, char *err,
		       size_t errsize)
{
	struct module *m = &r->mods[0];
	const struct sdt_probe *sp = NULL;

	if (p->spec.lib && !(m = find_library(r, p->spec.lib, err, errsize)))
		return library_missing(r, p->spec.lib) ? -ENXIO : -ENOENT;
	if (sdt_open(&p->sdt, m->local, err, errsize) < 0)
		return -ENOENT;
	p->sdt_open = true;
	while ((sp = sdt_find_next(&p->sdt, sp, p->spec.provider, p->spec.name))) {
		if (sp->error) {
			snprintf(err, errsize, "%s", sp->error);
			return -EINVAL;
		}
		if (p->nsites == MAX_SITES) {
			snprintf(err, errsize, "more than %d sites", MAX_SITES);
			return -E2BIG;
		}
		struct site *st = &p->sites[p->nsites++];
		st->addr = sp->pc + m->bias;
		st->sdt = sp;
		st->sem = sp->semaphore ? sp->semaphore + m->bias : 0;
	}
	if (p->nsites == 0) {
		snprintf(err, errsize, "no USDT probe %s:%s in %s (probe-trace list "
			 "--sdt %s shows them)", p->spec.provider, p->spec.name,
			 m->local, m->local);
		return -ENOENT;
	}
	p->mod = m;
	return 0;
}

static int regnum_by_name(void *ctx, const char *name)
{
	return target_regnum(ctx, name);
}

/* Does the spec use argN (the ABI's argument registers)? */
static bool uses_raw_args(const struct probe_spec *s)
{
	if (expr_max_arg(s->cond) >= 0)
		return true;
	for (size_t i = 0; i < s->nitems; i++)
		if ((s->items[i].what == SPEC_ARGS && s->items[i].count) ||
		    (s->items[i].what == SPEC_MEM && expr_max_arg(s->items[i].addr) >= 0))
			return true;
	return false;
}

/* One item of a probe's spec as typed values at one site (at `link`, its
 * link-time address); an item with nothing typed is left alone. */
static int type_item(struct recorder *r, struct probe *p,
		     const struct spec_item *it, struct dv_module *dv,
		     uint64_t link, const struct dv_target *t,
		     struct typed_probe *tp, struct dv_collect *c,
		     bool want_args, bool named)
{
	const struct probe_spec *s = &p->spec;
	char err[1024];
	int e = 0;

	switch (it->what) {
	case SPEC_ARGS:
		if (it->count || !want_args)
			break;
		e = dv_add_args(dv, link, t, tp, c, err, sizeof(err));
		if (e == -ENOENT && !named && s->where == SPEC_FUNC)
			e = 0;	/* not in DWARF: raw */
		else if (e == 0)
			p->typed_args = true;
		break;
	case SPEC_RETVAL:
		e = dv_add_retval(dv, link, t, tp, c, err, sizeof(err));
		if (e == -ENOTSUP || e == -ENOENT)
			e = 0;	/* the raw register says it */
		break;
	case SPEC_VALUE:
		e = dv_add_path(dv, link, it->addr_text, t, tp, c, err,
				sizeof(err));
		if (e == -ENOENT && !strpbrk(it->addr_text, ".-[*")) {
			err_msg("bad probe spec: %s: %s; expected regs, args, "
				"args=N, retval, mem=ADDR-EXPR,LEN, a parameter "
				"or variable, or if", p->name, err);
			r->usage_error = true;
			return -EINVAL;
		}
		break;
	default:
		break;
	}
	if (e < 0) {
		err_msg("%s: %s", p->name, err);
		if (e == -ENOENT || e == -EINVAL || e == -ERANGE)
			r->usage_error = true;
		return e;
	}
	return 0;
}

/*
 * Typed values from DWARF: `args` (all of them), values by name, and the
 * return value.  Without DWARF, `args` and `retval` stay the raw
 * registers; a value by name is then an error.
 *
 * Where: at a function's entry its parameters are still in the ABI's
 * registers, but DWARF at -O0 places them in stack slots the prologue
 * has not filled yet.  So a probe on FUNC with typed values goes where
 * gdb's `break FUNC` goes, after the prologue (the function's second
 * line-table row; the entry in optimized code, see dv_after_prologue):
 * there DWARF's locations hold, both for dump and for gdb reading the
 * file, which evaluates them the same way.  FUNC+OFF, *ADDR and
 * FILE:LINE stay where they are.
 */
static int type_probe(struct recorder *r, struct probe *p)
{
	const struct probe_spec *s = &p->spec;
	bool want_args = false, want_ret = false, named = false;
	char err[1024];
	struct dv_module *dv = NULL;
	struct dv_target t = {
		.arch = r->regs.arch, .regnum = regnum_by_name, .ctx = &r->regs,
		.string_max = r->string_max, .retval_tsv = TSV_RETVAL,
	};

	for (size_t i = 0; i < s->nitems; i++) {
		want_args |= s->items[i].what == SPEC_ARGS && !s->items[i].count;
		want_ret |= s->items[i].what == SPEC_RETVAL;
		named |= s->items[i].what == SPEC_VALUE;
	}
	/* A spec that reads argN keeps the raw argument registers at the
	 * entry, unless it names values too (an error below). */
	if (uses_raw_args(s) && !named)
		want_args = false;
	if (!want_args && !want_ret && !named)
		return 0;
	if (s->where == SPEC_SDT || s->where == SPEC_ADDR) {
		if (!named)
			return 0;
		err_msg("%s: values by name need DWARF at a function or FILE:LINE, "
			"not at %s", p->name, s->where == SPEC_SDT ? "a USDT probe"
								     : "*ADDR");
		r->usage_error = true;
		return -EINVAL;
	}
	if (p->pending)
		snprintf(err, sizeof(err), "its library is not loaded yet, and a "
			 "probe waiting for one collects args=N, retval, regs and "
			 "mem= only");
	else if (p->mod)
		dv = module_dwarf(p->mod, err, sizeof(err));
	if (!dv) {
		if (!named)
			return 0;	/* the raw forms */
		err_msg("%s: values by name need DWARF: %s", p->name, err);
		return -ENODATA;
	}
	t.bias = p->mod->bias;
	if (s->where == SPEC_FUNC && !s->ret && !s->offset && (want_args || named)) {
		uint64_t entry = p->sites[0].addr - p->mod->bias, body;
		if (dv_after_prologue(dv, entry, &body) < 0) {
			if (!named)
				return 0;
			err_msg("%s: DWARF of %s does not describe %s", p->name,
				dv_path(dv), s->func);
			return -ENOENT;
		}
		if (body != entry && uses_raw_args(s)) {
			err_msg("%s: argN and args=N are the ABI's registers at the "
				"function's entry, but typed values are read after its "
				"prologue: name the parameters instead (or probe "
				"%s+0 for the raw registers)", p->name, s->func);
			r->usage_error = true;
			return -EINVAL;
		}
		p->sites[0].addr = body + p->mod->bias;
		p->after_prologue = body != entry;
	}
	p->typed = calloc(p->nsites, sizeof(*p->typed));
	p->collect = calloc(p->nsites, sizeof(*p->collect));
	if (!p->typed || !p->collect)
		abort();
	bool have_regs = false, have_mem = false;
	for (size_t i = 0; i < s->nitems; i++) {
		have_regs |= s->items[i].what == SPEC_REGS;
		have_mem |= s->items[i].what == SPEC_MEM;
	}
	int pc = target_regnum(&r->regs, strstr(r->regs.arch ? r->regs.arch : "",
						 "x86-64") ? "rip" : "pc");
	for (size_t k = 0; k < p->nsites; k++) {
		struct typed_probe *tp = &p->typed[k];
		struct dv_collect *c = &p->collect[k];
		uint64_t link = p->sites[k].addr - p->mod->bias;

		typed_probe_init(tp);
		tp->tpnum = p->tpnum;
		tp->addr = p->sites[k].addr;
		tp->pc_reg = pc;
		tp->hide_regs = !have_regs;
		tp->hide_mem = !have_mem;
		for (size_t i = 0; i < s->nitems; i++) {
			int e = type_item(r, p, &s->items[i], dv, link, &t, tp, c,
					  want_args, named);
			if (e < 0)
				return e;
		}
	}
	return 0;
}

static int probe_nargs(struct recorder *r, const struct probe *p)
{
	int n = 0;

	if (p->nsites && p->sites[0].sdt) {
		/* the fewest of any site (they agree in practice) */
		size_t least = p->sites[0].sdt->nargs;
		for (size_t i = 1; i < p->nsites; i++)
			if (p->sites[i].sdt->nargs < least)
				least = p->sites[i].sdt->nargs;
		return (int)least;
	}
	n = (int)target_abi_nargs(r->tarch);
	return n > 6 ? 6 : n;
}

/* Every probe's sites and argument count, then its definitions. */
int setup_probes(struct recorder *r)
{
	char err[2048];

	for (size_t i = 0; i < r->nprobes; i++) {
		struct probe *p = &r->probes[i];
		int e = 0;

		switch (p->spec.where) {
		case SPEC_FUNC:
			e = resolve_func(r, p, err, sizeof(err));
			break;
		case SPEC_SDT:
			e = resolve_sdt(r, p, err, sizeof(err));
			break;
		case SPEC_ADDR:
			p->sites[0].addr = p->spec.addr;
			p->nsites = 1;
			break;
		case SPEC_LINE:
			e = resolve_line(r, p, err, sizeof(err));
			break;
		}
		if (e == -ENXIO)
			e = resolve_pending(r, p, err, sizeof(err));
		if (e < 0) {
			err_msg("%s: %s", p->name, err);
			return e;
		}
		if (p->mod && check_build_id(r, p->mod) < 0)
			return -ESTALE;
		if ((e = type_probe(r, p)) < 0)
			return e;
		p->nargs = probe_nargs(r, p);
		/* argN in conditions and mem= must exist too */
		int need = expr_max_arg(p->spec.cond);
		for (size_t k = 0; k < p->spec.nitems; k++)
			if (p->spec.items[k].addr && expr_max_arg(p->spec.items[k].addr) > need)
				need = expr_max_arg(p->spec.items[k].addr);
		if (need >= p->nargs) {
			err_msg("%s: uses arg%d but the probe has %d argument%s",
				p->name, need, p->nargs, p->nargs == 1 ? "" : "s");
			return -EINVAL;
		}
		if (p->nargs > r->max_args)
			r->max_args = p->nargs;
		if (p->spec.ret)
			r->any_ret = true;
	}
	return define_all(r);
}
