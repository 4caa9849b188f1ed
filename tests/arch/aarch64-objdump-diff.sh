#!/bin/sh
# aarch64-objdump-diff.sh - the aarch64 classifier against binutils on
# whole real files: Debian's arm64 libc, libm and ld.so as the cross
# toolchain installs them (libc6-arm64-cross, a dependency of
# gcc-aarch64-linux-gnu).
#
# For every instruction `probe-trace insn` lists, aarch64 objdump's
# mnemonic decides the class it must have: what reads the PC (branches,
# ADR/ADRP, literal loads) simulated or re-encoded for the slot, never
# copied as is; exclusive loads/stores and exception generation
# rejected; nop/bti simulated; everything else boosted (or rejected
# between a load-exclusive and its store).
#
# Exit: 0 pass, 1 a mismatch, 77 no aarch64 objdump or files, 99 harness.
set -u

: "${top_builddir:=.}"
pt="$top_builddir/client/probe-trace"
objdump=aarch64-linux-gnu-objdump
lib=/usr/aarch64-linux-gnu/lib

for t in $objdump python3; do
	command -v "$t" >/dev/null 2>&1 || { echo "SKIP: no $t"; exit 77; }
done
[ -r "$lib/libc.so.6" ] || { echo "SKIP: no $lib/libc.so.6"; exit 77; }
[ -x "$pt" ] || { echo "ERROR: $pt not built"; exit 99; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/a64-objdump.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
status=0
for f in libc.so.6 libm.so.6 ld-linux-aarch64.so.1; do
	[ -r "$lib/$f" ] || continue
	"$pt" insn "$lib/$f" > "$tmp/pt" 2> "$tmp/pt.err" ||
		{ cat "$tmp/pt.err"; exit 99; }
	$objdump -d --no-show-raw-insn "$lib/$f" > "$tmp/od" || exit 99
	python3 - "$f" "$tmp/pt" "$tmp/od" <<'PY' || status=1
import collections, re, sys
name, ptf, odf = sys.argv[1:]
pt = {}
for l in open(ptf):
    m = re.match(r'^ +([0-9a-f]+) +4 +(\w+) +([0-9a-f]{8}) +(.*)$', l)
    if m:
        pt[int(m.group(1), 16)] = (m.group(2), m.group(4))
pcread = re.compile(r'^(b|bl|b\.\w+|bc\.\w+|cbn?z|tbn?z|br|blr|ret|adrp?|'
                    r'braaz?|brabz?|blraaz?|blrabz?|retaa|retab)$')
excl = re.compile(r'^(ld[a]?x[rp]|st[l]?x[rp])\w*$')
bad, example, n = collections.Counter(), {}, 0
for l in open(odf):
    m = re.match(r'^ +([0-9a-f]+):\t(\S+)\s*(.*)$', l)
    if not m or int(m.group(1), 16) not in pt:
        continue
    addr, mn, ops = int(m.group(1), 16), m.group(2), m.group(3)
    s, why = pt[addr]
    n += 1
    if pcread.match(mn) or (mn in ('ldr', 'ldrsw', 'prfm') and '[' not in ops):
        ok = s == 'emulate' or (s == 'boost' and why != 'runs unchanged from the slot')
    elif excl.match(mn) or mn in ('svc', 'hvc', 'smc', 'brk', 'hlt', 'udf') \
            or mn.startswith('.inst'):
        ok = s == 'reject'
    elif mn in ('nop', 'bti'):
        ok = s == 'emulate'
    else:
        ok = s == 'boost' or (s == 'reject' and why.startswith('between'))
    if not ok:
        k = (mn, s, why)
        bad[k] += 1
        example.setdefault(k, '%x %s %s' % (addr, mn, ops))
for k, c in bad.most_common(20):
    print('FAIL %s: %d x %s as %s (%s), e.g. %s' % (name, c, k[0], k[1], k[2], example[k]))
if n < 1000:
    print('ERROR %s: only %d instructions compared' % (name, n))
    sys.exit(1)
print('%s: %d instructions, %d disagree with objdump' % (name, n, sum(bad.values())))
sys.exit(1 if bad else 0)
PY
done
exit $status
