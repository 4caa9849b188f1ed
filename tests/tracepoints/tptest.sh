#!/bin/bash
# tptest.sh CASE.tp - run one tracepoint integration test case.
#
# automake runs every tests/tracepoints/*.tp through this script
# (TP_LOG_COMPILER).  It finds gdb and the stub, makes a scratch
# directory, defines the helpers below, sources the case file, and calls
# the case's t_main once per strategy.  Cases write gdb scripts, run them
# against the stub, and check the values gdb shows in trace frames
# against what the target program itself printed (progs/tpground.h).
#
# Environment:
#   STUB        stub under test; default $top_builddir/agent/probe-agent.
#               Unset and not built = framework error (99): never a silent
#               fallback.  STUB=/usr/bin/gdbserver runs the same cases
#               against gdbserver (STRATEGY is then ignored).
#   STRATEGY    tracepoint strategies for the agent (default: all five,
#               step boost emulate pad auto; empty: the agent's default), as
#               --tp-strategy=S; a list ("step boost emulate auto") runs the
#               case once per strategy.  Empty: no option, agent default.
#   GDB         gdb to use (default: gdb in PATH; missing = skip).
#   TP_N        number of hits of the 8-thread test (default 100000).
#   TP_TIMEOUT  seconds one gdb session may take (default 120).
#   TP_KEEP=1   keep the scratch directory; TP_VERBOSE=1 dump every session.
#
# Exit: 0 pass, 1 fail, 77 skip, 99 framework error.
#
# The plumbing (scratch folder, cleanup, the stub's start, the checks) is
# tests/lib/common.sh's; a case may call its tlib_* functions too.
#
# Helpers for cases:
#   prog NAME            path of a built target program
#   src NAME             path of a program's source
#   mark FILE NAME       line number of the "MARK:NAME */" comment in progs/FILE
#   run_gdb MODE PROG [ARGS...] < SCRIPT
#                        MODE: stdio   target remote | STUB - PROG ARGS
#                              tcp     STUB --once 127.0.0.1:PORT PROG ARGS
#                              extended  target extended-remote | STUB --once --multi -
#                                      (the script says run / start itself)
#                              connect target extended-remote to the TCP stub
#                                      started by start_tcp_multi (no program)
#                              none    no target (tfile sessions)
#                        Sets RAW (gdb's output), OUT (noise removed, blanks
#                        squeezed), GROUND (the program's ground truth file).
#   start_tcp_multi      start "STUB --multi 127.0.0.1:PORT" in the
#                        background, for sessions that disconnect and come back
#   val KEY              VALUE of the last "tpval ... KEY=VALUE" line
#   frames               the "tpframe ..." lines of the last session
#   field LINE KEY       VALUE of KEY=VALUE in LINE
#   ground PATTERN       ground lines (without "ground: ") matching PATTERN
#   tp_addr N            address gdb reported for tracepoint N
#   ts_frames            frames from the last tstatus ("Collected N" or
#                        "Buffer contains N")
#   shown_hits N         what `info tracepoints` shows for N hits (quirk-aware)
#   check_frames WHAT < EXPECTED   tpframe lines == EXPECTED
#   check_eq WHAT GOT WANT, check_match WHAT ERE TEXT, check_le WHAT A B
#   expect_line ERE      some line of OUT matches ERE
#   expect_no_line ERE   no line of OUT matches ERE
#   is_gdbserver         true when STUB is gdbserver
#   agent_only WHY       skip (77) the whole case against gdbserver
#   quirk WHAT           note a documented gdbserver difference (no assertion)
#   fail, skip, framework_error

set -u
# Cases pipe expected frames into check_frames: run it in this shell.
shopt -s lastpipe

: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
# shellcheck source=../lib/common.sh
. "$top_srcdir/tests/lib/common.sh"
tlib_case "${1:-}" .tp tracepoints
export TPTEST_CASE=$case_name
tp_srcdir=$TLIB_SRCDIR
progdir=$TLIB_PROGDIR

