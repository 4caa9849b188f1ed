# lib.sh - sourced by check-cross.sh: what the test bed does the same way
# for every architecture.  The arch's own build and case files
# (ARCH-build.sh, ARCH-cases.sh) and the shared case files
# (debug-cases.sh, record-cases.sh) use these functions and variables.
#
#   cross_arch_config ARCH   the arch's settings (below), or exit 2
#   cross_initramfs          kernel and initramfs from Debian's debs, cached
#   cross_stage_gdbserver    Debian's gdbserver for the guest, in $run/lib
#   cross_boot               the guest's script, qemu started ($qpid, $port)
#   wait_agent S / end_agent the stub of strategy S listens / exits
#   ok / not_ok / skip_case  one TAP line (and one .trs line)
#   gdb_case / gdb_case_prog one gdb-multiarch session against the stub
#   cross_gdb_head           the first lines of a session's command file
#   ground NAME KEY          a value of the program's printout
#   retbt_sections / retbt_checks  gdb's view while return probes hold
#                            the trampoline (retprobe's leaf, saver, rec)
#   pad_settle_case          threads stopped while others run in pads
#   keeper_chaos_prepare     the keeper's chaos case: programs, plan, script
#   keeper_chaos_run         its host side: gdb sets the probes per kill
#   guest_exit               the verdict

# cross_arch_config ARCH: sets triplet, debarch, kflavour (the kernel
# package's flavour, linux-image-FLAVOUR), qemu, machine, gdbarch, tty,
# archdir (the arch's folder under arch/), ld_so (the guest's dynamic
# loader, for gdbserver) and isas (the instruction sets the target
# programs are built for: empty for one build with the defaults; armhf:
# CROSS_ISAS, default "thumb arm").
cross_arch_config() {
	case "$1" in
	aarch64)
		triplet=aarch64-linux-gnu debarch=arm64 kflavour=arm64 qemu=qemu-system-aarch64
		machine="-M virt -cpu cortex-a57" gdbarch=aarch64 tty=ttyAMA0
		archdir=aarch64 ld_so=ld-linux-aarch64.so.1 isas= ;;
	armhf)
		# Debian's armmp kernel is not LPAE: highmem=off keeps the
		# virt machine's devices below 4 GiB.  -marm and -mthumb:
		# Debian's gcc defaults to Thumb-2, both are run.
		triplet=arm-linux-gnueabihf debarch=armhf kflavour=armmp qemu=qemu-system-arm
		machine="-M virt,highmem=off -cpu cortex-a15" gdbarch=arm tty=ttyAMA0
		archdir=arm ld_so=ld-linux-armhf.so.3 isas="${CROSS_ISAS:-thumb arm}"
		# CROSS_ISAS: a subset to iterate on one build.
		for _i in $isas; do
			case $_i in
			thumb|arm) ;;
			*) echo "check-cross: CROSS_ISAS: unknown instruction set '$_i' (thumb, arm)" >&2
			   exit 2 ;;
			esac
		done ;;
	*)
		echo "check-cross: no test bed for $1 (aarch64 or armhf)" >&2
		exit 2 ;;
	esac
}

