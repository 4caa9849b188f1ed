#!/bin/sh
# The arm simulations and next pcs against the CPU
# (arm-simulate-native.c), natively or under qemu-arm-static;
# ARM_CFLAGS='-DSEED=7 -DSCALE=10' for a longer run.  Exit: 0 pass,
# 1 mismatch, 77 no cross compiler, static libc or qemu-user, 99 build
# failure.
. "${top_srcdir:-.}/tests/lib/common.sh"
TLIB_NAME=arm-simulate-native
tlib_cross_arch_test arm arm-simulate-native
