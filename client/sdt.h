/*
 * sdt.h - USDT probes: the `.note.stapsdt` notes of an ELF file.
 *
 * <sys/sdt.h> (systemtap, also used by DTrace-style DTRACE_PROBE macros)
 * compiles a probe site to a single nop and records it in an ELF note of
 * type NT_STAPSDT (3), owner "stapsdt".  The note's descriptor holds
 * three addresses of the target's word size, then three NUL-terminated
 * strings:
 *
 *	pc		the nop, at link time
 *	base		the link-time address of the .stapsdt.base section
 *	semaphore	a 2-byte counter the program tests before it
 *			computes costly arguments; 0 when there is none
 *	provider, name, arguments
 *
 * A tool that moves sections after the link (prelink) rewrites the
 * section headers but not the notes, so the pc is shifted by the
 * distance between the section's real address and the note's `base`.
 *
 * The argument string lists one operand per argument, separated by
 * spaces, each `[-]SIZE@OPERAND`: SIZE is the value's width in bytes
 * (1, 2, 4, 8), negative for a signed value, and OPERAND is what the
 * compiler had the value in, spelled in the arch's assembler syntax at
 * the nop.  Old notes may leave out `SIZE@`: the value is then 8 bytes,
 * unsigned.  The operand syntax is per arch, and so is its parser
 * (arch_ops.sdt_operand_parse; x86-64's AT&T forms are listed in
 * arch/x86_64/x86_64-sdt.c).  An operand that names a symbol
 * (x86-64 `sym(%rip)`) means the memory at that symbol of the file,
 * whose link-time address comes from the file's symbol table.
 */
#ifndef PROBE_CLIENT_SDT_H
#define PROBE_CLIENT_SDT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"
#include "protocol/ax-emit.h"

#define SDT_NOTE_TYPE 3		/* NT_STAPSDT */
#define SDT_NOTE_OWNER "stapsdt"
#define SDT_BASE_SECTION ".stapsdt.base"

/* Where an argument's value is at the probe (the arch's operand kinds). */
enum sdt_arg_kind {
	SDT_ARG_REG = ARCH_OPERAND_REG,		/* in a register (part): reg */
	SDT_ARG_IMM = ARCH_OPERAND_IMM,		/* a constant: imm */
	SDT_ARG_MEM = ARCH_OPERAND_MEM,		/* at base + index * scale + disp */
	SDT_ARG_STATIC = ARCH_OPERAND_STATIC,	/* at a link-time address:
						 * symbol + disp */
};

struct sdt_arg {
	unsigned int size;	/* 1, 2, 4, 8 bytes */
	bool is_signed;
	enum sdt_arg_kind kind;
	struct arch_asm_reg reg;	/* REG: the register; MEM: the base,
					 * regnum -1 when there is none */
	struct arch_asm_reg index;	/* MEM: regnum -1 when there is none */
	unsigned int scale;	/* MEM: 1, 2, 4, 8 */
	int64_t imm;		/* IMM: the constant as written */
	int64_t disp;		/* MEM, STATIC: displacement or offset */
	char *symbol;		/* MEM, STATIC: the symbol of the
				 * displacement, NULL for a number */
	uint64_t sym_addr;	/* its link-time address... */
	bool sym_resolved;	/* ...once sdt_read_elf() found it */
};

struct sdt_probe {
	char *provider, *name;
	uint64_t pc;		/* link-time address of the nop, adjusted */
	uint64_t note_pc;	/* as the note says */
	uint64_t note_base;	/* .stapsdt.base as the note says */
	uint64_t base;		/* .stapsdt.base in the section headers, or
				 * note_base when the file has no section */
	uint64_t semaphore;	/* link-time address, 0 if none */
	char *args_text;	/* the argument string, "" for none */
	struct sdt_arg *args;
	size_t nargs;
	char *error;		/* why the arguments are unusable, or NULL */
};

struct sdt_file {
	uint16_t machine;	/* e_machine */
	struct sdt_probe *probes;
	size_t nprobes;
};

/*
 * Parses one operand `[-]SIZE@OPERAND` of `len` bytes at `text` for the
 * arch of e_machine `machine` (EM_X86_64) into *a (sdt_arg_clear frees
 * it).  Returns 0; -EINVAL with the reason in `err` for text it cannot
 * parse; -EOPNOTSUPP for a machine the build has no arch for or an arch
 * whose operands are not parsed yet.
 */
int sdt_parse_arg(uint16_t machine, const char *text, size_t len,
		  struct sdt_arg *a, char *err, size_t errsize);
void sdt_arg_clear(struct sdt_arg *a);

/*
 * Parses a whole argument string (operands separated by blanks) into a
 * new array *args of *nargs entries (sdt_args_free frees it).  Returns 0
 * or the error of the first bad operand, with `err` naming it:
 * "argument 2 '-4@%foo': unknown register %foo".
 */
int sdt_parse_args(uint16_t machine, const char *text, struct sdt_arg **args,
		   size_t *nargs, char *err, size_t errsize);
void sdt_args_free(struct sdt_arg *args, size_t nargs);

/*
 * Reads every USDT probe of the ELF file at `path` into *f, in note
 * order.  A probe whose arguments cannot be parsed, or name a symbol
 * the file does not define, is kept with `error` set ("provider:name:
 * argument 1 '...': ...").  Returns 0 (a file without notes has
 * nprobes 0); -errno from open, -ENOEXEC for a file that is not ELF,
 * -EBADMSG for a malformed note, with a message in `err`.
 */
int sdt_open(struct sdt_file *f, const char *path, char *err, size_t errsize);
/* The same from an Elf * already open (libelf). */
int sdt_read_elf(struct sdt_file *f, void *elf, char *err, size_t errsize);
void sdt_close(struct sdt_file *f);

/*
 * Appends to `e` the agent-expression bytecode that pushes the value of
 * argument `a` at the probe, `size` bytes sign- or zero-extended to 64
 * bits as the argument says.  Registers are read with `reg` (gdb
 * numbering), memory with ref8..ref64.  `bias` is what the loader added
 * to the file's link-time addresses (0 for a non-PIE executable, the
 * load base of a PIE or shared object): a STATIC argument is read at
 * sym_addr + disp + bias.  Returns 0, -ENOENT for a STATIC argument
 * whose symbol was never resolved, -EINVAL for a malformed argument, or
 * the builder's sticky error.  Nothing is appended on error except what
 * the builder already failed on.
 */
int sdt_arg_emit(const struct sdt_arg *a, struct ax_emit *e, uint64_t bias);

/*
 * The next probe after `after` (NULL: from the first) named
 * PROVIDER:NAME, or NULL.  One probe name may have several sites (the
 * macro in an inlined function, or written twice): a tracer enables
 * every one of them.
 */
const struct sdt_probe *sdt_find_next(const struct sdt_file *f,
				      const struct sdt_probe *after,
				      const char *provider, const char *name);

/* "sdt:PROVIDER:NAME" into buf, snprintf style. */
int sdt_probe_fullname(const struct sdt_probe *p, char *buf, size_t size);

#endif
