#!/bin/sh
# check-cross.sh [ARCH] - the agent on another architecture, in a qemu-system
# guest, driven by gdb-multiarch from this host.  `make check-cross` runs it.
#
# What one run does (ARCH aarch64, the only one so far):
#  1. builds the static cross agent (tests/cross/build-agent.sh) and the
#     target programs with the cross compiler, statically;
#  2. keeps Debian's own arm64 kernel (linux-image-arm64) and busybox-static
#     debs in a cache, and from them an initramfs: busybox, the modules for
#     virtio-mmio networking and 9p, and an /init that mounts the host's
#     run folder over 9p at /mnt and runs /mnt/guest.sh;
#  3. boots `qemu-system-aarch64 -M virt -cpu cortex-a57 -smp 1` once, with
#     the guest's port 1234 forwarded to a free port on 127.0.0.1 (one
#     vCPU: tracer and tracee on two vCPUs make every stop ~20x slower;
#     cortex-a57 is a fixed ARMv8.0 model, so its register sets do not
#     change with qemu versions);
#  4. guest.sh runs `probe-agent --multi` there, once per tracepoint
#     strategy (step, boost, emulate, auto), one after the other; each
#     case is one gdb-multiarch batch session over `target extended-remote`
#     that runs a program, whose own printout (ground.h) is the truth the
#     case checks gdb's view against: breakpoints, stepping, backtrace,
#     exit code, hardware points, threads, awatch and attach/detach under
#     the first agent, tracepoints and probe-trace record --connect (run
#     on the host) under each;
#  5. a session saying `monitor exit` ends each agent; after the last the
#     guest powers off and its script's status reaches the console as
#     GUEST_EXIT.
# Every case runs in the one boot (a boot costs 2-3 s, more under load).
# Output is TAP; exit 0 when every case passed, 1 when one failed, 77 when
# qemu-system-aarch64, the cross compiler or gdb-multiarch is not installed
# (./bootstrap.sh check installs them), 99 when the test bed itself broke.
#
# Environment: PROBE_CROSS_CACHE (default ~/.cache/probe-agent-cross) for
# the debs, the sysroot and the kernel; CROSS_TIMEOUT (seconds, default
# 1200) bounds the whole boot; V=1 prints every gdb transcript;
# CROSS_QUICK=1 runs only the debugging cases, under the first agent (no
# tracepoints, records or keeper chaos: about a minute);
# CROSS_THREADS_RUNS=N (default 3) runs the threads case N times.
set -eu
arch=${1:-${ARCH:-aarch64}}
srcdir=$(cd "$(dirname "$0")/../.." && pwd)
cache=${PROBE_CROSS_CACHE:-${HOME:-/root}/.cache/probe-agent-cross}
timeout_s=${CROSS_TIMEOUT:-1200}

case "$arch" in
aarch64)
	triplet=aarch64-linux-gnu debarch=arm64 qemu=qemu-system-aarch64
	machine="-M virt -cpu cortex-a57" gdbarch=aarch64 tty=ttyAMA0 ;;
*) echo "check-cross: no test bed for $arch yet (aarch64 only)" >&2; exit 2 ;;
esac

top_srcdir=$srcdir TLIB_NAME=check-cross
. "$srcdir/tests/lib/common.sh"
skip() { tlib_skip_all "$@"; }
fail99() { tlib_error "$@"; }
build="$srcdir/build-$arch"
rm -f "$build/testbed/cases.trs"
[ -d "$srcdir/arch/$arch" ] ||
	skip "this tree has no arch/$arch: nothing to build the agent with"
for tool in "$qemu" "$triplet-gcc" gdb-multiarch cpio dpkg-deb; do
	command -v "$tool" >/dev/null 2>&1 ||
		skip "$tool is not installed (Debian: ./bootstrap.sh cross $arch installs it)"
done

# --- 1. the agent and the target programs -----------------------------------
agent=$("$srcdir/tests/cross/build-agent.sh" "$arch") ||
	fail99 "the cross build of the agent failed"
agent=$(printf '%s\n' "$agent" | tail -n 1)
run="$build/testbed/run"
rm -rf "$run"
mkdir -p "$run"
cp "$agent" "$run/probe-agent"
progs="$srcdir/tests/integration/progs"
"$triplet-gcc" -g -O0 -fno-omit-frame-pointer -static -o "$run/basic" \
	"$progs/basic.c" || fail99 "cannot cross-compile basic.c"

# --- return probes (a64-ret): build -------------------------------------------
# tests/cross/progs/retprobe.c at -O1, where a leaf keeps x30 in its
# register and a non-leaf saves it first thing; the cases are
# retprobe_cases below, run under each strategy's agent.
"$triplet-gcc" -g -O1 -fno-omit-frame-pointer -static -pthread -I"$progs" \
	-o "$run/retprobe" "$srcdir/tests/cross/progs/retprobe.c" ||
	fail99 "cannot cross-compile retprobe.c"

