#!/bin/sh
# insn-arm.sh - `probe-trace insn` on a 32-bit ARM object, read on this
# host with the arch of the file's e_machine.
#
# The program (tests/client/progs/insn-arm.c) is cross-compiled here for
# armhf: Thumb functions (Debian's default) with an IT block, an exclusive
# loop, literal loads, calls and a system call, and one A32 function.
# Ground truth comes from binutils: every instruction arm objdump lists
# must have a line with the same address and bytes, in the instruction set
# objdump used (the function's symbol bit 0, the $t/$a mapping symbols),
# the literal words it shows as .word (the $d mapping symbols) a "data"
# line, and an instruction the class its mnemonic implies: branches, literal
# loads and adds of the pc and the IT simulated ("emulate"); what an IT
# covers rejected unless simulated; the exclusive load, the store and
# what lies between them rejected; svc rejected; the rest boosted.
#
# Then `list --sdt` on a USDT probe in Thumb code (tests/client/progs/
# sdt-arm.c): its operands in ARM syntax, its nop decoded as Thumb.
#
# Exit: 0 pass, 1 a mismatch, 77 no arm cross compiler, 99 harness.
set -u

: "${top_builddir:=.}"
: "${top_srcdir:=.}"
pt="$top_builddir/client/probe-trace"
src="$top_srcdir/tests/client/progs/insn-arm.c"
cc=arm-linux-gnueabihf-gcc
objdump=arm-linux-gnueabihf-objdump

for t in $cc $objdump python3; do
	command -v "$t" >/dev/null 2>&1 ||
		{ echo "SKIP: no $t (gcc-arm-linux-gnueabihf)"; exit 77; }
