# aarch64-cases.sh - sourced by check-cross.sh for ARCH=aarch64, once the
# guest is up and the first agent (step) listens: every case, in order,
# then the guest's exit (guest_exit).

# shellcheck source=tests/cross/debug-cases.sh
. "$srcdir/tests/cross/debug-cases.sh"
# shellcheck source=tests/cross/record-cases.sh
. "$srcdir/tests/cross/record-cases.sh"
sfx= lbl=

# Breakpoint, stepi, backtrace and exit code; stepi over svc
# (debug-cases.sh).
reg=x0
after_name() {	# WHAT ADDR: "WHAT + 4"
	echo "$1 + 4"
}
debug_basic

# while-stepping across the same system call: a tracepoint on the
# instruction before the svc, stepping 3 instructions (svc, ret, back in
# main); every step, the one over svc included, is a frame, and none
# stops the program.
before=$(printf '%#x' $((svc - 4)))
gdb_case ws <<EOF
break main
run
trace *$before
actions
collect \$regs
while-stepping 3
collect \$regs
end
end
tstart
break checkpoint
continue
tstop
tstatus
tfind 0
printf "WS0 pc=%#lx\n", \$pc
tfind 2
printf "WS2 pc=%#lx x0=%ld\n", \$pc, \$x0
tfind none
delete
continue
EOF
out="$run/ws.out"
pid=$(ground ws pid)
if grep -q "Collected 4 trace frames" "$out" && grep -q "WS0 pc=$before\$" "$out" &&
   grep -q "WS2 pc=$after x0=$pid\$" "$out" && grep -q "exited normally" "$out"; then
	ok "while-stepping over svc: 4 frames, the step past svc with x0 = getpid()"
else
	not_ok "while-stepping over svc" "$(grep -E 'WS[02]|Collected|signal|SIGTRAP|[Ee]rror' "$out" | head -n 6 | tr '\n' ' ')"
fi

# Hardware points (debug-cases.sh).
debug_hw

# --- debugging cases: threads, awatch, attach and detach ---------------------
# (debug-cases.sh)
for threads_run in $(seq 1 "$threads_runs"); do
	debug_threads
done
debug_awatch
debug_attach
if [ "$quick" = 1 ]; then
	end_agent
	guest_exit
fi

# --- probe-trace record --connect, per strategy ------------------------------
# Arguments: rectarget calls compute(i, 2i+1) and checksum("word-i", 6)
# 20 times and prints each call; probes at both entries (the first
# instruction, `sub sp`, is boosted by the arch) and at call_compute's
# `bl compute` (simulated under emulate and auto), where x0 and x1 are
# compute's arguments already.
record_args() {
	strat=$1
	record_calls "$strat" "rec-$strat" rectarget "$rec_bl_off"
	record_tids "$strat" "tids-$strat" rectids
}

# USDT: recsdt fires rec:tick(i, -3i, "tick-i") at one site, rec:twice(i)
# at two, rec:guarded(i) only while its semaphore is raised; the
# operands are those of aarch64 gcc -O2 (registers, sp-relative memory,
# constants), read by the aarch64 operand parser.
record_sdt() {
	strat=$1
	if [ ! -x "$run/recsdt" ]; then
		ok "record USDT ($strat) # SKIP no sys/sdt.h on this host (systemtap-sdt-dev)"
		return
	fi
	record_usdt "$strat" "sdt-$strat" recsdt 64 USDT " "
}

