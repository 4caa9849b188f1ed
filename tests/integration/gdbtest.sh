#!/bin/bash
# gdbtest.sh CASE.itest - run one integration test case.
#
# The runner every tests/integration/*.itest case goes through (automake's
# ITEST_LOG_COMPILER).  It finds gdb and the stub, makes a scratch
# directory, defines the helpers below, then sources the case file.  A case
# is bash: it writes gdb command scripts, runs them with run_gdb against the
# stub, and checks real values: what gdb printed against what the target
# program itself reported as ground truth (see progs/ground.h).
#
# Environment:
#   STUB          the stub under test (default $top_builddir/agent/probe-agent;
#                 there is no fallback: a missing stub is a framework error).
#                 Any gdbserver-compatible stub works: STUB=/usr/bin/gdbserver.
#   GDB           gdb to use (default: gdb in PATH; missing = skip).
#   ITEST_TRANSPORTS   transports to run cases over (default "stdio tcp").
#   ITEST_KEEP=1  keep the scratch directory.
#   ITEST_VERBOSE=1    dump every session's transcript, not only failures.
#
# Exit: 0 pass, 1 fail, 77 skip, 99 framework error (automake conventions).
#
# The plumbing (scratch folder, cleanup, the stub's start, the checks) is
# tests/lib/common.sh's; a case may call its tlib_* functions too.
#
# Helpers a case uses:
#   prog NAME                 path of a built target program
#   mark FILE MARKNAME        line number of the /* MARK:MARKNAME */ comment
#   each_transport FUNC       run FUNC once per transport ($TRANSPORT)
#   run_gdb KIND PROG [ARGS]  gdb -batch with the script on stdin; KIND is
#                             remote | extended | attach:PID | nofile;
#                             the stub gets the options in ${STUB_OPTS[@]},
#                             gdb the commands in $PRE_TARGET before the
#                             target command (settings read when connecting)
#                             Sets $OUT (normalised), $RAW, $STUBLOG, $GROUND.
#   ground_val KEY            value of KEY=... in the last session's ground file
#   gdb_val KEY               value of "itest KEY=..." printed by the gdb script
#   check_eq WHAT ACTUAL EXPECTED,  check_match WHAT REGEX TEXT,
#   expect_seq < lines        lines that must appear in $OUT, in this order
#   expect_count N REGEX      exactly N lines of $OUT match REGEX
#   start_loop                start progs/loop untraced: $BG_PID, $BG_GROUND
#   process_state PID         R/S/t/T/Z from /proc, or "gone"
#   fail MSG, skip MSG, framework_error MSG

set -u

: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
# shellcheck source=../lib/common.sh
. "$top_srcdir/tests/lib/common.sh"
tlib_case "${1:-}" .itest integration
itest_srcdir=$TLIB_SRCDIR
progdir=$TLIB_PROGDIR

# A case that drives another debugger (lldb.itest) says ITEST_NO_GDB=1
# in its first lines' comment: gdb is then not needed.
if grep -q '^# ITEST_NO_GDB=1' "$case_file"; then
	GDB=${GDB:-gdb}
else
	# A missing gdb is a skip, not a failure (the stub may be fine).
	tlib_find_gdb
fi
# The stub: never silently fall back to another one.
tlib_find_stub

# Options run_gdb gives the stub before COMM (a case sets them).
STUB_OPTS=()

# Limits: one gdb session, one wait for a stub to listen or exit.
GDB_TIMEOUT=${ITEST_GDB_TIMEOUT:-60}
LISTEN_TIMEOUT=10

# Every background process started is killed on any exit (track_pid).
tlib_init "itest-$case_name" "${ITEST_KEEP:-0}"
T=$TLIB_DIR

# --- results -----------------------------------------------------------

n_fail=0		# failures in the current transport run
all_fail=0
n_skip=0
n_run=0
SESSION=0

fail() {
	echo "FAIL [$case_name/${TRANSPORT:-none}]: $*"
	n_fail=$((n_fail + 1))
	all_fail=$((all_fail + 1))
}

