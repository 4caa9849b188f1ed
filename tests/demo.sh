#!/bin/sh
# demo.sh - the README's main job: record entry and return probes of the
# bundled example with probe-trace, show what was recorded (a summary,
# then a few frames), open the same file in gdb, then drive the agent
# live from gdb as `target remote | probe-agent - PROG` does.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
agent=$top/agent/probe-agent
pt=$top/client/probe-trace
[ -x "$agent" ] && [ -x "$pt" ] || { echo "demo: build first (make)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Not PIE: gdb maps a trace file's program at its link address, so its
# frames find their functions (and the parameters DWARF describes).
cc -g -O0 -no-pie -fno-PIE -pthread -o "$work/demo" "$top/tests/demo/demo.c"

echo "### 1. record: every call of process_order (its parameter, typed from"
echo "###    DWARF, and the order it points to) and every return (value and"
echo "###    latency), 2 threads; and one line of its source, with a local"
# the line after `cents` is computed
line=$(grep -n 'pthread_mutex_lock(&lock);' "$top/tests/demo/demo.c" | head -1 | cut -d: -f1)
echo "\$ probe-trace record -o demo.tfile -e 'process_order' -e 'process_order%return' \\"
echo "      -e 'demo.c:$line cents o->id' -- ./demo"
(cd "$work" && "$pt" record -o demo.tfile -e 'process_order' \
	-e 'process_order%return' -e "demo.c:$line cents o->id" -- ./demo)

echo
echo "### 2. what was recorded"
echo "\$ probe-trace dump --summary demo.tfile"
"$pt" dump --summary "$work/demo.tfile"
echo "\$ probe-trace dump --limit 6 demo.tfile"
"$pt" dump --limit 6 "$work/demo.tfile"
echo "\$ probe-trace dump --json --limit 1 demo.tfile"
"$pt" dump --json --limit 1 "$work/demo.tfile"

echo
echo "### 3. the same file in gdb: target tfile"
gdb -nx -batch -ex "target tfile $work/demo.tfile" \
	-ex 'tstatus' -ex 'tfind 0' \
	-ex 'print $probe_thread' \
	-ex 'print o->price' -ex 'print *o' \
	-ex 'tfind end' "$work/demo" 2>&1 |
	grep -v -e '^Reading ' -e '^Created tracepoint' -e '^Tracepoint [0-9]* at' \
		-e '^Assuming tracepoint' -e 'trace buffer\|Trace will\|Not looking'

echo
echo "### 4. live: gdb drives $agent on tests/demo/demo.c"
gdb -nx -batch \
	-ex "target remote | $agent - $work/demo" \
	-x "$top/tests/demo/demo.gdb" "$work/demo" 2>&1 |
	grep -v -e '^Reading ' -e 'File transfers from remote targets' \
		-e '^\[New Thread' -e 'libthread_db'
