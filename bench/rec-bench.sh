#!/bin/bash
# rec-bench.sh - the recorder's rate: frames from the pads' ring into the
# trace file, per CPU second of everything involved and per wall second,
# with nothing lost.  Two recordings, each RUNS times, medians:
#
#   single  probe-trace record 'hot args=2' of N calls of bench/ipa-target
#           (one thread), --tp-strategy=pad
#   threads probe-trace record 'hit args=2' of tests/record/progs/recstress
#           with THREADS threads of N/THREADS calls each (8 x 1.25 M by
#           default: 10^7 calls), --tp-strategy=pad
#
#   bench/rec-bench.sh [N]         (default N=10000000)
#
# Everything is pinned to one CPU (CPU, default 1): the program, the
# agent and probe-trace share it, so CPU seconds and wall seconds are
# close on a quiet machine.  CPU seconds: `all` is the user + system time
# of probe-trace and every process it waited for (the agent, and the
# program the agent waited for), from bash's `time`; `program` the
# program's own (ipa-target's loop thread, recstress's getrusage, which
# each writes itself); `recorder` = all - program, the agent and
# probe-trace: what taking the frames out of the ring and into the file
# costs, the goal's number (>= 5 M frames per recorder CPU second).
# Wall seconds are the command's.
#
# Every run is checked: the frames in the file (probe-trace dump
# --summary) must equal the calls the program made, and the losses
# probe-trace reports must be 0, or the script stops with exit 99 (it is
# never a silent loss).  The program's own output is compared with an
# untraced run for `threads` (recstress writes what its calls returned).
#
# Environment: RUNS (3), CPU (1), THREADS (8), CASES ("single threads"),
# AGENT, PT (probe-trace), BENCH_BUILDDIR, KEEP=1 (keep the work
# directory), REC_OPTS (more probe-trace record options, e.g. "-b 64K", or
# "--no-direct" for the frames over the connection, the path an agent on
# another machine uses).
# Exit status 0 whatever the numbers (MISS when under 5 M frames per
# recorder CPU second), 99 on a framework error or a lost frame.

set -u
LC_ALL=C
export LC_ALL

N=${1:-10000000}
RUNS=${RUNS:-3}
CPU=${CPU:-1}
THREADS=${THREADS:-8}
CASES=${CASES:-single threads}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
builddir=${BENCH_BUILDDIR:-$top}
AGENT=${AGENT:-$builddir/agent/probe-agent}
PT=${PT:-$builddir/client/probe-trace}

die() {
	printf "\nrec-bench: FRAMEWORK ERROR: %s\n" "$*" >&2
	[ -n "${work:-}" ] && [ -d "$work" ] && echo "rec-bench: logs kept in $work" >&2
	exit 99
}

for v in N RUNS THREADS; do
	case ${!v} in ''|*[!0-9]*|0) die "$v must be a positive integer, not '${!v}'" ;; esac
done
[ $((N % THREADS)) = 0 ] || die "N ($N) must be a multiple of THREADS ($THREADS)"
for c in $CASES; do
	case $c in single|threads) ;; *) die "unknown case '$c' in CASES (single, threads)" ;; esac
done
command -v taskset >/dev/null 2>&1 || die "taskset not found"
[ -x "$AGENT" ] || die "no agent at $AGENT (build it: make)"
[ -x "$PT" ] || die "no probe-trace at $PT (build it: make)"
taskset -c "$CPU" true 2>/dev/null || die "cannot pin to CPU $CPU (set CPU=...)"

work=$(mktemp -d "${TMPDIR:-/tmp}/rec-bench.XXXXXX") || die "mktemp"
failed=1
trap '[ "${KEEP:-0}" = 1 ] || [ "$failed" = 1 ] || rm -rf "$work"' EXIT
${CC:-cc} -g -O2 -no-pie -o "$work/ipa-target" "$here/ipa-target.c" ||
	die "cannot build ipa-target"
