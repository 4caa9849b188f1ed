#!/bin/sh
# fuzz-seeds.sh BUILDDIR - regenerates the seed corpora of fuzz-tfile,
# fuzz-sdt and fuzz-elfsym in the source tree (tests/unit/fuzz-corpus-*).
# Not part of `make check`: the seeds are committed, so that every run
# starts from the same inputs; run this (from a built tree) when the file
# formats change, and commit the result.  Each seed is a real file, kept
# small (a few KB) so that libFuzzer's mutations stay cheap:
#
#   ELF (sdt, elfsym): fuzz-seed-prog.c linked without libc and without
#     page padding (-N), as an executable at -O2 and -O0 (operands in
#     registers, memory, rip-relative, indexed; a semaphore), as a
#     stripped shared object (.dynsym only) and as an object file; the
#     hand-written bad and malformed notes of tests/client/progs.
#   text (sdt): argument strings as compilers write them.
#   trace files (tfile): probe-trace recordings of tests/record/progs:
#     registers, memory, values and return probes; the same without its
#     tdesc lines; one cut inside a frame; gdb's reference sample
#     (tfile-gen) cut to its header and first frames.
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: fuzz-seeds.sh BUILDDIR}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

elf() {	# OUT FLAGS...: the seed program (or a .s) linked without libc
	out=$1
	shift
	${CC:-gcc} -g0 -nostdlib -static -fno-asynchronous-unwind-tables \
		-Wl,-N -Wl,--build-id=none -Wl,--no-warn-rwx-segments "$@" \
		-o "$out"
}

sdt=$src/tests/unit/fuzz-corpus-sdt
sym=$src/tests/unit/fuzz-corpus-elfsym
tf=$src/tests/unit/fuzz-corpus-tfile
mkdir -p "$sdt" "$sym" "$tf"

prog=$src/tests/unit/fuzz-seed-prog.c
elf "$work/exec-O2" -O2 "$prog"
elf "$work/exec-O0" -O0 "$prog"
${CC:-gcc} -O2 -g0 -shared -fPIC -nostdlib -fno-asynchronous-unwind-tables \
	-Wl,-z,max-page-size=16 -Wl,-z,noseparate-code -Wl,--build-id=none \
	-s -o "$work/lib-stripped.so" "$prog"
${CC:-gcc} -O2 -g0 -c -fno-asynchronous-unwind-tables -o "$work/object.o" "$prog"
elf "$work/sdt-bad" -e main "$src/tests/client/progs/sdt-bad.s"
elf "$work/sdt-malformed" -e main "$src/tests/client/progs/sdt-malformed.s"
for f in exec-O2 exec-O0 lib-stripped.so object.o sdt-bad sdt-malformed; do
	# (.o names are ignored by git: the object file's seed is *-file)
	case $f in *.o) name=elf-${f%.o}-file ;; *) name=elf-$f ;; esac
	cp "$work/$f" "$sdt/$name"
	cp "$work/$f" "$sym/$name"
done
printf '%s' '-4@%eax 8@-16(%rbp) -2@%dx 1@%ah' >"$sdt/args-regs-mem"
printf '%s' '-8@gvar(%rip) 4@garr+8(%rip) -4@(%rax,%r8,4) 8@(,%rbx,8)' \
	>"$sdt/args-rip-index"
printf '%s' '4@$42 -8@$-1 %rdi 8@0x601040 2@-0x10(%rsp)' >"$sdt/args-imm-abs"

pt=$build/client/probe-trace
rec=$build/tests/record/progs
"$pt" record -q -o "$work/full.tfile" -e 'compute regs args' \
	-e 'checksum args mem=arg0,6' -e 'compute%return' -- \
	"$rec/rectarget" calls "$work/out" 3
cp "$work/full.tfile" "$tf/rec-regs-mem-return"
grep -av '^tdesc ' "$work/full.tfile" >"$tf/rec-no-tdesc"
size=$(wc -c <"$tf/rec-no-tdesc")
head -c $((size - 40)) "$tf/rec-no-tdesc" >"$tf/rec-cut"
"$pt" record -q -o "$work/threads.tfile" -e 'compute args=2' -- \
	"$rec/rectarget" threads "$work/out" 2
grep -av '^tdesc ' "$work/threads.tfile" >"$tf/rec-threads-no-tdesc"
"$pt" record -q -o "$work/hist.tfile" -e 'compute%return hist' -- \
	"$rec/rectarget" calls "$work/out" 20 >/dev/null
cp "$work/hist.tfile" "$tf/rec-hist"	# whole: the table at its offset
"$build/tests/unit/tfile-gen" "$work/sample.tfile"
head -c 6000 "$work/sample.tfile" >"$tf/gdb-sample-head"
ls -l "$sdt" "$sym" "$tf"
