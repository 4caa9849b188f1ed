# debug-cases.sh - sourced by the arch's case file: the debugging cases
# that need little or nothing of the arch (break, stepi over svc,
# hardware points, threads, awatch, attach and detach).
# $sfx names the build of the target programs (empty, or -thumb / -arm)
# and $lbl is added to each case's name (empty on aarch64).
# Under the first agent, like the cases above; each has its own program
# and checks gdb's view against the program's printout.

# debug_basic: on basic$sfx (its disassembly in $run/basic$sfx.dis): a
# breakpoint at square's first instruction, registers, one instruction
# step, backtrace and the exit code; stepi over getpid's system call
# instruction (svc), where the step must end as a step (arm64 ends it
# with a bare SIGTRAP from the syscall exit path, not TRAP_TRACE) and
# no SIGTRAP reach the program, and the result register hold the pid
# the program prints after it.  debug_hw: hardware points
# (NT_ARM_HW_BREAK / NT_ARM_HW_WATCH, PTRACE_GETHBPREGS / SETHBPREGS): a
# hardware breakpoint, a write watchpoint on `counter` (level3 adds to
# it) and a read watchpoint on `set_me` (read by the printout after
# checkpoint).  The arch's case file sets reg (the first argument and
# result register) and after_name WHAT ADDR (how a case's name calls
# ADDR, the instruction after WHAT's).  debug_basic sets svc and after
# (the instruction after svc) for the arch's own cases.
debug_basic() {
	gdb_case "break$sfx" <<EOF
break *square
run exit 3
info registers pc $reg
printf "BRK pc=%#lx $reg=%ld\\n", \$pc, \$$reg
stepi
printf "STEP pc=%#lx\\n", \$pc
bt
delete
continue
EOF
	square=$(fn_addr "$(ground "break$sfx" square)")
	out="$run/break$sfx.out"
	if [ -z "$square" ]; then
		not_ok "break$lbl: the program printed its addresses" "$(tail -n 5 "$out" | tr '\n' ' ')"
	else
		if grep -q "BRK pc=$square $reg=7\$" "$out" && grep -Eq "^$reg +0x7 +7" "$out"; then
			ok "break *square$lbl: pc = square ($square), $reg = 7 as the program passed it"
		else
			not_ok "break *square$lbl: pc and $reg" "$(grep -E "BRK|^pc|^$reg|[Ee]rror" "$out" | tr '\n' ' ')"
		fi
		step=$(insn_after "$square")
		if [ -n "$step" ] && grep -q "STEP pc=$step\$" "$out"; then
			ok "stepi$lbl: pc = $(after_name square "$step")"
		else
			not_ok "stepi$lbl: pc = the next instruction (${step:-not found})" "$(grep -E 'STEP|[Ee]rror' "$out" | tr '\n' ' ')"
		fi
		if grep -Eq "^#0 .*square" "$out" && grep -Eq "^#1 .*main" "$out"; then
			ok "backtrace$lbl: square called from main"
		else
			not_ok "backtrace$lbl" "$(grep '^#' "$out" | tr '\n' ' ')"
		fi
	fi
	if grep -q "exited with code 03" "$out" && grep -q "ground: exiting with 3" "$run/ground-break$sfx.txt"; then
		ok "continue to the end$lbl: exit code 3"
	else
		not_ok "exit code 3$lbl" "$(grep -i 'exited\|error' "$out" | tr '\n' ' ')"
	fi

	svc=$(awk '/<(__)?getpid>:/ { m = 1 } m && /\tsvc\t/ { sub(":", "", $1); print "0x" $1; exit }' \
		"$run/basic$sfx.dis")
	[ -n "$svc" ] || fail99 "no svc in getpid (objdump of basic$sfx)"
	gdb_case "svc$sfx" <<EOF
break *$svc
run
stepi
printf "SVC pc=%#lx $reg=%ld\\n", \$pc, \$$reg
delete
continue
EOF
	out="$run/svc$sfx.out"
	pid=$(ground "svc$sfx" pid)
	after=$(insn_after "$svc")
	if [ -n "$pid" ] && grep -q "SVC pc=$after $reg=$pid\$" "$out"; then
		ok "stepi over svc$lbl: pc = $(after_name svc "$after"), $reg = getpid() = $pid"
	else
		not_ok "stepi over svc$lbl ($svc, pid $pid)" "$(grep -E 'SVC|signal|[Ee]rror' "$out" | head -n 4 | tr '\n' ' ')"
	fi
	if grep -q "exited normally" "$out" && ! grep -q "SIGTRAP" "$out"; then
		ok "after the step over svc$lbl the program runs to its end, no SIGTRAP"
	else
		not_ok "after the step over svc$lbl" "$(grep -E 'signal|exited|SIGTRAP' "$out" | head -n 4 | tr '\n' ' ')"
	fi
}

