# tests/lib/common.sh - the plumbing every test harness shares.  Sourced.
#
# The harnesses (tests/integration/gdbtest.sh, tests/tracepoints/tptest.sh,
# tests/record/rectest.sh, tests/agent/probe-test.sh, tests/lib/sshd.sh,
# tests/cross/check-cross.sh) source this file for: finding the tools and
# the stub, a scratch folder removed at exit with every process the test
# started, starting a stub on a free loopback port and waiting for it, the
# exit codes, the checks, and TAP output.  See doc/testing.md.
#
# Written for POSIX sh (check-cross.sh and probe-test.sh run under dash),
# so bash harnesses and sh harnesses use the same functions.
#
# Naming: every function and variable of the library starts with tlib_
# (TLIB_ for variables); the short names the test cases have always
# called (check_eq, framework_error, track_pid, ...) are defined once at
# the end, as the same functions under their old names.
#
# Before sourcing, a harness sets top_srcdir and top_builddir (make check
# exports them; harnesses default them from their own path).
#
# Exit codes (automake's): 0 pass, 1 fail, 77 skip (a tool is missing),
# 99 framework error (the test bed broke, not the code under test).

TLIB_SKIP=77
TLIB_ERROR=99
TLIB_NAME=${TLIB_NAME:-test}
TLIB_OK=0

# --- programs for another arch, run by qemu-user ------------------------

# tlib_cross_tools ARCH (aarch64 | arm): sets TLIB_XCC to the compiler of
# statically linked ARCH programs and TLIB_XRUN to what runs them: nothing
# on an ARCH host (its cc), else qemu-ARCH-static and the cross gcc
# (A64_CC / ARM_CC override the compiler).  Skips (77) when the
# compiler, its static libc or qemu-user is missing.
tlib_cross_tools() {
	case "$1:$(uname -m)" in
	aarch64:aarch64) TLIB_XCC=${A64_CC:-cc} TLIB_XRUN= ;;
	aarch64:*) TLIB_XCC=${A64_CC:-aarch64-linux-gnu-gcc} TLIB_XRUN=qemu-aarch64-static ;;
	arm:armv7*|arm:armv8l) TLIB_XCC=${ARM_CC:-cc} TLIB_XRUN= ;;
	arm:*) TLIB_XCC=${ARM_CC:-arm-linux-gnueabihf-gcc} TLIB_XRUN=qemu-arm-static ;;
	*) tlib_error "tlib_cross_tools: unknown arch '$1'" ;;
	esac
	for _t in "$TLIB_XCC" $TLIB_XRUN; do
		command -v "$_t" >/dev/null 2>&1 ||
			tlib_skip_all "no $_t (Debian: gcc-aarch64-linux-gnu or gcc-arm-linux-gnueabihf, qemu-user-static)"
	done
	_libc=$("$TLIB_XCC" -print-file-name=libc.a)
	[ -r "$_libc" ] ||
		tlib_skip_all "no static libc for $TLIB_XCC (libc6-dev-arm64-cross or libc6-dev-armhf-cross)"
}

