#!/bin/sh
# aarch64 jump pads built from arch/aarch64/aarch64-pad.c, executed
# (aarch64-pad-exec.c), under qemu-aarch64-static on a host that is not
# arm64.
. "${top_srcdir:-.}/tests/arch/aarch64-native.sh"
a64_native aarch64-pad-exec
