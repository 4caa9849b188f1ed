#!/bin/sh
# insn-aarch64.sh - `probe-trace insn` on an aarch64 object, read on this
# host with the arch of the file's e_machine.
#
# The program (tests/client/progs/insn-a64.c) is cross-compiled here with
# an exclusive load/store loop, a call, ADRP and a system call in it.
# Ground truth comes from binutils: every instruction aarch64 objdump
# lists must have a line with the same address and word, and the class
# its mnemonic implies: PC readers simulated ("emulate"), the exclusive
# load and store and everything between them rejected with the reason,
# svc rejected, the rest boosted.
#
# Exit: 0 pass, 1 a mismatch, 77 no aarch64 cross compiler, 99 harness.
set -u

: "${top_builddir:=.}"
: "${top_srcdir:=.}"
pt="$top_builddir/client/probe-trace"
src="$top_srcdir/tests/client/progs/insn-a64.c"
cc=aarch64-linux-gnu-gcc
objdump=aarch64-linux-gnu-objdump

for t in $cc $objdump python3; do
	command -v "$t" >/dev/null 2>&1 || { echo "SKIP: no $t"; exit 77; }
done
[ -x "$pt" ] || { echo "ERROR: $pt not built"; exit 99; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/insn-aarch64.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

# -march=armv8-a without outline atomics: LDAXR/STLXR, not LSE or a call
$cc -O2 -march=armv8-a -mno-outline-atomics -c "$src" -o "$tmp/insn-a64.o" ||
	exit 99
"$pt" insn "$tmp/insn-a64.o" > "$tmp/pt" || { cat "$tmp/pt"; exit 1; }
$objdump -d "$tmp/insn-a64.o" > "$tmp/od" || exit 99

python3 - "$tmp/pt" "$tmp/od" <<'PY'
import re, sys
pt = {}
for l in open(sys.argv[1]):
    m = re.match(r'^ +([0-9a-f]+) +4 +(\w+) +([0-9a-f]{8}) +(.*)$', l)
    if m:
        pt[int(m.group(1), 16)] = (m.group(2), m.group(3), m.group(4))
od = []
for l in open(sys.argv[2]):
    m = re.match(r'^ +([0-9a-f]+):\t([0-9a-f]{8}) \t(\S+)', l)
    if m:
        od.append((int(m.group(1), 16), m.group(2), m.group(3)))

simulated = re.compile(r'^(b|bl|b\..*|cbn?z|tbn?z|br|blr|ret|adrp?|nop|bti)$')
fails, seen, inside = 0, set(), False
for addr, word, mn in od:
    if addr not in pt:
        # alignment between functions is outside every symbol
        if mn != 'nop':
            print('FAIL: %x %s: no line from probe-trace' % (addr, mn)); fails += 1
        continue
    strategy, bytes_, reason = pt[addr]
    le = ''.join(reversed([word[i:i + 2] for i in range(0, 8, 2)]))
    if bytes_ != le:
        print('FAIL: %x: bytes %s, objdump %s' % (addr, bytes_, word)); fails += 1
    if re.match(r'^ld[a]?x[rp]', mn):
        want, why, inside = 'reject', 'load-exclusive', True
    elif re.match(r'^st[l]?x[rp]', mn):
        want, why, inside = 'reject', 'store-exclusive', False
    elif inside:
        want, why = 'reject', 'between a load-exclusive and its store'
    elif mn == 'svc':
        want, why = 'reject', 'system call'
    elif simulated.match(mn):
        want, why = 'emulate', None
    else:
        want, why = 'boost', None
    ok = strategy == want and (why is None or why in reason)
    print('%s %6x %-8s %-7s %s' % ('ok  ' if ok else 'FAIL', addr, mn, strategy, reason))
    if not ok:
        fails += 1
    seen.add(mn)
for mn in ('ldaxr', 'stlxr', 'bl', 'adrp', 'svc', 'cbnz', 'ret'):
    if mn not in seen:
        print('ERROR: the compiler wrote no %s: the test proves nothing' % mn)
        sys.exit(99)
sys.exit(1 if fails else 0)
PY
