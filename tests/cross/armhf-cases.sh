# armhf-cases.sh - sourced by check-cross.sh for ARCH=armhf, once the
# guest is up and the first stub listens: the cases, each run for the
# Thumb and the ARM build of its program, under each stub
# ($run/strategies: gdbserver, then the agent per strategy), then the
# guest's exit (guest_exit).
#
# Against Debian's gdbserver and the agent alike (armhf_debug_cases):
# a breakpoint at a function's first instruction, registers, stepi,
# backtrace and the exit code; stepi over the svc of getpid; hardware
# breakpoint, write and read watchpoints; the shared threads, awatch and
# attach/detach cases (debug-cases.sh); stepi, next and finish through
# every branch form (branches.c).  Under the agent only, per
# tracepoint strategy (armhf_trace_cases): tracepoints at square's entry
# and at main's bl to it; probe-trace record --connect of arguments,
# memory and USDT operands in the ARM syntax (armhf_record_cases) and
# the stress case (record-cases.sh).

# shellcheck source=tests/cross/debug-cases.sh
. "$srcdir/tests/cross/debug-cases.sh"
# shellcheck source=tests/cross/record-cases.sh
. "$srcdir/tests/cross/record-cases.sh"

reg=r0
# after_name WHAT ADDR: how the stepi cases name the instruction after
# WHAT's (insn_after: 2 or 4 bytes on).
after_name() {
	case $1 in
	svc) echo "the next instruction" ;;
	*) echo "the next instruction ($2)" ;;
	esac
}

armhf_debug_cases() {	# STUB ISA
	sfx=-$2 lbl=" [$1, $2]"
	debug_basic
	debug_hw
	for threads_run in $(seq 1 "$threads_runs"); do
		debug_threads
	done
	debug_awatch
	debug_attach
	armhf_branch_cases "$@"
}

# armhf_branch_cases STUB ISA: stepi, next and finish through every
# branch form (tests/cross/progs/branches.c at -O2).  stepi from walk's
# first instruction back to main: each step checked against the code
# (arm-steps.py), walk's value the untraced run's; under the agent the
# pcs must also be gdbserver's, step for step, when it ran first.
# `next` from walk's first line returns to main without stopping in a
# callee; `finish` out of each callee (bx lr, pop {pc} after ARM/Thumb
# switches, blx through a pointer, a table branch) returns the value the
# program computed for the same call.
armhf_branch_cases() {	# STUB ISA
	stub=$1
	prog=branches-$2
	dis="$run/$prog.dis"
	walk=$(awk '$2 == "<walk>:" { print "0x" $1; exit }' "$dis" | sed 's/^0x0*/0x/')
	[ -n "$walk" ] || fail99 "no walk in $prog (objdump)"
	gdb_case_prog "steps-$stub$sfx" "$prog" <<EOF
break *$walk
run
set \$ret = \$lr & ~1
printf "RET %#lx\n", \$ret
set \$n = 0
while \$pc != \$ret && \$n < 3000
stepi
printf "PC %#lx\n", \$pc
set \$n = \$n + 1
end
delete
continue
EOF
	out="$run/steps-$stub$sfx.out"
	grep '^PC ' "$out" >"$run/steps-$stub$sfx.trace" || true
	ret=$(sed -n 's/^RET \(0x[0-9a-f]*\)$/\1/p' "$out")
	got=$(ground "steps-$stub$sfx" walk)
	want=$(sed -n 's/^ground: walk=//p' "$run/branches-untraced-$2.txt" 2>/dev/null)
	if [ -n "$ret" ] && res=$(python3 "$srcdir/tests/cross/arm-steps.py" "$dis" \
		"$run/steps-$stub$sfx.trace" "$walk" "$ret" "$2" 2>&1) &&
	   [ -n "$want" ] && [ "$got" = "$want" ] && grep -q "exited normally" "$out"; then
		ok "stepi through walk()$lbl: $res; walk = $got as untraced"
	else
		not_ok "stepi through walk()$lbl" "${res:-no return address}; walk = ${got:-none}, untraced ${want:-none}" \
			"$(grep -E '[Ee]rror|signal|exited' "$out" | head -n 3 | tr '\n' ' ')"
	fi
	if [ "$stub" = agent ] && [ -s "$run/steps-gdbserver$sfx.trace" ]; then
		if cmp -s "$run/steps-gdbserver$sfx.trace" "$run/steps-agent$sfx.trace"; then
			ok "stepi through walk()$lbl: the same $(wc -l <"$run/steps-agent$sfx.trace") pcs as under gdbserver"
		else
			not_ok "stepi through walk()$lbl: the pcs under gdbserver" \
				"$(diff "$run/steps-gdbserver$sfx.trace" "$run/steps-agent$sfx.trace" | head -n 4 | tr '\n' ' ')"
		fi
	fi

	# next over walk's lines: every stop in walk, then main.
	lo=$walk
	hi=$(awk '$2 == "<walk>:" { m = 1; next } m && $2 ~ /^<.*>:$/ { print "0x" $1; exit }' "$dis")
	gdb_case_prog "next-$stub$sfx" "$prog" <<EOF
break walk
run
set \$n = 0
while \$pc >= $lo && \$pc < ${hi:-0} && \$n < 40
next
info symbol \$pc
set \$n = \$n + 1
end
delete
continue
EOF
	out="$run/next-$stub$sfx.out"
	syms=$(sed -n 's/^\([a-z_]*\) + [0-9]* in section .*/\1/p; s/^\([a-z_]*\) in section .*/\1/p' "$out" | uniq | tr '\n' ' ')
	if [ -n "$hi" ] && [ "$syms" = "walk main " ] && [ "$(ground "next-$stub$sfx" walk)" = "$want" ] &&
	   grep -q "exited normally" "$out"; then
		ok "next through walk()$lbl: $(grep -c ' in section ' "$out") stops, in walk then main, none in a callee"
	else
		not_ok "next through walk()$lbl" "stops in: $syms" "$(grep -E '[Ee]rror|signal' "$out" | head -n 3 | tr '\n' ' ')"
	fi

	# finish out of each callee, in the order walk calls them (leaf
	# again: through fp).
	gdb_case_prog "finish-$stub$sfx" "$prog" <<'EOF'
break walk
run
delete
break leaf
continue
finish
delete
break nonleaf
continue
finish
delete
break in_arm
continue
finish
delete
break in_thumb
continue
finish
delete
break leaf
continue
finish
delete
break sw
continue
finish
delete
break cz
continue
finish
delete
break cond
continue
finish
delete
continue
EOF
	out="$run/finish-$stub$sfx.out"
	got=$(sed -n 's/^Value returned is \$[0-9]* = \(-*[0-9]*\)$/\1/p' "$out" | tr '\n' ' ')
	want=$(sed -n 's/^ground: finish //p' "$run/ground-finish-$stub$sfx.txt" 2>/dev/null |
		tr ' ' '\n' | sed -n 's/^[a-z_]*=//p' | tr '\n' ' ')
	if [ -n "$want" ] && [ "$got" = "$want" ] && grep -q "exited normally" "$out"; then
		ok "finish$lbl from leaf, nonleaf, in_arm, in_thumb, leaf through fp, sw, cz, cond: $got"
	else
		not_ok "finish$lbl out of each callee" "got: $got" "want: $want" \
			"$(grep -E '[Ee]rror|signal' "$out" | head -n 3 | tr '\n' ' ')"
	fi
}