tlib_find_gdb
"$GDB" -nx -batch -ex 'python import gdb' >/dev/null 2>&1 ||
	{ echo "SKIP: $GDB has no Python"; exit 77; }
tlib_find_stub
is_gdbserver() { [ "$STUB_KIND" = gdbserver ]; }

GDB_TIMEOUT=${TP_TIMEOUT:-120}
TP_N=${TP_N:-100000}

tlib_init "tptest-$case_name" "${TP_KEEP:-0}"
T=$TLIB_DIR

# --- results -----------------------------------------------------------

n_fail=0
dumped=0

fail() {
	echo "FAIL [$case_name${STRAT:+/$STRAT}]: $*"
	n_fail=$((n_fail + 1))
	[ "$dumped" = 1 ] || { dumped=1; dump_session; }
}

skip() {
	echo "SKIP [$case_name]: $*"
	exit 77
}

agent_only() {
	is_gdbserver && skip "agent only: $*"
	return 0
}

quirk() {
	echo "GDBSERVER-QUIRK [$case_name]: $* (documented difference, not asserted)"
}

# How the agent runs the hits: `$(list_probes)` after tstart in a gdb
# script asks it (monitor probes; nothing for gdbserver), and check_pads
# checks the answer against the strategy of the pass: pad and auto must
# have put a jump pad at the site the case names (sites whose code takes
# one), the forced strategies none anywhere.  A pad collects the hit in the
# process (no stop) when the tracepoints there want registers only, and
# stops the thread once otherwise.
list_probes() { is_gdbserver || echo "monitor probes"; }
check_pads() {	# WHAT [collects|stops]: the second, what the pad does with a hit
	is_gdbserver && return 0
	local pads collecting
	pads=$(grep -Ec '^process [0-9]+ 0x[0-9a-f]+ pad \(jump over' "$OUT")
	collecting=$(grep -Ec '^process [0-9]+ 0x[0-9a-f]+ pad \(jump over .*; collects in the process' "$OUT")
	case $STRAT in
	pad|auto|"")
		if [ "$pads" -ge 1 ]; then ok "$1: hits come through a jump pad"
		else fail "$1: no jump pad (monitor probes)"; fi
		case ${2:-} in
		collects) check_le "$1: pads that collect in the process" 1 "$collecting" ;;
		stops) check_eq "$1: pads that collect in the process" "$collecting" 0 ;;
		esac ;;
	*)
		check_eq "$1: jump pads under --tp-strategy=$STRAT" "$pads" 0 ;;
	esac
}

# With the in-process collector (memory, conditions that read it, pass
# counts), a pad collects such hits with no stop either: list_probes_after
# lists the probes again after the hits, under a marker line, and
# check_nostops checks that listing: pads that run the collector, no hit
# that stopped a thread, some recorded.
list_probes_after() {
	is_gdbserver || printf '%s\n' 'echo probes-after-hits\n' 'monitor probes'
}
check_nostops() {	# WHAT
	is_gdbserver && return 0
	case $STRAT in pad|auto|"") ;; *) return 0 ;; esac
	local after stopped recorded
	after=$(sed -n '/^probes-after-hits$/,$p' "$OUT" |
		grep -E '^process [0-9]+ 0x[0-9a-f]+ pad \(jump over .*with its collector, no stop')
	if [ -z "$after" ]; then
		fail "$1: no pad runs the in-process collector after the hits (monitor probes)"
		return
	fi
	stopped=$(printf '%s\n' "$after" | sed -En 's/.*hits: ([0-9]+) stopped.*/\1/p' |
		awk '{ s += $1 } END { print s + 0 }')
	recorded=$(printf '%s\n' "$after" | sed -En 's/.*, ([0-9]+) recorded in the process.*/\1/p' |
		awk '{ s += $1 } END { print s + 0 }')
	check_eq "$1: hits that stopped a thread" "$stopped" 0
	check_le "$1: hits recorded in the process" 1 "$recorded"
}