# tlib_cross_arch_test ARCH PROG [CC FLAGS...]: builds tests/arch/PROG.c
# for ARCH, statically, with its runner (tests/arch/aarch64-run.c or
# arm-run.c, and sig-run.c) and every arch/ source, and exits with the status of its
# run under TLIB_XRUN.  A64_CFLAGS / ARM_CFLAGS are added (a longer run
# by hand: ARM_CFLAGS='-DSEED=7 -DSCALE=10' tests/arch/PROG.sh).
tlib_cross_arch_test() {
	_arch=$1 _prog=$2
	shift 2
	: "${top_srcdir:=.}" "${top_builddir:=.}"
	tlib_cross_tools "$_arch"
	case $_arch in
	aarch64) _ext=a64 _runner=aarch64-run.c _flags=${A64_CFLAGS:-} ;;
	*) _ext=arm _runner=arm-run.c _flags=${ARM_CFLAGS:-} ;;
	esac
	_s=$top_srcdir _out="$top_builddir/tests/arch/$_prog.$_ext"
	mkdir -p "$top_builddir/tests/arch"
	# shellcheck disable=SC2086
	"$TLIB_XCC" -static -O1 -std=gnu11 -Wall -Werror -Wno-unused-parameter \
		"$@" $_flags -I"$_s" -I"$top_builddir" -o "$_out" \
		"$_s/tests/arch/$_prog.c" "$_s/tests/arch/$_runner" "$_s/tests/arch/sig-run.c" \
		"$_s"/arch/*.c "$_s"/arch/aarch64/*.c "$_s"/arch/arm/*.c \
		"$_s"/arch/x86_64/*.c || tlib_error "cannot build $_out"
	$TLIB_XRUN "$_out"
	exit $?
}

# --- exits -------------------------------------------------------------

# tlib_error MSG: a framework error; the test bed, not the code, broke.
tlib_error() {
	echo "FRAMEWORK ERROR ($TLIB_NAME): $*" >&2
	exit $TLIB_ERROR
}

# tlib_skip_all MSG: skip the whole test, saying why (a missing tool only).
tlib_skip_all() {
	echo "SKIP ($TLIB_NAME): $*"
	exit $TLIB_SKIP
}

# tlib_need TOOL WHY: skip unless TOOL is on the PATH.
tlib_need() {
	command -v "$1" >/dev/null 2>&1 || tlib_skip_all "$1 not found${2:+ ($2)}"
}

# --- cases ---------------------------------------------------------------

# tlib_case CASE EXT DIR: the case file a runner (gdbtest.sh, tptest.sh)
# was given: sets case_file, case_name (its name without EXT), TLIB_NAME,
# TLIB_SRCDIR ($top_srcdir/tests/DIR) and TLIB_PROGDIR (the built
# programs, $top_builddir/tests/DIR/progs).
tlib_case() {
	[ -n "$1" ] || tlib_error "usage: $0 CASE$2"
	case_file=$1
	case_name=$(basename "$case_file" "$2")
	TLIB_NAME=$case_name
	: "${top_builddir:=$top_srcdir}"
	TLIB_SRCDIR=$top_srcdir/tests/$3
	TLIB_PROGDIR=$top_builddir/tests/$3/progs
	[ -f "$case_file" ] || tlib_error "no such case file: $case_file"
}

# --- scratch folder and cleanup ----------------------------------------

# tlib_init NAME [KEEP]: name the test, make its scratch folder $TLIB_DIR
# (TMPDIR or /tmp) and arrange that, on any exit, every process given to
# tlib_track_pid is killed and the folder removed (kept, and said, when
# KEEP is 1).  A harness may define tlib_cleanup_hook, run first.
tlib_init() {
	TLIB_NAME=$1
	TLIB_KEEP=${2:-0}
	TLIB_DIR=$(mktemp -d "${TMPDIR:-/tmp}/$TLIB_NAME.XXXXXX") ||
		tlib_error "mktemp failed"
	: > "$TLIB_DIR/pids"
	trap tlib_cleanup EXIT
	trap 'exit 99' INT TERM HUP
}

tlib_track_pid() {
	echo "$1" >> "$TLIB_DIR/pids"
}

tlib_cleanup() {
	if command -v tlib_cleanup_hook >/dev/null 2>&1; then
		tlib_cleanup_hook
	fi
	if [ -s "$TLIB_DIR/pids" ]; then
		while read -r tlib_pid; do
			[ -n "$tlib_pid" ] && kill -9 "$tlib_pid" 2>/dev/null
		done < "$TLIB_DIR/pids"
	fi
	if [ "$TLIB_KEEP" = 1 ]; then
		echo "scratch directory kept: $TLIB_DIR"
	else
		rm -rf "$TLIB_DIR"
	fi
}

# --- tools and the stub ------------------------------------------------

# tlib_find_gdb: GDB (default: gdb on the PATH); missing is a skip.
tlib_find_gdb() {
	GDB=${GDB:-}
	[ -n "$GDB" ] || GDB=$(command -v gdb 2>/dev/null || true)
	if [ -z "$GDB" ] || ! [ -x "$GDB" ]; then
		echo "SKIP: gdb not found (set GDB=/path/to/gdb)"
		exit $TLIB_SKIP
	fi
}

# tlib_find_stub: STUB (default: the agent of this build, never another
# one when that is missing) and STUB_KIND: agent, gdbserver or
# lldb-server.
tlib_find_stub() {
	if [ -z "${STUB:-}" ]; then
		STUB=$top_builddir/agent/probe-agent
		[ -x "$STUB" ] || tlib_error "STUB unset and $STUB not built; set STUB=/path/to/stub (e.g. STUB=/usr/bin/gdbserver)"
	fi
	[ -x "$STUB" ] || tlib_error "STUB=$STUB is not executable"
	command -v timeout >/dev/null || tlib_error "timeout(1) not found"
	case $(basename "$STUB") in
	lldb-server*) STUB_KIND=lldb-server ;;
	*)	if "$STUB" --version 2>/dev/null | grep -q 'GNU gdbserver'; then
			STUB_KIND=gdbserver
		else
			STUB_KIND=agent
		fi ;;
	esac
}

# --- processes and ports -----------------------------------------------

tlib_free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null ||
		echo $((20000 + $(od -An -N2 -tu2 /dev/urandom) % 20000))
}

# tlib_wait_line FILE TEXT SECONDS [PID]: until FILE has a line with
# TEXT (grep -E).  1 when SECONDS pass first, or PID ends first.
tlib_wait_line() {
	tlib_i=$(($3 * 20))
	while [ "$tlib_i" -gt 0 ]; do
		grep -Eq -- "$2" "$1" 2>/dev/null && return 0
		if [ -n "${4:-}" ] && ! kill -0 "$4" 2>/dev/null; then
			grep -Eq -- "$2" "$1" 2>/dev/null
			return
		fi
		sleep 0.05
		tlib_i=$((tlib_i - 1))
	done
	return 1
}

# tlib_wait_exit PID SECONDS: until PID is gone (0), or 1 when it still
# runs after SECONDS.
tlib_wait_exit() {
	tlib_i=$(($2 * 20))
	while [ "$tlib_i" -gt 0 ]; do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.05
		tlib_i=$((tlib_i - 1))
	done
	! kill -0 "$1" 2>/dev/null
}

# tlib_wait_for SECONDS COMMAND...: polls every 0.1 s until COMMAND succeeds.
tlib_wait_for() {
	tlib_n=$(($1 * 10))
	shift
	until "$@"; do
		tlib_n=$((tlib_n - 1))
		[ "$tlib_n" -le 0 ] && return 1
		sleep 0.1
	done
}

# tlib_wait_alive PID SECONDS COMMAND...: tlib_wait_for, but 1 as soon
# as PID has ended too (a guest, a server the test waits on).
tlib_wait_alive() {
	tlib_p=$1 tlib_n=$(($2 * 10))
	shift 2
	until "$@"; do
		tlib_n=$((tlib_n - 1))
		if [ "$tlib_n" -le 0 ] || ! kill -0 "$tlib_p" 2>/dev/null; then
			return 1
		fi
		sleep 0.1
	done
}

# tlib_listen LOG LIFETIME COMMAND...: start COMMAND in the background,
# its output to LOG, under a timeout of LIFETIME seconds, with the word
# PORTSPEC in it replaced by 127.0.0.1:PORT on a free port, and wait up to
# TLIB_LISTEN_TIMEOUT (10) seconds for "Listening on port" (gdbserver's
# and the agent's words; lldb-server says nothing: a connect then tells).
# Sets PORT and TLIB_PID (tracked).  A port someone took in between is
# retried; a command that exits or never listens returns 1.
tlib_listen() {
	tlib_log=$1 tlib_life=$2
	shift 2
	for tlib_try in 1 2 3; do
		PORT=$(tlib_free_port)
		tlib_n=$#
		while [ "$tlib_n" -gt 0 ]; do	# rotate once, replacing PORTSPEC
			tlib_a=$1
			shift
			[ "$tlib_a" = PORTSPEC ] && tlib_a=127.0.0.1:$PORT
			set -- "$@" "$tlib_a"
			tlib_n=$((tlib_n - 1))
		done
		: > "$tlib_log"
		timeout -k 5 "$tlib_life" "$@" > "$tlib_log" 2>&1 < /dev/null &
		TLIB_PID=$!
		tlib_track_pid "$TLIB_PID"
		tlib_n=$#		# put PORTSPEC back for a retry
		while [ "$tlib_n" -gt 0 ]; do
			tlib_a=$1
			shift
			[ "$tlib_a" = "127.0.0.1:$PORT" ] && tlib_a=PORTSPEC
			set -- "$@" "$tlib_a"
			tlib_n=$((tlib_n - 1))
		done
		case $(basename "$1") in
		lldb-server*) tlib_wait_for "${TLIB_LISTEN_TIMEOUT:-10}" tlib_port_listening "$PORT" && return 0 ;;
		*) tlib_wait_line "$tlib_log" "Listening on port" "${TLIB_LISTEN_TIMEOUT:-10}" "$TLIB_PID" && return 0 ;;
		esac
		kill -9 "$TLIB_PID" 2>/dev/null
		wait "$TLIB_PID" 2>/dev/null
		grep -q "Address already in use" "$tlib_log" || break
	done
	TLIB_PID=""
	return 1
}

# tlib_port_listening PORT: something listens on TCP port PORT.
tlib_port_listening() {
	grep -q ":$(printf '%04X' "$1") 00000000:0000 0A" /proc/net/tcp 2>/dev/null
}

# --- gdb sessions ------------------------------------------------------

# tlib_gdb_prelude: the settings every batch session starts with.
tlib_gdb_prelude() {
	echo "set pagination off"
	echo "set width 0"
	echo "set height 0"
	echo "set confirm off"
}

# tlib_run_gdb SECONDS SCRIPT RAW [ARGS...]: `$GDB -nx -batch -x SCRIPT
# ARGS` under a timeout, its output in RAW, the command line in
# $TLIB_DIR/commands; sets GDB_RC; 1 when gdb was stopped by the timeout.
tlib_run_gdb() {
	tlib_s=$1 tlib_script=$2 tlib_raw=$3
	shift 3
	echo "+ $GDB -nx -batch -x $tlib_script $*" >> "$TLIB_DIR/commands"
	GDB_RC=0
	timeout -k 5 "$tlib_s" "$GDB" -nx -batch -x "$tlib_script" "$@" \
		< /dev/null > "$tlib_raw" 2>&1 || GDB_RC=$?
	[ "$GDB_RC" != 124 ] && [ "$GDB_RC" != 137 ]
}

# tlib_normalise [SED-ARGS...]: gdb's output without the lines that
# differ between stubs and runs (transfers, libthread_db, thread and
# process notices), then the harness's own sed arguments, then blanks
# squeezed to one space and trimmed.  A filter.
tlib_normalise() {
	sed -E \
		-e '/^Reading .* from remote target\.\.\.$/d' \
		-e '/^warning: File transfers from remote targets can be slow/d' \
		-e '/^(Warning|warning): ptrace\(/d' \
		-e '/^\[Thread debugging using libthread_db enabled\]/d' \
		-e '/^Using host libthread_db library/d' \
		-e '/^\[New Thread /d' \
		-e '/^\[Thread .* exited\]$/d' \
		-e '/^Process .* created; pid = /d' \
		-e '/^stdin\/stdout redirected$/d' \
		-e '/^$/d' \
		"$@" \
		-e 's/[[:space:]]+/ /g' -e 's/^ //' -e 's/ $//'
}

# --- ground truth ------------------------------------------------------

# tlib_mark FILE NAME: the line number of the /* MARK:NAME */ comment.
tlib_mark() {
	[ -f "$1" ] || tlib_error "no source $1"
	tlib_l=$(grep -n "MARK:$2 " "$1" | head -n1 | cut -d: -f1)
	[ -n "$tlib_l" ] || tlib_error "no MARK:$2 in $1"
	echo "$tlib_l"
}

