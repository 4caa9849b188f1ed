#!/bin/sh
# arm jump pads (save, collector, hand-off, restore, window) run by the CPU
# against the original code in place (arm-pad-exec.c), natively on a
# 32-bit ARM host, else under qemu-arm-static.  Exit: 0 pass, 1 mismatch,
# 77 no cross compiler, static libc or qemu-user, 99 build failure.
. "${top_srcdir:-.}/tests/lib/common.sh"
TLIB_NAME=arm-pad-exec
tlib_cross_arch_test arm arm-pad-exec -pthread
