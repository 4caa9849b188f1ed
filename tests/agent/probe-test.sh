#!/bin/sh
# probe-test.sh STRATEGY - probes at instructions of each kind in a
# threaded program; every hit must be counted once and the program must
# compute exactly what it computes without probes.
set -u
strategy=${1:?strategy}
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
. "$top_srcdir/tests/lib/common.sh"
tlib_init "probe-$strategy" "${KEEP:-0}"
work=$TLIB_DIR
bin=$top_builddir/tests/agent
target=$bin/probe-target
driver=$bin/probe-driver
[ -x "$target" ] && [ -x "$driver" ] || tlib_error "$target or $driver not built"
tlib_need nm binutils
tlib_need objdump binutils
# The probe sites are found by x86-64 mnemonics below.
[ "$(uname -m)" = x86_64 ] || tlib_skip_all "host is not x86-64"

sym() { nm "$target" | awk -v s="$1" '$3 == s { print "0x" $1 }'; }
hot=$(sym hot)
leaf=$(sym leaf)
insn_in() {	# FUNCTION PATTERN: address of the first matching instruction
	objdump -d --no-show-raw-insn "$target" |
		awk -v f="<$1>:" -v p="$2" '$2 == f { on = 1; next } on && /^$/ { exit }
			on && $0 ~ p { sub(":", "", $1); print "0x" $1; exit }'
}
# hot starts with the load of `scale`, a RIP-relative memory operand
# (boost); then comes the RIP-relative lea of `counter` (emulate).
rip=$(insn_in hot 'lea .*[(]%rip[)],')
load=$(insn_in hot 'mov .*[(]%rip[)],')
[ -n "$load" ] && [ $((load)) -eq $((hot)) ] ||
	{ echo "hot does not start with a RIP-relative load" >&2; exit 99; }
# In worker: the call to leaf, and the loop's conditional jump; leaf's ret.
call=$(insn_in worker 'call.*<leaf>')
# The loop's backward conditional jump.
jcc=$(objdump -d --no-show-raw-insn "$target" |
	awk '$2 == "<worker>:" { on = 1; next } on && /^$/ { exit }
		on && $2 ~ /^j[a-z]+$/ && $2 != "jmp" {
			a = $1; sub(":", "", a)
			if (length($3) == length(a) && $3 < a) { print "0x" a; exit } }')
ret=$(insn_in leaf '\tret')
push=$(insn_in worker '\tpush ')
for v in "$hot" "$leaf" "$rip" "$call" "$jcc" "$ret" "$push"; do
	[ -n "$v" ] || { echo "instructions not found" >&2; exit 99; }
done

PROBE_N=2000 "$target" >"$work/native.out" || exit 99
PROBE_N=2000 timeout 120 "$driver" "$strategy" "$hot" "$rip" "$leaf" "$call" \
	"$jcc" "$ret" "$push" -- "$target" \
	>"$work/probed.out" 2>"$work/err"
rc=$?
cat "$work/probed.out"
if [ $rc -ne 0 ]; then
	echo "FAIL: driver exited with $rc"; cat "$work/err"; exit 1
fi
fail=0
# The program's output is the same with and without probes.
grep -v -e '^probe ' -e '^hits ' "$work/probed.out" >"$work/program.out"
if ! cmp -s "$work/native.out" "$work/program.out"; then
	echo "FAIL: program output differs under probes"
	diff "$work/native.out" "$work/program.out"; fail=1
fi
calls=$(sed -n 's/^calls hot=\([0-9]*\).*/\1/p' "$work/native.out")
# Once per call: hot, its RIP-relative access, leaf, the call, leaf's ret;
# the loop's backward jump once per iteration (gcc -O2 rotates the loop
# behind a guard, so the last, not-taken test is that same jump), the
# worker's push once per thread.
threads=4
for a in "$hot" "$rip" "$leaf" "$call" "$ret"; do
	h=$(awk -v a="$a" '$1 == "hits" && $2 == a { print $3 }' "$work/probed.out")
	if [ "$h" != "$calls" ]; then
		echo "FAIL: probe $a hit $h times, the program made $calls calls"; fail=1
	fi
done
expect_hits() {	# ADDR EXPECTED WHAT
	h=$(awk -v a="$1" '$1 == "hits" && $2 == a { print $3 }' "$work/probed.out")
	[ "$h" = "$2" ] || { echo "FAIL: $3 at $1 hit $h times, expected $2"; fail=1; }
}
expect_hits "$jcc" "$calls" "loop branch"
expect_hits "$push" $threads "worker's push"
# A forced strategy is used where the instruction allows it.
case $strategy in
boost|step)
	n=$(grep -c "^probe .* $strategy " "$work/probed.out")
	[ "$n" -ge 2 ] || { echo "FAIL: $strategy used by $n probes"; fail=1; } ;;
esac
[ $fail -eq 0 ] && echo "PASS: $strategy"
exit $fail
