#!/bin/sh
# aarch64 return probes with no stop (entry pad and trampoline, built
# from arch/aarch64/aarch64-retpad.c), executed (aarch64-retpad-exec.c):
# natively on an arm64 host, else under qemu-aarch64-static.  Exit: 0
# pass, 1 mismatch, 77 no cross compiler, static libc or qemu-user, 99
# build failure.
. "${top_srcdir:-.}/tests/lib/common.sh"
TLIB_NAME=aarch64-retpad-exec
tlib_cross_arch_test aarch64 aarch64-retpad-exec
