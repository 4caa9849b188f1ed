#!/bin/sh
# aarch64-objdump-diff.sh - the aarch64 classifier against binutils on
# whole real files:
#   - Debian's arm64 libc.so.6 and libstdc++.so.6 (libc6:arm64 and
#     libstdc++6:arm64, fetched with apt-get download like the cross test
#     bed's debs, tests/cross/fetch-debs.sh, into its cache);
#   - libc, libm and ld.so as the cross toolchain installs them
#     (libc6-arm64-cross) and its libstdc++ (libstdc++6-arm64-cross).
#
# 1. Every instruction aarch64 objdump lists (every section it
#    disassembles, not only the functions of the symbol table:
#    aarch64-objdump-check classifies each word with the engine) has the
#    class objdump's mnemonic asks for: what reads the PC (branches,
#    ADR/ADRP, literal loads) simulated or re-encoded for the slot, never
#    copied as is; exclusive loads/stores, memory copy/set (FEAT_MOPS)
#    and exception generation rejected; nop/bti simulated; everything
#    else boosted.  An instruction rejected as "between a load-exclusive
#    and its store" must be one by objdump's listing too: a
#    store-exclusive follows within 16 instructions, before any
#    load-exclusive or unconditional branch.
# 2. `probe-trace insn --summary`: at least 99% of the function entries
#    of each file take one stop or fewer (simulate or boost).
#
# Exit: 0 pass, 1 a mismatch, 77 no aarch64 objdump or files, 99 harness.
set -u

: "${top_srcdir:=.}" "${top_builddir:=.}"
pt="$top_builddir/client/probe-trace"
check="$top_builddir/tests/arch/aarch64-objdump-check"
objdump=aarch64-linux-gnu-objdump
lib=/usr/aarch64-linux-gnu/lib
cache=${PROBE_CROSS_CACHE:-${HOME:-/root}/.cache/probe-agent-cross}
min_entries=99

for t in $objdump python3; do
	command -v "$t" >/dev/null 2>&1 || { echo "SKIP: no $t"; exit 77; }
done
[ -r "$lib/libc.so.6" ] || { echo "SKIP: no $lib/libc.so.6"; exit 77; }
[ -x "$pt" ] || { echo "ERROR: $pt not built"; exit 99; }
[ -x "$check" ] || { echo "ERROR: $check not built"; exit 99; }

# Debian's own arm64 files.  Without apt (no network, arm64 unknown to
# dpkg) and nothing cached, say so: the cross toolchain's copies below
# are built from the same sources.
files=""
debs="$cache/debs-arm64"
unpacked="$cache/files-arm64"
mkdir -p "$debs" || exit 99
# shellcheck source=tests/cross/fetch-debs.sh
. "$top_srcdir/tests/cross/fetch-debs.sh"
if fetch_debs "$debs" arm64 libc6 libstdc++6; then
	want=$(cd "$debs" && ls libc6_*.deb libstdc++6_*.deb | tr '\n' ' ')
	if [ "$(cat "$unpacked/.debs" 2>/dev/null)" != "$want" ]; then
		rm -rf "$unpacked"
		mkdir -p "$unpacked"
		for d in $want; do
			dpkg-deb -x "$debs/$d" "$unpacked" || exit 99
		done
		echo "$want" > "$unpacked/.debs"
	fi
	echo "Debian arm64: $want"
	files="$unpacked/lib/aarch64-linux-gnu/libc.so.6
	       $unpacked/usr/lib/aarch64-linux-gnu/libstdc++.so.6"
else
	echo "NOTE: no libc6:arm64 / libstdc++6:arm64 debs; only the cross toolchain's files are compared"
fi
for f in libc.so.6 libm.so.6 ld-linux-aarch64.so.1 libstdc++.so.6; do
	[ -r "$lib/$f" ] && files="$files $lib/$f"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/a64-objdump.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
status=0
for f in $files; do
	[ -r "$f" ] || { echo "ERROR: $f missing"; exit 99; }
	name=$(echo "$f" | sed "s|^$cache/||")
	$objdump -d "$f" > "$tmp/od" || exit 99
	"$check" < "$tmp/od" > "$tmp/pt" || { echo "ERROR: $check failed"; exit 99; }
	python3 - "$name" "$tmp/pt" "$tmp/od" <<'PY' || status=1