# tlib_ground_val FILE KEY: the value of the last "KEY=VALUE" the program
# wrote in its ground lines ("ground: ... KEY=VALUE ...").
tlib_ground_val() {
	grep -o "[ :]$2=[^ ]*" "$1" | tail -n1 | sed "s/^.$2=//"
}

# --- checks ------------------------------------------------------------
# A failed check calls the harness's `fail MESSAGE` (each harness counts
# and reports failures its own way); a passed one says "ok: ...".

tlib_ok() {
	TLIB_OK=$((TLIB_OK + 1))
	echo "ok: $*"
}

tlib_check_eq() {	# WHAT GOT WANT
	if [ "$2" != "$3" ]; then
		fail "$1: got '$2', expected '$3'"
		return 1
	fi
	tlib_ok "$1 = '$3'"
}

tlib_check_match() {	# WHAT ERE TEXT
	if ! printf '%s\n' "$3" | grep -Eq -- "$2"; then
		fail "$1: '$3' does not match /$2/"
		return 1
	fi
	tlib_ok "$1 matches /$2/"
}

tlib_check_le() {	# WHAT A B: integers, A <= B
	if ! [ "$2" -le "$3" ] 2>/dev/null; then
		fail "$1: $2 > $3 (or not numbers)"
		return 1
	fi
	tlib_ok "$1: $2 <= $3"
}