rec_bl=$("$triplet-objdump" -d "$run/rectarget" |
	awk '/<call_compute>:/ { m = 1; print "0x" $1 }
	     m && /\tbl\t.*<compute>/ { sub(":", "", $1); print "0x" $1; exit }')
set -- $rec_bl
[ $# = 2 ] || fail99 "no bl compute in call_compute (objdump)"
rec_bl_off=$(printf '%#x' $(($2 - $1)))

record_cases() {
	record_args "$1"
	record_sdt "$1"
	record_stress_for "$1"
}

# Leaving pads (pad and auto; pad_settle_case in lib.sh): hit's pad is 4
# bytes over; with `mem` the breakpoint is at hit + 4, its condition on
# x0 and x1.
settle_pad=' pad (jump over 4 bytes' settle_regs='x0 x1' settle_next=4

# ftrace_case: gdb's fast tracepoints (FastTracepoints+): `ftrace` at the
# same two sites asks for a jump pad or an error; each must collect its
# one hit with the probe's pc and x0 = 7, and the program run as untraced.
ftrace_case() {
	gdb_case ftrace <<EOF
break main
run
ftrace *square
actions
collect \$regs
end
ftrace *$bl
actions
collect \$regs
end
tstart
monitor probes
break checkpoint
continue
tstop
tstatus
tfind tracepoint 2
printf "TP2 pc=%#lx x0=%ld\n", \$pc, \$x0
tfind none
tfind tracepoint 3
printf "TP3 pc=%#lx x0=%ld\n", \$pc, \$x0
tfind none
delete
continue
EOF
	square=$(ground ftrace square)
	out="$run/ftrace.out"
	pads=$(grep -c '^process [0-9]* 0x[0-9a-f]* pad (jump over 4 bytes' "$out") || true
	if [ -n "$square" ] && [ "$pads" = 2 ] && grep -q "TP2 pc=$square x0=7\$" "$out" &&
	   grep -q "TP3 pc=$bl x0=7\$" "$out" && grep -q "Collected 2 trace frames" "$out" &&
	   grep -q "exited normally" "$out" && grep -q "ground: sq=49" "$run/ground-ftrace.txt"; then
		ok "ftrace at square's entry and main's bl: 2 pads, one frame each, pc and x0 = 7, the program as untraced"
	else
		not_ok "ftrace at square ($square) and bl ($bl)" "$pads pads" \
			"$(grep -E 'TP[23] |Collected|[Ee]rror|Target returned|not|[Ff]ast' "$out" | head -n 8 | tr '\n' ' ')"
	fi
}

# Tracepoints, once per strategy (one agent each): at square's first
# instruction (`sub sp, sp, ...`: the arch boosts it) and at main's
# `bl square` (simulated), both collecting the registers.  Each frame must
# hold its probe's address and the argument, 7, in x0, each probe must hit
# once, and the program must print what it prints untraced.
bl=$("$triplet-objdump" -d "$run/basic" |
	awk '/<main>:/ { m = 1 } m && /\tbl\t.*<square>/ { sub(":", "", $1); print "0x" $1; exit }')
[ -n "$bl" ] || fail99 "no bl square in main (objdump)"
# --- return probes (a64-ret): cases ---------------------------------------------
# retprobe_cases STRATEGY: gdb tracepoints at the entries of
# tests/cross/progs/retprobe.c, every one a return probe (`monitor
# return-probe N`).  Each return frame must hold the program's own value
# in x0 and, as its pc, an address right after a `bl` to the probed
# function (decoded from the code there); the frames come in the order of
# the program's printout.  The entries cover a leaf (x30 never leaves the
# register), functions that save x30 with stp, recursion, longjmp out of a
# probed frame, a tail call (`b leaf` with x30 already the trampoline) and
# four threads.  During the run gdb stops inside probed functions, where
# x30 or the saved slots hold the trampoline: backtrace must show the real
# callers and `finish` the value.  Then `probe-trace record --connect`
# records leaf%return and rec%return, then leaf%return hist, from this
# host (auto only).
retprobe_callee() {	# ADDR: the function the bl at ADDR - 4 calls, or ?
	case $1 in
	0x[0-9a-f]*) ;;
	*) echo '?'; return 0 ;;
	esac
	at=$(printf '%x' $(($1 - 4)))
	awk -v at="$at:" '$1 == at && $3 == "bl" { c = $5; gsub(/[<>]/, "", c); print c; f = 1; exit }
		END { if (!f) print "?" }' "$run/retprobe.dis"
}

retprobe_gdb() {	# NAME: like gdb_case, for the program retprobe
	gdb_case_prog "$1" retprobe 180
}

# retprobe_traces [REC TCALL]: gdb's tracepoints 2 to 7, at the entries
# of leaf, saver, rec, jumper, tail_call and tcall, collecting $regs
# (and at rec REC, at tcall TCALL); retprobe_marks: each a return probe.
retprobe_traces() {
	for _f in leaf saver rec jumper tail_call tcall; do
		_c='$regs'
		[ "$_f" != rec ] || _c="$_c${1:+, $1}"
		[ "$_f" != tcall ] || _c="$_c${2:+, $2}"
		printf 'trace *%s\nactions\ncollect %s\nend\n' "$_f" "$_c"
	done
}
retprobe_marks() {
	for _n in 2 3 4 5 6 7; do echo "monitor return-probe $_n"; done
}

retprobe_first() {	# FUNC: its first instruction, as objdump shows it
	"$triplet-objdump" -d "$run/retprobe" |
		awk -v f="<$1>:" '$2 == f { m = 1; next } m && NF { print; exit }'
}

