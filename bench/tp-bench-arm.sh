#!/bin/bash
# tp-bench-arm.sh [N] - tp-bench-cross.sh for 32-bit ARM (armhf): the
# agent's tracepoint strategies against gdbserver's breakpoint commands,
# default N=500.  See tp-bench-cross.sh.
exec bash "$(dirname "$0")/tp-bench-cross.sh" armhf "$@"
