#!/bin/bash
# speed-bench.sh - issue #12's per-call numbers for the jump pads, each next
# to gdbserver's fast tracepoint (gdbserver + libinproctrace.so) and
# bpftrace's uprobe on the same function, in one run, pinned to one CPU,
# medians of RUNS rounds (each round runs every configuration once):
#
#   regs    `collect $regs` at hot()                         goal <= 80 ns
#   args6   the six arguments of hot6(): probe-trace record
#           'hot6 args=6' into a file (the recorder on the same
#           CPU); gdbserver: collect $rdi..$r9; bpftrace: the sum
#           of arg0..arg5 into a map                         goal <= 30 ns
#   mem64   `collect *b`: the 64 bytes behind hot()'s pointer goal <= 60 ns
#   cond    `trace hot if gate == 1`, gate always 0           goal <= 10 ns
#   ret     entry + return of hotr(): probe-trace record 'hotr args=1'
#           'hotr%return' into a file (the argument, then the return
#           value and the latency, two frames a call); bpftrace: uprobe
#           + uretprobe summing the latency and the return value;
#           gdbserver has no return probes                   goal <= 120 ns
#   rethist entry + return of hotr() as a latency histogram: probe-trace
#           record 'hotr%return hist' (the trampoline counts each return
#           in the process, no frame); bpftrace: uprobe + uretprobe
#           into hist(); the count checked                   goal <= 120 ns
#   record  probe-trace record 'hot args=2' of REC_N calls into a file:
#           frames in the file must equal the calls (a loss is counted
#           and reported, never silent); frames per second = REC_N /
#           the loop's time, and per CPU second of all processes
#           (perf stat's task-clock, when perf is there); bpftrace:
#           printf of arg0, arg1 per call into a file (its lost events
#           are what it reports)                   goal: none lost, >= 5 M/s
#
#   bench/speed-bench.sh [N]         (default N=200000; REC_N=10000000)
#
# ns per call = (loop time - untraced loop time) / N, from
# bench/ipa-target's own clock (built here, -O2, not PIE) (gdb's start-up and the download are
# outside it).  Every traced run is checked: the frames gdb's tstatus
# reports (N, 0 for the condition), the hits gdbserver and bpftrace
# counted; a tool that is missing or cannot run here prints why and its
# column says so, it is not silently left out.
#
# Environment: RUNS (3), CPU (1), REC_N, BT_REC_N (bpftrace's calls in
# the recorder row, default 10^6), AGENT, PT (probe-trace), GDB,
# GDBSERVER, IPA_LIB (libinproctrace.so), BPFTRACE, KEEP=1, BENCH_BUILDDIR.
# Exit status 0 whatever the numbers (a missed goal prints MISS), 99 on
# a framework error.

set -u
LC_ALL=C
export LC_ALL

N=${1:-200000}
RUNS=${RUNS:-3}
CPU=${CPU:-1}
REC_N=${REC_N:-10000000}
BT_REC_N=${BT_REC_N:-1000000}	# bpftrace's printf costs ~80 us a call here
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
builddir=${BENCH_BUILDDIR:-$top}
AGENT=${AGENT:-$builddir/agent/probe-agent}
PT=${PT:-$builddir/client/probe-trace}
GDB=${GDB:-gdb}
GDBSERVER=${GDBSERVER:-/usr/bin/gdbserver}
IPA_LIB=${IPA_LIB:-/usr/lib/libinproctrace.so}
BPFTRACE=${BPFTRACE:-bpftrace}

die() {
	printf "\nspeed-bench: FRAMEWORK ERROR: %s\n" "$*" >&2
	[ -n "${work:-}" ] && [ -d "$work" ] && echo "speed-bench: logs kept in $work" >&2
	exit 99
}

for v in N RUNS REC_N BT_REC_N; do
	case ${!v} in ''|*[!0-9]*|0) die "$v must be a positive integer, not '${!v}'" ;; esac
done
for tool in taskset timeout awk "$GDB"; do
	command -v "$tool" >/dev/null 2>&1 || die "$tool not found"
