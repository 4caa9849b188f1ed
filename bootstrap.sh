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
      libclang-rt-14-dev g++ python3 systemtap-sdt-dev openssh-server
      openssh-client"
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
	# One closing line over every test, from automake's results: the
	# plain build's, the sanitizer build's, then both.
	# (grep -c exits 1 when it counts nothing: not an error here)
	count() {	# DIR [EXCLUDED DIR]: "P passed, F failed, S skipped"
		results=$(find "$1" -path "${2:-/nonexistent}" -prune -o \
			-name '*.trs' -exec cat {} + 2>/dev/null || true)
		pass=$(printf '%s\n' "$results" | grep -c '^:test-result: PASS' || true)
		fail=$(printf '%s\n' "$results" | grep -cE '^:test-result: (FAIL|ERROR|XPASS)' || true)
		skip=$(printf '%s\n' "$results" | grep -c '^:test-result: SKIP' || true)
		echo "$pass passed, $fail failed, $skip skipped"
	}
	echo "plain build: $(count . ./build-san)"
	echo "ASan + UBSan build: $(count ./build-san)"
	count .
	exit $status ;;
esac
