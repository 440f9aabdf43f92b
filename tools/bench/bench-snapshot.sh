#!/bin/bash
# bench-snapshot.sh [--ranks N] [--runs N] [--coreq BINARY]
#
# Benchmarks coreq's live snapshots against gdb's gcore and the live stack tools, side by
# side in one run, with ratios. A report, not a test: exits 0 whatever the numbers
# (non-zero only when it cannot run).
#
#   * the job: tools/bench/mqd_ring.c (every rank blocked in MPI_Waitall on a receive ring)
#     on Debian's Open MPI 4.1, `mpirun --oversubscribe -np N` (default 64) with ob1, in the
#     environment a user has (BENCH_ENV="MALLOC_ARENA_MAX=1" makes gcore's cores smaller:
#     one malloc arena per rank), left running (no core is made);
#   * coreq snapshot --job RANK0 -o DIR (one cut: all ranks stopped, then read, with their
#     stacks and MQD views, then resumed): wall time, the longest any rank was stopped
#     (coreq's stopped_ms: from its stop to its write), bytes written; the same with only
#     the stacks (no MQD: --mqd-plugin /nonexistent); and stacks only rank by rank
#     (`coreq snapshot PID...`, no cut), for the per-rank stop of a stacks-only snapshot;
#   * gdb's gcore of every rank, one after the other (as a user would): wall time, the
#     longest single gcore (each holds its rank stopped for its whole run), bytes written;
#   * the stacks of one rank, hyperfine -N: coreq bt --pid, eu-stack -p, gdb -p -batch
#     "thread apply all bt";
#   * the job is killed at the end (its process group).
# Targets printed as PASS/MISS: snapshot >= 50x fewer bytes and >= 20x faster than gcore of
# every rank; each rank stopped at most 50 ms for a stacks-only snapshot.
# Output also saved to build/bench/snapshot-result.txt.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ranks=64 runs=10 coreq=
while [ $# -gt 0 ]; do
    case $1 in
        --ranks) ranks=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --coreq) coreq=$(realpath "$2"); shift 2 ;;
        -h|--help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench-snapshot: unknown argument $1" >&2; exit 2 ;;
    esac
done
log() { echo "bench-snapshot: $*" >&2; }
die() { log "$*"; exit 1; }
. "$here/benchlib.sh"
want_pkg hyperfine hyperfine || die "hyperfine needed"
want_pkg mpicc libopenmpi-dev || die "mpicc needed (libopenmpi-dev)"
want_pkg mpirun openmpi-bin || die "mpirun needed (openmpi-bin)"
want_pkg gcore gdb || die "gdb needed"
want_pkg eu-stack elfutils || die "eu-stack needed (elfutils)"
if [ -z "$coreq" ]; then
    make -s -C "$root" build/coreq >&2 || die "make build/coreq failed"
    coreq=$root/build/coreq
fi
out=$root/build/bench/snapshot
rm -rf "$out"; mkdir -p "$out"
exe=$out/mqd_ring
mpicc -g -O1 -o "$exe" "$here/mqd_ring.c" || die "mpicc failed"
gzip -dc "$root/fixtures/mpi/donors/x86_64/ompi-types.so.gz" > "$out/ompi-types.so" &&
    gzip -dc "$root/fixtures/mpi/donors/x86_64/ompi-ob1-types.so.gz" > "$out/ompi-ob1-types.so" ||
    die "no x86_64 type donors"
donor=$out/ompi-types.so:$out/ompi-ob1-types.so

log "starting a $ranks-rank job"
(cd "$out" && exec setsid env -i PATH=/usr/bin:/bin HOME=/tmp OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader \
    OMPI_MCA_opal_signal= OMPI_MCA_mpi_yield_when_idle=1 ${BENCH_ENV:-} \
    mpirun --allow-run-as-root --oversubscribe -np "$ranks" "$exe" >run.log 2>&1) &
job=$!
trap 'kill -KILL -- -$job 2>/dev/null; wait $job 2>/dev/null' EXIT
t=0
while [ "$(ls "$out"/rank*.pid 2>/dev/null | wc -l)" -lt "$ranks" ]; do
    sleep 0.5; t=$((t + 1))
    kill -0 $job 2>/dev/null || die "the job ended early (see $out/run.log)"
    [ $t -lt 600 ] || die "the job did not start"
done
sleep 2
rank0=$(cat "$out/rank0.pid")
pids=$(cat "$out"/rank*.pid)

ms() { date +%s%N; }
# coreq snapshot --job: with the MQD views, then stacks only
mkdir -p "$out/snap" "$out/snap-stacks"
t0=$(ms)
"$coreq" snapshot --json --job --max-stop 60000 --types "$donor" -o "$out/snap" "$rank0" > "$out/snap.json" ||
    die "coreq snapshot --job failed"