retprobe_cases() {
	strat=$1
	name=ret-$strat
	if [ "$strat" = step ]; then
		# The shapes the cases rely on, from the code itself.
		if ! retprobe_first leaf | grep -q 'sp' &&
		   retprobe_first saver | grep -q 'stp.*x29, x30, \[sp' &&
		   retprobe_first rec | grep -q 'stp.*x29, x30, \[sp' &&
		   retprobe_first tail_call | grep -q '	b	'; then
			ok "return probes: leaf() does not touch the stack, saver() and rec() save x30 first, tail_call() is a b"
		else
			not_ok "return probes: the shapes of retprobe's functions" \
				"$(retprobe_first leaf) / $(retprobe_first saver) / $(retprobe_first tail_call)"
		fi
	fi
	# leaf's ret, where gdb steps into the trampoline.
	leafret=$("$triplet-objdump" -d "$run/retprobe" |
		awk '/<leaf>:/ { m = 1 } m && $3 == "ret" { sub(":", "", $1); print "0x" $1; exit }')
	{
		echo "set \$leafret = ${leafret:-0}"
		printf 'break main\nrun\n'
		retprobe_traces
		# tracepoint 8: leaf's entry again, an ordinary one
		printf 'trace *leaf\nactions\ncollect $regs\nend\n'
		retprobe_marks
		cat <<'EOF'
tstart
break *leaf+4
continue
printf "=== BT-LEAF x30=%#lx\n", $x30
bt
finish
delete $bpnum
break *$leafret
continue
stepi
printf "=== STEPRET pc=%#lx x0=%d x30=%#lx\n", $pc, $x0, $x30
delete $bpnum
break *saver+8
continue
printf "=== BT-SAVER\n"
bt
finish
delete $bpnum
break *base
continue
printf "=== BT-BASE\n"
bt
delete $bpnum
printf "=== BT-END\n"
break done
continue
tstop
tstatus
tfind start
while $trace_frame != -1
printf "RF tp=%d x0=%d pc=%#lx x30=%#lx\n", $tracepoint, $x0, $pc, $x30
tfind
end
tfind none
delete
continue
EOF
	} | retprobe_gdb "$name"
	out="$run/$name.out"
	grd="$run/ground-$name.txt"
	# Frames in return order, but the threads' (tp 7), as
	# "TP X0 CALLEE", CALLEE the function the bl before the pc calls.
	# Tracepoint 8, an ordinary one at leaf's entry beside return probe
	# 2, records x0 = x and, through x30, the bl that called leaf: it
	# collects before the agent puts the trampoline in x30.  In the tail
	# call, tail_call's entry already did: x30 there is the trampoline.
	sed -n 's/^ground: //p' "$grd" 2>/dev/null | while read -r what a b c; do
		case $what in
		leaf) echo "8 ${a#x=} leaf"; echo "2 ${b#value=} leaf" ;;
		saver) echo "8 $((${a#x=} + 1)) leaf"; echo "2 ${b#inner=} leaf"; echo "3 ${c#value=} saver" ;;
		rec) echo "4 ${b#value=} rec" ;;
		jump) case $b in value=*) echo "5 ${b#value=} jumper" ;; esac ;;
		tail) echo "8 13 ?"; echo "2 ${a#value=} tail_call"; echo "6 ${a#value=} tail_call" ;;
		esac
	done >"$run/$name.want"
	"$triplet-objdump" -d "$run/retprobe" >"$run/retprobe.dis"
	: >"$run/$name.got"
	: >"$run/$name.thr"
	grep '^RF ' "$out" | while read -r _ tp x0 pc x30; do
		tp=${tp#tp=} x0=${x0#x0=} pc=${pc#pc=}
		[ "$tp" != 8 ] || pc=${x30#x30=}
		callee=$(retprobe_callee "$pc")
		if [ "$tp" = 7 ]; then
			echo "$x0 $callee" >>"$run/$name.thr"
		else
			echo "$tp $x0 $callee" >>"$run/$name.got"
		fi
	done
	if [ -s "$run/$name.want" ] && diff "$run/$name.want" "$run/$name.got" >"$run/$name.diff"; then
		ok "return probes ($strat): $(wc -l <"$run/$name.want") frames, x0 and the caller's bl as the program says, in order (leaf, saver, recursion, longjmp, tail call; leaf's entries with x30 the program's)"
	else
		not_ok "return probes ($strat): return frames" "$(head -n 8 "$run/$name.diff" | tr '\n' ' ')" \
			"$(grep -E 'Collected|[Ee]rror|stopped by' "$out" | head -n 4 | tr '\n' ' ')"
	fi
	sed -n 's/^ground: tcall .* value=\([0-9-]*\)$/\1 tcall/p' "$grd" 2>/dev/null | sort >"$run/$name.thr.want"
	sort "$run/$name.thr" >"$run/$name.thr.got"
	if [ "$(wc -l <"$run/$name.thr.want")" -eq 80 ] && cmp -s "$run/$name.thr.want" "$run/$name.thr.got"; then
		ok "return probes ($strat): 4 threads, 80 returns of tcall, each value once, each after a bl tcall"
	else
		not_ok "return probes ($strat): threads" \
			"want $(wc -l <"$run/$name.thr.want") got $(wc -l <"$run/$name.thr.got")" \
			"$(diff "$run/$name.thr.want" "$run/$name.thr.got" | head -n 4 | tr '\n' ' ')"
	fi
	# gdb's view while the trampoline is in x30 (leaf) or in saved
	# slots (saver, and six rec frames under base).
	retbt_sections "$out" x30
	if printf '%s\n' "$bt_leaf" | grep -Eq '^#0 .*leaf' && [ -n "$caller" ] &&
	   [ "$lreg" = "$caller" ]; then
		ok "return probes ($strat): stopped in leaf(), x30 and backtrace show main ($caller), not the trampoline"
	else
		not_ok "return probes ($strat): backtrace in leaf()" "$(printf '%s\n' "$bt_leaf" | head -n 4 | tr '\n' ' ')"
	fi
	leaf1=$(sed -n 's/^ground: leaf x=1 value=//p' "$grd" 2>/dev/null)
	if [ -n "$caller" ] && grep -q "^=== STEPRET pc=$caller x0=$leaf1 x30=$caller\$" "$out"; then
		ok "return probes ($strat): stepi over leaf()'s ret ends in main ($caller), x0 = $leaf1, x30 = pc"
	else
		not_ok "return probes ($strat): stepi over ret" "$(grep -E 'STEPRET|SIGTRAP|signal' "$out" | head -n 3 | tr '\n' ' ')"
	fi
	retbt_checks "$out" "$grd" "return probes ($strat)" stp
	if grep -q "^ground: check ok" "$grd" 2>/dev/null && grep -q "exited normally" "$out"; then
		ok "return probes ($strat): the program's values are its own, it runs to its end"
	else
		not_ok "return probes ($strat): the program" "$(grep -E 'mismatch|check' "$grd" 2>/dev/null | head -n 3 | tr '\n' ' ')" \
			"$(tail -n 3 "$out" | tr '\n' ' ')"
	fi
	[ "$strat" = auto ] || return 0
	retprobe_record "$grd"
}

# retprobe_record GROUND: `probe-trace record` on this host, through the
# guest's agent, of leaf%return and rec%return; the values must be those
# GROUND (the same program's printout under gdb) says, in order.  The
# recorder reads x0 whole: an int's -3 is 0xfffffffd, compared modulo 2^32.
retprobe_record() {
	pt="$srcdir/client/probe-trace"
	if [ ! -x "$pt" ]; then
		not_ok "probe-trace record: no $pt (make it first)"
		return 0
	fi
	# $sysroot's mnt is the run folder (section 1b), retprobe in it.
	# The expected values come from the gdb run's printout (GROUND):
	# record resets the program's environment (QEnvironmentReset), so
	# this run's own printout goes to the guest's stdout, not to GROUND.
	cp "$1" "$run/ret-record.ground" 2>/dev/null || : >"$run/ret-record.ground"
	timeout 120 "$pt" record -q --connect "127.0.0.1:$port" --sysroot "$sysroot" \
		-o "$run/ret-record.tfile" -e 'leaf%return' -e 'rec%return' \
		-- /mnt/retprobe >"$run/ret-record.out" 2>&1 || true
	timeout 60 "$pt" dump "$run/ret-record.tfile" >"$run/ret-record.dump" 2>&1 || true
	[ "${V:-0}" = 0 ] || sed "s/^/# ret-record: /" "$run/ret-record.out" "$run/ret-record.dump"
	sed -n 's/^ground: //p' "$run/ret-record.ground" | while read -r what a b _; do
		case $what in
		leaf) echo "leaf%return ${b#value=}" ;;
		saver) echo "leaf%return ${b#inner=}" ;;
		rec) echo "rec%return ${b#value=}" ;;
		tail) echo "leaf%return ${a#value=}" ;;
		esac
	done >"$run/ret-record.want"
	timeout 60 "$pt" dump --json "$run/ret-record.tfile" 2>/dev/null | python3 -c '
