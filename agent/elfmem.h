/* elfmem.h - ELF and dynamic-linker records in a program's memory (see elfmem.c). */
#ifndef PROBE_ELFMEM_H
#define PROBE_ELFMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"

/* The memory of one program and the size of its words: 8 (ELFCLASS64)
 * or 4 (ELFCLASS32).  Only mem.read is used. */
struct elfmem {
	struct arch_mem mem;
	unsigned int word;
};

/* One program header, whatever its class. */
struct elfmem_phdr {
	uint32_t type;
	uint64_t offset, vaddr;
};

/* One struct link_map of the dynamic linker (<link.h>). */
struct elfmem_link_map {
	uint64_t addr, name, ld, next, prev;
};

/* Entry `type` of an auxiliary vector image (/proc/PID/auxv): pairs of
 * words.  Returns true and sets *value when present. */
bool elfmem_auxv_find(const uint8_t *auxv, size_t len, unsigned int word,
		      uint64_t type, uint64_t *value);
/* Bytes of the ELF header and of one program header for the class. */
size_t elfmem_ehdr_size(unsigned int word);
size_t elfmem_phdr_size(unsigned int word);
/* A word at `addr`, zero-extended.  0 or the reader's -errno. */
int elfmem_read_word(const struct elfmem *m, uint64_t addr, uint64_t *value);
/* Program header `index` of the table at `phdr`.  0 or -errno. */
int elfmem_phdr(const struct elfmem *m, uint64_t phdr, uint64_t index,
		struct elfmem_phdr *out);
/* e_phoff of the ELF header at `addr`: 0, -EFAULT, or -ENOEXEC when it
 * is not an ELF header of the expected class. */
int elfmem_ehdr_phoff(const struct elfmem *m, uint64_t addr, uint64_t *phoff);
/* The value of dynamic tag `tag` in the _DYNAMIC array at `dynamic`
 * (at most `max` entries): 0, -ENOENT when DT_NULL comes first, or the
 * reader's -errno. */
int elfmem_dynamic_find(const struct elfmem *m, uint64_t dynamic, uint64_t tag,
			unsigned int max, uint64_t *value);
/* The address of that tag's value (d_un) in the array: 0, -ENOENT, or
 * the reader's -errno. */
int elfmem_dynamic_slot(const struct elfmem *m, uint64_t dynamic, uint64_t tag,
			unsigned int max, uint64_t *slot);
/* r_debug.r_map of the struct r_debug at `r_debug`.  0 or -errno. */
int elfmem_r_map(const struct elfmem *m, uint64_t r_debug, uint64_t *lm);
/* The link_map at `lm`.  0 or -errno. */
int elfmem_link_map(const struct elfmem *m, uint64_t lm, struct elfmem_link_map *out);

#endif