# --- the kernel and the initramfs -------------------------------------------
# Debian's own kernel (linux-image-$kflavour) and busybox-static debs in
# a cache, and from them an initramfs: busybox, the modules for
# virtio-mmio networking and 9p, and an /init that mounts the host's run
# folder over 9p at /mnt and runs /mnt/guest.sh.  Rebuilt only when the
# debs change.  Sets boot (the folder holding vmlinuz and initrd.gz).
cross_initramfs() {
	debs="$cache/debs-$debarch"
	mkdir -p "$debs"
	# shellcheck source=tests/cross/fetch-debs.sh
	. "$srcdir/tests/cross/fetch-debs.sh"
	kpkg=$(apt-cache depends "linux-image-$kflavour:$debarch" 2>/dev/null |
		awk '/Depends: linux-image-/ { sub(":.*", "", $2); print $2; exit }') || kpkg=
	if [ -z "$kpkg" ]; then
		# No package lists: the newest kernel already cached.
		kpkg=$(cd "$debs" && ls linux-image-*-"$kflavour"_*.deb 2>/dev/null |
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
}

# cross_stage_gdbserver: Debian's gdbserver for $debarch and the
# libraries it links, in $run (gdbserver) and $run/lib, run in the guest
# through their own loader ($run/lib/$ld_so).  Sets gdbserver_version.
cross_stage_gdbserver() {
	debs="$cache/debs-$debarch"
	mkdir -p "$debs"
	# shellcheck source=tests/cross/fetch-debs.sh
	. "$srcdir/tests/cross/fetch-debs.sh"
	fetch_debs "$debs" "$debarch" gdbserver libc6 libstdc++6 libgcc-s1 ||
		fail99 "cannot fetch gdbserver:$debarch and its libraries"
	gsroot="$build/testbed/gdbserver-root"
	rm -rf "$gsroot"
	mkdir -p "$gsroot" "$run/lib"
	for p in gdbserver libc6 libstdc++6 libgcc-s1; do
		dpkg-deb -x "$(ls "$debs/${p}"_*.deb | head -n 1)" "$gsroot" ||
			fail99 "cannot unpack $p:$debarch"
	done
	for f in "$ld_so" libc.so.6 libm.so.6 libstdc++.so.6 libgcc_s.so.1; do
		src=$(find "$gsroot" -name "$f" | head -n 1)
		[ -n "$src" ] || fail99 "no $f in the $debarch debs"
		cp -L "$src" "$run/lib/$f"
	done
	cp "$gsroot/usr/bin/gdbserver" "$run/gdbserver"
	rm -rf "$gsroot"
	gdbserver_version=$(dpkg-deb -f "$(ls "$debs"/gdbserver_*.deb | head -n 1)" Version)
}

# --- boot -------------------------------------------------------------------------
# cross_boot: writes the guest's script, which runs one stub after the
# other, as $run/strategies lists them (a tracepoint strategy: the agent
# with it; `gdbserver`: Debian's gdbserver --multi), and starts qemu
# with the guest's port 1234 forwarded to a free port on 127.0.0.1.
cross_boot() {
	cat >"$run/guest.sh" <<'EOF'
# Runs in the guest, from /mnt (the host's run folder over 9p).
cd /mnt
echo "guest: $(uname -r) $(uname -m)"
# The record and debugging cases' own start-up (guest-extra.sh, written
# by section 1b).
[ -f /mnt/guest-extra.sh ] && . /mnt/guest-extra.sh
# One agent per tracepoint strategy, one after the other: the host ends
# each with `monitor exit`.  The debugging cases run under the first.
# The log says the pads' events and which return probes' histograms the
# trampoline counts (record_hist_leaf reads it).
for s in $(cat /mnt/strategies); do
	case $s in
	gdbserver)
		/mnt/lib/LD_SO --library-path /mnt/lib /mnt/gdbserver --multi 0.0.0.0:1234 \
			>/mnt/agent-$s.log 2>&1
		echo "guest: gdbserver exited with $?" ;;
	pad-far)
		# pad, every pad beyond B / B.W's reach (armhf: far pads)
		PROBE_AGENT_FAR_PADS=1 ./probe-agent --multi --tp-strategy=pad --debug=pad,tp \
			0.0.0.0:1234 >/mnt/agent-$s.log 2>&1
		echo "guest: probe-agent --tp-strategy=pad (far pads) exited with $?" ;;
	*)
		./probe-agent --multi --tp-strategy=$s --debug=pad,tp 0.0.0.0:1234 \
			>/mnt/agent-$s.log 2>&1
		echo "guest: probe-agent --tp-strategy=$s exited with $?" ;;
	esac
done
# The keeper's chaos case (keeper_chaos_run drives it from the host).
if [ -f /mnt/keeper/chaos.sh ]; then sh /mnt/keeper/chaos.sh; fi
EOF
	sed -i "s/LD_SO/$ld_so/" "$run/guest.sh"
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
	trap cleanup EXIT
}
cleanup() { kill "$qpid" 2>/dev/null || true; }

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

# --- TAP ----------------------------------------------------------------------------
# One line per case in automake's .trs form as well, for the closing
# count of ./bootstrap.sh check.
cross_tap_init() {
	trs="$build/testbed/cases.trs"
	: >"$trs"
	n=0
	failed=0
	passed=0
	todo=0
}
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
# todo_case WHAT WHY [DETAIL...]: a case of a feature the arch does not
# have yet, failing as it must until it does: TAP's TODO, automake's
# XFAIL, counted apart and named in the closing line, never as passed.
todo_case() {
	n=$((n + 1)); todo=$((todo + 1)); echo "not ok $n - $1 # TODO $2"
	echo ":test-result: XFAIL $1" >>"$trs"
	shift 2
	for line in "$@"; do echo "#   $line"; done
}
skip_case() {	# WHAT WHY
	n=$((n + 1)); echo "ok $n - $1 # SKIP $2"
	echo ":test-result: SKIP $1" >>"$trs"
}

# guest_exit: waits for the guest to power off, says how it ended and
# exits with the verdict (section 5; CROSS_QUICK=1 comes here early).
# With $cross_skip set (the agent is not built for this arch) and no
# case failed, the verdict is 77, a skip, with that reason.
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
	echo "check-cross: $passed passed, $failed failed$([ "$todo" -eq 0 ] || echo ", $todo not yet supported (TODO)")"
	[ "$failed" -eq 0 ] || exit 1
	if [ -n "${cross_skip:-}" ]; then
		echo "check-cross: SKIP: $cross_skip"
		exit 77
	fi
	exit 0
}

