#!/bin/bash
# san-driver.sh - automake's test driver for the sanitizer build.
#
# In a build configured with --enable-sanitizers the agent, probe-trace
# and the unit tests stop at their first ASan, UBSan or LeakSanitizer
# report.  That alone does not fail every test: an integration test may
# ignore the agent's exit status, or send its stderr nowhere, and a leak
# is only reported when the agent exits, after gdb has said all a test
# checks.  So each test runs with the sanitizers writing their reports
# to files named after its log (tests/x/y.san.EXE.PID, through log_path),
# and a test that leaves any such file fails, with the reports appended
# to its log.
#
# Called as automake calls test-driver (options, then -- and the test
# command); it runs test-driver with the test command wrapped in this
# same script's --run mode, so test-driver still writes the log, the
# .trs file and the console line.
set -u

if [ "${1:-}" = --run ]; then
	prefix=$2
	shift 2
	rm -f "$prefix".*
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$prefix:log_exe_name=1"
	UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$prefix:log_exe_name=1"
	# The agent and probe-trace run about 3 times slower here: the
	# stress tests scale their counts down by it (record-stress.test).
	PROBE_SAN_BUILD=1
	# LeakSanitizer stops the world with ptrace at exit, which it cannot
	# in a traced process, and the keeper traces the agent: the keeper's
	# own tests (and record-salvage.test and record-hist.test, which
	# kill the agent) run without the leak check, every other test
	# without the keeper.
	case $prefix in
	*/tests/keeper/*|*/tests/record/record-salvage*|*/tests/record/record-hist*)
		ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" ;;
	*) PROBE_AGENT_NO_KEEPER=1; export PROBE_AGENT_NO_KEEPER ;;
	esac
	# The keeper's chaos cases look for rare races, which the plain
	# build's full count does; here they look for memory errors in the
	# same paths, and a quarter of the kills (at three times the cost
	# each) is enough for that.  KILLS set by the caller wins.
	case $prefix in
	*/tests/keeper/keeper-chaos*) KILLS=${KILLS:-50}; export KILLS ;;
	*/tests/keeper/keeper-ssh*) KILLS=${KILLS:-15}; export KILLS ;;
	esac
	export ASAN_OPTIONS UBSAN_OPTIONS PROBE_SAN_BUILD
	"$@"
	status=$?
	reports=$(ls "$prefix".* 2>/dev/null)
	if [ -n "$reports" ]; then
		for r in $reports; do
			echo "=== sanitizer report $r"
			cat "$r"
		done
		echo "san-driver: sanitizer reports above: failing the test"
		case $status in 0|77) status=1 ;; esac
	fi
	exit $status
fi

here=$(dirname "$0")
log=
args=()
while [ $# -gt 0 ]; do
	case $1 in
	--log-file) log=$2; args+=("$1" "$2"); shift 2 ;;
	--) shift; break ;;
	*) args+=("$1"); shift ;;
	esac
done
[ -n "$log" ] || { echo "san-driver: no --log-file" >&2; exit 99; }
exec sh "$here/../build-aux/test-driver" "${args[@]}" -- \
	bash "$here/san-driver.sh" --run "$(pwd)/${log%.log}.san" "$@"