# --- the keeper's chaos case: preparation ---------------------------------------
# The agent is SIGKILLed at random moments while an 8-thread program hits
# tracepoints (step, boost, emulate; started by the agent, attached to,
# and started with a while-stepping action, which single-steps the
# threads after each hit of work; return probes on work and leaf but
# with while-stepping); the keeper must leave the program running on to its untraced
# result and exit status, with its text the file's.  In the guest,
# keepguest (tests/cross/keepguest.c) runs each kill; on the host, gdb
# sets the tracepoints.  KEEPER_KILLS (default 20) and KEEPER_SEED
# (default 1) choose the kills and their delays; KEEPER_NO_KEEPER=1 runs
# the agents with PROBE_AGENT_NO_KEEPER=1, which must fail.
keeper_chaos_prepare() {
	kdir="$run/keeper"
	mkdir -p "$kdir"
	"$triplet-gcc" -O1 -static -pthread -o "$kdir/keeptarget" \
		"$srcdir/tests/keeper/keeptarget.c" &&
	"$triplet-gcc" -O2 -static -o "$kdir/keepguest" "$srcdir/tests/cross/keepguest.c" ||
		fail99 "cannot cross-compile the keeper's chaos programs"
	# The probes: leaf's and bump's entries (mov; adrp: simulated, or
	# copied as movz/movk), work's entry (stp) and its `bl leaf`.
	keeper_probes=$("$triplet-objdump" -d "$kdir/keeptarget" | awk '
		/<(leaf|bump)>:/ { print "0x" $1 }
		/<work>:/ { print "0x" $1; w = 1; next }
		w && /\tbl\t.*<leaf>/ { sub(":", "", $1); print "0x" $1; w = 0 }' |
		sed 's/^0x0*/0x/' | tr '\n' ' ')
	[ "$(echo $keeper_probes | wc -w)" = 4 ] ||
		fail99 "keeptarget: leaf, bump, work and its bl not found ($keeper_probes)"
	# The plan: the executable segment, then one line per kill (n,
	# started/attached, strategy, delay in microseconds) from the seed.
	python3 - "$kdir/keeptarget" "${KEEPER_KILLS:-20}" "${KEEPER_SEED:-1}" "${CROSS_KNOWN_BUGS:-}" \
		>"$kdir/plan" <<'PY' || fail99 "cannot plan the keeper's chaos case"
import random, struct, sys
data = open(sys.argv[1], "rb").read()
phoff, = struct.unpack_from("<Q", data, 0x20)
phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
for i in range(phnum):
    p_type, p_flags, p_offset, p_vaddr, _, p_filesz, _, _ = \
        struct.unpack_from("<IIQQQQQQ", data, phoff + i * phentsize)
    if p_type == 1 and p_flags & 1:
        print("text %#x %#x %d" % (p_vaddr, p_offset, p_filesz))
        break
kills, seed = int(sys.argv[2]), int(sys.argv[3])
known_bugs = sys.argv[4] != ""

for n in range(kills):
    strategy = ("step", "boost", "emulate", "pad")[n % 4]
    mode = ("started", "attached", "while-stepping")[n // 3 % 3]
    delay = random.Random(seed * 100003 + n).randint(0, 250000)
    # Known bug (doc/aarch64.md): attached to the program, the agent
    # (or the program) sometimes dies at tstart and the probes never go
    # in: said as a skip, not run.
    if mode == "attached" and not known_bugs:
        print("skip %d %s %s" % (n, mode, strategy))
        continue
    print("kill %d %s %s %d" % (n, mode, strategy, delay))
PY
	cat >"$kdir/chaos.sh" <<EOF
# The keeper's chaos case, in the guest (check-cross.sh writes it).
cd /mnt/keeper
${KEEPER_NO_KEEPER:+export PROBE_AGENT_NO_KEEPER=1}
set -- \$(sed -n 's/^text //p' plan)
taddr=\$1 toff=\$2 tlen=\$3
./keepguest . -1 plain - 0 \$taddr \$toff \$tlen /mnt/probe-agent ./keeptarget 4000 ||
	echo "guest: keepguest plain failed"
sed -n 's/^kill //p' plan | while read n mode strategy delay; do
	./keepguest . \$n \$mode --tp-strategy=\$strategy \$delay \$taddr \$toff \$tlen \\
		/mnt/probe-agent ./keeptarget 4000
done
echo "guest: keeper chaos done"
EOF
}
quick=${CROSS_QUICK:-0}
case $quick in 0|1) ;; *) fail99 "CROSS_QUICK must be 0 or 1, not '$quick'" ;; esac
threads_runs=${CROSS_THREADS_RUNS:-3}
case $threads_runs in
''|*[!0-9]*|0) fail99 "CROSS_THREADS_RUNS must be a positive number, not '$threads_runs'" ;;
esac
[ "$quick" = 1 ] || keeper_chaos_prepare

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
xcc -O0 -fno-omit-frame-pointer -I"$progs" -o "$run/threads" "$progs/threads.c" ||
	fail99 "cannot cross-compile the record and thread programs"
sdt_h=
for d in /usr/include /usr/include/*-linux-gnu; do
	[ -f "$d/sys/sdt.h" ] && { sdt_h=$d/sys; break; }
done
if [ -n "$sdt_h" ]; then
	mkdir -p "$build/testbed/sdtinc/sys"
	cp "$sdt_h"/sdt*.h "$build/testbed/sdtinc/sys/"
	xcc -O2 -I"$build/testbed/sdtinc" -o "$run/recsdt" "$recprogs/recsdt.c" ||
		fail99 "cannot cross-compile recsdt.c"
fi
sysroot="$build/testbed/sysroot"
rm -rf "$sysroot"
mkdir -p "$sysroot"
ln -s "$run" "$sysroot/mnt"
probe_trace="$srcdir/client/probe-trace"
# The stress counts: CROSS_STRESS_THREADS threads x CROSS_STRESS_CALLS
# calls of one probed function under the strategies named in
# CROSS_STRESS_FULL, and x CROSS_STRESS_SHORT_CALLS under the others of
# CROSS_STRESS_STRATEGIES: 8 x 100000 under every strategy takes too long
# here (times in doc/testing.md).
stress_threads=${CROSS_STRESS_THREADS:-8}
stress_calls=${CROSS_STRESS_CALLS:-100000}
stress_short=${CROSS_STRESS_SHORT_CALLS:-10000}
stress_full=${CROSS_STRESS_FULL-pad auto}
stress_strategies=${CROSS_STRESS_STRATEGIES-step boost emulate pad auto}
# What the guest does for these cases before the agents start: the
# untraced stress run (the output every traced one must equal), and a
# watcher that starts the attach case's program, not under any agent,
# when the host asks for it (attach.go).
cat >"$run/guest-extra.sh" <<EOF
for c in $stress_calls $stress_short 1000; do
	t0=\$(date +%s)
	./recstress calls $stress_threads \$c /mnt/stress-untraced-\$c.out
	echo "guest: untraced recstress $stress_threads x \$c: status \$?, \$((\$(date +%s) - t0)) s"
done
(
	while [ ! -f /mnt/attach.go ]; do sleep 0.2; done
	sh -c 'echo \$\$ >/mnt/attach.pid.tmp; exec ./rectarget loop /mnt/attach.ground' &
	while [ ! -s /mnt/attach.pid.tmp ]; do sleep 0.1; done
	mv /mnt/attach.pid.tmp /mnt/attach.pid
	wait \$!
	echo \$? >/mnt/attach.status
) &
EOF

# --- 2. kernel and initramfs --------------------------------------------------
debs="$cache/debs-$debarch"
mkdir -p "$debs"
# shellcheck source=tests/cross/fetch-debs.sh
. "$srcdir/tests/cross/fetch-debs.sh"
kpkg=$(apt-cache depends "linux-image-$debarch:$debarch" 2>/dev/null |
	awk '/Depends: linux-image-/ { sub(":.*", "", $2); print $2; exit }') || kpkg=
if [ -z "$kpkg" ]; then
	# No package lists: the newest kernel already cached.
	kpkg=$(cd "$debs" && ls linux-image-*-"$debarch"_*.deb 2>/dev/null |
		sort -V | tail -n 1 | sed 's/_.*//') || kpkg=
	[ -n "$kpkg" ] || fail99 "no kernel package: dpkg --add-architecture $debarch; apt-get update"