# --- gdb sessions -------------------------------------------------------------------
# cross_gdb_head [-s] TARGET [FILE]: the lines a session's command file
# starts with: gdb's settings and the arch, with -s the run folder as
# the sysroot, FILE for the program's symbols, and the connection to the
# guest's stub (TARGET: remote or extended-remote).
cross_gdb_head() {
	_sysroot=
	if [ "$1" = -s ]; then
		_sysroot=$run
		shift
	fi
	echo "set pagination off"
	echo "set confirm off"
	echo "set architecture $gdbarch"
	[ -z "$_sysroot" ] || echo "set sysroot $_sysroot"
	# The guest runs under emulation: a reply may take longer than
	# gdb's default 2 s when the host is busy.
	echo "set remotetimeout 30"
	[ -z "${2:-}" ] || echo "file $2"
	echo "target $1 127.0.0.1:$port"
}

# gdb_case_prog NAME PROG [TIMEOUT]: runs gdb-multiarch on $run/NAME.gdb
# (after a common prologue that connects and names the program PROG of
# the run folder) for at most TIMEOUT seconds (120); its transcript is
# $run/NAME.out, the program's ground lines $run/ground-NAME.txt.
gdb_case_prog() {
	name=$1
	prog=$2
	rm -f "$run/ground-$name.txt"
	{
		cross_gdb_head -s extended-remote "$run/$prog"
		echo "set remote exec-file /mnt/$prog"
		echo "set startup-with-shell off"
		echo "set environment ITEST_GROUND=/mnt/ground-$name.txt"
		cat
	} >"$run/$name.gdb"
	timeout "${3:-120}" gdb-multiarch -batch -nx -x "$run/$name.gdb" >"$run/$name.out" 2>&1 || true
	[ "${V:-0}" = 0 ] || sed "s/^/# $name: /" "$run/$name.out"
}

# gdb_case NAME: gdb_case_prog on basic (basic$sfx: the build for the
# instruction set of the cases being run).
gdb_case() {
	gdb_case_prog "$1" "basic${sfx:-}"
}

# trace_gdb NAME BL REG [CMD]: the tracepoints case's session NAME: from
# main, tracepoints collecting $regs at square's entry and at main's bl
# to it (address BL), tstart (then CMD), on to checkpoint (`monitor
# probes` there), and each tracepoint's frame read back: its pc and REG,
# the first argument register (7 at both), as "TP2 pc=... REG=..." and
# "TP3 ...".
trace_gdb() {
	_cmd=${4:-}
	gdb_case "$1" <<EOF
break main
run
trace *square
actions
collect \$regs
end
trace *$2
actions
collect \$regs
end
tstart${_cmd:+
$_cmd}
break checkpoint
continue
monitor probes
tstop
tstatus
tfind tracepoint 2
printf "TP2 pc=%#lx $3=%ld\n", \$pc, \$$3
tfind none
tfind tracepoint 3
printf "TP3 pc=%#lx $3=%ld\n", \$pc, \$$3
tfind none
delete
continue
EOF
}

# ran_untraced NAME: basic's session NAME ran the program to its end
# ("exited normally"), and the program computed as untraced (its
# printout's sq=49 and done).
ran_untraced() {
	grep -q "exited normally" "$run/$1.out" && grep -q "ground: sq=49" "$run/ground-$1.txt" &&
		grep -q "ground: done" "$run/ground-$1.txt"
}

# trace_checks NAME STRAT SQUARE BL REG [LABEL]: trace_gdb's session NAME
# under tracepoint strategy STRAT has one frame at square (SQUARE, as the
# program printed it) and one at the bl, each with REG = 7, and the
# program computed as untraced and ran to its end; LABEL ends each
# case's name.
trace_checks() {
	_out=$run/$1.out _s=$2 _sq=$3 _bl=$4 _reg=$5 _lbl=${6:-}
	if [ -n "$_sq" ] && grep -q "TP2 pc=$_sq $_reg=7\$" "$_out" &&
	   grep -q "TP3 pc=$_bl $_reg=7\$" "$_out" && grep -q "Collected 2 trace frames" "$_out"; then
		ok "tracepoints ($_s)$_lbl: square's entry and main's bl, one frame each, pc and $_reg = 7"
	else
		not_ok "tracepoints ($_s)$_lbl at square ($_sq) and bl ($_bl)" \
			"$(grep -E 'TP[23] |Collected|[Ee]rror|Target returned|not' "$_out" | head -n 8 | tr '\n' ' ')"
	fi
	if ran_untraced "$1"; then
		ok "traced program ($_s)$_lbl computes as untraced and runs to its end"
	else
		not_ok "traced program ($_s)$_lbl runs to its end" "$(tail -n 3 "$_out" | tr '\n' ' ')"
	fi
}

# insn_after ADDR: the address of the instruction after ADDR in the
# listing of basic$sfx ($run/basic$sfx.dis; Thumb-2 mixes 2 and 4 bytes).
insn_after() {
	awk -v a="$(printf '%x:' "$1")" '
		f && $1 ~ /^[0-9a-f]+:$/ { sub(":", "", $1); print "0x" $1; exit }
		$1 == a { f = 1 }' "$run/basic${sfx:-}.dis"
}

# fn_addr HEX: a function's address as the program printed it (a Thumb
# function's pointer has bit 0 set), as gdb shows its pc.
fn_addr() {
	[ -n "$1" ] || return 0
	printf '%#x' $(($1 & ~1))
}

