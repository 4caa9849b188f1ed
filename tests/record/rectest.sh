# rectest.sh - helpers for probe-trace's recording tests (sourced).
#
# Each test file sources this, runs its cases with `check`, and ends with
# `finish` (TAP).  Everything lives in a scratch directory ($WORK, the
# library's $TLIB_DIR) removed at exit.  The plumbing is tests/lib/common.sh's.
# Environment: top_builddir/top_srcdir (set by make check), GDB, KEEP=1
# keeps the scratch directory.
set -u
: "${top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
TLIB_NAME=$(basename "$0" .test)
# shellcheck source=../lib/common.sh
. "$top_srcdir/tests/lib/common.sh"
PT="$top_builddir/client/probe-trace"
AGENT="$top_builddir/agent/probe-agent"
PROGS="$top_builddir/tests/record/progs"
CHECKER="$top_srcdir/tests/record/reccheck.py"
GDB=${GDB:-gdb}
tlib_init rectest "${KEEP:-0}"
WORK=$TLIB_DIR
# Background processes of a failed case must not outlive the test.
tlib_cleanup_hook() { jobs -p | xargs -r kill -9 2>/dev/null; }

for f in "$PT" "$AGENT"; do
	[ -x "$f" ] || tlib_error "missing $f: build first"
done
command -v python3 >/dev/null || tlib_error "python3 is required"

# check "description" command...: one TAP case; its output goes to a log
# shown only when it fails.  finish: the plan, and the exit status.  $n
# and $fails count the cases and the failed ones (a test may add its own
# "ok $n - ... # SKIP" line).
n=0
fails=0
check() {
	TLIB_TAP_N=$n TLIB_TAP_FAILS=$fails
	tlib_tap "$@"
	n=$TLIB_TAP_N fails=$TLIB_TAP_FAILS
}
finish() {
	TLIB_TAP_N=$n TLIB_TAP_FAILS=$fails
	tlib_tap_end
}

# expect_fail STATUS PATTERN command...: the command must exit with
# STATUS and print PATTERN (grep -E) on stderr.
expect_fail() {
	local want=$1 pattern=$2 status
	shift 2
	"$@" >"$WORK/out" 2>"$WORK/err"
	status=$?
	cat "$WORK/err"
	if [ "$status" -ne "$want" ]; then
		echo "exit status $status, expected $want"
		return 1
	fi
	grep -Eq -- "$pattern" "$WORK/err" || { echo "no '$pattern' in stderr"; return 1; }
}

# wait_for TIMEOUT_S command...: polls until the command succeeds.
wait_for() { tlib_wait_for "$@"; }

# agent_of PID: the tracer of process PID (its agent), or nothing.
agent_of() {
	awk '/^TracerPid:/ { if ($2 != 0) print $2 }' "/proc/$1/status" 2>/dev/null
}

# listen_agent LOG OPTIONS...: a probe-agent (--once --multi --quiet
# OPTIONS) listening on a free loopback port, under a 120 s lifetime,
# its output in LOG.  Sets PORT (chosen here, never read back from the
# log) and AGENT_PID (tracked: killed at exit).  1, with the log shown,
# when it does not say "Listening on port" within 20 s.
listen_agent() {
	local log=$1
	shift
	TLIB_LISTEN_TIMEOUT=20 tlib_listen "$log" 120 "$AGENT" --once --multi \
		--quiet "$@" PORTSPEC || { echo "the agent did not listen:"; cat "$log"; return 1; }
	AGENT_PID=$TLIB_PID
}

# agent_done SECONDS: the agent of listen_agent ends (--once: its
# client left) within SECONDS; killed, and 1, when it does not.
agent_done() {
	if ! tlib_wait_exit "$AGENT_PID" "$1"; then
		echo "the agent still runs ${1}s after its client left"
		kill -9 "$AGENT_PID" 2>/dev/null
		return 1
	fi
	wait "$AGENT_PID" 2>/dev/null
	return 0
}

lines_at_least() {	# FILE N
	[ -f "$1" ] && [ "$(grep -c '^compute' "$1")" -ge "$2" ]
}

# gdb_tfile FILE PROG COMMANDS...: gdb on a trace file, output on stdout.
gdb_tfile() {
	local file=$1 prog=$2
	shift 2
	local args=()
	for c in "$@"; do args+=(-ex "$c"); done
	timeout 60 "$GDB" -nx -batch -ex "target tfile $file" "${args[@]}" "$prog" 2>&1
}

# Arguments with every byte a shell or a joiner could change (spaces,
# quotes, `$`, globs, backslashes, newlines, empty ones, leading dashes,
# control bytes, UTF-8), for tests/integration/progs/argv, which states
# each argument it got as its length and hex bytes.
ARGV_PROG="$top_builddir/tests/integration/progs/argv"
ARGV_CASES=('a b' '$HOME' '*' '' 'x"y' "it's" 'a\b' '-x' '--help' '~' '=ls'
	'`id`' '$(id)' ';' '>out' '|' '&' "'" $'tab\there' $'\001\r' 'é'
	'!x' '{a,b}' '[ab]' '?' ' lead' '  ' '\' $'two\nlines' $'trailing\n'
	$'\n' 'last')

# argv_check GROUND ARGS...: progs/argv, run with ITEST_GROUND=GROUND,
# got exactly ARGS (bytes counted in the C locale).
argv_check() {
	local LC_ALL=C g=$1 i=0 a k c hex want
	shift
	want="argc=$(($# + 1))"
	for a in "$@"; do
		i=$((i + 1))
		hex=""
		for ((k = 0; k < ${#a}; k++)); do
			printf -v c '%02x' "'${a:k:1}"
			hex+=$c
		done
		want+=$'\n'"arg$i len=${#a} hex=$hex"
	done
	want+=$'\n'"done"
	if [ "$(sed 's/^ground: //' "$g")" != "$want" ]; then
		diff -u <(printf '%s\n' "$want") <(sed 's/^ground: //' "$g")
		return 1
	fi
	echo "$# arguments byte for byte"
}