fi
fetch_debs "$debs" "$debarch" "$kpkg" busybox-static ||
	fail99 "cannot fetch the guest's debs"
kdeb=$(ls "$debs/${kpkg}"_*.deb)
bdeb=$(ls "$debs"/busybox-static_*.deb)
kver=${kpkg#linux-image-}
boot="$cache/boot-$debarch"
stamp="$boot/.debs"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$kdeb $bdeb" ]; then
	echo "# building the initramfs for $kver"
	rm -rf "$boot"
	mkdir -p "$boot/root"
	root="$boot/root"
	mods="virtio_mmio failover net_failover virtio_net netfs fscache 9pnet 9pnet_virtio 9p"
	mkdir -p "$boot/k" "$root/bin" "$root/sbin" "$root/usr/bin" "$root/usr/sbin" \
		"$root/lib/modules" "$root/dev" "$root/proc" "$root/sys" "$root/tmp" \
		"$root/mnt" "$root/etc"
	dpkg-deb --fsys-tarfile "$kdeb" |
		tar -C "$boot/k" -xf - --wildcards "./boot/vmlinuz-*" \
			$(for m in $mods; do printf '*/%s.ko ' "$m"; done)
	mv "$boot/k/boot/vmlinuz-$kver" "$boot/vmlinuz"
	for m in $mods; do
		find "$boot/k" -name "$m.ko" -exec cp {} "$root/lib/modules/" \;
		[ -f "$root/lib/modules/$m.ko" ] || fail99 "no $m.ko in $kdeb"
	done
	dpkg-deb --fsys-tarfile "$bdeb" | tar -C "$boot/k" -xf - ./bin/busybox
	cp "$boot/k/bin/busybox" "$root/bin/busybox"
	printf '127.0.0.1 localhost\n' >"$root/etc/hosts"
	# Modules in dependency order (no depmod on the host); the virtio
	# devices are the MMIO ones, so virtio_mmio is the only transport.
	cat >"$root/init" <<EOF
#!/bin/busybox sh
/bin/busybox --install -s
mount -t devtmpfs dev /dev
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t tmpfs tmp /tmp
for m in $mods; do insmod /lib/modules/\$m.ko || echo "init: insmod \$m failed"; done
ip link set lo up
ip addr add 10.0.2.15/24 dev eth0
ip link set eth0 up
if mount -t 9p -o trans=virtio,version=9p2000.L share /mnt; then
	sh /mnt/guest.sh
	rc=\$?
else
	rc=99
fi
echo "GUEST_EXIT rc=\$rc"
poweroff -f
EOF
	chmod +x "$root/init"
	(cd "$root" && find . | cpio -o -H newc --quiet | gzip -9) >"$boot/initrd.gz"
	rm -rf "$boot/k"
	echo "$kdeb $bdeb" >"$stamp"
fi

# --- 3. boot ------------------------------------------------------------------
cat >"$run/guest.sh" <<'EOF'
# Runs in the guest, from /mnt (the host's run folder over 9p).
cd /mnt
echo "guest: $(uname -r) $(uname -m)"
# The record and debugging cases' own start-up (guest-extra.sh, written
# by section 1b).
[ -f /mnt/guest-extra.sh ] && . /mnt/guest-extra.sh
# One agent per tracepoint strategy, one after the other: the host ends
# each with `monitor exit`.  The debugging cases run under the first.
for s in $(cat /mnt/strategies); do
	./probe-agent --multi --tp-strategy=$s --debug=pad 0.0.0.0:1234 >/mnt/agent-$s.log 2>&1
	echo "guest: probe-agent --tp-strategy=$s exited with $?"
done
# The keeper's chaos case (keeper_chaos_run drives it from the host).
if [ -f /mnt/keeper/chaos.sh ]; then sh /mnt/keeper/chaos.sh; fi
EOF

if [ "$quick" = 1 ]; then
	echo step >"$run/strategies"
else
	echo step boost emulate pad auto >"$run/strategies"
fi

# A free port on 127.0.0.1 for the forward.
port=$(tlib_free_port)
console="$build/testbed/console.log"
rm -f "$console"
start=$(date +%s)
# shellcheck disable=SC2086
timeout "$timeout_s" "$qemu" $machine -smp 1 -m 512 -nodefaults -display none \
	-no-reboot -monitor none -serial "file:$console" \
	-kernel "$boot/vmlinuz" -initrd "$boot/initrd.gz" \
	-append "console=$tty panic=-1 quiet" \
	-netdev "user,id=n0,hostfwd=tcp:127.0.0.1:$port-:1234" \
	-device virtio-net-device,netdev=n0 \
	-fsdev "local,id=fs0,path=$run,security_model=none" \
	-device virtio-9p-device,fsdev=fs0,mount_tag=share &
qpid=$!
cleanup() { kill "$qpid" 2>/dev/null || true; }
trap cleanup EXIT

# wait_agent STRATEGY: until that agent says "Listening on port".
wait_agent() {
	tlib_wait_line "$run/agent-$1.log" "Listening on port" 120 "$qpid" && return 0
	cat "$console" >&2 2>/dev/null || true
	kill -0 "$qpid" 2>/dev/null || fail99 "the guest stopped before the agent ($1) listened"
	fail99 "no agent ($1) after 120 s"
}

# end_agent: the agent of the current strategy exits (the guest script
# then starts the next one, or powers off after the last).
end_agent() {
	printf 'set architecture %s\ntarget extended-remote 127.0.0.1:%s\nmonitor exit\n' \
		"$gdbarch" "$port" >"$run/exit.gdb"
	timeout 60 gdb-multiarch -batch -nx -x "$run/exit.gdb" >"$run/exit.out" 2>&1 || true
}

wait_agent step
echo "# guest up, agent listening, after $(($(date +%s) - start)) s (host port $port)"

# --- 4. the cases -----------------------------------------------------------------
# One line per case in automake's .trs form as well, for the closing
# count of ./bootstrap.sh check.
trs="$build/testbed/cases.trs"
: >"$trs"
n=0
failed=0
passed=0
ok() {
	n=$((n + 1)); passed=$((passed + 1)); echo "ok $n - $1"
	echo ":test-result: PASS $1" >>"$trs"
}
not_ok() {
	n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"
	echo ":test-result: FAIL $1" >>"$trs"
	shift
	for line in "$@"; do echo "#   $line"; done
}

# guest_exit: waits for the guest to power off, says how it ended and
# exits with the verdict (section 5; CROSS_QUICK=1 comes here early).
guest_exit() {
	waited=0
	while kill -0 "$qpid" 2>/dev/null && [ "$waited" -lt 600 ]; do
		sleep 0.1
		waited=$((waited + 1))
	done
	if grep -q "GUEST_EXIT rc=0" "$console" 2>/dev/null; then
		ok "the guest ran its script and powered off"
	else
		not_ok "guest exit" "$(tail -n 5 "$console" 2>/dev/null | tr '\n' ' ')"
	fi
	echo "1..$n"
	echo "# whole boot: $(($(date +%s) - start)) s"
	echo "check-cross: $passed passed, $failed failed"
	[ "$failed" -eq 0 ] && exit 0
	exit 1
}

# gdb_case NAME: runs gdb-multiarch on $run/NAME.gdb (after a common
# prologue that connects and names the program); its transcript is
# $run/NAME.out, the program's ground lines $run/ground-NAME.txt.
gdb_case() {
	name=$1
	rm -f "$run/ground-$name.txt"
	{
		echo "set pagination off"
		echo "set confirm off"
		echo "set architecture $gdbarch"
		echo "set sysroot $run"
		echo "file $run/basic"
		echo "target extended-remote 127.0.0.1:$port"
		echo "set remote exec-file /mnt/basic"
		echo "set startup-with-shell off"
		echo "set environment ITEST_GROUND=/mnt/ground-$name.txt"
		cat
	} >"$run/$name.gdb"
	timeout 120 gdb-multiarch -batch -nx -x "$run/$name.gdb" >"$run/$name.out" 2>&1 || true
	[ "${V:-0}" = 0 ] || sed "s/^/# $name: /" "$run/$name.out"
}

# ground NAME KEY: the value of KEY=... in the program's printout.
ground() {
	sed -n "s/.* $2=\([^ ]*\).*/\1/p" "$run/ground-$1.txt" 2>/dev/null | head -n 1
}

# Breakpoint at a function's first instruction, registers, one
# instruction step, backtrace, and the exit status.
gdb_case break <<'EOF'
break *square
run exit 3
info registers pc x0
printf "BRK pc=%#lx x0=%ld\n", $pc, $x0
stepi
printf "STEP pc=%#lx\n", $pc
bt
delete
continue
EOF
square=$(ground break square)
out="$run/break.out"
if [ -z "$square" ]; then
	not_ok "break: the program printed its addresses" "$(tail -n 5 "$out")"
else
	if grep -q "BRK pc=$square x0=7\$" "$out" &&
	   grep -Eq "^x0 +0x7 +7" "$out"; then
		ok "break *square: pc = square ($square), x0 = 7 as the program passed it"
	else
		not_ok "break *square: pc and x0" "$(grep -E 'BRK|^pc|^x0' "$out" | tr '\n' ' ')"
	fi
	step=$(printf '%#x' $((square + 4)))
	if grep -q "STEP pc=$step\$" "$out"; then
		ok "stepi: pc = square + 4"
	else
		not_ok "stepi: pc = square + 4 ($step)" "$(grep STEP "$out")"
	fi
	if grep -Eq "^#0 .*square" "$out" && grep -Eq "^#1 .*main" "$out"; then
		ok "backtrace: square called from main"
	else
		not_ok "backtrace" "$(grep '^#' "$out" | tr '\n' ' ')"
	fi
fi
if grep -q "exited with code 03" "$out" && grep -q "ground: exiting with 3" "$run/ground-break.txt"; then
	ok "continue to the end: exit code 3"
else
	not_ok "exit code 3" "$(grep -i 'exited\|error' "$out" | tr '\n' ' ')"
fi

# Stepping over a system call instruction: arm64 ends that step with a
# bare SIGTRAP from the syscall exit path, not TRAP_TRACE.  The agent must
# report it as the end of the step and not hand a SIGTRAP to the program.
svc=$("$triplet-objdump" -d "$run/basic" |
	awk '/<(__)?getpid>:/ { m = 1 } m && /\tsvc\t/ { sub(":", "", $1); print "0x" $1; exit }')
[ -n "$svc" ] || fail99 "no svc in getpid (objdump)"
gdb_case svc <<EOF
break *$svc
run
stepi
printf "SVC pc=%#lx x0=%ld\n", \$pc, \$x0
delete
continue
EOF
out="$run/svc.out"
pid=$(ground svc pid)
after=$(printf '%#x' $((svc + 4)))
if [ -n "$pid" ] && grep -q "SVC pc=$after x0=$pid\$" "$out"; then
	ok "stepi over svc: pc = svc + 4, x0 = getpid() = $pid"
else
	not_ok "stepi over svc ($svc, pid $pid)" "$(grep -E 'SVC|signal|[Ee]rror' "$out" | head -n 4 | tr '\n' ' ')"
fi
if grep -q "exited normally" "$out" && ! grep -q "SIGTRAP" "$out"; then
	ok "after the step over svc the program runs to its end, no SIGTRAP"
else
	not_ok "after the step over svc" "$(grep -E 'signal|exited|SIGTRAP' "$out" | head -n 4 | tr '\n' ' ')"
fi

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

# Hardware points (NT_ARM_HW_BREAK / NT_ARM_HW_WATCH): a hardware
# breakpoint, a write watchpoint on `counter` (level3 adds to it) and a
# read watchpoint on `set_me` (read by the printout after checkpoint);
# aarch64 has read watchpoints, so gdb sends Z3 for them.
gdb_case hw <<'EOF'
break main
run
hbreak *square
continue
printf "HB pc=%#lx x0=%ld\n", $pc, $x0
delete
watch counter
continue
printf "WATCH counter=%d\n", counter
delete
rwatch set_me
continue
printf "RWATCH set_me=%d\n", set_me
delete
continue
EOF
square=$(ground hw square)
out="$run/hw.out"
if [ -n "$square" ] && grep -q "HB pc=$square x0=7\$" "$out"; then
	ok "hbreak *square: stops there with x0 = 7"
else
	not_ok "hbreak *square ($square)" "$(grep -E 'HB |[Ee]rror|Could not' "$out" | head -n 4 | tr '\n' ' ')"
fi
counter=$(ground hw counter)
if [ -n "$counter" ] && grep -q "WATCH counter=$counter\$" "$out" &&
   grep -q "New value = $counter" "$out"; then
	ok "watch counter: stops when level3 writes $counter"
else
	not_ok "watch counter (the program says $counter)" \
		"$(grep -E 'WATCH|New value|[Ee]rror|Could not' "$out" | head -n 4 | tr '\n' ' ')"
fi
# "Value = " is printed when the watchpoint stops the program, not when
# it is set.
if grep -q "RWATCH set_me=7\$" "$out" && grep -q "^Value = 7" "$out"; then
	ok "rwatch set_me: stops when the program reads it"
else
	not_ok "rwatch set_me" "$(grep -E 'RWATCH|atchpoint|[Ee]rror|Could not' "$out" | head -n 4 | tr '\n' ' ')"
fi
if grep -q "exited normally" "$out"; then
	ok "the program runs to its end after the hardware points"
else
	not_ok "the program runs to its end after the hardware points" "$(tail -n 3 "$out" | tr '\n' ' ')"
fi

# --- debugging cases: threads, awatch, attach and detach ---------------------
# Under the first agent, like the cases above; each has its own program
# and checks gdb's view against the program's printout.

# gdb_case_prog NAME PROG: gdb_case on another program of the run folder.
gdb_case_prog() {
	name=$1
	prog=$2
	rm -f "$run/ground-$name.txt"
	{
		echo "set pagination off"
		echo "set confirm off"
		echo "set architecture $gdbarch"
		echo "set sysroot $run"
		echo "file $run/$prog"
		echo "target extended-remote 127.0.0.1:$port"
		echo "set remote exec-file /mnt/$prog"
		echo "set startup-with-shell off"
		echo "set environment ITEST_GROUND=/mnt/ground-$name.txt"
		cat
	} >"$run/$name.gdb"
	timeout 120 gdb-multiarch -batch -nx -x "$run/$name.gdb" >"$run/$name.out" 2>&1 || true
	[ "${V:-0}" = 0 ] || sed "s/^/# $name: /" "$run/$name.out"
}

# Threads: threads.c starts 4 threads behind a barrier; thread i calls
# hit(i) i + 1 times and prints its kernel tid.  A conditional
# breakpoint stops thread 3 in hit(): gdb must list main and the 4
# threads, the stopped one must be the tid thread 3 printed, and id = 3.
debug_threads() {
	gdb_case_prog threads threads <<'EOF'
break hit if id == 3
run
info threads
printf "TH id=%d\n", id
delete
continue
EOF
	out="$run/threads.out"
	the_run=" (run $threads_run of $threads_runs)"
	g="$run/ground-threads.txt"
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
	gdb_case awatch <<'EOF'
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
	out="$run/awatch.out"
	counter=$(ground awatch counter)
	# gdb prints "Value = V" for a read, "Old value = ... New value = V"
	# for a write.
	got=$(grep -E '^(Value|New value) = |^AW[123] ' "$out" | tr '\n' ' ')
	want="Value = 0 AW1 counter=0 Old value = 0 New value = $counter AW2 counter=$counter Value = $counter AW3 counter=$counter "
	if [ -n "$counter" ] && [ "$(grep -E '^(Value|Old value|New value) = |^AW[123] ' "$out" | tr '\n' ' ')" = "$want" ]; then
		ok "awatch counter: the read, the write of $counter, the read of main's printout"
	else
		not_ok "awatch counter (the program says $counter)" "got: $got"
	fi
	if grep -q "exited normally" "$out"; then
		ok "awatch: the program runs to its end"
	else
		not_ok "awatch: the program runs to its end" "$(tail -n 3 "$out" | tr '\n' ' ')"
	fi
}

# attach and detach: rectarget loop, started in the guest by
# guest-extra.sh (no agent started it), calls compute(i, 7) every
# millisecond until attach.ground.stop exists.  gdb attaches, stops in
# compute, reads its arguments, detaches; the program must go on calling
# and, told to stop, end with status 0 and its "done" line.
debug_attach() {
	rm -f "$run/attach.pid" "$run/attach.status" "$run/attach.ground" "$run/attach.ground.stop"
	: >"$run/attach.go"
	waited=0
	until [ -s "$run/attach.pid" ] && [ -s "$run/attach.ground" ]; do
		waited=$((waited + 1))
		[ "$waited" -lt 300 ] || break
		sleep 0.1
	done
	pid=$(cat "$run/attach.pid" 2>/dev/null) || true
	if [ -z "$pid" ]; then
		not_ok "attach: the guest started the program" "no attach.pid after 30 s"
		return
	fi
	cat >"$run/attach.gdb" <<EOF
set pagination off
set confirm off
set architecture $gdbarch
set sysroot $run
file $run/rectarget
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
		ok "attach $pid: break compute stops a call the program made, compute($a, 7); detach"
	else
		not_ok "attach $pid, break compute, detach" \
			"$(grep -E 'ATT|[Aa]ttach|Detach|[Ee]rror' "$out" | head -n 5 | tr '\n' ' ')"
	fi
	calls=$(grep -c '^compute ' "$run/attach.ground" 2>/dev/null) || true
	if [ -n "$a" ] && [ "$(cat "$run/attach.status" 2>/dev/null)" = 0 ] &&
	   grep -q "^done $calls\$" "$run/attach.ground" && grep -q "^compute $((a + 5)) 7 " "$run/attach.ground"; then
		ok "after the detach the program runs on ($calls calls) and ends with status 0"
	else
		not_ok "after the detach the program runs on and ends" \
			"status $(cat "$run/attach.status" 2>/dev/null), $calls calls, $(tail -n 1 "$run/attach.ground" 2>/dev/null)"
	fi
}

# The threads case runs several times (CROSS_THREADS_RUNS): the other
# threads reach the breakpoint while the first hit maps the XOL area, and
# the order they come in varies from run to run (the agent once put the
# mmap's system call instruction at the breakpoint's address, where a
# thread arriving meanwhile ran it: about one run in two failed).
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

# Arguments: rectarget calls compute(i, 2i+1) and checksum("word-i", 6)
# 20 times and prints each call; probes at both entries (the first
# instruction, `sub sp`, is boosted by the arch) and at call_compute's
# `bl compute` (simulated under emulate and auto), where x0 and x1 are
# compute's arguments already.
record_args() {
	strat=$1
	rec_pt "rec-$strat" -e 'compute args=2' -e 'checksum args=2 mem=arg0,6' \
		-e "call_compute+$rec_bl_off args=2" \
		-- /mnt/rectarget calls "/mnt/rec-$strat.ground" 20
	if [ "$rec_status" = 0 ] &&
	   python3 "$srcdir/tests/record/reccheck.py" calls "$run/rec-$strat.jsonl" \
		"$run/rec-$strat.ground" >"$run/rec-$strat.check" 2>&1 &&
	   python3 - "$run/rec-$strat.jsonl" "$run/rec-$strat.ground" >>"$run/rec-$strat.check" 2>&1 <<'PY'
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
		ok "record --connect ($strat): compute, checksum (memory) and the bl, 20 calls each, values as printed"
	else
		not_ok "record --connect ($strat): rectarget calls" "status $rec_status" \
			"$(cat "$run/rec-$strat.err" "$run/rec-$strat.check" 2>/dev/null | tail -n 5 | tr '\n' ' ')"
	fi
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
	rec_pt "sdt-$strat" -e 'sdt:rec:tick args mem=arg2,6' -e 'sdt:rec:twice' \
		-e 'sdt:rec:guarded' -- /mnt/recsdt "/mnt/sdt-$strat.ground" 25
	if [ "$rec_status" = 0 ] &&
	   python3 - "$run/sdt-$strat.jsonl" "$run/sdt-$strat.ground" >"$run/sdt-$strat.check" 2>&1 <<'PY'
import json, sys
fr = [json.loads(l) for l in open(sys.argv[1])]
g = [l.split() for l in open(sys.argv[2])]
def s64(v): return v - (1 << 64) if v >= 1 << 63 else v
tick = [f for f in fr if f["probe"] == "sdt:rec:tick"]
want = [(int(l[1]), int(l[2]), l[3]) for l in g if l[0] == "tick"]
got = [(f["values"]["arg0"], s64(f["values"]["arg1"]),
        bytes.fromhex(f["memory"][0]["bytes"]).decode()) for f in tick]
assert len(want) == 25 and got == [(i, v, s[:6]) for i, v, s in want], (got[:3], want[:3])
twice = [f["values"]["arg0"] for f in fr if f["probe"] == "sdt:rec:twice"]
assert twice == [int(l[1]) for l in g if l[0] == "twice"], twice
guarded = [f["values"]["arg0"] for f in fr if f["probe"] == "sdt:rec:guarded"]
gw = [int(l[1]) for l in g if l[0] == "guarded"]
assert len(gw) == 25 and guarded == gw, (guarded, gw)
print(len(tick), "ticks,", len(twice), "twice (2 sites),", len(guarded), "guarded")
PY
	then
		ok "record --connect ($strat): USDT tick (3 operands + memory), twice (2 sites), guarded (semaphore)"
	else
		not_ok "record --connect ($strat): USDT" "status $rec_status" \
			"$(cat "$run/sdt-$strat.err" "$run/sdt-$strat.check" 2>/dev/null | tail -n 5 | tr '\n' ' ')"
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
	rec_timeout=${CROSS_STRESS_TIMEOUT:-600} REC_NO_DUMP=1 rec_pt "stress-$strat" -e 'hit args=2' \
		-- /mnt/recstress calls "$stress_threads" "$calls" "/mnt/stress-$strat.out"
	secs=$(($(date +%s) - t0))
	echo "# stress ($strat): $stress_threads x $calls calls recorded in $secs s"
	"$probe_trace" dump --summary --json "$run/stress-$strat.tfile" >"$run/stress-$strat.summary" 2>&1 || true
	# Every frame's arguments must be a call the program made: each
	# (thread, i) once.
	counts=$("$probe_trace" dump --json "$run/stress-$strat.tfile" 2>/dev/null |
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
' "$run/stress-$strat.summary" "$stress_threads" "$calls" 2>&1) || counts="? ? ? ?"
	read -r frames lost dumped bad <<EOF
$counts
EOF
	prog_total=$(sed -n 's/^total \([0-9]*\) sum .*/\1/p' "$run/stress-$strat.out" 2>/dev/null) || true
	if [ "$rec_status" = 0 ] && cmp -s "$run/stress-untraced-$calls.out" "$run/stress-$strat.out" &&
	   [ "$prog_total" = "$total" ] && [ "$frames" = "$total" ] && [ "$dumped" = "$total" ] &&
	   [ "$lost" = 0 ] && [ "$bad" = 0 ]; then
		ok "record stress ($strat): $stress_threads x $calls calls = $frames frames, none lost, output as untraced ($secs s)"
	else
		not_ok "record stress ($strat): $total calls" \
			"status $rec_status, program total ${prog_total:-none}, frames $counts (frames lost dumped bad)" \
			"$(cmp "$run/stress-untraced-$calls.out" "$run/stress-$strat.out" 2>&1)" \
			"$(tail -n 3 "$run/stress-$strat.err" | tr '\n' ' ')"
	fi
	rm -f "$run/stress-$strat.tfile"
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
	case " $stress_full " in
	*" $1 "*) record_stress "$1" "$stress_calls"; return ;;
	esac
	case " $stress_strategies " in
	*" $1 "*) record_stress "$1" "$stress_short" ;;
	esac
}

