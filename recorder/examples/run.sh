#!/bin/sh
# Builds the recorder demos, runs each to its abort(), and dumps the rings from the core
# with gdb (rings.py). Usage: recorder/examples/run.sh [BUILD]   (from the repository root,
# after `make -f ... recorder`, i.e. with BUILD/recorder/libcoreq_rec.so built)
set -eu
BUILD=${1:-build}
REC=$(cd "$BUILD/recorder" && pwd)
EX=$(cd "$(dirname "$0")" && pwd)
OUT=$REC/examples
mkdir -p "$OUT"
cd "$OUT"
ulimit -c unlimited
pattern=$(cat /proc/sys/kernel/core_pattern)
case $pattern in core*) ;; *) echo "core_pattern is '$pattern': cores may not land in $OUT" >&2 ;; esac

clang-14 -g -O1 -fopenmp -o omp_crash "$EX/omp_crash.c"
gcc -g -O1 -pthread -I"$EX/.." -finstrument-functions -o gasp_crash "$EX/gasp_crash.c" \
    -Wl,--wrap=malloc,--wrap=realloc,--wrap=free -L"$REC" -lcoreq_rec -Wl,-rpath,"$REC"

for prog in omp_crash gasp_crash; do
    rm -f core core.*
    echo "== $prog"
    if [ $prog = omp_crash ]; then
        OMP_TOOL_LIBRARIES=$REC/libcoreq_rec.so ./$prog || true
    else
        ./$prog || true
    fi
    core=$(ls -t core core.* 2>/dev/null | head -1)
    [ -n "$core" ] || { echo "no core from $prog" >&2; exit 1; }
    mv "$core" "$prog.core"
    gdb -q -batch -x "$EX/rings.py" -ex "coreq-rings ${LAST:-14}" "./$prog" "$prog.core" 2>&1 |
        grep -v '^\[New LWP\|^\[Thread debugging\|^Using host libthread_db\|^Core was generated\|^Program terminated\|^#0 \|^\[Current thread'
done
