#!/bin/sh
# bootstrap.sh demo|check - install what is missing, build, then run the
# bundled demo (demo) or every test (check).  For a fresh Debian 12 machine,
# as root.
set -eu
cd "$(dirname "$0")"

what=${1:-}
case "$what" in
demo|check) ;;
*) echo "usage: $0 demo|check" >&2; exit 2 ;;
esac

# Debian packages the build and the tests need.
pkgs="build-essential autoconf automake pkg-config libevent-dev libelf-dev
      libiberty-dev libcmocka-dev gdb gdbserver binutils clang
      libclang-rt-14-dev g++ python3 systemtap-sdt-dev"
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
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
fi

[ -x configure ] || ./autogen.sh
[ -f Makefile ] || ./configure --enable-werror
make -j"$(nproc)"

case "$what" in
demo) exec tests/demo.sh ;;
check)
	status=0
	make -j"$(nproc)" check || status=$?
	# One closing line over every test, from automake's results.
	# (grep -c exits 1 when it counts nothing: not an error here)
	results=$(find . -name '*.trs' -exec cat {} + 2>/dev/null || true)
	pass=$(printf '%s\n' "$results" | grep -c '^:test-result: PASS' || true)
	fail=$(printf '%s\n' "$results" | grep -cE '^:test-result: (FAIL|ERROR|XPASS)' || true)
	skip=$(printf '%s\n' "$results" | grep -c '^:test-result: SKIP' || true)
	echo "$pass passed, $fail failed, $skip skipped"
	exit $status ;;
esac
