#!/bin/bash
# ret-real.sh - entry + return probes on real programs, probe-trace against
# bpftrace (uprobe + uretprobe), in one run: the cases of issue 12.
#
#   sqlite3-ins   Debian's /usr/bin/sqlite3: 20000 INSERT statements in one
#                 transaction (each a prepare and one sqlite3_step)
#   sqlite3-rows  a recursive CTE inserting 10^6 rows (one long step), then
#                 a SELECT whose 500000 rows go to /dev/null (a step a row)
#                 Both timed by sqlite3 itself (`.timer on`: the sum of the
#                 statements' times); probes on libsqlite3's sqlite3_step,
#                 entry (args) and %return (retval, latency)
#   python3       Debian's /usr/bin/python3 (not a pyenv one) timing a
#                 string-building loop of 300000 iterations itself
#                 (time.perf_counter); PyUnicode_New entry and %return
#
#   bench/ret-real.sh            (RUNS=3; root for bpftrace)
#
# Each round runs every configuration of a case once (round robin):
#   untraced     the program alone, pinned to CPU $CPU
#   pt-1cpu      probe-trace record, everything (recorder, agent, program)
#                pinned to CPU $CPU: the drain competes with the program
#   pt-2cpu      the program pinned to CPU $CPU (the agent's --wrapper
#                taskset), probe-trace and the agent to CPU $TRACER_CPU
#   pt-hist      probe-trace record of FUNC%return hist: the latency's log2
#                histogram kept in the process (the trampoline counts each
#                return), no frame per call; everything pinned to CPU $CPU
#   bpftrace     uprobe + uretprobe keeping the latency (hist), the program
#                pinned to CPU $CPU (bpftrace's work runs in the program's
#                thread, in the kernel)
#
# Prints every run, then per configuration the median time, its ratio to
# the untraced median and the median of the rounds' own ratios (each run
# over the untraced run of its round: "rounds"), the program's own CPU
# time (user + system, as it reports it: what the probes cost its thread,
# whatever else runs on the machine; bpftrace's work is in it,
# probe-trace's drain is not) and its two ratios, and the latency's
# median and p90 as each tool
# reports it (probe-trace report's p50 and p90; bpftrace's log2 histogram:
# the bucket holding the 50th and 90th percentile).  The header shows the
# strategy the agent gave each probe (one untimed run with --debug=pad).
# A tool that is not installed is said and its rows left out.  Exit 0
# whatever the numbers; 99 when probe-trace is not built, a run prints no
# timing, or a probe-trace run records other than one return per entry.

set -u
LC_ALL=C
export LC_ALL

RUNS=${RUNS:-3}
CPU=${CPU:-1}
TRACER_CPU=${TRACER_CPU:-0}
here=$(cd "$(dirname "$0")" && pwd)
builddir=${BENCH_BUILDDIR:-$(cd "$here/.." && pwd)}
PT=$builddir/client/probe-trace
AGENT=${AGENT:-$builddir/agent/probe-agent}
SQLITE=${SQLITE:-/usr/bin/sqlite3}
PY=${PY:-/usr/bin/python3}
LIBSQLITE=${LIBSQLITE:-/lib/x86_64-linux-gnu/libsqlite3.so.0}
CASES=${CASES:-sqlite3-ins sqlite3-rows python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/ret-real.XXXXXX") || exit 99
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT

die() { echo "ret-real: FRAMEWORK ERROR: $*" >&2; exit 99; }
[ -x "$PT" ] || die "no probe-trace at $PT (build it: make)"
[ -x "$AGENT" ] || die "no agent at $AGENT (build it: make)"
command -v taskset >/dev/null 2>&1 || die "taskset not found"
taskset -c "$CPU" true 2>/dev/null || die "cannot pin to CPU $CPU (set CPU=...)"
taskset -c "$TRACER_CPU" true 2>/dev/null || die "cannot pin to CPU $TRACER_CPU (set TRACER_CPU=...)"
have_bpf=1
command -v bpftrace >/dev/null 2>&1 || { have_bpf=0; echo "ret-real: no bpftrace: its rows are left out"; }
ulimit -l unlimited 2>/dev/null || ulimit -l 8192 2>/dev/null

median() { sort -n | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print "-" }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0 && a != "-") printf "%.2fx", a / b; else print "-" }'; }
# The median of the rounds' own ratios: file $1's k-th run over file
# $2's k-th (the untraced run of the same round), which a machine whose
# speed drifts between rounds moves less than a ratio of medians.
round_ratio() {
	paste "$1" "$2" | awk '$2 > 0 { print $1 / $2 }' | sort -g |
		awk '{ a[NR] = $1 } END { if (NR) printf "%.2fx", a[int((NR + 1) / 2)]; else print "-" }'
}