# Return probes whose returns the pad takes (x86-64): after the hits
# (list_probes_after), under pad and auto, the probes whose pad pushes
# returns stopped threads STOPS times in all (default 0: an ordinary
# tracepoint beside a return probe may stop its entries), and the process
# line counts RETURNS returns recorded in the process ("-": at least one)
# with no entry left to the agent; the forced strategies have no such pad.
check_ret_nostops() {	# WHAT RETURNS [STOPS]
	is_gdbserver && return 0
	local after pushed stopped recorded fallbacks
	after=$(sed -n '/^probes-after-hits$/,$p' "$OUT")
	pushed=$(printf '%s\n' "$after" | grep -E '^process [0-9]+ 0x[0-9a-f]+ pad \(jump over .*; return pushed in the process, no stop')
	case $STRAT in
	pad|auto|"") ;;
	*)
		check_eq "$1: pads that push returns under --tp-strategy=$STRAT" \
			"$(printf '%s' "$pushed" | grep -c .)" 0
		return 0 ;;
	esac
	if [ "$(uname -m)" != x86_64 ]; then
		ok "$1: returns trap on $(uname -m) (no in-process return probes yet)"
		return 0
	fi
	if [ -z "$pushed" ]; then
		fail "$1: no pad pushes returns in the process (monitor probes)"
		return
	fi
	stopped=$(printf '%s\n' "$pushed" | sed -En 's/.*hits: ([0-9]+) stopped.*/\1/p' |
		awk '{ s += $1 } END { print s + 0 }')
	recorded=$(printf '%s\n' "$after" | sed -En 's/^process [0-9]+ returns: ([0-9]+) recorded in the process.*/\1/p' | head -n1)
	fallbacks=$(printf '%s\n' "$after" | sed -En 's/^process [0-9]+ returns: .*, ([0-9]+) entries left to the agent.*/\1/p' | head -n1)
	check_eq "$1: hits that stopped a thread at the return probes' entries" "$stopped" "${3:-0}"
	if [ "$2" = - ]; then
		check_le "$1: returns recorded in the process (no stop)" 1 "${recorded:-0}"
	else
		check_eq "$1: returns recorded in the process (no stop)" "${recorded:-none}" "$2"
	fi
	check_eq "$1: entries left to the agent's trap path" "${fallbacks:-none}" 0
}

expect_line() {	# ERE
	if ! grep -Eq -- "$1" "$OUT"; then
		fail "no output line matches /$1/"
		return 1
	fi
	ok "output has /$1/"
}

expect_no_line() {	# ERE
	if grep -Eq -- "$1" "$OUT"; then
		fail "unexpected output line: $(grep -E -- "$1" "$OUT" | head -n1)"
		return 1
	fi
	ok "output has no /$1/"
}

# check_frames WHAT < EXPECTED: the "tpframe" lines of the last session
# are exactly EXPECTED (a unified diff on failure).
check_frames() {
	local exp=$T/expected.$SESSION.$RANDOM
	cat > "$exp"
	frames > "$exp.got"
	if [ -n "${TORN_OK:-}" ] && is_gdbserver; then
		tolerate_torn "$exp" "$exp.got" "$TORN_OK"
	fi
	if ! diff -u "$exp" "$exp.got" > "$exp.diff"; then
		fail "$1: trace frames differ from ground truth"
		sed 's/^/    /' "$exp.diff"
		return 1
	fi
	ok "$1: $(wc -l < "$exp") frames equal ground truth"
}

# gdbserver 13 keeps "torn" frames when its buffer fills or wraps: the
# frame is counted, but some of its blocks were never written, so values
# that were collected read as <unavailable>.  TORN_OK=N lets check_frames
# accept up to N such frames against gdbserver (a quirk message says which);
# against the agent every frame must be whole.
tolerate_torn() {	# EXPECTED GOT MAX
	local n
	n=$(grep -c '<unavailable>' "$2")
	if [ "$n" -gt 0 ] && [ "$n" -le "$3" ]; then
		quirk "$n torn frame(s) with collected data missing: $(grep '<unavailable>' "$2" | cut -d' ' -f2 | tr '\n' ' ')"
		awk 'NR == FNR { want[$2] = $0; next }
		     /<unavailable>/ && ($2 in want) { print want[$2]; next } { print }' "$1" "$2" > "$2.t"
		mv "$2.t" "$2"
	fi
}

