#!/bin/bash
# gdb-ompd-loop.sh MODE COUNT OUTPREFIX NTHREADS EXE CORE PYPLUGIN_DIR LIBOMPD_DIR
#
# The gdb side of bench-ompd.sh as one command (hyperfine times exactly this):
# gdb + LLVM's OMPD gdb plugin doing `ompd init`, then `thread N` + `ompd parallel`
# for N = 1..NTHREADS (tools/bench/gdb-ompd-bench.py; COUNT=1 also counts the
# plugin's callbacks). MODE all: one gdb for every thread; each: one gdb per thread.
#
# gdb 13 sometimes segfaults inside the plugin (seen on the 64-thread core: a lone
# `ompd parallel` on the serial initial thread, in most runs). The loop then goes on
# in a new gdb from the thread it died on (all) or runs that thread's gdb again
# (each), at most 3 tries per thread, and logs each restart to OUTPREFIX-restarts;
# that cost is part of the peer's time. Per-gdb JSON: OUTPREFIX-rK.json (all) or
# OUTPREFIX-N.json (each). Exit 0 iff every thread was done.
mode=$1 count=$2 P=$3 N=$4 exe=$5 core=$6 plugin=$7
export LD_LIBRARY_PATH=$8
here=$(cd "$(dirname "$0")" && pwd)
: >"$P-restarts"
g() { # THREADS OUT
    timeout 600 gdb -batch -nx -ex 'set pagination off' -ex 'set confirm off' \
        -ex "source $plugin/__init__.py" \
        -ex "python BENCH_THREADS='$1'; BENCH_OUT='$2'; BENCH_COUNT=$count" \
        -ex "source $here/gdb-ompd-bench.py" "$exe" "$core" >/dev/null 2>&1
}
if [ "$mode" = all ]; then
    next=1 run=0 tries=0
    while [ "$next" -le "$N" ]; do
        g "$next-$N" "$P-r$run.json"
        rc=$?
        [ "$rc" = 0 ] && exit 0
        last=$(grep -o '"gdb_num": [0-9]*' "$P-r$run.json" 2>/dev/null | tail -n1 | grep -o '[0-9]*$')
        new=$(( ${last:-$((next - 1))} + 1 ))
        if [ "$new" = "$next" ]; then tries=$((tries + 1)); else tries=1; fi
        echo "gdb exit $rc at thread $new (run $run)" >>"$P-restarts"
        if [ "$tries" -ge 3 ]; then
            echo "gave up thread $new" >>"$P-restarts"
            new=$((new + 1)) tries=0
        fi
        next=$new run=$((run + 1))
    done
    exit 1
fi
ok=0
for n in $(seq 1 "$N"); do
    for t in 1 2 3; do
        g "$n" "$P-$n.json" && { ok=$((ok + 1)); break; }
        echo "gdb exit $? at thread $n (try $t)" >>"$P-restarts"
    done
done
[ "$ok" = "$N" ]
