#!/bin/bash
# bench-mqd.sh [--sizes "8 16 32 64"] [--runs N] [--coreq BINARY] [--no-install]
#
# Benchmarks `coreq mqd` on kernel cores of real Open MPI 4.1 jobs. A report, not a test: exits 0 whatever the numbers
# (non-zero only when it cannot run).
#
#   * program: tools/bench/mqd_ring.c against Debian's Open MPI 4.1 (mpicc); for each
#     job size N, `mpirun --oversubscribe -np N` with ob1 (OMPI_MCA_pml=ob1,
#     btl=self,vader, mpi_yield_when_idle=1); every rank posts a receive from its right
#     neighbour (a receive cycle over all N) and a wildcard receive on a dup'ed
#     communicator, moves into rank<R>/ and blocks; when all N have written rank<R>.pid,
#     ONE `kill -ABRT` hits all ranks, and the kernel writes build/bench/mqd/N/rank<R>/core
#     (kept while newer than the program: the cores are made once);
#   * DLL: coreq's own for Open MPI 4.1 (the default; all three queues), and Open MPI's
#     (--mqd-vendor) for one rank;
#   * types: the x86_64 type donors fixtures/mpi/donors/x86_64/ompi-types.so.gz and
#     ompi-ob1-types.so.gz;
#   * timing (warm page cache, hyperfine -N): `coreq mqd --json` on rank 0's core (one
#     rank, N runs), and the job view `coreq mqd --json CORES...` over all N cores for
#     each N (per-rank phase in parallel, default workers = CPUs);
#   * table: median and min wall time, CPU time (user+sys) and CPU use (CPU/wall: 2.0 means
#     both cores busy), ms per rank (flat = linear growth), deadlock found;
#     PASS/MISS for the targets: one rank <= 20 ms, 64 ranks <= 2 s using both cores,
#     time linear in ranks (ms per rank at 64 within 25% of that at 8).
# Output also saved to build/bench/mqd-result.txt.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
sizes="8 16 32 64" runs=20 coreq= install=1
while [ $# -gt 0 ]; do
    case $1 in
        --sizes) sizes=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --coreq) coreq=$(realpath "$2"); shift 2 ;;
        --no-install) install=0; shift ;;
        -h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench-mqd.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
log() { echo "bench-mqd: $*" >&2; }
die() { log "$*"; exit 1; }

. "$here/benchlib.sh"
want_pkg hyperfine hyperfine || die "hyperfine needed"
want_pkg mpicc libopenmpi-dev || die "mpicc needed (libopenmpi-dev)"
want_pkg mpirun openmpi-bin || die "mpirun needed (openmpi-bin)"
if [ -z "$coreq" ]; then
    make -s -C "$root" build/coreq >&2 || die "make build/coreq failed"
    coreq=$root/build/coreq
fi
out=$root/build/bench/mqd
mkdir -p "$out"
exe=$out/mqd_ring
if [ ! -x "$exe" ] || [ "$here/mqd_ring.c" -nt "$exe" ]; then
    mpicc -g -O1 -o "$exe" "$here/mqd_ring.c" || die "mpicc failed"
fi
gzip -dc "$root/fixtures/mpi/donors/x86_64/ompi-types.so.gz" > "$out/ompi-types.so" &&
    gzip -dc "$root/fixtures/mpi/donors/x86_64/ompi-ob1-types.so.gz" > "$out/ompi-ob1-types.so" ||
    die "no x86_64 type donors"
donor=$out/ompi-types.so:$out/ompi-ob1-types.so
[ "$(cat /proc/sys/kernel/core_pattern)" = core ] || echo core > /proc/sys/kernel/core_pattern ||
    die "core_pattern must be 'core'"

# make_job N: kernel cores of an N-rank job in $out/N/rank*/core
make_job() {
    local n=$1 d=$out/$1
    if [ -f "$d/done" ] && [ "$d/done" -nt "$exe" ]; then return 0; fi
    rm -rf "$d"; mkdir -p "$d"
    log "making the cores of a $n-rank job"
    (cd "$d" && ulimit -c unlimited && exec setsid env -i PATH=/usr/bin:/bin HOME=/tmp \
        MALLOC_ARENA_MAX=1 OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OMPI_MCA_opal_signal= \
        OMPI_MCA_mpi_yield_when_idle=1 \
        mpirun --allow-run-as-root --oversubscribe -np "$n" "$exe" >run.log 2>&1) &
    local job=$! t=0
    while [ "$(ls "$d"/rank*.pid 2>/dev/null | wc -l)" -lt "$n" ]; do
        sleep 0.5; t=$((t + 1))
        kill -0 $job 2>/dev/null || die "the $n-rank job ended early (see $d/run.log)"
        [ $t -lt 600 ] || { kill -- -$job 2>/dev/null; die "the $n-rank job did not start"; }
    done
    sleep 1
    local pids
    pids=$(cat "$d"/rank*.pid)
    # all at once: each rank starts dumping before mpirun reacts to the first death
    kill -ABRT $pids
    for p in $pids; do while kill -0 "$p" 2>/dev/null; do sleep 0.2; done; done
    kill -KILL -- -$job 2>/dev/null; wait $job 2>/dev/null
    local have
    have=$(ls "$d"/rank*/core 2>/dev/null | wc -l)
    [ "$have" = "$n" ] || die "$n-rank job: $have cores of $n"
    touch "$d/done"
}
for n in $sizes; do make_job "$n"; done