# --- programs ----------------------------------------------------------

prog() {
	local p=$progdir/$1
	[ -f "$p" ] || framework_error "target program $p not built (make check builds it)"
	echo "$p"
}

src() {
	local s=$tp_srcdir/progs/$1
	[ -f "$s" ] || framework_error "no source $s"
	echo "$s"
}

mark() {	# FILE NAME: the one MARK:NAME comment of the file
	local f
	f=$(src "$1")
	[ "$(grep -c "MARK:$2 \*/" "$f")" = 1 ] || framework_error "MARK:$2 in $1: not exactly once"
	tlib_mark "$f" "$2"
}

# --- sessions ----------------------------------------------------------

STUB_OPTS=()
set_strategy() {	# S
	STRAT=$1
	STUB_OPTS=()
	if ! is_gdbserver && [ -n "$STRAT" ]; then
		STUB_OPTS=("--tp-strategy=$STRAT")
	fi
}

# Noise that differs between stubs and runs, dropped from OUT.
normalise() { tlib_normalise; }

# start_tcp_multi: STUB --multi on a free port, in the background; sets
# PORT, MULTI_PID, MULTI_LOG.  It outlives gdb sessions (disconnect and
# reconnect); cleanup kills it.
start_tcp_multi() {
	MULTI_LOG=$T/multi.log
	: > "$T/multi.ground"	# one pass per strategy: start empty
	TP_GROUND=$T/multi.ground tlib_listen "$MULTI_LOG" $((GDB_TIMEOUT * 3)) \
		"$STUB" "${STUB_OPTS[@]}" --multi PORTSPEC ||
		framework_error "stub did not listen: $(cat "$MULTI_LOG")"
	MULTI_PID=$TLIB_PID
}

SESSION=0
RAW=/dev/null OUT=/dev/null GROUND=/dev/null STUBLOG=/dev/null SCRIPT=/dev/null
run_gdb() {	# MODE [PROG [ARGS...]] < script
	local mode=$1 progpath=${2:-} target="" file_arg=() once_pid="" i
	shift; [ $# -gt 0 ] && shift
	SESSION=$((SESSION + 1))
	local base=$T/s$SESSION
	RAW=$base.raw OUT=$base.out STUBLOG=$base.stub SCRIPT=$base.gdb
	if [ "$mode" = connect ]; then
		GROUND=$T/multi.ground
	else
		GROUND=$base.ground
		: > "$GROUND"
	fi
	: > "$STUBLOG"
	export TP_GROUND=$GROUND

	case $mode in
	stdio)
		target="target remote | exec $STUB ${STUB_OPTS[*]} - $progpath $* 2>>$STUBLOG" ;;
	tcp)
		tlib_listen "$STUBLOG" $((GDB_TIMEOUT + 30)) "$STUB" "${STUB_OPTS[@]}" \
			--once PORTSPEC "$progpath" "$@" ||
			framework_error "stub exited: $(cat "$STUBLOG")"
		once_pid=$TLIB_PID
		target="target remote 127.0.0.1:$PORT" ;;
	extended)
		target="target extended-remote | exec $STUB ${STUB_OPTS[*]} --once --multi - 2>>$STUBLOG