skip() {
	echo "SKIP [$case_name/${TRANSPORT:-none}]: $*"
	n_skip=$((n_skip + 1))
}

# --- programs and sources ----------------------------------------------

prog() {
	local p=$progdir/$1
	[ -x "$p" ] || [ -f "$p" ] || framework_error "target program $p not built (make check builds it)"
	echo "$p"
}

mark() {	# FILE MARK -> line number
	tlib_mark "$itest_srcdir/progs/$1" "$2"
}

# --- output normalisation ----------------------------------------------
# What varies between runs and stubs is removed or replaced by a fixed
# token, so expected text can be written once:
#   addresses -> ADDR, pids -> PID, LWP N, Thread P.T (pid.tid),
#   runs of blanks -> one space, no leading or trailing blanks,
#   source paths -> basename, transfer and libthread_db chatter -> dropped,
#   stub messages echoed through stdio -> dropped.
normalise() {
	tlib_normalise \
		-e '/^Reading symbols from /d' \
		-e '/^Remote debugging using /d' \
		-e '/^Remote debugging from host /d' \
		-e '/^\[Switching to Thread /d' \
		-e '/^Download failed: /d' \
		-e '/^warning: (Unable to find libthread_db|Could not load shared library symbols|Target and debugger are in different PID namespaces)/d' \
		-e '/^Listening on port /d' \
		-e '/^Detaching from process /d' \
		-e '/^Attached; pid = /d' \
		-e 's/process [0-9]+/process PID/g' \
		-e 's/LWP [0-9]+/LWP N/g' \
		-e 's/0x[0-9a-f]+/ADDR/g' \
		-e 's#(^|[ (=])[^ (=]*/([^/ ]+\.[ch]):([0-9]+)#\1\2:\3#g' \
		-e 's#file [^ ]*/([^/ ]+\.[ch]), line#file \1, line#g' \
		-e 's/Thread [0-9]+\.[0-9]+/Thread P.T/g'
}

# --- sessions ----------------------------------------------------------

# start_tcp_stub ARGS... - start "$STUB ARGS" on a free port.
# The literal word PORTSPEC in ARGS is replaced by 127.0.0.1:PORT.
# Sets STUB_PID and PORT and waits for "Listening on port".  A stub that
# exits or never listens is a failure of the stub (returns 1), not of the
# framework; a port taken by someone else in between is retried.
start_tcp_stub() {
	echo "+ $STUB $*" >> "$T/commands"
	if TLIB_LISTEN_TIMEOUT=$LISTEN_TIMEOUT tlib_listen "$STUBLOG" \
		$((GDB_TIMEOUT + 30)) "$STUB" "$@"; then
		STUB_PID=$TLIB_PID
		return 0
	fi
	fail "stub did not print \"Listening on port\" within ${LISTEN_TIMEOUT}s (127.0.0.1:$PORT); its output: $(cat "$STUBLOG")"
	STUB_PID=""
	return 1
}

