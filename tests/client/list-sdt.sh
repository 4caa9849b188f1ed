#!/bin/sh
# list-sdt.sh - `probe-trace list` against binutils on programs with USDT
# probes (tests/client/progs, built at -O2 and -O0), and the arguments'
# bytecode against the values the running program prints.
#
# Ground truth comes from outside probe-trace: `readelf -n` decodes the
# same notes (addresses, semaphores, argument strings), `nm` gives the
# semaphore and function symbols, `objcopy` moves .stapsdt.base the way
# prelink does.  What depends on the compiler's choice of registers is
# compared with readelf only; what C fixes (probe names, argument sizes
# and signs, constants) is checked exactly.
#
# Exit: 0 pass, 1 a mismatch, 77 missing binutils / not x86-64,
# 99 harness error.
set -u

: "${top_builddir:=.}"
pt="$top_builddir/client/probe-trace"
progs="$top_builddir/tests/client/progs"

[ "$(uname -m)" = x86_64 ] || { echo "SKIP: host is not x86-64"; exit 77; }
for t in readelf nm objcopy strip; do
	command -v "$t" >/dev/null 2>&1 || { echo "SKIP: no $t"; exit 77; }
done
[ -x "$pt" ] || { echo "ERROR: $pt not built"; exit 99; }
[ -x "$top_builddir/tests/client/sdt-eval" ] ||
	{ echo "ERROR: tests/client/sdt-eval not built"; exit 99; }
for p in sdt-prog sdt-prog-O0 sdt-bad sdt-malformed; do
	[ -x "$progs/$p" ] || { echo "ERROR: $progs/$p not built"; exit 99; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/list-sdt.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }

# probe-trace's USDT rows as NAME|ADDRESS|SEMAPHORE|STRATEGY|ARGUMENTS
pt_probes() {
	sed -n 's/^  \([0-9a-f]\{16\}\)  \([-0-9a-f]*\) *\([a-z]*\) *\(sdt:[^ ]*\)  \(.*\)$/\4|\1|\2|\3|\5/p'
}

# readelf's notes as NAME|ADDRESS|SEMAPHORE|ARGUMENTS, same spelling
readelf_probes() {
	readelf -n "$1" | awk '
		/^ *Provider:/ { prov = $2 }
		/^ *Name:/ { name = $2 }
		/^ *Location:/ {
			loc = $2; sub(/^0x/, "", loc); sub(/,$/, "", loc)
			sem = $6; sub(/^0x/, "", sem)
			if (sem ~ /^0+$/) sem = "-"
		}
		/^ *Arguments:/ {
			args = $0; sub(/^ *Arguments: ?/, "", args)
			printf "sdt:%s:%s|%s|%s|%s\n", prov, name, loc, sem, args
		}'
}

nm_addr() { nm "$1" | awk -v s="$2" '$3 == s { print $1 }'; }