# Leaving pads (pad and auto): 8 threads of recstress call hit() 1000
# times each under a tracepoint collecting $regs there, and a breakpoint
# at the same address whose condition the agent evaluates (thread 3's
# 500th call) stops them all while the others run in their pads (with
# gdb's breakpoint there, every hit goes through the pad's hand-off and
# its BRK).  The agent steps each one out of its pad, or back to the
# probe where the step would not make progress (an exclusive claim):
# no thread may show a pc in a pad (gdb prints such a frame as `?? ()`);
# afterwards every call is one frame (none lost, none twice) and the
# output is the untraced run's.
pad_settle_case() {
	strat=$1
	name=settle-$strat
	rm -f "$run/$name.res"
	cat >"$run/$name.gdb" <<EOF
set pagination off
set confirm off
set architecture $gdbarch
set sysroot $run
file $run/recstress
target extended-remote 127.0.0.1:$port
set remote exec-file /mnt/recstress
set startup-with-shell off
set breakpoint condition-evaluation target
break main
run calls 8 1000 /mnt/$name.res
set trace-buffer-size 16000000
trace hit
actions
collect \$regs
end
tstart
break hit if t == 3 && i == 500
continue
printf "SETTLE t=%ld i=%ld\\n", t, i
info threads
monitor probes
delete
break fopen
continue
tstop
tstatus
delete
continue
EOF
	timeout 300 gdb-multiarch -batch -nx -x "$run/$name.gdb" >"$run/$name.out" 2>&1 || true
	[ "${V:-0}" = 0 ] || sed "s/^/# $name: /" "$run/$name.out"
	out="$run/$name.out"
	threads=$(sed -n '/^  Id  *Target Id/,/^process /p' "$out" | grep -c 'Thread [0-9]*\.[0-9]*') || true
	unknown=$(sed -n '/^  Id  *Target Id/,/^process /p' "$out" | grep -c '?? ()') || true
	frames=$(sed -n 's/^Collected \([0-9]*\) trace frames.*/\1/p' "$out" | tail -n 1)
	if grep -q "^SETTLE t=3 i=500\$" "$out" && [ "$threads" -ge 2 ] && [ "$unknown" = 0 ] &&
	   grep -q ' pad (jump over 4 bytes' "$out"; then
		ok "pads ($strat): all threads stopped at thread 3's 500th hit, $threads threads, none shown in a pad"
	else
		not_ok "pads ($strat): threads stopped while in pads" \
			"$(grep -E 'SETTLE|\?\? \(\)|^process|[Ee]rror|signal' "$out" | head -n 8 | tr '\n' ' ')"
	fi
	if [ "$frames" = 8000 ] && cmp -s "$run/stress-untraced-1000.out" "$run/$name.res" &&
	   grep -q "exited normally" "$out"; then
		ok "pads ($strat): 8 x 1000 calls = $frames frames, output as untraced, the program ends"
	else
		not_ok "pads ($strat): every call one frame, output as untraced" \
			"frames ${frames:-none}, $(cmp "$run/stress-untraced-1000.out" "$run/$name.res" 2>&1)" \
			"$(grep -E 'Trace|exited|signal|[Ee]rror' "$out" | head -n 4 | tr '\n' ' ')"
	fi
}

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
# records leaf%return and rec%return from this host (auto only).
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
	name=$1
	rm -f "$run/ground-$name.txt"
	{
		echo "set pagination off"
		echo "set confirm off"
		echo "set architecture $gdbarch"
		echo "set sysroot $run"
		echo "file $run/retprobe"
		echo "target extended-remote 127.0.0.1:$port"
		echo "set remote exec-file /mnt/retprobe"
		echo "set startup-with-shell off"
		echo "set environment ITEST_GROUND=/mnt/ground-$name.txt"
		cat
	} >"$run/$name.gdb"
	timeout 180 gdb-multiarch -batch -nx -x "$run/$name.gdb" >"$run/$name.out" 2>&1 || true
	[ "${V:-0}" = 0 ] || sed "s/^/# $name: /" "$run/$name.out"
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
	{ echo "set \$leafret = ${leafret:-0}"; cat <<'EOF'; } | retprobe_gdb "$name"
