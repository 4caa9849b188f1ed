#!/bin/sh
# aarch64 return probes with no stop (entry pad and trampoline, built
# from arch/aarch64/aarch64-retpad.c), executed (aarch64-retpad-exec.c),
# under qemu-aarch64-static on a host that is not arm64.
. "${top_srcdir:-.}/tests/arch/aarch64-native.sh"
a64_native aarch64-retpad-exec
