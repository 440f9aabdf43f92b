#!/bin/bash
# bench-info.sh [--size 1G|2G] [--gcore] [--runs N] [--no-install] [--core CORE --exe EXE]
#               [--coreq BINARY]   (default: make build/coreq and use it)
#
# Benchmarks `coreq info` against its peers on the 65-thread benchmark core made by
# make-bigcore.sh (built on demand under build/bench/; --gcore uses gdb's gcore of the
# same program instead of the kernel core). A report, not a test: exits 0 whatever the
# numbers (non-zero only when it cannot run at all).
#
# Per tool: warm time (hyperfine, else a `date +%s%N` loop; min and median of N runs),
# max RSS (/usr/bin/time -f %M), bytes read from the core (strace -f -y: read/pread64
# on the core's fd, by segment; mmap'd bytes), and one core-cold run (the core's pages
# evicted with fadvise, then mincore). Then the table, the peer/coreq ratios and
# PASS/MISS for the project's targets (<= 5 ms warm on a 2 GB 65-thread core, <= 5 MB
# RSS, no read of segments it does not need). Tools: coreq info, coreq info --json,
# floor (mmap + phdrs + notes), eu-stack, gdb 'info threads', drgn (python3-drgn).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
size=1G runs=30 install=1 kind=core core= exe= coreq=
while [ $# -gt 0 ]; do
    case $1 in
        --size) size=$2; shift 2 ;;
        --size=*) size=${1#*=}; shift ;;
        --runs) runs=$2; shift 2 ;;
        --gcore) kind=gcore; shift ;;
        --no-install) install=0; shift ;;
        --core) core=$2; shift 2 ;;
        --exe) exe=$2; shift 2 ;;
        --coreq) coreq=$(realpath "$2"); shift 2 ;;
        -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench-info.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
log() { echo "bench-info: $*" >&2; }
py=$(command -v python3) || { log "python3 needed"; exit 1; }
lib="$py $here/benchlib.py"

# ---- tools -------------------------------------------------------------------------
. "$here/benchlib.sh"
want_pkg hyperfine hyperfine || log "no hyperfine: timing with a date +%s%N loop"
want_pkg /usr/bin/time time || { log "/usr/bin/time missing (package time)"; exit 1; }
want_pkg strace strace || log "no strace: no syscall byte counts"
want_pkg eu-stack elfutils || log "no eu-stack (elfutils): skipped"
have_drgn=0
if /usr/bin/python3 -c 'import drgn' 2>/dev/null; then
    have_drgn=1
elif apt-cache policy python3-drgn 2>/dev/null | grep -q 'Candidate: [0-9]'; then
    want_pkg drgn python3-drgn >/dev/null && /usr/bin/python3 -c 'import drgn' 2>/dev/null && have_drgn=1
fi
[ "$have_drgn" = 1 ] || log "no python3-drgn in this Debian: drgn skipped"

if [ -z "$coreq" ]; then
    make -s -C "$root" build/coreq >&2 || { log "make build/coreq failed"; exit 1; }
    coreq=$root/build/coreq
fi
mkdir -p "$root/build/bench"
floor=$root/build/bench/floor
if [ ! -x "$floor" ] || [ "$here/floor.c" -nt "$floor" ]; then
    ${CC:-gcc} -O2 -g -o "$floor" "$here/floor.c" || { log "cannot build floor"; exit 1; }
fi

# ---- the core ----------------------------------------------------------------------
if [ -z "$core" ]; then
    flags=(--size "$size")
    [ "$kind" = gcore ] && flags+=(--gcore --no-kernel)
    core=$("$here/make-bigcore.sh" "${flags[@]}" | tail -n1) || { log "no core"; exit 1; }
    exe=$root/build/bench/bigcore
fi
[ -f "$core" ] && [ -f "$exe" ] || { log "need --core CORE --exe EXE"; exit 1; }
core=$(realpath "$core") exe=$(realpath "$exe")
core_size=$(stat -c %s "$core")

tmp=$(mktemp -d /tmp/bench-info.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# name<TAB>command (words; no shell syntax, so hyperfine -N runs it without a shell)
tools=()
tools+=("coreq	$coreq info $core $exe")
tools+=("coreq-json	$coreq info --json $core $exe")
tools+=("floor	$floor $core")
command -v eu-stack >/dev/null && tools+=("eu-stack	eu-stack --core $core -e $exe")
command -v gdb >/dev/null && tools+=("gdb	gdb -nx -batch -ex 'info\ threads' $exe $core")
[ "$have_drgn" = 1 ] && tools+=("drgn	/usr/bin/python3 $here/drgn-threads.py $core $exe")

words() { # COMMAND-STRING -> array W (the 'info\ threads' escape is for hyperfine's parser)
    local s=${1//\'info\\ threads\'/__INFO_THREADS__} i
    read -r -a W <<<"$s"
    for i in "${!W[@]}"; do [ "${W[$i]}" = __INFO_THREADS__ ] && W[$i]="info threads"; done
}
run_cmd() { words "$1"; "${W[@]}"; }
hf_cmd() { echo "${1//\'info\\ threads\'/\'info threads\'}"; }

count_threads() { # TOOL OUTPUT-FILE -> threads the tool reported
    case $1 in
        coreq) sed -n 's/^threads: *\([0-9]*\).*/\1/p' "$2" | head -n1 ;;
        coreq-json) $py -c 'import json,sys; print(json.load(open(sys.argv[1]))["thread_count"])' "$2" 2>/dev/null ;;
        floor) sed -n 's/^threads \([0-9]*\).*/\1/p' "$2" ;;
        eu-stack) grep -c '^TID ' "$2" ;;
        gdb) grep -cE '^\*? +[0-9]+ +(Thread|LWP|process)' "$2" ;;
        drgn) sed -n 's/^threads \([0-9]*\)$/\1/p' "$2" ;;
    esac
}

