/*
 * dwarfval.h - what DWARF says about a probe's place: its function's
 * parameters and their types, variables by name, return values, source
 * lines, and where the prologue ends; compiled to the collections the
 * agent runs and to the descriptions dump prints from (typed.h).
 *
 * Reads DWARF with libdw only, from the module's own file or its separate
 * debug file (build-id, .gnu_debuglink, dwz's alternate file), found by
 * libdwfl as elfsym.c finds symbols.  Addresses in and out are link-time
 * addresses of the module's file; runtime addresses appear only in the
 * agent expressions (through `bias`).
 */
#ifndef PROBE_CLIENT_DWARFVAL_H
#define PROBE_CLIENT_DWARFVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "client/typed.h"
#include "protocol/ax-emit.h"

struct dv_module;

/*
 * The DWARF of the ELF file `path`.  0, or -ENODATA (with a message in
 * err) when neither the file nor a debug file of it has any.
 */
int dv_open(struct dv_module **out, const char *path, char *err,
	    size_t errsize);
void dv_close(struct dv_module *m);

/* The debug file the DWARF came from (the file itself when it has it). */
const char *dv_path(const struct dv_module *m);

/*
 * Where gdb's `break FUNC` stops for the function at `entry`: the
 * address of the second line-table row of the function (after the
 * prologue has stored the parameters where DWARF says they are), or the
 * entry itself when the function's unit has location lists (optimized
 * code, whose locations hold from the first instruction on, which is
 * gdb's test too).  0, or -ENOENT when DWARF does not describe the
 * function.
 */
int dv_after_prologue(struct dv_module *m, uint64_t entry, uint64_t *out);

/*
 * Every place where the code of FILE:LINE starts: per function (and per
 * inlined copy) the lowest address of a row of that line.  FILE is
 * matched by its last path components.  Returns how many (at most max),
 * or -ENOENT with a message: no such file, or no code at that line
 * (naming the nearest lines that have code).
 */
int dv_line_addrs(struct dv_module *m, const char *file, int line,
		  uint64_t *addrs, size_t max, char *err, size_t errsize);

/* What compiling values needs from the recorder. */
struct dv_target {
	const char *arch;		/* gdb's name: "i386:x86-64", "aarch64" */
	uint64_t bias;			/* runtime = link-time + bias */
	/* gdb register number of a register name, or -1. */
	int (*regnum)(void *ctx, const char *name);
	void *ctx;
	unsigned int string_max;	/* bytes of a char * collected */
	/* The trace state variable a return probe stores the raw return
	 * register in (0: none).  An integer or pointer return value is
	 * read from it, so that its frames need no register block: gdb's
	 * tdump takes a frame whose pc is not its tracepoint's address for
	 * a while-stepping frame, and shows nothing of it. */
	unsigned int retval_tsv;
};

/* The agent expressions of one probe location: each collects memory
 * (ends with `trace`/`tracenz` then `end`); `regs`: collect the register
 * block too (the typed values need it). */
struct dv_collect {
	struct ax_emit *code;
	size_t n;
	bool regs;
};

void dv_collect_free(struct dv_collect *c);

/*
 * Adds to `p` and `c` the values of a probe at link-time address `pc`:
 *   dv_add_args:   every parameter of the function (or inlined copy)
 *                  around pc; -ENOENT when DWARF has no function there;
 *   dv_add_path:   one C access path, NAME { .M | ->M | [N] } or *NAME,
 *                  where NAME is a parameter, a local in scope at pc or
 *                  a global of the unit;
 *   dv_add_retval: the return value of the function whose entry is
 *                  `pc`, read at its return (x86-64: rax/xmm0,
 *                  aarch64: x0/v0, or retval_tsv); -ENOENT when DWARF
 *                  has no function
 *                  there, -ENOTSUP for what cannot be read from the
 *                  registers at the return (small structs, long double).
 * 0 or -errno with a message in err.
 */
int dv_add_args(struct dv_module *m, uint64_t pc, const struct dv_target *t,
		struct typed_probe *p, struct dv_collect *c, char *err,
		size_t errsize);
int dv_add_path(struct dv_module *m, uint64_t pc, const char *path,
		const struct dv_target *t, struct typed_probe *p,
		struct dv_collect *c, char *err, size_t errsize);
int dv_add_retval(struct dv_module *m, uint64_t pc, const struct dv_target *t,
		  struct typed_probe *p, struct dv_collect *c, char *err,
		  size_t errsize);

#endif