import collections, re, sys
name, ptf, odf = sys.argv[1:]
pt = {}
for l in open(ptf):
    m = re.match(r'^ +([0-9a-f]+) +4 +(\w+) +([0-9a-f]{8}) +(.*)$', l)
    if m:
        pt[int(m.group(1), 16)] = (m.group(2), m.group(4))
pcread = re.compile(r'^(b|bl|b\.\w+|bc\.\w+|cbn?z|tbn?z|br|blr|ret|adrp?|'
                    r'braaz?|brabz?|blraaz?|blrabz?|retaa|retab)$')
ldx = re.compile(r'^ld[a]?x[rp]\w*$')
stx = re.compile(r'^st[l]?x[rp]\w*$')
mops = re.compile(r'^(cpyf?|setg?)[pme]\w*$')	# FEAT_MOPS sequences
leaves = re.compile(r'^(b|br|ret|braaz?|brabz?|retaa|retab)$')
code = []
for l in open(odf):
    m = re.match(r'^ +([0-9a-f]+):\t[0-9a-f]{8} \t(\S+)\s*(.*)$', l)
    if m:
        code.append((int(m.group(1), 16), m.group(2), m.group(3)))

def before_store(i):
    """objdump's own answer: a store-exclusive follows code[i] within 16
    instructions, before any load-exclusive or unconditional branch."""
    for k in range(i + 1, min(i + 17, len(code))):
        if code[k][0] != code[i][0] + 4 * (k - i):
            return False
        if stx.match(code[k][1]):
            return True
        if ldx.match(code[k][1]) or leaves.match(code[k][1]):
            return False
    return False

bad, example, n = collections.Counter(), {}, 0
for i, (addr, mn, ops) in enumerate(code):
    if addr not in pt:
        bad[('(not classified)', '', '')] += 1
        example.setdefault(('(not classified)', '', ''), '%x %s %s' % (addr, mn, ops))
        continue
    s, why = pt[addr]
    n += 1
    between = s == 'reject' and why.startswith('between') and \
        not leaves.match(mn) and before_store(i)
    if pcread.match(mn) or (mn in ('ldr', 'ldrsw', 'prfm') and '[' not in ops):
        ok = s == 'emulate' or between or \
            (s == 'boost' and why != 'runs unchanged from the slot')
    elif ldx.match(mn) or stx.match(mn) or mops.match(mn) or \
            mn in ('svc', 'hvc', 'smc', 'brk', 'hlt', 'udf') or mn.startswith('.inst'):
        ok = s == 'reject'
    elif mn in ('nop', 'bti'):
        ok = s == 'emulate'
    else:
        ok = s == 'boost' or between
    if not ok:
        k = (mn, s, why)
        bad[k] += 1
        example.setdefault(k, '%x %s %s' % (addr, mn, ops))
listed = len(code)
for k, c in bad.most_common(20):
    print('FAIL %s: %d x %s as %s (%s), e.g. %s' % (name, c, k[0], k[1], k[2], example[k]))
if n < 1000:
    print('ERROR %s: only %d instructions compared' % (name, n))
    sys.exit(1)
print('%s: %d instructions (all %d objdump lists), %d disagree with objdump'
      % (name, n, listed, sum(bad.values())))
sys.exit(1 if bad else 0)
PY
	"$pt" insn --summary "$f" > "$tmp/sum" 2> "$tmp/sum.err" ||
		{ cat "$tmp/sum.err"; exit 99; }
	entries=$(sed -n 's/^.*: \([0-9]*\) function entries$/\1/p' "$tmp/sum")
	pct=$(sed -n 's/^ *one stop or fewer (emulate + boost): \([0-9.]*\)%$/\1/p' "$tmp/sum")
	[ -n "$entries" ] && [ -n "$pct" ] ||
		{ echo "ERROR: cannot read the summary of $name"; cat "$tmp/sum"; exit 99; }
	if python3 -c "import sys; sys.exit(0 if float('$pct') >= $min_entries else 1)"; then
		echo "$name: $entries function entries, $pct% simulate or boost"
	else
		echo "FAIL $name: $entries function entries, only $pct% simulate or boost (< $min_entries%)"
		sed -n '/^by form:/,$p' "$tmp/sum"
		status=1
	fi
done
exit $status