debug_hw() {
	gdb_case "hw$sfx" <<EOF
break main
run
hbreak *square
continue
printf "HB pc=%#lx $reg=%ld\\n", \$pc, \$$reg
delete
watch counter
continue
printf "WATCH counter=%d\\n", counter
delete
rwatch set_me
continue
printf "RWATCH set_me=%d\\n", set_me
delete
continue
EOF
	square=$(fn_addr "$(ground "hw$sfx" square)")
	out="$run/hw$sfx.out"
	if [ -n "$square" ] && grep -q "HB pc=$square $reg=7\$" "$out"; then
		ok "hbreak *square$lbl: stops there with $reg = 7"
	else
		not_ok "hbreak *square$lbl ($square)" "$(grep -E 'HB |[Ee]rror|Could not' "$out" | head -n 4 | tr '\n' ' ')"
	fi
	counter=$(ground "hw$sfx" counter)
	hw_watch_checks "$out" "$counter" "$lbl"
}

# Threads: threads.c starts 4 threads behind a barrier; thread i calls
# hit(i) i + 1 times and prints its kernel tid.  A conditional
# breakpoint stops thread 3 in hit(): gdb must list main and the 4
# threads, the stopped one must be the tid thread 3 printed, and id = 3.
debug_threads() {
	gdb_case_prog "threads$sfx" "threads$sfx" <<'EOF'
break hit if id == 3
run
info threads
printf "TH id=%d\n", id
delete
continue
EOF
	out="$run/threads$sfx.out"
	the_run="$lbl (run $threads_run of $threads_runs)"
	g="$run/ground-threads$sfx.txt"
	tid=$(sed -n 's/^ground: thread 3 tid=\([0-9]*\) .*/\1/p' "$g" 2>/dev/null) || true
	nthreads=$(grep -Ec '^[* ] +[0-9]+ +(Thread|LWP|process) ' "$out") || true
	cur=$(sed -n 's/^\* *[0-9]* *Thread [0-9]*\.\([0-9]*\) .*/\1/p; s/^\* *[0-9]* *LWP \([0-9]*\) .*/\1/p' "$out" | head -n 1)
	if [ "$nthreads" = 5 ]; then
		ok "threads$the_run: info threads lists main and the 4 threads"
	else
		not_ok "threads$the_run: info threads ($nthreads threads)" "$(grep -E '^[* ] +[0-9]' "$out" | tr '\n' ' ')"
	fi
	if [ -n "$tid" ] && [ "$cur" = "$tid" ] && grep -q "^TH id=3\$" "$out"; then
		ok "threads$the_run: break hit if id == 3 stops thread 3 (tid $tid), id = 3"
	else
		not_ok "threads$the_run: the stop in thread 3 (the program says tid $tid, gdb $cur)" \
			"$(grep -E '^TH|^\*|[Ee]rror' "$out" | head -n 4 | tr '\n' ' ')"
	fi
	if grep -q "exited normally" "$out" && grep -q "^ground: total_hits=10\$" "$g"; then
		ok "threads$the_run: the program runs to its end, 10 hits"
	else
		not_ok "threads$the_run: the program runs to its end" "$(tail -n 3 "$out" | tr '\n' ' ')"
	fi
}

