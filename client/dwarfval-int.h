/*
 * dwarfval-int.h - what the files of dwarfval.h's implementation share:
 *
 *   dwarfval.c        the module (dv_open) and values: parameters, paths
 *                     (`it->in.b[2]`, `*p`, `v@4`), return values
 *   dwarfval-scope.c  scopes around a pc, the prologue's end, source lines
 *   dwarfval-loc.c    location expressions compiled to agent expressions
 *   dwarfval-type.c   type descriptions
 */
#ifndef PROBE_CLIENT_DWARFVAL_INT_H
#define PROBE_CLIENT_DWARFVAL_INT_H

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "client/dwarfval.h"

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

/* Formats the message into err; returns code. */
int fail(char *err, size_t errsize, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* dwarfval-scope.c */
int scopes_at(struct dv_module *m, Dwarf_Addr a, Dwarf_Die **scopes,
	      int *fn, int *outer);
const char *die_name(Dwarf_Die *d);
bool die_type(Dwarf_Die *d, Dwarf_Die *out);

/* dwarfval-loc.c */
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

void append_code(struct ax_emit *e, const struct ax_emit *from);
int compile_ops(struct loc_ctx *lc, const Dwarf_Op *ops, size_t n,
		struct place *pl, char *err, size_t errsize);

/* dwarfval-type.c */
struct tbuild {
	struct typed_probe *p;
	struct {
		Dwarf_Off off;
		bool expand;
		int idx;
	} map[DV_MAX_TYPES];
	size_t n;
};

uint64_t type_size(Dwarf_Die *t);
void type_name(Dwarf_Die *t, char *buf, size_t size, int depth);
bool member_offset(Dwarf_Die *mem, uint64_t *out);
int array_dims(Dwarf_Die *t, uint64_t *dims, int max);
int add_type(struct tbuild *b, Dwarf_Die *t, bool expand, int depth);

#endif
