#!/bin/sh
# bootstrap.sh demo|check|cross ARCH - install what is missing, build, then
# run the bundled demo (demo) or every test (check), or build a static
# probe-agent for ARCH (cross aarch64|armhf) and print its path as the last line.
# For a fresh Debian 12 machine, as root.
#
# ./bootstrap.sh check also runs the armhf guest (make check-cross
# ARCH=armhf) beside the aarch64 one; PROBE_CHECK_ARMHF=0 leaves it out,
# PROBE_CHECK_GUESTS=serial runs one after the other.
set -eu
cd "$(dirname "$0")"

what=${1:-}
case "$what" in
demo|check) ;;
cross)
	case "${2:-}" in
	aarch64|armhf) ;;
	*) echo "usage: $0 cross aarch64|armhf" >&2; exit 2 ;;
	esac ;;
*) echo "usage: $0 demo|check|cross aarch64|armhf" >&2; exit 2 ;;
esac
check_armhf=${PROBE_CHECK_ARMHF:-1}
case $check_armhf in
0|1) ;;
*) echo "bootstrap: PROBE_CHECK_ARMHF must be 0 or 1, not '$check_armhf'" >&2; exit 2 ;;
esac
# armhf's debs (the agent's libraries, the guest's kernel, busybox and
# gdbserver) are fetched with apt-get download PKG:armhf.
with_armhf=0
[ "$what" = cross ] && [ "${2:-}" = armhf ] && with_armhf=1
[ "$what" = check ] && [ "$check_armhf" = 1 ] && with_armhf=1

# Debian packages the build and the tests need.
pkgs="build-essential autoconf automake pkg-config libevent-dev libelf-dev libdw-dev
      libiberty-dev libcmocka-dev libdebuginfod-dev gdb gdbserver binutils clang
      libclang-rt-14-dev g++ python3 systemtap-sdt-dev openssh-server
      openssh-client"
# babeltrace2 reads the CTF traces of `probe-trace dump --format=ctf` in
# tests/record/record-ctf.test.
[ "$what" != check ] || pkgs="$pkgs babeltrace2"
# The aarch64 agent and its test bed (make check-cross): the cross
# compiler, qemu-system-aarch64 (in qemu-system-arm), gdb-multiarch, and
# cpio for the guest's initramfs; qemu-aarch64-static (qemu-user-static)
# runs the aarch64 engine's differential tests of make check.  The target's own libraries and the
# guest's kernel and busybox are arm64 debs that tests/cross fetches with
# `apt-get download`, which needs arm64 known to dpkg.
cross_pkgs="gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm qemu-user-static
      gdb-multiarch cpio"
case "$what" in
check|cross) pkgs="$pkgs $cross_pkgs" ;;
esac
# The 32-bit ARM engine's tests of make check (tests/arch/arm-*): arm
# objdump and Debian's armhf libc, libm, ld.so and libstdc++ for the
# differential test, and the cross compiler for its A32 code and for the
# programs qemu-arm-static (qemu-user-static, above) runs; `cross armhf`
# and the armhf guest (PROBE_CHECK_ARMHF=1) need the cross compiler too.
armhf_pkgs="gcc-arm-linux-gnueabihf binutils-arm-linux-gnueabihf
      libc6-armhf-cross libc6-dev-armhf-cross libstdc++6-armhf-cross"
[ "$what" != check ] && [ "$with_armhf" = 0 ] || pkgs="$pkgs $armhf_pkgs"
# libc's separate debug file (record-stripped.test finds its internal
# functions through it, by build-id).
[ "$what" != check ] || pkgs="$pkgs libc6-dbg"
# A local debuginfod server for tests/record/record-debuginfod.test.
[ "$what" != check ] || pkgs="$pkgs debuginfod"
# lldb (lldb-14, with lldb-server) drives the agent as a second client in
# tests/integration/lldb.itest.
[ "$what" != check ] || pkgs="$pkgs lldb"

# apt-get update, tried twice: a mirror in the middle of a sync fails
# one list (seen: bookworm-security's armhf Packages, "unexpected
# size") and apt-get then exits non-zero though the other lists came.
# Said, and the install goes on with what came: a package no list
# offers then fails the install with apt's own message.
apt_update() {
	apt-get update -qq || apt-get update -qq ||
		echo "bootstrap: apt-get update failed on some lists (above); going on with those that came" >&2
}

foreign=$(dpkg --print-foreign-architectures)
need_arm64=""
case "$what" in
check|cross)
	case " $(echo $foreign) " in
	*" arm64 "*) ;;
	*) need_arm64=yes ;;
	esac ;;
esac
need_armhf=""
if [ "$with_armhf" = 1 ]; then
	case " $(echo $foreign) " in
	*" armhf "*) ;;
	*) need_armhf=yes ;;
	esac
