#!/bin/bash
# tp-bench-aarch64.sh - ns per tracepoint hit ("collect $regs") on aarch64,
# in the qemu-system guest of `make check-cross`: probe-agent with the
# emulate (simulate), boost, step and pad strategies (the pad records
# each hit in the process, no stop), and Debian's arm64 gdbserver, on one
# target, same N, in one boot.
#
#   bench/tp-bench-aarch64.sh [N]      (default N=2000)
#
# Environment: RUNS (3), PROBE_CROSS_CACHE (~/.cache/probe-agent-cross),
# BENCH_TIMEOUT (seconds for the whole boot, default 1800), KEEP=1 keeps
# the run folder with every log.
#
# Under TCG (no KVM for arm64 on an x86-64 host) every guest instruction
# is translated: absolute times are far from a board's; only the ratios
# between configurations of the same run mean something.  See
# bench/README.md.
#
# Needs what `make check-cross` needs, and its kernel and initramfs
# (run `make check-cross` once first); gdbserver and the libraries it
# links (gdbserver, libc6, libstdc++6, libgcc-s1 for arm64) are fetched
# with `apt-get download` into the same cache and run from the 9p folder
# through their own dynamic loader.
#
# Exit status: 0 whatever the numbers, 99 on a framework error (a tool
# missing, a run that did not record exactly N frames, no timing).
set -u
LC_ALL=C
export LC_ALL

N=${1:-2000}
RUNS=${RUNS:-3}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
cache=${PROBE_CROSS_CACHE:-${HOME:-/root}/.cache/probe-agent-cross}
triplet=aarch64-linux-gnu
debarch=arm64
boot=$cache/boot-$debarch
STRATEGIES="emulate boost step pad"

die() {
	printf "\ntp-bench-aarch64: FRAMEWORK ERROR: %s\n" "$*" >&2
	[ -n "${run:-}" ] && [ -d "$run" ] && echo "tp-bench-aarch64: logs kept in $run" >&2
	exit 99
}

case $N in ''|*[!0-9]*|0) die "N must be a positive integer, not '$N'" ;; esac
case $RUNS in ''|*[!0-9]*|0) die "RUNS must be a positive integer" ;; esac
for tool in qemu-system-aarch64 "$triplet-gcc" gdb-multiarch dpkg-deb python3 timeout; do
	command -v "$tool" >/dev/null 2>&1 || die "$tool not found (./bootstrap.sh cross aarch64)"
done
[ -f "$boot/vmlinuz" ] && [ -f "$boot/initrd.gz" ] ||
	die "no kernel and initramfs in $boot: run 'make check-cross' once first"

# --- The agent, the target, gdbserver -------------------------------------
agent=$("$top/tests/cross/build-agent.sh" aarch64 | tail -n 1) || die "the cross build of the agent failed"
run=$(mktemp -d "${TMPDIR:-/tmp}/tp-bench-aarch64.XXXXXX") || die "mktemp"
cleanup() {
	[ -n "${qpid:-}" ] && kill "$qpid" 2>/dev/null
	if [ "${KEEP:-0}" = 1 ] || [ "${failed:-1}" = 1 ]; then return; fi
	rm -rf "$run"
}
failed=1
trap cleanup EXIT
cp "$agent" "$run/probe-agent"
"$triplet-gcc" -g -O2 -static -o "$run/tp-target" "$here/tp-target.c" ||
	die "cannot cross-compile tp-target.c"

debs=$cache/debs-$debarch
mkdir -p "$debs"
# shellcheck source=tests/cross/fetch-debs.sh
. "$top/tests/cross/fetch-debs.sh"
fetch_debs "$debs" "$debarch" gdbserver libc6 libstdc++6 libgcc-s1 ||
	die "cannot fetch gdbserver:$debarch and its libraries"
root=$run/gdbserver-root
mkdir -p "$root"
for p in gdbserver libc6 libstdc++6 libgcc-s1; do
	dpkg-deb -x "$(ls "$debs/${p}"_*.deb | head -n 1)" "$root" || die "cannot unpack $p"
done
mkdir -p "$run/lib"
for f in ld-linux-aarch64.so.1 libc.so.6 libm.so.6 libstdc++.so.6 libgcc_s.so.1; do
	src=$(find "$root" -name "$f" | head -n 1)
	[ -n "$src" ] || die "no $f in the arm64 debs"
	cp -L "$src" "$run/lib/$f"
done
cp "$root/usr/bin/gdbserver" "$run/gdbserver"
rm -rf "$root"
gdbserver_version=$(dpkg-deb -f "$(ls "$debs"/gdbserver_*.deb | head -n 1)" Version)