# ---- warm: time and RSS --------------------------------------------------------------
load0=$(cut -d' ' -f1 /proc/loadavg)
log "core $core ($core_size bytes); load average $load0; warming the page cache"
cat "$core" >/dev/null
res=$tmp/results.tsv
printf 'tool\tthreads\trc\tmin_ms\tmed_ms\trss_kb\tsys_calls\tsys_bytes\tsys_heap\tsys_segs\tmmap_bytes\tcold_ms\tcold_bytes\tcold_heap\tcold_segs\tsegs_total\n' >"$res"
timer="hyperfine -N, 3 warm-ups, $runs runs"
command -v hyperfine >/dev/null || timer="date +%s%N loop, 3 warm-ups, $runs runs"
rss_runs=3
declare -A T R C
for entry in "${tools[@]}"; do
    name=${entry%%	*} cmd=${entry#*	}
    run_cmd "$cmd" >"$tmp/$name.out" 2>"$tmp/$name.err"
    rc=$?
    C[$name]="$(count_threads "$name" "$tmp/$name.out")	$rc"
    log "$name: exit $rc, $(cut -f1 <<<"${C[$name]}") threads; timing"
    if command -v hyperfine >/dev/null; then
        hyperfine -N -i --style none --warmup 3 --runs "$runs" \
            --export-json "$tmp/$name.json" "$(hf_cmd "$cmd")" >/dev/null 2>&1
        T[$name]=$($lib hyperfine "$tmp/$name.json" 2>/dev/null || echo "- -")
    else
        for _ in 1 2 3; do run_cmd "$cmd" >/dev/null 2>&1; done
        ms=()
        for ((i = 0; i < runs; i++)); do
            t0=$(date +%s%N); run_cmd "$cmd" >/dev/null 2>&1; t1=$(date +%s%N)
            ms+=("$(( (t1 - t0) / 1000 ))e-3")
        done
        T[$name]=$($lib stats "${ms[@]}")
    fi
    max=0
    for ((i = 0; i < rss_runs; i++)); do
        words "$cmd"
        /usr/bin/time -f %M -o "$tmp/rss" "${W[@]}" >/dev/null 2>&1
        kb=$(tail -n1 "$tmp/rss"); [ "$kb" -gt "$max" ] 2>/dev/null && max=$kb
    done
    R[$name]=$max
done

# ---- I/O: syscalls (strace) and core-cold runs --------------------------------------
declare -A S K
for entry in "${tools[@]}"; do
    name=${entry%%	*} cmd=${entry#*	}
    S[$name]="- - - - -"
    if command -v strace >/dev/null; then
        words "$cmd"
        strace -f -y -qq -e trace=openat,open,read,pread64,lseek,mmap -o "$tmp/$name.strace" \
            "${W[@]}" >/dev/null 2>&1
        line=$($lib strace-io "$tmp/$name.strace" "$core")
        eval "$(sed 's/\([a-z_]*\)=/s_\1=/g' <<<"$line")"
        S[$name]="$s_calls $s_bytes $s_heap_bytes $s_segs $s_mmap_bytes"
    fi
    best= cb= ch= cs=
    for _ in 1 2 3; do
        $lib evict "$core"
        t0=$(date +%s%N); run_cmd "$cmd" >/dev/null 2>&1; t1=$(date +%s%N)
        ms=$(( (t1 - t0) / 1000000 ))
        [ -z "$best" ] || [ "$ms" -lt "$best" ] && best=$ms
        eval "$($lib resident "$core" | sed 's/\([a-z_]*\)=/r_\1=/g')"
        # keep the smallest footprint seen (readahead varies a little between runs)
        if [ -z "$cb" ] || [ "$r_bytes" -lt "$cb" ]; then cb=$r_bytes ch=$r_heap_bytes cs=$r_segs; fi
    done
    K[$name]="$best $cb $ch $cs $r_segs_total"
    log "$name: read ${s_bytes:-?} B by syscalls, cold ${best} ms, $cb B brought in"
done
cat "$core" >/dev/null   # leave it warm

eval "$($lib segs "$core")"
for entry in "${tools[@]}"; do
    name=${entry%%	*}
    read -r tmin tmed <<<"${T[$name]}"
    read -r sc sb sh ss sm <<<"${S[$name]}"
    read -r cms cb ch cs _ <<<"${K[$name]}"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "${C[$name]}" \
        "$tmin" "$tmed" "${R[$name]}" "$sc" "$sb" "$sh" "$ss" "$sm" "$cms" "$cb" "$ch" "$cs" \
        "$segs_total" >>"$res"
done
heap=$heap_size
{
    printf '#core\t%s\n#core_size\t%s\n#exe\t%s\n#threads\t%s\n#segs\t%s\n#heap\t%s\n' \
        "$core" "$core_size" "$exe" "$(cut -f1 <<<"${C[floor]}")" "$segs_total" "$heap"
    dev=$(basename "$(df --output=source "$core" | tail -n1)")
    parent=$(lsblk -no pkname "/dev/$dev" 2>/dev/null | head -n1)
    ra=$(cat "/sys/block/${parent:-$dev}/queue/read_ahead_kb" 2>/dev/null || echo '?')
    printf '#timer\t%s\n#rss_runs\t%s\n#read_ahead_kb\t%s\n' "$timer" "$rss_runs" "$ra"
    printf '#load\t%s -> %s (%s CPUs)\n' "$load0" "$(cut -d' ' -f1 /proc/loadavg)" "$(nproc)"
} >>"$res"
$lib report "$res"
[ -n "${BENCH_KEEP_TSV:-}" ] && cp "$res" "$BENCH_KEEP_TSV"
exit 0
