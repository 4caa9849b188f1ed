#!/bin/sh
# aarch64 XOL slots (boosted and stepped) near and far from the original
# against the original in place (aarch64-relocate-exec.c), natively or
# under qemu-aarch64-static.  Exit: 0 pass, 1 mismatch, 77 no cross
# compiler, static libc or qemu-user, 99 build failure.
. "${top_srcdir:-.}/tests/lib/common.sh"
TLIB_NAME=aarch64-relocate-exec
tlib_cross_arch_test aarch64 aarch64-relocate-exec
