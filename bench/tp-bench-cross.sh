#!/bin/bash
# tp-bench-cross.sh - ns per hit of a probe in the qemu-system guest of
# `make check-cross ARCH=...`: probe-agent's tracepoints ("collect $regs")
# with the emulate (simulate), boost, step and pad strategies, against
# Debian's gdbserver for the arch, on one target, same N, in one boot.
# aarch64 adds two rows that also collect memory ("collect $regs, sink"):
# the pad strategy, whose pad calls the in-process collector, and
# gdbserver's trap tracepoint.  Where the agent is built, two more rows
# record `hot` with probe-trace (`record --connect -e hot`, from this
# host; every hit a frame naming its thread and time): "record" with the
# agent's defaults, and "record, clock by svc" with PROBE_PAD_CLOCK=vdso
# in the guest's agent (the time from the kernel).  Each must write
# exactly N frames.
#
#   bench/tp-bench-cross.sh ARCH [N]
#   bench/tp-bench-aarch64.sh [N]     (ARCH aarch64, default N=2000)
#   bench/tp-bench-arm.sh [N]         (ARCH armhf, default N=500)
#
# aarch64: gdbserver:arm64 runs the same tracepoint (it stops the
# program at every hit).  armhf: gdbserver:armhf has no tracepoints, so
# it gets what gdb has on ARM32 without them: a breakpoint whose
# `commands` count the hit and continue; tp-target is built -mthumb
# (Debian's default) or -marm (ISA).  When tests/cross/build-agent.sh
# has no agent for the arch, the agent's configurations are left out and
# the report says why.
#
# Environment: RUNS (3), ISA (armhf: thumb or arm, default thumb),
# BENCH_CONFIGS (a subset of the configurations, in their order: untraced,
# agent-emulate, agent-boost, agent-step, agent-pad, gdbserver,
# agent-pad-mem, gdbserver-mem, record, record-svc; untraced is always
# run: the net figures need it),
# CROSS_AGENT (a static agent for the arch to measure instead of the one
# tests/cross/build-agent.sh builds from this tree: another commit's),
# PROBE_CROSS_CACHE (~/.cache/probe-agent-cross), BENCH_TIMEOUT (seconds
# for the whole boot, default 1800), KEEP=1 keeps the run folder with
# every log.
#
# Under TCG (no KVM for arm guests on an x86-64 host) every guest
# instruction is translated: absolute times are far from a board's; only
# the ratios between configurations of the same run mean something.  See
# bench/README.md.
#
# Needs what `make check-cross ARCH=...` needs, and its kernel and
# initramfs (run it once first); gdbserver and the libraries it links
# come from the same cache (tests/cross/lib.sh, cross_stage_gdbserver)
# and run from the 9p folder through their own dynamic loader.
#
# Exit status: 0 whatever the numbers, 99 on a framework error (a tool
# missing, a run whose hits or frames are not exactly N, no timing).
set -u
LC_ALL=C
export LC_ALL

ARCH=${1:-}
case $ARCH in
aarch64) name=tp-bench-aarch64 N=${2:-2000} ;;
armhf) name=tp-bench-arm N=${2:-500} ;;
*) echo "usage: tp-bench-cross.sh aarch64|armhf [N]" >&2; exit 2 ;;
esac
RUNS=${RUNS:-3}
ISA=${ISA:-thumb}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
srcdir=$top
cache=${PROBE_CROSS_CACHE:-${HOME:-/root}/.cache/probe-agent-cross}
STRATEGIES="emulate boost step pad"

die() {
	printf "\n%s: FRAMEWORK ERROR: %s\n" "$name" "$*" >&2
	[ -n "${run:-}" ] && [ -d "$run" ] && echo "$name: logs kept in $run" >&2
	exit 99
}
fail99() { die "$@"; }

