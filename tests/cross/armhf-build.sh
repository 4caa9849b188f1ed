# armhf-build.sh - sourced by check-cross.sh for ARCH=armhf: the target
# programs, cross-compiled statically into $run twice, NAME-thumb with
# -mthumb (Debian's default) and NAME-arm with -marm (glibc itself is
# Debian's, Thumb-2, in both), and the guest's own start-up for the cases
# (guest-extra.sh).
progs="$srcdir/tests/integration/progs"
recprogs="$srcdir/tests/record/progs"
xcc() { "$triplet-gcc" -g -static -pthread "$@"; }
for isa in $isas; do
	xcc -m$isa -O0 -fno-omit-frame-pointer -o "$run/basic-$isa" "$progs/basic.c" &&
	xcc -m$isa -O0 -fno-omit-frame-pointer -I"$progs" -o "$run/threads-$isa" "$progs/threads.c" &&
	xcc -m$isa -O0 -fno-omit-frame-pointer -o "$run/rectarget-$isa" "$recprogs/rectarget.c" &&
	xcc -m$isa -O0 -fno-omit-frame-pointer -o "$run/recstress-$isa" "$recprogs/recstress.c" &&
	xcc -m$isa -O2 -I"$progs" -o "$run/branches-$isa" "$srcdir/tests/cross/progs/branches.c" &&
	xcc -m$isa -O1 -I"$progs" -o "$run/retprobe-$isa" "$srcdir/tests/cross/progs/retprobe.c" ||
		fail99 "cannot cross-compile the target programs with -m$isa"
	"$triplet-objdump" -d "$run/basic-$isa" >"$run/basic-$isa.dis"
	"$triplet-objdump" -d "$run/rectarget-$isa" >"$run/rectarget-$isa.dis"
	"$triplet-objdump" -d "$run/branches-$isa" >"$run/branches-$isa.dis"
done
# The USDT program needs <sys/sdt.h>: the host's copy is plain
# preprocessor and asm (from a private include folder, as for aarch64).
# Built at -O2, where gcc gives register operands (-4@r4), and at -O0,
# where it gives memory ones ([r7, #60] in Thumb, [fp, #-8] in ARM).
if cross_sdt_include; then
	for isa in $isas; do
		xcc -m$isa -O2 -I"$build/testbed/sdtinc" -o "$run/recsdt-O2-$isa" "$recprogs/recsdt.c" &&
		xcc -m$isa -O0 -I"$build/testbed/sdtinc" -o "$run/recsdt-O0-$isa" "$recprogs/recsdt.c" ||
			fail99 "cannot cross-compile recsdt.c with -m$isa"
	done
fi
# The record cases' sysroot and the stress counts (lib.sh): every
# strategy's run is checked against the untraced run of the same build.
# armhf runs each twice (Thumb and ARM): the full 8 x 100,000 under pad
# and auto (jump pads: no stop a hit), 8 x 2,000 under the trap
# strategies, so that the run can keep within its 15 minutes
# (doc/testing.md).
cross_record_setup 2000 "pad auto"
# What the guest does before the stubs start: the untraced runs of
# branches (what walk() returns without a debugger), the untraced stress runs
# (only when the agent runs: nothing else compares with them), and a
# watcher that starts an attach case's program, under no stub, each time
# the host asks for one (attach.go names the program).
{
	for isa in $isas; do
		echo "ITEST_GROUND=/mnt/branches-untraced-$isa.txt ./branches-$isa"
	done
	if [ "$with_agent" = 1 ] && [ "$quick" = 0 ]; then
		for isa in $isas; do
			cat <<EOF
for c in $stress_calls $stress_short 1000; do
	t0=\$(date +%s)
	./recstress-$isa calls $stress_threads \$c /mnt/stress-untraced-$isa-\$c.out
	echo "guest: untraced recstress-$isa $stress_threads x \$c: status \$?, \$((\$(date +%s) - t0)) s"
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
} >"$run/guest-extra.sh"

