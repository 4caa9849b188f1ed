#!/bin/sh
# x86_64-objdump-diff.sh - the decoder's lengths against objdump's.
#
# Every instruction objdump decodes in libc, the probe-trace binary and
# the large binaries below that are installed is decoded again from the
# same bytes by x86_64_decode; lengths must agree for all of them.
# objdump's "(bad)" / ".byte" lines (data it cannot decode) and lone
# prefixes it prints on their own line are counted but not compared.
#
# Exit: 0 all agree, 1 a disagreement, 77 no objdump / not x86-64,
# 99 harness error.  Bounded: about 30 s on 2 cores here.
set -u

: "${top_builddir:=.}"
OBJDUMP=${OBJDUMP:-objdump}
check="$top_builddir/tests/arch/x86_64-objdump-check"

command -v "$OBJDUMP" >/dev/null 2>&1 || { echo "SKIP: no objdump"; exit 77; }
[ "$(uname -m)" = x86_64 ] || { echo "SKIP: host is not x86-64"; exit 77; }
[ -x "$check" ] || { echo "ERROR: $check not built"; exit 99; }

files=""
for f in /lib/x86_64-linux-gnu/libc.so.6 \
         "$top_builddir/client/probe-trace" \
         /usr/bin/gdb \
         /usr/lib/x86_64-linux-gnu/libLLVM-15.so.1 \
         /usr/lib/x86_64-linux-gnu/libLLVM-14.so.1 \
         /usr/lib/x86_64-linux-gnu/libstdc++.so.6; do
	[ -f "$f" ] && files="$files $f"
done
# libLLVM-15 and -14 are alike: one of them is enough
case "$files" in
*libLLVM-15*) files=$(echo "$files" | sed 's| [^ ]*libLLVM-14[^ ]*||') ;;
esac
[ -n "$files" ] || { echo "SKIP: no binaries to compare"; exit 77; }

status=0
tmp=${TMPDIR:-/tmp}/objdump-diff.$$
trap 'rm -f "$tmp"' EXIT
for f in $files; do
	"$OBJDUMP" -d --insn-width=16 "$f" > "$tmp" 2>/dev/null || {
		echo "ERROR: $OBJDUMP failed on $f"; exit 99; }
	"$check" "$(basename "$f")" < "$tmp"
	rc=$?
	case $rc in
	0) ;;
	1) status=1 ;;
	*) echo "ERROR: $check failed on $f ($rc)"; exit 99 ;;
	esac
done
exit $status
