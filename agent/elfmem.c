/*
 * elfmem.c - ELF and dynamic-linker records in a program's memory.
 *
 * The shared-library list and the load bias come from records the kernel
 * and the dynamic linker leave in the program: the auxiliary vector (pairs
 * of words: type, value), the program headers, the _DYNAMIC array (pairs
 * of words: tag, value), struct r_debug (an int, then r_map) and the
 * chain of struct link_map (l_addr, l_name, l_ld, l_next, l_prev: five
 * words).  All of them are made of the program's words, 8 bytes in an
 * ELFCLASS64 program and 4 in an ELFCLASS32 one (32-bit ARM), and the
 * program headers and ELF header have one layout per class (<elf.h>).
 * This file reads them for either, through a memory callback, so it
 * makes no system call and is tested on fake memory (tests/unit).
 *
 * Every target is little-endian, as is the host the agent runs on: a
 * word is its bytes copied into the low end of a uint64_t.
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <string.h>

#include "agent/elfmem.h"

static uint64_t word_at(const uint8_t *p, unsigned int word)
{
	uint64_t v = 0;

	memcpy(&v, p, word);
	return v;
}

bool elfmem_auxv_find(const uint8_t *auxv, size_t len, unsigned int word,
		      uint64_t type, uint64_t *value)
{
	for (size_t i = 0; i + 2 * word <= len; i += 2 * word) {
		uint64_t t = word_at(auxv + i, word);
		if (t == type) {
			*value = word_at(auxv + i + word, word);
			return true;
		}
		if (t == AT_NULL)
			break;
	}
	return false;
}

size_t elfmem_ehdr_size(unsigned int word)
{
	return word == 4 ? sizeof(Elf32_Ehdr) : sizeof(Elf64_Ehdr);
}

size_t elfmem_phdr_size(unsigned int word)
{
	return word == 4 ? sizeof(Elf32_Phdr) : sizeof(Elf64_Phdr);
}

int elfmem_read_word(const struct elfmem *m, uint64_t addr, uint64_t *value)
{
	uint8_t buf[sizeof(uint64_t)];
	int err = m->mem.read(m->mem.ctx, addr, buf, m->word);

	if (err < 0)
		return err;
	*value = word_at(buf, m->word);
	return 0;
}

int elfmem_phdr(const struct elfmem *m, uint64_t phdr, uint64_t index,
		struct elfmem_phdr *out)
{
	uint64_t at = phdr + index * elfmem_phdr_size(m->word);
	int err;

	if (m->word == 4) {
		Elf32_Phdr ph;
		if ((err = m->mem.read(m->mem.ctx, at, &ph, sizeof(ph))) < 0)
			return err;
		*out = (struct elfmem_phdr){ ph.p_type, ph.p_offset, ph.p_vaddr };
	} else {
		Elf64_Phdr ph;
		if ((err = m->mem.read(m->mem.ctx, at, &ph, sizeof(ph))) < 0)
			return err;
		*out = (struct elfmem_phdr){ ph.p_type, ph.p_offset, ph.p_vaddr };
	}
	return 0;
}

int elfmem_ehdr_phoff(const struct elfmem *m, uint64_t addr, uint64_t *phoff)
{
	unsigned char class = m->word == 4 ? ELFCLASS32 : ELFCLASS64;
	int err;

	if (m->word == 4) {
		Elf32_Ehdr eh;
		if ((err = m->mem.read(m->mem.ctx, addr, &eh, sizeof(eh))) < 0)
			return err;
		if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != class)
			return -ENOEXEC;
		*phoff = eh.e_phoff;
	} else {
		Elf64_Ehdr eh;
		if ((err = m->mem.read(m->mem.ctx, addr, &eh, sizeof(eh))) < 0)
			return err;
		if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != class)
			return -ENOEXEC;
		*phoff = eh.e_phoff;
	}
	return 0;
}

int elfmem_dynamic_slot(const struct elfmem *m, uint64_t dynamic, uint64_t tag,
			unsigned int max, uint64_t *slot)
{
	for (unsigned int i = 0; i < max; i++) {
		uint64_t at = dynamic + 2 * (uint64_t)m->word * i, t;
		int err;
		if ((err = elfmem_read_word(m, at, &t)) < 0)
			return err;
		if (t == DT_NULL)
			break;
		if (t == tag) {
			*slot = at + m->word;
			return 0;
		}
	}
	return -ENOENT;
}

int elfmem_dynamic_find(const struct elfmem *m, uint64_t dynamic, uint64_t tag,
			unsigned int max, uint64_t *value)
{
	uint64_t slot;
	int err = elfmem_dynamic_slot(m, dynamic, tag, max, &slot);

	return err < 0 ? err : elfmem_read_word(m, slot, value);
}

/* struct r_debug { int r_version; struct link_map *r_map; ... }: the int
 * is padded to a word. */
int elfmem_r_map(const struct elfmem *m, uint64_t r_debug, uint64_t *lm)
{
	return elfmem_read_word(m, r_debug + m->word, lm);
}

int elfmem_link_map(const struct elfmem *m, uint64_t lm, struct elfmem_link_map *out)
{
	uint64_t w[5];
	int err;

	for (int i = 0; i < 5; i++)
		if ((err = elfmem_read_word(m, lm + (uint64_t)i * m->word, &w[i])) < 0)
			return err;
	*out = (struct elfmem_link_map){ w[0], w[1], w[2], w[3], w[4] };
	return 0;
}
