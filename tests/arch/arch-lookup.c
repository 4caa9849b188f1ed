/*
 * arch-lookup.c - choosing an arch by ELF machine and by gdb name, and
 * the calling-convention data every arch_ops carries (cmocka).
 *
 * The lookups are checked over every arch of the build (arch_nth), so a
 * new arch is covered by adding it to arch.c; the x86-64 rows compare
 * the ABI with the System V AMD64 document by register name, never by
 * number, so that they also prove the regnums point where they should.
 */
#include "config.h"

#include <elf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "arch/arch.h"

static size_t narches(void)
{
	size_t n = 0;

	while (arch_nth(n))
		n++;
	return n;
}

/* Every arch is found by its own e_machine and gdb name, and only by them. */
static void test_lookup_every_arch(void **state)
{
	size_t n = narches();
	char name[128];

	assert_true(n >= 1);
	for (size_t i = 0; i < n; i++) {
		const struct arch_ops *ops = arch_nth(i);

		assert_ptr_equal(arch_for_elf_machine(ops->elf_machine), ops);
		assert_ptr_equal(arch_for_gdb_arch(ops->gdb_arch), ops);
		/* a variant of the name is the same arch */
		snprintf(name, sizeof(name), "%s:intel", ops->gdb_arch);
		assert_ptr_equal(arch_for_gdb_arch(name), ops);
		/* a longer word, or a prefix, is not */
		snprintf(name, sizeof(name), "%sx", ops->gdb_arch);
		assert_ptr_not_equal(arch_for_gdb_arch(name), ops);
		snprintf(name, sizeof(name), "%.*s", (int)strlen(ops->gdb_arch) - 1,
			 ops->gdb_arch);
		assert_ptr_not_equal(arch_for_gdb_arch(name), ops);
		for (size_t j = 0; j < i; j++) {
			assert_int_not_equal(arch_nth(j)->elf_machine, ops->elf_machine);
			assert_string_not_equal(arch_nth(j)->gdb_arch, ops->gdb_arch);
		}
	}
	assert_null(arch_nth(n));
	assert_null(arch_for_elf_machine(EM_NONE));
	assert_null(arch_for_gdb_arch(NULL));
	assert_null(arch_for_gdb_arch(""));
}

/* The agent's arch is one of the build's. */
static void test_host_in_table(void **state)
{
	const struct arch_ops *host = arch_host();
	bool found = false;

	for (size_t i = 0; arch_nth(i); i++)
		found |= arch_nth(i) == host;
	assert_true(found);
}

/* ABI data that holds on every arch. */
static void test_abi_every_arch(void **state)
{
	for (size_t i = 0; arch_nth(i); i++) {
		const struct arch_ops *ops = arch_nth(i);
		unsigned int nregs = ops->nregs_for(0);
		size_t n = 0;

		assert_true(ops->ptr_size == 4 || ops->ptr_size == 8);
		/* pc and sp are pointer-sized */
		assert_int_equal(ops->regs[ops->pc_regnum].bitsize, 8 * ops->ptr_size);
		assert_int_equal(ops->regs[ops->sp_regnum].bitsize, 8 * ops->ptr_size);
		assert_non_null(ops->arg_regs);
		for (; ops->arg_regs[n] >= 0; n++) {
			int r = ops->arg_regs[n];

			assert_true(n < 16);
			assert_true((unsigned int)r < nregs);
			assert_int_equal(ops->regs[r].bitsize, 8 * ops->ptr_size);
			assert_int_not_equal(r, ops->pc_regnum);
			assert_int_not_equal(r, ops->sp_regnum);
			for (size_t j = 0; j < n; j++)
				assert_int_not_equal(ops->arg_regs[j], r);
		}
		assert_true(n >= 4);
		assert_true(ops->retval_regnum >= 0 &&
			    (unsigned int)ops->retval_regnum < nregs);
		assert_int_equal(ops->regs[ops->retval_regnum].bitsize,
				 8 * ops->ptr_size);
	}
}

/* x86-64: the System V AMD64 ABI, by register name. */
static void test_abi_x86_64(void **state)
{
	static const char *const args[] = { "rdi", "rsi", "rdx", "rcx", "r8", "r9" };
	const struct arch_ops *ops = arch_for_elf_machine(EM_X86_64);
	size_t n = 0;

	assert_ptr_equal(ops, &x86_64_arch_ops);
	assert_ptr_equal(arch_for_gdb_arch("i386:x86-64"), ops);
	assert_null(arch_for_gdb_arch("i386"));
	assert_int_equal(ops->ptr_size, 8);
	for (; ops->arg_regs[n] >= 0; n++) {
		assert_true(n < 6);
		assert_string_equal(ops->regs[ops->arg_regs[n]].name, args[n]);
	}
	assert_int_equal(n, 6);
	assert_string_equal(ops->regs[ops->retval_regnum].name, "rax");
}

