# record-cases.sh - sourced by the arch's case file: probe-trace record
# --connect from this host through the guest's agent, the parts that need
# nothing of the arch (rec_pt, the calls, USDT and stress cases).  $sfx and $lbl as in
# debug-cases.sh.

# probe-trace runs here, on the host, and connects to the guest's agent
# (`--connect 127.0.0.1:PORT`, the forwarded port) which runs the program
# in the guest; it reads the program's symbols from the sysroot where
# /mnt is this run folder.  Called once per strategy, under that
# strategy's agent.  rec_pt NAME ARGS...: one recording, its dump in
# $run/NAME.jsonl, its messages in $run/NAME.err.
rec_pt() {
	name=$1
	shift
	rm -f "$run/$name.tfile" "$run/$name.jsonl"
	# (set -e: every command here that may fail is tested)
	rec_status=0
	timeout "${rec_timeout:-120}" "$probe_trace" record -q -o "$run/$name.tfile" \
		--connect "127.0.0.1:$port" --sysroot "$sysroot" "$@" >"$run/$name.err" 2>&1 ||
		rec_status=$?
	[ -n "${REC_NO_DUMP:-}" ] ||
		"$probe_trace" dump --json "$run/$name.tfile" >"$run/$name.jsonl" 2>>"$run/$name.err" || true
	[ "${V:-0}" = 0 ] || sed "s/^/# $name: /" "$run/$name.err"
}

# record_calls STRAT NAME PROG BL_OFF: rectarget (PROG, in /mnt) calls
# compute(i, 2i+1) and checksum("word-i", 6) 20 times and prints each
# call; probes at both entries and at call_compute+BL_OFF, its `bl
# compute`, where the first two argument registers hold compute's
# arguments already.  Every frame must carry the values the program
# printed.
record_calls() {
	strat=$1 name=$2
	rec_pt "$name" -e 'compute args=2' -e 'checksum args=2 mem=arg0,6' \
		-e "call_compute+$4 args=2" -- "/mnt/$3" calls "/mnt/$name.ground" 20
	if [ "$rec_status" = 0 ] &&
	   python3 "$srcdir/tests/record/reccheck.py" calls "$run/$name.jsonl" \
		"$run/$name.ground" >"$run/$name.check" 2>&1 &&
	   python3 - "$run/$name.jsonl" "$run/$name.ground" >>"$run/$name.check" 2>&1 <<'PY'
import json, sys
fr = [json.loads(l) for l in open(sys.argv[1])]
want = [(int(w[1]), int(w[2])) for w in (l.split() for l in open(sys.argv[2]))
        if w and w[0] == "compute"]
got = [(f["values"]["arg0"], f["values"]["arg1"]) for f in fr
       if f["probe"].startswith("call_compute")]
assert len(want) == 20 and got == want, (got[:3], want[:3])
print(len(got), "frames at the bl")
PY
	then
		ok "record --connect ($strat)${lbl:-}: compute, checksum (memory) and the bl, 20 calls each, values as printed"
	else
		not_ok "record --connect ($strat)${lbl:-}: rectarget calls" "status $rec_status" \
			"$(cat "$run/$name.err" "$run/$name.check" 2>/dev/null | tail -n 5 | tr '\n' ' ')"
	fi
}

# record_tids STRAT NAME PROG: rectids (PROG, in /mnt) calls
# tid_hit(kind, its own tid) 200 times from each thread of every kind a
# pad must tell apart (tests/record/progs/rectids.c: the main thread, a
# thread from before the probes, two threads one after the other on the
# same TCB, a clone without CLONE_SETTLS on the main thread's thread
# pointer, a fork and a vfork child).  Every frame must name the thread
# that made the call (aarch64's pads take it from the agent's table by
# TPIDR_EL0, which gives a thread pointer two threads share to neither)
# and lie within the program's own clock readings around the calls.
# Under the pad strategies the pads stamp the hits with the CPU's
# counter where user mode may read it, as the agent's log
# (agent-STRAT.log, --debug=pad) must then say.
record_tids() {
	strat=$1 name=$2 how=""
	rec_pt "$name" -e 'tid_hit args=2' -- "/mnt/$3" 200 "/mnt/$name.ground"
	case $strat in
	pad|pad-far|auto)
		if grep -q "recording pads stamp hits with the CPU's counter" \
			"$run/agent-$strat.log"; then
			how=" (stamped with the CPU's counter)"
		elif grep -q "recording pads stamp hits by clock_gettime" "$run/agent-$strat.log"; then
			how=" (stamped by clock_gettime: no counter in user mode)"
		else
			echo "the agent's log does not say how its pads stamp hits" >>"$run/$name.err"
			rec_status=1
		fi ;;
	esac
	if [ "$rec_status" = 0 ] &&
	   python3 "$srcdir/tests/record/reccheck.py" tids "$run/$name.jsonl" \
		"$run/$name.ground" 200 >"$run/$name.check" 2>&1
	then
		ok "record --connect ($strat)${lbl:-}: every thread of rectids named in its frames, times within the program's$how"
	else
		not_ok "record --connect ($strat)${lbl:-}: rectids" "status $rec_status" \
			"$(cat "$run/$name.err" "$run/$name.check" 2>/dev/null | tail -n 5 | tr '\n' ' ')"
	fi
}

