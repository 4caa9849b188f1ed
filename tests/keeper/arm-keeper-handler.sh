#!/bin/sh
# The keeper's 32-bit ARM SIGTRAP handler (agent/arm-keeper-handler.h)
# run by the CPU (tests/keeper/arm-keeper-handler.c): built statically by
# arm-linux-gnueabihf-gcc and run under qemu-arm-static, or natively on a
# 32-bit ARM host.
#
# Exit: the program's (0 pass, 1 a case failed, or the signal that
# killed it), 77 when the cross compiler, its static libc or
# qemu-arm-static is missing, 99 build failure.
: "${top_srcdir:=.}" "${top_builddir:=.}"
cc=${ARM_CC:-arm-linux-gnueabihf-gcc}
case "$(uname -m)" in
armv7*|armv8l) cc=${ARM_CC:-cc} run= ;;
*) run=qemu-arm-static ;;
esac
for t in "$cc" $run; do
	command -v "$t" >/dev/null 2>&1 ||
		{ echo "SKIP: no $t (gcc-arm-linux-gnueabihf, qemu-user-static)"; exit 77; }
done
libc=$("$cc" -print-file-name=libc.a)
[ -r "$libc" ] || { echo "SKIP: no static libc for $cc (libc6-dev-armhf-cross)"; exit 77; }
out="$top_builddir/tests/keeper/arm-keeper-handler.arm"
mkdir -p "$top_builddir/tests/keeper"
"$cc" -static -O1 -std=gnu11 -Wall -Werror -I"$top_srcdir" -o "$out" \
	"$top_srcdir/tests/keeper/arm-keeper-handler.c" ||
	{ echo "ERROR: cannot build $out"; exit 99; }
# The children that must die of SIGTRAP make qemu say so on stderr.
$run "$out" 2>"$out.err"
rc=$?
grep -v '^qemu: uncaught target signal 5 ' "$out.err" >&2
[ "$rc" -lt 128 ] || echo "FAIL: the test itself was killed by signal $((rc - 128))"
exit "$rc"