# ground NAME KEY: the value of KEY=... in the program's printout.
ground() {
	sed -n "s/.* $2=\([^ ]*\).*/\1/p" "$run/ground-$1.txt" 2>/dev/null | head -n 1
}

# retbt_sections OUT REG: the stops of a return probes' backtrace case
# whose transcript is OUT (retprobe under gdb, with return probes at
# leaf, saver and rec), each printed by a marker line: "=== BT-LEAF
# REG=<the link register>" then `bt` and `finish` at a stop in leaf,
# "=== BT-SAVER" likewise in saver after it saved its return address,
# "=== BT-BASE" then `bt` in base under six rec frames, "=== BT-END".
# Sets bt_leaf, bt_saver and bt_base (each stop's lines), lreg (the
# link register gdb read in leaf) and caller (frame 1's pc there, in
# main, 0x-prefixed; empty when gdb showed no main).
# shellcheck disable=SC2034	# the arch's cases read them
retbt_sections() {
	bt_leaf=$(sed -n '/^=== BT-LEAF/,/^Value returned/p' "$1")
	bt_saver=$(sed -n '/^=== BT-SAVER/,/^Value returned/p' "$1")
	bt_base=$(sed -n '/^=== BT-BASE/,/^=== BT-END/p' "$1")
	lreg=$(printf '%s\n' "$bt_leaf" | sed -n "s/^=== BT-LEAF $2=\(0x[0-9a-f]*\)\$/\1/p")
	caller=$(printf '%s\n' "$bt_leaf" | sed -n 's/^#1 *0x0*\([0-9a-f]*\) in main .*/0x\1/p' | head -n 1)
}

# retbt_checks OUT GROUND WHAT SAVE: after retbt_sections (and the
# arch's own check of leaf's link register), what every arch's return
# probes must show there, from the transcript OUT and the program's
# printout GROUND: in saver, after SAVE (the instruction that spilled the
# return address: push, stp), frames saver and main; under base, rec six
# times then main; no ?? frame in either; `finish` out of leaf and saver
# returns the values the program printed for x=0 (none when it died
# before its end: a failure).  WHAT opens each case's name.
retbt_checks() {
	if printf '%s\n' "$bt_saver" | grep -Eq '^#0 .*saver' &&
	   printf '%s\n' "$bt_saver" | grep -Eq '^#1 .* in main ' &&
	   ! printf '%s\n' "$bt_saver" | grep -q '?? ()'; then
		ok "$3: stopped in saver() after its $4, backtrace shows main"
	else
		not_ok "$3: backtrace in saver()" "$(printf '%s\n' "$bt_saver" | head -n 4 | tr '\n' ' ')"
	fi
	_nrec=$(printf '%s\n' "$bt_base" | grep -Ec '^#[1-6] .* in rec ') || true
	if [ "$_nrec" = 6 ] && printf '%s\n' "$bt_base" | grep -Eq '^#7 .* in main ' &&
	   ! printf '%s\n' "$bt_base" | grep -q '?? ()'; then
		ok "$3: backtrace under six probed rec() frames: rec x6, main"
	else
		not_ok "$3: backtrace in base()" "$(printf '%s\n' "$bt_base" | head -n 9 | tr '\n' ' ')"
	fi
	_leaf0=$(sed -n 's/^ground: leaf x=0 value=//p' "$2" 2>/dev/null) || true
	_saver0=$(sed -n 's/^ground: saver x=0 inner=[^ ]* value=//p' "$2" 2>/dev/null) || true
	if [ -n "$_leaf0" ] && [ -n "$_saver0" ] &&
	   [ "$(grep -c '^Value returned is ' "$1")" = 2 ] &&
	   grep -q "^Value returned is \$[0-9]* = $_leaf0\$" "$1" &&
	   grep -q "^Value returned is \$[0-9]* = $_saver0\$" "$1"; then
		ok "$3: finish from leaf() and saver() returns $_leaf0 and $_saver0"
	else
		not_ok "$3: finish (want '$_leaf0', '$_saver0')" "$(grep -E '^Value returned|Run till' "$1" | tr '\n' ' ')"
	fi
}

# hw_watch_checks OUT COUNTER [LABEL]: the write watchpoint on `counter`
# (the program printed COUNTER) and the read watchpoint on `set_me` of the
# hardware points case whose transcript is OUT stopped where they must,
# and the program then ran to its end; LABEL ends each case's name.
hw_watch_checks() {
	_out=$1 _counter=$2 _lbl=${3:-}
	if [ -n "$_counter" ] && grep -q "WATCH counter=$_counter\$" "$_out" &&
	   grep -q "New value = $_counter" "$_out"; then
		ok "watch counter$_lbl: stops when level3 writes $_counter"
	else
		not_ok "watch counter$_lbl (the program says $_counter)" \
			"$(grep -E 'WATCH|New value|[Ee]rror|Could not' "$_out" | head -n 4 | tr '\n' ' ')"
	fi
	# "Value = " is printed when the watchpoint stops the program, not
	# when it is set.
	if grep -q "RWATCH set_me=7\$" "$_out" && grep -q "^Value = 7" "$_out"; then
		ok "rwatch set_me$_lbl: stops when the program reads it"
	else
		not_ok "rwatch set_me$_lbl" "$(grep -E 'RWATCH|atchpoint|[Ee]rror|Could not' "$_out" | head -n 4 | tr '\n' ' ')"
	fi
	if grep -q "exited normally" "$_out"; then
		ok "the program runs to its end after the hardware points$_lbl"
	else
		not_ok "the program runs to its end after the hardware points$_lbl" "$(tail -n 3 "$_out" | tr '\n' ' ')"
	fi
}