# awatch: an access watchpoint on `counter`, which level3 reads and
# writes (counter += x) and main then reads for its printout: three
# stops, a read of 0, the write of the value the program prints, a read
# of it.
debug_awatch() {
	gdb_case "awatch$sfx" <<'EOF'
break main
run
awatch counter
continue
printf "AW1 counter=%d\n", counter
continue
printf "AW2 counter=%d\n", counter
continue
printf "AW3 counter=%d\n", counter
delete
continue
EOF
	out="$run/awatch$sfx.out"
	counter=$(ground "awatch$sfx" counter)
	# gdb prints "Value = V" for a read, "Old value = ... New value = V"
	# for a write.
	got=$(grep -E '^(Value|New value) = |^AW[123] ' "$out" | tr '\n' ' ')
	want="Value = 0 AW1 counter=0 Old value = 0 New value = $counter AW2 counter=$counter Value = $counter AW3 counter=$counter "
	if [ -n "$counter" ] && [ "$(grep -E '^(Value|Old value|New value) = |^AW[123] ' "$out" | tr '\n' ' ')" = "$want" ]; then
		ok "awatch counter$lbl: the read, the write of $counter, the read of main's printout"
	else
		not_ok "awatch counter$lbl (the program says $counter)" "got: $got"
	fi
	if grep -q "exited normally" "$out"; then
		ok "awatch$lbl: the program runs to its end"
	else
		not_ok "awatch$lbl: the program runs to its end" "$(tail -n 3 "$out" | tr '\n' ' ')"
	fi
}

# attach and detach: rectarget loop, started in the guest by
# guest-extra.sh (no agent started it), calls compute(i, 7) every
# millisecond until attach.ground.stop exists.  gdb attaches, stops in
# compute, reads its arguments, detaches; the program must go on calling
# and, told to stop, end with status 0 and its "done" line.
debug_attach() {
	rm -f "$run/attach.pid" "$run/attach.status" "$run/attach.ground" "$run/attach.ground.stop"
	echo "rectarget$sfx" >"$run/attach.go"
	waited=0
	until [ -s "$run/attach.pid" ] && [ -s "$run/attach.ground" ]; do
		waited=$((waited + 1))
		[ "$waited" -lt 300 ] || break
		sleep 0.1
	done
	pid=$(cat "$run/attach.pid" 2>/dev/null) || true
	if [ -z "$pid" ]; then
		not_ok "attach$lbl: the guest started the program" "no attach.pid after 30 s"
		return
	fi
	{ cross_gdb_head -s extended-remote "$run/rectarget$sfx"; cat <<EOF; } >"$run/attach.gdb"
attach $pid
info inferiors
break compute
continue
printf "ATT a=%ld b=%ld\\n", a, b
delete
detach
EOF
	timeout 120 gdb-multiarch -batch -nx -x "$run/attach.gdb" >"$run/attach.out" 2>&1 || true
	[ "${V:-0}" = 0 ] || sed "s/^/# attach: /" "$run/attach.out"
	out="$run/attach.out"
	a=$(sed -n 's/^ATT a=\([0-9]*\) b=7$/\1/p' "$out")
	# Let it run on a little, then stop it.
	if [ -n "$a" ]; then
		waited=0
		until grep -q "^compute $((a + 5)) " "$run/attach.ground" || [ "$waited" -ge 300 ]; do
			waited=$((waited + 1))
			sleep 0.1
		done
	fi
	: >"$run/attach.ground.stop"
	waited=0
	until [ -s "$run/attach.status" ] || [ "$waited" -ge 300 ]; do
		waited=$((waited + 1))
		sleep 0.1
	done
	if [ -n "$a" ] && grep -q "^compute $a 7 " "$run/attach.ground" &&
	   grep -q "(process $pid) detached\]" "$out"; then
		ok "attach$lbl $pid: break compute stops a call the program made, compute($a, 7); detach"
	else
		not_ok "attach$lbl $pid, break compute, detach" \
			"$(grep -E 'ATT|[Aa]ttach|Detach|[Ee]rror' "$out" | head -n 5 | tr '\n' ' ')"
	fi
	calls=$(grep -c '^compute ' "$run/attach.ground" 2>/dev/null) || true
	if [ -n "$a" ] && [ "$(cat "$run/attach.status" 2>/dev/null)" = 0 ] &&
	   grep -q "^done $calls\$" "$run/attach.ground" && grep -q "^compute $((a + 5)) 7 " "$run/attach.ground"; then
		ok "after the detach$lbl the program runs on ($calls calls) and ends with status 0"
	else
		not_ok "after the detach$lbl the program runs on and ends" \
			"status $(cat "$run/attach.status" 2>/dev/null), $calls calls, $(tail -n 1 "$run/attach.ground" 2>/dev/null)"
	fi
}

# The threads case runs several times (CROSS_THREADS_RUNS): the other
# threads reach the breakpoint while the first hit maps the XOL area, and
# the order they come in varies from run to run (the agent once put the
# mmap's system call instruction at the breakpoint's address, where a
# thread arriving meanwhile ran it: about one run in two failed).