for prog in "$progs/sdt-prog" "$progs/sdt-prog-O0"; do
	p=$(basename "$prog")
	"$pt" list --sdt "$prog" >"$tmp/$p.out" 2>"$tmp/$p.err" ||
		{ fail "$p: list --sdt exited $?"; cat "$tmp/$p.err"; continue; }
	pt_probes <"$tmp/$p.out" >"$tmp/$p.pt"
	readelf_probes "$prog" >"$tmp/$p.re"

	# the exact probes, in note order (link order of the two files)
	cut -d'|' -f1 "$tmp/$p.pt" | tr '\n' ' ' >"$tmp/$p.names"
	want="sdt:sdtprog:args sdt:sdtprog:start sdt:sdtprog:globals sdt:sdtprog:konst sdt:sdtprog:guarded "
	[ "$(cat "$tmp/$p.names")" = "$want" ] ||
		fail "$p: probes '$(cat "$tmp/$p.names")', want '$want'"

	# address, semaphore and argument string of each agree with readelf
	cut -d'|' -f1,2,3,5 "$tmp/$p.pt" >"$tmp/$p.cmp"
	if ! diff -u "$tmp/$p.re" "$tmp/$p.cmp"; then
		fail "$p: probe-trace and readelf -n disagree"
	fi

	# sizes and signs come from the C types: char short int long
	# unsigned-char unsigned-long
	args=$(awk -F'|' '$1 == "sdt:sdtprog:args" { print $5 }' "$tmp/$p.pt")
	sizes=$(echo "$args" | sed 's/@[^ ]*//g')
	[ "$sizes" = "-1 -2 -4 -8 1 8" ] ||
		fail "$p: args sizes '$sizes' (from '$args'), want '-1 -2 -4 -8 1 8'"
	konst=$(awk -F'|' '$1 == "sdt:sdtprog:konst" { print $5 }' "$tmp/$p.pt")
	[ "$konst" = '-4@$17 -8@$-1' ] || fail "$p: konst arguments '$konst'"
	start=$(awk -F'|' '$1 == "sdt:sdtprog:start" { print $5 }' "$tmp/$p.pt")
	[ -z "$start" ] || fail "$p: start has arguments '$start'"
	globals=$(awk -F'|' '$1 == "sdt:sdtprog:globals" { print $5 }' "$tmp/$p.pt")
	case "$globals" in
	-4@*' '-8@*) ;;
	*) fail "$p: globals arguments '$globals'" ;;
	esac

	# the semaphore is the address nm gives the _semaphore variable;
	# the other probes have none
	sem=$(awk -F'|' '$1 == "sdt:sdtprog:guarded" { print $3 }' "$tmp/$p.pt")
	nmsem=$(nm_addr "$prog" sdtprog_guarded_semaphore)
	[ -n "$nmsem" ] && [ "$sem" = "$nmsem" ] ||
		fail "$p: guarded semaphore '$sem', nm says '$nmsem'"
	others=$(awk -F'|' '$1 != "sdt:sdtprog:guarded" { print $3 }' "$tmp/$p.pt" | sort -u)
	[ "$others" = "-" ] || fail "$p: unexpected semaphores '$others'"

	# a probe site is <sys/sdt.h>'s one-byte nop: emulated
	strategies=$(cut -d'|' -f4 "$tmp/$p.pt" | sort -u)
	[ "$strategies" = emulate ] || fail "$p: strategies '$strategies'"
	[ -s "$tmp/$p.err" ] && { fail "$p: unexpected stderr"; cat "$tmp/$p.err"; }

	# functions: the ones of the program, at nm's addresses
	"$pt" list --functions "$prog" 'sdtprog_*' >"$tmp/$p.fn" ||
		fail "$p: list --functions exited $?"
	for f in sdtprog_args sdtprog_with_sem; do
		a=$(nm_addr "$prog" "$f")
		grep -Eq "^  $a  [0-9]+ +[a-z]+ +$f\$" "$tmp/$p.fn" ||
			fail "$p: function $f at $a not listed"
	done
	grep -q main "$tmp/$p.fn" && fail "$p: pattern sdtprog_* lists main"
	grep -q "USDT PROBES" "$tmp/$p.fn" && fail "$p: --functions lists probes"
done

# every probe enabled in the running program (semaphore raised): the
# values sdt_arg_emit's bytecode reads equal the ones the program prints
for prog in "$progs/sdt-prog" "$progs/sdt-prog-O0"; do
	p=$(basename "$prog")
	"$top_builddir/tests/client/sdt-eval" "$prog" >"$tmp/$p.eval" 2>"$tmp/err"
	rc=$?
	[ $rc -eq 77 ] && { echo "note: no ptrace here, values not checked"; continue; }
	[ $rc -eq 0 ] || { fail "$p: sdt-eval exited $rc: $(cat "$tmp/err")"; continue; }
	sed -n 's/^tracer: //p' "$tmp/$p.eval" | sort >"$tmp/$p.tracer"
	sed -n 's/^target: //p' "$tmp/$p.eval" | sort >"$tmp/$p.target"
	[ "$(wc -l <"$tmp/$p.target")" -eq 5 ] ||
		fail "$p: the target passed $(wc -l <"$tmp/$p.target") probes, want 5 (semaphore not raised?)"
	diff -u "$tmp/$p.target" "$tmp/$p.tracer" ||
		fail "$p: argument values read by the bytecode differ from the program's"
