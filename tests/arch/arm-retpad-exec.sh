#!/bin/sh
# 32-bit ARM return probes with no stop (arm-retpad.c): entry pads and the
# trampoline run by the CPU (arm-retpad-exec.c), natively on a 32-bit ARM
# host, else under qemu-arm-static.  Exit: 0 pass, 1 mismatch, 77 no
# cross compiler, static libc or qemu-user, 99 build failure.
. "${top_srcdir:-.}/tests/lib/common.sh"
TLIB_NAME=arm-retpad-exec
tlib_cross_arch_test arm arm-retpad-exec -pthread
