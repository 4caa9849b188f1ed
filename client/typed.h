/*
 * typed.h - typed values of a probe: their C types, where each value is
 * at the probe's address, and how they print.
 *
 * The recorder (dwarfval.c) learns all this from DWARF; `dump` reads only
 * the trace file, so the recorder writes it there, as comment lines among
 * each location's `cmd` source strings (the QTDPsrc echo of the file's
 * `tp Z` lines).  gdb skips comment lines of a tracepoint's actions when
 * it loads a file, and keeps its real actions: the file stays one gdb
 * opens without a warning.  One line per fact, each short enough for the
 * 1000-byte lines gdb reads:
 *
 *   #pt pc REGNUM                        the register that holds the pc
 *   #pt h R|M                            registers / memory were collected
 *                                        only for the typed values: the
 *                                        dump does not list them
 *   #pt t IDX KIND SIZE TARGET COUNT SIGNED NAME
 *                                        type IDX (0, 1, 2... in order);
 *                                        KIND i integer, c char, b bool,
 *                                        f float, p pointer, s struct,
 *                                        u union, a array, e enum,
 *                                        o anything else (printed by name);
 *                                        TARGET the pointee or element
 *                                        type or -1, COUNT array elements
 *   #pt m IDX OFFSET TYPE BITOFF BITS NAME   a member of struct/union IDX
 *                                        (BITS 0: not a bit-field)
 *   #pt k IDX VALUE NAME                 an enumerator of enum IDX
 *   #pt v TYPE PLACE REG CODE FLAGS NAME  a value, in the order printed:
 *                                        PLACE m (memory at the address
 *                                        CODE computes), r (register REG),
 *                                        x (CODE computes the value, from
 *                                        registers, memory or the frame's
 *                                        trace state variables), n
 *                                        (optimized out); CODE is agent
 *                                        expression bytecode in hex (- for
 *                                        none); FLAGS: d the pointee was
 *                                        collected, s a string was, r the
 *                                        return value, - none
 *
 * Addresses are recomputed by running CODE (agent expressions, ax.h)
 * on the frame's registers and memory blocks: the recorder collected
 * every byte that CODE reads.
 */
#ifndef PROBE_CLIENT_TYPED_H
#define PROBE_CLIENT_TYPED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rsp_buf;

enum ty_kind {
	TY_INT = 'i', TY_CHAR = 'c', TY_BOOL = 'b', TY_FLOAT = 'f',
	TY_PTR = 'p', TY_STRUCT = 's', TY_UNION = 'u', TY_ARRAY = 'a',
	TY_ENUM = 'e', TY_OPAQUE = 'o',
};

struct ty_member {
	char *name;
	uint64_t offset;
	int type;
	unsigned int bit_offset, bit_size;	/* from the member's first bit */
};

struct ty_enumerator {
	int64_t value;
	char *name;
};

struct ty {
	enum ty_kind kind;
	char *name;			/* as C writes it: "const struct order *" */
	uint64_t size;
	int target;			/* TY_PTR, TY_ARRAY: type index or -1 */
	uint64_t count;			/* TY_ARRAY */
	bool is_signed;			/* TY_INT, TY_CHAR, TY_ENUM */
	struct ty_member *members;
	size_t nmembers;
	struct ty_enumerator *enums;
	size_t nenums;
};

enum tv_place {
	TV_MEM = 'm', TV_REG = 'r', TV_VALUE = 'x', TV_NONE = 'n',
};

#define TV_DEREF 1u		/* the pointee was collected */
#define TV_STRING 2u		/* the string it points to was collected */
#define TV_RETURN 4u		/* the function's return value */

struct tv {
	char *name;
	int type;
	enum tv_place place;
	unsigned int reg;		/* TV_REG */
	uint8_t *code;			/* TV_MEM, TV_VALUE */
	size_t code_len;
	unsigned int flags;
};

/* The typed values of one location of a tracepoint. */
struct typed_probe {
	long tpnum;
	uint64_t addr;
	int pc_reg;			/* -1: unknown */
	bool hide_regs, hide_mem;
	struct ty *types;
	size_t ntypes;
	struct tv *vals;
	size_t nvals;
};

/* ---- building (the recorder) ---- */

void typed_probe_init(struct typed_probe *p);
void typed_probe_free(struct typed_probe *p);
/* Appends a type; returns its index.  `name` is copied. */
int typed_add_type(struct typed_probe *p, enum ty_kind kind, const char *name,
		   uint64_t size, int target, uint64_t count, bool is_signed);
void typed_add_member(struct typed_probe *p, int type, const char *name,
		      uint64_t offset, int mtype, unsigned int bit_offset,
		      unsigned int bit_size);
void typed_add_enum(struct typed_probe *p, int type, int64_t value,
		    const char *name);
/* Appends a value; code (may be NULL) is copied. */
struct tv *typed_add_value(struct typed_probe *p, const char *name, int type,
			   enum tv_place place, unsigned int reg,
			   const uint8_t *code, size_t code_len,
			   unsigned int flags);
/* Calls `line` with every "#pt ..." line describing p (NUL-terminated,
 * each under 400 bytes: longer names are cut). */
int typed_write(const struct typed_probe *p,
		int (*line)(void *ctx, const char *text), void *ctx);

/* ---- reading (dump) ---- */

/* All typed locations of a file. */
struct typed_file {
	struct typed_probe *probes;
	size_t nprobes;
	bool finished;
};

/* Takes one `cmd` source string of location (tpnum, addr): a "#pt" line
 * joins that location's description, anything else is ignored.  -EINVAL
 * for a "#pt" line that does not parse (the location is then dropped). */
int typed_file_add_line(struct typed_file *f, long tpnum, uint64_t addr,
			const char *text);
/* After the last line: drops the locations whose description does not
 * hold together (a type index out of the table).  typed_file_find finds
 * nothing before. */
void typed_file_finish(struct typed_file *f);
void typed_file_free(struct typed_file *f);
/* The location of a frame of tracepoint tpnum: the one at `pc` when the
 * tracepoint has several (pc 0: the first).  NULL when it has no types. */
const struct typed_probe *typed_file_find(const struct typed_file *f,
					  long tpnum, uint64_t pc);

/* What a frame holds, for the renderer. */
struct typed_src {
	/* The bytes of register `regnum` and their count, NULL when the
	 * frame has no registers. */
	const uint8_t *(*reg)(void *ctx, unsigned int regnum, size_t *size);
	/* Copies the collected bytes at [addr, addr + len) into buf:
	 * returns how many leading bytes the frame holds. */
	size_t (*mem)(void *ctx, uint64_t addr, void *buf, size_t len);
	void *ctx;
	/* The value of trace state variable `num` in the frame: 0, or
	 * -ENOENT when the frame has none (may be NULL). */
	int (*tsv)(void *ctx, unsigned int num, int64_t *value);
};

/* Entry values as "(o=0x7ffe... {id=1, price=1.25}, n=3)", the return
 * value as " = 125": appended to out. */
void typed_render_text(const struct typed_probe *p, const struct typed_src *src,
		       struct rsp_buf *out);
/* "\"typed\":{...},\"types\":{...}" (no braces around): appended. */
void typed_render_json(const struct typed_probe *p, const struct typed_src *src,
		       struct rsp_buf *out);

#endif
