#!/bin/sh
# Runs the fuzzer of the USDT note reader and argument parser
# (tests/unit/fuzz-sdt) for a fixed number of inputs from
# tests/unit/fuzz-corpus-sdt, seed 1; see run-fuzz.sh for the exit codes
# and the FUZZ_RUNS / FUZZ_SEED overrides.
FUZZ_TARGET=sdt FUZZ_RUNS="${FUZZ_RUNS:-50000}" FUZZ_FLAGS="-close_fd_mask=3" \
	exec "${top_srcdir:-.}/tests/unit/run-fuzz.sh" "$@"