done

prog="$progs/sdt-prog"

# patterns: PROVIDER:NAME and sdt:PROVIDER:NAME globs
n=$("$pt" list "$prog" 'sdtprog:g*' | pt_probes | cut -d'|' -f1 | tr '\n' ' ')
[ "$n" = "sdt:sdtprog:globals sdt:sdtprog:guarded " ] || fail "pattern sdtprog:g*: '$n'"
n=$("$pt" list "$prog" 'sdt:*:konst' | pt_probes | cut -d'|' -f1)
[ "$n" = "sdt:sdtprog:konst" ] || fail "pattern sdt:*:konst: '$n'"
"$pt" list "$prog" 'sdt:*:konst' | grep -q FUNCTIONS && fail "pattern sdt:*:konst lists functions"

# prelink: .stapsdt.base moved by 0x10 moves every probe by 0x10
if objcopy --change-section-address .stapsdt.base+0x10 "$prog" \
	"$tmp/moved" 2>/dev/null; then
	"$pt" list --sdt "$tmp/moved" | pt_probes | cut -d'|' -f1,2 >"$tmp/moved.pt"
	readelf_probes "$prog" | while IFS='|' read -r name loc rest; do
		printf '%s|%016x\n' "$name" $((0x$loc + 16))
	done >"$tmp/moved.want"
	diff -u "$tmp/moved.want" "$tmp/moved.pt" ||
		fail "a moved .stapsdt.base does not move the probes"
else
	fail "objcopy cannot move .stapsdt.base"
fi

# a stripped copy: no function symbols left, the probes are still there
strip -s -o "$tmp/stripped" "$prog" || exit 99
"$pt" list "$tmp/stripped" >"$tmp/stripped.out" 2>"$tmp/stripped.err" ||
	fail "stripped: list exited $?"
[ "$(pt_probes <"$tmp/stripped.out" | wc -l)" -eq 5 ] || fail "stripped: probes missing"
"$pt" list --functions "$tmp/stripped" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q "no function symbols" "$tmp/err" ||
	fail "stripped --functions: exit $rc, '$(cat "$tmp/err")'"

# probes whose arguments cannot be used are listed, with an error that
# names the probe and the argument, on stdout and stderr
"$pt" list --sdt "$progs/sdt-bad" >"$tmp/bad.out" 2>"$tmp/bad.err"; rc=$?
[ $rc -eq 0 ] || fail "sdt-bad: exit $rc"
cat >"$tmp/bad.want" <<'EOF'
probe-trace list: PROG: sdt:bad:xmm: argument 2 '8@%xmm0': unknown register %xmm0
probe-trace list: PROG: sdt:bad:nosym: argument 1 '-4@no_such_symbol(%rip)': symbol 'no_such_symbol' is not in the symbol table
EOF
sed "s|PROG|$progs/sdt-bad|" "$tmp/bad.want" | diff -u - "$tmp/bad.err" ||
	fail "sdt-bad: error messages"
[ "$(grep -c '^    error: sdt:bad:' "$tmp/bad.out")" -eq 2 ] ||
	fail "sdt-bad: error rows missing"
[ "$(pt_probes <"$tmp/bad.out" | cut -d'|' -f1 | tr '\n' ' ')" = \
  "sdt:bad:good sdt:bad:xmm sdt:bad:nosym " ] || fail "sdt-bad: probes missing"