# probe-trace report's latency line: "p50 NS p90 NS" (its us turned to ns).
pt_latency() {
	"$PT" report "$1" | sed -n 's/^  latency  p50 \([0-9.]*\)us  p90 \([0-9.]*\)us.*/\1 \2/p' |
		awk '{ printf "%.0f %.0f\n", $1 * 1000, $2 * 1000 }'
}
# A log2 histogram on stdin, after a line matching $1 (bpftrace's @h:,
# probe-trace's "latency (ns):"): the buckets of p50 and p90.
hist_latency() {
	awk -v start="$1" 'BEGIN { n = 0 } $0 ~ start { on = 1; next } on && /^ *\[/ {
		l = $1; h = $2; gsub(/[^0-9KMG]/, "", l); gsub(/[^0-9KMG]/, "", h)
		b[n] = "[" l "," h ")"; c[n] = $3; tot += $3; n++ }
	END {
		if (!tot) { print "- -"; exit }
		s = 0; p50 = p90 = ""
		for (i = 0; i < n; i++) {
			s += c[i]
			if (p50 == "" && s >= tot * 0.5) p50 = b[i]
			if (p90 == "" && s >= tot * 0.9) p90 = b[i]
		}
		print p50, p90
	}'
}

# $1 case; the program's command line is in the array prog, its timing
# parser in the function timing (file -> ms), the library or executable
# holding the function in $obj, the function in $fn, the probe-trace
# prefix in $lib ("libsqlite3:" or "").
run_case() {
	local c=$1 r cfg t lat
	echo "== $c: $(printf '%q ' "${prog[@]}")"
	"$PT" record -q -o "$work/dbg.tfile" --agent "$AGENT --debug=pad -" \
		-e "$lib$fn" -e "$lib$fn%return" -- "${prog[@]}" >/dev/null 2>"$work/dbg.err"
	grep -E '^\[pad\] (pad for|.*cannot|.*no pad|.*fall)' "$work/dbg.err" | sed 's/^/   agent: /'
	grep -q '^\[pad\] pad for' "$work/dbg.err" || echo "   agent: no pad placed (probes stop the thread)"
	for r in $(seq "$RUNS"); do
		line="$c run $r:"
		for cfg in untraced pt-1cpu pt-2cpu pt-hist bpftrace; do
			t=
			case $cfg in
			untraced)
				taskset -c "$CPU" "${prog[@]}" >"$work/out" 2>&1 ;;
			pt-1cpu)
				taskset -c "$CPU" "$PT" record -q -o "$work/t.tfile" \
					--agent "$AGENT -" -e "$lib$fn" -e "$lib$fn%return" \
					-- "${prog[@]}" >"$work/out" 2>&1 ;;
			pt-2cpu)
				taskset -c "$TRACER_CPU" "$PT" record -q -o "$work/t.tfile" \
					--agent "$AGENT --wrapper taskset -c $CPU -- -" \
					-e "$lib$fn" -e "$lib$fn%return" \
					-- "${prog[@]}" >"$work/out" 2>&1 ;;
			pt-hist)
				taskset -c "$CPU" "$PT" record -q -o "$work/h.tfile" \
					--agent "$AGENT -" -e "$lib$fn%return hist" \
					-- "${prog[@]}" >"$work/out" 2>&1 ;;
			bpftrace)
				[ "$have_bpf" = 1 ] || continue
				taskset -c "$CPU" bpftrace -q -e "uprobe:$obj:$fn { @s[tid] = nsecs; }
					uretprobe:$obj:$fn /@s[tid]/ { @h = hist(nsecs - @s[tid]); delete(@s[tid]); }" \
					-c "$(printf '%q ' "${prog[@]}")" >"$work/out" 2>&1 ;;
			esac
			set -- $(timing "$work/out")
			t=${1:-} cpu=${2:-}
			[ -n "$t" ] && [ -n "$cpu" ] || { cat "$work/out" >&2; die "$c/$cfg printed no timing"; }
			echo "$t" >>"$work/$c.$cfg.ms"
			echo "$cpu" >>"$work/$c.$cfg.cpu"
			case $cfg in
			pt-hist)
				local nh
				nh=$(sed -n "s/^$lib$fn%return: \([0-9]*\) calls.*/\1/p" "$work/out")
				[ -n "$nh" ] && [ "$nh" -gt 0 ] ||
					die "$c/$cfg: no histogram of $lib$fn%return printed"
				hist_latency '^ *latency \\(ns\\):' <"$work/out" >>"$work/$c.$cfg.lat" ;;
			pt-*)
				local ne nr
				ne=$("$PT" report "$work/t.tfile" | sed -n "s/^$lib$fn: \([0-9]*\) hits/\1/p")
				nr=$("$PT" report "$work/t.tfile" | sed -n "s/^$lib$fn%return: \([0-9]*\) hits/\1/p")
				[ -n "$ne" ] && [ "$ne" = "$nr" ] && [ "$ne" -gt 0 ] ||
					die "$c/$cfg: $ne entries, $nr returns recorded"
				pt_latency "$work/t.tfile" >>"$work/$c.$cfg.lat" ;;
			bpftrace)
				hist_latency '^@h:' <"$work/out" >>"$work/$c.$cfg.lat" ;;
			esac
			line="$line $cfg $t ms (cpu $cpu)"
		done
		echo "$line"
	done
	local u uc
	u=$(median <"$work/$c.untraced.ms")
	uc=$(median <"$work/$c.untraced.cpu")
	printf '   %-9s %9s %8s %8s %9s %8s %8s   %s\n' config "ms(med)" ratio rounds \
		"cpu(med)" ratio rounds "latency p50 p90 (ns) of each run"
	for cfg in untraced pt-1cpu pt-2cpu pt-hist bpftrace; do
		[ -s "$work/$c.$cfg.ms" ] || continue
		t=$(median <"$work/$c.$cfg.ms")
		cpu=$(median <"$work/$c.$cfg.cpu")
		lat=$( [ -s "$work/$c.$cfg.lat" ] && tr '\n' ';' <"$work/$c.$cfg.lat" | sed 's/;$//; s/;/; /g')
		printf '   %-9s %9s %8s %8s %9s %8s %8s   %s\n' "$cfg" "$t" "$(ratio "$t" "$u")" \
			"$(round_ratio "$work/$c.$cfg.ms" "$work/$c.untraced.ms")" \
			"$cpu" "$(ratio "$cpu" "$uc")" \
			"$(round_ratio "$work/$c.$cfg.cpu" "$work/$c.untraced.cpu")" "${lat:--}"
	done
}

