#!/bin/sh
# The aarch64 simulations against the CPU (aarch64-simulate-native.c),
# natively or under qemu-aarch64-static; A64_CFLAGS='-DSEED=7 -DSCALE=10'
# for a longer run.  Exit: 0 pass, 1 mismatch, 77 no cross compiler,
# static libc or qemu-user, 99 build failure.
. "${top_srcdir:-.}/tests/lib/common.sh"
TLIB_NAME=aarch64-simulate-native
tlib_cross_arch_test aarch64 aarch64-simulate-native
