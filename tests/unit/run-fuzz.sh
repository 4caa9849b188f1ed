#!/bin/sh
# Runs the packet-layer fuzzer for a bounded time from the seed corpus.
# Exit 0: no crash, leak or hang; 77: fuzzer not built (no clang with
# -fsanitize=fuzzer); anything else: libFuzzer found a failing input,
# saved under tests/unit/fuzz-artifacts/ in the build tree.
#
# FUZZ_TIME (seconds, default 30) and FUZZ_SEED (default 1) override the
# run; with a fixed seed and the same corpus the mutation sequence is the
# same, so a failure in CI can be replayed with the printed command.
# FUZZ_TARGET (default rsp) picks tests/unit/fuzz-$FUZZ_TARGET, its seed
# corpus and its own work and artifact folders (run-fuzz-ax.sh sets it).
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

set -x
"$fuzzer" -seed="${FUZZ_SEED:-1}" -max_total_time="${FUZZ_TIME:-30}" \
	-rss_limit_mb=1024 -timeout=5 -max_len=20000 -print_final_stats=1 \
	-artifact_prefix="$artifacts/" "$work" "$seeds"
status=$?
set +x
rm -rf "$work"
exit $status
