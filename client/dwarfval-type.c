/*
 * dwarfval-type.c - DWARF types turned into the descriptions dump prints
 * from (typed.h): sizes, C spellings ("const struct order *"), members
 * and their offsets, array dimensions.
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

uint64_t type_size(Dwarf_Die *t)
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
void type_name(Dwarf_Die *t, char *buf, size_t size, int depth)
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

bool member_offset(Dwarf_Die *mem, uint64_t *out)
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
int array_dims(Dwarf_Die *t, uint64_t *dims, int max)
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
int add_type(struct tbuild *b, Dwarf_Die *t, bool expand, int depth)
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