/* aarch64: the AAPCS64, by register name; the breakpoint is BRK #0. */
static void test_abi_aarch64(void **state)
{
	static const char *const args[] = { "x0", "x1", "x2", "x3",
					    "x4", "x5", "x6", "x7" };
	static const uint8_t brk0[] = { 0x00, 0x00, 0x20, 0xd4 };
	const struct arch_ops *ops = arch_for_elf_machine(EM_AARCH64);
	size_t n = 0;

	assert_ptr_equal(ops, &aarch64_arch_ops);
	assert_ptr_equal(arch_for_gdb_arch("aarch64"), ops);
	assert_ptr_equal(arch_for_gdb_arch("aarch64:ilp32"), ops);
	assert_int_equal(ops->ptr_size, 8);
	for (; ops->arg_regs[n] >= 0; n++) {
		assert_true(n < 8);
		assert_string_equal(ops->regs[ops->arg_regs[n]].name, args[n]);
	}
	assert_int_equal(n, 8);
	assert_string_equal(ops->regs[ops->retval_regnum].name, "x0");
	assert_string_equal(ops->regs[ops->pc_regnum].name, "pc");
	assert_string_equal(ops->regs[ops->sp_regnum].name, "sp");
	assert_string_equal(ops->regs[ops->fp_regnum].name, "x29");
	assert_string_equal(ops->regs[ops->flags_regnum].name, "cpsr");
	assert_int_equal(ops->bp_len, 4);
	assert_memory_equal(ops->bp_insn, brk0, 4);
	assert_int_equal(ops->bp_pc_after_trap, 0);
}

/* The message for a machine the build has no arch for. */
/* The thread pointer is named by regnum where the arch has it in its
 * register file (x86-64's fs_base), and never points past the table. */
static void test_thread_pointer(void **state)
{
	static const struct { const char *arch, *tp; } want[] = {
		{ "x86_64", "fs_base" }, { "aarch64", NULL }, { "arm", NULL },
	};
	(void)state;
	for (size_t i = 0; i < narches(); i++) {
		const struct arch_ops *ops = arch_nth(i);
		const char *tp = NULL;
		bool found = false;

		if (ops->tp_regnum >= 0) {
			assert_true((unsigned int)ops->tp_regnum < ops->nregs_for(~0u));
			tp = ops->regs[ops->tp_regnum].name;
		}
		for (size_t j = 0; j < sizeof(want) / sizeof(want[0]); j++)
			if (!strcmp(want[j].arch, ops->name)) {
				found = true;
				if (want[j].tp)
					assert_non_null(tp), assert_string_equal(tp, want[j].tp);
				else
					assert_null(tp);
			}
		assert_true(found);
	}
}

static void test_unsupported_message(void **state)
{
	char buf[256], small[24];
	unsigned int missing = 0;

	/* a machine no arch of the build claims */
	static const unsigned int candidates[] = { EM_AARCH64, EM_ARM, EM_RISCV, 0x7777 };
	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++)
		if (!arch_for_elf_machine(candidates[i])) {
			missing = candidates[i];
			break;
		}
	assert_int_not_equal(missing, 0);
	arch_machine_unsupported(missing, buf, sizeof(buf));
	snprintf(small, sizeof(small), "e_machine %u", missing);
	assert_memory_equal(buf, small, strlen(small));
	assert_non_null(strstr(buf, "this build has no arch for it (it has "));
	for (size_t i = 0; arch_nth(i); i++)
		assert_non_null(strstr(buf, arch_nth(i)->name));
	assert_int_equal(buf[strlen(buf) - 1], ')');

	arch_machine_unsupported(EM_RISCV, buf, sizeof(buf));
	assert_memory_equal(buf, "e_machine 243 (riscv): ", 23);
	arch_machine_unsupported(0x7777, buf, sizeof(buf));
	assert_memory_equal(buf, "e_machine 30583: ", 17);

	/* truncated, never overrun */
	memset(small, 'x', sizeof(small));
	assert_ptr_equal(arch_machine_unsupported(missing, small, 10), small);
	assert_int_equal(strlen(small), 9);
	assert_int_equal(small[10], 'x');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookup_every_arch),
		cmocka_unit_test(test_host_in_table),
		cmocka_unit_test(test_abi_every_arch),
		cmocka_unit_test(test_abi_x86_64),
		cmocka_unit_test(test_abi_aarch64),
		cmocka_unit_test(test_thread_pointer),
		cmocka_unit_test(test_unsupported_message),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