done
[ -x "$AGENT" ] || die "no agent at $AGENT (build it: make)"
[ -x "$PT" ] || die "no probe-trace at $PT (build it: make)"
taskset -c "$CPU" true 2>/dev/null || die "cannot pin to CPU $CPU (set CPU=...)"

# Which peers can run here, and why not.
gs_ok=1 bt_ok=1 perf_ok=1
if [ ! -x "$GDBSERVER" ]; then gs_ok=0; gs_why="no gdbserver at $GDBSERVER"
elif [ ! -f "$IPA_LIB" ]; then gs_ok=0; gs_why="no $IPA_LIB (Debian's gdbserver package ships it)"
fi
if ! command -v "$BPFTRACE" >/dev/null 2>&1; then
	bt_ok=0; bt_why="bpftrace not installed (apt-get install bpftrace)"
elif [ "$(id -u)" != 0 ]; then
	bt_ok=0; bt_why="bpftrace needs root"
fi
command -v perf >/dev/null 2>&1 || perf_ok=0

work=$(mktemp -d "${TMPDIR:-/tmp}/speed-bench.XXXXXX") || die "mktemp"
# Not PIE: gdbserver's in-process agent places its jump pads low in the
# address space, beyond a jump's reach of a PIE's code ("Jump back from
# jump pad too far from tracepoint").  Every column runs this binary.
TARGET=$work/ipa-target
${CC:-cc} -g -O2 -no-pie -o "$TARGET" "$here/ipa-target.c" || die "cannot build $TARGET"
failed=1
trap '[ "${KEEP:-0}" = 1 ] || [ "$failed" = 1 ] || rm -rf "$work"; [ -n "${btpid:-}" ] && kill "$btpid" 2>/dev/null' EXIT
pin() { taskset -c "$CPU" "$@"; }
elapsed() { sed -n 's/^elapsed_ns=\([0-9]*\) n=.*/\1/p' "$1" 2>/dev/null; }
cputime() { sed -n 's/^elapsed_ns=.* cpu_ns=\([0-9]*\).*/\1/p' "$1" 2>/dev/null; }

# --- gdb scripts: the same for the agent and gdbserver, but `ftrace` for
# gdbserver (its in-process agent runs only fast tracepoints).
script() {	# $1 file, $2 trace command, $3 collect line, $4 buffer bytes
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
set trace-buffer-size $4
break bench_done
tstart
continue
tstatus
kill
GDB
}
for stub in agent gs; do
	t=trace
	[ $stub = gs ] && t=ftrace
	script "$work/regs.$stub.gdb" "$t hot" 'collect $regs' $((N * 2600 + 1048576))
	script "$work/args6.$stub.gdb" "$t hot6" 'collect $rdi, $rsi, $rdx, $rcx, $r8, $r9' $((N * 2600 + 1048576))
	script "$work/mem64.$stub.gdb" "$t hot" 'collect *b' $((N * 2600 + 1048576))
	script "$work/cond.$stub.gdb" "$t hot if gate == 1" 'collect $regs' 1048576
done

frames_want() { case $1 in cond) echo 0 ;; *) echo "$N" ;; esac; }
mode_of() { case $1 in args6) echo 6 ;; ret|rethist) echo r ;; *) echo 1 ;; esac; }

run_untraced() {	# $1 run
	pin "$TARGET" "$N" "$work/untraced.$1.out" || die "the target failed"
	elapsed "$work/untraced.$1.out" >>"$work/untraced.ns"
	cputime "$work/untraced.$1.out" >>"$work/untraced.cpu"
}