case $N in ''|*[!0-9]*|0) die "N must be a positive integer, not '$N'" ;; esac
case $RUNS in ''|*[!0-9]*|0) die "RUNS must be a positive integer" ;; esac
# shellcheck source=tests/cross/lib.sh
. "$top/tests/cross/lib.sh"
cross_arch_config "$ARCH"
# The target's instruction set (armhf's two), and whether gdbserver has
# tracepoints there.
isa_flag=
gdbserver_traces=1
if [ "$ARCH" = armhf ]; then
	case $ISA in thumb|arm) ;; *) die "ISA must be thumb or arm, not '$ISA'" ;; esac
	isa_flag=-m$ISA
	gdbserver_traces=0
fi
# The memory rows (aarch64): the pad with the in-process collector,
# against gdbserver's tracepoint collecting the same.
mem_rows=0
[ "$ARCH" = aarch64 ] && mem_rows=1
boot=$cache/boot-$debarch
for tool in "$qemu" "$triplet-gcc" gdb-multiarch dpkg-deb python3 timeout; do
	command -v "$tool" >/dev/null 2>&1 || die "$tool not found (./bootstrap.sh cross $ARCH)"
done
[ -f "$boot/vmlinuz" ] && [ -f "$boot/initrd.gz" ] ||
	die "no kernel and initramfs in $boot: run 'make check-cross ARCH=$ARCH' once first"

# --- The agent (if built), the target, gdbserver ------------------------------
run=$(mktemp -d "${TMPDIR:-/tmp}/$name.XXXXXX") || die "mktemp"
build=$run
mkdir -p "$run/testbed"
cleanup() {
	[ -n "${qpid:-}" ] && kill "$qpid" 2>/dev/null
	if [ "${KEEP:-0}" = 1 ] || [ "${failed:-1}" = 1 ]; then return; fi
	rm -rf "$run"
}
failed=1
trap cleanup EXIT
no_agent=
agent_status=0
if [ -n "${CROSS_AGENT:-}" ]; then
	[ -x "$CROSS_AGENT" ] || die "CROSS_AGENT: no executable at $CROSS_AGENT"
	agent=$CROSS_AGENT
else
	agent=$("$top/tests/cross/build-agent.sh" "$ARCH" 2>"$run/agent-build.err") || agent_status=$?
fi
if [ "$agent_status" = 2 ]; then
	no_agent=$(tail -n 1 "$run/agent-build.err")
	STRATEGIES=
	mem_rows=0
elif [ "$agent_status" != 0 ]; then
	cat "$run/agent-build.err" >&2
	die "the cross build of the agent failed"
else
	cp "$(printf '%s\n' "$agent" | tail -n 1)" "$run/probe-agent"
fi
"$triplet-gcc" $isa_flag -g -O2 -static -o "$run/tp-target" "$here/tp-target.c" ||
	die "cannot cross-compile tp-target.c"
cross_stage_gdbserver

# --- The guest's script: every run of every configuration, in order -------
# Round robin: run r of every configuration before run r+1 of any.  Each
# stub serves one connection (--once) and exits when gdb kills the
# program; the host starts gdb when the stub's log says it listens.
CONFIGS="untraced"
for s in $STRATEGIES; do CONFIGS="$CONFIGS agent-$s"; done
CONFIGS="$CONFIGS gdbserver"
[ "$mem_rows" = 0 ] || CONFIGS="$CONFIGS agent-pad-mem gdbserver-mem"
if [ -n "$STRATEGIES" ]; then
	[ -x "$top/client/probe-trace" ] || die "no probe-trace at $top/client/probe-trace (make)"
	CONFIGS="$CONFIGS record record-svc"
	# probe-trace reads the program from a sysroot whose /mnt is the
	# guest's 9p folder, this run folder.
	mkdir -p "$run/sysroot" && ln -s "$run" "$run/sysroot/mnt" || die "cannot make the sysroot"