# --- the keeper's chaos case: preparation ---------------------------------------
# As on aarch64 (aarch64-build.sh), for each build (Thumb and ARM): the
# agent is SIGKILLed at random moments while keeptarget's 8 threads hit
# tracepoints at leaf's, bump's and work's entries and at work's `bl
# leaf`, with return probes on work and leaf (but with while-stepping),
# under step, boost, emulate, auto and far pads, started by the agent, attached
# to, and started with a while-stepping action on work's entry (which
# steps in software: temporary breakpoints the keeper must take out
# too).  The keeper must leave the program running on to its untraced
# result and exit status 7, its text the file's.  keepguest runs each
# kill in the guest ($run/keeper/ISA, one folder per build); on the
# host, gdb-multiarch sets the tracepoints (keeper_chaos_run in
# armhf-cases.sh).  KEEPER_STRATEGIES (default "step boost emulate auto
# pad-far": pad-far is pad with every pad beyond B / B.W's reach,
# PROBE_AGENT_FAR_PADS=1), KEEPER_KILLS (default 3 per strategy and
# build: each mode with each strategy once) and KEEPER_SEED (default 1)
# choose the kills and their delays; KEEPER_NO_KEEPER=1 runs the agents with
# PROBE_AGENT_NO_KEEPER=1, which must fail.
keeper_chaos_prepare() {
	"$triplet-gcc" -O2 -static -o "$run/keepguest" "$srcdir/tests/cross/keepguest.c" ||
		fail99 "cannot cross-compile keepguest.c"
	mkdir -p "$run/keeper"
	{
		echo "# The keeper's chaos case, in the guest (armhf-build.sh writes it)."
		[ -z "${KEEPER_NO_KEEPER:-}" ] || echo "export PROBE_AGENT_NO_KEEPER=1"
	} >"$run/keeper/chaos.sh"
	for isa in $isas; do
		kdir="$run/keeper/$isa"
		mkdir -p "$kdir"
		"$triplet-gcc" -m$isa -O1 -static -pthread -o "$kdir/keeptarget" \
			"$srcdir/tests/keeper/keeptarget.c" ||
			fail99 "cannot cross-compile keeptarget.c with -m$isa"
		# leaf's, bump's and work's entries, and work's `bl leaf`
		# (objdump's addresses: without the Thumb bit, as gdb takes them).
		probes=$("$triplet-objdump" -d "$kdir/keeptarget" | awk '
			/<(leaf|bump)>:/ { print "0x" $1 }
			/<work>:/ { print "0x" $1; w = 1; next }
			w && /\tbl\t.*<leaf>/ { sub(":", "", $1); print "0x" $1; w = 0 }' |
			sed 's/^0x0*/0x/' | tr '\n' ' ')
		[ "$(echo $probes | wc -w)" = 4 ] ||
			fail99 "keeptarget -m$isa: leaf, bump, work and its bl not found ($probes)"
		echo "$probes" >"$kdir/probes"
		# The plan: the executable segment (ELF32), then one line per
		# kill (n, mode, strategy, delay in microseconds).
		python3 - "$kdir/keeptarget" "${KEEPER_KILLS:-0}" "${KEEPER_SEED:-1}" "$isa" \
			"${KEEPER_STRATEGIES:-step boost emulate auto pad-far}" \
			>"$kdir/plan" <<'PY' || fail99 "cannot plan the keeper's chaos case ($isa)"
import random, struct, sys
data = open(sys.argv[1], "rb").read()
phoff, = struct.unpack_from("<I", data, 0x1c)
phentsize, phnum = struct.unpack_from("<HH", data, 0x2a)
for i in range(phnum):
    p_type, p_offset, p_vaddr, _, p_filesz, _, p_flags, _ = \
        struct.unpack_from("<IIIIIIII", data, phoff + i * phentsize)
    if p_type == 1 and p_flags & 1:
        print("text %#x %#x %d" % (p_vaddr, p_offset, p_filesz))
        break
kills, seed = int(sys.argv[2]), int(sys.argv[3])
salt = 0 if sys.argv[4] == "thumb" else 7919
strategies = sys.argv[5].split()
for s in strategies:
    if s not in ("step", "boost", "emulate", "pad", "auto", "pad-far"):
        sys.exit("KEEPER_STRATEGIES: '%s' is not one of step boost emulate pad auto pad-far" % s)
kills = kills or 3 * len(strategies)
for n in range(kills):
    strategy = strategies[n % len(strategies)]
    mode = ("started", "attached", "while-stepping")[n // len(strategies) % 3]
    delay = random.Random(seed * 100003 + salt + n).randint(0, 250000)
    print("kill %d %s %s %d" % (n, mode, strategy, delay))
PY
		cat >>"$run/keeper/chaos.sh" <<EOF
cd /mnt/keeper/$isa
set -- \$(sed -n 's/^text //p' plan)
taddr=\$1 toff=\$2 tlen=\$3
/mnt/keepguest . -1 plain - 0 \$taddr \$toff \$tlen /mnt/probe-agent ./keeptarget 4000 ||
	echo "guest: keepguest plain ($isa) failed"
sed -n 's/^kill //p' plan | while read n mode strategy delay; do
	far=
	[ "\$strategy" != pad-far ] || far=1 strategy=pad
	PROBE_AGENT_FAR_PADS=\$far /mnt/keepguest . \$n \$mode --tp-strategy=\$strategy \$delay \\
		\$taddr \$toff \$tlen /mnt/probe-agent ./keeptarget 4000
done
echo "guest: keeper chaos ($isa) done"
EOF
	done
}
[ "$with_agent" = 0 ] || [ "$quick" = 1 ] || keeper_chaos_prepare