# armhf_record_cases STRATEGY: probe-trace record --connect from this
# host through the guest's agent (sfx and lbl as armhf_trace_cases set
# them).  Arguments: rectarget calls compute(i, 2i+1) and
# checksum("word-i", 6) 20 times; probes at both entries and at
# call_compute's `bl compute`, where r0 and r1 are compute's arguments
# already.  USDT: recsdt's rec:tick (3 operands and the string they
# point to), rec:twice (two sites), rec:guarded (semaphore), built -O2
# (register operands) and -O0 (memory operands, [r7, #N] / [fp, #-N]);
# 32-bit values compared as the program printed them.
armhf_record_cases() {
	strat=$1
	set -- $(awk '/<call_compute>:/ { m = 1; print "0x" $1 }
	     m && /\tbl\t.*<compute>/ { sub(":", "", $1); print "0x" $1; exit }' "$run/rectarget$sfx.dis")
	[ $# = 2 ] || fail99 "no bl compute in call_compute (objdump of rectarget$sfx)"
	off=$(printf '%#x' $(($2 - $1)))
	record_calls "$strat" "rec-$strat$sfx" "rectarget$sfx" "$off"
	record_tids "$strat" "tids-$strat$sfx" "rectids$sfx"
	for opt in O2 O0; do
		prog=recsdt-$opt$sfx
		if [ ! -x "$run/$prog" ]; then
			skip_case "record USDT ($strat)$lbl" "no sys/sdt.h on this host (systemtap-sdt-dev)"
			return
		fi
		name=sdt-$strat-$opt$sfx
		ops=$("$triplet-readelf" -n "$run/$prog" | sed -n 's/^ *Arguments: //p' | sort -u | tr '\n' ' ')
		record_usdt "$strat" "$name" "$prog" 32 "USDT at -$opt ($ops)"
	done
}

# Leaving pads (pad; pad_settle_case in lib.sh): hit's pad is 4 or 6
# bytes over (ARM, Thumb-2).
settle_pad=' pad (jump over [46] bytes'

# armhf_ipa_case STRATEGY: tracepoints a pad runs with the in-process
# collector (pad and auto; sfx and lbl as armhf_trace_cases sets them).
# basic's loop calls add(total, arr[i]) 5 times (b = 10, 20, 30, 40,
# 50); at add's entry tracepoint 2 has a condition on a global and a
# register ($r1 == arr[2]: true once) and collects $regs and arr,
# tracepoint 3 collects origin under `passcount 100` (counted in the
# process, never reached); at level3's entry tracepoint 4's condition on
# a global is false (counter == 5: counter is 0 there); at square's
# entry tracepoint 5 collects set_me and 4 bytes at address 16 (no page
# there: <unavailable>, and no signal the program sees).  Checked: 7
# frames (tstatus), tracepoint 2's with r1 = arr[2] and arr as the
# program prints its sum and arr[2], tracepoint 3's five with origin as
# the program prints it, tracepoint 5's set_me as printed and the
# unreadable int <unavailable>; `monitor probes` at the checkpoint: the
# three pads collect with the collector, no hit stopped the thread,
# add's 4 false conditions and level3's one hit skipped in the process,
# one unreadable address met; the program computes as untraced, to its
# end.  Then a pass count reached in the process: `passcount 2` on a
# tracepoint at add collecting $r1 stops the run by that tracepoint with
# its 2 frames, r1 = arr[0] and arr[1] (10, 20: the ground's total is
# their sum with the others; checked against arr as the first session
# collected it).
armhf_ipa_case() {
	strat=$1
	name=ipa-$strat$sfx
	gdb_case "$name" <<'EOF'
break main
run
trace *add if $r1 == arr[2]
actions
collect $regs
collect arr
end
trace *add
actions
collect origin
end
passcount 100 3
trace *level3 if counter == 5
actions
collect counter
end
trace *square
actions
collect set_me
collect *(int *)16
end
tstart
break checkpoint
continue
monitor probes
tstop
tstatus
tfind tracepoint 2
printf "IPA2 r1=%ld\n", $r1
tdump
tfind none
tfind tracepoint 3
tdump
tfind tracepoint 3
tdump
tfind tracepoint 3
tdump
tfind tracepoint 3
tdump
tfind tracepoint 3
tdump
tfind none
tfind tracepoint 5
tdump
tfind none
delete
continue
EOF
	out="$run/$name.out"
	grep '^process ' "$out" | sed "s/^/# $name: /" || true
	total=$(ground "$name" total)
	arr2=$(ground "$name" arr2)
	origin=$(ground "$name" origin)
	set_me=$(ground "$name" set_me)
	add=$(fn_addr "$(awk '/<add>:/ { print "0x" $1; exit }' "$run/basic$sfx.dis")")
	level3=$(fn_addr "$(awk '/<level3>:/ { print "0x" $1; exit }' "$run/basic$sfx.dis")")
	square=$(fn_addr "$(ground "$name" square)")
	# arr as gdb prints it must hold arr[2] and sum to the total.
	arr=$(sed -n 's/^arr = {\(.*\)}$/\1/p' "$out" | head -n 1)
	sum=$(echo "$arr" | tr -d ' ' | tr ',' '\n' | awk '{ s += $1 } END { print s + 0 }')
	a2=$(echo "$arr" | tr -d ' ' | cut -d, -f3)
	ox=${origin%,*} oy=${origin#*,}
	norigin=$(grep -c "^origin = {x = $ox, y = $oy}\$" "$out") || true
	if [ -n "$total" ] && [ -n "$arr2" ] && [ -n "$origin" ] &&
	   grep -q "Collected 7 trace frames" "$out" && grep -q "^IPA2 r1=$arr2\$" "$out" &&
	   [ "$sum" = "$total" ] && [ "$a2" = "$arr2" ] && [ "$norigin" = 5 ]; then
		ok "collector ($strat)$lbl: add's condition on arr[2] true once (r1 = $arr2, arr sums to $total), 5 frames of origin ($origin) under passcount 100"
	else
		not_ok "collector ($strat)$lbl: frames at add (want 7 frames, r1 = ${arr2:-?}, arr summing to ${total:-?}, origin ${origin:-?} x 5)" \
			"arr {$arr} sum $sum, origin frames $norigin" \
			"$(grep -E 'IPA2|Collected|[Ee]rror|not available|Target' "$out" | head -n 6 | tr '\n' ' ')"
	fi
	if [ -n "$set_me" ] && grep -q "^set_me = $set_me\$" "$out" &&
	   grep -q '^\*(int \*)16 = <unavailable>$' "$out"; then
		ok "collector ($strat)$lbl: square's frame: set_me = $set_me, the int at 16 <unavailable>"
	else
		not_ok "collector ($strat)$lbl: square's frame (set_me = ${set_me:-?}, *(int *)16 unavailable)" \
			"$(grep -E 'set_me|\(int \*\)16|[Ee]rror' "$out" | head -n 4 | tr '\n' ' ')"
	fi
	rx='pad (jump over [46] bytes to 0x[0-9a-f]*; collects in the process with its collector, no stop)'
	[ "$strat" != pad-far ] ||
		rx='pad (far jump over \(8\|10\|12\) bytes to 0x[0-9a-f]*; collects in the process with its collector, no stop)'
	line_add=$(grep "^process [0-9]* $add $rx" "$out" | tail -n 1)
	line_l3=$(grep "^process [0-9]* $level3 $rx" "$out" | tail -n 1)
	line_sq=$(grep "^process [0-9]* $square $rx" "$out" | tail -n 1)
	if [ -n "$add" ] && [ -n "$level3" ] && [ -n "$square" ] &&
	   echo "$line_add" | grep -q 'hits: 0 stopped, 5 recorded in the process, 4 skipped' &&
	   echo "$line_l3" | grep -q 'hits: 0 stopped, 0 recorded in the process, 1 skipped' &&
	   echo "$line_sq" | grep -q 'hits: 0 stopped, 1 recorded in the process' &&
	   grep -q "^process [0-9]*: 1 unreadable addresses met by the in-process collector" "$out"; then
		ok "collector ($strat)$lbl: monitor probes: add, level3 and square by pads with the collector, 0 stops, add's 4 false conditions and level3's hit skipped in the process, 1 unreadable address"
	else
		not_ok "collector ($strat)$lbl: monitor probes (want pads with the collector at add $add, level3 $level3, square $square, 0 stops)" \
			"$(grep -E '^process' "$out" | tr '\n' ' ')"
	fi
	if ran_untraced "$name"; then
		ok "collector ($strat)$lbl: the program computes as untraced and runs to its end"
	else
		not_ok "collector ($strat)$lbl: the program runs to its end" "$(tail -n 3 "$out" | tr '\n' ' ')"
	fi

	name=ipa-pass-$strat$sfx
	gdb_case "$name" <<'EOF'
break main
run
trace *add
actions
collect $r1
end
passcount 2 2
tstart
monitor probes
break checkpoint
continue
tstatus
tfind 0
printf "PASS0 r1=%ld\n", $r1
tfind 1
printf "PASS1 r1=%ld\n", $r1
tfind none
delete
continue
EOF
	out="$run/$name.out"
	a0=$(echo "$arr" | tr -d ' ' | cut -d, -f1)
	a1=$(echo "$arr" | tr -d ' ' | cut -d, -f2)
	if [ -n "$a0" ] && grep -q "^Trace stopped by tracepoint 2\.\$" "$out" &&
	   grep -q "Collected 2 trace frames" "$out" &&
	   grep -q "^PASS0 r1=$a0\$" "$out" && grep -q "^PASS1 r1=$a1\$" "$out" &&
	   grep -q "^process [0-9]* $add $rx" "$out" && grep -q "exited normally" "$out"; then
		ok "collector ($strat)$lbl: passcount 2 reached in the process: the run stops by tracepoint 2 with 2 frames (r1 = $a0, $a1)"
	else
		not_ok "collector ($strat)$lbl: passcount 2 (want 2 frames, r1 = ${a0:-?}, ${a1:-?}, stopped by tracepoint 2)" \
			"$(grep -E 'PASS[01]|Trace stopped|Collected|^process|[Ee]rror' "$out" | head -n 6 | tr '\n' ' ')"
	fi
}

# armhf_ret_case STRATEGY (pad, auto): return probes with no stop.  gdb
# tracepoints at the entries of leaf, rec, tcall and saver of
# tests/cross/progs/retprobe.c (built for the cases' instruction set),
# each a return probe (`monitor return-probe N`): every frame's r0 must
# be the value the program printed, in the order of its returns (tcall's
# 80 from 4 threads as a set), and `monitor probes` must show each entry
# pushed by its pad in the process with no stop, the returns recorded by
# the in-process trampoline, none left to the agent (arm-retpad.c);
# rec's 6 latencies ($probe_latency_ns, from CNTVCT) grow outward and
# are not 0 at the outermost.  Where returns trap (arch_ops.emit_ret_entry
# NULL) every entry and every return stops.
armhf_ret_case() {
	strat=$1
	name=ret-$strat$sfx
	gdb_case_prog "$name" "retprobe$sfx" 180 <<'EOF'
break main
run
tvariable $probe_latency_ns
trace *leaf
actions
collect $regs
end
trace *rec
actions
collect $regs, $probe_latency_ns
end
trace *tcall
actions
collect $regs
end
trace *saver
actions
collect $regs
end
monitor return-probe 2
monitor return-probe 3
monitor return-probe 4
monitor return-probe 5
tstart
break done
continue
monitor probes
tstop
tfind start
while $trace_frame != -1
printf "RF tp=%d r0=%d\n", $tracepoint, $r0
if $tracepoint == 3
printf "RL lat=%lld\n", $probe_latency_ns
end
tfind
end
tfind none
delete
continue
EOF
	out="$run/$name.out"
	grd="$run/ground-$name.txt"
	grep -e '^process ' "$out" | sed "s/^/# $name: /" || true
	sed -n 's/^ground: //p' "$grd" 2>/dev/null | while read -r what a b c; do
		case $what in
		leaf) echo "2 ${b#value=}" ;;
		saver) echo "2 ${b#inner=}"; echo "5 ${c#value=}" ;;
		rec) echo "3 ${b#value=}" ;;
		tail) echo "2 ${a#value=}" ;;
		tcall) echo "4 ${c#value=}" ;;
		esac
	done >"$run/$name.all"
	grep -v '^4 ' "$run/$name.all" >"$run/$name.want" || true
	grep '^4 ' "$run/$name.all" | sort >"$run/$name.thr.want" || true
	sed -n 's/^RF tp=\([0-9]*\) r0=\(-*[0-9]*\)$/\1 \2/p' "$out" >"$run/$name.got.all"
	grep -v '^4 ' "$run/$name.got.all" >"$run/$name.got" || true
	grep '^4 ' "$run/$name.got.all" | sort >"$run/$name.thr.got" || true
	if [ -s "$run/$name.want" ] && [ "$(wc -l <"$run/$name.thr.want")" -eq 80 ] &&
	   diff "$run/$name.want" "$run/$name.got" >"$run/$name.diff" &&
	   cmp -s "$run/$name.thr.want" "$run/$name.thr.got" &&
	   grep -q '^ground: check ok' "$grd"; then
		ok "return probes ($strat)$lbl: $(wc -l <"$run/$name.all") return frames, r0 as the program says (leaf, saver, recursion, tail call, 4 threads)"
	else
		not_ok "return probes ($strat)$lbl: return frames" \
			"$(head -n 6 "$run/$name.diff" 2>/dev/null | tr '\n' ' ')" \
			"want $(wc -l <"$run/$name.all") got $(wc -l <"$run/$name.got.all"); $(grep -E 'mismatch|check' "$grd" 2>/dev/null | head -n 2 | tr '\n' ' ')"
	fi
	sed -n 's/^RL lat=//p' "$out" >"$run/$name.lat"
	if [ "$(wc -l <"$run/$name.lat")" = 6 ] &&
	   awk 'NR > 1 && $1 < prev { bad = 1 } { prev = $1 } END { exit !(!bad && prev > 0 && prev < 1000000000) }' "$run/$name.lat"; then
		ok "return probes ($strat)$lbl: rec's 6 latencies grow outward, the outermost $(tail -n 1 "$run/$name.lat") ns"
	else
		not_ok "return probes ($strat)$lbl: rec's latencies" "$(tr '\n' ' ' <"$run/$name.lat")"
	fi
	npushed=$(grep -c '^process [0-9]* 0x[0-9a-f]* pad (.*; return pushed in the process, no stop).*; hits: 0 stopped' "$out") || true
	rets=$(sed -n 's/^process [0-9]* returns: \([0-9]*\) recorded in the process (no stop), \([0-9]*\) entries left.*, \([0-9]*\) waited.*/\1 \2 \3/p' "$out" | tail -n 1)
	if [ "$npushed" = 4 ] && [ -n "$rets" ] && [ "${rets#* }" = "0 0" ]; then
		ok "return probes ($strat)$lbl: 4 entries pushed by their pads, 0 stops; ${rets%% *} returns recorded in the process, none left to the agent"
	else
		not_ok "return probes ($strat)$lbl: no stop" "want 4 probes pushed in the process with 0 stops, got $npushed; returns '$rets'" \
			"$(grep -e '^process' "$out" | head -n 5 | tr '\n' ' ')"
	fi
}

