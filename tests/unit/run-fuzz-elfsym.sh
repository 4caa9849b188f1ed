#!/bin/sh
# Runs the fuzzer of ELF symbol reading (tests/unit/fuzz-elfsym) for a
# fixed number of inputs from tests/unit/fuzz-corpus-elfsym, seed 1; see
# run-fuzz.sh for the exit codes and the FUZZ_RUNS / FUZZ_SEED
# overrides.
FUZZ_TARGET=elfsym FUZZ_RUNS="${FUZZ_RUNS:-10000}" FUZZ_FLAGS="-close_fd_mask=3" \
	exec "${top_srcdir:-.}/tests/unit/run-fuzz.sh" "$@"