fi
if [ -n "${BENCH_CONFIGS:-}" ]; then
	for c in $BENCH_CONFIGS; do
		case " $CONFIGS " in *" $c "*) ;; *) die "BENCH_CONFIGS: no configuration '$c' here (of: $CONFIGS)" ;; esac
	done
	picked=untraced
	for c in $CONFIGS; do
		case " $BENCH_CONFIGS " in *" $c "*) [ "$c" = untraced ] || picked="$picked $c" ;; esac
	done
	CONFIGS=$picked
fi
cat >"$run/guest.sh" <<EOF
cd /mnt
echo "guest: \$(uname -r) \$(uname -m)"
for r in \$(seq 1 $RUNS); do
	for cfg in $CONFIGS; do
		case \$cfg in
		untraced) ./tp-target $N /mnt/res-untraced-\$r ;;
		record) ./probe-agent --multi --once 0.0.0.0:1234 >/mnt/log-\$cfg-\$r 2>&1 ;;
		record-svc) PROBE_PAD_CLOCK=vdso ./probe-agent --multi --once 0.0.0.0:1234 \\
			>/mnt/log-\$cfg-\$r 2>&1 ;;
		agent-*) s=\${cfg#agent-}
			./probe-agent --once --no-startup-with-shell --tp-strategy=\${s%-mem} \\
			0.0.0.0:1234 /mnt/tp-target $N /mnt/res-\$cfg-\$r >/mnt/log-\$cfg-\$r 2>&1 ;;
		gdbserver*) /mnt/lib/$ld_so --library-path /mnt/lib /mnt/gdbserver \\
			--once --no-startup-with-shell 0.0.0.0:1234 /mnt/tp-target $N /mnt/res-\$cfg-\$r \\
			>/mnt/log-\$cfg-\$r 2>&1 ;;
		esac
	done
done
EOF

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
console=$run/console.log
# shellcheck disable=SC2086
timeout "${BENCH_TIMEOUT:-1800}" "$qemu" $machine -smp 1 -m 512 \
	-nodefaults -display none -no-reboot -monitor none -serial "file:$console" \
	-kernel "$boot/vmlinuz" -initrd "$boot/initrd.gz" \
	-append "console=$tty panic=-1 quiet" \
	-netdev "user,id=n0,hostfwd=tcp:127.0.0.1:$port-:1234" \
	-device virtio-net-device,netdev=n0 \
	-fsdev "local,id=fs0,path=$run,security_model=none" \
	-device virtio-9p-device,fsdev=fs0,mount_tag=share &
qpid=$!

# --- The host's side: one gdb session per traced run ------------------------
prologue() {
	cat <<EOF
set pagination off
set confirm off
set architecture $gdbarch
set sysroot $run
file $run/tp-target
target remote 127.0.0.1:$port
break main
continue
EOF
}
# A tracepoint; buffer for N frames plus slack (a $regs frame is about
# 800 bytes in the agent, about 2400 in gdbserver), so no run stops
# early.  $1 = buffer size, $2 = a command after tstart, $3 = more to
# collect.
trace_script() {
	prologue
	cat <<EOF
trace hot
actions
collect \$regs${3:+, $3}
end
set trace-buffer-size $1
break bench_done
tstart
${2:-}
continue
tstatus
kill
EOF
}
trace_script $((N * 1024 + 1048576)) "monitor probes" >"$run/agent.gdb"
trace_script $((N * 1024 + 1048576)) "monitor probes" sink >"$run/agent-mem.gdb"
trace_script $((N * 2600 + 1048576)) "" sink >"$run/gdbserver-mem.gdb"
# gdbserver: the same tracepoint where it has them; else gdb's
# breakpoint at the same place, whose commands count the hit and
# continue (every hit: a stop, the registers read, the step over the
# breakpoint, two resumes).
if [ "$gdbserver_traces" = 1 ]; then
	trace_script $((N * 2600 + 1048576))
else
	prologue
	cat <<'EOF'
