#!/bin/bash
# tp-bench-aarch64.sh [N] - tp-bench-cross.sh for aarch64: the agent's
# tracepoint strategies against gdbserver:arm64's tracepoints, default
# N=2000.  See tp-bench-cross.sh.
exec bash "$(dirname "$0")/tp-bench-cross.sh" aarch64 "$@"