# run_gdb KIND [PROG [ARGS...]] < script
#   remote      target remote to "$STUB PROG ARGS" (stdio or --once TCP);
#               ARGS reach the stub's command line unchanged
#   extended    target extended-remote to "$STUB --multi"; the script runs
#               the program itself (run_gdb sets remote exec-file and args)
#   attach:PID  target remote to "$STUB --attach PID"
#   nofile      like remote, but gdb gets no program file: it must read the
#               executable from the stub
# Writes the raw transcript to $RAW, normalised to $OUT, the stub's own
# output (and, on stdio, the inferior's stdout/stderr) to $STUBLOG; the
# program's ground truth lands in $GROUND.
run_gdb() {
	local kind=$1 progpath=${2:-} target="" file_arg=() a qargs="" pid="" base
	shift; [ $# -gt 0 ] && shift
	for a in "$@"; do qargs="$qargs $a"; done

	SESSION=$((SESSION + 1))
	n_run=$((n_run + 1))
	base=$T/s$SESSION-$TRANSPORT
	RAW=$base.raw OUT=$base.out STUBLOG=$base.stub GROUND=$base.ground
	SCRIPT=$base.gdb
	: > "$GROUND"; : > "$STUBLOG"
	export ITEST_GROUND=$GROUND
	STUB_PID=""

	case $kind in
	attach:*) pid=${kind#attach:}; kind=attach ;;
	esac

	case $kind/$TRANSPORT in
	remote/stdio|nofile/stdio)
		# gdb hands the command to /bin/sh on one line: a script of
		# our own carries arguments with any byte (newlines too).
		{
			echo '#!/bin/bash'
			printf 'exec %q' "$STUB"
			printf ' %q' "${STUB_OPTS[@]}" - "$progpath" "$@"
			printf ' 2>>%q\n' "$STUBLOG"
		} > "$base.launch"
		chmod +x "$base.launch"
		target="target remote | exec $base.launch" ;;
	remote/tcp|nofile/tcp)
		start_tcp_stub "${STUB_OPTS[@]}" --once PORTSPEC "$progpath" "$@" &&
			target="target remote 127.0.0.1:$PORT" ;;
	extended/stdio)
		target="target extended-remote | exec $STUB ${STUB_OPTS[*]} --multi - 2>>$STUBLOG" ;;
	extended/tcp)
		start_tcp_stub "${STUB_OPTS[@]}" --once --multi PORTSPEC &&
			target="target extended-remote 127.0.0.1:$PORT" ;;
	attach/stdio)
		# gdbserver's syntax: --attach COMM PID.
		target="target remote | exec $STUB --attach - $pid 2>>$STUBLOG" ;;
	attach/tcp)
		start_tcp_stub --once --attach PORTSPEC "$pid" &&
			target="target remote 127.0.0.1:$PORT" ;;
	*) framework_error "run_gdb: unknown kind/transport $kind/$TRANSPORT" ;;
	esac
	if [ -z "$target" ]; then	# the stub failed to start: already a failure
		: > "$RAW"; : > "$OUT"; : > "$SCRIPT"
		return 1
	fi
	[ "$kind" != nofile ] && [ -n "$progpath" ] && file_arg=("$progpath")

	{
		tlib_gdb_prelude
		echo "set remotetimeout 10"
		[ -n "${PRE_TARGET:-}" ] && printf '%s\n' "$PRE_TARGET"
		echo "$target"
		if [ "$kind" = extended ]; then
			echo "set remote exec-file $progpath"
			[ -n "$qargs" ] && echo "set args$qargs"
		fi
		cat
	} > "$SCRIPT"

	tlib_run_gdb "$GDB_TIMEOUT" "$SCRIPT" "$RAW" "${file_arg[@]}" ||
		fail "gdb timed out after ${GDB_TIMEOUT}s"
	normalise < "$RAW" > "$OUT"

	# A --once TCP stub must go away once gdb has gone.
	if [ -n "$STUB_PID" ]; then
		if ! tlib_wait_exit "$STUB_PID" "$LISTEN_TIMEOUT"; then
			fail "stub (--once) still running ${LISTEN_TIMEOUT}s after gdb left"
			kill -9 "$STUB_PID" 2>/dev/null
		fi
		wait "$STUB_PID" 2>/dev/null
		STUB_RC=$?
	fi
	[ "${ITEST_VERBOSE:-0}" = 1 ] && dump_session
	return 0
}

# start_loop: start progs/loop outside any debugger (for attach); sets
# BG_PID and BG_GROUND once the program has reported its pid.
start_loop() {
	BG_GROUND=$T/loop-$SESSION-$RANDOM.ground
	: > "$BG_GROUND"
	ITEST_GROUND=$BG_GROUND "$(prog loop)" > /dev/null 2>&1 < /dev/null &
	BG_PID=$!
	track_pid "$BG_PID"
	tlib_wait_line "$BG_GROUND" "^ground: pid=$BG_PID\$" 5 && return 0
	framework_error "progs/loop did not start: $(cat "$BG_GROUND")"
}

