#!/bin/bash
# ret-real.sh - entry + return probes on real programs, probe-trace against
# bpftrace (uprobe + uretprobe), in one run: the cases of issue 12.
#
#   sqlite3   20000 INSERTs in one transaction, `.timer on`: the sum of the
#             statements' own times; probes on libsqlite3's sqlite3_step
#             (entry and %return; bpftrace: uprobe + uretprobe keeping the
#             latency's stats)
#   python3   200000 str() calls timed by the script itself
#             (time.perf_counter); PyUnicode_New%return
#
#   bench/ret-real.sh            (RUNS=5; root for bpftrace)
#
# Prints every run and the medians: the untraced time, each tracer's, the
# ratios, and the average latency each reports.  A tool that is not
# installed (sqlite3, python3.11, bpftrace) is said and its rows left out.
# Exit 0 whatever the numbers; 99 when probe-trace is not built or a run
# does not print its timing.

set -u
LC_ALL=C
export LC_ALL

RUNS=${RUNS:-5}
here=$(cd "$(dirname "$0")" && pwd)
builddir=${BENCH_BUILDDIR:-$(cd "$here/.." && pwd)}
PT=$builddir/client/probe-trace
SQLITE=${SQLITE:-/usr/bin/sqlite3}
PY=${PY:-/usr/bin/python3.11}
LIBSQLITE=${LIBSQLITE:-/lib/x86_64-linux-gnu/libsqlite3.so.0}
work=$(mktemp -d "${TMPDIR:-/tmp}/ret-real.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT

die() { echo "ret-real: FRAMEWORK ERROR: $*" >&2; exit 99; }
[ -x "$PT" ] || die "no probe-trace at $PT (build it: make)"
have_bpf=1
command -v bpftrace >/dev/null 2>&1 || { have_bpf=0; echo "ret-real: no bpftrace: its rows are left out"; }
ulimit -l unlimited 2>/dev/null || ulimit -l 8192 2>/dev/null

median() { sort -n | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print "-" }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0 && a != "-") printf "%.2fx", a / b; else print "-" }'; }

# $1 name, $2 untraced file, $3 probe-trace file, $4 bpftrace file (ms),
# $5 probe-trace latency file, $6 bpftrace latency file (ns)
report() {
	local u p b
	u=$(median <"$2")
	p=$(median <"$3")
	b=$(median <"$4")
	printf '%-8s untraced %8s ms   probe-trace %8s ms (%s)   bpftrace %8s ms (%s)\n' \
		"$1" "$u" "$p" "$(ratio "$p" "$u")" "$b" "$(ratio "$b" "$u")"
	printf '%-8s average latency: probe-trace %s ns, bpftrace %s ns (medians of the runs)\n' \
		"$1" "$(median <"$5")" "$(median <"$6")"
}

# The average latency probe-trace's summary reports, in ns.
pt_latency() {
	"$PT" dump --summary "$1" | sed -n 's/.*latency min [^ ]* avg \([0-9.]*\)us.*/\1/p' |
		awk '{ printf "%.0f\n", $1 * 1000 }'
}