run_gdb() {	# $1 cfg, $2 stub (agent|gs), $3 run
	local cfg=$1 stub=$2 r=$3 out=$work/$1.$2.$3.out log=$work/$1.$2.$3.log cmd created
	if [ $stub = agent ]; then
		cmd="$AGENT --tp-strategy=pad - $TARGET $N $out $(mode_of "$cfg")"
	else
		cmd="$GDBSERVER --wrapper env LD_PRELOAD=$IPA_LIB -- - $TARGET $N $out $(mode_of "$cfg")"
	fi
	pin timeout 900 "$GDB" -nx -batch -ex "target remote | $cmd" \
		-x "$work/$cfg.$stub.gdb" >"$log" 2>&1
	grep -q "^Trace stopped" "$log" && die "$cfg/$stub run $r: $(grep '^Trace stopped' "$log") (see $log)"
	created=$(sed -En 's/^(Collected|Buffer contains) ([0-9]+) trace frames.*/\2/p' "$log" | tail -n1)
	[ "${created:-x}" = "$(frames_want "$cfg")" ] ||
		die "$cfg/$stub run $r: ${created:-no} trace frames, expected $(frames_want "$cfg") (see $log)"
	local e
	e=$(elapsed "$out")
	[ -n "$e" ] || die "$cfg/$stub run $r: no elapsed_ns (see $log)"
	echo "$e" >>"$work/$cfg.$stub.ns"
	cputime "$out" >>"$work/$cfg.$stub.cpu"
}

# The agent's args6 is probe-trace's entry probe with its six arguments,
# recorded into a file: the product's path, recorder included.
run_pt_args6() {	# $1 run
	local out=$work/args6.pt.$1.out file=$work/args6.pt.$1.tfile frames
	pin "$PT" record --agent="$AGENT -" -q -o "$file" -e 'hot6 args=6' -- "$TARGET" "$N" "$out" 6 \
		>"$file.log" 2>&1 || die "probe-trace args6 run $1 failed (see $file.log)"
	frames=$("$PT" dump --summary "$file" | awk 'NR == 1 { print $1 }')
	[ "$frames" = "$N" ] || die "probe-trace args6 run $1: $frames frames, expected $N"
	elapsed "$out" >>"$work/args6.pt.ns"
	cputime "$out" >>"$work/args6.pt.cpu"
	rm -f "$file"
}

# Entry + return: probe-trace's return probe, the pads' shadow stack and
# trampoline (no stop), two frames a call into a file.
run_pt_ret() {	# $1 run
	local out=$work/ret.pt.$1.out file=$work/ret.pt.$1.tfile frames
	pin "$PT" record --agent="$AGENT -" -q -o "$file" -e 'hotr args=1' -e 'hotr%return' \
		-- "$TARGET" "$N" "$out" r >"$file.log" 2>&1 ||
		die "probe-trace ret run $1 failed (see $file.log)"
	frames=$("$PT" dump --summary "$file" | awk 'NR == 1 { print $1 }')
	[ "$frames" = $((2 * N)) ] || die "probe-trace ret run $1: $frames frames, expected $((2 * N))"
	elapsed "$out" >>"$work/ret.pt.ns"
	cputime "$out" >>"$work/ret.pt.cpu"
	rm -f "$file"
}

# Entry + return as a histogram the process keeps: no frames; the calls
# it counted must be the loop's.
run_pt_rethist() {	# $1 run
	local out=$work/rethist.pt.$1.out log=$work/rethist.pt.$1.log n
	pin "$PT" record --agent="$AGENT -" -o "$work/rethist.tfile" -e 'hotr%return hist' \
		-- "$TARGET" "$N" "$out" r >"$log" 2>&1 ||
		die "probe-trace rethist run $1 failed (see $log)"
	n=$(sed -n 's/^hotr%return: \([0-9]*\) calls,.*/\1/p' "$log")
	[ "${n:-x}" = "$N" ] || die "probe-trace rethist run $1: ${n:-no} calls counted, expected $N (see $log)"
	elapsed "$out" >>"$work/rethist.pt.ns"
	cputime "$out" >>"$work/rethist.pt.cpu"
	rm -f "$work/rethist.tfile"
}

# bpftrace exits by itself at bench_done() (its exit() prints the maps);
# one that does not is sent SIGTERM (SIGINT is ignored by a background
# job of a script), then killed.
stop_bt() {
	for _ in $(seq 600); do	# a loaded machine takes seconds
		kill -0 "$btpid" 2>/dev/null || return
		sleep 0.1
	done
	kill -TERM "$btpid" 2>/dev/null
	for _ in $(seq 100); do
		kill -0 "$btpid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$btpid" 2>/dev/null
}

