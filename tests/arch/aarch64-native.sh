# aarch64-native.sh - sourced by the aarch64 differential tests: builds
# one test program of tests/arch for aarch64, statically, together with
# the arch/ sources it checks, and runs it: natively on an arm64 host,
# else under qemu-aarch64-static (qemu-user: no ptrace, none needed).
#
#   a64_native PROGRAM    (tests/arch/PROGRAM.c; exits with its status)
#
# A64_CFLAGS is added to the build: a longer run by hand with another
# seed is  A64_CFLAGS='-DSEED=7 -DSCALE=10' tests/arch/PROGRAM.sh
#
# Exit: the program's (0 pass, 1 mismatch), 77 when the cross compiler,
# its static libc or qemu-aarch64-static is missing, 99 build failure.

a64_native() {
	prog=$1
	: "${top_srcdir:=.}" "${top_builddir:=.}"
	cc=${A64_CC:-aarch64-linux-gnu-gcc}
	case "$(uname -m)" in
	aarch64) cc=${A64_CC:-cc} run= ;;
	*) run=qemu-aarch64-static ;;
	esac
	for t in "$cc" $run; do
		command -v "$t" >/dev/null 2>&1 || { echo "SKIP: no $t"; exit 77; }
	done
	sysroot=$("$cc" -print-sysroot 2>/dev/null)
	libc=$("$cc" -print-file-name=libc.a)
	[ -r "$libc" ] || { echo "SKIP: no static libc for $cc ($sysroot)"; exit 77; }

	out="$top_builddir/tests/arch/$prog.a64"
	s=$top_srcdir
	# shellcheck disable=SC2086
	"$cc" -static -O1 -std=gnu11 -Wall -Werror -Wno-unused-parameter ${A64_CFLAGS:-} \
		-I"$s" -I"$top_builddir" -o "$out" "$s/tests/arch/$prog.c" \
		"$s/tests/arch/aarch64-run.c" "$s"/arch/*.c "$s"/arch/aarch64/*.c \
		"$s"/arch/arm/*.c \
		"$s"/arch/x86_64/*.c || { echo "ERROR: cannot build $out"; exit 99; }
	$run "$out"
	exit $?
}