# record_usdt STRAT NAME PROG BITS WHAT [SEP]: recsdt (PROG, in /mnt)
# fires rec:tick(i, -3i, "tick-i") at one site, rec:twice(i) at two,
# rec:guarded(i) only while its semaphore is raised, 25 times each;
# every frame must carry the values the program printed, read as
# BITS-bit signed numbers, and tick's 6 bytes of its string.  WHAT
# names the build in the case's name (after SEP, default ": ", comes
# what was checked).
record_usdt() {
	strat=$1 name=$2
	rec_pt "$name" -e 'sdt:rec:tick args mem=arg2,6' -e 'sdt:rec:twice' \
		-e 'sdt:rec:guarded' -- "/mnt/$3" "/mnt/$name.ground" 25
	if [ "$rec_status" = 0 ] &&
	   python3 - "$run/$name.jsonl" "$run/$name.ground" "$4" >"$run/$name.check" 2>&1 <<'PY'
import json, sys
fr = [json.loads(l) for l in open(sys.argv[1])]
g = [l.split() for l in open(sys.argv[2])]
bits = int(sys.argv[3])
def signed(v):
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v
tick = [f for f in fr if f["probe"] == "sdt:rec:tick"]
want = [(int(l[1]), int(l[2]), l[3]) for l in g if l[0] == "tick"]
got = [(signed(f["values"]["arg0"]), signed(f["values"]["arg1"]),
        bytes.fromhex(f["memory"][0]["bytes"]).decode()) for f in tick]
assert len(want) == 25 and got == [(i, v, s[:6]) for i, v, s in want], (got[:3], want[:3])
twice = [signed(f["values"]["arg0"]) for f in fr if f["probe"] == "sdt:rec:twice"]
assert twice == [int(l[1]) for l in g if l[0] == "twice"], twice
guarded = [signed(f["values"]["arg0"]) for f in fr if f["probe"] == "sdt:rec:guarded"]
gw = [int(l[1]) for l in g if l[0] == "guarded"]
assert len(gw) == 25 and guarded == gw, (guarded, gw)
print(len(tick), "ticks,", len(twice), "twice (2 sites),", len(guarded), "guarded")
PY
	then
		ok "record --connect ($strat)${lbl:-}: $5${6:-: }tick (3 operands + memory), twice (2 sites), guarded (semaphore)"
	else
		not_ok "record --connect ($strat)${lbl:-}: $5" "status $rec_status" \
			"$(cat "$run/$name.err" "$run/$name.check" 2>/dev/null | tail -n 5 | tr '\n' ' ')"
	fi
}