# bpftrace: started on the target's path (every process running it),
# then the target pinned; the probes' hit count checked at exit.
bt_prog() {	# $1 cfg
	local t=$TARGET
	case $1 in
	regs) echo "uprobe:$t:hot { @s = sum(reg(\"di\") + reg(\"si\") + reg(\"sp\") + reg(\"bp\")); @n = count(); }" ;;
	args6) echo "uprobe:$t:hot6 { @s = sum(arg0 + arg1 + arg2 + arg3 + arg4 + arg5); @n = count(); }" ;;
	mem64) echo "uprobe:$t:hot { \$p = (uint64 *)arg0; @s = sum(\$p[0] + \$p[1] + \$p[2] + \$p[3] + \$p[4] + \$p[5] + \$p[6] + \$p[7]); @n = count(); }" ;;
	cond) echo "uprobe:$t:hot / (*(int32 *)uaddr(\"gate\")) == 1 / { @n = count(); } uprobe:$t:hot { @all = count(); }" ;;
	ret) echo "uprobe:$t:hotr { @t[tid] = nsecs; @a = sum(arg0); } uretprobe:$t:hotr { @lat = sum(nsecs - @t[tid]); @r = sum(retval); @n = count(); }" ;;
	rethist) echo "uprobe:$t:hotr { @t[tid] = nsecs; } uretprobe:$t:hotr /@t[tid]/ { @h = hist(nsecs - @t[tid]); delete(@t[tid]); @n = count(); }" ;;
	esac
}

run_bt() {	# $1 cfg, $2 run
	local cfg=$1 r=$2 out=$work/$1.bt.$2.out log=$work/$1.bt.$2.log n
	# BEGIN runs once every probe is attached.
	# bench_done() (after the loop) ends it: its maps printed, no signal.
	"$BPFTRACE" -e "BEGIN { printf(\"bench-ready\\n\"); } $(bt_prog "$cfg") uprobe:$TARGET:bench_done { exit(); }" >"$log" 2>&1 &
	btpid=$!
	for _ in $(seq 600); do
		grep -qs "^bench-ready" "$log" && break
		kill -0 "$btpid" 2>/dev/null || break
		sleep 0.1
	done
	if ! grep -q "^bench-ready" "$log"; then
		kill "$btpid" 2>/dev/null
		wait "$btpid" 2>/dev/null
		btpid=
		bt_ok=0
		bt_why="bpftrace did not attach: $(head -c 300 "$log" | tr '\n' ' ')"
		return
	fi
	pin "$TARGET" "$N" "$out" "$(mode_of "$cfg")" || die "the target failed under bpftrace"
	stop_bt
	wait "$btpid" 2>/dev/null
	btpid=
	if [ "$cfg" = cond ]; then
		n=$(sed -n 's/^@all: \([0-9]*\)$/\1/p' "$log")
		[ "$(sed -n 's/^@n: \([0-9]*\)$/\1/p' "$log")" -gt 0 ] 2>/dev/null &&
			die "bpftrace cond run $r: the condition held (see $log)"
	else
		n=$(sed -n 's/^@n: \([0-9]*\)$/\1/p' "$log")
	fi
	[ "${n:-x}" = "$N" ] || die "bpftrace $cfg run $r: ${n:-no} hits counted, expected $N (see $log)"
	elapsed "$out" >>"$work/$cfg.bt.ns"
	cputime "$out" >>"$work/$cfg.bt.cpu"
}

