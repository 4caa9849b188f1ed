#!/bin/sh
# test-tfile-gdb.sh - gdb 13 and the reference reader load a trace file we
# write (tfile-gen: the sample of tfile-sample.h, x86-64 register block and
# the agent's own target.xml).  Skips (77) without gdb; the reference
# reader (shared/research/transcripts-src/parse_tfile.py, or $PARSE_TFILE)
# is used when it and python3 exist.
top_builddir=${top_builddir:-.}
gen=$top_builddir/tests/unit/tfile-gen
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
"$gen" "$tmp/t.tf" || exit 99
fail() { echo "FAIL: $*"; cat "$tmp/out"; exit 1; }

ref=${PARSE_TFILE:-/work/shared/research/transcripts-src/parse_tfile.py}
if command -v python3 >/dev/null 2>&1 && [ -r "$ref" ]; then
	python3 "$ref" "$tmp/t.tf" >"$tmp/out" 2>&1 || fail "parse_tfile.py"
	grep -qx 'regblock size 560 frames start at [0-9]*' "$tmp/out" || fail "R size"
	grep -qx 'frames: 5' "$tmp/out" || fail "frame count"
	grep -qx 'end marker; trailing bytes: 2' "$tmp/out" || fail "end marker"
	grep -q "frame 2 tp 1 size 70611 .*('M', '0x500000', 65535), ('M', '0x50ffff', 4465)" \
		"$tmp/out" || fail "split M blocks"
	echo "parse_tfile.py: ok"
else
	echo "parse_tfile.py or python3 missing: reference reader skipped"
fi

gdb=${GDB:-gdb}
command -v "$gdb" >/dev/null 2>&1 || { echo "no gdb: skipped"; exit 77; }
timeout 120 "$gdb" -batch -nx \
	-ex "target tfile $tmp/t.tf" -ex 'tstatus' -ex 'info tracepoints' \
	-ex 'tfind start' -ex 'tdump' -ex 'p/x $pc' -ex 'p $hits' \
	-ex 'tfind' -ex 'p/x $pc' -ex 'p $hits' -ex 'p/x $rbx' \
	-ex 'tfind tracepoint 1' -ex 'x/2xb 0x50fffe' \
	-ex 'tfind 4' -ex 'x/xw 0x404000' -ex 'tfind' \
	>"$tmp/out" 2>&1 || fail "gdb exited with $?"
for want in \
	"Created tracepoint 1 for target's tracepoint 1 at 0x401000." \
	"Created tracepoint 2 for target's tracepoint 2 at 0x401020." \
	"Trace stopped by a tstop command ()." \
	"Collected 5 trace frames." \
	"Trace user is tester." \
	"Trace notes: sample." \
	"	tracepoint already hit 3 times" \
	"        collect \$regs, *(int *)0x404000" \
	"	pass count 5 " \
	"Found trace frame 0, tracepoint 1" \
	"Data collected at tracepoint 1, trace frame 0:" \
	"*(int *)0x404000 = 4096" \
	"\$1 = 0x401000" \
	"\$2 = -4" \
	"Found trace frame 1, tracepoint 2" \
	"\$3 = 0x401020" \
	"\$4 = -1" \
	"\$5 = 0x12" \
	"Found trace frame 2, tracepoint 1" \
	"0x50fffe:	0x01	0x00" \
	"Found trace frame 4, tracepoint 1" \
	"0x404000:	0x00001004" \
	"No trace frame found"; do
	grep -qxF -- "$want" "$tmp/out" || fail "missing: $want"
done
grep -q '^rip  *0x401000 ' "$tmp/out" || fail "tdump registers"
grep -qi 'error\|warning' "$tmp/out" && fail "gdb complained"
echo "gdb: ok"