set $hits = 0
break hot
commands
silent
set $hits = $hits + 1
continue
end
break bench_done
continue
printf "HITS %d\n", $hits
kill
EOF
fi >"$run/gdbserver.gdb"

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
		if [ "${cfg#record}" != "$cfg" ]; then
			wait_listen "$run/log-$cfg-$r"
			log=$run/rec-$cfg-$r.err
			timeout 1200 "$top/client/probe-trace" record -o "$run/rec-$cfg-$r.tfile" \
				--connect "127.0.0.1:$port" --sysroot "$run/sysroot" -e hot \
				-- /mnt/tp-target "$N" "/mnt/res-$cfg-$r" >"$log" 2>&1 ||
				die "$cfg run $r: probe-trace record failed (see $log)"
			line=$(grep "^probe-trace: hot: $N frames, jump pad, [0-9]* stops\?\b" "$log") ||
				die "$cfg run $r: not $N frames of a jump pad: $(grep '^probe-trace: hot' "$log")"
			# Stops: the hits that found the ring full (one vCPU: the
			# agent drains only when the program leaves it the CPU).
			echo "$line" | sed 's/.*jump pad, \([0-9]*\) stop.*/\1/' >>"$run/$cfg.stops"
		elif [ "$cfg" != untraced ]; then
			wait_listen "$run/log-$cfg-$r"
			case $cfg in
			gdbserver) script=$run/gdbserver.gdb ;;
			gdbserver-mem) script=$run/gdbserver-mem.gdb ;;
			*-mem) script=$run/agent-mem.gdb ;;
			*) script=$run/agent.gdb ;;
			esac
			timeout 1200 gdb-multiarch -nx -batch -x "$script" >"$run/gdb-$cfg-$r.out" 2>&1
			log=$run/gdb-$cfg-$r.out
			grep -q "^Breakpoint [0-9]*, .*bench_done" "$log" ||
				die "$cfg run $r: the target never reached bench_done (see $log)"
			if [ "$cfg" = gdbserver ] && [ "$gdbserver_traces" = 0 ]; then
				hits=$(sed -n 's/^HITS \([0-9]*\)$/\1/p' "$log")
				[ "$hits" = "$N" ] || die "$cfg run $r: ${hits:-no} hits counted, expected $N (see $log)"
			else
				! grep -q "^Trace stopped" "$log" || die "$cfg run $r: $(grep '^Trace stopped' "$log")"
				frames=$(sed -n 's/^Collected \([0-9]*\) trace frames.*/\1/p' "$log")
				created=$(sed -n 's/^Buffer contains [0-9]* trace frames (of \([0-9]*\) created total).*/\1/p' "$log")
				[ -n "$created" ] || created=$frames
				[ "$created" = "$N" ] || die "$cfg run $r: ${created:-no} trace frames, expected $N (see $log)"
				if [ "$r" = 1 ] && [ "$cfg" = agent-pad-mem ]; then
					grep -q '^process .* pad (.*with its collector, no stop' "$log" ||
						die "$cfg: the pad does not call the collector (see $log)"
				elif [ "$r" = 1 ] && [ "${cfg#gdbserver}" = "$cfg" ]; then
					used=$(sed -n 's/^process [0-9]* 0x[0-9a-f]* \([a-z]*\) (.*/\1/p' "$log" | head -n 1)
					eval "used_${cfg#agent-}=\${used:-?}"
				fi
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
	record) echo "probe-trace record (pad)" ;;
	record-svc) echo "probe-trace record, clock by svc" ;;
	agent-pad-mem) echo "probe-agent pad, + sink" ;;
	agent-*) echo "probe-agent ${1#agent-}" ;;
	gdbserver-mem) echo "gdbserver $gdbserver_version, + sink" ;;
	gdbserver)
		if [ "$gdbserver_traces" = 1 ]; then
			echo "gdbserver $gdbserver_version"
		else
			echo "gdbserver break+commands"
		fi ;;
	esac
}
insn=$("$triplet-objdump" -d "$run/tp-target" | awk '/<hot>:/ { getline; sub(/^[^\t]*\t[^\t]*\t/, ""); print; exit }')
echo "$name: N=$N hits per run, $RUNS runs per configuration, $qemu $machine -smp 1 (TCG)${isa_flag:+, tp-target $isa_flag}"
if [ -n "$no_agent" ]; then
	echo "  probe-agent: not measured, no $ARCH build ($no_agent)"
