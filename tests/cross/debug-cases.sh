# debug-cases.sh - sourced by the arch's case file: the debugging cases
# that need nothing of the arch (threads, awatch, attach and detach).
# $sfx names the build of the target programs (empty, or -thumb / -arm)
# and $lbl is added to each case's name (empty on aarch64).
# Under the first agent, like the cases above; each has its own program
# and checks gdb's view against the program's printout.

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
	cat >"$run/attach.gdb" <<EOF
set pagination off
set confirm off
set architecture $gdbarch
set sysroot $run
set remotetimeout 30
file $run/rectarget$sfx
target extended-remote 127.0.0.1:$port
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