# armhf_retbt_case STRATEGY (pad, auto): gdb's view while the return
# pads hold the trampoline.  leaf, saver and rec of retprobe are return
# probes again; gdb stops at leaf's bx lr (lr is the trampoline), at
# saver's bl leaf (after its push {r4, lr}: the stack slot is) and at
# base under six rec frames (six slots).  lr must read as the address
# after a bl leaf in main, backtrace must show main (and rec x6, main
# under base) with no ?? frame, `finish` out of leaf and saver must
# return the program's values, and the probes' own hits must stop
# nothing (monitor probes: the breakpoints are gdb's own), every return
# still a trace frame.  In the Thumb build, finish's step over leaf's
# bx lr ends on the A32 trampoline: the agent must send the thread back
# in Thumb state (else it runs main's Thumb code as ARM: SIGILL).
# retprobe_leafret: objdump of retprobe$sfx into $dis (once), and the
# address of leaf's bx lr into $leafret (a framework error without one).
retprobe_leafret() {
	dis="$run/retprobe$sfx.dis"
	[ -s "$dis" ] || "$triplet-objdump" -d "$run/retprobe$sfx" >"$dis"
	leafret=$(awk '$2 == "<leaf>:" { m = 1; next } m && /\tbx\tlr/ { sub(":", "", $1); print "0x" $1; exit }' "$dis")
	[ -n "$leafret" ] || fail99 "no bx lr in leaf (objdump of retprobe$sfx)"
}