else
	echo "  probe at hot: $insn; --tp-strategy=emulate -> ${used_emulate:-?}, boost -> ${used_boost:-?}, step -> ${used_step:-?}, pad -> ${used_pad:-?}"
fi
if [ "$gdbserver_traces" = 1 ]; then
	echo "  gdbserver: Debian's gdbserver:$debarch $gdbserver_version (trap tracepoints)"
else
	echo "  gdbserver: Debian's gdbserver:$debarch $gdbserver_version, no tracepoints on ARM32: a breakpoint whose commands count the hit and continue"
fi
echo "  guest kernel: $(sed -n 's/^guest: //p' "$console" | head -n 1)"
echo
echo "ns per hit: raw = elapsed/N; net = raw - untraced median ($base)"
printf '%-26s %12s %12s %12s %12s   %s\n' configuration "raw med" "raw min" "raw max" "net med" "all runs, raw, sorted"
for cfg in $CONFIGS; do
	set -- $(stats "$run/$cfg.ns")
	med=$1 min=$2 max=$3
	shift 3
	net=-
	[ "$cfg" = untraced ] || net=$(awk -v a="$med" -v b="$base" 'BEGIN { printf "%.1f", a - b }')
	printf '%-26s %12s %12s %12s %12s   %s\n' "$(label "$cfg")" "$med" "$min" "$max" "$net" "$*"
done
net() { awk -v a="$(median "$run/$1.ns")" -v b="$base" 'BEGIN { printf "%.3f", a - b }'; }
case " $CONFIGS " in *" record-svc "*)
	echo
	awk -v a="$(net record)" -v s="$(net record-svc)" \
		'BEGIN { printf "record, clock by svc / record (net): %.2fx\n", s / a }'
	echo "stops for a full ring, per run: record $(tr '\n' ' ' <"$run/record.stops")," \
		"clock by svc $(tr '\n' ' ' <"$run/record-svc.stops")" ;;
esac
if [ -z "$no_agent" ] && [ -z "${BENCH_CONFIGS:-}" ]; then
	echo
	net() { awk -v a="$(median "$run/$1.ns")" -v b="$base" 'BEGIN { printf "%.3f", a - b }'; }
	gs=$(net gdbserver)
	st=$(net agent-step)
	si=$(net agent-emulate)
	bo=$(net agent-boost)
	echo "Ratios of net medians:"
	gcol=gdbserver/agent
	[ "$gdbserver_traces" = 1 ] || gcol=gdbserver-commands/agent
	printf '%-26s %24s %16s %16s %16s\n' configuration "$gcol" "step/agent" "boost/agent" \
		"simulate/agent"
	for s in $STRATEGIES; do
		awk -v a="$(net "agent-$s")" -v g="$gs" -v st="$st" -v bo="$bo" -v si="$si" \
			-v name="$(label "agent-$s")" \
			'BEGIN { printf "%-26s %23.2fx %15.2fx %15.2fx %15.2fx\n", name, g / a, st / a, bo / a, si / a }'
	done
	[ "$mem_rows" = 0 ] ||
		awk -v a="$(net agent-pad-mem)" -v g="$(net gdbserver-mem)" -v name="$(label agent-pad-mem)" \
			'BEGIN { printf "%-26s %23.2fx   (against gdbserver, + sink)\n", name, g / a }'
fi
echo
echo "(every run checked: exactly $N hits counted or trace frames created; measuring time ${secs}s)"
failed=0
exit 0