set remote exec-file $progpath"
		[ $# -gt 0 ] && target="$target
set args $*" ;;
	connect)
		target="target extended-remote 127.0.0.1:$PORT" ;;
	none) ;;
	*) framework_error "run_gdb: unknown mode $mode" ;;
	esac
	[ -n "$progpath" ] && file_arg=("$progpath")

	{
		tlib_gdb_prelude
		echo "set sysroot /"
		echo "set remotetimeout 30"
		echo "source $tp_srcdir/tphelpers.py"
		[ -n "$target" ] && echo "$target"
		cat
	} > "$SCRIPT"

	local timed_out=0
	tlib_run_gdb "$GDB_TIMEOUT" "$SCRIPT" "$RAW" "${file_arg[@]}" || timed_out=1
	normalise < "$RAW" > "$OUT"
	[ "$timed_out" = 0 ] || fail "gdb session $SESSION timed out after ${GDB_TIMEOUT}s"
	if [ -n "$once_pid" ]; then
		tlib_wait_exit "$once_pid" 10 || { fail "stub --once still running after gdb left"; kill -9 "$once_pid"; }
		wait "$once_pid" 2>/dev/null
	fi
	[ "${TP_VERBOSE:-0}" = 1 ] && dump_session
	return 0
}

dump_session() {
	echo "----- session $SESSION gdb script ($SCRIPT)"; cat "$SCRIPT"
	echo "----- gdb output"; cat "$RAW"
	echo "----- stub log"; cat "$STUBLOG"
	echo "----- ground truth ($GROUND)"; cat "$GROUND"
	echo "-----"
}

# --- values ------------------------------------------------------------

field() {	# LINE KEY
	printf '%s\n' "$1" | grep -o "\(^\| \)$2=[^ ]*" | tail -n1 | sed "s/^ *$2=//"
}

val() {		# KEY: from the last "tpval" line
	local l
	l=$(grep -a '^tpval ' "$RAW" | grep -a " $1=" | tail -n1)
	field "$l" "$1"
}

frames() { grep -a '^tpframe ' "$RAW"; }

ground() {	# PATTERN
	sed -n 's/^ground: //p' "$GROUND" | grep -E -- "$1"
}

tp_addr() {	# N
	sed -n "s/^Tracepoint $1 at \(0x[0-9a-f]*\).*/\1/p" "$RAW" | tail -n1
}

ts_frames() {
	sed -En 's/^(Collected|Buffer contains) ([0-9]+) trace frames?.*/\2/p' "$OUT" | tail -n1
}

ts_created() {
	local c
	c=$(sed -En 's/^Buffer contains [0-9]+ trace frames? \(of ([0-9]+) created total\).*/\1/p' "$OUT" | tail -n1)
	[ -n "$c" ] || c=$(ts_frames)
	echo "$c"
}

# gdbserver 13 answers qTP with decimal numbers ("V200:6000" for 200 hits)
# and gdb reads them as hex, so `info tracepoints` shows 0x200 = 512.
shown_hits() {	# N
	if is_gdbserver; then
		printf '%d\n' "0x$1"
	else
		echo "$1"
	fi
}

info_hits() {	# N: "already hit" count of tracepoint N in `info tracepoints`
	awk -v n="$1" '$1 == n && $2 ~ /tracepoint/ { t = 1; next }
		$1 ~ /^[0-9]+$/ { t = 0 }
		t && /already hit/ { for (i = 1; i <= NF; i++) if ($i == "hit") print $(i + 1) }' "$OUT" | tail -n1
}

# --- run the case ------------------------------------------------------

# shellcheck source=/dev/null
. "$case_file"
declare -F t_main >/dev/null || framework_error "$case_file defines no t_main"

# Every case runs once per execution strategy of the agent, so the fast
# paths are checked against the slow one; STRATEGY=auto (say) narrows it.
strategies=${STRATEGY-step boost emulate pad auto}
is_gdbserver && strategies=""
[ -n "$strategies" ] || strategies="-"
echo "stub: $STUB ($STUB_KIND)  gdb: $GDB  strategies: $strategies"
for s in $strategies; do
	[ "$s" = - ] && s=""
	set_strategy "$s"
	dumped=0
	t_main
done

echo "$case_name: $TLIB_OK checks passed, $n_fail failed"
[ "$n_fail" = 0 ] || exit 1
[ "$TLIB_OK" -gt 0 ] || framework_error "no check ran"
exit 0
