#!/bin/sh
# The aarch64 simulations against the CPU (aarch64-simulate-native.c),
# under qemu-aarch64-static on a host that is not arm64.
. "${top_srcdir:-.}/tests/arch/aarch64-native.sh"
a64_native aarch64-simulate-native
