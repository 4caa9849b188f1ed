#!/bin/sh
# check-cross.sh [ARCH] - the agent on another architecture, in a qemu-system
# guest, driven by gdb-multiarch from this host.  `make check-cross` runs it.
# ARCH is aarch64 (the default) or armhf.  This file is the driver; what
# every arch shares is in lib.sh, debug-cases.sh and record-cases.sh, what
# one arch builds and checks in ARCH-build.sh and ARCH-cases.sh.
#
# What one run does (ARCH aarch64; armhf below):
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
#
# ARCH armhf: Debian's armmp kernel under `qemu-system-arm -M virt
# -cpu cortex-a15 -smp 1` (a boot costs about 6 s: the zImage unpacks
# itself), the target programs built twice, -mthumb (Debian's default)
# and -marm, and every case run for both.  The first stub is Debian's own
# gdbserver:armhf (`gdbserver --multi`, run through its loader from the
# 9p folder): the debugging cases against it prove the bed without our
# agent.  Then the agent, as for aarch64, with the cases armhf-cases.sh
# lists.  CROSS_STUBS (default "gdbserver agent") chooses the stubs.
#
# Output is TAP; exit 0 when every case passed, 1 when one failed, 77 when
# qemu-system-ARCH, the cross compiler or gdb-multiarch is not installed
# (./bootstrap.sh check installs them) or, for armhf, when the agent is
# not built for the arch yet (build-agent.sh says so) and every other
# case passed; 99 when the test bed itself broke.
#
# Environment: PROBE_CROSS_CACHE (default ~/.cache/probe-agent-cross) for
# the debs, the sysroot and the kernel; CROSS_TIMEOUT (seconds, default
# 1200) bounds the whole boot; V=1 prints every gdb transcript;
# CROSS_QUICK=1 runs only the debugging cases, under the first agent (no
# tracepoints, records or keeper chaos: about a minute);
# CROSS_THREADS_RUNS=N (default 3) runs the threads case N times;
# CROSS_KEEPER_ONLY=1 (armhf) runs the keeper's chaos case alone (each
# agent starts and exits without its cases); CROSS_IPA_ONLY=1 (armhf)
# runs only the tracepoint cases and, under pad and auto, the in-process
# collector's (no settle, record or stress case; KEEPER_KILLS=0 leaves
# the chaos case's kills out too);
# CROSS_STRATEGIES (default "step boost emulate pad auto", and on armhf
# pad-far after pad) chooses the agent's tracepoint strategies, in order
# (a subset to iterate on one); pad-far (armhf) is pad with every pad
# placed beyond B / B.W's reach (PROBE_AGENT_FAR_PADS=1): far jump pads;
# CROSS_ISAS (armhf, default "thumb arm") chooses the builds of the
# programs, and so the cases run (one alone to iterate).
# CROSS_GAPS_ONLY=1 (armhf) runs only armhf_gap_cases under each agent
# (the far pads' collector, stepi over a probed bx lr, record of an
# entry and returns); CROSS_INTR=1 (armhf) adds the interrupt case
# (threads stopped by ^C inside the collector; CROSS_INTR_CALLS, default
# 2000000, the calls per thread).
set -eu
arch=${1:-${ARCH:-aarch64}}
srcdir=$(cd "$(dirname "$0")/../.." && pwd)
cache=${PROBE_CROSS_CACHE:-${HOME:-/root}/.cache/probe-agent-cross}
timeout_s=${CROSS_TIMEOUT:-1200}

top_srcdir=$srcdir TLIB_NAME=check-cross
. "$srcdir/tests/lib/common.sh"
skip() { tlib_skip_all "$@"; }
fail99() { tlib_error "$@"; }
# shellcheck source=tests/cross/lib.sh
. "$srcdir/tests/cross/lib.sh"
cross_arch_config "$arch"
case $arch in
aarch64) stubs=${CROSS_STUBS:-agent} ;;
*) stubs=${CROSS_STUBS:-gdbserver agent} ;;
esac
for s in $stubs; do
	case $s in
	agent) ;;
	gdbserver) [ "$arch" != aarch64 ] ||
		fail99 "CROSS_STUBS: the gdbserver cases are armhf's (aarch64 runs the agent only)" ;;
	*) fail99 "CROSS_STUBS: '$s' is neither agent nor gdbserver" ;;
	esac
done
case " $stubs " in *" agent "*) with_agent=1 ;; *) with_agent=0 ;; esac
case " $stubs " in *" gdbserver "*) with_gdbserver=1 ;; *) with_gdbserver=0 ;; esac
build="$srcdir/build-$arch"
rm -f "$build/testbed/cases.trs"
[ -d "$srcdir/arch/$archdir" ] ||
	skip "this tree has no arch/$archdir: nothing to build the agent with"