grep -A1 ' sdt:bad:good ' "$tmp/bad.out" | grep -q error &&
	fail "sdt-bad: the good probe has an error"

# a note cut short is refused, not read past
"$pt" list "$progs/sdt-malformed" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q "malformed stapsdt note 1" "$tmp/err" ||
	fail "truncated note: exit $rc, '$(cat "$tmp/err")'"

# errors: exit 1 with a message naming the problem, 2 for usage
"$pt" list "$tmp/nonexistent" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q "No such file" "$tmp/err" ||
	fail "missing file: exit $rc, '$(cat "$tmp/err")'"
printf 'not an ELF file\n' >"$tmp/text"
"$pt" list "$tmp/text" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q "not an ELF file" "$tmp/err" ||
	fail "text file: exit $rc, '$(cat "$tmp/err")'"
"$pt" list --sdt "$pt" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q "no USDT probes" "$tmp/err" ||
	fail "--sdt on a file without probes: exit $rc, '$(cat "$tmp/err")'"
"$pt" list "$prog" 'nothing-matches*' >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q "nothing matches" "$tmp/err" ||
	fail "unmatched pattern: exit $rc, '$(cat "$tmp/err")'"
# a file of a machine this build has no arch for (s390: the e_machine
# field of a copy rewritten) is refused by name, by list and by insn
cp "$prog" "$tmp/s390" && printf '\026\000' |
	dd of="$tmp/s390" bs=1 seek=18 conv=notrunc 2>/dev/null || exit 99
[ "$(od -An -tu2 -j18 -N2 "$tmp/s390" | tr -d ' ')" = 22 ] || exit 99
for cmd in list insn; do
	"$pt" $cmd "$tmp/s390" >/dev/null 2>"$tmp/err"; rc=$?
	[ $rc -eq 1 ] && grep -q "s390: e_machine 22 (s390): this build has no arch for it (it has x86_64" "$tmp/err" ||
		fail "$cmd on an s390 file: exit $rc, '$(cat "$tmp/err")'"
done
# and the file's own arch decodes it
"$pt" insn "$prog" sdtprog_args >"$tmp/insn.out" 2>"$tmp/err" ||
	fail "insn sdtprog_args: exit $?, '$(cat "$tmp/err")'"
grep -Eq '^ +[0-9a-f]+ +[0-9]+  (emulate|boost|step) ' "$tmp/insn.out" ||
	fail "insn sdtprog_args: no instruction listed"
"$pt" list >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "no FILE: exit $rc, want 2"
"$pt" list --sdt --functions "$prog" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "--sdt --functions: exit $rc, want 2"

# C++: demangled names (only where a C++ compiler is installed)
if command -v "${CXX:-g++}" >/dev/null 2>&1; then
	printf '%s\n' '#include <sys/sdt.h>' \
		'namespace ns { int twice(int x) { STAP_PROBE1(cxx, twice, x); return 2 * x; } }' \
		'int main(int c, char **) { return ns::twice(c); }' >"$tmp/cxx.cc"
	if "${CXX:-g++}" -O1 -o "$tmp/cxx" "$tmp/cxx.cc" 2>"$tmp/err"; then
		out=$("$pt" list "$tmp/cxx" 'ns::*')
		a=$(nm_addr "$tmp/cxx" _ZN2ns5twiceEi)
		echo "$out" | grep -Eq "^  $a  [0-9]+ +[a-z]+ +ns::twice\(int\)\$" ||
			fail "C++: ns::twice(int) at $a not listed: $out"
		"$pt" list --sdt "$tmp/cxx" | grep -q ' sdt:cxx:twice  -4@' ||
			fail "C++: probe cxx:twice not listed"
	else
		fail "C++ test program does not build: $(cat "$tmp/err")"
	fi
else
	echo "note: no C++ compiler, demangling not checked"
fi

[ $status -eq 0 ] && echo "PASS: probe-trace list agrees with readelf and nm"
exit $status
