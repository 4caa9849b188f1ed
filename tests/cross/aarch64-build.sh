# aarch64-build.sh - sourced by check-cross.sh for ARCH=aarch64: the
# target programs, cross-compiled statically into $run, and the guest's
# own start-up for the cases (guest-extra.sh).

progs="$srcdir/tests/integration/progs"
"$triplet-gcc" -g -O0 -fno-omit-frame-pointer -static -o "$run/basic" \
	"$progs/basic.c" || fail99 "cannot cross-compile basic.c"
"$triplet-objdump" -d "$run/basic" >"$run/basic.dis"

# --- return probes (a64-ret): build -------------------------------------------
# tests/cross/progs/retprobe.c at -O1, where a leaf keeps x30 in its
# register and a non-leaf saves it first thing; the cases are
# retprobe_cases below, run under each strategy's agent.
"$triplet-gcc" -g -O1 -fno-omit-frame-pointer -static -pthread -I"$progs" \
	-o "$run/retprobe" "$srcdir/tests/cross/progs/retprobe.c" ||
	fail99 "cannot cross-compile retprobe.c"

# --- the keeper's chaos case: preparation ---------------------------------------
# (keeper_chaos_prepare in lib.sh.)  The agent is SIGKILLed at random
# moments while an 8-thread program hits tracepoints at leaf's and
# bump's entries (mov; adrp: simulated, or copied as movz/movk), work's
# entry (stp) and its `bl leaf`: KEEPER_KILLS (default 20) kills,
# strategies step, boost, emulate and pad in turn, the mode (started by
# the agent, attached to, started with a while-stepping action, which
# single-steps the threads after each hit of work) changing every 3
# kills.
[ "$quick" = 1 ] || keeper_chaos_prepare "${KEEPER_KILLS:-20}" "step boost emulate pad" 3

# --- attach and tstart, again and again: preparation -------------------------
# One keeptarget (main thread in clock_nanosleep, waiting for its GO
# file) gets ATTACH_ROUNDS (default 8) agents one after the other, each
# attached with --attach, strategies in turn; for each, gdb-multiarch on
# the host sets the keeper chaos case's tracepoints and return probes,
# says tstart, tstop and detach (attach_rounds_run in aarch64-cases.sh).
# After each round the guest checks that the program is alive, untraced
# and its text the file's; after the last, that it makes its calls and
# ends with the untraced result and status 7.  The injected system calls
# of every attach and tstart (agent/syscall.c) run in its main thread,
# stopped in a system call the kernel restarts afterwards.  Appended to
# the keeper's chaos.sh: it runs after the kills, reusing their
# plain.result.
attach_rounds_prepare() {
	adir="$run/keeper/attach"
	mkdir -p "$adir"
	set -- $(sed -n 's/^text //p' "$run/keeper/plan")
	# The executable segment, in pages (it starts on one: the ELF
	# loader maps it so), for dd over /proc/PID/mem.
	printf 'tpage=%d tfpage=%d tlen=%d rounds=%d\n' $(($1 / 4096)) $(($2 / 4096)) "$3" \
		"${ATTACH_ROUNDS:-8}" >"$adir/params"
	cat >"$adir/rounds.sh" <<'EOF'
# Attach and tstart, again and again (aarch64-build.sh writes it).
cd /mnt/keeper/attach || exit 1
. ./params
rm -f g go.start go.exit out ready* hostdone* results ./done
say() { echo "$*" >>results; }
# alive PID: running or stopped, not a zombie (a child stays one, for
# kill -0, until waited for).
alive() { [ -f /proc/$1/status ] && ! grep -q '^State:[[:space:]]*[ZX]' /proc/$1/status; }
# text_same PID: the executable segment in memory is the file's.
text_same() {
	pages=$(((tlen + 4095) / 4096))
	dd if=/proc/$1/mem bs=4096 skip=$tpage count=$pages 2>/dev/null | head -c $tlen >text.mem
	dd if=../keeptarget bs=4096 skip=$tfpage count=$pages 2>/dev/null | head -c $tlen >text.file
	cmp -s text.mem text.file
}
../keeptarget g go 4000 out >/dev/null 2>&1 &
p=$!
t=0
while ! grep -q '^pid ' g 2>/dev/null && [ $t -lt 300 ]; do sleep 0.1; t=$((t + 1)); done
i=0
while [ $i -lt $rounds ]; do
	case $((i % 4)) in 0) s=step ;; 1) s=boost ;; 2) s=emulate ;; *) s=pad ;; esac
	/mnt/probe-agent --tp-strategy=$s --attach 0.0.0.0:1234 $p >agent$i 2>&1 &
	a=$!
	t=0
	while ! grep -q 'Listening on port' agent$i && alive $a && [ $t -lt 300 ]; do
		sleep 0.1; t=$((t + 1))
	done
	touch ready$i
	t=0
	while [ ! -f hostdone$i ] && [ $t -lt 900 ]; do sleep 0.1; t=$((t + 1)); done
	t=0
	while alive $a && [ $t -lt 100 ]; do sleep 0.1; t=$((t + 1)); done
	what=
	if alive $a; then
		what="the agent did not exit after detach; "
		kill -9 $a
	fi
	wait $a
	state=$(sed -n 's/^State:[[:space:]]*//p' /proc/$p/status 2>/dev/null)
	tracer=$(sed -n 's/^TracerPid:[[:space:]]*//p' /proc/$p/status 2>/dev/null)
	case $state in
	'') what="${what}the program is gone; " ;;
	Z*|X*) what="${what}its main thread is in state $state; " ;;
	esac
	[ "${tracer:-0}" = 0 ] || what="${what}still traced by $tracer; "
	[ -z "$state" ] || text_same $p || what="${what}its text is not the file's; "
	if [ -z "$what" ]; then say "round $i $s ok"; else say "round $i $s not ok: $what"; fi
	i=$((i + 1))