# process_state PID: the State letter from /proc (R, S, t, T, Z), or "gone".
process_state() {
	local st
	st=$(sed -n 's/^State:[[:space:]]*\([A-Za-z]\).*/\1/p' "/proc/$1/status" 2>/dev/null)
	echo "${st:-gone}"
}

dump_session() {
	echo "----- gdb script ($SCRIPT)"; cat "$SCRIPT"
	echo "----- gdb output, raw"; cat "$RAW"
	echo "----- gdb output, normalised"; cat "$OUT"
	echo "----- stub log"; cat "$STUBLOG"
	echo "----- program ground truth"; cat "$GROUND"
	echo "-----"
}

# Values: the program says "ground: ... KEY=VALUE ...", the gdb script says
# printf "itest KEY=VALUE\n".  The last occurrence wins.
ground_val() {
	tlib_ground_val "$GROUND" "$1"
}

gdb_val() {
	grep -o "^itest $1=.*" "$RAW" | tail -n1 | sed "s/^itest $1=//"
}

# expect_seq < EXPECTED: every line of EXPECTED appears, whole, in $OUT, in
# order (other lines may come between).  On failure: a unified diff of the
# expected lines against the output.
expect_seq() {
	local exp=$T/expected.$SESSION.$RANDOM
	cat > "$exp"
	if ! awk 'BEGIN { i = 0; n = 0 }
		  NR == FNR { want[n++] = $0; next }
		  i < n && $0 == want[i] { i++ }
		  END { if (i < n) { print "first missing line: " want[i]; exit 1 } }' \
		"$exp" "$OUT"; then
		fail "expected lines not found in order in gdb output"
		diff -u "$exp" "$OUT" | sed 's/^/    /'
		return 1
	fi
	echo "ok: $(wc -l < "$exp") expected lines in order"
}

expect_count() {	# N ERE
	local n
	n=$(grep -Ec -- "$2" "$OUT")
	check_eq "count of /$2/" "$n" "$1"
}

# rsp_client ARGS...: run rsp-client.py against $STUB; its FAIL lines are
# this case's failures.
rsp_client() {
	local rc=0 log=$T/rsp-client.$RANDOM.out
	command -v python3 >/dev/null || { skip "python3 not found"; return 0; }
	n_run=$((n_run + 1))
	timeout -k 5 120 python3 "$itest_srcdir/rsp-client.py" --stub "$STUB" "$@" \
		> "$log" 2>&1 || rc=$?
	cat "$log"
	case $rc in
	0) ;;
	77) n_run=$((n_run - 1)); skip "rsp-client.py: not applicable" ;;
	99) framework_error "rsp-client.py: framework error" ;;
	*) fail "rsp-client.py $* exited $rc" ;;
	esac
}

# each_transport FUNC: run FUNC over each transport; a failing run dumps
# every session it made.
each_transport() {
	local t first
	for t in ${ITEST_TRANSPORTS:-stdio tcp}; do
		TRANSPORT=$t
		n_fail=0
		first=$((SESSION + 1))
		echo "=== $case_name over $t"
		"$@"
		if [ "$n_fail" -gt 0 ]; then
			echo "=== $case_name over $t: FAIL ($n_fail)"
			local s f
			for s in $(seq "$first" "$SESSION"); do
				for f in "$T/s$s-$t".gdb; do
					[ -f "$f" ] || continue
					SCRIPT=$f RAW=${f%.gdb}.raw OUT=${f%.gdb}.out
					STUBLOG=${f%.gdb}.stub GROUND=${f%.gdb}.ground
					echo "##### session $s"
					dump_session
				done
			done
		else
			echo "=== $case_name over $t: PASS"
		fi
	done
}

TRANSPORT=none
# shellcheck source=/dev/null
. "$case_file"

if [ "$all_fail" -gt 0 ]; then
	echo "$case_name: $all_fail failure(s)"
	exit 1
fi
if [ "$n_run" -eq 0 ] && [ "$n_skip" -gt 0 ]; then
	exit 77
fi
exit 0