break main
run
trace *leaf
actions
collect $regs
end
trace *saver
actions
collect $regs
end
trace *rec
actions
collect $regs
end
trace *jumper
actions
collect $regs
end
trace *tail_call
actions
collect $regs
end
trace *tcall
actions
collect $regs
end
trace *leaf
actions
collect $regs
end
monitor return-probe 2
monitor return-probe 3
monitor return-probe 4
monitor return-probe 5
monitor return-probe 6
monitor return-probe 7
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
	bt_leaf=$(sed -n '/^=== BT-LEAF/,/^Value returned/p' "$out")
	bt_saver=$(sed -n '/^=== BT-SAVER/,/^Value returned/p' "$out")
	bt_base=$(sed -n '/^=== BT-BASE/,/^=== BT-END/p' "$out")
	leaf0=$(sed -n 's/^ground: leaf x=0 value=//p' "$grd" 2>/dev/null)
	saver0=$(sed -n 's/^ground: saver x=0 inner=[^ ]* value=//p' "$grd" 2>/dev/null)
	caller=$(printf '%s\n' "$bt_leaf" | sed -n 's/^#1 *0x0*\([0-9a-f]*\) in main .*/0x\1/p' | head -n 1)
	if printf '%s\n' "$bt_leaf" | grep -Eq '^#0 .*leaf' && [ -n "$caller" ] &&
	   printf '%s\n' "$bt_leaf" | grep -q "BT-LEAF x30=$caller\$"; then
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
	if printf '%s\n' "$bt_saver" | grep -Eq '^#1 .* in main '; then
		ok "return probes ($strat): stopped in saver() after its stp, backtrace shows main"
	else
		not_ok "return probes ($strat): backtrace in saver()" "$(printf '%s\n' "$bt_saver" | head -n 4 | tr '\n' ' ')"
	fi
	nrec=$(printf '%s\n' "$bt_base" | grep -Ec '^#[1-6] .* in rec ')
	if [ "$nrec" = 6 ] && printf '%s\n' "$bt_base" | grep -Eq '^#7 .* in main ' &&
	   ! printf '%s\n' "$bt_base" | grep -q '?? ()'; then
		ok "return probes ($strat): backtrace under six probed rec() frames: rec x6, main"
	else
		not_ok "return probes ($strat): backtrace in base()" "$(printf '%s\n' "$bt_base" | head -n 9 | tr '\n' ' ')"
	fi
	if [ -n "$leaf0" ] && [ -n "$saver0" ] &&
	   [ "$(grep -c '^Value returned is ' "$out")" = 2 ] &&
	   grep -q "^Value returned is \$[0-9]* = $leaf0\$" "$out" &&
	   grep -q "^Value returned is \$[0-9]* = $saver0\$" "$out"; then
		ok "return probes ($strat): finish from leaf() and saver() returns $leaf0 and $saver0"
	else
		not_ok "return probes ($strat): finish" "$(grep -E '^Value returned|Run till' "$out" | tr '\n' ' ')"
	fi
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
	# The agent keeps gdb's environment for the runs after: this run
	# appends its own printout to GROUND.
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
}

