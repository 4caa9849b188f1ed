#!/bin/sh
# arm-objdump-diff.sh - the arm decoder and classifier against binutils
# on whole real files:
#   - Debian's armhf libc, libm, ld.so and libstdc++ as the cross
#     toolchain installs them (libc6-armhf-cross, libstdc++6-armhf-cross:
#     /usr/arm-linux-gnueabihf/lib), almost all Thumb-2;
#   - the engine's own sources (arch/, protocol/) compiled with
#     arm-linux-gnueabihf-gcc -marm, for A32 code (Debian's armhf
#     libraries have little), when the cross compiler is there.
#
# 1. Every instruction objdump lists, decoded in the instruction set
#    objdump used (an 8-digit word A32, one or two halfwords Thumb): the
#    same length; the same use of the pc (objdump names the pc in an
#    operand, or the mnemonic is a branch or adr) and the same writes to
#    it (a branch, a load or data processing to pc, ldm/pop with pc);
#    what uses the pc is never boosted, what does not is never simulated
#    (but nop and it); exclusives, svc, bkpt, udf rejected.  A rejected
#    instruction is compared on its length only (it never runs), and so
#    is one objdump calls UNDEFINED or UNPREDICTABLE; one rejected as
#    "between a load-exclusive and its store" must be one by objdump's
#    listing too: a store-exclusive follows within 16 instructions,
#    before any load-exclusive or unconditional branch.
# 2. `probe-trace insn --summary` on libc and libstdc++: at least 99% of
#    the function entries take one stop or fewer (simulate or boost).
#
# Exit: 0 pass, 1 a mismatch, 77 no arm objdump or libc, 99 harness.
set -u

: "${top_srcdir:=.}" "${top_builddir:=.}"
pt="$top_builddir/client/probe-trace"
check="$top_builddir/tests/arch/arm-objdump-check"
objdump=arm-linux-gnueabihf-objdump
cc=arm-linux-gnueabihf-gcc
lib=/usr/arm-linux-gnueabihf/lib
min_entries=99

for t in $objdump python3; do
	command -v "$t" >/dev/null 2>&1 ||
		{ echo "SKIP: no $t (binutils-arm-linux-gnueabihf, python3)"; exit 77; }
done
[ -r "$lib/libc.so.6" ] ||
	{ echo "SKIP: no $lib/libc.so.6 (libc6-armhf-cross)"; exit 77; }
