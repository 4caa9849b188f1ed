#!/bin/sh
# Runs the fuzzer of the trace-file reader (tests/unit/fuzz-tfile:
# probe-trace dump and protocol/tbuf-read.c) for a fixed number of
# inputs from tests/unit/fuzz-corpus-tfile, seed 1; see run-fuzz.sh for
# the exit codes and the FUZZ_RUNS / FUZZ_SEED overrides.
FUZZ_TARGET=tfile FUZZ_RUNS="${FUZZ_RUNS:-500}" FUZZ_FLAGS="-close_fd_mask=3" \
	exec "${top_srcdir:-.}/tests/unit/run-fuzz.sh" "$@"
