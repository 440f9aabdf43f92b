#!/bin/bash
# bench-bt.sh [--size 1G|2G] [--gcore] [--runs N] [--no-install] [--core CORE --exe EXE]
#             [--coreq BINARY]   (default: make build/coreq and use it)
#
# Benchmarks `coreq bt` (every thread's stack) against its peers on the 65-thread benchmark
# core made by make-bigcore.sh (built on demand under build/bench/; default --size 2G;
# --gcore uses gdb's gcore of the same program instead of the kernel core). A report, not
# a test: exits 0 whatever the numbers (non-zero only when it cannot run at all).
#
# Per tool: warm time (hyperfine, else a `date +%s%N` loop; min and median of N runs), max
# RSS (/usr/bin/time -f %M), threads and frames it printed (so one sees the work is
# comparable), bytes read from the core (strace -f -y: read/pread64 on the core's fd, by
# segment; mmap'd bytes) and how much of that is thread stack memory outside the part the
# unwinder walked. Then the table, peer/coreq ratios and PASS/MISS for the project's
# targets (coreq bt >= 5x faster than eu-stack and >= 50x faster than gdb by median, RSS
# <= 10 MB, no read of stack memory it does not walk, coreq info within 3x of the floor by
# median). Tools: coreq bt, coreq bt --json,
# eu-stack (all threads), gdb 'thread apply all bt', drgn (drgn-bt.py, python3-drgn); and
# the fixed cost of starting: /bin/true, coreq --help, coreq info, floor (mmap + phdrs +
# notes, floor.c).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
size=2G runs=20 install=1 kind=core core= exe= coreq=
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
        -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench-bt.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
log() { echo "bench-bt: $*" >&2; }
py=$(command -v python3) || { log "python3 needed"; exit 1; }
lib="$py $here/benchlib.py"

# ---- tools -------------------------------------------------------------------------
. "$here/benchlib.sh"
want_pkg hyperfine hyperfine || log "no hyperfine: timing with a date +%s%N loop"
want_pkg /usr/bin/time time || { log "/usr/bin/time missing (package time)"; exit 1; }
want_pkg strace strace || log "no strace: no byte counts"
want_pkg eu-stack elfutils || log "no eu-stack (elfutils): skipped"
want_pkg gdb gdb || log "no gdb: skipped"
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

tmp=$(mktemp -d /tmp/bench-bt.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# Each tool: a name in NAMES, its argument vector in the array CMD_<name> (no shell).
NAMES=()
add() { local n=$1; shift; NAMES+=("$n"); eval "CMD_${n//-/_}=(\"\$@\")"; }
add coreq "$coreq" bt "$core" "$exe"
add coreq-json "$coreq" bt --json "$core" "$exe"
command -v eu-stack >/dev/null && add eu-stack eu-stack --core "$core" -e "$exe"
command -v gdb >/dev/null && add gdb gdb -nx -batch -ex "thread apply all bt" "$exe" "$core"
[ "$have_drgn" = 1 ] && add drgn /usr/bin/python3 "$here/drgn-bt.py" "$core" "$exe"
# the fixed cost of starting (rows of their own, below the unwinders)
add true /bin/true
add coreq-help "$coreq" --help
add coreq-info "$coreq" info "$core" "$exe"
add floor "$floor" "$core"
start_rows="true coreq-help coreq-info floor"

cmd_of() { local v="CMD_${1//-/_}[@]"; C=("${!v}"); }
# hyperfine -N splits its command like a POSIX shell: quote words with blanks
hf_cmd() {
    local w s=
    cmd_of "$1"
    for w in "${C[@]}"; do
        case $w in *[[:space:]]*) s+="'$w' " ;; *) s+="$w " ;; esac
    done
    echo "${s% }"
}

count() { # TOOL OUTPUT-FILE -> "threads frames" the tool printed
    local f=$2
    case $1 in
        coreq) echo "$(grep -c '^thread ' "$f") $(grep -cE '^  #[0-9]+ ' "$f")" ;;
        coreq-json) $py -c 'import json,sys
d=json.load(open(sys.argv[1])); print(len(d["threads"]), sum(len(t["frames"]) for t in d["threads"]))' "$f" 2>/dev/null || echo "- -" ;;
        eu-stack) echo "$(grep -c '^TID ' "$f") $(grep -cE '^#[0-9]+ ' "$f")" ;;
        gdb) echo "$(grep -cE '^Thread [0-9]+ ' "$f") $(grep -cE '^#[0-9]+ ' "$f")" ;;
        drgn) echo "$(sed -n 's/^threads \([0-9]*\)$/\1/p' "$f") $(sed -n 's/^frames \([0-9]*\).*/\1/p' "$f")" ;;
        coreq-info) echo "$(sed -n 's/^threads: *\([0-9]*\).*/\1/p' "$f" | head -n1) -" ;;
        floor) echo "$(sed -n 's/^threads \([0-9]*\).*/\1/p' "$f") -" ;;
        *) echo "- -" ;;
    esac
}

