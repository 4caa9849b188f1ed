/*
 * dwarfval-scope.c - where a probe's pc is in the DWARF tree: the scopes
 * around it (units, functions, inlined copies, lexical blocks), where a
 * function's prologue ends, and the addresses of a source line.
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

int scopes_at(struct dv_module *m, Dwarf_Addr a, Dwarf_Die **scopes,
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

const char *die_name(Dwarf_Die *d)
{
	Dwarf_Attribute a;

	return dwarf_formstring(dwarf_attr_integrate(d, DW_AT_name, &a));
}

bool die_type(Dwarf_Die *d, Dwarf_Die *out)
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