# pad_settle_case STRAT [mem]: leaving pads.  8 threads of recstress$sfx
# call hit() 1000 times each under a tracepoint collecting $regs there,
# and a breakpoint at the same address whose condition the agent
# evaluates (thread 3's 500th call) stops them all while the others run
# in their pads (with gdb's breakpoint there, every hit goes through the
# pad's hand-off and its trap).  The agent steps each one out of its
# pad, or back to the probe where the step would not make progress (an
# exclusive claim): no thread may show a pc in a pad (gdb prints such a
# frame as `?? ()`); afterwards every call is one frame (none lost, none
# twice) and the output is the untraced run's.  $settle_pad: the
# `monitor probes` words of hit's pad (its length is the arch's).  With
# `mem` the tracepoint collects a global too, so its pads call the
# in-process collector, and the breakpoint is at hit's second
# instruction (hit+$settle_next), its condition on the first two
# argument registers ($settle_regs), which hit's first instruction
# leaves be: the other threads are in their pads or in the collector,
# whose exclusive loops (atomic counters) the agent does by hand (arch
# callee_step) where a step would loop for ever.
pad_settle_case() {
	strat=$1
	name=settle-$strat$sfx
	collect='$regs' at=hit cond='t == 3 && i == 500' args='t, i' slbl=
	want_pad=$settle_pad
	if [ "${2:-}" = mem ]; then
		# shellcheck disable=SC2086
		set -- $settle_regs
		name=settle-mem-$strat$sfx
		collect='$regs, per_thread' at="*hit+$settle_next" slbl=', collector'
		cond="\$$1 == 3 && \$$2 == 500" args="\$$1, \$$2"
		want_pad="$want_pad.*with its collector"
	fi
	rm -f "$run/$name.res"
	gdb_case_prog "$name" "recstress$sfx" 300 <<EOF
set breakpoint condition-evaluation target
break main
run calls 8 1000 /mnt/$name.res
set trace-buffer-size 16000000
trace hit
actions
collect $collect
end
tstart
break $at if $cond
continue
printf "SETTLE t=%ld i=%ld\\n", $args
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
	out="$run/$name.out"
	threads=$(sed -n '/^  Id  *Target Id/,/^process /p' "$out" | grep -c 'Thread [0-9]*\.[0-9]*') || true
	unknown=$(sed -n '/^  Id  *Target Id/,/^process /p' "$out" | grep -c '?? ()') || true
	frames=$(sed -n 's/^Collected \([0-9]*\) trace frames.*/\1/p' "$out" | tail -n 1)
	if grep -q "^SETTLE t=3 i=500\$" "$out" && [ "$threads" -ge 2 ] && [ "$unknown" = 0 ] &&
	   grep -q "$want_pad" "$out"; then
		ok "pads ($strat$slbl)$lbl: all threads stopped at thread 3's 500th hit, $threads threads, none shown in a pad"
	else
		not_ok "pads ($strat$slbl)$lbl: threads stopped while in pads" \
			"$(grep -E 'SETTLE|\?\? \(\)|^process|[Ee]rror|signal' "$out" | head -n 8 | tr '\n' ' ')"
	fi
	if [ "$frames" = 8000 ] && cmp -s "$run/stress-untraced$sfx-1000.out" "$run/$name.res" &&
	   grep -q "exited normally" "$out"; then
		ok "pads ($strat$slbl)$lbl: 8 x 1000 calls = $frames frames, output as untraced, the program ends"
	else
		not_ok "pads ($strat$slbl)$lbl: every call one frame, output as untraced" \
			"frames ${frames:-none}, $(cmp "$run/stress-untraced$sfx-1000.out" "$run/$name.res" 2>&1)" \
			"$(grep -E 'Trace|exited|signal|[Ee]rror' "$out" | head -n 4 | tr '\n' ' ')"
	fi
}

# --- the keeper's chaos case ------------------------------------------------------
# The agent is SIGKILLed at random moments while keeptarget's 8 threads
# hit tracepoints at leaf's, bump's and work's entries and at work's `bl
# leaf`, with return probes on work and leaf (but with while-stepping):
# started by the agent, attached to, and started with a while-stepping
# action on work's entry.  The keeper must leave the program running on
# to its untraced result and exit status 7, its text the file's.
# keepguest (tests/cross/keepguest.c) runs each kill in the guest, in
# one folder per build of keeptarget ($run/keeper, or $run/keeper/ISA
# for each of $isas); on the host, gdb-multiarch sets the tracepoints
# (keeper_chaos_run).  KEEPER_SEED (default 1) chooses the delays;
# KEEPER_NO_KEEPER=1 runs the agents with PROBE_AGENT_NO_KEEPER=1, which
# must fail.  To chase a rare failure: KEEPER_MODES (default "started
# attached while-stepping") keeps some of the modes, and KEEPER_DEBUG=
# DOMAINS runs every agent with --debug=DOMAINS (its log is KDIR/agentN).