# ---- warm: time, RSS, threads and frames ---------------------------------------------
load0=$(cut -d' ' -f1 /proc/loadavg)
log "core $core ($core_size bytes); load average $load0; warming the page cache"
cat "$core" >/dev/null
res=$tmp/results.tsv
printf 'tool\tthreads\tframes\trc\tmin_ms\tmed_ms\trss_kb\tsys_calls\tsys_bytes\tsys_heap\tsys_segs\tmmap_bytes\tstack_bytes\tstack_unwalked\tsegs_total\n' >"$res"
timer="hyperfine -N, 3 warm-ups, $runs runs"
command -v hyperfine >/dev/null || timer="date +%s%N loop, 3 warm-ups, $runs runs"
rss_runs=3
declare -A T R N RC
for name in "${NAMES[@]}"; do
    cmd_of "$name"
    "${C[@]}" >"$tmp/$name.out" 2>"$tmp/$name.err"
    RC[$name]=$?
    N[$name]=$(count "$name" "$tmp/$name.out")
    log "$name: exit ${RC[$name]}, threads/frames ${N[$name]}; timing"
    if command -v hyperfine >/dev/null; then
        hyperfine -N -i --style none --warmup 3 --runs "$runs" \
            --export-json "$tmp/$name.json" "$(hf_cmd "$name")" >/dev/null 2>&1
        T[$name]=$($lib hyperfine "$tmp/$name.json" 2>/dev/null || echo "- -")
    else
        for _ in 1 2 3; do "${C[@]}" >/dev/null 2>&1; done
        ms=()
        for ((i = 0; i < runs; i++)); do
            t0=$(date +%s%N); "${C[@]}" >/dev/null 2>&1; t1=$(date +%s%N)
            ms+=("$(( (t1 - t0) / 1000 ))e-3")
        done
        T[$name]=$($lib stats "${ms[@]}")
    fi
    max=0
    for ((i = 0; i < rss_runs; i++)); do
        /usr/bin/time -f %M -o "$tmp/rss" "${C[@]}" >/dev/null 2>&1
        kb=$(tail -n1 "$tmp/rss"); [ "$kb" -gt "$max" ] 2>/dev/null && max=$kb
    done
    R[$name]=$max
done

# ---- I/O: what each tool read of the core (strace), stack memory outside the walk ------
# The threads' stack pointers come from coreq's model (coreq threads --json); the walked
# part of a stack runs from the stack pointer (less the red zone) up to the highest CFA
# that coreq bt --json reports (without CFAs only reads below the stack pointer count).
"$coreq" threads --json "$core" "$exe" >"$tmp/threads.json" 2>/dev/null
declare -A S
for name in "${NAMES[@]}"; do
    S[$name]="- - - - - - -"
    command -v strace >/dev/null || continue
    case " $start_rows " in *" $name "*) [ "$name" = coreq-info ] || continue ;; esac
    cmd_of "$name"
    strace -f -y -qq -e trace=openat,open,read,pread64,lseek,mmap -o "$tmp/$name.strace" \
        "${C[@]}" >/dev/null 2>&1
    line=$($lib strace-io "$tmp/$name.strace" "$core" --stacks "$tmp/threads.json" \
        --walk "$tmp/coreq-json.out")
    eval "$(sed 's/\([a-z_]*\)=/s_\1=/g' <<<"$line")"
    S[$name]="$s_calls $s_bytes $s_heap_bytes $s_segs $s_mmap_bytes $s_stack_bytes $s_stack_unwalked"
    log "$name: read ${s_bytes:-?} B of the core, ${s_stack_bytes:-?} B of thread stacks (${s_stack_unwalked:-?} B outside the walk)"
done

eval "$($lib segs "$core")"
for name in "${NAMES[@]}"; do
    read -r tmin tmed <<<"${T[$name]}"
    read -r nthr nfr <<<"${N[$name]}"
    read -r sc sb sh ss sm sk su <<<"${S[$name]}"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$nthr" "$nfr" \
        "${RC[$name]}" "$tmin" "$tmed" "${R[$name]}" "$sc" "$sb" "$sh" "$ss" "$sm" "$sk" "$su" \
        "$segs_total" >>"$res"
done
{
    printf '#core\t%s\n#core_size\t%s\n#exe\t%s\n#threads\t%s\n#segs\t%s\n#heap\t%s\n' \
        "$core" "$core_size" "$exe" "$(cut -d' ' -f1 <<<"${N[floor]}")" "$segs_total" "$heap_size"
    printf '#timer\t%s\n#rss_runs\t%s\n#start_rows\t%s\n' "$timer" "$rss_runs" "$start_rows"
    if grep -q '"cfa"' "$tmp/coreq-json.out" 2>/dev/null; then
        printf '#walk_top\tthe highest CFA coreq bt --json reports\n'
    else
        printf '#walk_top\tthe stack segment end (coreq bt --json gives no CFA: only reads below the stack pointer count)\n'
    fi
    printf '#load\t%s -> %s (%s CPUs)\n' "$load0" "$(cut -d' ' -f1 /proc/loadavg)" "$(nproc)"
} >>"$res"
$lib report-bt "$res"
[ -n "${BENCH_KEEP_TSV:-}" ] && cp "$res" "$BENCH_KEEP_TSV"
exit 0
