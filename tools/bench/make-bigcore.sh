#!/bin/bash
# make-bigcore.sh [--size 1G|2G|N[KMG]] [--gcore] [--no-kernel] [--threads N] [OUT]
#
# Builds tools/bench/bigcore.c into OUT/bigcore and dumps the benchmark cores of it:
#   OUT/bigcore-SIZE.core    kernel core (ulimit -c unlimited, core_pattern "core", abort())
#   OUT/bigcore-SIZE.gcore   gdb `gcore` of the same program (only with --gcore)
# OUT defaults to build/bench (git-ignored). Cores are never stored in the repo.
# Idempotent: an existing core is kept (delete it, or rebuild bigcore, to redo it).
# Rebuilding OUT/bigcore (because bigcore.c changed) removes the cores made by the
# old binary, since they would no longer match the executable.
# Prints the paths of the cores, one a line, on stdout.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
size=1G threads=64 want_gcore=0 want_kernel=1 out=
while [ $# -gt 0 ]; do
    case $1 in
        --size) size=$2; shift 2 ;;
        --size=*) size=${1#*=}; shift ;;
        --threads) threads=$2; shift 2 ;;
        --gcore) want_gcore=1; shift ;;
        --no-kernel) want_kernel=0; shift ;;
        -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "make-bigcore.sh: unknown option $1" >&2; exit 2 ;;
        *) out=$1; shift ;;
    esac
done
out=${out:-$root/build/bench}
mkdir -p "$out"
out=$(cd "$out" && pwd)
tag=$size
[ "$threads" = 64 ] || tag=$size-t$threads

log() { echo "make-bigcore: $*" >&2; }

# ---- executable -------------------------------------------------------------
exe=$out/bigcore
if [ ! -x "$exe" ] || [ "$here/bigcore.c" -nt "$exe" ]; then
    log "building $exe"
    ${CC:-gcc} -O1 -g -pthread -o "$exe.tmp" "$here/bigcore.c"
    mv -f "$exe.tmp" "$exe"
    rm -f "$out"/bigcore-*.core "$out"/bigcore-*.gcore
fi

# ---- room on the disk -----------------------------------------------------------
bytes=$(numfmt --from=iec "${size^^}")
need=$(( bytes / 1024 + 200 * 1024 ))      # KiB: heap + stacks/libs + slack
avail=$(df -Pk "$out" | awk 'NR==2 {print $4}')

check_core() { # FILE: a complete ELF core at least as large as the heap?
    [ -f "$1" ] || return 1
    [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ] || return 1
    [ "$(stat -c %s "$1")" -ge "$bytes" ]
}

# ---- kernel core ----------------------------------------------------------------
kcore=$out/bigcore-$tag.core
if [ "$want_kernel" = 1 ]; then
    if check_core "$kcore"; then
        log "exists: $kcore"
    else
        [ "$avail" -ge "$need" ] || { log "not enough disk in $out (${avail} KiB < ${need} KiB)"; exit 1; }
        pat=$(cat /proc/sys/kernel/core_pattern)
        case $pat in
            '|'*) log "core_pattern pipes to a helper ($pat): no kernel core possible"; exit 1 ;;
        esac
        [ "$(cat /proc/sys/kernel/core_uses_pid 2>/dev/null || echo 0)" = 0 ] || log "note: core_uses_pid=1"
        work=$(mktemp -d "$out/.kcore.XXXXXX")
        log "dumping kernel core ($size heap, $threads+1 threads) ..."
        t0=$(date +%s%N)
        # core_pattern is relative ("core"): the kernel writes it in the crashing cwd.
        # (the braces catch bash's "Aborted (core dumped)" job message)
        { ( cd "$work" && ulimit -c unlimited && exec "$exe" --size "$size" --threads "$threads" ); } \
            2>/dev/null || true
        t1=$(date +%s%N)
        got=$(ls -1 "$work"/core* 2>/dev/null | head -n1 || true)
        if [ -z "$got" ] || ! check_core "$got"; then
            log "no complete core appeared in $work (core_pattern=$pat, ulimit -Hc=$(ulimit -Hc))"
            rm -rf "$work"
            exit 1
        fi
        mv -f "$got" "$kcore"
        rm -rf "$work"
        log "wrote $kcore ($(du -h --apparent-size "$kcore" | cut -f1), $(( (t1 - t0) / 1000000 )) ms)"
    fi
    echo "$kcore"
fi

# ---- gdb gcore ------------------------------------------------------------------
gcore=$out/bigcore-$tag.gcore
if [ "$want_gcore" = 1 ]; then
    if check_core "$gcore"; then
        log "exists: $gcore"
    else
        command -v gdb >/dev/null || { log "gdb not installed: no gcore"; exit 1; }
        avail=$(df -Pk "$out" | awk 'NR==2 {print $4}')
        [ "$avail" -ge "$need" ] || { log "not enough disk in $out for the gcore"; exit 1; }
        fifo=$(mktemp -u "$out/.fifo.XXXXXX")
        mkfifo "$fifo"
        "$exe" --size "$size" --threads "$threads" --wait >"$fifo" &
        pid=$!
        read -r word _ <"$fifo" || true
        rm -f "$fifo"
        if [ "${word:-}" != READY ]; then
            log "bigcore did not get ready"; kill "$pid" 2>/dev/null || true; exit 1
        fi
        log "gcore of pid $pid ..."
        t0=$(date +%s%N)
        gdb -nx -batch -p "$pid" -ex "gcore $gcore.tmp" >/dev/null 2>&1 || true
        t1=$(date +%s%N)
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
        if ! check_core "$gcore.tmp"; then
            log "gcore failed"; rm -f "$gcore.tmp"; exit 1
        fi
        mv -f "$gcore.tmp" "$gcore"
        log "wrote $gcore ($(du -h --apparent-size "$gcore" | cut -f1), $(( (t1 - t0) / 1000000 )) ms)"
    fi
    echo "$gcore"
fi