# Stress: recstress, stress_threads threads each calling hit(t, i)
# CALLS times (record_stress STRATEGY CALLS); every call must be a frame (none lost: the default
# --on-full=wait), as many as the program counted, with arguments that
# are calls it made, and its output byte for byte the untraced run's.
record_stress() {
	strat=$1
	calls=$2
	total=$((stress_threads * calls))
	t0=$(date +%s)
	rec_timeout=${CROSS_STRESS_TIMEOUT:-600} REC_NO_DUMP=1 rec_pt "stress-$strat$sfx" -e 'hit args=2' \
		-- "/mnt/recstress$sfx" calls "$stress_threads" "$calls" "/mnt/stress-$strat$sfx.out"
	secs=$(($(date +%s) - t0))
	echo "# stress ($strat)$lbl: $stress_threads x $calls calls recorded in $secs s"
	"$probe_trace" dump --summary --json "$run/stress-$strat$sfx.tfile" >"$run/stress-$strat$sfx.summary" 2>&1 || true
	# Every frame's arguments must be a call the program made: each
	# (thread, i) once.
	counts=$("$probe_trace" dump --json "$run/stress-$strat$sfx.tfile" 2>/dev/null |
		python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
p = [p for p in s["probes"] if p["probe"] == "hit"]
frames, lost = (p[0]["frames"], p[0].get("lost", 0)) if p else (0, 0)
threads, calls = int(sys.argv[2]), int(sys.argv[3])
seen = set()
n = bad = 0
for l in sys.stdin:
    v = json.loads(l)["values"]
    n += 1
    c = (v["arg0"], v["arg1"])
    if not (0 <= c[0] < threads and 0 <= c[1] < calls) or c in seen:
        bad += 1
    seen.add(c)
print(frames, lost, n, bad)
' "$run/stress-$strat$sfx.summary" "$stress_threads" "$calls" 2>&1) || counts="? ? ? ?"
	read -r frames lost dumped bad <<EOF
$counts
EOF
	prog_total=$(sed -n 's/^total \([0-9]*\) sum .*/\1/p' "$run/stress-$strat$sfx.out" 2>/dev/null) || true
	if [ "$rec_status" = 0 ] && cmp -s "$run/stress-untraced$sfx-$calls.out" "$run/stress-$strat$sfx.out" &&
	   [ "$prog_total" = "$total" ] && [ "$frames" = "$total" ] && [ "$dumped" = "$total" ] &&
	   [ "$lost" = 0 ] && [ "$bad" = 0 ]; then
		ok "record stress ($strat)$lbl: $stress_threads x $calls calls = $frames frames, none lost, output as untraced ($secs s)"
	else
		not_ok "record stress ($strat)$lbl: $total calls" \
			"status $rec_status, program total ${prog_total:-none}, frames $counts (frames lost dumped bad)" \
			"$(cmp "$run/stress-untraced$sfx-$calls.out" "$run/stress-$strat$sfx.out" 2>&1)" \
			"$(tail -n 3 "$run/stress-$strat$sfx.err" | tr '\n' ' ')"
	fi
	rm -f "$run/stress-$strat$sfx.tfile"
}


# record_stress_for STRAT: the stress case as cross_record_setup chose
# for the strategy: the full count, the short one, or none.
record_stress_for() {
	case " $stress_full " in
	*" $1 "*) record_stress "$1" "$stress_calls"; return ;;
	esac
	case " $stress_strategies " in
	*" $1 "*) record_stress "$1" "$stress_short" ;;
	esac
}

# Latency histograms (`FUNC%return hist`): the agent counts each return
# (on aarch64 and armhf from the return trampoline's ring records), or
# the trampoline itself does in the process, and no frame is recorded;
# record prints the histogram on stdout at the end and a line per probe
# on stderr.  rec_hist NAME SPEC PROG: one recording
# without -q (stderr's summary is checked), stdout in $run/NAME.out,
# stderr in $run/NAME.err, record's exit status in rec_status.
rec_hist() {
	rec_status=0
	timeout "${rec_timeout:-120}" "$probe_trace" record -o "$run/$1.tfile" \
		--connect "127.0.0.1:$port" --sysroot "$sysroot" -e "$2" -- "/mnt/$3" \
		>"$run/$1.out" 2>"$run/$1.err" || rec_status=$?
	[ "${V:-0}" = 0 ] || sed "s/^/# $1: /" "$run/$1.out" "$run/$1.err"
}

# hist_check NAME PROBE COUNT RETURNS: $run/NAME.out holds PROBE's
# histogram of COUNT calls (`PROBE: N calls, latency avg ...`, then
# `  latency (ns):` and the log2 bucket lines, which must add up to N);
# stderr says 0 frames and, on PROBE's line, N calls and how they ran:
# RETURNS `pad`, returns pushed and recorded in the process (`+ return
# pad`, 0 stops); `trap:S`, returns that trap (`+ return trap`, S stops
# in all).  Prints what it found; fails (status 1) on the first thing
# that is not so.
hist_check() {
	python3 - "$run/$1.out" "$run/$1.err" "$2" "$3" "$4" <<'PY'
import re, sys
out, err, probe, count, returns = sys.argv[1:6]
count = int(count)
text = open(out).read()
head = re.search(r"^%s: (\d+) calls?, latency avg (\d+)\.(\d{3})us \(sum (\d+)\.(\d{3})us\)\n"
                 r"  latency \(ns\):\n((?:    .*\n)*)" % re.escape(probe), text, re.M)
assert head, "no histogram of %s on stdout: %r" % (probe, text[:200])
n = int(head.group(1))
avg = int(head.group(2)) * 1000 + int(head.group(3))
total = int(head.group(4)) * 1000 + int(head.group(5))
assert n == count, "%d calls counted, the program made %d" % (n, count)
assert avg > 0 and avg == total // n, "avg %d ns, sum %d ns, %d calls" % (avg, total, n)
buckets = []
for line in head.group(6).splitlines():
    m = re.match(r"^    (\[0\]|\[1\]|\[\d+[KMGTPE]?, [^)]*\)) +(\d+) \|@* *\|$", line)
    assert m, "bad bucket line %r" % line
    buckets.append(int(m.group(2)))
assert sum(buckets) == n, "buckets add up to %d, count %d" % (sum(buckets), n)
e = open(err).read()
assert re.search(r"^probe-trace: 0 frames \(", e, re.M), "frames in the file: %r" % e[-300:]
m = re.search(r"^probe-trace: %s: (\d+) calls, ([^,]+), (\d+) stops?$" % re.escape(probe), e, re.M)
assert m, "no summary line for %s: %r" % (probe, e[-300:])
assert int(m.group(1)) == n, m.group(0)
if returns == "pad":
    assert m.group(2).endswith(" + return pad") and m.group(3) == "0", m.group(0)
else:
    stops = int(returns.split(":")[1])
    assert m.group(2).endswith(" + return trap") and int(m.group(3)) == stops, \
        "%s (want %d stops)" % (m.group(0), stops)
print("%d calls, avg %d ns, %d bucket lines adding up; %s" % (n, avg, len(buckets), m.group(0)))
PY
}

