/*
 * elfsym.h - the function symbols of an ELF file, with their code.
 *
 * Reads .symtab, or when the file is stripped the .symtab of its separate
 * debug file (by build-id or .gnu_debuglink, through libdwfl), or its
 * .dynsym when it has none, keeps defined
 * functions (STT_FUNC, STT_GNU_IFUNC) of non-zero size, one per address,
 * sorted by address, and gives the bytes of each from its executable
 * section.  Names are demangled with libiberty when they are C++.
 */
#ifndef PROBE_CLIENT_ELFSYM_H
#define PROBE_CLIENT_ELFSYM_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

struct elfsym {
	char *name;		/* as in the symbol table */
	char *demangled;	/* C++ demangled name, or NULL */
	char **aliases;		/* other names at the same address */
	size_t naliases;
	uint64_t addr, size;
	const uint8_t *code;	/* size bytes, NULL when not in the file */
	bool thumb;		/* ARM: Thumb code (the symbol's value had
				   bit 0 set; addr has it clear) */
};

/* The address arch_ops.insn_decode takes for the function's code: addr,
 * with bit 0 set for Thumb (arch/arm/arm.h). */
static inline uint64_t elfsym_code_addr(const struct elfsym *s)
{
	return s->addr | (s->thumb ? 1 : 0);
}

/* An ARM mapping symbol: from `addr` on, the code of an executable
 * section is A32 ('a'), Thumb ('t') or data ('d': a literal pool). */
struct elfsym_map {
	uint64_t addr;
	char kind;
};

struct elfsym_file {
	int fd;
	void *elf;		/* Elf * */
	uint16_t machine;	/* e_machine */
	bool stripped;		/* no .symtab, no debug file: dynamic
				   symbols only */
	char *debug_path;	/* the debug file the symbols came from */
	char *debug_note;	/* stripped: why debuginfod had none, or NULL */
	struct elfsym *syms;
	size_t nsyms;
	struct elfsym_map *maps;	/* ARM: $a, $t, $d, sorted by address */
	size_t nmaps;
};

/*
 * Opens `path` and loads its function symbols.  Returns 0, or -errno
 * with a readable message in `err` (size `errsize`): -ENOENT and friends
 * from open, -ENOEXEC for a file that is not ELF, -ENODATA for a file
 * with no function symbols at all.
 */
int elfsym_open(struct elfsym_file *f, const char *path, char *err,
		size_t errsize);
/*
 * The same, but a file with no function symbols opens too (nsyms 0):
 * for callers that need the file (its header, notes, build-id) even when
 * it is stripped, and look symbols up only if asked to.
 */
int elfsym_open_any(struct elfsym_file *f, const char *path, char *err,
		    size_t errsize);
void elfsym_close(struct elfsym_file *f);
/* Debug files are looked for under SYSROOT/usr/lib/debug instead of the
 * host's /usr/lib/debug (NULL: the host's again). */
void elfsym_set_sysroot(const char *sysroot);
/* Where debug files are looked for, as libdwfl's Dwfl_Callbacks
 * debuginfo_path wants it (points to NULL: libdwfl's default). */
char **elfsym_debuginfo_path(void);
/*
 * Around a libdwfl look-up that may download `path`'s debug file from a
 * debuginfod server (DEBUGINFOD_URLS): a download still running after a
 * second says so on stderr, and its end too.  Nothing without
 * libdebuginfod or without a download.  `dwfl` is a Dwfl *.
 */
void elfsym_debuginfod_watch(void *dwfl, const char *path);
void elfsym_debuginfod_unwatch(void);

/*
 * The bytes at `addr` in the executable section of `elf` (an Elf *) that
 * holds it, with *avail set to how many follow up to the section's end;
 * NULL when no executable section of the file holds the address.
 */
const uint8_t *elfsym_code_at(void *elf, uint64_t addr, size_t *avail);

/*
 * ARM: the mapping symbol in force at `addr` ('a', 't' or 'd'), 0 when
 * the file has none at or before it (a stripped file has none); *end
 * (if not NULL) receives where the next one starts, UINT64_MAX if none.
 */
char elfsym_map_at(const struct elfsym_file *f, uint64_t addr, uint64_t *end);

/* Printable name: the demangled one when there is one. */
static inline const char *elfsym_display(const struct elfsym *s)
{
	return s->demangled ? s->demangled : s->name;
}

/*
 * Does `query` name `s`?  Exact symbol name or alias (fclose for
 * _IO_fclose), exact demangled name, or the demangled name without its
 * parameter list ("ns::f" for "ns::f(int)").
 */
bool elfsym_matches(const struct elfsym *s, const char *query);

#endif