for strat in step boost emulate pad auto; do
	if [ "$strat" != step ]; then
		end_agent
		wait_agent "$strat"
	fi
	gdb_case "trace-$strat" <<EOF
break main
run
trace *square
actions
collect \$regs
end
trace *$bl
actions
collect \$regs
end
tstart
monitor probes
break checkpoint
continue
monitor probes
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
	if [ -n "$square" ] && grep -q "TP2 pc=$square x0=7\$" "$out" &&
	   grep -q "TP3 pc=$bl x0=7\$" "$out" && grep -q "Collected 2 trace frames" "$out"; then
		ok "tracepoints ($strat): square's entry and main's bl, one frame each, pc and x0 = 7"
	else
		not_ok "tracepoints ($strat) at square ($square) and bl ($bl)" \
			"$(grep -E 'TP[23] |Collected|[Ee]rror|Target returned|not' "$out" | head -n 8 | tr '\n' ' ')"
	fi
	if grep -q "exited normally" "$out" && grep -q "ground: sq=49" "$run/ground-trace-$strat.txt" &&
	   grep -q "ground: done" "$run/ground-trace-$strat.txt"; then
		ok "traced program ($strat) computes as untraced and runs to its end"
	else
		not_ok "traced program ($strat) runs to its end" "$(tail -n 3 "$out" | tr '\n' ' ')"
	fi
	case $strat in
	pad) ftrace_case; pad_settle_case "$strat" ;;
	auto) pad_settle_case "$strat" ;;
	esac
	retprobe_cases "$strat"	# a64-ret
	# probe-trace record --connect under the same agent.
	record_cases "$strat"