armhf_retbt_case() {
	strat=$1
	name=retbt-$strat$sfx
	retprobe_leafret	# and saver's bl leaf
	saverbl=$(awk '$2 == "<saver>:" { m = 1; next } m && /\tbl\t/ { sub(":", "", $1); print "0x" $1; exit }' "$dis")
	[ -n "$saverbl" ] || fail99 "no bl in saver (objdump of retprobe$sfx)"
	gdb_case_prog "$name" "retprobe$sfx" 180 <<EOF
break main
run
trace *leaf
actions
collect \$regs
end
trace *saver
actions
collect \$regs
end
trace *rec
actions
collect \$regs
end
monitor return-probe 2
monitor return-probe 3
monitor return-probe 4
tstart
break *$leafret
continue
printf "=== BT-LEAF lr=%#lx\n", \$lr
bt
finish
delete \$bpnum
break *$saverbl
continue
printf "=== BT-SAVER\n"
bt
finish
delete \$bpnum
break *base
continue
printf "=== BT-BASE\n"
bt
delete \$bpnum
printf "=== BT-END\n"
break done
continue
monitor probes
tstop
tstatus
delete
continue
EOF
	out="$run/$name.out"
	grd="$run/ground-$name.txt"
	retbt_sections "$out" lr
	# lr as gdb reads it has bit 0 set for Thumb; what the instruction
	# before the caller's pc calls (objdump).
	callee=?
	if [ -n "$caller" ]; then
		callee=$(awk -v a="$(printf '%x' $((caller - 4)))" \
			'$1 == a ":" && /\tbl\t/ { print $NF; exit }' "$dis")
	fi
	if [ -n "$lreg" ] && [ -n "$caller" ] && [ $((lreg & ~1)) = $((caller)) ] &&
	   [ "$callee" = "<leaf>" ] && printf '%s\n' "$bt_leaf" | grep -Eq '^#0 .*leaf'; then
		ok "return pads ($strat)$lbl: stopped at leaf()'s bx lr, lr ($lreg) and backtrace show main's bl leaf, not the trampoline"
	else
		not_ok "return pads ($strat)$lbl: lr and backtrace in leaf()" "lr=$lreg caller=$caller calls $callee" \
			"$(printf '%s\n' "$bt_leaf" | head -n 4 | tr '\n' ' ')"
	fi
	retbt_checks "$out" "$grd" "return pads ($strat)$lbl" push
	# Each probe pushed by its pad, 0 stops.  Every return of the run
	# up to done (6 + 2 of leaf, 4 of saver and 4 of leaf under it, 6
	# of rec, the tail call's leaf) is a trace frame; all but one come
	# from the in-process trampoline: finish's step over the breakpoint
	# at leaf's bx lr ends on the trampoline's first word, and the agent
	# takes that return by hand (in ARM state, so its pc back to Thumb).
	npushed=$(grep -c '^process [0-9]* 0x[0-9a-f]* pad (.*; return pushed in the process, no stop).*; hits: 0 stopped' "$out") || true
	rets=$(sed -n 's/^process [0-9]* returns: \([0-9]*\) recorded in the process (no stop), \([0-9]*\) entries left.*, \([0-9]*\) waited.*/\1 \2 \3/p' "$out" | tail -n 1)
	nret=$(grep -Ec '^ground: (leaf|saver|rec|tail) ' "$grd" 2>/dev/null) || true
	nsaver=$(grep -c '^ground: saver ' "$grd" 2>/dev/null) || true
	nret=$((${nret:-0} + ${nsaver:-0}))
	nframes=$(sed -n 's/^Collected \([0-9]*\) trace frames\.$/\1/p' "$out" | tail -n 1)
	if [ "$npushed" = 3 ] && [ "$nframes" = "$nret" ] && [ "$rets" = "$((nret - 1)) 0 0" ] &&
	   grep -q '^ground: check ok' "$grd" 2>/dev/null && grep -q 'exited normally' "$out"; then
		ok "return pads ($strat)$lbl: 3 entries pushed by their pads, 0 stops; $nframes return frames, $((nret - 1)) recorded in the process, none left; the program checks ok"
	else
		not_ok "return pads ($strat)$lbl: records and stops" \
			"want 3 pushed with 0 stops, $nret frames, '$((nret - 1)) 0 0' returns; got $npushed, $nframes, '$rets'" \
			"$(grep -h -e '^process' -e 'mismatch' -e 'SIG' "$out" "$grd" 2>/dev/null | head -n 5 | tr '\n' ' ')"
	fi
}

