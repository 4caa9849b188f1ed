#!/bin/sh
# demo.sh - the README's main job: start probe-agent on the bundled example
# and drive it with a scripted gdb session over a pipe, as
# `target remote | probe-agent - PROG` does.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
agent=$top/agent/probe-agent
[ -x "$agent" ] || { echo "demo: build first (make)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -g -O0 -pthread -o "$work/demo" "$top/tests/demo/demo.c"
echo "demo: gdb drives $agent on tests/demo/demo.c"
gdb -nx -batch \
	-ex "target remote | $agent - $work/demo" \
	-x "$top/tests/demo/demo.gdb" "$work/demo" 2>&1 |
	grep -v -e '^Reading ' -e 'File transfers from remote targets' \
		-e '^\[New Thread' -e 'libthread_db'
