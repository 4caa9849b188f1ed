#!/bin/sh
# aarch64 XOL slots (boosted and stepped) near and far from the original
# against the original in place (aarch64-relocate-exec.c), under
# qemu-aarch64-static on a host that is not arm64.
. "${top_srcdir:-.}/tests/arch/aarch64-native.sh"
a64_native aarch64-relocate-exec
