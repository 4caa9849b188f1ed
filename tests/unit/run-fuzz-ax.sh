#!/bin/sh
# Runs the agent-expression fuzzer (tests/unit/fuzz-ax) for 20 s with a
# fixed seed from tests/unit/fuzz-corpus-ax; see run-fuzz.sh for the exit
# codes and the FUZZ_TIME / FUZZ_SEED overrides.
FUZZ_TARGET=ax FUZZ_TIME="${FUZZ_TIME:-20}" \
	exec "${top_srcdir:-.}/tests/unit/run-fuzz.sh" "$@"
