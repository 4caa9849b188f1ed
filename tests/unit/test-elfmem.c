/*
 * test-elfmem.c - auxv, program headers, _DYNAMIC, r_debug and link_map
 * read from fake memory, for 64-bit and 32-bit programs.
 *
 * The images are built with <elf.h>'s own structs for each class and the
 * dynamic linker's records as the ABI lays them out (an int padded to a
 * word, then words), at an address above 4 GiB for the 64-bit program so
 * that a word read too short shows.  Each test then reads them back
 * through elfmem and checks the values put there.
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "agent/elfmem.h"

#define MEM_SIZE 4096

struct fake {
	uint64_t base;
	uint8_t bytes[MEM_SIZE];
};

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct fake *f = ctx;

	if (addr < f->base || addr - f->base > MEM_SIZE || len > MEM_SIZE - (addr - f->base))
		return -EFAULT;
	memcpy(buf, f->bytes + (addr - f->base), len);
	return 0;
}

static void put_word(struct fake *f, uint64_t addr, unsigned int word, uint64_t v)
{
	memcpy(f->bytes + (addr - f->base), &v, word);
}

static void put(struct fake *f, uint64_t addr, const void *data, size_t len)
{
	memcpy(f->bytes + (addr - f->base), data, len);
}

/* Offsets of the parts of one image. */
enum { EHDR = 0, PHDRS = 0x100, DYNAMIC = 0x300, R_DEBUG = 0x400,
       LM0 = 0x500, LM1 = 0x600, NAME1 = 0x700 };

/*
 * A program at `f->base` with the ELF header, two program headers
 * (PT_PHDR, PT_DYNAMIC), _DYNAMIC with DT_DEBUG, r_debug and two
 * link_maps.
 */
static void build(struct fake *f, unsigned int word)
{
	uint64_t b = f->base;

	memset(f->bytes, 0, sizeof(f->bytes));
	if (word == 4) {
		Elf32_Ehdr eh = { .e_phoff = sizeof(Elf32_Ehdr) };
		memcpy(eh.e_ident, ELFMAG, SELFMAG);
		eh.e_ident[EI_CLASS] = ELFCLASS32;
		put(f, b + EHDR, &eh, sizeof(eh));
		Elf32_Phdr ph[2] = {
			{ .p_type = PT_PHDR, .p_offset = PHDRS, .p_vaddr = PHDRS },
			{ .p_type = PT_DYNAMIC, .p_offset = DYNAMIC, .p_vaddr = DYNAMIC },
		};
		put(f, b + PHDRS, ph, sizeof(ph));
	} else {
		Elf64_Ehdr eh = { .e_phoff = sizeof(Elf64_Ehdr) };
		memcpy(eh.e_ident, ELFMAG, SELFMAG);
		eh.e_ident[EI_CLASS] = ELFCLASS64;
		put(f, b + EHDR, &eh, sizeof(eh));
		Elf64_Phdr ph[2] = {
			{ .p_type = PT_PHDR, .p_offset = PHDRS, .p_vaddr = PHDRS },
			{ .p_type = PT_DYNAMIC, .p_offset = DYNAMIC, .p_vaddr = DYNAMIC },
		};
		put(f, b + PHDRS, ph, sizeof(ph));
	}
	/* _DYNAMIC: DT_NEEDED, DT_DEBUG, DT_NULL. */
	uint64_t d = b + DYNAMIC;
	put_word(f, d, word, DT_NEEDED);
	put_word(f, d + word, word, 1);
	put_word(f, d + 2 * word, word, DT_DEBUG);
	put_word(f, d + 3 * word, word, b + R_DEBUG);
	put_word(f, d + 4 * word, word, DT_NULL);
	/* r_debug: r_version (int, padded), r_map. */
	put_word(f, b + R_DEBUG, 4, 1);
	put_word(f, b + R_DEBUG + word, word, b + LM0);
	/* link_maps: l_addr, l_name, l_ld, l_next, l_prev. */
	uint64_t lm0[5] = { 0, b + NAME1 + 16, b + DYNAMIC, b + LM1, 0 };
	uint64_t lm1[5] = { b + 0x800, b + NAME1, b + 0x900, 0, b + LM0 };
	for (int i = 0; i < 5; i++) {
		put_word(f, b + LM0 + i * word, word, lm0[i]);
		put_word(f, b + LM1 + i * word, word, lm1[i]);
	}
	put(f, b + NAME1, "/lib/libc.so.6", 15);
}