done
end_agent

# --- the keeper's chaos case: the kills --------------------------------------------
# Per kill: wait for keepguest's readyN, connect gdb, set the tracepoints
# and start them; keepguest kills the agent and writes doneN.
keeper_chaos_run() {
	kdir="$run/keeper"
	kstart=$(date +%s)
	set -- $keeper_probes
	sed -n 's/^kill //p' "$kdir/plan" >"$kdir/kills"
	while read -r kn kmode kstrat kdelay; do
		waited=0
		until [ -f "$kdir/ready$kn" ] || [ -f "$kdir/done$kn" ]; do
			waited=$((waited + 1))
			if [ "$waited" -gt 1200 ] || ! kill -0 "$qpid" 2>/dev/null; then
				not_ok "keeper chaos $((kn + 1)) ($kmode $kstrat): the guest never got ready"
				return
			fi
			sleep 0.1
		done
		{
			echo "set pagination off"
			echo "set confirm off"
			echo "set architecture $gdbarch"
			echo "set remotetimeout 30"
			echo "target remote 127.0.0.1:$port"
			for a in "$@"; do
				printf 'trace *%s\nactions\ncollect $regs\n' "$a"
				# work's entry (the third): four steps after each hit
				if [ "$kmode" = while-stepping ] && [ "$a" = "$3" ]; then
					printf 'while-stepping 4\ncollect $pc\nend\n'
				fi
				printf 'end\n'
			done
			# work's return (a non-leaf: it saves the trampoline's
			# address in its frame) and leaf's (which keeps it in
			# x30), but not with while-stepping.
			if [ "$kmode" != while-stepping ]; then
				printf 'trace *%s\nactions\ncollect $regs\nend\n' "$3" "$1"
				echo "monitor return-probe 5"
				echo "monitor return-probe 6"
			fi
			echo "tstart"
			echo "continue"
		} >"$kdir/gdb$kn.cmd"
		timeout 150 gdb-multiarch -batch -nx -x "$kdir/gdb$kn.cmd" \
			>"$kdir/gdb$kn.out" 2>&1 </dev/null &
		gpid=$!
		waited=0
		until [ -f "$kdir/done$kn" ]; do
			waited=$((waited + 1))
			if [ "$waited" -gt 1800 ] || ! kill -0 "$qpid" 2>/dev/null; then
				break
			fi
			sleep 0.1
		done
		kill "$gpid" 2>/dev/null || true
		wait "$gpid" 2>/dev/null || true
		what="keeper chaos $((kn + 1)): $kmode $kstrat, SIGKILL after $((kdelay / 1000)) ms"
		res=$(cat "$kdir/done$kn" 2>/dev/null) || res="not ok: no result from the guest"
		case $res in
		ok*) ok "$what${res#ok}" ;;
		*) not_ok "$what" "${res#not ok: }" \
			"$(grep -E '[Ee]rror|Remote|Tracepoint' "$kdir/gdb$kn.out" | head -n 3 | tr '\n' ' ')" \
			"$(grep -v '^$' "$kdir/agent$kn" 2>/dev/null | tail -n 3 | tr '\n' ' ')" ;;
		esac
	done <"$kdir/kills"
	# What the keepers did: threads given a fix-up record, single steps
	# disarmed by re-attaching (doc/keeper.md, "On aarch64").
	moved=$(cat "$kdir"/agent[0-9]* 2>/dev/null |
		sed -n 's/^keeper: process [0-9]*: .*, \([0-9]*\) threads moved$/\1/p' |
		awk '{ s += $1 } END { print s + 0 }')
	disarmed=$(cat "$kdir"/agent[0-9]* 2>/dev/null |
		sed -n 's/^keeper: process [0-9]*: \([0-9]*\) single steps disarmed.*/\1/p' |
		awk '{ s += $1 } END { print s + 0 }')
	sed -n 's/^skip //p' "$kdir/plan" >"$kdir/skips"
	while read -r kn kmode kstrat; do
		n=$((n + 1))
		echo "ok $n - keeper chaos $((kn + 1)): $kmode $kstrat # SKIP known bug: attached, the agent may die at tstart (doc/aarch64.md; CROSS_KNOWN_BUGS=1 runs it)"
		echo ":test-result: SKIP keeper chaos $((kn + 1)): $kmode $kstrat" >>"$trs"
	done <"$kdir/skips"
	echo "# keeper chaos: $(wc -l <"$kdir/kills") kills in $(($(date +%s) - kstart)) s (seed ${KEEPER_SEED:-1}): $moved threads moved, $disarmed single steps disarmed"
}
keeper_chaos_run

# --- 5. power off ---------------------------------------------------------------
guest_exit