# --- the far pad's collector, stops in the collector, stepi over a probed
# return, record of entries and returns (armhf_gap_cases) ---------------------

# intr_n: the calls per thread of the interrupt case (4 threads of
# recstress$sfx; the guest's untraced run of the same count is its
# truth, armhf-build.sh), intr_stops: how many times gdb interrupts it.
intr_n=${CROSS_INTR_CALLS:-2000000}
intr_stops=3

# armhf_intr_case STRATEGY (pad, auto): a thread stopped by gdb inside
# the in-process collector.  4 threads of recstress$sfx call hit()
# intr_n times each under a tracepoint whose condition reads a global,
# true every 4096th call ((i & 4095) == 0 && per_thread > 0: the pads
# call the collector for every hit), collecting $regs and per_thread;
# gdb's ^C (SIGINT to gdb, which sends the interrupt to the agent) stops
# the program intr_stops times while they hammer it.  At each stop every thread's pc must lie
# in the program's .text (never a pad, a XOL slot or the collector's
# code, which live outside it; gdb shows none as `?? ()`), and
# `continue` must go on.  Afterwards every 4096th call is one frame (4
# x ceil(intr_n / 4096)), the first with i = 0 and the last with the
# last such i, both with per_thread = intr_n, and the output is the
# untraced run's.
armhf_intr_case() {
	strat=$1
	name=intr-$strat$sfx
	prog=recstress$sfx
	rm -f "$run/$name.res" "$run/$name.out"
	per=$(((intr_n + 4095) / 4096)) lasti=$((((intr_n - 1) / 4096) * 4096))
	{
		cat <<EOF
break main
run calls 4 $intr_n /mnt/$name.res
delete
set trace-buffer-size 16000000
trace hit if (\$r1 & 4095) == 0 && per_thread > 0
actions
collect \$regs, per_thread
end
tstart
EOF
		for i in $(seq 1 "$intr_stops"); do
			cat <<EOF
echo === CONT $i\n
continue
echo === STOP $i\n
info threads
thread apply all printf "TPC %#lx\n", \$pc
EOF
		done
		cat <<EOF
echo === END\n
break fopen
continue
tstop
tstatus
tfind 0
printf "FIRST r1=%ld per_thread=%ld\n", \$r1, per_thread
tfind $((4 * per - 1))
printf "LAST r1=%ld per_thread=%ld\n", \$r1, per_thread
tfind none
delete
continue
EOF
	} >"$run/$name.in"
	# The interrupts: each 0.3 s after gdb says it continues (gdb
	# resumes the program by then; a ^C while gdb runs a command would
	# quit that command).
	(
		for i in $(seq 1 "$intr_stops"); do
			n=0
			while ! grep -q "^=== CONT $i\$" "$run/$name.out" 2>/dev/null; do
				n=$((n + 1))
				[ "$n" -lt 1500 ] || exit 0
				sleep 0.1
			done
			sleep 0.3
			gpid=$(cat "$run/$name.gdbpid" 2>/dev/null) || exit 0
			kill -INT "$gpid" 2>/dev/null || exit 0
		done
	) &
	intr_pid=$!
	{
		cross_gdb_head -s extended-remote "$run/$prog"
		echo "set remote exec-file /mnt/$prog"
		echo "set startup-with-shell off"
		cat "$run/$name.in"
	} >"$run/$name.gdb"
	# $name.gdbpid: gdb's own pid (timeout, not in the foreground,
	# would pass a SIGINT to its whole group, gdb twice: gdb takes a
	# second ^C while it waits as "give up waiting").
	timeout -s KILL 300 sh -c 'echo $$ >"$1"; exec gdb-multiarch -batch -nx -x "$2"' \
		sh "$run/$name.gdbpid" "$run/$name.gdb" >"$run/$name.out" 2>&1 || true
	kill "$intr_pid" 2>/dev/null || true
	wait "$intr_pid" 2>/dev/null || true
	[ "${V:-0}" = 0 ] || sed "s/^/# $name: /" "$run/$name.out"
	out="$run/$name.out"
	# .text of the program: [lo, hi)
	set -- $("$triplet-readelf" -SW "$run/$prog" |
		awk '{ for (i = 1; i < NF; i++) if ($i == ".text") { print "0x" $(i + 2), "0x" $(i + 4); exit } }')
	[ $# = 2 ] || fail99 "no .text in $prog (readelf)"
	lo=$(($1)) hi=$(($1 + $2))
	nstops=$(grep -c 'received signal SIGINT' "$out") || true
	npc=$(grep -c '^TPC 0x' "$out") || true
	bad=$(sed -n 's/^TPC \(0x[0-9a-f]*\)$/\1/p' "$out" | while read -r pc; do
		[ $((pc)) -ge "$lo" ] && [ $((pc)) -lt "$hi" ] || echo "$pc"
	done | tr '\n' ' ')
	unknown=$(grep -c '?? ()' "$out") || true
	if [ "$nstops" = "$intr_stops" ] && [ "$npc" -ge $((intr_stops * 2)) ] && [ -z "$bad" ] &&
	   [ "$unknown" = 0 ] && grep -q '^=== END$' "$out"; then
		ok "interrupts ($strat)$lbl: $nstops stops by ^C while 4 threads run the collector, $npc thread pcs all in the program's .text, none in a pad"
	else
		not_ok "interrupts ($strat)$lbl: stops by ^C (want $intr_stops, every pc in .text $(printf '%#x-%#x' "$lo" "$hi"))" \
			"stops $nstops, pcs $npc, outside: ${bad:-none}, ?? frames $unknown" \
			"$(grep -E '^Program|[Ee]rror|Quit|exited' "$out" | head -n 4 | tr '\n' ' ')"
	fi
	frames=$(sed -n 's/^Collected \([0-9]*\) trace frames.*/\1/p' "$out" | tail -n 1)
	if [ "$frames" = $((4 * per)) ] && grep -q "^FIRST r1=0 per_thread=$intr_n\$" "$out" &&
	   grep -q "^LAST r1=$lasti per_thread=$intr_n\$" "$out" &&
	   cmp -s "$run/stress-untraced$sfx-4x$intr_n.out" "$run/$name.res" &&
	   grep -q "exited normally" "$out"; then
		ok "interrupts ($strat)$lbl: afterwards 4 x $intr_n calls, $frames frames (i from 0 to $lasti by 4096, per_thread $intr_n), output as untraced"
	else
		not_ok "interrupts ($strat)$lbl: every 4096th call one frame ($((4 * per))), output as untraced" \
			"frames ${frames:-none}, $(cmp "$run/stress-untraced$sfx-4x$intr_n.out" "$run/$name.res" 2>&1)" \
			"$(grep -E 'FIRST|LAST|Trace|exited|signal|[Ee]rror' "$out" | head -n 5 | tr '\n' ' ')"
	fi
}

# armhf_stepret_case STRATEGY: stepi over a probed return.  leaf of
# retprobe$sfx is a return probe (tracepoint 2) and its bx lr a
# tracepoint (3); gdb stops at that bx lr in leaf's first call (x = 0)
# and steps it.  The step must end where `info frame` said leaf returns
# to (main, after its bl leaf), with r0 the value the program prints for
# leaf(0), and in the Thumb build in Thumb state.  Every later return of
# leaf must be two frames, tracepoint 3's at the bx lr and then
# tracepoint 2's return frame, with r0 the value the program prints (the
# stepped call's bx lr frame too, its return frame once), and the
# program ends with its values its own.
armhf_stepret_case() {
	strat=$1
	name=stepret-$strat$sfx
	retprobe_leafret
	gdb_case_prog "$name" "retprobe$sfx" 180 <<EOF
break main
run
trace *leaf
actions
collect \$regs
end
trace *$leafret
actions
collect \$regs
end
monitor return-probe 2
tstart
break *$leafret
continue
info frame
stepi
printf "=== STEPRET pc=%#lx r0=%d thumb=%d\n", \$pc, \$r0, (\$cpsr >> 5) & 1
bt 1
delete
break done
continue
monitor probes
tstop
tstatus
tfind start
while \$trace_frame != -1
printf "RF tp=%d r0=%d\n", \$tracepoint, \$r0
tfind
end
tfind none
delete
continue
EOF
	out="$run/$name.out"
	grd="$run/ground-$name.txt"
	grep -e '^process ' "$out" | sed "s/^/# $name: /" || true
	saved=$(sed -n 's/.*; saved pc = \(0x[0-9a-f]*\).*/\1/p' "$out" | head -n 1)
	leaf0=$(sed -n 's/^ground: leaf x=0 value=//p' "$grd" 2>/dev/null)
	thumb=0
	[ "$sfx" != -thumb ] || thumb=1
	# the instruction before the caller's pc calls leaf (objdump)
	callee=?
	if [ -n "$saved" ]; then
		callee=$(awk -v a="$(printf '%x' $((saved - 4)))" \
			'$1 == a ":" && /\tbl\t/ { print $NF; exit }' "$dis")
	fi
	if [ -n "$saved" ] && [ -n "$leaf0" ] && [ "$callee" = "<leaf>" ] &&
	   grep -q "^=== STEPRET pc=$saved r0=$leaf0 thumb=$thumb\$" "$out" &&
	   grep -q '^#0 .* in main ' "$out"; then
		ok "stepi over a probed bx lr ($strat)$lbl: ends in main at $saved, after its bl leaf, as info frame said; r0 = $leaf0"
	else
		not_ok "stepi over a probed bx lr ($strat)$lbl (want pc = info frame's saved pc ${saved:-?}, after a bl leaf: $callee; r0 = ${leaf0:-?}, thumb $thumb)" \
			"$(grep -E 'STEPRET|saved pc|^#0|SIG|signal' "$out" | head -n 4 | tr '\n' ' ')"
	fi
	sed -n 's/^ground: //p' "$grd" 2>/dev/null | while read -r what a b _; do
		case $what in
		leaf) v=${b#value=} ;;
		saver) v=${b#inner=} ;;
		tail) v=${a#value=} ;;
		*) continue ;;
		esac
		echo "3 $v"
		echo "2 $v"
	done >"$run/$name.want"
	sed -n 's/^RF tp=\([0-9]*\) r0=\(-*[0-9]*\)$/\1 \2/p' "$out" >"$run/$name.got"
	if [ -s "$run/$name.want" ] && diff "$run/$name.want" "$run/$name.got" >"$run/$name.diff" &&
	   grep -q '^ground: check ok' "$grd" && grep -q 'exited normally' "$out"; then
		ok "stepi over a probed bx lr ($strat)$lbl: $(grep -c '^3' "$run/$name.want") returns of leaf, each a frame at its bx lr and a return frame, r0 as the program says"
	else
		not_ok "stepi over a probed bx lr ($strat)$lbl: frames at the bx lr and the return" \
			"want $(wc -l <"$run/$name.want") got $(wc -l <"$run/$name.got"): $(head -n 6 "$run/$name.diff" 2>/dev/null | tr '\n' ' ')" \
			"$(grep -h -E 'mismatch|check|exited|signal' "$grd" "$out" 2>/dev/null | head -n 3 | tr '\n' ' ')"
	fi
}

