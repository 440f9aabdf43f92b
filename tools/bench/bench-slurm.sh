#!/bin/bash
# bench-slurm.sh [--nodes "1 2 4"] [--per-node N] [--coreq BINARY]
#
# Benchmarks `coreq snapshot --slurm` against gdb's gcore of every rank through
# `srun --overlap`, side by side in one run, on a real Slurm cluster started here
# (tools/fixtures/slurm/cluster.sh: 4 nodes on this machine, each its own namespaces). A
# report, not a test: exits 0 whatever the numbers (non-zero only when it cannot run).
#
#   * the job: tests/fixture/src/slurmjob.c ring (a receive cycle through every rank) on
#     Debian's Open MPI 4.1, `srun --mpi=pmix -N K -n K*N` for K in --nodes, N ranks per node
#     (default 1), in the environment a user has (no MALLOC_ARENA_MAX: gcore writes what a
#     user would get);
#   * coreq: `coreq snapshot --slurm JOB --types DONORS -o DIR` (DIR on the front end's /tmp,
#     which no node sees: the cores come back through srun's output), from the command to
#     its verdict line; each rank's stop (held_ms: from its stop to its resume, the wait for
#     the other nodes included) and the bytes written;
#   * gcore: one `srun --jobid=J --overlap --ntasks-per-node=1` whose task on each node runs
#     gdb's gcore of that node's ranks one after the other into a directory every node sees,
#     then `coreq mqd` of each core and the job view of those documents: from the command to
#     the verdict, the longest gcore (its rank is stopped that long), the bytes;
#   * the parts a 1,000-node run is made of, measured here: srun's start of a step on K
#     nodes, a node's read, the bytes per rank through srun, the verdict's time per rank.
# Targets printed as PASS/MISS (at 4 nodes): >= 20x faster and >= 50x fewer bytes than
# gcore, every rank stopped <= 50 ms, the verdict within 3 s.
# Output also saved to build/bench/slurm-result.txt.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
nodes_list="1 2 4" per=1 coreq=
while [ $# -gt 0 ]; do
    case $1 in
        --nodes) nodes_list=$2; shift 2 ;;
        --per-node) per=$2; shift 2 ;;
        --coreq) coreq=$(realpath "$2"); shift 2 ;;
        -h|--help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench-slurm: unknown argument $1" >&2; exit 2 ;;
    esac
done
log() { echo "bench-slurm: $*" >&2; }
die() { log "$*"; exit 1; }
install=1
. "$here/benchlib.sh"
for c in slurmctld:slurmctld slurmd:slurmd srun:slurm-client munged:munge mpicc:libopenmpi-dev gcore:gdb; do
    want_pkg "${c%%:*}" "${c#*:}" || die "${c%%:*} needed (${c#*:}; tools/install-deps.sh)"
done
if [ -z "$coreq" ]; then
    make -s -C "$root" build/coreq >&2 || die "make build/coreq failed"
    coreq=$root/build/coreq
