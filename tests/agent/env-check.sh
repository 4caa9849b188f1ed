#!/bin/bash
# env-check.sh - the environment variables of doc/probe-agent.1
# (ENVIRONMENT) are checked once, at start-up: a value the agent does not
# know stops it before it starts anything (exit 1, a message naming the
# variable and what it expects); each value it knows, and an empty one,
# lets it start the program and serve (gdb's side here is an empty
# stdin: the agent ends at its end, exit 0).  The address to listen on
# is checked before anything starts too.
#
# Exit: 0 pass, 1 a failure, 99 harness error.
set -u

: "${top_builddir:=.}"
agent="$top_builddir/agent/probe-agent"
[ -x "$agent" ] || { echo "ERROR: build first"; exit 99; }
prog=$(command -v true) || { echo "ERROR: no true(1)"; exit 99; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/env-check.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }

# refused_by WHAT MESSAGE_ERE AGENT_ARGS...: the agent run with
# AGENT_ARGS (and the program) exits 1 with the line MESSAGE_ERE on
# stderr, having started neither the program nor its keeper.
refused_by() {
	local what=$1 msg=$2 rc
	shift 2
	: | timeout 20 "$@" "$prog" > "$tmp/out" 2> "$tmp/err"
	rc=$?
	if [ "$rc" != 1 ]; then
		fail "$what: exit $rc, expected 1"
	elif ! grep -qxE "$msg" "$tmp/err"; then
		fail "$what: no line '$msg' on stderr:"; cat "$tmp/err"
	elif grep -q 'created\|keeper' "$tmp/err"; then
		fail "$what: the program or the keeper was started before the refusal:"
		cat "$tmp/err"
	else
		echo "ok: $what refused ($msg)"
	fi
}

# refused VAR=VALUE MESSAGE (plain text)
refused() {
	local re
	re=$(printf '%s' "probe-agent: $1: $2" | sed 's/[][\\.*^$|+?(){}]/\\&/g')
	refused_by "$1" "$re" env "$1" "$agent" -
}

# accepted VAR=VALUE
accepted() {
	local rc
	: | timeout 20 env "$1" "$agent" - "$prog" > "$tmp/out" 2> "$tmp/err"
	rc=$?
	if [ "$rc" != 0 ]; then
		fail "$1: exit $rc, expected 0:"; cat "$tmp/err"
	elif ! grep -q "^Process $prog created" "$tmp/err"; then
		fail "$1: the program was not started:"; cat "$tmp/err"
	else
		echo "ok: $1 accepted"
	fi
}

refused PROBE_PAD_CLOCK=rdtsc "expected vdso or tsc"
refused PROBE_PAD_NATIVE_COPY=2 "expected 0 or 1"
refused PROBE_PAD_NATIVE_COPY=yes "expected 0 or 1"
refused PROBE_PAD_XSAVE=on "expected 0 or 1"
refused PROBE_PAD_FSGSBASE=off "expected 0 or 1"
refused PROBE_PAD_PREFETCH=16 "expected a number from 0 to 15"
refused PROBE_PAD_PREFETCH=-1 "expected a number from 0 to 15"
refused PROBE_PAD_PREFETCH=3x "expected a number from 0 to 15"
refused "PROBE_PAD_PREFETCH= 3" "expected a number from 0 to 15"
refused PROBE_PAD_TOUCH=yes "expected 0 or 1"
refused PROBE_AGENT_TEST_KILL=now "expected run or run-trap"

for v in PROBE_PAD_CLOCK=vdso PROBE_PAD_CLOCK=tsc PROBE_PAD_CLOCK= \
	 PROBE_PAD_NATIVE_COPY=0 PROBE_PAD_NATIVE_COPY=1 \
	 PROBE_PAD_XSAVE=0 PROBE_PAD_XSAVE=1 PROBE_PAD_FSGSBASE=0 PROBE_PAD_FSGSBASE=1 \
	 PROBE_PAD_PREFETCH=0 PROBE_PAD_PREFETCH=15 PROBE_PAD_PREFETCH= \
	 PROBE_PAD_TOUCH=0 PROBE_PAD_TOUCH=1 PROBE_PAD_TOUCH= PROBE_AGENT_TEST_KILL= \
	 PROBE_AGENT_FAR_PADS=0 PROBE_AGENT_FAR_PADS=1; do
	accepted "$v"
done

# The address to listen on is checked as early: a bad one stops the agent
# (exit 1, the message gdb's testsuite knows for a name) before it starts
# the program or its keeper.
for c in :99999 127.0.0.1:-1 tcp:abc :; do
	refused_by "'$c'" \
		"probe-agent: bad port in '${c#tcp:}': expected \\[tcp:\\|udp:\\]\\[HOST\\]:PORT, PORT 0-65535" \
		"$agent" "$c"
done
# (the resolver's own words after it: no name, or no DNS at all)
refused_by "'nosuchhost.invalid:1234'" "nosuchhost\\.invalid: cannot resolve name: .+" \
	"$agent" nosuchhost.invalid:1234
exit $status