cpus=$(nproc)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# time_cmd NAME RUNS CMD...: hyperfine JSON into $tmp/NAME.json
time_cmd() {
    local name=$1 n=$2; shift 2
    hyperfine -N -w 2 -r "$n" -i --export-json "$tmp/$name.json" "$*" >/dev/null 2>&1 ||
        die "hyperfine failed for $name"
}
first=$(ls "$out"/$(echo $sizes | awk '{print $1}')/rank0/core)
time_cmd one "$runs" "$coreq" mqd --json --types "$donor" -e "$exe" "$first"
time_cmd vendor "$runs" "$coreq" mqd --json --mqd-vendor --types "$donor" -e "$exe" "$first"
for n in $sizes; do
    time_cmd "job$n" 5 "$coreq" mqd --json --types "$donor" -e "$exe" $(ls "$out/$n"/rank*/core | sort -V)
    "$coreq" mqd --json --types "$donor" -e "$exe" $(ls "$out/$n"/rank*/core | sort -V) > "$tmp/job$n.out" 2>/dev/null
done
python3 - "$tmp" "$cpus" $sizes <<'PY' | tee "$root/build/bench/mqd-result.txt"
import json, sys
tmp, cpus, sizes = sys.argv[1], int(sys.argv[2]), [int(x) for x in sys.argv[3:]]
def res(name):
    r = json.load(open(f"{tmp}/{name}.json"))["results"][0]
    ts = sorted(r["times"])
    return {"med": ts[len(ts) // 2] * 1000, "min": ts[0] * 1000, "cpu": (r["user"] + r["system"]) * 1000}
one = res("one")
print(f"coreq mqd with coreq's Open MPI 4.1 DLL (and Open MPI's own, Debian libopenmpi3), {cpus} CPU(s), warm page cache")
print(f"{'what':<28} {'median ms':>10} {'min ms':>8} {'CPU ms':>8} {'CPU use':>8} {'ms/rank':>8}  finding")
print(f"{'one rank':<28} {one['med']:>10.1f} {one['min']:>8.1f} {one['cpu']:>8.1f} {one['cpu'] / one['med']:>8.2f} {one['med']:>8.1f}")
v = res("vendor")
print(f"{'one rank, Open MPI DLL':<28} {v['med']:>10.1f} {v['min']:>8.1f} {v['cpu']:>8.1f} {v['cpu'] / v['med']:>8.2f} {v['med']:>8.1f}")
per = {}
for n in sizes:
    r = res(f"job{n}")
    d = json.load(open(f"{tmp}/job{n}.out"))
    cyc = d["deadlocks"][0]["cycle"] if d["deadlocks"] else []
    found = f"cycle of {len(cyc) - 1} ranks" if cyc else "no deadlock"
    per[n] = r["med"] / n
    print(f"{'job view, ' + str(n) + ' ranks':<28} {r['med']:>10.1f} {r['min']:>8.1f} {r['cpu']:>8.1f} {r['cpu'] / r['med']:>8.2f} {per[n]:>8.1f}  {found}, {len(d['failed'])} failed")
print()
ok1 = one["med"] <= 20
print(f"{'PASS' if ok1 else 'MISS'}  one rank <= 20 ms: {one['med']:.1f} ms")
if 64 in sizes:
    r = res("job64")
    ok = r["med"] <= 2000 and (cpus < 2 or r["cpu"] / r["med"] >= 1.5)
    print(f"{'PASS' if ok else 'MISS'}  64 ranks <= 2 s using both cores: {r['med']:.0f} ms, CPU use {r['cpu'] / r['med']:.2f}")
lo, hi = sizes[0], sizes[-1]
lin = per[hi] <= per[lo] * 1.25
print(f"{'PASS' if lin else 'MISS'}  linear in ranks: {per[lo]:.1f} ms/rank at {lo}, {per[hi]:.1f} ms/rank at {hi}")
PY
