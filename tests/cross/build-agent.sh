#!/bin/sh
# build-agent.sh [ARCH] - build a statically linked probe-agent for ARCH
# (aarch64, the default, or armhf: 32-bit ARM, hard float) with Debian's cross compiler, in build-ARCH/ beside the
# sources, and print its path as the last line.
#
# The agent links libevent_core, libelf (which needs zlib), libiberty and
# glibc.  Debian's arm64 -dev packages of the first four are not all
# co-installable with the host's (libevent-dev is not Multi-Arch: same),
# so they are not installed: `apt-get download` fetches them into a
# cache, and they are unpacked into a private sysroot that configure is
# pointed at.  glibc comes with the cross compiler (libc6-dev-arm64-cross,
# libc6-dev-armhf-cross).  `apt-get download PKG:arm64` needs the
# architecture known to dpkg (`dpkg --add-architecture arm64; apt-get
# update`, which `./bootstrap.sh cross aarch64` does, and armhf alike);
# without network the cached debs are used.
#
# build-ARCH/ holds a copy of the sources, as build-san/ does
# (tests/check-sanitizers.sh): automake refuses a second build of a tree
# that is configured in place.  Only the agent is built; probe-trace and
# the tests stay on the workstation.
#
# Environment: PROBE_CROSS_CACHE (default ~/.cache/probe-agent-cross).
set -eu
arch=${1:-aarch64}
srcdir=$(cd "$(dirname "$0")/../.." && pwd)
cache=${PROBE_CROSS_CACHE:-${HOME:-/root}/.cache/probe-agent-cross}
jobs=$(nproc 2>/dev/null || echo 2)

case "$arch" in
aarch64) triplet=aarch64-linux-gnu debarch=arm64 ;;
armhf) triplet=arm-linux-gnueabihf debarch=armhf ;;
*) echo "build-agent: no cross build for $arch (aarch64 or armhf)" >&2; exit 2 ;;
esac

if ! command -v "$triplet-gcc" >/dev/null 2>&1; then
	echo "build-agent: no $triplet-gcc (Debian: apt-get install gcc-$triplet, or ./bootstrap.sh cross $arch)" >&2
	exit 77
fi

# --- the target's libraries: Debian's -dev packages, unpacked ----------
debs="$cache/debs-$debarch"
sysroot="$cache/sysroot-$debarch"
devpkgs="libevent-dev libelf-dev zlib1g-dev libiberty-dev"
mkdir -p "$debs"
# shellcheck source=tests/cross/fetch-debs.sh
. "$srcdir/tests/cross/fetch-debs.sh"
fetch_debs "$debs" "$debarch" $devpkgs
stamp="$sysroot/.debs"
want=$(cd "$debs" && for p in $devpkgs; do ls ${p}_*.deb; done | sort | tr '\n' ' ')
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
	rm -rf "$sysroot"
	mkdir -p "$sysroot"
	for d in $want; do
		dpkg-deb -x "$debs/$d" "$sysroot"
	done
	echo "$want" >"$stamp"
fi

# --- the sources, copied --------------------------------------------------
build="$srcdir/build-$arch"
mkdir -p "$build"
cd "$srcdir"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files -z -c -o --exclude-standard |
		tar --null -T - --ignore-failed-read -cf - 2>/dev/null |
		tar -C "$build" -xf -
elif [ -f Makefile ]; then
	make distdir distdir="$build" >/dev/null
else
	echo "build-agent: neither a git checkout nor a configured tree" >&2
	exit 99
fi

cd "$build"
[ -x configure ] || ./autogen.sh >/dev/null 2>&1
libdir="$sysroot/usr/lib/$triplet"
if [ ! -f Makefile ] || [ config.status -ot configure ] ||
	! grep -q LIBDW_CFLAGS config.status; then
	# pkg-config answers for the target only; -static for one file
	# to copy onto a board.  libdw is probe-trace's, which is not
	# built here: given empty, configure does not look for it.
	PKG_CONFIG_LIBDIR="$libdir/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$sysroot" \
	./configure --host="$triplet" --enable-werror \
		LIBDW_CFLAGS=" " LIBDW_LIBS=" " \
		CPPFLAGS="-I$sysroot/usr/include" \
		LDFLAGS="-static -L$libdir" LIBS="-lz" >config.out 2>&1 ||
		{ cat config.out >&2; exit 1; }
fi
# libthread_db is dlopen()ed: a static glibc warns that the shared one
# must match at run time.  Without it TLS lookups fail, as gdb expects.
make -j"$jobs" agent/probe-agent >make.out 2>&1 ||
	{ tail -40 make.out >&2; exit 1; }
file agent/probe-agent | grep -q "statically linked" ||
	{ echo "build-agent: agent/probe-agent is not static" >&2; exit 1; }
echo "$build/agent/probe-agent"