# --- the recorder: REC_N calls into a file, nothing lost.
run_record() {
	local out=$work/record.out file=$work/record.tfile frames lost cpu=
	local pfx=()
	[ $perf_ok = 1 ] && pfx=(perf stat -x, -e task-clock -o "$work/record.perf" --)
	pin "${pfx[@]}" "$PT" record --agent="$AGENT -" -o "$file" -e 'hot args=2' -- "$TARGET" "$REC_N" "$out" \
		>"$file.log" 2>&1 || die "probe-trace record of $REC_N calls failed (see $file.log)"
	frames=$("$PT" dump --summary "$file" | awk 'NR == 1 { print $1 }')
	lost=$(sed -En 's/.* ([0-9]+) (frames? )?lost.*/\1/p' "$file.log" | tail -n1)
	rec_e=$(elapsed "$out")
	[ -n "$rec_e" ] || die "record: no elapsed_ns"
	[ $perf_ok = 1 ] && cpu=$(awk -F, '$3 == "task-clock" { print $1 }' "$work/record.perf")
	rec_frames=$frames rec_lost=${lost:-0} rec_cpu_ms=$cpu
	rec_bytes=$(stat -c %s "$file")
	rm -f "$file"
}

run_record_bt() {
	local out=$work/record.bt.out log=$work/record.bt.log lines
	"$BPFTRACE" -o "$work/record.bt.txt" -e "BEGIN { printf(\"bench-ready\\n\"); } uprobe:$TARGET:hot { printf(\"%lu %lu\\n\", arg0, arg1); } uprobe:$TARGET:bench_done { exit(); }" >"$log" 2>&1 &
	btpid=$!
	for _ in $(seq 600); do
		grep -qs "^bench-ready" "$work/record.bt.txt" && break
		kill -0 "$btpid" 2>/dev/null || break
		sleep 0.1
	done
	pin "$TARGET" "$BT_REC_N" "$out" || die "the target failed under bpftrace"
	sleep 1
	stop_bt
	wait "$btpid" 2>/dev/null
	btpid=
	lines=$(grep -c '^[0-9]' "$work/record.bt.txt" 2>/dev/null)
	bt_rec_lines=${lines:-0}
	bt_rec_lost=$(cat "$log" "$work/record.bt.txt" 2>/dev/null | sed -En 's/.*Lost ([0-9]+) events.*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
	bt_rec_e=$(elapsed "$out")
	rm -f "$work/record.bt.txt"
}

echo "speed-bench: N=$N calls per run, $RUNS runs, REC_N=$REC_N, all on CPU $CPU"
echo "  machine $(uname -sr), $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), load $(cut -d' ' -f1-3 /proc/loadavg)"
[ $gs_ok = 1 ] || echo "  gdbserver: not measured: $gs_why"
CFGS="regs args6 mem64 cond ret rethist"
for r in $(seq 1 "$RUNS"); do
	printf 'run %d/%d:' "$r" "$RUNS" >&2
	run_untraced "$r"
	for cfg in $CFGS; do
		printf ' %s' "$cfg" >&2
		case $cfg in
		args6) run_pt_args6 "$r" ;;
		ret) run_pt_ret "$r" ;;
		rethist) run_pt_rethist "$r" ;;
		*) run_gdb "$cfg" agent "$r" ;;
		esac
		[ $gs_ok = 1 ] && [ $cfg != ret ] && [ $cfg != rethist ] && run_gdb "$cfg" gs "$r"
		[ $bt_ok = 1 ] && run_bt "$cfg" "$r"
	done
	echo >&2
done
[ $bt_ok = 1 ] || echo "  bpftrace: not measured: $bt_why"
printf 'record (%s calls):' "$REC_N" >&2
run_record
[ $bt_ok = 1 ] && run_record_bt
echo >&2