# --- The guest's script: every run of every configuration, in order -------
# Round robin: run r of every configuration before run r+1 of any.  Each
# stub serves one connection (--once) and exits when gdb kills the
# program; the host starts gdb when the stub's log says it listens.
CONFIGS="untraced"
for s in $STRATEGIES; do CONFIGS="$CONFIGS agent-$s"; done
CONFIGS="$CONFIGS gdbserver"
cat >"$run/guest.sh" <<EOF
cd /mnt
echo "guest: \$(uname -r) \$(uname -m)"
for r in \$(seq 1 $RUNS); do
	for cfg in $CONFIGS; do
		case \$cfg in
		untraced) ./tp-target $N /mnt/res-untraced-\$r ;;
		agent-*) ./probe-agent --once --no-startup-with-shell --tp-strategy=\${cfg#agent-} \\
			0.0.0.0:1234 /mnt/tp-target $N /mnt/res-\$cfg-\$r >/mnt/log-\$cfg-\$r 2>&1 ;;
		gdbserver) /mnt/lib/ld-linux-aarch64.so.1 --library-path /mnt/lib /mnt/gdbserver \\
			--once --no-startup-with-shell 0.0.0.0:1234 /mnt/tp-target $N /mnt/res-\$cfg-\$r \\
			>/mnt/log-\$cfg-\$r 2>&1 ;;
		esac
	done
done
EOF

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
console=$run/console.log
timeout "${BENCH_TIMEOUT:-1800}" qemu-system-aarch64 -M virt -cpu cortex-a57 -smp 1 -m 512 \
	-nodefaults -display none -no-reboot -monitor none -serial "file:$console" \
	-kernel "$boot/vmlinuz" -initrd "$boot/initrd.gz" \
	-append "console=ttyAMA0 panic=-1 quiet" \
	-netdev "user,id=n0,hostfwd=tcp:127.0.0.1:$port-:1234" \
	-device virtio-net-device,netdev=n0 \
	-fsdev "local,id=fs0,path=$run,security_model=none" \
	-device virtio-9p-device,fsdev=fs0,mount_tag=share &
qpid=$!

# --- The host's side: one gdb session per traced run ------------------------
gdb_script() {	# $1 = trace buffer size, $2 = file, $3 = extra command
	cat >"$2" <<EOF
set pagination off
set confirm off
set architecture aarch64
set sysroot $run
file $run/tp-target
target remote 127.0.0.1:$port
break main
continue
trace hot
actions
collect \$regs
end
set trace-buffer-size $1
break bench_done
tstart
${3:-}
continue
tstatus
kill
EOF
}
# Buffer: N frames plus slack (a $regs frame is about 800 bytes in the
# agent, about 2400 in gdbserver), so no run stops early.
gdb_script $((N * 1024 + 1048576)) "$run/agent.gdb" "monitor probes"
gdb_script $((N * 2600 + 1048576)) "$run/gdbserver.gdb"

wait_listen() {	# log file
	local waited=0
	until grep -q "Listening on port" "$1" 2>/dev/null; do
		kill -0 "$qpid" 2>/dev/null || { cat "$console" >&2; die "the guest stopped before $1 listened"; }
		waited=$((waited + 1))
		[ "$waited" -lt 3000 ] || die "nothing listened for $1 after 300 s"
		sleep 0.1
	done
}

ns_of() {	# result file -> ns per hit
	sed -n 's/^elapsed_ns=\([0-9]*\) n=.*/\1/p' "$1" 2>/dev/null |
		awk -v n="$N" '{ printf "%.1f\n", $1 / n }'
}