import json, sys
for l in sys.stdin:
    f = json.loads(l)
    v = f["values"]["retval"] & 0xffffffff
    print(f["probe"], v - (1 << 32) if v >> 31 else v)
' >"$run/ret-record.got" 2>&1 || true
	if [ -s "$run/ret-record.want" ] && diff "$run/ret-record.want" "$run/ret-record.got" >"$run/ret-record.diff"; then
		ok "probe-trace record --connect: $(wc -l <"$run/ret-record.want") returns of leaf%return and rec%return, values and order as the program says"
	else
		not_ok "probe-trace record --connect: leaf%return, rec%return" \
			"$(head -n 6 "$run/ret-record.diff" | tr '\n' ' ')" "$(head -n 3 "$run/ret-record.out" | tr '\n' ' ')"
	fi
	retprobe_record_hist "$1"
}

# retprobe_record_hist GROUND: `probe-trace record --connect` of
# `leaf%return hist`, counted by the trampoline itself (aarch64's
# arch_ops.ret_hist; the agent's log says so), then with a condition,
# counted by the agent from the trampoline's ring records
# (record_hist_leaf in record-cases.sh, GROUND the same program's
# printout under gdb); under auto every entry and return runs in the
# process: 0 stops.
retprobe_record_hist() {
	record_hist_leaf "probe-trace record --connect" ret-hist retprobe "$1" pad \
		"$run/agent-$strat.log"
}

