#!/bin/sh
# arm XOL slots (boost and emulate) run by the CPU against the original in
# place (arm-relocate-exec.c), at 32 KiB and 39 MiB from it, natively or
# under qemu-arm-static; ARM_CFLAGS='-DSEED=7 -DSCALE=10' for a longer
# run.  Exit: 0 pass, 1 mismatch, 77 no cross compiler, static libc or
# qemu-user, 99 build failure.
. "${top_srcdir:-.}/tests/lib/common.sh"
TLIB_NAME=arm-relocate-exec
tlib_cross_arch_test arm arm-relocate-exec