[ -x "$pt" ] || { echo "ERROR: $pt not built"; exit 99; }
[ -x "$check" ] || { echo "ERROR: $check not built"; exit 99; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/arm-objdump.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

cat > "$tmp/compare.py" <<'PY'
import collections, re, sys
name, ptf = sys.argv[1:]
cc = r'(eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le|al)?'
branch = re.compile(r'^(b|bl|blx|bx|cbz|cbnz|tbb|tbh)' + cc + r'(\.n|\.w)?$')
excl = re.compile(r'^(ldrex|strex|ldaex|stlex)[bhd]?' + cc + r'(\.n|\.w)?$')
trap = re.compile(r'^(svc|bkpt|udf|hvc|smc)' + cc + r'(\.n|\.w)?$')
adr = re.compile(r'^adr' + cc + r'(\.n|\.w)?$')
ldm = re.compile(r'^(pop|ldm\w*)' + cc + r'(\.n|\.w)?$')
pcword = re.compile(r'\bpc\b')
leaves = re.compile(r'^(b|bx)(al)?(\.n|\.w)?$|^(pop|ldm\w*)(\.n|\.w)?$')
lines = []
for l in open(ptf):
    head, why, rest = l.rstrip('\n').split('\t', 2)
    text = re.split(r'\s*[@;]', rest, 1)[0].split('\t', 1)
    lines.append((head, why, rest, text[0].strip(), text[1].strip() if len(text) > 1 else ''))

def before_store(i):
    """objdump's own answer: a store-exclusive follows lines[i] within 16
    instructions, before any load-exclusive or unconditional branch."""
    at = int(lines[i][0].split(' ')[0], 16) + int(lines[i][0].split(' ')[2])
    for k in range(i + 1, min(i + 17, len(lines))):
        f = lines[k][0].split(' ')
        if int(f[0], 16) != at:
            return False
        mn, ops = lines[k][3], lines[k][4]
        if re.match(r'^(strex|stlex)', mn):
            return True
        if re.match(r'^(ldrex|ldaex)', mn) or (leaves.match(mn) and
                (not mn.startswith(('pop', 'ldm')) or pcword.search(ops))):
            return False
        at += int(f[2])
    return False

bad, example, n, isas = collections.Counter(), {}, 0, collections.Counter()
for i, (head, why, rest, _, _) in enumerate(lines):
    f = head.split(' ')
    addr, isa, odlen, mylen, s = int(f[0], 16), f[1], int(f[2]), int(f[3]), f[4]
    r, w = f[5] == '1', f[6] == '1'
    undefined = '<UNDEFINED>' in rest or '<illegal' in rest
    unpred = 'UNPREDICTABLE' in rest
    text = re.split(r'\s*[@;]', rest, 1)[0]
    parts = text.split('\t', 1)
    mn = parts[0].strip()
    ops = parts[1].strip() if len(parts) > 1 else ''
    if mn.startswith('.'):          # .word, .short: data objdump knows of
        continue
    n += 1
    isas[isa] += 1
    def fail(k):
        bad[k] += 1
        example.setdefault(k, '%x %s %s %s' % (addr, isa, mn, ops))
    if odlen != mylen:
        fail(('length', isa, '%d vs %d' % (odlen, mylen)))
        continue
    if undefined or unpred or not mn:
        continue
    store = mn.startswith('st') or mn.startswith('push')
    od_w = bool(branch.match(mn)) or \
        (not store and (ops.startswith('pc,') or ops == 'pc')) or \
        bool(ldm.match(mn) and pcword.search(ops.split('{', 1)[-1]))
    od_any = od_w or bool(adr.match(mn)) or pcword.search(ops) is not None
    if excl.match(mn) or trap.match(mn):
        if s != 'reject':
            fail((mn, s, why))
        continue
    if s == 'reject' and why.startswith('between'):
        if not before_store(i):
            fail(('between, but objdump has no store-exclusive ahead', s, why))
        continue
    if s == 'reject':
        continue    # never runs out of line: only its length matters
    if od_any != (r or w):
        fail(('pc use ' + mn, 'objdump %d mine %d' % (od_any, r or w), why))
        continue
    if od_w != w:
        fail(('pc write ' + mn, 'objdump %d mine %d' % (od_w, w), why))
        continue
    if od_any and s == 'boost':
        fail((mn, s, why))
    elif not od_any and s in ('emulate', 'step') and why not in ('nop', 'nop.w', 'it'):
        fail((mn, s, why))
for k, c in bad.most_common(30):
    print('FAIL %s: %d x %s as %s (%s), e.g. %s' % (name, c, k[0], k[1], k[2], example.get(k, '')))
print('%s: %d instructions (a32 %d, t16 %d, t32 %d), %d disagree with objdump'
      % (name, n, isas['a32'], isas['t16'], isas['t32'], sum(bad.values())))
sys.exit(1 if bad or n < 1000 else 0)
PY

status=0
compare() {	# NAME FILE...
	name=$1
	shift
	$objdump -d "$@" > "$tmp/od" || exit 99
	"$check" < "$tmp/od" > "$tmp/pt" || { echo "ERROR: $check failed"; exit 99; }
	python3 "$tmp/compare.py" "$name" "$tmp/pt" || status=1
}

for f in libc.so.6 libm.so.6 ld-linux-armhf.so.3 libstdc++.so.6; do
	[ -r "$lib/$f" ] && compare "$lib/$f" "$lib/$f"
done
if command -v $cc >/dev/null 2>&1; then
	mkdir "$tmp/a32"
	for src in "$top_srcdir"/arch/*.c "$top_srcdir"/arch/*/*.c \
		   "$top_srcdir"/protocol/*.c; do
		$cc -std=gnu11 -marm -O2 -I"$top_builddir" -I"$top_srcdir" -c "$src" \
			-o "$tmp/a32/$(basename "$src" .c).o" ||
			{ echo "ERROR: $cc -marm $src"; exit 99; }
	done
	compare "arch/ and protocol/ built with -marm" "$tmp"/a32/*.o
else
	echo "NOTE: no $cc (gcc-arm-linux-gnueabihf): only the libraries' few A32 instructions are compared"
fi

for f in libc.so.6 libstdc++.so.6; do
	[ -r "$lib/$f" ] || continue
	"$pt" insn --summary "$lib/$f" > "$tmp/sum" 2> "$tmp/sum.err" ||
		{ cat "$tmp/sum.err"; exit 99; }
	entries=$(sed -n 's/^.*: \([0-9]*\) function entries$/\1/p' "$tmp/sum")
	pct=$(sed -n 's/^ *one stop or fewer (emulate + boost): \([0-9.]*\)%$/\1/p' "$tmp/sum")
	[ -n "$entries" ] && [ -n "$pct" ] ||
		{ echo "ERROR: cannot read the summary of $f"; cat "$tmp/sum"; exit 99; }
	if python3 -c "import sys; sys.exit(0 if float('$pct') >= $min_entries else 1)"; then
		echo "$f: $entries function entries, $pct% simulate or boost"
	else
		echo "FAIL $f: $entries function entries, only $pct% simulate or boost (< $min_entries%)"
		status=1
	fi
	sed -n '/^by form:/,$p' "$tmp/sum" | head -12
done
exit $status