${CC:-cc} -g -O2 -pthread -o "$work/recstress" "$top/tests/record/progs/recstress.c" ||
	die "cannot build recstress"
per=$((N / THREADS))
"$work/recstress" calls "$THREADS" "$per" "$work/untraced" || die "recstress failed"

# run CASE R: one recording; appends "cpu_s wall_s" to $work/CASE.times.
run() {
	local c=$1 r=$2 f=$work/$1.$2 spec cmd t frames lost
	case $c in
	single) spec='hot args=2' cmd=("$work/ipa-target" "$N" "$f.out") ;;
	threads) spec='hit args=2' cmd=("$work/recstress" calls "$THREADS" "$per" "$f.out") ;;
	esac
	TIMEFORMAT='%U %S %R'
	# shellcheck disable=SC2086
	t=$( { time STRESS_CPU=$f.cpu taskset -c "$CPU" "$PT" record ${REC_OPTS:-} --agent="$AGENT --tp-strategy=pad -" \
		-o "$f.tfile" -e "$spec" -- "${cmd[@]}" >"$f.log" 2>&1; } 2>&1 ) ||
		die "$c run $r: probe-trace record failed (see $f.log)"
	frames=$("$PT" dump --summary "$f.tfile" | awk 'NR == 1 { print $1 }')
	lost=$(sed -En 's/.* ([0-9]+) (frames? )?lost.*/\1/p' "$f.log" | tail -n1)
	[ "$frames" = "$N" ] || die "$c run $r: $frames frames in the file, $N calls (see $f.log)"
	[ "${lost:-0}" = 0 ] || die "$c run $r: $lost frames lost (see $f.log)"
	if [ "$c" = threads ]; then
		cmp -s "$f.out" "$work/untraced" || die "$c run $r: the program's output differs from its untraced run"
	fi
	prog=$(sed -n 's/.*cpu_ns=\([0-9]*\).*/\1/p' "$f.out" "$f.cpu" 2>/dev/null | head -n1)
	[ -n "$prog" ] || die "$c run $r: the program wrote no cpu_ns"
	echo "$t" | awk -v p="$prog" '{ printf "%.3f %.3f %.3f\n", $1 + $2, $3, p / 1e9 }' >>"$work/$c.times"
	rm -f "$f.tfile"
}

echo "rec-bench: N=$N calls a recording, $RUNS runs, THREADS=$THREADS, all on CPU $CPU"
echo "  machine $(uname -sr), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$RUNS"); do
	for c in $CASES; do
		printf '%s %d/%d ' "$c" "$r" "$RUNS" >&2
		run "$c" "$r"
	done
done
echo >&2
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for c in $CASES; do
	all=$(awk '{ print $1 }' "$work/$c.times" | median)
	rec=$(awk '{ print $1 - $3 }' "$work/$c.times" | median)
	prog=$(awk '{ print $3 }' "$work/$c.times" | median)
	wall=$(awk '{ print $2 }' "$work/$c.times" | median)
	awk -v c="$c" -v n="$N" -v all="$all" -v rec="$rec" -v prog="$prog" -v wall="$wall" \
	    -v runs="$(awk '{ printf "%s/%s/%s ", $1, $3, $2 }' "$work/$c.times")" 'BEGIN {
		printf "%-8s %d frames of %d calls, none lost\n", c, n, n
		printf "         CPU s (median): all %.2f, program %.2f, recorder (agent + probe-trace) %.2f; wall %.2f s\n",
			all, prog, rec, wall
		printf "         M frames per CPU second: recorder %.2f, all %.2f; M frames per wall second %.2f  %s\n",
			n / rec / 1e6, n / all / 1e6, n / wall / 1e6, (n / rec >= 5e6) ? "PASS" : "MISS"
		printf "         runs (all/program/wall s): %s\n", runs }'
done
failed=0