# keeper_dirs: one line per build of keeptarget, "FOLDER LABEL": LABEL
# "-" for the one build, or "[ISA]".
keeper_dirs() {
	if [ -z "$isas" ]; then
		echo "$run/keeper -"
	else
		for _isa in $isas; do echo "$run/keeper/$_isa [$_isa]"; done
	fi
}

# keeper_chaos_prepare KILLS STRATEGIES [MODE_EVERY]: keepguest, each
# build of keeptarget with its probes (KDIR/probes) and its plan
# (KDIR/plan: the executable segment, then one line per kill: n, mode,
# strategy, delay in microseconds), and the guest's script
# ($run/keeper/chaos.sh, which guest.sh runs after the last agent).
# KILLS kills per build (empty: 3 per strategy, each mode with each
# strategy once); kill n's strategy is the nth of STRATEGIES, in turn
# (pad-far: pad with PROBE_AGENT_FAR_PADS=1); the mode changes every
# MODE_EVERY kills (default: the number of strategies).
keeper_chaos_prepare() {
	mkdir -p "$run/keeper"
	"$triplet-gcc" -O2 -static -o "$run/keeper/keepguest" "$srcdir/tests/cross/keepguest.c" ||
		fail99 "cannot cross-compile keepguest.c"
	{
		echo "# The keeper's chaos case, in the guest (check-cross.sh writes it)."
		[ -z "${KEEPER_NO_KEEPER:-}" ] || echo "export PROBE_AGENT_NO_KEEPER=1"
		[ -z "${KEEPER_DEBUG:-}" ] || echo "export KEEPGUEST_DEBUG=$KEEPER_DEBUG"
	} >"$run/keeper/chaos.sh"
	_salt=0
	for kdir in $(keeper_dirs | cut -d' ' -f1); do
		klbl=$(keeper_dirs | sed -n "s|^$kdir ||p")
		_m=
		[ "$klbl" = - ] || _m=-m${kdir##*/}
		mkdir -p "$kdir"
		"$triplet-gcc" ${_m:+"$_m"} -O1 -static -pthread -o "$kdir/keeptarget" \
			"$srcdir/tests/keeper/keeptarget.c" ||
			fail99 "cannot cross-compile keeptarget.c ${_m:+with $_m}"
		# leaf's, bump's and work's entries, and work's `bl leaf`
		# (objdump's addresses: without the Thumb bit, as gdb takes
		# them).
		probes=$("$triplet-objdump" -d "$kdir/keeptarget" | awk '
			/<(leaf|bump)>:/ { print "0x" $1 }
			/<work>:/ { print "0x" $1; w = 1; next }
			w && /\tbl\t.*<leaf>/ { sub(":", "", $1); print "0x" $1; w = 0 }' |
			sed 's/^0x0*/0x/' | tr '\n' ' ')
		# shellcheck disable=SC2086
		[ "$(echo $probes | wc -w)" = 4 ] ||
			fail99 "keeptarget ${_m}: leaf, bump, work and its bl not found ($probes)"
		echo "$probes" >"$kdir/probes"
		python3 - "$kdir/keeptarget" "$1" "${KEEPER_SEED:-1}" "$_salt" "$2" "${3:-}" \
			"${KEEPER_MODES:-started attached while-stepping}" \
			>"$kdir/plan" <<'PY' || fail99 "cannot plan the keeper's chaos case ${_m}"
import random, struct, sys
data = open(sys.argv[1], "rb").read()
if data[4] == 2:	# ELFCLASS64
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    fmt, fields = "<IIQQQQQQ", (0, 1, 2, 3, 5)
else:
    phoff, = struct.unpack_from("<I", data, 0x1c)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x2a)
    fmt, fields = "<IIIIIIII", (0, 6, 1, 2, 4)
for i in range(phnum):
    p = struct.unpack_from(fmt, data, phoff + i * phentsize)
    p_type, p_flags, p_offset, p_vaddr, p_filesz = (p[k] for k in fields)
    if p_type == 1 and p_flags & 1:
        print("text %#x %#x %d" % (p_vaddr, p_offset, p_filesz))
        break
seed, salt = int(sys.argv[3]), int(sys.argv[4])
strategies = sys.argv[5].split()
for s in strategies:
    if s not in ("step", "boost", "emulate", "pad", "auto", "pad-far"):
        sys.exit("KEEPER_STRATEGIES: '%s' is not one of step boost emulate pad auto pad-far" % s)
if not strategies:
    sys.exit("KEEPER_STRATEGIES: no strategy")
if sys.argv[2] and not sys.argv[2].isdigit():
    sys.exit("KEEPER_KILLS: '%s' is not a number" % sys.argv[2])
kills = int(sys.argv[2]) if sys.argv[2] else 3 * len(strategies)
every = int(sys.argv[6]) if sys.argv[6] else len(strategies)
for n in range(kills):
    strategy = strategies[n % len(strategies)]
    modes = sys.argv[7].split()
    if not modes or set(modes) - {"started", "attached", "while-stepping"}:
        sys.exit("KEEPER_MODES: '%s' is not a list of started attached while-stepping"
                 % sys.argv[7])
    mode = modes[n // every % len(modes)]
    delay = random.Random(seed * 100003 + salt + n).randint(0, 250000)
    print("kill %d %s %s %d" % (n, mode, strategy, delay))
PY
		# The next build's delays are not this one's.
		_salt=$((_salt + 7919))
		cat >>"$run/keeper/chaos.sh" <<EOF
cd /mnt/${kdir#"$run"/}
set -- \$(sed -n 's/^text //p' plan)
taddr=\$1 toff=\$2 tlen=\$3
/mnt/keeper/keepguest . -1 plain - 0 \$taddr \$toff \$tlen /mnt/probe-agent ./keeptarget 4000 ||
	echo "guest: keepguest plain ${_m} failed"
sed -n 's/^kill //p' plan | while read n mode strategy delay; do
	far=
	[ "\$strategy" != pad-far ] || far=1 strategy=pad
	PROBE_AGENT_FAR_PADS=\$far /mnt/keeper/keepguest . \$n \$mode --tp-strategy=\$strategy \$delay \\
		\$taddr \$toff \$tlen /mnt/probe-agent ./keeptarget 4000
done
echo "guest: keeper chaos ${_m} done"
EOF
	done
}

# keeper_trace_cmds MODE LEAF BUMP WORK BL: gdb's commands for the
# keeper's probes (KDIR/probes): a tracepoint at each, collecting the
# registers; with MODE while-stepping, work's entry steps 4
# instructions after each hit; in the other modes return probes on work
# (a non-leaf: it saves its return address in its frame) and leaf
# (which keeps it in its register).
keeper_trace_cmds() {
	_mode=$1
	shift
	for _a in "$@"; do
		printf 'trace *%s\nactions\ncollect $regs\n' "$_a"
		if [ "$_mode" = while-stepping ] && [ "$_a" = "$3" ]; then
			printf 'while-stepping 4\ncollect $pc\nend\n'
		fi
		printf 'end\n'
	done
	if [ "$_mode" != while-stepping ]; then
		printf 'trace *%s\nactions\ncollect $regs\nend\n' "$3" "$1"
		echo "monitor return-probe 5"
		echo "monitor return-probe 6"
	fi
}

# keeper_either A B: file A or file B exists.
keeper_either() {
	[ -f "$1" ] || [ -f "$2" ]
}

# keeper_log_sum SED FILE...: the sum of the numbers the sed command
# SED prints from the keeper's lines of the agents' logs FILE...
keeper_log_sum() {
	_sed=$1
	shift
	cat "$@" 2>/dev/null | sed -n "$_sed" | awk '{ s += $1 } END { print s + 0 }'
}

# keeper_chaos_run: per build and kill (keeper_chaos_prepare planned
# them): wait for keepguest's readyN, connect gdb-multiarch (with the
# build's file when there are several builds), set the tracepoints
# (keeper_trace_cmds) and start them; keepguest kills the agent and
# writes doneN, the case's verdict.  Then what the keepers did: sites
# restored, threads given a fix-up record, single steps disarmed by
# re-attaching (doc/keeper.md).
keeper_chaos_run() {
	kstart=$(date +%s)
	nkills=0 sites=0 moved=0 disarmed=0
	for kdir in $(keeper_dirs | cut -d' ' -f1); do
		klbl=$(keeper_dirs | sed -n "s|^$kdir ||p")
		kfile=$kdir/keeptarget
		if [ "$klbl" = - ]; then
			klbl='' kfile=''
		else
			klbl="$klbl "
		fi
		# shellcheck disable=SC2046
		set -- $(cat "$kdir/probes")
		sed -n 's/^kill //p' "$kdir/plan" >"$kdir/kills"
		while read -r kn kmode kstrat kdelay; do
			nkills=$((nkills + 1))
			what="keeper chaos $klbl$((kn + 1)): $kmode $kstrat"
			if ! tlib_wait_alive "$qpid" 120 keeper_either "$kdir/ready$kn" "$kdir/done$kn"; then
				not_ok "$what: the guest never got ready"
				return
			fi
			{
				cross_gdb_head remote ${kfile:+"$kfile"}
				keeper_trace_cmds "$kmode" "$@"
				echo "tstart"
				echo "continue"
			} >"$kdir/gdb$kn.cmd"
			timeout 150 gdb-multiarch -batch -nx -x "$kdir/gdb$kn.cmd" \
				>"$kdir/gdb$kn.out" 2>&1 </dev/null &
			gpid=$!
			tlib_wait_alive "$qpid" 180 test -f "$kdir/done$kn" || true
			kill "$gpid" 2>/dev/null || true
			wait "$gpid" 2>/dev/null || true
			res=$(cat "$kdir/done$kn" 2>/dev/null) || res="not ok: no result from the guest"
			what="$what, SIGKILL after $((kdelay / 1000)) ms"
			case $res in
			ok*) ok "$what${res#ok}" ;;
			*) not_ok "$what" "${res#not ok: }" \
				"$(grep -v -e '^Tracepoint [0-9]* at' -e '^$' "$kdir/gdb$kn.out" | tail -n 3 | tr '\n' ' ')" \
				"$(grep -v '^$' "$kdir/agent$kn" 2>/dev/null | tail -n 3 | tr '\n' ' ')" ;;
			esac
		done <"$kdir/kills"
		sites=$((sites + $(keeper_log_sum 's/^keeper: process [0-9]*: \([0-9]*\) sites restored.*/\1/p' \
			"$kdir"/agent[0-9]*)))
		moved=$((moved + $(keeper_log_sum 's/^keeper: process [0-9]*: .*, \([0-9]*\) threads moved$/\1/p' \
			"$kdir"/agent[0-9]*)))
		disarmed=$((disarmed + $(keeper_log_sum 's/^keeper: process [0-9]*: \([0-9]*\) single steps disarmed.*/\1/p' \
			"$kdir"/agent[0-9]*)))
	done
	echo "# keeper chaos: $nkills kills in $(($(date +%s) - kstart)) s (seed ${KEEPER_SEED:-1}): $sites sites restored, $moved threads moved, $disarmed single steps disarmed"
}

