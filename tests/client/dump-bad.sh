#!/bin/bash
# dump-bad.sh - `probe-trace dump`, `report` and the Chrome and CTF
# exports on damaged trace files: each gets a message that says what is wrong, the frames before the damage, and
# never a crash.  A file that is not a trace file, or whose header or a
# frame's blocks do not parse, fails (exit 1); a file that ends inside a
# frame is what a killed recorder leaves, and is read up to its last
# whole frame with a warning (exit 0), whatever size the cut frame
# claims.
#
# The files are made from the reference sample tests/unit/tfile-gen
# writes (5 frames, 3 of tracepoint 1, 2 of tracepoint 2), with its
# bytes changed by python3.
#
# Exit: 0 pass, 1 a failure, 99 harness error.
set -u

: "${top_builddir:=.}"
pt="$top_builddir/client/probe-trace"
gen="$top_builddir/tests/unit/tfile-gen"
[ -x "$pt" ] && [ -x "$gen" ] || { echo "ERROR: build first"; exit 99; }
command -v python3 >/dev/null || { echo "ERROR: no python3"; exit 99; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dump-bad.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
"$gen" "$tmp/good.tfile" >/dev/null || exit 99
status=0
fail() { echo "FAIL: $*"; status=1; }

# make NAME PYTHON: NAME.tfile from the good file; the python code edits
# `head` (bytes up to and including the blank line) and `frames` (the
# frame bytes, end marker included).
make() {
	python3 - "$tmp/good.tfile" "$tmp/$1.tfile" <<PY || exit 99
import struct, sys
d = open(sys.argv[1], 'rb').read()
i = d.index(b'\n\n') + 2
head, frames = d[:i], d[i:]
def frame(tpnum, body):
    return struct.pack('<hI', tpnum, len(body)) + body
first = 6 + struct.unpack_from('<I', frames, 2)[0]    # bytes of frame 0
$2
open(sys.argv[2], 'wb').write(head + frames)
PY
}

# expect NAME STATUS PATTERN [FRAMES]: every output mode of dump (and
# report, and the Chrome and CTF exports) exits
# with STATUS and says PATTERN on stderr (nothing when PATTERN is empty);
# FRAMES = the count --summary must print (the frames before the damage).
expect() {
	local name=$1 want=$2 pattern=$3 frames=${4:-} mode st
	for mode in dump "dump --json" "dump --summary" "dump --summary --json" \
		report "report --per-thread" "dump --format=chrome --force -o /dev/null" \
		"dump --format=ctf --force -o $tmp/ctf"; do
		rm -rf "$tmp/ctf"
		# shellcheck disable=SC2086
		"$pt" $mode "$tmp/$name.tfile" >"$tmp/out" 2>"$tmp/err"
		st=$?
		if [ "$st" -ne "$want" ]; then
			fail "$name ($mode): exit $st, expected $want"
			cat "$tmp/err"
			continue
		fi
		if [ -z "$pattern" ]; then
			# (the CTF export notes frames without some field)
			! grep -v 'frames lacked a value' "$tmp/err" ||
				fail "$name ($mode): unexpected: $(cat "$tmp/err")"
		else
			grep -Eq -- "$pattern" "$tmp/err" ||
				fail "$name ($mode): no '$pattern' in: $(cat "$tmp/err")"
		fi
		if [ "$mode" = "dump --summary" ] && [ -n "$frames" ]; then
			grep -qx "$frames frames" "$tmp/out" ||
				fail "$name: expected '$frames frames', got: $(head -1 "$tmp/out")"
		fi
	done
	[ "$status" -ne 0 ] || echo "ok: $name"
	return $status
}

: >"$tmp/empty.tfile"
expect empty 1 'not a trace file'

make magic-only 'head = head[:8]; frames = b""'
expect magic-only 1 'the header ends early'

make no-blank-line 'head = head[:-1]; frames = b""'
expect no-blank-line 1 'the header ends early'

make bad-block-first "frames = frame(1, b'Z' + b'\\0' * 20) + frames"
expect bad-block-first 1 'frame 0 is damaged' 0

make bad-block-third "frames = frames[:2 * first] + frame(2, b'V' + b'\\0' * 5) + frames[2 * first:]"
expect bad-block-third 1 'frame 2 is damaged' 2

# an M block whose length runs past its frame
make mem-too-long "frames = frame(1, b'M' + struct.pack('<QH', 0x1000, 60000) + b'x' * 10) + frames"
expect mem-too-long 1 'frame 0 is damaged' 0

# a register block size no frame can hold
make huge-regblock "head = head.replace(b'\\nR ', b'\\nR ffffffffffffff\\nX ', 1)"
expect huge-regblock 1 'frame 0 is damaged' 0

# A register description that names no register, and one whose block
# is larger than the file's: the frames print without register names
# (in the sanitizer build, LeakSanitizer checks that the description
# read is freed all the same).
make tdesc-no-regs "head = b''.join(l for l in head.splitlines(True) if not l.startswith(b'tdesc ') or b'architecture' in l)"
expect tdesc-no-regs 0 '' 5
make tdesc-too-big "head = head.replace(b'\\nR 230\\n', b'\\nR 10\\n', 1)"
expect tdesc-too-big 1 'frame 0 is damaged' 0

make cut-in-frame "frames = frames[:first + 9]"
expect cut-in-frame 0 'ends inside a frame or before its end marker: read up to frame 1' 1

make no-end-marker "frames = frames[:-4]"
expect no-end-marker 0 'ends inside a frame or before its end marker: read up to frame 5' 5

# A frame that says it holds almost 4 GiB, in a file that ends 100 bytes
# later: read as a cut file, without asking for the 4 GiB first (the
# address space limit makes such an allocation fail; a sanitizer
# runtime reserves terabytes for its shadow, so it runs unlimited).
make huge-frame "frames = frames[:first] + struct.pack('<hI', 1, 0xfffffff0) + b'R' * 100"
if ldd "$pt" 2>/dev/null | grep -q 'lib[at]san'; then
	expect huge-frame 0 'ends inside a frame .*read up to frame 1' 1
else
	(ulimit -v 262144 && expect huge-frame 0 'ends inside a frame .*read up to frame 1' 1) ||
		status=1
fi

exit $status
