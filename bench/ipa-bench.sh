#!/bin/bash
# ipa-bench.sh - ns per tracepoint hit for what a jump pad's in-process
# collector does, next to the trap path doing the same, in one run, on one
# CPU, same N:
#
#   regs        pad, `collect $regs` (the pad alone, no collector)
#   mem64       pad, `collect $regs, *b` (64 bytes behind a pointer: the
#               collector runs in the process)
#   mem64-trap  the same with --tp-strategy=emulate (a stop per hit)
#   cond        pad, `trace hot if gate == 1`, gate always 0 (the
#               collector evaluates it; no frame)
#   cond-trap   the same with --tp-strategy=emulate
#   ret         pad, an entry probe (`collect $rdi, $rsi`) and a return
#               probe (`collect $rax, $probe_latency_ns`, monitor
#               return-probe) at hot: the return taken in the process
#               (shadow stack and trampoline, no stop), two frames a call
#   ret-trap    the same with --tp-strategy=emulate (the entry and the
#               trampoline each stop the thread)
#
#   bench/ipa-bench.sh [N]          (default N=100000)
#
# Environment: RUNS (5), CPU (1), AGENT, GDB, BENCH_BUILDDIR, KEEP=1,
# CONFIGS (a subset of the configurations above, in that order; the
# untraced loop always runs first).
# Exit status 0 whatever the numbers; 99 on a framework error (a tool
# missing, a run without exactly the frames it must create, no timing).

set -u
LC_ALL=C
export LC_ALL

N=${1:-100000}
RUNS=${RUNS:-5}
CPU=${CPU:-1}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
builddir=${BENCH_BUILDDIR:-$top}
AGENT=${AGENT:-$builddir/agent/probe-agent}
GDB=${GDB:-gdb}
TARGET=$builddir/bench/ipa-target
CONFIGS="untraced ${CONFIGS:-regs mem64 mem64-trap cond cond-trap ret ret-trap}"

die() {
	printf "\nipa-bench: FRAMEWORK ERROR: %s\n" "$*" >&2
	[ -n "${work:-}" ] && [ -d "$work" ] && echo "ipa-bench: logs kept in $work" >&2
	exit 99
}

case $N in ''|*[!0-9]*|0) die "N must be a positive integer, not '$N'" ;; esac
case $RUNS in ''|*[!0-9]*|0) die "RUNS must be a positive integer" ;; esac
for tool in taskset timeout awk "$GDB"; do
	command -v "$tool" >/dev/null 2>&1 || die "$tool not found"
done
[ -x "$AGENT" ] || die "no agent at $AGENT (build it: make)"
taskset -c "$CPU" true 2>/dev/null || die "cannot pin to CPU $CPU (set CPU=...)"
if ! { [ -f "$builddir/Makefile" ] && make -s -C "$builddir" bench/ipa-target >/dev/null 2>&1; }; then
	mkdir -p "$builddir/bench" && ${CC:-cc} -g -O2 -o "$TARGET" "$here/ipa-target.c" ||
		die "cannot build $TARGET"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/ipa-bench.XXXXXX") || die "mktemp"
failed=1
trap '[ "${KEEP:-0}" = 1 ] || [ "$failed" = 1 ] || rm -rf "$work"' EXIT
pin() { taskset -c "$CPU" "$@"; }

script() {	# $1 = file, $2 = trace line, $3 = collect line, $4 = extra command
	cat >"$1" <<GDB
set pagination off
set confirm off
set sysroot /
break main
continue
$2
actions
$3
end
set trace-buffer-size $((N * 1200 + 1048576))
break bench_done
tstart
${4:-}
continue
monitor probes
tstatus
kill
GDB
}
script "$work/regs.gdb" "trace hot" 'collect $regs'
script "$work/mem64.gdb" "trace hot" 'collect $regs, *b'
cp "$work/mem64.gdb" "$work/mem64-trap.gdb"
script "$work/cond.gdb" "trace hot if gate == 1" 'collect $regs'
cp "$work/cond.gdb" "$work/cond-trap.gdb"
cat >"$work/ret.gdb" <<GDB
set pagination off
set confirm off
set sysroot /
break main
continue
tvariable \$probe_latency_ns
trace *hot
actions
collect \$rdi, \$rsi
end
trace *hot
actions
collect \$rax, \$probe_latency_ns
end
monitor return-probe 3
set trace-buffer-size $((2 * N * 1200 + 1048576))
break bench_done
tstart
continue
monitor probes
tstatus
kill
GDB
cp "$work/ret.gdb" "$work/ret-trap.gdb"