static void check_image(unsigned int word, uint64_t base)
{
	static struct fake f;
	struct elfmem m = { { &f, fake_read, NULL }, word };
	struct elfmem_phdr ph;
	struct elfmem_link_map l;
	uint64_t v;

	f.base = base;
	build(&f, word);
	assert_int_equal(elfmem_ehdr_size(word), word == 4 ? 52 : 64);
	assert_int_equal(elfmem_ehdr_phoff(&m, base, &v), 0);
	assert_int_equal(v, elfmem_ehdr_size(word));
	assert_int_equal(elfmem_phdr(&m, base + PHDRS, 0, &ph), 0);
	assert_int_equal(ph.type, PT_PHDR);
	assert_int_equal(ph.vaddr, PHDRS);
	assert_int_equal(elfmem_phdr(&m, base + PHDRS, 1, &ph), 0);
	assert_int_equal(ph.type, PT_DYNAMIC);
	assert_int_equal(ph.offset, DYNAMIC);
	assert_int_equal(elfmem_dynamic_find(&m, base + DYNAMIC, DT_DEBUG, 512, &v), 0);
	assert_int_equal(v, base + R_DEBUG);
	assert_int_equal(elfmem_dynamic_find(&m, base + DYNAMIC, DT_SYMTAB, 512, &v), -ENOENT);
	assert_int_equal(elfmem_r_map(&m, base + R_DEBUG, &v), 0);
	assert_int_equal(v, base + LM0);
	assert_int_equal(elfmem_link_map(&m, v, &l), 0);
	assert_int_equal(l.next, base + LM1);
	assert_int_equal(l.ld, base + DYNAMIC);
	assert_int_equal(elfmem_link_map(&m, l.next, &l), 0);
	assert_int_equal(l.addr, base + 0x800);
	assert_int_equal(l.name, base + NAME1);
	assert_int_equal(l.ld, base + 0x900);
	assert_int_equal(l.next, 0);
	assert_int_equal(l.prev, base + LM0);
	/* An image of the other class is not taken for this one. */
	build(&f, word == 4 ? 8 : 4);
	assert_int_equal(elfmem_ehdr_phoff(&m, base, &v), -ENOEXEC);
	/* Reads past the memory fail with the reader's error. */
	assert_int_equal(elfmem_link_map(&m, base + MEM_SIZE - word, &l), -EFAULT);
}

static void test_image_64(void **state)
{
	(void)state;
	check_image(8, 0x7f1234560000ull);
}

static void test_image_32(void **state)
{
	(void)state;
	check_image(4, 0x10000);
}

static void test_auxv(void **state)
{
	(void)state;
	/* AT_PHDR, AT_PHNUM, AT_HWCAP2, AT_NULL in each word size. */
	uint64_t pairs[][2] = { { AT_PHDR, 0x400040 }, { AT_PHNUM, 11 },
				{ AT_HWCAP2, 2 }, { AT_NULL, 0 }, { AT_ENTRY, 99 } };
	for (unsigned int word = 4; word <= 8; word += 4) {
		uint8_t auxv[sizeof(pairs)];
		size_t len = 0;
		uint64_t v;
		for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
			memcpy(auxv + len, &pairs[i][0], word);
			memcpy(auxv + len + word, &pairs[i][1], word);
			len += 2 * word;
		}
		assert_true(elfmem_auxv_find(auxv, len, word, AT_PHDR, &v));
		assert_int_equal(v, 0x400040);
		assert_true(elfmem_auxv_find(auxv, len, word, AT_PHNUM, &v));
		assert_int_equal(v, 11);
		assert_true(elfmem_auxv_find(auxv, len, word, AT_HWCAP2, &v));
		assert_int_equal(v, 2);
		/* Past AT_NULL is not the vector. */
		assert_false(elfmem_auxv_find(auxv, len, word, AT_ENTRY, &v));
		/* A truncated last pair is not read. */
		assert_false(elfmem_auxv_find(auxv, 2 * word - 1, word, AT_PHDR, &v));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_image_64),
		cmocka_unit_test(test_image_32),
		cmocka_unit_test(test_auxv),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