if [ -x "$SQLITE" ] && [ -r "$LIBSQLITE" ]; then
	{
		echo ".timer on"
		echo "CREATE TABLE t(a INTEGER, b TEXT);"
		echo "BEGIN;"
		seq 0 19999 | awk '{ printf "INSERT INTO t VALUES(%d, %crow%d%c);\n", $1, 39, $1, 39 }'
		echo "COMMIT;"
	} >"$work/sq.sql"
	sumt() { awk '/^Run Time: real/ { s += $4; n++ } END { if (n) printf "%.0f\n", s * 1000 }' "$1"; }
	for r in $(seq "$RUNS"); do
		"$SQLITE" -init "$work/sq.sql" :memory: .quit >"$work/u.out" 2>&1
		sumt "$work/u.out" >>"$work/sq.u"
		"$PT" record -q -o "$work/sq.tfile" -e 'libsqlite3:sqlite3_step' \
			-e 'libsqlite3:sqlite3_step%return' -- "$SQLITE" -init "$work/sq.sql" :memory: .quit \
			>"$work/p.out" 2>&1
		sumt "$work/p.out" >>"$work/sq.p"
		pt_latency "$work/sq.tfile" >>"$work/sq.pl"
		if [ "$have_bpf" = 1 ]; then
			bpftrace -q -e "uprobe:$LIBSQLITE:sqlite3_step { @s[tid] = nsecs; }
				uretprobe:$LIBSQLITE:sqlite3_step /@s[tid]/ { @lat = stats(nsecs - @s[tid]); delete(@s[tid]); }" \
				-c "$SQLITE -init $work/sq.sql :memory: .quit" >"$work/b.out" 2>&1
			sumt "$work/b.out" >>"$work/sq.b"
			sed -n 's/^@lat: count [0-9]*, average \([0-9]*\),.*/\1/p' "$work/b.out" >>"$work/sq.bl"
		fi
		[ -s "$work/sq.p" ] || die "sqlite3 under probe-trace printed no timing"
		echo "sqlite3 run $r: untraced $(tail -1 "$work/sq.u") ms, probe-trace $(tail -1 "$work/sq.p") ms, bpftrace $(tail -1 "$work/sq.b" 2>/dev/null || echo -) ms"
	done
	touch "$work/sq.b" "$work/sq.bl"
	report sqlite3 "$work/sq.u" "$work/sq.p" "$work/sq.b" "$work/sq.pl" "$work/sq.bl"
else
	echo "ret-real: no $SQLITE or $LIBSQLITE: the sqlite3 case is left out"
fi

if [ -x "$PY" ]; then
	cat >"$work/py.py" <<'PYW'
import time
t = time.perf_counter()
s = 0
for i in range(200000):
    s += len(str(i) + "x")
print("elapsed_ms=%.0f s=%d" % ((time.perf_counter() - t) * 1000, s))
PYW
	ms() { sed -n 's/^elapsed_ms=\([0-9]*\) .*/\1/p' "$1"; }
	for r in $(seq "$RUNS"); do
		"$PY" "$work/py.py" >"$work/u.out" 2>&1
		ms "$work/u.out" >>"$work/py.u"
		"$PT" record -q -o "$work/py.tfile" -e 'PyUnicode_New%return' -- "$PY" "$work/py.py" \
			>"$work/p.out" 2>&1
		ms "$work/p.out" >>"$work/py.p"
		pt_latency "$work/py.tfile" >>"$work/py.pl"
		if [ "$have_bpf" = 1 ]; then
			bpftrace -q -e "uprobe:$PY:PyUnicode_New { @s[tid] = nsecs; }
				uretprobe:$PY:PyUnicode_New /@s[tid]/ { @lat = stats(nsecs - @s[tid]); delete(@s[tid]); }" \
				-c "$PY $work/py.py" >"$work/b.out" 2>&1
			ms "$work/b.out" >>"$work/py.b"
			sed -n 's/^@lat: count [0-9]*, average \([0-9]*\),.*/\1/p' "$work/b.out" >>"$work/py.bl"
		fi
		[ -s "$work/py.p" ] || die "python3 under probe-trace printed no timing"
		echo "python3 run $r: untraced $(tail -1 "$work/py.u") ms, probe-trace $(tail -1 "$work/py.p") ms, bpftrace $(tail -1 "$work/py.b" 2>/dev/null || echo -) ms"
	done
	touch "$work/py.b" "$work/py.bl"
	report python3 "$work/py.u" "$work/py.p" "$work/py.b" "$work/py.pl" "$work/py.bl"
else
	echo "ret-real: no $PY: the python3 case is left out"
fi
echo "machine: $(uname -sr), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