strategy() { case $1 in *-trap) echo emulate ;; *) echo pad ;; esac; }
frames_want() { case $1 in cond*) echo 0 ;; ret*) echo $((2 * N)) ;; *) echo "$N" ;; esac; }

run() {	# $1 = config, $2 = run
	local cfg=$1 out=$work/$1.$2.out log=$work/$1.$2.log e created stopped
	if [ "$cfg" = untraced ]; then
		e=$(pin "$TARGET" "$N" | sed -n 's/^elapsed_ns=\([0-9]*\) n=.*/\1/p')
	else
		rm -f "$out"
		pin timeout 900 "$GDB" -nx -batch \
			-ex "target remote | $AGENT --tp-strategy=$(strategy "$cfg") - $TARGET $N $out" \
			-x "$work/$cfg.gdb" >"$log" 2>&1
		e=$(sed -n 's/^elapsed_ns=\([0-9]*\) n=.*/\1/p' "$out" 2>/dev/null)
		grep -q "^Trace stopped" "$log" && die "$cfg run $2: $(grep '^Trace stopped' "$log") (see $log)"
		created=$(sed -n 's/^Collected \([0-9]*\) trace frames.*/\1/p' "$log")
		[ "${created:-x}" = "$(frames_want "$cfg")" ] ||
			die "$cfg run $2: ${created:-no} trace frames, expected $(frames_want "$cfg") (see $log)"
		stopped=$(sed -n 's/.*hits: \([0-9]*\) stopped.*/\1/p' "$log" | head -1)
		echo "${stopped:-?}" >>"$work/$cfg.stops"
	fi
	[ -n "$e" ] || die "$cfg run $2: no elapsed_ns"
	awk -v e="$e" -v n="$N" 'BEGIN { printf "%.1f\n", e / n }' >>"$work/$cfg.ns"
}

echo "ipa-bench: N=$N hits per run, $RUNS runs per configuration, all on CPU $CPU"
echo "  target  $TARGET; agent $AGENT"
echo "  machine $(uname -sr), $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
for r in $(seq 1 "$RUNS"); do
	printf 'run %d/%d:' "$r" "$RUNS" >&2
	for cfg in $CONFIGS; do printf ' %s' "$cfg" >&2; run "$cfg" "$r"; done
	echo >&2
done

median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
base=$(median "$work/untraced.ns")
echo
echo "ns per hit: raw = elapsed/N; net = raw - untraced ($base)"
printf '%-12s %-8s %10s %10s %12s   %s\n' config strategy "raw med" "net med" "stops/run" "all runs, raw"
for cfg in $CONFIGS; do
	med=$(median "$work/$cfg.ns")
	if [ "$cfg" = untraced ]; then net=- st=- strat=-
	else
		net=$(awk -v a="$med" -v b="$base" 'BEGIN { printf "%.1f", a - b }')
		st=$(sort -u "$work/$cfg.stops" | tr '\n' ' ' | sed 's/ $//') strat=$(strategy "$cfg")
	fi
	printf '%-12s %-8s %10s %10s %12s   %s\n' "$cfg" "$strat" "$med" "$net" "$st" "$(sort -n "$work/$cfg.ns" | tr '\n' ' ')"
done
echo "(stops/run: the probe's \"hits: N stopped\" in monitor probes after the loop)"
failed=0