median() { [ -s "$1" ] || { echo -; return; }; sort -n "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
net() {	# $1 file of elapsed (or CPU) ns, $2 the untraced median
	local m
	m=$(median "$1")
	[ "$m" = - ] && { echo -; return; }
	awk -v m="$m" -v b="$2" -v n="$N" 'BEGIN { printf "%.1f", (m - b) / n }'
}
base=$(median "$work/untraced.ns")
cbase=$(median "$work/untraced.cpu")
echo
echo "ns per call, net of the untraced loop, median of $RUNS; wall: the loop's"
echo "elapsed time on CPU $CPU (the stub, the recorder and whatever else runs"
echo "there included; untraced $(awk -v b="$base" -v n="$N" 'BEGIN { printf "%.1f", b / n }') ns);"
echo "thread: the traced thread's own CPU time in the loop (a stop's tracer"
echo "work and the machine's other load left out; untraced $(awk -v b="$cbase" -v n="$N" 'BEGIN { printf "%.1f", b / n }') ns)"
printf '%-8s %-44s %17s %17s %17s %6s\n' "" "" "probe-agent" "gdbserver ftrace" "bpftrace uprobe" ""
printf '%-8s %-44s %8s %8s %8s %8s %8s %8s %6s\n' config probe-agent wall thread wall thread wall thread goal
goal_of() { case $1 in regs) echo 80 ;; args6) echo 30 ;; mem64) echo 60 ;; cond) echo 10 ;; ret|rethist) echo 120 ;; esac; }
what_of() {
	case $1 in
	regs) echo "pad, collect \$regs" ;;
	args6) echo "probe-trace record hot6 args=6 (+recorder)" ;;
	mem64) echo "pad + collector, collect *b" ;;
	cond) echo "pad, native check, gate == 1 false" ;;
	ret) echo "probe-trace hotr args=1 + hotr%return" ;;
	rethist) echo "probe-trace hotr%return hist (no frames)" ;;
	esac
}
for cfg in $CFGS; do
	k=$cfg.agent
	[ $cfg = args6 ] && k=args6.pt
	[ $cfg = ret ] && k=ret.pt
	[ $cfg = rethist ] && k=rethist.pt
	a=$(net "$work/$k.ns" "$base") ac=$(net "$work/$k.cpu" "$cbase")
	g=- gc=- b=- bc=-
	[ $gs_ok = 1 ] && [ $cfg != ret ] && [ $cfg != rethist ] && g=$(net "$work/$cfg.gs.ns" "$base") gc=$(net "$work/$cfg.gs.cpu" "$cbase")
	[ $bt_ok = 1 ] && b=$(net "$work/$cfg.bt.ns" "$base") bc=$(net "$work/$cfg.bt.cpu" "$cbase")
	verdict=$(awk -v a="$a" -v g="$(goal_of $cfg)" 'BEGIN { print (a + 0 <= g) ? "PASS" : "MISS" }')
	printf '%-8s %-44s %8s %8s %8s %8s %8s %8s %6s %s (wall)\n' "$cfg" "$(what_of $cfg)" \
		"$a" "$ac" "$g" "$gc" "$b" "$bc" "<=$(goal_of $cfg)" "$verdict"
done
echo
echo "recorder: probe-trace record 'hot args=2', $REC_N calls into a file on CPU $CPU"
awk -v n="$REC_N" -v f="$rec_frames" -v l="$rec_lost" -v e="$rec_e" -v c="${rec_cpu_ms:-}" -v by="$rec_bytes" 'BEGIN {
	printf "  frames in the file %d of %d calls, lost (reported) %d: %s\n", f, n, l,
		(f == n && l == 0) ? "none lost" : "LOST"
	printf "  loop %.2f s: %.0f frames/s into the file (%.0f ns per call), %.1f MB\n",
		e / 1e9, f / (e / 1e9), e / n, by / 1e6
	if (c != "")
		printf "  CPU of agent + recorder + program (perf task-clock): %.2f s, %.0f frames per CPU second\n",
			c / 1000, f / (c / 1000)
	printf "  goal >= 5000000 frames/s, none lost: %s\n",
		(f == n && l == 0 && f / (e / 1e9) >= 5e6) ? "PASS" : "MISS"
}'
if [ $bt_ok = 1 ]; then
	awk -v n="$BT_REC_N" -v f="$bt_rec_lines" -v l="$bt_rec_lost" -v e="$bt_rec_e" 'BEGIN {
		printf "  bpftrace printf into a file: %d lines of %d calls, %d events it reports lost, loop %.2f s (%.0f ns per call)\n",
			f, n, l, e / 1e9, e / n }'
fi
echo "  gdbserver: no headless recorder (frames stay in its buffer until gdb reads them)"
echo "ret, rethist: gdbserver has no return probes (its column is -)"
failed=0