for c in $CASES; do
	case $c in
	sqlite3-ins|sqlite3-rows)
		if ! [ -x "$SQLITE" ] || ! [ -r "$LIBSQLITE" ]; then
			echo "ret-real: no $SQLITE or $LIBSQLITE: case $c left out"
			continue
		fi
		if [ "$c" = sqlite3-ins ]; then
			{
				echo ".timer on"
				echo "CREATE TABLE t(a INTEGER, b TEXT);"
				echo "BEGIN;"
				seq 0 19999 | awk '{ printf "INSERT INTO t VALUES(%d, %crow%d%c);\n", $1, 39, $1, 39 }'
				echo "COMMIT;"
			} >"$work/$c.sql"
		else
			cat >"$work/$c.sql" <<-'SQL'
			.timer on
			CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT);
			WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000)
			  INSERT INTO t SELECT x, 'row' || x FROM c;
			.output /dev/null
			SELECT a, b FROM t WHERE a % 2 = 0;
			.output stdout
			SQL
		fi
		timing() {
			awk '/^Run Time: real/ { s += $4; c += $6 + $8; n++ }
				END { if (n) printf "%.0f %.0f\n", s * 1000, c * 1000 }' "$1"
		}
		prog=("$SQLITE" -init "$work/$c.sql" :memory: .quit)
		obj=$LIBSQLITE fn=sqlite3_step lib=libsqlite3:
		run_case "$c" ;;
	python3)
		if ! [ -x "$PY" ]; then
			echo "ret-real: no $PY: case $c left out"
			continue
		fi
		PY=$(readlink -f "$PY")
		cat >"$work/py.py" <<-'PYW'
		import time
		t = time.perf_counter()
		c = time.process_time()
		s = 0
		for i in range(300000):
		    s += len(str(i) + "x")
		print("elapsed_ms=%.0f cpu_ms=%.0f s=%d" %
		      ((time.perf_counter() - t) * 1000, (time.process_time() - c) * 1000, s))
		PYW
		timing() { sed -n 's/^elapsed_ms=\([0-9]*\) cpu_ms=\([0-9]*\) .*/\1 \2/p' "$1"; }
		prog=("$PY" "$work/py.py")
		obj=$PY fn=PyUnicode_New lib=
		run_case "$c" ;;
	*)
		die "unknown case $c (sqlite3-ins, sqlite3-rows, python3)" ;;
	esac
done
echo "machine: $(uname -sr), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