# armhf_record_ret_case STRATEGY: probe-trace record --connect of leaf's
# entry (its argument) and of leaf%return and rec%return on retprobe$sfx;
# the values, their order and the count of returns must be those the
# program printed under gdb in the stepret case of the same strategy
# (the same program and build; its printout is the same every run).
armhf_record_ret_case() {
	strat=$1
	name=retrec-$strat$sfx
	grd="$run/ground-stepret-$strat$sfx.txt"
	rec_pt "$name" -e 'leaf args=1' -e 'leaf%return' -e 'rec%return' -- "/mnt/retprobe$sfx"
	sed -n 's/^ground: //p' "$grd" 2>/dev/null | while read -r what a b _; do
		case $what in
		leaf) echo "leaf ${a#x=}"; echo "leaf%return ${b#value=}" ;;
		saver) echo "leaf $((${a#x=} + 1))"; echo "leaf%return ${b#inner=}" ;;
		rec) echo "rec%return ${b#value=}" ;;
		tail) echo "leaf 13"; echo "leaf%return ${a#value=}" ;;
		esac
	done >"$run/$name.want"
	python3 -c '
import json, sys
for l in open(sys.argv[1]):
    f = json.loads(l)
    p = f["probe"]
    v = f["values"]["retval" if p.endswith("%return") else "arg0"] & 0xffffffff
    print(p, v - (1 << 32) if v >> 31 else v)