start=$(date +%s)
for r in $(seq 1 "$RUNS"); do
	printf 'run %d/%d:' "$r" "$RUNS" >&2
	for cfg in $CONFIGS; do
		printf ' %s' "$cfg" >&2
		if [ "$cfg" != untraced ]; then
			wait_listen "$run/log-$cfg-$r"
			script=$run/agent.gdb
			[ "$cfg" = gdbserver ] && script=$run/gdbserver.gdb
			timeout 900 gdb-multiarch -nx -batch -x "$script" >"$run/gdb-$cfg-$r.out" 2>&1
			log=$run/gdb-$cfg-$r.out
			grep -q "^Breakpoint [0-9]*, .*bench_done" "$log" ||
				die "$cfg run $r: the target never reached bench_done (see $log)"
			! grep -q "^Trace stopped" "$log" || die "$cfg run $r: $(grep '^Trace stopped' "$log")"
			frames=$(sed -n 's/^Collected \([0-9]*\) trace frames.*/\1/p' "$log")
			created=$(sed -n 's/^Buffer contains [0-9]* trace frames (of \([0-9]*\) created total).*/\1/p' "$log")
			[ -n "$created" ] || created=$frames
			[ "$created" = "$N" ] || die "$cfg run $r: ${created:-no} trace frames, expected $N (see $log)"
			if [ "$r" = 1 ] && [ "$cfg" != gdbserver ]; then
				used=$(sed -n 's/^process [0-9]* 0x[0-9a-f]* \([a-z]*\) (.*/\1/p' "$log" | head -n 1)
				eval "used_${cfg#agent-}=\${used:-?}"
			fi
		fi
		# The result file appears when the target has printed it.
		waited=0
		until [ -s "$run/res-$cfg-$r" ]; do
			waited=$((waited + 1))
			[ "$waited" -lt 3000 ] || die "$cfg run $r: no elapsed_ns"
			sleep 0.1
		done
		ns=$(ns_of "$run/res-$cfg-$r")
		[ -n "$ns" ] || die "$cfg run $r: no elapsed_ns in res-$cfg-$r"
		echo "$ns" >>"$run/$cfg.ns"
	done
	echo >&2
done
secs=$(($(date +%s) - start))
waited=0
while kill -0 "$qpid" 2>/dev/null && [ "$waited" -lt 600 ]; do sleep 0.1; waited=$((waited + 1)); done
grep -q "GUEST_EXIT rc=0" "$console" || die "the guest did not end cleanly: $(tail -n 3 "$console")"

# --- Report --------------------------------------------------------------------
stats() {
	sort -n "$1" | awk '{ v[NR] = $1 } END {
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		s = ""; for (i = 1; i <= NR; i++) s = s " " v[i]
		printf "%s %s %s%s\n", m, v[1], v[NR], s }'
}
median() { stats "$1" | awk '{ print $1 }'; }
base=$(median "$run/untraced.ns")
label() {
	case $1 in
	untraced) echo "untraced loop" ;;
	agent-emulate) echo "probe-agent simulate" ;;
	agent-*) echo "probe-agent ${1#agent-}" ;;
	gdbserver) echo "gdbserver $gdbserver_version" ;;
	esac
}
insn=$("$triplet-objdump" -d "$run/tp-target" | awk '/<hot>:/ { getline; sub(/^[^\t]*\t[^\t]*\t/, ""); print; exit }')
echo "tp-bench-aarch64: N=$N hits per run, $RUNS runs per configuration, qemu-system-aarch64 -cpu cortex-a57 -smp 1 (TCG)"
echo "  tracepoint at hot: $insn; --tp-strategy=emulate -> ${used_emulate:-?}, boost -> ${used_boost:-?}, step -> ${used_step:-?}, pad -> ${used_pad:-?}"
echo "  gdbserver: Debian's gdbserver:arm64 $gdbserver_version (trap tracepoints)"
echo "  guest kernel: $(sed -n 's/^guest: //p' "$console" | head -n 1)"
echo
echo "ns per hit: raw = elapsed/N; net = raw - untraced median ($base)"
printf '%-26s %10s %10s %10s %10s   %s\n' configuration "raw med" "raw min" "raw max" "net med" "all runs, raw, sorted"
for cfg in $CONFIGS; do
	set -- $(stats "$run/$cfg.ns")
	med=$1 min=$2 max=$3
	shift 3
	net=-
	[ "$cfg" = untraced ] || net=$(awk -v a="$med" -v b="$base" 'BEGIN { printf "%.1f", a - b }')
	printf '%-26s %10s %10s %10s %10s   %s\n' "$(label "$cfg")" "$med" "$min" "$max" "$net" "$*"
done
echo
net() { awk -v a="$(median "$run/$1.ns")" -v b="$base" 'BEGIN { printf "%.3f", a - b }'; }
gs=$(net gdbserver)
st=$(net agent-step)
si=$(net agent-emulate)
echo "Ratios of net medians:"
printf '%-26s %16s %16s %16s\n' configuration "gdbserver/agent" "step/agent" "simulate/agent"
for s in $STRATEGIES; do
	awk -v a="$(net "agent-$s")" -v g="$gs" -v st="$st" -v si="$si" -v name="$(label "agent-$s")" \
		'BEGIN { printf "%-26s %15.2fx %15.2fx %15.2fx\n", name, g / a, st / a, si / a }'
done
echo
echo "(every traced run checked: exactly $N trace frames created; measuring time ${secs}s)"
failed=0
exit 0
