#!/bin/sh
# arm-xml.sh - the arm target.xml is a well-formed document, and gdb reads
# it as the register file the agent's `g` packet holds: every register at
# the remote number and `g` offset of the arch's table (gdb's own numbers
# differ: cpsr is its 25), with s0-s31 made from the d registers.  The gdb
# half needs gdb-multiarch (an x86-64 gdb has no arm); without it only the
# XML half runs.
set -e
top_builddir=${top_builddir:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

"$top_builddir/tests/arch/target-xml" arm > "$tmp/arm.xml" || exit 99
python3 - "$tmp/arm.xml" <<'PY' || exit 1
import sys, xml.etree.ElementTree as ET
t = ET.parse(sys.argv[1]).getroot()
assert t.find('architecture').text == 'arm'
feats = [f.get('name') for f in t.findall('feature')]
assert feats == ['org.gnu.gdb.arm.core', 'org.gnu.gdb.arm.vfp',
                 'org.gnu.gdb.arm.neon'], feats
regs = [r for f in t.findall('feature') for r in f.findall('reg')]
names = [r.get('name') for r in regs]
want = ['r%d' % i for i in range(13)] + ['sp', 'lr', 'pc', 'cpsr'] + \
       ['d%d' % i for i in range(32)] + ['fpscr']
assert names == want, names
assert [int(r.get('regnum')) for r in regs] == list(range(len(want)))
print('arm-xml: %d registers, well-formed' % len(regs))
PY

if ! command -v gdb-multiarch > /dev/null 2>&1; then
	echo "arm-xml: no gdb-multiarch, gdb's reading not checked"
	exit 0
fi
timeout 60 gdb-multiarch -nx -batch -ex "set tdesc filename $tmp/arm.xml" \
	-ex "maint print remote-registers" > "$tmp/regs" 2>&1 || { cat "$tmp/regs"; exit 1; }
# Name Nr Rel Offset Size Type [Rmt Nr g/G Offset]
python3 - "$tmp/regs" <<'PY' || { cat "$tmp/regs"; exit 1; }
import sys
want = ['r%d' % i for i in range(13)] + ['sp', 'lr', 'pc', 'cpsr'] + \
       ['d%d' % i for i in range(32)] + ['fpscr']
got, pseudo = {}, set()
for l in open(sys.argv[1]).readlines()[1:]:
    f = l.split()
    if len(f) >= 8 and f[0] in want:
        got[f[0]] = (int(f[-2]), int(f[-1]), int(f[4]))
    elif f and f[0].startswith('s') and f[0][1:].isdigit():
        pseudo.add(f[0])
off = 0
for n, name in enumerate(want):
    size = 8 if name[0] == 'd' else 4
    assert got.get(name) == (n, off, size), (name, got.get(name), (n, off, size))
    off += size
assert off == 328
assert pseudo == set('s%d' % i for i in range(32)), sorted(pseudo)
print('arm-xml: gdb reads the 50 registers at the g packet offsets, and s0-s31')
PY
