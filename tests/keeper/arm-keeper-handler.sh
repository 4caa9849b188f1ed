#!/bin/sh
# The keeper's 32-bit ARM SIGTRAP handler (agent/arm-keeper-handler.h)
# run by the CPU (tests/keeper/arm-keeper-handler.c), natively on a
# 32-bit ARM host, else under qemu-arm-static.
#
# Exit: the program's (0 pass, 1 a case failed, or the signal that
# killed it), 77 when the cross compiler, its static libc or
# qemu-arm-static is missing, 99 build failure.
: "${top_srcdir:=.}" "${top_builddir:=.}"
. "$top_srcdir/tests/lib/common.sh"
TLIB_NAME=arm-keeper-handler
tlib_cross_tools arm
out="$top_builddir/tests/keeper/arm-keeper-handler.arm"
mkdir -p "$top_builddir/tests/keeper"
"$TLIB_XCC" -static -O1 -std=gnu11 -Wall -Werror -I"$top_srcdir" -o "$out" \
	"$top_srcdir/tests/keeper/arm-keeper-handler.c" ||
	tlib_error "cannot build $out"
# The children that must die of SIGTRAP make qemu say so on stderr.
$TLIB_XRUN "$out" 2>"$out.err"
rc=$?
grep -v '^qemu: uncaught target signal 5 ' "$out.err" >&2
[ "$rc" -lt 128 ] || echo "FAIL: the test itself was killed by signal $((rc - 128))"
exit "$rc"