' "$run/$name.jsonl" >"$run/$name.got" 2>&1 || true
	nret=$(grep -c '%return' "$run/$name.want") || true
	if [ "$rec_status" = 0 ] && [ -s "$run/$name.want" ] &&
	   diff "$run/$name.want" "$run/$name.got" >"$run/$name.diff"; then
		ok "record --connect ($strat)$lbl: leaf's entry and leaf%return, rec%return: $(grep -c '^leaf ' "$run/$name.want") entries, $nret returns, values and order as the program says"
	else
		not_ok "record --connect ($strat)$lbl: leaf, leaf%return, rec%return" \
			"status $rec_status, want $(wc -l <"$run/$name.want") frames ($nret returns) got $(wc -l <"$run/$name.got"): $(head -n 4 "$run/$name.diff" 2>/dev/null | tr '\n' ' ')" \
			"$(tail -n 3 "$run/$name.err" 2>/dev/null | tr '\n' ' ')"
	fi
	armhf_record_hist_case "$strat" "$grd"
}

# armhf_record_hist_case STRATEGY GROUND: `leaf%return hist`, then with
# a condition, on retprobe$sfx (record_hist_leaf in record-cases.sh).
# Under pad and auto every entry and return runs in the process (0
# stops), and with no condition the trampoline counts each return in
# its histogram itself (arm's arch_ops.ret_hist; the agent's log says
# so); with the condition it writes a ring record per return and the
# agent counts it.  Under step the entry's hit and the return's trap each
# count a stop, 2 per call, and the agent counts.
armhf_record_hist_case() {
	case $1 in
	pad|auto) set -- "$1" "$2" pad ;;
	*) set -- "$1" "$2" trap:2 ;;
	esac
	record_hist_leaf "record --connect ($1)$lbl" "rethist-$1$sfx" "retprobe$sfx" "$2" "$3" \
		"$run/agent-$1.log"
}

# armhf_gap_cases STRATEGY: the cases above, each where it belongs: the
# collector through far pads (armhf_ipa_case under pad-far), the
# interrupts under pad and auto (only with CROSS_INTR=1, new: see
# doc/testing.md), the stepi and record cases under step, pad and auto.
armhf_gap_cases() {
	strat=$1
	case $strat in pad-far) armhf_ipa_case "$strat" ;; esac
	case $strat in pad|auto) [ "$intr_case" = 0 ] || armhf_intr_case "$strat" ;; esac
	case $strat in
	step|pad|auto) armhf_stepret_case "$strat"; armhf_record_ret_case "$strat" ;;
	esac
}