# cross_record_setup SHORT FULL: the sysroot probe-trace (the record
# cases) reads the programs from, where the guest's /mnt is the run
# folder, and the stress counts: CROSS_STRESS_THREADS threads x
# CROSS_STRESS_CALLS calls under the strategies in CROSS_STRESS_FULL
# (default FULL) and x CROSS_STRESS_SHORT_CALLS (default SHORT) under the
# others of CROSS_STRESS_STRATEGIES.
cross_record_setup() {
	sysroot="$build/testbed/sysroot"
	rm -rf "$sysroot"
	mkdir -p "$sysroot"
	ln -s "$run" "$sysroot/mnt"
	probe_trace="$srcdir/client/probe-trace"
	stress_threads=${CROSS_STRESS_THREADS:-8}
	stress_calls=${CROSS_STRESS_CALLS:-100000}
	stress_short=${CROSS_STRESS_SHORT_CALLS:-$1}
	stress_full=${CROSS_STRESS_FULL-$2}
	stress_strategies=${CROSS_STRESS_STRATEGIES-step boost emulate pad auto}
}

# cross_guest_extra: what the guest does for the cases before the stubs
# start (the arch's build file writes it to $run/guest-extra.sh, after
# its own lines): when the agent's cases run, the untraced stress runs
# of each build of recstress (the output every traced one must equal,
# for each count cross_record_setup chose and the settle case's 1000),
# and a watcher that starts an attach case's program (attach.go names
# it), under no stub, each time the host asks for one.
cross_guest_extra() {
	if [ "$with_agent" = 1 ] && [ "$quick" = 0 ]; then
		for _b in ${isas:--}; do
			_s=-$_b
			[ "$_b" != - ] || _s=
			cat <<EOF
for c in $stress_calls $stress_short 1000; do
	t0=\$(date +%s)
	./recstress$_s calls $stress_threads \$c /mnt/stress-untraced$_s-\$c.out
	echo "guest: untraced recstress$_s $stress_threads x \$c: status \$?, \$((\$(date +%s) - t0)) s"
done
EOF
		done
	fi
	cat <<'EOF'
(
	while :; do
		while [ ! -f /mnt/attach.go ]; do sleep 0.2; done
		prog=$(cat /mnt/attach.go)
		rm -f /mnt/attach.go
		sh -c 'echo $$ >/mnt/attach.pid.tmp; exec ./'"$prog"' loop /mnt/attach.ground' &
		while [ ! -s /mnt/attach.pid.tmp ]; do sleep 0.1; done
		mv /mnt/attach.pid.tmp /mnt/attach.pid
		wait $!
		echo $? >/mnt/attach.status
	done
) &
EOF
}

# cross_sdt_include: the host's <sys/sdt.h> (plain preprocessor and asm,
# so it serves the cross compiler too) copied to the private include
# folder $build/testbed/sdtinc (the whole host /usr/include would shadow
# the target's); false when the host has none (systemtap-sdt-dev).
cross_sdt_include() {
	sdt_h=
	for d in /usr/include /usr/include/*-linux-gnu; do
		[ -f "$d/sys/sdt.h" ] && { sdt_h=$d/sys; break; }
	done
	[ -n "$sdt_h" ] || return 1
	mkdir -p "$build/testbed/sdtinc/sys"
	cp "$sdt_h"/sdt*.h "$build/testbed/sdtinc/sys/"
}