done
# Then its calls, untraced, to the end.
touch go.start
t=0
while ! grep -q '^calls done' g 2>/dev/null && alive $p && [ $t -lt 600 ]; do
	sleep 0.1; t=$((t + 1))
done
touch go.exit
(sleep 30; kill -9 $p) 2>/dev/null &
w=$!
wait $p
rc=$?
kill $w 2>/dev/null
want=$(cat ../plain.result 2>/dev/null)
got=$(sed -n 's/^result //p' out)
gground=$(sed -n 's/^result //p' g)
if [ "$rc" = 7 ] && [ -n "$want" ] && [ "$got" = "$want" ] && [ "$gground" = "$want" ]; then
	say "end ok: status 7, result $got"
else
	say "end not ok: status $rc, printed result '$got', ground '$gground', untraced '$want'"
fi
touch ./done
echo "guest: attach rounds done"
EOF
	echo "sh /mnt/keeper/attach/rounds.sh" >>"$run/keeper/chaos.sh"
}
[ "$quick" = 1 ] || attach_rounds_prepare

# --- 1b. the programs of the record and debugging cases ----------------------
# probe-trace's own test programs (tests/record/progs), which print their
# ground truth, and threads.c of the integration tests; all static.  The
# USDT program needs <sys/sdt.h>: systemtap-sdt-dev's header is plain
# preprocessor and asm, so the host's copy serves the cross compiler
# too (from a private include folder: the whole host /usr/include
# would shadow the target's).  probe-trace reads the programs from a
# sysroot on the host where the guest's /mnt is this run folder.
recprogs="$srcdir/tests/record/progs"
xcc() { "$triplet-gcc" -g -static -pthread "$@"; }
xcc -O0 -fno-omit-frame-pointer -o "$run/rectarget" "$recprogs/rectarget.c" &&
xcc -O0 -fno-omit-frame-pointer -o "$run/recstress" "$recprogs/recstress.c" &&
xcc -O1 -o "$run/rectids" "$recprogs/rectids.c" &&
xcc -O0 -fno-omit-frame-pointer -I"$progs" -o "$run/threads" "$progs/threads.c" ||
	fail99 "cannot cross-compile the record and thread programs"
if cross_sdt_include; then
	xcc -O2 -I"$build/testbed/sdtinc" -o "$run/recsdt" "$recprogs/recsdt.c" ||
		fail99 "cannot cross-compile recsdt.c"
fi
# The record cases' sysroot and the stress counts (lib.sh): 8 x 100000
# under every strategy takes too long here, so the full count under pad
# and auto only, 10000 calls under the others (times in doc/testing.md).
cross_record_setup 10000 "pad auto"
# What the guest does for these cases before the agents start: the
# untraced stress runs and the attach case's watcher (lib.sh).
cross_guest_extra >"$run/guest-extra.sh"
