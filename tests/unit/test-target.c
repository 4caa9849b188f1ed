/*
 * test-target.c - the target's register description (client/target.c)
 * and where the ABI registers of its arch are in it.
 *
 * probe-trace learns the register file from the stub's target.xml and the
 * calling convention from the arch (arch_ops); the two meet by register
 * name, so a stub that numbers its registers its own way is still read
 * right.  The descriptions below are written by hand in such orders.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "client/target.h"

/* gdb's order for the first 17 registers of x86-64. */
static const char gdb_order[] =
	"<target><architecture>i386:x86-64</architecture><feature>"
	"<reg name=\"rax\" bitsize=\"64\"/><reg name=\"rbx\" bitsize=\"64\"/>"
	"<reg name=\"rcx\" bitsize=\"64\"/><reg name=\"rdx\" bitsize=\"64\"/>"
	"<reg name=\"rsi\" bitsize=\"64\"/><reg name=\"rdi\" bitsize=\"64\"/>"
	"<reg name=\"rbp\" bitsize=\"64\"/><reg name=\"rsp\" bitsize=\"64\"/>"
	"<reg name=\"r8\" bitsize=\"64\"/><reg name=\"r9\" bitsize=\"64\"/>"
	"<reg name=\"r10\" bitsize=\"64\"/><reg name=\"r11\" bitsize=\"64\"/>"
	"<reg name=\"r12\" bitsize=\"64\"/><reg name=\"r13\" bitsize=\"64\"/>"
	"<reg name=\"r14\" bitsize=\"64\"/><reg name=\"r15\" bitsize=\"64\"/>"
	"<reg name=\"rip\" bitsize=\"64\"/></feature></target>";

/* Another stub's numbering, with no r9. */
static const char own_order[] =
	"<target><architecture>i386:x86-64</architecture><feature>"
	"<reg name=\"rip\" bitsize=\"64\" regnum=\"0\"/>"
	"<reg name=\"r8\" bitsize=\"64\"/><reg name=\"rcx\" bitsize=\"64\"/>"
	"<reg name=\"rdx\" bitsize=\"64\"/><reg name=\"rsi\" bitsize=\"64\"/>"
	"<reg name=\"rdi\" bitsize=\"64\"/><reg name=\"rax\" bitsize=\"64\"/>"
	"</feature></target>";

static void test_gdb_order(void **state)
{
	struct target_regs t;
	const struct arch_ops *ops;

	assert_int_equal(target_regs_parse(&t, gdb_order), 0);
	ops = arch_for_gdb_arch(t.arch);
	assert_non_null(ops);
	assert_int_equal(target_abi_nargs(ops), 6);
	/* the arch's own numbering is gdb's: the same numbers */
	for (unsigned int n = 0; n < 6; n++)
		assert_int_equal(target_abi_arg_regnum(&t, ops, n), ops->arg_regs[n]);
	assert_int_equal(target_abi_arg_regnum(&t, ops, 6), -ERANGE);
	assert_int_equal(target_abi_retval_regnum(&t, ops), ops->retval_regnum);
	target_regs_free(&t);
}

static void test_own_order(void **state)
{
	static const char *const args[] = { "rdi", "rsi", "rdx", "rcx", "r8" };
	struct target_regs t;
	const struct arch_ops *ops;

	assert_int_equal(target_regs_parse(&t, own_order), 0);
	ops = arch_for_gdb_arch(t.arch);
	assert_non_null(ops);
	for (unsigned int n = 0; n < 5; n++) {
		int r = target_abi_arg_regnum(&t, ops, n);

		assert_true(r >= 0);
		assert_string_equal(t.regs[r].name, args[n]);
	}
	assert_int_equal(target_abi_arg_regnum(&t, ops, 5), -ENOENT);	/* r9 */
	assert_string_equal(t.regs[target_abi_retval_regnum(&t, ops)].name, "rax");
	target_regs_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gdb_order),
		cmocka_unit_test(test_own_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