fi
if [ -n "$need_armhf" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "bootstrap: run as root to add the armhf architecture" >&2
		exit 1
	fi
	echo "bootstrap: adding the armhf architecture (for apt-get download of armhf debs)"
	dpkg --add-architecture armhf
	apt_update
fi
if [ -n "$need_arm64" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "bootstrap: run as root to add the arm64 architecture" >&2
		exit 1
	fi
	echo "bootstrap: adding the arm64 architecture (for apt-get download of arm64 debs)"
	dpkg --add-architecture arm64
	apt_update
fi
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "bootstrap: installing$missing"
	if [ "$(id -u)" -ne 0 ]; then
		echo "bootstrap: run as root to install$missing" >&2
		exit 1
	fi
	apt_update
	# The tests run their own sshd (the ssh path of probe-trace): the
	# package must not start the system's.  policy-rc.d is Debian's way
	# to keep services down during an install.
	rcd=""
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
		chmod +x /usr/sbin/policy-rc.d
		rcd=/usr/sbin/policy-rc.d
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null ||
		{ [ -z "$rcd" ] || rm -f "$rcd"; exit 1; }
	[ -z "$rcd" ] || rm -f "$rcd"
fi

if [ "$what" = cross ]; then
	# Out of the source tree (build-ARCH/), whatever the host build.
	exec tests/cross/build-agent.sh "$2"
fi

[ -x configure ] || ./autogen.sh
[ -f Makefile ] || ./configure --enable-werror
make -j"$(nproc)"

case "$what" in
demo) exec tests/demo.sh ;;
check)
	status=0
	make -j"$(nproc)" check || status=$?
	# The same tests against an ASan + UBSan build of the agent,
	# probe-trace and the unit tests, in build-san/ (any sanitizer
	# report fails its test; see tests/check-sanitizers.sh).
	san_start=$(date +%s)
	tests/check-sanitizers.sh || status=$?
	echo "bootstrap: the sanitizer build and its tests took $(( $(date +%s) - san_start )) s"
	# The static aarch64 agent in a qemu-system guest, driven by
	# gdb-multiarch (tests/cross/check-cross.sh; its cases leave a
	# .trs under build-aarch64/ for the count below), and the armhf
	# guest (PROBE_CHECK_ARMHF=0 leaves it out): gdbserver:armhf's
	# cases, then the agent's, Thumb and ARM (its .trs under
	# build-armhf/).  Each guest is one qemu with one CPU, so on a
	# machine with two or more the two run side by side, each with its
	# output in a file that is printed when it ends
	# (PROBE_CHECK_GUESTS=serial runs them one after the other).
	guests=${PROBE_CHECK_GUESTS:-auto}
	case $guests in
	auto) if [ "$check_armhf" = 1 ] && [ "$(nproc)" -ge 2 ]; then guests=parallel; else guests=serial; fi ;;
	serial|parallel) ;;
	*) echo "bootstrap: PROBE_CHECK_GUESTS must be auto, serial or parallel, not '$guests'" >&2; exit 2 ;;
	esac
	[ "$check_armhf" = 1 ] || guests=serial
	guest() {	# ARCH: its tests, timed; the exit status in $1.status
		g_start=$(date +%s)
		g_status=0
		make check-cross ARCH="$1" || g_status=$?
		echo "bootstrap: the $1 guest tests took $(( $(date +%s) - g_start )) s"
		echo "$g_status" >"$1.status"
	}
	guest_status() {	# ARCH: 0 unless its tests failed (77, not installed: 0)
		g_status=$(cat "$1.status" 2>/dev/null || echo 99)
		rm -f "$1.status"
		[ "$g_status" -eq 0 ] || [ "$g_status" -eq 77 ] || status=$g_status
	}
	if [ "$guests" = parallel ]; then
		echo "bootstrap: the aarch64 and armhf guests run side by side (about 10 minutes); each one's output follows when it ends"
		guest aarch64 >aarch64.guest.log 2>&1 &
		a64=$!
		guest armhf >armhf.guest.log 2>&1 &
		ahf=$!
		wait "$a64" || true
		cat aarch64.guest.log
		wait "$ahf" || true
		cat armhf.guest.log
		rm -f aarch64.guest.log armhf.guest.log
		guest_status aarch64
		guest_status armhf
	else
		guest aarch64
		guest_status aarch64
		if [ "$check_armhf" = 1 ]; then
			guest armhf
			guest_status armhf
		fi
	fi
	# One closing line over every test, from automake's results: the
	# plain build's, the sanitizer build's, then both.
	# (grep -c exits 1 when it counts nothing: not an error here)
	count() {	# DIR [EXCLUDED DIR...]: "P passed, F failed, S skipped[, X not yet supported]"
		dir=$1
		shift
		prune=""
		for x in "$@"; do
			prune="$prune -path $x -prune -o"
		done
		# shellcheck disable=SC2086
		results=$(find "$dir" $prune -name '*.trs' -exec cat {} + 2>/dev/null || true)
		pass=$(printf '%s\n' "$results" | grep -c '^:test-result: PASS' || true)
		fail=$(printf '%s\n' "$results" | grep -cE '^:test-result: (FAIL|ERROR|XPASS)' || true)
		skip=$(printf '%s\n' "$results" | grep -c '^:test-result: SKIP' || true)
		xfail=$(printf '%s\n' "$results" | grep -c '^:test-result: XFAIL' || true)
		echo "$pass passed, $fail failed, $skip skipped$([ "$xfail" -eq 0 ] || echo ", $xfail not yet supported (TODO)")"
	}
	echo "plain build: $(count . ./build-san ./build-aarch64 ./build-armhf)"
	echo "ASan + UBSan build: $(count ./build-san)"
	echo "aarch64 guest: $(count ./build-aarch64)"
	[ "$check_armhf" = 0 ] || echo "armhf guest: $(count ./build-armhf)"
	count .
	exit $status ;;
esac