for tool in "$qemu" "$triplet-gcc" gdb-multiarch cpio dpkg-deb; do
	command -v "$tool" >/dev/null 2>&1 ||
		skip "$tool is not installed (Debian: ./bootstrap.sh cross $arch installs it)"
done
quick=${CROSS_QUICK:-0}
case $quick in 0|1) ;; *) fail99 "CROSS_QUICK must be 0 or 1, not '$quick'" ;; esac
case ${CROSS_KEEPER_ONLY:-0} in
0) ;;
1) [ "$arch" = armhf ] || fail99 "CROSS_KEEPER_ONLY is armhf's (aarch64 runs every case)"
   [ "$quick" = 0 ] || fail99 "CROSS_KEEPER_ONLY=1 and CROSS_QUICK=1: the quick run has no keeper chaos" ;;
*) fail99 "CROSS_KEEPER_ONLY must be 0 or 1, not '$CROSS_KEEPER_ONLY'" ;;
esac
threads_runs=${CROSS_THREADS_RUNS:-3}
case $threads_runs in
''|*[!0-9]*|0) fail99 "CROSS_THREADS_RUNS must be a positive number, not '$threads_runs'" ;;
esac

# --- 1. the agent and the target programs -----------------------------------
# build-agent.sh exits 2 when it has no cross build for the arch: the
# agent's cases are then skipped, said so, and the run exits 77 if the
# others passed (cross_skip).  Any other failure is the bed's.
run="$build/testbed/run"
rm -rf "$run"
mkdir -p "$run"
cross_skip=
if [ "$with_agent" = 1 ]; then
	agent_status=0
	agent=$("$srcdir/tests/cross/build-agent.sh" "$arch" 2>"$build/testbed/agent-build.err") || agent_status=$?
	cat "$build/testbed/agent-build.err" >&2
	if [ "$agent_status" = 2 ] && [ "$arch" != aarch64 ]; then
		cross_skip="the agent is not built for $arch: $(tail -n 1 "$build/testbed/agent-build.err")"
		with_agent=0
	elif [ "$agent_status" != 0 ]; then
		fail99 "the cross build of the agent failed"
	else
		agent=$(printf '%s\n' "$agent" | tail -n 1)
		cp "$agent" "$run/probe-agent"
	fi
	rm -f "$build/testbed/agent-build.err"
fi
# shellcheck disable=SC1090
. "$srcdir/tests/cross/$arch-build.sh"

# --- 2. kernel and initramfs --------------------------------------------------
cross_initramfs
[ "$with_gdbserver" = 0 ] || cross_stage_gdbserver

# --- 3. boot ------------------------------------------------------------------
# The stubs, in the order the guest runs them: gdbserver, then the agent
# once per tracepoint strategy.
strategies=
[ "$with_gdbserver" = 0 ] || strategies=gdbserver
if [ "$with_agent" = 1 ]; then
	if [ "$quick" = 1 ]; then
		strategies="$strategies step"
	else
		case $arch in
		armhf) agent_strategies=${CROSS_STRATEGIES:-step boost emulate pad pad-far auto} ;;
		*) agent_strategies=${CROSS_STRATEGIES:-step boost emulate pad auto} ;;
		esac
		for s in $agent_strategies; do
			case $s in
			step|boost|emulate|pad|auto) ;;
			pad-far) [ "$arch" = armhf ] ||
				fail99 "CROSS_STRATEGIES: pad-far is armhf's (no far pads on $arch)" ;;
			*) fail99 "CROSS_STRATEGIES: '$s' is not one of step boost emulate pad pad-far auto" ;;
			esac
		done
		strategies="$strategies $agent_strategies"
	fi
fi
strategies=$(echo $strategies)
[ -n "$strategies" ] || skip "${cross_skip:-no stub to run (CROSS_STUBS)}"
echo "$strategies" >"$run/strategies"
cross_boot
first=${strategies%% *}
wait_agent "$first"
if [ "$first" = gdbserver ]; then
	echo "# guest up, gdbserver $gdbserver_version listening, after $(($(date +%s) - start)) s (host port $port)"
else
	echo "# guest up, agent listening, after $(($(date +%s) - start)) s (host port $port)"
fi

# --- 4. the cases -----------------------------------------------------------------
cross_tap_init
# shellcheck disable=SC1090
. "$srcdir/tests/cross/$arch-cases.sh"