# --- TAP ---------------------------------------------------------------
# tlib_tap DESCRIPTION COMMAND...: one TAP case; the command's output is
# shown (as comments) only when it fails.  tlib_tap_end prints the plan
# and exits 0 when every case passed, 1 otherwise.
TLIB_TAP_N=0
TLIB_TAP_FAILS=0

tlib_tap() {
	tlib_desc=$1
	shift
	TLIB_TAP_N=$((TLIB_TAP_N + 1))
	tlib_log=$TLIB_DIR/case-$TLIB_TAP_N.log
	if "$@" > "$tlib_log" 2>&1; then
		echo "ok $TLIB_TAP_N - $tlib_desc"
	else
		TLIB_TAP_FAILS=$((TLIB_TAP_FAILS + 1))
		echo "not ok $TLIB_TAP_N - $tlib_desc"
		sed 's/^/#   /' "$tlib_log"
	fi
}

tlib_tap_end() {
	echo "1..$TLIB_TAP_N"
	[ "$TLIB_TAP_FAILS" -eq 0 ]
	exit $?
}

# --- the names the cases call ------------------------------------------
framework_error() { tlib_error "$@"; }
track_pid() { tlib_track_pid "$@"; }
free_port() { tlib_free_port; }
ok() { tlib_ok "$@"; }
check_eq() { tlib_check_eq "$@"; }
check_match() { tlib_check_match "$@"; }
check_le() { tlib_check_le "$@"; }
