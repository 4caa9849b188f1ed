#!/bin/bash
# rp-bench.sh - what an entry + return probe pair costs per call: probe-agent
# (through probe-trace record, frames streamed into a file) against the
# kernel's uprobe + uretprobe (tracefs), in one run, same binary and N, all
# pinned to one CPU; and the frames per second probe-trace sustains into
# its file.
#
#   bench/rp-bench.sh [N]          (default N=100000; root for tracefs)
#
# Environment: RUNS (5), CPU (1), BENCH_BUILDDIR, KEEP=1.
# Exit status: 0 whatever the numbers, 99 on a framework error (a run whose
# recording does not hold exactly the expected frames, no timing, no
# tracefs...).

set -u
LC_ALL=C
export LC_ALL

N=${1:-100000}
RUNS=${RUNS:-5}
CPU=${CPU:-1}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
builddir=${BENCH_BUILDDIR:-$top}
PT=$builddir/client/probe-trace
TARGET=$builddir/bench/rp-target
TRACEFS=${TRACEFS:-/sys/kernel/tracing}
GROUP=rpbench$$

die() {
	printf "\nrp-bench: FRAMEWORK ERROR: %s\n" "$*" >&2
	[ -n "${work:-}" ] && echo "rp-bench: logs kept in $work" >&2
	exit 99
}

case $N in ''|*[!0-9]*|0) die "N must be a positive integer" ;; esac
[ -x "$PT" ] || die "no probe-trace at $PT (build it: make)"
[ -w "$TRACEFS/uprobe_events" ] || die "no writable $TRACEFS/uprobe_events (root and tracefs needed)"
taskset -c "$CPU" true 2>/dev/null || die "cannot pin to CPU $CPU"
mkdir -p "$builddir/bench"
${CC:-cc} -g -O2 -fno-pie -no-pie -o "$TARGET" "$here/rp-target.c" ||
	die "cannot build $TARGET"

work=$(mktemp -d "${TMPDIR:-/tmp}/rp-bench.XXXXXX") || die mktemp
failed=1
cleanup() {
	echo "-:$GROUP/entry" >>"$TRACEFS/uprobe_events" 2>/dev/null
	echo "-:$GROUP/exit" >>"$TRACEFS/uprobe_events" 2>/dev/null
	[ "${KEEP:-0}" = 1 ] || [ "$failed" = 1 ] || rm -rf "$work"
}
trap cleanup EXIT
pin() { taskset -c "$CPU" "$@"; }

# The file offset of rp_hot, as uprobe_events wants it.
off=$(python3 - "$TARGET" <<'PY'
import subprocess, sys
path = sys.argv[1]
sym = None
for l in subprocess.run(["nm", path], capture_output=True, text=True).stdout.splitlines():
    w = l.split()
    if len(w) == 3 and w[2] == "rp_hot":
        sym = int(w[0], 16)
for l in subprocess.run(["readelf", "-lW", path], capture_output=True, text=True).stdout.splitlines():
    w = l.split()
    if w and w[0] == "LOAD":
        o, v, sz = int(w[1], 16), int(w[2], 16), int(w[5], 16)
        if sym is not None and v <= sym < v + sz:
            print(hex(sym - v + o))
PY
)
[ -n "$off" ] || die "cannot find rp_hot in $TARGET"

elapsed() { sed -n 's/^elapsed_ns=\([0-9]*\) .*/\1/p' "$1"; }

run_plain() {	# $1 = out
	pin "$TARGET" "$N" "$1" || die "the target failed"
}

run_kernel() {	# $1 = out
	echo "p:$GROUP/entry $TARGET:$off" >>"$TRACEFS/uprobe_events" &&
	echo "r:$GROUP/exit $TARGET:$off" >>"$TRACEFS/uprobe_events" ||
		die "cannot define the uprobes"
	echo 1 >"$TRACEFS/events/$GROUP/enable"
	pin "$TARGET" "$N" "$1" || die "the target failed under uprobes"
	echo 0 >"$TRACEFS/events/$GROUP/enable"
	local hits
	hits=$(awk -v f="$TARGET" '$1 == f && ($2 == "entry" || $2 == "exit") { s += $3 }
		END { print s + 0 }' "$TRACEFS/uprobe_profile")
	echo "-:$GROUP/entry" >>"$TRACEFS/uprobe_events"
	echo "-:$GROUP/exit" >>"$TRACEFS/uprobe_events"
	[ "$hits" = $((2 * N)) ] || die "the kernel probes fired $hits times, expected $((2 * N))"
}

run_agent() {	# $1 = out, $2 = tfile, specs...
	local out=$1 file=$2
	shift 2
	local specs=()
	for s in "$@"; do specs+=(-e "$s"); done
	pin "$PT" record -q -o "$file" "${specs[@]}" -- "$TARGET" "$N" "$out" \
		>"$file.log" 2>&1 || die "probe-trace failed: $(cat "$file.log")"
}

frames_of() { "$PT" dump --summary "$1" | awk 'NR == 1 { print $1 }'; }

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

echo "rp-bench: N=$N runs=$RUNS cpu=$CPU target=$TARGET (rp_hot at file offset $off)"
for r in $(seq "$RUNS"); do
	run_plain "$work/plain.$r"
	elapsed "$work/plain.$r" >>"$work/plain.ns"
	run_kernel "$work/kernel.$r"
	elapsed "$work/kernel.$r" >>"$work/kernel.ns"
	run_agent "$work/entry.$r" "$work/entry.$r.tfile" 'rp_hot args=1'
	[ "$(frames_of "$work/entry.$r.tfile")" = "$N" ] || die "entry run $r: not $N frames"
	elapsed "$work/entry.$r" >>"$work/entry.ns"
	run_agent "$work/pair.$r" "$work/pair.$r.tfile" 'rp_hot args=1' 'rp_hot%return'
	[ "$(frames_of "$work/pair.$r.tfile")" = $((2 * N)) ] || die "pair run $r: not $((2 * N)) frames"
	elapsed "$work/pair.$r" >>"$work/pair.ns"
	printf '.'
done
echo

plain=$(median <"$work/plain.ns")
kernel=$(median <"$work/kernel.ns")
entry=$(median <"$work/entry.ns")
pair=$(median <"$work/pair.ns")
awk -v n="$N" -v p="$plain" -v k="$kernel" -v e="$entry" -v a="$pair" 'BEGIN {
	kc = (k - p) / n; ec = (e - p) / n; ac = (a - p) / n
	printf "%-44s %10s\n", "configuration (median of runs)", "ns/call"
	printf "%-44s %10.1f\n", "untraced loop", p / n
	printf "%-44s %10.1f\n", "kernel uprobe + uretprobe (tracefs)", kc
	printf "%-44s %10.1f\n", "probe-agent entry probe (args)", ec
	printf "%-44s %10.1f\n", "probe-agent entry + return probe", ac
	printf "\nprobe-agent entry+return / kernel uprobe+uretprobe: %.2fx\n", ac / kc
	printf "frames per second into the file: %.0f (entry only), %.0f (entry + return)\n",
		n / (e / 1e9), 2 * n / (a / 1e9)
}'
failed=0
