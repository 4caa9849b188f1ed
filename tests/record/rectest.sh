# rectest.sh - helpers for probe-trace's recording tests (sourced).
#
# Each test file sources this, runs its cases with `check`, and ends with
# `finish`.  Everything lives in a scratch directory removed at exit.
# Environment: top_builddir/top_srcdir (set by make check), GDB, KEEP=1
# keeps the scratch directory.
set -u
: "${top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
PT="$top_builddir/client/probe-trace"
AGENT="$top_builddir/agent/probe-agent"
PROGS="$top_builddir/tests/record/progs"
CHECKER="$top_srcdir/tests/record/reccheck.py"
GDB=${GDB:-gdb}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rectest.XXXXXX")
cleanup() {
	# Background processes of a failed case must not outlive the test.
	jobs -p | xargs -r kill -9 2>/dev/null
	if [ "${KEEP:-0}" = 1 ]; then echo "# kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

for f in "$PT" "$AGENT"; do
	[ -x "$f" ] || { echo "missing $f: build first"; exit 99; }
done
command -v python3 >/dev/null || { echo "python3 is required"; exit 99; }

n=0
fails=0

# check "description" command...: one case; its output goes to a log
# shown only when it fails.
check() {
	local desc=$1 log
	shift
	n=$((n + 1))
	log="$WORK/case-$n.log"
	if "$@" >"$log" 2>&1; then
		echo "ok $n - $desc"
	else
		fails=$((fails + 1))
		echo "not ok $n - $desc"
		sed 's/^/#   /' "$log"
	fi
}

finish() {
	echo "1..$n"
	[ "$fails" -eq 0 ]
	exit $?
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
wait_for() {
	local limit=$(( $1 * 10 )) i=0
	shift
	until "$@"; do
		i=$((i + 1))
		[ "$i" -ge "$limit" ] && return 1
		sleep 0.1
	done
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
