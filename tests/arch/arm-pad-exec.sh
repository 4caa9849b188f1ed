#!/bin/sh
# arm jump pads (save, collector, hand-off, restore, window) run by the CPU
# against the original code in place (arm-pad-exec.c): built
# statically with the arch/ sources by arm-linux-gnueabihf-gcc and run
# under qemu-arm-static, or natively on a 32-bit ARM host.
#
# Exit: the program's (0 pass, 1 mismatch), 77 when the cross compiler,
# its static libc or qemu-arm-static is missing, 99 build failure.
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
out="$top_builddir/tests/arch/arm-pad-exec.arm"
s=$top_srcdir
# shellcheck disable=SC2086
"$cc" -static -pthread -O1 -std=gnu11 -Wall -Werror -Wno-unused-parameter ${ARM_CFLAGS:-} \
	-I"$s" -I"$top_builddir" -o "$out" "$s/tests/arch/arm-pad-exec.c" \
	"$s/tests/arch/arm-run.c" \
	"$s"/arch/*.c "$s"/arch/arm/*.c "$s"/arch/aarch64/*.c "$s"/arch/x86_64/*.c ||
	{ echo "ERROR: cannot build $out"; exit 99; }
$run "$out"