fi
base=$(mktemp -d /tmp/coreq-bench-slurm.XXXXXX)
chmod 755 "$base"   # munged wants every directory above its socket searchable by all
cluster=$base/cluster
out=$root/build/bench/slurm
rm -rf "$out"; mkdir -p "$out"
cleanup() {
    [ -n "${SLURM_CONF:-}" ] && scancel --user "$(id -u)" >/dev/null 2>&1
    "$root/tools/fixtures/slurm/cluster.sh" stop "$cluster" >/dev/null 2>&1
    rm -rf "$base"
}
trap cleanup EXIT
share=
case $coreq in /tmp/*) share=$(dirname "$coreq") ;; esac
eval "$(CLUSTER_SHARE=$share "$root/tools/fixtures/slurm/cluster.sh" start "$cluster")" || die "no cluster"
work=$cluster/work   # every node sees the cluster's directory
mkdir -p "$work"
exe=$work/slurmjob
mpicc -g -O2 -o "$exe" "$root/tests/fixture/src/slurmjob.c" || die "mpicc failed"
gzip -dc "$root/fixtures/mpi/donors/x86_64/ompi-types.so.gz" > "$work/ompi-types.so" &&
    gzip -dc "$root/fixtures/mpi/donors/x86_64/ompi-ob1-types.so.gz" > "$work/ompi-ob1-types.so" ||
    die "no x86_64 type donors"
donor=$work/ompi-types.so:$work/ompi-ob1-types.so
export OMPI_MCA_mpi_yield_when_idle=1
ms() { echo $(( $(date +%s%N) / 1000000 )); }

for k in $nodes_list; do
    n=$((k * per))
    log "$k node(s), $n ranks"
    # (--overcommit: a node here has 2 CPUs, a real one dozens)
    srun --job-name="bench$k" --mpi=pmix --overcommit -N "$k" -n "$n" -t 5 --chdir "$work" nice -n 19 "$exe" ring \
        > "$out/job$k.log" 2>&1 &
    jp=$!
    t=0
    while [ "$(grep -c '^rank ' "$out/job$k.log")" -lt "$n" ]; do
        sleep 0.2; t=$((t + 1))
        kill -0 $jp 2>/dev/null || die "the $k-node job ended: $(head -3 "$out/job$k.log")"
        [ $t -lt 300 ] || die "the $k-node job did not start"
    done
    sleep 1
    job=$(squeue -h -n "bench$k" -o %i | head -1)
    # the step's start on the nodes alone (srun's own cost)
    t0=$(ms); srun --jobid="$job" --overlap -N "$k" --ntasks-per-node=1 true; t1=$(ms)
    echo "$((t1 - t0))" > "$out/srun$k.ms"
    # coreq, from the command to the verdict
    t0=$(ms)
    "$coreq" snapshot --slurm "$job" --json --types "$donor" -o "$out/snap$k" > "$out/snap$k.json" 2> "$out/snap$k.err"
    t1=$(ms)
    echo "$((t1 - t0))" > "$out/snap$k.ms"
    # gcore of every rank through srun --overlap, then the verdict of those cores
    mkdir -p "$work/gcore$k"
    t0=$(ms)
    srun --jobid="$job" --overlap -N "$k" --ntasks-per-node=1 sh -c '
        for p in $(pgrep -x slurmjob); do
            s=$(date +%s%N); gcore -o "$0/core.$SLURMD_NODENAME" "$p" >/dev/null 2>&1
            echo $(( ($(date +%s%N) - s) / 1000000 ))
        done' "$work/gcore$k" > "$out/gcore$k.times" 2>/dev/null
    # each core's document, then the job view of them (as snapshot --slurm makes it: a job
    # of one rank has its verdict too)
    for c in "$work/gcore$k"/core.*[0-9]; do
        "$coreq" mqd --json --types "$donor" "$c" > "$c.mqd.json" 2>/dev/null
    done
    "$coreq" mqd --json --types "$donor" "$work/gcore$k"/core.*.mqd.json > "$out/gcore$k.json" 2>/dev/null
    t1=$(ms)
    echo "$((t1 - t0))" > "$out/gcore$k.ms"
    # the verdict's own time (the front end's share: the job view of the nodes' documents)
    t0=$(ms); "$coreq" mqd --json --types "$donor" "$out/snap$k"/rank*.mqd.json > /dev/null 2>&1; t1=$(ms)
    echo "$((t1 - t0))" > "$out/verdict$k.ms"
    du -cb "$work/gcore$k"/core.*[0-9] | tail -1 | cut -f1 > "$out/gcore$k.bytes"
    scancel "$job"
    sleep 1
done

python3 - "$out" "$per" $nodes_list <<'PY' | tee "$root/build/bench/slurm-result.txt"
import json, os, sys
out, per, ks = sys.argv[1], int(sys.argv[2]), [int(x) for x in sys.argv[3:]]
def num(name):
    try:
        return int(open(os.path.join(out, name)).read().split()[0])
    except (OSError, ValueError, IndexError):
        return 0
print(f"job: slurmjob ring (Open MPI 4.1, srun --mpi=pmix), {per} rank(s) per node; this machine, all nodes on it")
print(f"{'nodes':>5s} {'ranks':>5s} | {'coreq ms':>9s} {'held ms':>8s} {'bytes':>10s} | {'gcore ms':>9s} {'longest gcore':>13s} "
      f"{'bytes':>11s} | {'faster':>7s} {'fewer bytes':>11s} | verdict")
rows = {}
for k in ks:
    try:
        d = json.load(open(os.path.join(out, f"snap{k}.json")))
    except (OSError, ValueError):
        d = {}
    snaps = d.get("snapshots", [])
    held = max((s.get("held_ms", 0) for s in snaps), default=0)
    sb = sum(s.get("file_bytes", 0) for s in snaps) + sum(
        os.path.getsize(os.path.join(out, f"snap{k}", f)) for f in os.listdir(os.path.join(out, f"snap{k}"))
        if f.endswith(".mqd.json")) if os.path.isdir(os.path.join(out, f"snap{k}")) else 0
    gt = [int(x) for x in open(os.path.join(out, f"gcore{k}.times")).read().split()] if os.path.exists(
        os.path.join(out, f"gcore{k}.times")) else []
    cms, gms, gb = num(f"snap{k}.ms"), num(f"gcore{k}.ms"), num(f"gcore{k}.bytes")
    try:
        gv = json.load(open(os.path.join(out, f"gcore{k}.json"))).get("verdict", {}).get("text", "")
    except (OSError, ValueError):
        gv = ""
    v = (d.get("verdict") or {}).get("text", "")
    rows[k] = dict(cms=cms, held=held, sb=sb, gms=gms, gb=gb, n=len(snaps), same=v == gv, v=v)
    print(f"{k:5d} {len(snaps):5d} | {cms:9d} {held:8d} {sb:10d} | {gms:9d} {max(gt, default=0):13d} {gb:11d} | "
          f"{gms / max(cms, 1):6.1f}x {gb / max(sb, 1):10.0f}x | {'same as gcore' if v == gv else 'DIFFERS'}: {v[:60]}")
k = max(ks)
r = rows[k]
print(("PASS" if r["gms"] >= 20 * r["cms"] else "MISS") + f"  >= 20x faster than gcore through srun at {k} nodes: "
      f"{r['gms'] / max(r['cms'], 1):.1f}x")
srun_k = num(f"srun{k}.ms")
print(f"      (srun's start and end of a step of `true` on {k} nodes alone: {srun_k} ms, the floor of anything "
      f"that goes through srun; 20x would be {r['gms'] // 20} ms; coreq beyond srun's own: {r['cms'] - srun_k} ms, "
      f"gcore beyond it: {r['gms'] - srun_k} ms, {(r['gms'] - srun_k) / max(r['cms'] - srun_k, 1):.1f}x)")
print(("PASS" if r["gb"] >= 50 * r["sb"] else "MISS") + f"  >= 50x fewer bytes: {r['gb'] / max(r['sb'], 1):.0f}x")
print(("PASS" if 0 < r["held"] <= 50 else "MISS") + f"  every rank stopped <= 50 ms: the longest {r['held']} ms")
print(("PASS" if r["cms"] <= 3000 and r["same"] else "MISS") + f"  a {k}-node hung job's verdict within 3 s: "
      f"{r['cms']} ms ({'the same as gcore' if r['same'] else 'not the same as gcore'})")
# 1,000 nodes on paper, from the parts measured here
srun_ms = num(f"srun{k}.ms")
per_rank_bytes = r["sb"] / max(r["n"], 1)
verdict_ms = num(f"verdict{k}.ms")
transfer_ms = max(r["cms"] - srun_ms - r["held"] - verdict_ms, 0)
print(f"parts at {k} nodes: srun starts a step in {srun_ms} ms; a node reads its ranks and all resume within "
      f"{r['held']} ms; {per_rank_bytes / 1024:.0f} KiB per rank (its core and document) come back, its document "
      f"made on its node ({transfer_ms} ms for {r['n']} ranks, both); the job view of the documents takes "
      f"{verdict_ms} ms")
nodes, ranks = 1000, 1000 * 64
print(f"1,000 nodes x 64 ranks, on paper: srun's step start grows with its fan-out tree (Slurm's TreeWidth "
      f"50: 2 levels), say {srun_ms * 3} ms; the cut is each node's own read ({r['held']} ms for {per} rank(s); "
      f"64 ranks a node, read one after the other, about {r['held'] * 64 // max(per, 1)} ms: the per-node read "
      f"is what must become parallel); {ranks * per_rank_bytes / 2**30:.1f} GiB through one srun "
      f"(at the {r['n'] * per_rank_bytes / max(transfer_ms, 1) * 1000 / 2**20:.0f} MiB/s seen here: "
      f"{ranks * per_rank_bytes / max(r['n'] * per_rank_bytes / max(transfer_ms, 1) * 1000, 1):.0f} s; "
      f"a shared DIR takes that off srun); the per-rank documents "
      f"(made on the nodes, in parallel), the job view of 64,000 documents here {ranks * verdict_ms / max(r['n'], 1) / 1000:.0f} s at this rate")
PY
exit 0