# ipa_case STRAT (pad, auto): tracepoints the in-process collector runs
# in the pad, with no stop: at add (5 calls), a condition that reads a
# global ($x1 > counter + 25) collecting $x1 and the array arr; at
# level3, the globals counter and origin and arr[1]@3; at add again a
# pass count not reached (10) collecting $x0.  The values as the program
# printed them (total, arr2, origin, level1, counter), and `monitor
# probes` at checkpoint: 0 stops at both sites, 5 and 1 hits recorded in
# the process, 2 skipped there (false conditions).  At square, arr[0]@375
# (1500 bytes), more than a record's block area holds: the collector
# says IPA_TRAP and the hit goes on to the hand-off (one stop), its frame
# with arr[2] the program's.  At level1 and level2, each its site's one
# tracepoint, conditions the pad checks natively before its register
# save ($x0 > 5: false, counted as skipped there; counter == 0, a
# global: true, one frame with level2's argument).  Then a pass count
# that is reached (passcount 3 at add): the trace stops by it, with 3
# frames of $x1, the third arr2.
ipa_case() {
	strat=$1
	name=ipa-$strat
	gdb_case "$name" <<'EOF'
break main
run
trace *add if $x1 > counter + 25
actions
collect $x1
collect arr
end
trace *level3
actions
collect counter
collect origin
collect arr[1]@3
end
trace *add
actions
collect $x0
end
passcount 10 4
trace *square
actions
collect arr[0]@375
end
trace *level1 if $x0 > 5
actions
collect $x0
end
trace *level2 if counter == 0
actions
collect $x0
end
tstart
break checkpoint
continue
monitor probes
tstop
tstatus
delete
tfind none
tfind tracepoint 2
while $trace_frame != -1
printf "IPA2 x1=%ld arr=%d,%d,%d,%d,%d\n", $x1, arr[0], arr[1], arr[2], arr[3], arr[4]
tfind tracepoint 2
end
tfind none
tfind tracepoint 3
printf "IPA3 counter=%d origin=%d,%d arr=%d,%d,%d\n", counter, origin.x, origin.y, arr[1], arr[2], arr[3]
tfind none
tfind tracepoint 4
while $trace_frame != -1
printf "IPA4 x0=%ld\n", $x0
tfind tracepoint 4
end
tfind none
tfind tracepoint 5
printf "IPA5 arr2=%d\n", arr[2]
tfind none
tfind tracepoint 6
while $trace_frame != -1
printf "IPA6 x0=%ld\n", $x0
tfind tracepoint 6
end
tfind none
tfind tracepoint 7
while $trace_frame != -1
printf "IPA7 x0=%ld\n", $x0
tfind tracepoint 7
end
tfind none
continue
EOF
	out="$run/$name.out"
	g="$run/ground-$name.txt"
	total=$(ground "$name" total)
	arr2=$(ground "$name" arr2)
	origin=$(ground "$name" origin)
	# level3 adds level1 - 2 to counter: counter at its entry.
	counter0=$(sed -n 's/.* level1=\([0-9]*\) counter=\([0-9]*\).*/\2 \1/p' "$g" 2>/dev/null |
		awk '{ print $1 - $2 + 2 }')
	# The array as tracepoint 2 collected it: its sum and arr[2] must be
	# the program's total and arr2.
	arr=$(sed -n 's/^IPA2 x1=[0-9-]* arr=//p' "$out" | head -n 1)
	check=$(echo "$arr" | awk -F, '{ s = 0; for (i = 1; i <= 5; i++) s += $i; print s, $3 }')
	# tracepoint 2: one frame per element above counter + 25, in order.
	got2=$(sed -n 's/^IPA2 //p' "$out" | tr '\n' ' ')
	want2=$(echo "$arr" | awk -F, -v c="${counter0:-0}" \
		'{ for (i = 1; i <= 5; i++) if ($i > c + 25) printf "x1=%d arr=%s ", $i, $0 }')
	if [ -n "$total" ] && [ -n "$arr" ] && [ "$check" = "$total $arr2" ] &&
	   [ -n "$got2" ] && [ "$got2" = "$want2" ]; then
		ok "collector ($strat): add if \$x1 > counter + 25: $(echo "$got2" | grep -o 'x1=' | wc -l) frames, \$x1 and arr (sum $total, arr[2] $arr2) as the program's"
	else
		not_ok "collector ($strat): add's condition on a global, arr" \
			"got '$got2', want '$want2'" "arr's sum and arr[2] '$check', the program's '$total $arr2'"
	fi
	got3=$(sed -n 's/^IPA3 //p' "$out")
	mid=$(echo "$arr" | cut -d, -f2-4)
	if [ -n "$origin" ] && [ -n "$counter0" ] &&
	   [ "$got3" = "counter=$counter0 origin=$origin arr=$mid" ]; then
		ok "collector ($strat): level3's counter ($counter0), origin ($origin), arr[1]@3 ($mid)"
	else
		not_ok "collector ($strat): level3's globals" \
			"got '$got3', want 'counter=$counter0 origin=$origin arr=$mid'"
	fi
	# tracepoint 4 (pass count 10, not reached): every call, $x0 the
	# running total.
	got4=$(sed -n 's/^IPA4 x0=//p' "$out" | tr '\n' ' ')
	want4=$(echo "$arr" | awk -F, '{ s = 0; for (i = 1; i <= 5; i++) { printf "%d ", s; s += $i } }')
	if [ -n "$want4" ] && [ "$got4" = "$want4" ]; then
		ok "collector ($strat): add with passcount 10: 5 frames, \$x0 the running total ($got4)"
	else
		not_ok "collector ($strat): add with a pass count" "got '$got4', want '$want4'"
	fi
	addr_add=$("$triplet-objdump" -d "$run/basic" | sed -n 's/^0*\([0-9a-f]*\) <add>:$/0x\1/p')
	addr_l3=$("$triplet-objdump" -d "$run/basic" | sed -n 's/^0*\([0-9a-f]*\) <level3>:$/0x\1/p')
	line_add=$(grep "^process [0-9]* $addr_add " "$out" | head -n 1)
	line_l3=$(grep "^process [0-9]* $addr_l3 " "$out" | head -n 1)
	addr_sq=$("$triplet-objdump" -d "$run/basic" | sed -n 's/^0*\([0-9a-f]*\) <square>:$/0x\1/p')
	line_sq=$(grep "^process [0-9]* $addr_sq " "$out" | head -n 1)
	if echo "$line_sq" | grep -q 'with its collector, no stop).*hits: 1 stopped, 0 recorded in the process' &&
	   grep -q "^IPA5 arr2=$arr2\$" "$out"; then
		ok "collector ($strat): arr[0]@375 at square: IPA_TRAP, the hit stopped once, arr[2] = $arr2"
	else
		not_ok "collector ($strat): a record too small for the blocks (IPA_TRAP)" \
			"square: ${line_sq:-no line for $addr_sq}" "$(grep '^IPA5' "$out")"
	fi
	if echo "$line_add" | grep -q 'with its collector, no stop).*hits: 0 stopped, 5 recorded in the process, 2 skipped there' &&
	   echo "$line_l3" | grep -q 'with its collector, no stop).*hits: 0 stopped, 1 recorded in the process'; then
		ok "collector ($strat): monitor probes: no stop at add (5 recorded, 2 false) nor at level3 (1 recorded)"
	else
		not_ok "collector ($strat): monitor probes: the hits stopped no thread" \
			"add: ${line_add:-no line for $addr_add}" "level3: ${line_l3:-no line for $addr_l3}"
	fi
	# level1(x) = 3 (x + 2) + 2: x and level2's argument x + 1 from the
	# program's level1.
	arg2=$(sed -n 's/.* level1=\([0-9]*\) counter=.*/\1/p' "$g" 2>/dev/null | awk '{ print ($1 - 2) / 3 - 1 }')
	addr_l1=$("$triplet-objdump" -d "$run/basic" | sed -n 's/^0*\([0-9a-f]*\) <level1>:$/0x\1/p')
	addr_l2=$("$triplet-objdump" -d "$run/basic" | sed -n 's/^0*\([0-9a-f]*\) <level2>:$/0x\1/p')
	line_l1=$(grep "^process [0-9]* $addr_l1 " "$out" | head -n 1)
	line_l2=$(grep "^process [0-9]* $addr_l2 " "$out" | head -n 1)
	if [ -n "$arg2" ] && [ "$arg2" -le 5 ] && ! grep -q '^IPA6' "$out" &&
	   [ "$(sed -n 's/^IPA7 x0=//p' "$out" | tr '\n' ' ')" = "$arg2 " ] &&
	   echo "$line_l1" | grep -q 'with its collector, no stop).*hits: 0 stopped, 0 recorded in the process, 1 skipped there' &&
	   echo "$line_l2" | grep -q 'with its collector, no stop).*hits: 0 stopped, 1 recorded in the process, 0 skipped there'; then
		ok "collector ($strat): native conditions: level1 if \$x0 > 5 ($((arg2 - 1))) skipped, level2 if counter == 0 one frame, x0 = $arg2, no stop"
	else
		not_ok "collector ($strat): native conditions at level1 and level2" \
			"$(grep -E '^IPA[67]' "$out" | tr '\n' ' ') (level2's x0: want $arg2)" \
			"level1: ${line_l1:-no line for $addr_l1}" "level2: ${line_l2:-no line for $addr_l2}"
	fi
	if grep -q 'exited normally' "$out" && grep -q 'ground: done' "$g" 2>/dev/null; then
		ok "collector ($strat): the program ran to its end"
	else
		not_ok "collector ($strat): the program's end" \
			"$(grep -E 'exited|signal|[Ee]rror' "$out" | head -n 3 | tr '\n' ' ')"
	fi

	name=ipa-pass-$strat
	gdb_case "$name" <<'EOF'
break main
run
trace *add
actions
collect $x1
end
passcount 3 2
tstart
monitor probes
break checkpoint
continue
tstatus
delete
tfind none
tfind tracepoint 2
while $trace_frame != -1
printf "PASS x1=%ld\n", $x1
tfind tracepoint 2
end
tfind none
continue
EOF
	out="$run/$name.out"
	arr2=$(ground "$name" arr2)
	got=$(sed -n 's/^PASS x1=//p' "$out" | tr '\n' ' ')
	third=$(echo "$got" | cut -d' ' -f3)
	if grep -q "^process [0-9]* $addr_add pad .*with its collector, no stop" "$out" &&
	   grep -q '^Trace stopped by tracepoint 2' "$out" &&
	   grep -q '^Collected 3 trace frames' "$out" && [ -n "$arr2" ] && [ "$third" = "$arr2" ]; then
		ok "collector ($strat): passcount 3 at add: the trace stops by it with 3 frames ($got)"
	else
		not_ok "collector ($strat): a pass count reached" \
			"frames '$got' (the third: want arr2 = $arr2)" \
			"$(grep -E '^process|Trace stopped|Collected|[Ee]rror' "$out" | head -n 4 | tr '\n' ' ')"
	fi
}