# hist_in_place_check HW RETURNS LOG LINE: whether the agent's LOG,
# past its first LINE lines, says the trampoline counts leaf's returns
# (hist_check's RETURNS; HW `all`: no condition) exactly when it should:
# once with no condition and `pad`, else never.  Prints what it found;
# status 1 when that is not what it should be.
hist_in_place_check() {
	said=$(tail -n +"$(($4 + 1))" "$3" 2>/dev/null |
		grep -c '^\[tp\] tracepoint [0-9]* at 0x[0-9a-f]*: its returns counted by the trampoline$') ||
		said=0
	should=0
	[ "$1" != all ] || [ "$2" != pad ] || should=1
	if [ "$said" != "$should" ]; then
		echo "the agent's log says the trampoline counts $said times, want $should"
		return 1
	fi
	if [ "$should" = 1 ]; then echo "counted by the trampoline"; else echo "counted by the agent"; fi
}

# record_hist_leaf WHAT NAME PROG GROUND RETURNS [LOG]: retprobe (PROG, in
# /mnt) recorded with `leaf%return hist` (NAME-all), then with
# `leaf%return hist if retval > 30 && retval < 100` (NAME-cond).  The
# calls counted must be leaf's returns in GROUND (the same build's
# printout under gdb: leaf's own calls, saver's and the tail call's: 13),
# then those whose value the program printed is in (30, 100) (33, 47 and
# 81: the same whether the return register is read signed or unsigned,
# 32 or 64 bits), and the buckets must add up to them.  A histogram with
# no condition may be counted by the trampoline itself (arch_ops.ret_hist:
# x86-64, aarch64, 32-bit ARM); the condition is the agent's, so those
# returns come as the trampoline's ring records on every arch.  With LOG
# (the agent's log, with --debug=tp) it must be so: the agent says
# `tracepoint N at ADDR: its returns counted by the trampoline` during
# the recording with no condition when RETURNS is `pad`, and never with
# the condition or with returns that trap.  RETURNS as hist_check takes
# it, with `trap:S` S stops per call of leaf (the calls the condition
# drops stopped as well).  WHAT begins the cases' names.
record_hist_leaf() {
	calls=$(grep -c -E '^ground: (leaf|saver|tail) ' "$4" 2>/dev/null) || calls=0
	kept=$(sed -n -E 's/^ground: (leaf .*|tail) value=(-?[0-9]+).*/\2/p; s/^ground: saver .* inner=(-?[0-9]+) .*/\1/p' \
		"$4" 2>/dev/null | awk '$1 > 30 && $1 < 100' | wc -l)
	for hw in all cond; do
		hname=$2-$hw
		if [ "$hw" = all ]; then
			spec='leaf%return hist' want=$calls
		else
			spec='leaf%return hist if retval > 30 && retval < 100' want=$kept
		fi
		case $5 in
		trap:*) returns=trap:$((${5#trap:} * calls)) ;;
		*) returns=$5 ;;
		esac
		log_at=0
		[ -z "${6:-}" ] || log_at=$(wc -l <"$6" 2>/dev/null) || log_at=0
		rec_hist "$hname" "$spec" "$3"
		if [ "$rec_status" = 0 ] && [ "$calls" -gt 0 ] && [ "$kept" -gt 0 ] &&
		   [ "$kept" -lt "$calls" ] && grep -q '^ground: check ok' "$4" &&
		   hist_check "$hname" 'leaf%return' "$want" "$returns" >"$run/$hname.check" 2>&1 &&
		   { [ -z "${6:-}" ] ||
		     hist_in_place_check "$hw" "$returns" "$6" "$log_at" >>"$run/$hname.check" 2>&1; }; then
			ok "$1: $spec: $(awk 'NR > 1 { printf "; " } { printf "%s", $0 }' "$run/$hname.check")"
		else
			not_ok "$1: $spec ($want of $calls returns of leaf)" \
				"status $rec_status: $(tail -n 2 "$run/$hname.check" 2>/dev/null | tr '\n' ' ')" \
				"$(tail -n 3 "$run/$hname.err" 2>/dev/null | tr '\n' ' ')"
		fi
	done
}
