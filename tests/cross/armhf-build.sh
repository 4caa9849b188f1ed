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
	xcc -m$isa -O1 -o "$run/rectids-$isa" "$recprogs/rectids.c" &&
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
# branches (what walk() returns without a debugger), then the untraced
# stress runs and the attach case's watcher (lib.sh).
{
	for isa in $isas; do
		echo "ITEST_GROUND=/mnt/branches-untraced-$isa.txt ./branches-$isa"
	done
	# the interrupt case's truth (armhf_intr_case): 4 threads
	if [ "$with_agent" = 1 ] && [ "$quick" = 0 ] && [ "${CROSS_INTR:-0}" = 1 ]; then
		for isa in $isas; do
			echo "./recstress-$isa calls 4 ${CROSS_INTR_CALLS:-2000000} /mnt/stress-untraced-$isa-4x${CROSS_INTR_CALLS:-2000000}.out"
		done
	fi
	cross_guest_extra
} >"$run/guest-extra.sh"

# --- the keeper's chaos case: preparation ---------------------------------------
# As on aarch64 (keeper_chaos_prepare in lib.sh), for each build (Thumb
# and ARM, $run/keeper/ISA), under step, boost, emulate, auto and far
# pads: with while-stepping on work's entry the agent steps in software
# (temporary breakpoints the keeper must take out too).
# KEEPER_STRATEGIES (default "step boost emulate auto pad-far": pad-far
# is pad with every pad beyond B / B.W's reach, PROBE_AGENT_FAR_PADS=1)
# and KEEPER_KILLS (default 3 per strategy and build: each mode with
# each strategy once; 0: none) choose the kills.
[ "$with_agent" = 0 ] || [ "$quick" = 1 ] ||
	keeper_chaos_prepare "${KEEPER_KILLS:-}" "${KEEPER_STRATEGIES:-step boost emulate auto pad-far}"