# --- return probes with no stop (pad, auto) -----------------------------------------
# retpad_cases STRATEGY: the return probes of retprobe_cases alone (no
# ordinary tracepoint, no breakpoint of gdb's before `done`), where the
# function entries get jump pads that push the return in the process and
# the returns come back through the in-process trampoline: no stop at
# all.  `monitor probes` at `done` must show every entry as a pad that
# pushes the return, 0 hits stopped, and as many returns recorded in the
# process as there are return frames, none left to the agent and none
# waiting for room; the frames must hold the program's values and
# callers (as retprobe_cases), rec's latencies ($probe_latency_ns, from
# CNTVCT_EL0) grow outward and are not 0 at the outermost, and tcall's
# 80 returns name 4 threads, 20 each.  Before the in-process returns
# (arch_ops.emit_ret_entry NULL on aarch64) every return stopped.
retpad_cases() {
	strat=$1
	name=retpad-$strat
	{
		printf 'break main\nrun\ntvariable $probe_latency_ns\ntvariable $probe_thread\n'
		retprobe_traces '$probe_latency_ns' '$probe_thread'
		retprobe_marks
		cat <<'EOF'
tstart
break done
continue
tstatus
monitor probes
tstop
tfind start
while $trace_frame != -1
printf "RF tp=%d x0=%d pc=%#lx\n", $tracepoint, $x0, $pc
if $tracepoint == 4
printf "RL lat=%lld\n", $probe_latency_ns
end
if $tracepoint == 7
printf "RT x0=%d pc=%#lx thr=%lld\n", $x0, $pc, $probe_thread
end
tfind
end
tfind none
delete
continue
EOF
	} | retprobe_gdb "$name"
	out="$run/$name.out"
	grd="$run/ground-$name.txt"
	"$triplet-objdump" -d "$run/retprobe" >"$run/retprobe.dis"
	sed -n 's/^ground: //p' "$grd" 2>/dev/null | while read -r what a b c; do
		case $what in
		leaf) echo "2 ${b#value=} leaf" ;;
		saver) echo "2 ${b#inner=} leaf"; echo "3 ${c#value=} saver" ;;
		rec) echo "4 ${b#value=} rec" ;;
		jump) case $b in value=*) echo "5 ${b#value=} jumper" ;; esac ;;
		tail) echo "2 ${a#value=} tail_call"; echo "6 ${a#value=} tail_call" ;;
		esac
	done >"$run/$name.want"
	: >"$run/$name.got"
	: >"$run/$name.thr"
	grep '^RF ' "$out" | while read -r _ tp x0 pc; do
		tp=${tp#tp=} x0=${x0#x0=} pc=${pc#pc=}
		[ "$tp" = 7 ] || echo "$tp $x0 $(retprobe_callee "$pc")" >>"$run/$name.got"
	done
	grep '^RT ' "$out" | while read -r _ x0 pc thr; do
		echo "${x0#x0=} $(retprobe_callee "${pc#pc=}") ${thr#thr=}" >>"$run/$name.thr"
	done
	sed -n 's/^RL lat=//p' "$out" >"$run/$name.lat"
	nframes=$(grep -c '^RF ' "$out") || true
	if [ -s "$run/$name.want" ] && diff "$run/$name.want" "$run/$name.got" >"$run/$name.diff"; then
		ok "returns in the process ($strat): $(wc -l <"$run/$name.want") frames, x0 and the caller's bl as the program says, in order (leaf, saver, recursion, longjmp, tail call)"
	else
		not_ok "returns in the process ($strat): return frames" "$(head -n 8 "$run/$name.diff" | tr '\n' ' ')" \
			"$(grep -E 'Collected|[Ee]rror|stopped by' "$out" | head -n 4 | tr '\n' ' ')"
	fi
	# The entries: pads that push the return, no stop; the returns: all
	# in the process.
	npush=$(grep -c '^process [0-9]* 0x[0-9a-f]* pad (.*; return pushed in the process, no stop).*hits: 0 stopped' "$out") || true
	inproc=$(sed -n 's/^process [0-9]* returns: \([0-9]*\) recorded in the process (no stop), \([0-9]*\) entries left to the agent.*, \([0-9]*\) waited for room.*/\1 \2 \3/p' "$out" | tail -n 1)
	if [ "$npush" = 6 ] && [ "$nframes" -gt 0 ] && [ "$inproc" = "$nframes 0 0" ]; then
		ok "returns in the process ($strat): 6 entries pushed by their pads, 0 stops; $nframes returns recorded in the process, none by the agent"
	else
		not_ok "returns in the process ($strat): no stop" \
			"pads that push with 0 stops: $npush of 6; returns in the process, left to the agent, waited: '$inproc' for $nframes frames" \
			"$(grep '^process' "$out" | head -n 8 | tr '\n' ' ')"
	fi
	# rec(6): levels 1..6 return inner first; each latency spans the
	# inner ones.
	if [ "$(wc -l <"$run/$name.lat")" = 6 ] &&
	   awk 'NR > 1 && $1 < prev { bad = 1 } { prev = $1 } END { exit !(!bad && prev > 0 && prev < 1000000000) }' "$run/$name.lat"; then
		ok "returns in the process ($strat): rec's 6 latencies grow outward, the outermost $(tail -n 1 "$run/$name.lat") ns"
	else
		not_ok "returns in the process ($strat): rec's latencies" "$(tr '\n' ' ' <"$run/$name.lat")"
	fi
	sed -n 's/^ground: tcall .* value=\([0-9-]*\)$/\1 tcall/p' "$grd" 2>/dev/null | sort >"$run/$name.thr.want"
	cut -d' ' -f1,2 "$run/$name.thr" | sort >"$run/$name.thr.got"
	nthr=$(cut -d' ' -f3 "$run/$name.thr" | sort | uniq -c | awk '$1 == 20' | wc -l)
	if [ "$(wc -l <"$run/$name.thr.want")" -eq 80 ] && cmp -s "$run/$name.thr.want" "$run/$name.thr.got" &&
	   [ "$nthr" = 4 ]; then
		ok "returns in the process ($strat): 4 threads, 80 returns of tcall, each value once after a bl tcall, 20 per thread"
	else
		not_ok "returns in the process ($strat): threads" \
			"want $(wc -l <"$run/$name.thr.want") got $(wc -l <"$run/$name.thr.got"), threads with 20: $nthr" \
			"$(diff "$run/$name.thr.want" "$run/$name.thr.got" | head -n 4 | tr '\n' ' ')"
	fi
	if grep -q "^ground: check ok" "$grd" 2>/dev/null && grep -q "exited normally" "$out"; then
		ok "returns in the process ($strat): the program's values are its own, it runs to its end"
	else
		not_ok "returns in the process ($strat): the program" "$(grep -E 'mismatch|check' "$grd" 2>/dev/null | head -n 3 | tr '\n' ' ')" \
			"$(tail -n 3 "$out" | tr '\n' ' ')"
	fi
}

# The agents the guest runs, in its order (CROSS_STRATEGIES: the first
# already listens).
for strat in $(cat "$run/strategies"); do
	if [ "$strat" != "$first" ]; then
		end_agent
		wait_agent "$strat"
	fi
	trace_gdb "trace-$strat" "$bl" x0 "monitor probes"
	square=$(ground "trace-$strat" square)
	out="$run/trace-$strat.out"
	# How the agent runs each hit (monitor probes): forced by step and
	# boost; emulate takes the arch's class (bl simulated, sub boosted);
	# pad and auto put a jump pad at both (registers only: it records
	# the hit in the process, no stop).
	pad_rx='pad (jump over 4 bytes to 0x[0-9a-f]*; collects in the process, no stop)'
	case $strat in
	step|boost) want_sq=$strat want_bl=$strat ;;
	emulate) want_sq=boost want_bl=emulate ;;
	pad|auto) want_sq=$pad_rx want_bl=$pad_rx ;;
	esac
	got_bl=$(sed -n "s/^process [0-9]* $bl \([a-z]*\) (.*/\1/p" "$out" | head -n 1)
	if grep -q " $square $want_sq" "$out" && grep -q " $bl $want_bl" "$out"; then
		ok "tracepoints ($strat): square's entry runs by ${want_sq%% (*}, the bl by $got_bl"
	else
		not_ok "tracepoints ($strat): strategies" "$(grep '^process' "$out" | tr '\n' ' ')"
	fi
	# At the checkpoint, past both hits: a pad's hit never stopped the
	# thread (the second `monitor probes`); the others' stopped it once.
	case $strat in
	pad|auto) want_stops=0 ;;
	*) want_stops=1 ;;
	esac
	stops=$(sed -n "s/^process [0-9]* \($square\|$bl\) .*; hits: \([0-9]*\) stopped.*/\2/p" "$out" |
		tail -n 2 | tr '\n' ' ')
	if [ "$stops" = "$want_stops $want_stops " ]; then
		ok "tracepoints ($strat): the hits stopped the thread $want_stops time(s) at each probe"
	else
		not_ok "tracepoints ($strat): stops per probe" "want $want_stops each, got '$stops'"
	fi
	trace_checks "trace-$strat" "$strat" "$square" "$bl" x0
	case $strat in
	pad) ftrace_case; pad_settle_case "$strat"; pad_settle_case "$strat" mem
	     ipa_case "$strat" ;;
	auto) pad_settle_case "$strat"; ipa_case "$strat" ;;
	esac
	retprobe_cases "$strat"	# a64-ret
	case $strat in
	pad|auto) retpad_cases "$strat" ;;
	esac
	# probe-trace record --connect under the same agent.
	record_cases "$strat"