# armhf_trace_cases STRATEGY ISA: tracepoints at square's first
# instruction and at main's bl to it, both collecting the registers:
# each frame holds its probe's address and the argument, 7, in r0, each
# probe hits once, the program prints what it prints untraced.  Then the
# record cases: armhf_record_cases and the stress case of record-cases.sh.
armhf_trace_cases() {
	strat=$1
	sfx=-$2 lbl=" [$2]"
	if [ "$gaps_only" = 1 ]; then
		armhf_gap_cases "$strat"
		return 0
	fi
	bl=$(awk '/<main>:/ { m = 1 } m && /\tbl\t.*<square>/ { sub(":", "", $1); print "0x" $1; exit }' \
		"$run/basic$sfx.dis")
	[ -n "$bl" ] || fail99 "no bl square in main (objdump of basic$sfx)"
	trace_gdb "trace-$strat$sfx" "$bl" r0
	square=$(fn_addr "$(ground "trace-$strat$sfx" square)")
	out="$run/trace-$strat$sfx.out"
	grep '^process ' "$out" | sed "s/^/# trace-$strat$sfx: /" || true
	# How the agent runs each hit (monitor probes): square's entry by
	# the strategy forced (step, boost), boosted under emulate, a jump
	# pad under pad and auto; the bl by a pad under pad and auto (its
	# window loads lr and the pc), as the arch classes it otherwise.  A
	# pad records the hit in the process (registers only): no stop.
	# Under pad-far every pad lies beyond B / B.W's reach: square's entry
	# gets a far pad (the site a literal load into the pc over its first
	# instructions); the bl would be the first of its far window and
	# leave the next unrun, so it keeps its breakpoint and is simulated.
	case $strat in
	step|boost) want_sq=$strat want_bl='[a-z]*' ;;
	emulate) want_sq=boost want_bl='[a-z]*' ;;
	pad-far) want_sq=pad want_bl=emulate ;;
	*) want_sq=pad want_bl=pad ;;
	esac
	pad_rx='pad (jump over [46] bytes to 0x[0-9a-f]*; collects in the process, no stop)'
	[ "$strat" != pad-far ] ||
		pad_rx='pad (far jump over \(8\|10\|12\) bytes to 0x[0-9a-f]*; collects in the process, no stop)'
	sq_by=$(sed -n "s/^process [0-9]* $square \([a-z]*\) (.*/\1/p" "$out" | head -n 1)
	bl_by=$(sed -n "s/^process [0-9]* $bl \([a-z]*\) (.*/\1/p" "$out" | head -n 1)
	if [ -n "$square" ] && [ -n "$sq_by" ] && [ -n "$bl_by" ] &&
	   expr "$sq_by" : "$want_sq\$" >/dev/null && expr "$bl_by" : "$want_bl\$" >/dev/null &&
	   { [ "$want_sq" != pad ] ||
	     { grep -q "^process [0-9]* $square $pad_rx" "$out" &&
	       { [ "$want_bl" != pad ] || grep -q "^process [0-9]* $bl $pad_rx" "$out"; }; }; }; then
		ok "tracepoints ($strat)$lbl: square's entry runs by $sq_by, the bl by $bl_by"
	else
		not_ok "tracepoints ($strat)$lbl: strategies (want square's entry by $want_sq$([ "$want_bl" = pad ] && echo ", the bl by pad, collecting in the process"))" \
			"$(grep '^process' "$out" | tr '\n' ' ')"
	fi
	# At the checkpoint, past both hits: a pad's hit never stopped the
	# thread; the others' stopped it once.
	case $strat in
	pad|auto) want_stops="0 0" ;;
	pad-far) want_stops="0 1" ;;
	*) want_stops="1 1" ;;
	esac
	stops="$(sed -n "s/^process [0-9]* $square .*; hits: \([0-9]*\) stopped.*/\1/p" "$out" |
		tail -n 1) $(sed -n "s/^process [0-9]* $bl .*; hits: \([0-9]*\) stopped.*/\1/p" "$out" |
		tail -n 1)"
	if [ -n "$square" ] && [ "$stops" = "$want_stops" ]; then
		ok "tracepoints ($strat)$lbl: the hits stopped the thread ${want_stops% *} time(s) at square's entry, ${want_stops#* } at the bl"
	else
		not_ok "tracepoints ($strat)$lbl: stops per probe" "want '$want_stops' (square, bl), got '$stops'"
	fi
	# A far pad: its address beyond B's 32 MiB from the site.
	if [ "$strat" = pad-far ]; then
		far_at=$(sed -n "s/^process [0-9]* $square pad (far jump over \([0-9]*\) bytes to \(0x[0-9a-f]*\);.*/\1 \2/p" \
			"$out" | tail -n 1)
		far_len=${far_at% *} far_to=${far_at#* }
		if [ -n "$far_at" ] && [ -n "$square" ]; then
			far_d=$((far_to - square))
			[ "$far_d" -ge 0 ] || far_d=$((-far_d))
		else
			far_d=0
		fi
		if [ "$far_d" -ge $((32 << 20)) ]; then
			ok "far pad ($strat)$lbl: square's entry loads the pc over $far_len bytes, its pad $((far_d >> 20)) MiB away"
		else
			not_ok "far pad ($strat)$lbl: square's pad beyond B's reach" "got '$far_at' for $square"
		fi
	fi
	trace_checks "trace-$strat$sfx" "$strat" "$square" "$bl" r0 "$lbl"
	case $strat in pad|auto) armhf_ipa_case "$strat"; armhf_ret_case "$strat"; armhf_retbt_case "$strat" ;; esac
	armhf_gap_cases "$strat"
	[ "$ipa_only" = 0 ] || return 0
	[ "$strat" != pad ] || pad_settle_case "$strat"
	armhf_record_cases "$strat"
	record_stress_for "$strat"
}

# CROSS_KEEPER_ONLY=1: each agent starts and exits without its cases,
# and the keeper's chaos case runs (for working on the keeper).
keeper_only=${CROSS_KEEPER_ONLY:-0}
# CROSS_IPA_ONLY=1: under each agent the tracepoint cases and the
# collector's (pad, auto) only: no settle, record or stress case.
ipa_only=${CROSS_IPA_ONLY:-0}
# CROSS_GAPS_ONLY=1: under each agent armhf_gap_cases only (the far
# pad's collector, the interrupts, stepi over a probed return, record of
# entries and returns): no debugging, tracepoint or record case.
gaps_only=${CROSS_GAPS_ONLY:-0}
case $gaps_only in 0|1) ;; *) fail99 "CROSS_GAPS_ONLY must be 0 or 1, not '$gaps_only'" ;; esac
# CROSS_INTR=1: the interrupt case too (armhf_intr_case: 4 threads
# stopped by ^C 3 times while in the collector, per build, pad and auto).
intr_case=${CROSS_INTR:-0}
case $intr_case in 0|1) ;; *) fail99 "CROSS_INTR must be 0 or 1, not '$intr_case'" ;; esac
current=$first
for stub_s in $strategies; do
	if [ "$stub_s" != "$current" ]; then
		end_agent
		wait_agent "$stub_s"
		current=$stub_s
	fi
	[ "$keeper_only" = 0 ] || continue
	case $stub_s in
	gdbserver)
		for isa in $isas; do armhf_debug_cases gdbserver "$isa"; done ;;
	*)
		if [ "$stub_s" = step ] && [ "$gaps_only" = 0 ]; then
			for isa in $isas; do armhf_debug_cases agent "$isa"; done
			[ "$quick" = 0 ] || continue
		fi
		for isa in $isas; do armhf_trace_cases "$stub_s" "$isa"; done ;;
	esac
done
end_agent
[ -z "$cross_skip" ] || skip_case "probe-agent's cases" "$cross_skip"
[ ! -f "$run/keeper/chaos.sh" ] || keeper_chaos_run

# --- 5. power off ---------------------------------------------------------------
guest_exit
