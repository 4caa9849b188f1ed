#!/bin/sh
# Runs a libFuzzer target from its seed corpus, bounded.
# Exit 0: no crash, leak or hang; 77: fuzzer not built (no clang with
# -fsanitize=fuzzer); anything else: libFuzzer found a failing input,
# saved under tests/unit/fuzz-artifacts*/ in the build tree.
#
# FUZZ_TARGET (default rsp) picks tests/unit/fuzz-$FUZZ_TARGET, its seed
# corpus tests/unit/fuzz-corpus[-$FUZZ_TARGET] and its own work and
# artifact folders (run-fuzz-NAME.sh set it).  The run is bounded by
# FUZZ_RUNS inputs when set (with a fixed seed and the same corpus the
# mutation sequence is the same, so the run is the same however loaded
# the machine is), else by FUZZ_TIME seconds (default 30).  FUZZ_SEED
# (default 1) picks the sequence; FUZZ_FLAGS adds libFuzzer options.  A
# failure in CI can be replayed with the printed command.
target="${FUZZ_TARGET:-rsp}"
case "$target" in
rsp) suffix= ;;
*) suffix="-$target" ;;
esac
fuzzer="${top_builddir:-.}/tests/unit/fuzz-$target"
seeds="${top_srcdir:-.}/tests/unit/fuzz-corpus$suffix"
test -x "$fuzzer" || { echo "fuzz-$target not built: skipping"; exit 77; }

work="${top_builddir:-.}/tests/unit/fuzz-work$suffix"
artifacts="${top_builddir:-.}/tests/unit/fuzz-artifacts$suffix"
rm -rf "$work" && mkdir -p "$work" "$artifacts" || exit 99

if [ -n "${FUZZ_RUNS:-}" ]; then
	bound="-runs=$FUZZ_RUNS"
else
	bound="-max_total_time=${FUZZ_TIME:-30}"
fi
set -x
# shellcheck disable=SC2086
"$fuzzer" -seed="${FUZZ_SEED:-1}" $bound ${FUZZ_FLAGS:-} \
	-rss_limit_mb=1024 -timeout=30 -max_len=20000 -print_final_stats=1 \
	-artifact_prefix="$artifacts/" "$work" "$seeds"
status=$?
set +x
rm -rf "$work"
exit $status