done
[ -x "$pt" ] || { echo "ERROR: $pt not built"; exit 99; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/insn-arm.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

$cc -O2 -c "$src" -o "$tmp/insn-arm.o" || exit 99
"$pt" insn "$tmp/insn-arm.o" > "$tmp/pt" || { cat "$tmp/pt"; exit 1; }
$objdump -d "$tmp/insn-arm.o" > "$tmp/od" || exit 99

python3 - "$tmp/pt" "$tmp/od" <<'PY'
import re, sys
pt = {}
for l in open(sys.argv[1]):
    m = re.match(r'^ +([0-9a-f]+) +([24]) +(\w+) +([0-9a-f]+) +(.*)$', l)
    if m:
        pt[int(m.group(1), 16)] = (int(m.group(2)), m.group(3), m.group(4), m.group(5))
od = []
for l in open(sys.argv[2]):
    m = re.match(r'^ +([0-9a-f]+):\t([0-9a-f]{8}|[0-9a-f]{4} [0-9a-f]{4}|[0-9a-f]{4}) *\t(\S+)\t?([^@;]*)', l)
    if m:
        od.append((int(m.group(1), 16), m.group(2), m.group(3), m.group(4).strip()))

def le(hexs):
    """objdump's hex column as the bytes in memory"""
    out = ''
    for h in hexs.split():
        out += ''.join(reversed([h[i:i + 2] for i in range(0, len(h), 2)]))
    return out

cc = r'(eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le|al)?'
simulated = re.compile(r'^(b|bl|blx|bx|cbn?z|it[te]*|nop)' + cc + r'(\.[nw])?$')
fails, seen, it_left, inside = 0, set(), 0, False
for addr, hexs, mn, ops in od:
    if mn.startswith('.'):
        # a literal pool word, which the object's $d mapping symbol marks
        if addr not in pt or pt[addr][1] != 'data':
            print('FAIL: %x %s %s: not listed as data' % (addr, mn, hexs)); fails += 1
        else:
            print('ok   %4x %-2d %-8s data' % (addr, pt[addr][0], mn))
            seen.add('data')
        continue
    if addr not in pt:
        # alignment between functions is outside every symbol
        if mn != 'nop':
            print('FAIL: %x %s: no line from probe-trace' % (addr, mn)); fails += 1
        continue
    length, strategy, bytes_, reason = pt[addr]
    if bytes_ != le(hexs) or length != len(bytes_) // 2:
        print('FAIL: %x: %d bytes %s, objdump %s' % (addr, length, bytes_, hexs)); fails += 1
    pcread = re.search(r'\bpc\b', ops) is not None
    if re.match(r'^ldrex', mn):
        want, why, inside = 'reject', 'load-exclusive', True
    elif re.match(r'^strex', mn):
        want, why, inside = 'reject', 'store-exclusive', False
    elif inside:
        want, why = 'reject', 'between a load-exclusive and its store'
    elif mn == 'svc':
        want, why = 'reject', 'system call'
    elif simulated.match(mn) or pcread:
        want, why = 'emulate', None
    elif it_left:
        want, why = 'reject', 'inside an IT block'
    else:
        want, why = 'boost', None
    if it_left:
        it_left -= 1
    if re.match(r'^it[te]*$', mn):
        it_left = len(mn) - 1
    ok = strategy == want and (why is None or why in reason)
    print('%s %4x %-2d %-8s %-7s %s' % ('ok  ' if ok else 'FAIL', addr, length, mn,
                                        strategy, reason))
    if not ok:
        fails += 1
    seen.add(re.sub(r'\..*', '', mn))
    seen.add('a32' if len(hexs) == 8 else 't32' if ' ' in hexs else 't16')
for mn in ('it', 'ldrex', 'strex', 'svc', 'bl', 'bx', 'a32', 't16', 't32', 'data'):
    if mn not in seen:
        print('FAIL: no %s in the object: the test proves less than it says' % mn)
        fails += 1
sys.exit(1 if fails else 0)
PY
status=$?
[ $status -eq 0 ] || exit $status

# The same classes through `list`: the function entries, in their sets.
"$pt" list --functions "$tmp/insn-arm.o" > "$tmp/list" || { cat "$tmp/list"; exit 1; }
for f in thumb_max:boost thumb_add_fetch:boost thumb_syscall:boost arm_sum:boost \
	 thumb_main:boost; do
	grep -Eq "  ${f#*:} +${f%%:*}\$" "$tmp/list" ||
		{ echo "FAIL: list: ${f%%:*} is not ${f#*:}"; cat "$tmp/list"; exit 1; }
done
echo "list: the five entries boosted"

# A USDT probe in Thumb code: the ARM operands parse, and the probe's nop
# is decoded as Thumb (the $t mapping symbol), a simulated nop.  The
# cross compiler has no <sys/sdt.h>; the host's (systemtap-sdt-dev) is
# the same header for every arch.
sdt=""
for d in /usr/include /usr/include/*-linux-gnu; do
	[ -r "$d/sys/sdt.h" ] && { sdt=$d; break; }
done
if [ -z "$sdt" ]; then
	echo "NOTE: no <sys/sdt.h> (systemtap-sdt-dev): the USDT case is not run"
	exit 0
fi
mkdir -p "$tmp/inc/sys"
cp "$sdt/sys/sdt.h" "$sdt/sys/sdt-config.h" "$tmp/inc/sys/" 2>/dev/null ||
	cp "$sdt/sys/sdt.h" "$tmp/inc/sys/" || exit 99
$cc -O2 -I"$tmp/inc" -c "$top_srcdir/tests/client/progs/sdt-arm.c" \
	-o "$tmp/sdt-arm.o" || exit 99
"$pt" list --sdt "$tmp/sdt-arm.o" > "$tmp/sdt" 2>&1 || { cat "$tmp/sdt"; exit 1; }
"$pt" insn "$tmp/sdt-arm.o" probed > "$tmp/sdt-insn" || exit 1
pc=$(sed -n 's/^ *\([0-9a-f]*\) .*sdt:ptarm:hit.*/\1/p' "$tmp/sdt")
grep -q "emulate   sdt:ptarm:hit  -4@r0 -4@r1 -4@\[r2, #8\]\$" "$tmp/sdt" &&
	! grep -q "error:" "$tmp/sdt" &&
	grep -Eq "^ +$(printf %x "0x$pc") +2 +emulate +00bf +nop\$" "$tmp/sdt-insn" ||
	{ echo "FAIL: the USDT probe"; cat "$tmp/sdt" "$tmp/sdt-insn"; exit 1; }
echo "list --sdt: sdt:ptarm:hit at $pc simulated, its three ARM operands parsed; insn: a Thumb nop there"

