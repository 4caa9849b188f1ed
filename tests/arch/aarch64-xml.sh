#!/bin/sh
# aarch64-xml.sh - the aarch64 target.xml is a well-formed document, and
# gdb reads it as the aarch64 register file the agent's `g` packet holds:
# every register at the number and byte offset of the arch's table.
# The gdb half needs gdb-multiarch (an x86-64 gdb has no aarch64); without
# it only the XML half runs.
set -e
top_builddir=${top_builddir:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

"$top_builddir/tests/arch/target-xml" aarch64 > "$tmp/a64.xml" || exit 99
python3 - "$tmp/a64.xml" <<'PY' || exit 1
import sys, xml.etree.ElementTree as ET
t = ET.parse(sys.argv[1]).getroot()
assert t.find('architecture').text == 'aarch64'
regs = [r for f in t.findall('feature') for r in f.findall('reg')]
names = [r.get('name') for r in regs]
want = ['x%d' % i for i in range(31)] + ['sp', 'pc', 'cpsr'] + \
       ['v%d' % i for i in range(32)] + ['fpsr', 'fpcr']
assert names == want, names
assert [int(r.get('regnum')) for r in regs] == list(range(len(want)))
print('aarch64-xml: %d registers, well-formed' % len(regs))
PY

if ! command -v gdb-multiarch > /dev/null 2>&1; then
	echo "aarch64-xml: no gdb-multiarch, gdb's reading not checked"
	exit 0
fi
timeout 60 gdb-multiarch -nx -batch -ex "set tdesc filename $tmp/a64.xml" \
	-ex "maint print raw-registers" > "$tmp/regs" 2>&1 || { cat "$tmp/regs"; exit 1; }
# Name Nr Rel Offset Size: the first 68 are ours, packed in the g order.
awk 'NR > 1 && $2 < 68 { print $1, $2, $4, $5 }' "$tmp/regs" > "$tmp/got"
python3 - "$tmp/got" <<'PY' || { cat "$tmp/regs"; exit 1; }
import sys
rows = [l.split() for l in open(sys.argv[1])]
want = ['x%d' % i for i in range(31)] + ['sp', 'pc', 'cpsr'] + \
       ['v%d' % i for i in range(32)] + ['fpsr', 'fpcr']
size = lambda n: 4 if n in ('cpsr', 'fpsr', 'fpcr') else 16 if n[0] == 'v' else 8
off = 0
assert len(rows) == len(want), rows
for (name, nr, offset, sz), w in zip(rows, want):
    assert (name, int(nr), int(offset), int(sz)) == (w, want.index(w), off, size(w)), (name, nr, offset, sz)
    off += size(w)
assert off == 788
print('aarch64-xml: gdb reads the 68 registers at the g packet offsets')
PY