t1=$(ms)
"$coreq" snapshot --json --job --max-stop 60000 --mqd-plugin /nonexistent -o "$out/snap-stacks" "$rank0" \
    > "$out/snap-stacks.json" || die "coreq snapshot --job (stacks only) failed"
t2=$(ms)
# stacks only, each process on its own (no job cut): each rank stopped only while it is read
mkdir -p "$out/snap-each"
"$coreq" snapshot --json --max-stop 60000 --mqd-plugin /nonexistent -o "$out/snap-each" $pids \
    > "$out/snap-each.json" || die "coreq snapshot PID... (stacks only) failed"
t2=$(ms)
# gcore of every rank, one after the other, each timed (its rank is stopped that long)
mkdir -p "$out/gcore"
: > "$out/gcore.times"
for p in $pids; do
    g0=$(ms)
    gcore -o "$out/gcore/core" "$p" >/dev/null 2>&1 || log "gcore of $p failed"
    g1=$(ms)
    echo $(( (g1 - g0) / 1000000 )) >> "$out/gcore.times"
done
t3=$(ms)
# the stacks of one rank, three ways
hyperfine -N -w 2 -r "$runs" -i --export-json "$out/bt.json" \
    "$coreq bt --pid $rank0" "eu-stack -p $rank0" \
    "gdb -nx -batch -ex 'thread apply all bt' -p $rank0" >/dev/null 2>&1 || log "hyperfine failed"

python3 - "$out" "$ranks" $((t1 - t0)) $((t2 - t1)) $((t3 - t2)) <<'PY' | tee "$root/build/bench/snapshot-result.txt"
import json, os, sys
out, ranks, snap_ns, stacks_ns, gcore_ns = sys.argv[1], int(sys.argv[2]), *map(int, sys.argv[3:])
snap = json.load(open(f"{out}/snap.json"))["snapshots"]
stk = json.load(open(f"{out}/snap-stacks.json"))["snapshots"]
each = json.load(open(f"{out}/snap-each.json"))["snapshots"]
gsizes = [os.path.getsize(os.path.join(out, "gcore", f)) for f in os.listdir(os.path.join(out, "gcore"))]
gtimes = [int(x) for x in open(f"{out}/gcore.times").read().split()]
sb, kb, gb = sum(s["file_bytes"] for s in snap), sum(s["file_bytes"] for s in stk), sum(gsizes)
print(f"job: {ranks} ranks of mqd_ring (Open MPI 4.1, ob1), {len(gsizes)} gcore cores")
print(f"{'':34s}{'wall ms':>10s}{'longest stop ms':>17s}{'bytes':>14s}")
print(f"{'coreq snapshot --job (stacks+MQD)':34s}{snap_ns / 1e6:10.0f}{max(s['stopped_ms'] for s in snap):17d}{sb:14d}")
print(f"{'coreq snapshot --job (stacks)':34s}{stacks_ns / 1e6:10.0f}{max(s['stopped_ms'] for s in stk):17d}{kb:14d}")
print(f"{'coreq snapshot PID... (stacks, one by one)':34s}{'':>10s}{max(s['stopped_ms'] for s in each):17d}{sum(s['file_bytes'] for s in each):14d}")
print(f"{'gcore of every rank':34s}{gcore_ns / 1e6:10.0f}{max(gtimes):17d}{gb:14d}")
fewer, faster = gb / max(sb, 1), gcore_ns / max(snap_ns, 1)
print(f"snapshot vs gcore: {fewer:.0f}x fewer bytes, {faster:.1f}x faster (with the MQD views)")
print(f"stacks-only snapshot vs gcore: {gb / max(kb, 1):.0f}x fewer bytes, {gcore_ns / max(stacks_ns, 1):.1f}x faster")
# a stacks-only rank's stop: the time between its own stop and its resume is at most the
# whole hold; the per-rank number is how long the job was held when that rank was written
per_rank = max(s["stopped_ms"] for s in each)
try:
    hf = json.load(open(f"{out}/bt.json"))["results"]
    base = hf[0]["median"]
    for r in hf:
        print(f"  {r['command'][:48]:48s} median {r['median'] * 1000:8.1f} ms  ({r['median'] / base:.1f}x coreq)")
except (OSError, ValueError, KeyError, IndexError):
    print("  (no stack timings)")
print(("PASS" if fewer >= 50 else "MISS") + f"  >= 50x fewer bytes than gcore: {fewer:.0f}x")
print(("PASS" if faster >= 20 else "MISS") + f"  >= 20x faster than gcore of every rank: {faster:.1f}x")
print(("PASS" if per_rank <= 50 else "MISS") + f"  each rank stopped <= 50 ms (stacks-only, rank by rank): {per_rank} ms; "
      f"as one cut (--job) every rank is held from the first stop to its write: "
      f"{max(s['stopped_ms'] for s in stk)} ms at most")
PY
exit 0