done
end_agent

# --- the keeper's chaos case: the kills (keeper_chaos_run in lib.sh) -----------
keeper_chaos_run

# --- attach and tstart, again and again --------------------------------------------
# (attach_rounds_prepare in aarch64-build.sh.)  Per round: wait for the
# guest's readyN, connect gdb, set the tracepoints, tstart (it must say
# the trace runs), tstop and detach; the guest checks the program after
# each round and at its end.  One TAP line per round, one for the end.
attach_rounds_run() {
	adir="$run/keeper/attach"
	astart=$(date +%s)
	rounds=$(sed -n 's/.*rounds=\([0-9]*\).*/\1/p' "$adir/params")
	# shellcheck disable=SC2046
	set -- $(cat "$run/keeper/probes")
	i=0
	while [ "$i" -lt "$rounds" ]; do
		if ! tlib_wait_alive "$qpid" 180 test -f "$adir/ready$i"; then
			not_ok "attach round $((i + 1)): the guest never got ready"
			return
		fi
		{
			cross_gdb_head remote
			keeper_trace_cmds started "$@"
			echo "tstart"
			echo "tstatus"
			echo "tstop"
			echo "detach"
		} >"$adir/gdb$i.cmd"
		timeout 120 gdb-multiarch -batch -nx -x "$adir/gdb$i.cmd" \
			>"$adir/gdb$i.out" 2>&1 </dev/null || true
		touch "$adir/hostdone$i"
		i=$((i + 1))
	done
	if ! tlib_wait_alive "$qpid" 180 test -f "$adir/done"; then
		not_ok "attach rounds: no result from the guest"
		return
	fi
	i=0
	while [ "$i" -lt "$rounds" ]; do
		res=$(sed -n "s/^round $i //p" "$adir/results")
		strat=${res%% *}
		what="attach round $((i + 1)) ($strat): tstart, tstop, detach"
		running=$(grep -c '^Trace is running on the target' "$adir/gdb$i.out") || true
		case $res in
		*" ok")
			if [ "$running" = 1 ]; then
				ok "$what; the program lives on, untraced, its text the file's"
			else
				not_ok "$what" "gdb's tstatus did not say the trace ran" \
					"$(grep -E '[Ee]rror|Remote|Trace' "$adir/gdb$i.out" | head -n 3 | tr '\n' ' ')"
			fi ;;
		*) not_ok "$what" "${res#* not ok: }" \
			"$(grep -E '[Ee]rror|Remote|Trace' "$adir/gdb$i.out" | head -n 3 | tr '\n' ' ')" \
			"$(grep -v '^$' "$adir/agent$i" 2>/dev/null | tail -n 3 | tr '\n' ' ')" ;;
		esac
		i=$((i + 1))
	done
	res=$(sed -n 's/^end //p' "$adir/results")
	case $res in
	ok*) ok "attach rounds: after $rounds, the program's calls: ${res#ok: }" ;;
	*) not_ok "attach rounds: after $rounds, the program's calls" "${res#not ok: }" ;;
	esac
	echo "# attach rounds: $rounds in $(($(date +%s) - astart)) s"
}
attach_rounds_run

# --- 5. power off ---------------------------------------------------------------
guest_exit

