#!/bin/bash
# bench-stacks.sh [--coreq BINARY] [--no-install] [--million]
#
# Benchmarks `coreq stacks` (the job-wide stack tree). A report, not a test: exits 0
# whatever the numbers (non-zero only when it cannot run).
#
#   * real: the 64 kernel cores of bench-mqd.sh's 64-rank Open MPI job (made by it when
#     missing): `coreq stacks CORES...` end to end (every core walked), hyperfine;
#   * synthetic: the 64 cores' `coreq bt --json` documents, their rank ids dropped (tasks by
#     input order), as 100 variants of which 3 diverge (a different innermost function);
#     10,000 ranks merged by one `coreq stacks`, and with --million 1,000,000 ranks merged
#     in steps as a launcher would run them: 1,000 merges of 1,000 documents (xargs -P
#     CPUs), then one merge of the 1,000 trees;
#   * table: wall time, max RSS (/usr/bin/time), distinct leaf classes; PASS/MISS for the
#     targets: 1,000,000 ranks in <= 60 s and <= 1 GB on this machine.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
coreq= install=1 million=0
while [ $# -gt 0 ]; do
    case $1 in
        --coreq) coreq=$(realpath "$2"); shift 2 ;;
        --no-install) install=0; shift ;;
        --million) million=1; shift ;;
        -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench-stacks.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
log() { echo "bench-stacks: $*" >&2; }
die() { log "$*"; exit 1; }
. "$here/benchlib.sh"
want_pkg hyperfine hyperfine || die "hyperfine needed"
want_pkg /usr/bin/time time || die "/usr/bin/time needed (package time)"
if [ -z "$coreq" ]; then
    make -s -C "$root" build/coreq >&2 || die "make build/coreq failed"
    coreq=$root/build/coreq
fi
job=$root/build/bench/mqd/64
if [ ! -f "$job/done" ]; then
    log "making the 64-rank job's cores (bench-mqd.sh)"
    args=(--sizes 64 --runs 1)
    [ "$install" = 1 ] || args+=(--no-install)
    "$here/bench-mqd.sh" "${args[@]}" >/dev/null || die "bench-mqd.sh could not make the cores"
fi
exe=$root/build/bench/mqd/mqd_ring
cores=("$job"/rank*/core)
[ "${#cores[@]}" = 64 ] || die "expected 64 cores in $job"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cpus=$(nproc)

# real: 64 cores, end to end
hyperfine -N -w 1 -r 5 --export-json "$tmp/real.json" "$coreq stacks --json -e $exe ${cores[*]}" >/dev/null 2>&1 ||
    die "coreq stacks on the 64 cores failed"
real_ms=$(python3 -c "import json,statistics;print('%.0f' % (1000*statistics.median(json.load(open('$tmp/real.json'))['results'][0]['times'])))")
"$coreq" stacks --json -e "$exe" "${cores[@]}" > "$tmp/real-tree.json"
real_rss=$( { /usr/bin/time -f %M "$coreq" stacks --json -e "$exe" "${cores[@]}" >/dev/null; } 2>&1 | tail -1)

# synthetic documents
mkdir -p "$tmp/docs"
for i in "${!cores[@]}"; do
    "$coreq" bt --json -e "$exe" "${cores[$i]}" > "$tmp/docs/real$i.json" 2>/dev/null
done
python3 - "$tmp/docs" <<'PY'
import glob, json, os, sys
d = sys.argv[1]
real = [json.load(open(f)) for f in sorted(glob.glob(os.path.join(d, "real*.json")))]
for v in range(100):
    doc = dict(real[v % len(real)])
    doc.pop("task", None), doc.pop("task_source", None)
    if v in (17, 51, 88):  # a few ranks elsewhere
        doc = json.loads(json.dumps(doc))
        doc["threads"][0]["frames"][0]["function"] = f"divergent_{v}"
        doc["threads"][0]["frames"][0]["demangled"] = None
    json.dump(doc, open(os.path.join(d, f"v{v:02d}.json"), "w"))
PY
docs=("$tmp"/docs/v*.json)
# args N: N document paths, cycling through the variants
args() { local n=$1 i; for ((i = 0; i < n; i++)); do echo "${docs[i % 100]}"; done; }
args 10000 > "$tmp/10k.args"
s=$(date +%s%N)
# one command line (xargs would split it into several runs)
mapfile -t list < "$tmp/10k.args"
rss10k=$( { /usr/bin/time -f %M "$coreq" stacks --json "${list[@]}" > "$tmp/10k.json"; } 2>&1 | tail -1)
e=$(date +%s%N)
t10k=$(( (e - s) / 1000000 ))
classes10k=$(python3 -c "import json;d=json.load(open('$tmp/10k.json'));print(len(d['classes']), d['task_count'])")

t1m=- rss1m=- classes1m=-
if [ "$million" = 1 ]; then
    args 1000 > "$tmp/1k.args"
    mkdir -p "$tmp/trees"
    s=$(date +%s%N)
    # 1,000 merges of 1,000 documents, CPUs at a time; the max RSS of each kept
    seq 0 999 | xargs -P "$cpus" -I{} sh -c \
        "/usr/bin/time -f %M -o '$tmp/trees/{}.rss' '$coreq' stacks --json \$(cat '$tmp/1k.args') > '$tmp/trees/{}.json'"
    rss_final=$( { /usr/bin/time -f %M "$coreq" stacks --json "$tmp"/trees/*.json > "$tmp/1m.json"; } 2>&1 | tail -1)
    e=$(date +%s%N)
    t1m=$(( (e - s) / 1000000 ))
    rss_steps=$(cat "$tmp"/trees/*.rss | sort -n | tail -1)
    rss1m=$(( rss_final > rss_steps ? rss_final : rss_steps ))
    classes1m=$(python3 -c "import json;d=json.load(open('$tmp/1m.json'));print(len(d['classes']), d['task_count'])")
fi

echo "coreq stacks ($(nproc) CPUs)"
printf '%-40s %10s %10s %s\n' "run" "wall ms" "max RSS" "classes tasks"
printf '%-40s %10s %10s %s\n' "64 real rank cores, end to end" "$real_ms" "$((real_rss / 1024)) MB" \
    "$(python3 -c "import json;d=json.load(open('$tmp/real-tree.json'));print(len(d['classes']), d['task_count'])")"
printf '%-40s %10s %10s %s\n' "10,000 synthetic documents, one merge" "$t10k" "$((rss10k / 1024)) MB" "$classes10k"
if [ "$million" = 1 ]; then
    printf '%-40s %10s %10s %s\n' "1,000,000 documents, 1,000 x 1,000 + 1" "$t1m" "$((rss1m / 1024)) MB" "$classes1m"
    ok=MISS; [ "$t1m" -le 60000 ] && [ "$rss1m" -le $((1024 * 1024)) ] && ok=PASS
    echo "$ok  1,000,000 ranks merged in <= 60 s and <= 1 GB: $t1m ms, $((rss1m / 1024)) MB"
else
    echo "n/a  1,000,000 ranks: run with --million"
fi
exit 0
