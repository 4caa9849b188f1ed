#!/bin/sh
# check-sanitizers.sh [make check arguments...] - build the agent,
# probe-trace and the unit tests with ASan and UBSan (configure
# --enable-sanitizers) in build-san/, and run `make check` there: the
# unit, arch, agent, integration, tracepoint and record tests, where any
# sanitizer report fails the test (see tests/san-driver.sh).  The target
# programs the tests trace are built plain.
#
# build-san/ holds a copy of the sources rather than an out-of-tree
# build: automake refuses a second build of a source tree that is already
# configured in place, which is how the plain build is made.  The copy
# takes the working tree's files as they are (tracked and untracked, not
# ignored), keeping their times, so a second run rebuilds only what
# changed.  Without git, `make distdir` makes the copy.
set -eu
cd "$(dirname "$0")/.."
san=build-san
jobs=$(nproc 2>/dev/null || echo 2)

mkdir -p "$san"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	# --ignore-failed-read: a tracked file deleted in the working tree.
	git ls-files -z -c -o --exclude-standard |
		tar --null -T - --ignore-failed-read -cf - 2>/dev/null |
		tar -C "$san" -xf -
elif [ -f Makefile ]; then
	make distdir distdir="$san" >/dev/null
else
	echo "check-sanitizers: neither a git checkout nor a configured tree" >&2
	exit 99
fi

cd "$san"
[ -x configure ] || ./autogen.sh >/dev/null 2>&1
[ -f Makefile ] || ./configure --enable-sanitizers >/dev/null
make -j"$jobs" >/dev/null
exec make -j"$jobs" check "$@"
