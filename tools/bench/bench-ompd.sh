#!/bin/bash
# bench-ompd.sh [--runs N] [--gdb-runs N] [--nested] [--per-thread] [--no-install]
#               [--coreq BINARY] [--plugin LIBOMPD]
#
# Benchmarks `coreq ompd --json` (the full OMPD report: threads, states, task and
# parallel chains, teams, ICVs, with LLVM's real libompd in a child process) against
# gdb + LLVM's OMPD gdb plugin on a kernel core of a 64-thread OpenMP program. A
# report, not a test: exits 0 whatever the numbers (non-zero only when it cannot run).
#
#   * runtime: LLVM libomp 14 with OMPD, built by tools/fixtures/omp/build-runtime.sh
#     x86_64 into build/omp/x86_64 (only if missing);
#   * program: tools/bench/ompd_bigomp.c (clang-14 -fopenmp against that runtime,
#     rpath), run with OMP_DEBUG=enabled: main + a root pthread with a
#     `parallel num_threads(64)` region (65 threads, all OpenMP: main is the initial
#     thread in serial state, the 64 team threads sleep inside the region) until team
#     thread 0 calls abort() -> kernel core build/bench/ompd-bigomp.core (--nested:
#     threads 1..4 also open an inner region of 2, 69 threads,
#     build/bench/ompd-bigomp-nested.core). Idempotent: the core is kept while it is
#     newer than the program (rebuilt when ompd_bigomp.c or the runtime changes);
#   * gdb plugin: the python `ompd` package of Debian's libomp-16-dev (pinned below),
#     apt-get download + dpkg-deb -x into build/bench/ompd-gdb-plugin/, never
#     installed (it would remove libomp-14-dev); with Debian's libompd 14
#     (/usr/lib/llvm-14/lib, LD_LIBRARY_PATH) as in tools/fixtures/omp;
#   * timing (warm page cache, hyperfine -N): coreq ompd --json CORE EXE (N runs,
#     default 30), coreq ompd (text), and gdb running tools/bench/gdb-ompd-bench.py:
#     `ompd init`, then `thread N` + `ompd parallel` for every thread, in one gdb
#     (--per-thread, or automatically if one gdb does not get through all threads
#     because the plugin crashes gdb: one gdb per thread, the whole loop timed as one
#     command); gdb alone loading the core is shown for scale;
#   * memory reads of the plugin: coreq's callbacks.reads (JSON); for gdb, a second
#     (untimed) run wraps the plugin's python callbacks (ompd_callbacks._read etc.)
#     and counts calls and bytes;
#   * table: min/median ms, ratio to coreq, reads; PASS/MISS for the targets: coreq
#     full report <= 30 ms on the 64-thread core, >= 100x faster than gdb + plugin.
# Output also saved to build/bench/ompd-result[-nested].txt.
set -uo pipefail

PIN_16=1:16.0.6-15~deb12u1   # libomp-16-dev (bookworm): the gdb plugin
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
runs=30 gdb_runs=5 nested=0 per_thread=0 install=1 coreq= plugin=/usr/lib/llvm-14/lib/libompd.so
while [ $# -gt 0 ]; do
    case $1 in
        --runs) runs=$2; shift 2 ;;
        --gdb-runs) gdb_runs=$2; shift 2 ;;
        --nested) nested=1; shift ;;
        --per-thread) per_thread=1; shift ;;
        --no-install) install=0; shift ;;
        --coreq) coreq=$(realpath "$2"); shift 2 ;;
        --plugin) plugin=$2; shift 2 ;;
        -h|--help) sed -n '2,38p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench-ompd.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
log() { echo "bench-ompd: $*" >&2; }
die() { log "$*"; exit 1; }
py=$(command -v python3) || die "python3 needed"

. "$here/benchlib.sh"
want_pkg hyperfine hyperfine || die "hyperfine needed"
want_pkg clang-14 clang-14 || die "clang-14 needed"
want_pkg /usr/bin/time time || die "/usr/bin/time needed (package time)"
have_gdb=1
want_pkg gdb gdb || { have_gdb=0; log "no gdb: gdb rows skipped"; }
[ -f "$plugin" ] || { [ "$plugin" = /usr/lib/llvm-14/lib/libompd.so ] && want_pkg /usr/lib/llvm-14/lib/libompd.so libomp-14-dev; }
[ -f "$plugin" ] || die "no OMPD plugin $plugin (Debian: libomp-14-dev)"

if [ -z "$coreq" ]; then
    make -s -C "$root" build/coreq >&2 || die "make build/coreq failed"
    coreq=$root/build/coreq
fi
out=$root/build/bench
mkdir -p "$out"

# ---- runtime, program, core ------------------------------------------------------
rt=$root/build/omp/x86_64
if [ ! -f "$rt/build-info.json" ] || [ ! -f "$rt/libomp.so.5" ]; then
    log "building the x86_64 OpenMP runtime (tools/fixtures/omp/build-runtime.sh x86_64)"
    "$root/tools/fixtures/omp/build-runtime.sh" x86_64 >&2 || die "runtime build failed"
fi
exe=$out/ompd_bigomp
if [ ! -x "$exe" ] || [ "$here/ompd_bigomp.c" -nt "$exe" ] || [ "$rt/libomp.so.5" -nt "$exe" ]; then
    log "building $exe"
    clang-14 -fopenmp -O1 -g -I "$rt/include" -L "$rt" -Wl,-rpath,"$rt" \
        -o "$exe.tmp" "$here/ompd_bigomp.c" -lpthread || die "cannot build ompd_bigomp"
    mv -f "$exe.tmp" "$exe"
fi
if [ "$nested" = 1 ]; then core=$out/ompd-bigomp-nested.core want_threads=69 args=(--nested)
else core=$out/ompd-bigomp.core want_threads=65 args=(); fi
core_threads() { "$coreq" info --json "$1" "$exe" 2>/dev/null |
    $py -c 'import json,sys; print(json.load(sys.stdin)["thread_count"])' 2>/dev/null; }
if [ -f "$core" ] && [ "$core" -nt "$exe" ] && [ "$(core_threads "$core")" = "$want_threads" ]; then
    log "exists: $core"
else
    case $(cat /proc/sys/kernel/core_pattern) in
        '|'*) die "core_pattern pipes to a helper: no kernel core possible" ;;
    esac
    work=$(mktemp -d "$out/.ompd-core.XXXXXX")
    log "dumping the kernel core ($want_threads threads, OMP_DEBUG=enabled) ..."
    # core_pattern is relative ("core"): the kernel writes it into the cwd. The braces
    # catch bash's "Aborted (core dumped)" message.
    { ( cd "$work" && ulimit -c unlimited &&
        exec env -i PATH=/usr/bin:/bin OMP_DEBUG=enabled timeout 180 "$exe" "${args[@]}" ) >"$work/log" 2>&1; } 2>/dev/null
    rc=$?
    got=$(ls -1 "$work"/core* 2>/dev/null | head -n1)
    if [ -z "$got" ]; then
        cat "$work/log" >&2; rm -rf "$work"
        die "no core (exit $rc; core_pattern $(cat /proc/sys/kernel/core_pattern), ulimit -Hc $(ulimit -Hc))"
    fi
    mv -f "$got" "$core"; rm -rf "$work"
    n=$(core_threads "$core")
    [ "$n" = "$want_threads" ] || log "WARNING: the core has $n threads, not $want_threads"
    log "core $core ($(stat -c %s "$core") bytes, $(du -k "$core" | cut -f1) KiB on disk, $n threads)"
fi
nthreads=$(core_threads "$core")

# ---- gdb plugin (extracted, pinned) --------------------------------------------------
pdir=$out/ompd-gdb-plugin
pyplugin=$pdir/usr/lib/llvm-16/share/gdb/python/ompd
if [ "$have_gdb" = 1 ] && [ "$(cat "$pdir/.extracted" 2>/dev/null)" != "libomp-16-dev=$PIN_16" ]; then
    debs=$out/ompd-debs
    mkdir -p "$debs"
    fname="libomp-16-dev_${PIN_16/:/%3a}_amd64.deb"
    deb=
    for d in "$debs" "$root/build/omp/src/debs"; do [ -f "$d/$fname" ] && { deb=$d/$fname; break; }; done
    if [ -z "$deb" ]; then
        log "apt-get download libomp-16-dev=$PIN_16"
        (cd "$debs" && apt-get download -q "libomp-16-dev=$PIN_16" >/dev/null 2>&1) &&
            deb=$debs/$fname
    fi
    if [ -n "$deb" ] && [ -f "$deb" ]; then
        rm -rf "$pdir"
        dpkg-deb -x "$deb" "$pdir" && echo "libomp-16-dev=$PIN_16" >"$pdir/.extracted"
    fi
    [ -f "$pyplugin/__init__.py" ] || { have_gdb=0; log "no gdb plugin (libomp-16-dev=$PIN_16 gone? re-pin PIN_16): gdb rows skipped"; }
fi

tmp=$(mktemp -d /tmp/bench-ompd.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
libompd_dir=$(dirname "$plugin")

# The gdb loop as one command: tools/bench/gdb-ompd-loop.sh (restarts gdb when the
# plugin crashes it, see there).
gdb_loop() { # MODE COUNT OUTPREFIX -> the command words in array GL
    GL=(bash "$here/gdb-ompd-loop.sh" "$1" "$2" "$3" "$nthreads" "$exe" "$core" "$pyplugin" "$libompd_dir")
}

# ---- correctness / counts (one untimed run each) ------------------------------------
log "core $core: $nthreads threads; load average $(cut -d' ' -f1-3 /proc/loadavg)"
cat "$core" "$exe" "$plugin" "$rt/libomp.so.5" >/dev/null   # warm
cq_json=(--json --ompd-plugin "$plugin" "$core" "$exe")
cq_text=(--ompd-plugin "$plugin" "$core" "$exe")
"$coreq" ompd "${cq_json[@]}" >"$tmp/coreq.json" 2>"$tmp/coreq.err"
echo "$?" >"$tmp/coreq.rc"
/usr/bin/time -f %M -o "$tmp/coreq.rss" "$coreq" ompd "${cq_json[@]}" >/dev/null 2>&1
mode=all
if [ "$have_gdb" = 1 ]; then
    [ "$per_thread" = 1 ] && mode=each
    log "gdb + OMPD plugin: counting run ($mode)"
    gdb_loop "$mode" 1 "$tmp/gcount"
    "${GL[@]}" || log "gdb + plugin did not get through every thread ($mode)"
    gdb_loop "$mode" 0 "$tmp/grss"
    /usr/bin/time -f %M -o "$tmp/gdb.rss" "${GL[@]}" >/dev/null 2>&1
fi

# ---- timing ---------------------------------------------------------------------------
load0=$(cut -d' ' -f1-3 /proc/loadavg)
hf() { # NAME RUNS WARMUP CMD...
    local name=$1 n=$2 w=$3; shift 3
    log "timing $name ($n runs)"
    hyperfine -N -i --style none --warmup "$w" --runs "$n" --export-json "$tmp/$name.hf.json" \
        "$(printf '%q ' "$@")" >/dev/null 2>"$tmp/$name.hf.err" ||
        log "hyperfine failed for $name: $(tail -n3 "$tmp/$name.hf.err")"
}
hf coreq-json "$runs" 3 "$coreq" ompd "${cq_json[@]}"
hf coreq-text "$runs" 3 "$coreq" ompd "${cq_text[@]}"
if [ "$have_gdb" = 1 ]; then
    hf gdb-load "$gdb_runs" 1 gdb -batch -nx "$exe" "$core"
    gdb_loop "$mode" 0 "$tmp/gtime"
    hf gdb-ompd "$gdb_runs" 1 "${GL[@]}"
fi
load1=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- report -----------------------------------------------------------------------
report=$out/ompd-result$([ "$nested" = 1 ] && echo -nested).txt
BO_TMP=$tmp BO_CORE=$core BO_EXE=$exe BO_PLUGIN=$plugin BO_NTHREADS=$nthreads BO_MODE=$mode \
BO_HAVE_GDB=$have_gdb BO_RUNS=$runs BO_GDB_RUNS=$gdb_runs BO_LOAD0="$load0" BO_LOAD1="$load1" \
BO_PIN="libomp-16-dev=$PIN_16" BO_COREQ=$coreq BO_GDBVER="$(gdb --version 2>/dev/null | head -1)" \
BO_HFVER="$(hyperfine --version)" BO_CMD_JSON="$coreq ompd ${cq_json[*]}" \
BO_CMD_GDB="bash $here/gdb-ompd-loop.sh $mode 0 $out/ompd-gdb $nthreads $exe $core $pyplugin $libompd_dir" \
BO_CMD_GDB1="LD_LIBRARY_PATH=$libompd_dir gdb -batch -nx -ex 'set pagination off' -ex 'set confirm off' -ex 'source $pyplugin/__init__.py' -ex \"python BENCH_THREADS='1-$nthreads'; BENCH_OUT='out.json'\" -ex 'source $here/gdb-ompd-bench.py' $exe $core" \
$py - <<'PYEOF' | tee "$report"
import glob, json, os, statistics
e = os.environ
tmp = e['BO_TMP']

def hf(name):
    try:
        r = json.load(open(f'{tmp}/{name}.hf.json'))['results'][0]
        t = r['times']
        return min(t) * 1e3, statistics.median(t) * 1e3, len(t), sum(1 for c in r.get('exit_codes') or [] if c)
    except Exception:
        return None

def load(p):
    try:
        return json.load(open(p))
    except Exception:
        return None

cq = load(f'{tmp}/coreq.json') or {}
cq_rc = open(f'{tmp}/coreq.rc').read().strip()
cb = cq.get('callbacks') or {}
threads = cq.get('threads') or []
with_state = sum(1 for t in threads if (t.get('state') or {}).get('name'))
regions = {r['id']: r for r in (cq.get('parallel_regions') or [])}
chains = [regions[i] for t in threads for i in (t.get('parallel_chain') or []) if i in regions]
team_rows = sum(len(r.get('team') or []) for r in regions.values())
rss = lambda n: (open(f'{tmp}/{n}.rss').read().split() or ['?'])[-1] if os.path.exists(f'{tmp}/{n}.rss') else '?'

# gdb: merge the counting run (one file, or one per thread)
g = {'threads': [], 'counts': {}, 'complete': 0, 'init_ok': 0, 'gdbs': 0}
for p in sorted(glob.glob(f'{tmp}/gcount-*.json')):
    j = load(p)
    if not j:
        continue
    g['gdbs'] += 1
    g['threads'] += j.get('threads', [])
    g['complete'] += bool(j.get('complete'))
    g['init_ok'] += bool(j.get('init_ok'))
    for k, v in (j.get('counts') or {}).items():
        c = g['counts'].setdefault(k, {'calls': 0, 'bytes': 0})
        c['calls'] += v['calls']; c['bytes'] += v['bytes']
g_rows = sum(t.get('rows', 0) for t in g['threads'])
g_regions = sum(len(t.get('regions') or []) for t in g['threads'])
g_err = [t for t in g['threads'] if t.get('error')]
g_noreg = sum(1 for t in g['threads'] if not t.get('regions'))

print()
print(f"core: {e['BO_CORE']} ({os.path.getsize(e['BO_CORE'])} bytes, {e['BO_NTHREADS']} threads); "
      f"exe {e['BO_EXE']}")
print(f"plugin: {e['BO_PLUGIN']}; gdb plugin: python `ompd` of {e['BO_PIN']} (extracted); "
      f"{e['BO_GDBVER']}")
print(f"timing: {e['BO_HFVER']} -N, warm page cache; coreq {e['BO_RUNS']} runs (3 warm-ups), "
      f"gdb {e['BO_GDB_RUNS']} runs (1 warm-up)")
busy = any(float(x) > 0.5 for x in (e['BO_LOAD0'].split() + e['BO_LOAD1'].split()))
print(f"load average: {e['BO_LOAD0']} -> {e['BO_LOAD1']} ({os.cpu_count()} CPUs)"
      + ("  -- other work on the machine: trust min over median" if busy else ""))
print()
print("what each did:")
print(f"  coreq ompd --json: exit {cq_rc}, {len(threads)} threads, {cq.get('openmp_threads', '?')} OpenMP, "
      f"{with_state} with a state, {len(regions)} parallel regions ({len(chains)} chain entries), {team_rows} team rows, "
      f"problems {len(cq.get('problems') or [])}; plugin run {((cq.get('plugin') or {}).get('run') or {}).get('seconds', 0) * 1e3:.1f} ms "
      f"(child); max RSS {rss('coreq')} KB")
print(f"    plugin callbacks: {cb.get('reads', '?')} reads, {cb.get('lookups', '?')} symbol lookups, "
      f"{cb.get('allocs', '?')} allocs, {cb.get('read_faults', '?')} read faults")
if e['BO_HAVE_GDB'] == '1':
    try:
        restarts = [l for l in open(f'{tmp}/gcount-restarts').read().splitlines() if l]
    except OSError:
        restarts = []
    mode = (f"one gdb for all threads, {g['gdbs']} gdb(s)" if e['BO_MODE'] == 'all'
            else f"one gdb per thread, {g['gdbs']} gdbs") + f", {len(restarts)} gdb crash(es)/restart(s)"
    print(f"  gdb + plugin ({mode}): ompd init ok in {g['init_ok']}/{g['gdbs']}, {len(g['threads'])} threads "
          f"asked (`thread N` + `ompd parallel`), {g_regions} region headers, {g_rows} thread rows, "
          f"{g_noreg} threads without a region (serial), {len(g_err)} errors; max RSS {rss('gdb')} KB")
    c = g['counts']
    if c:
        print("    plugin callbacks into gdb (counting run, python wrappers): "
              + ", ".join(f"{k} {v['calls']} calls" + (f" / {v['bytes']} B" if v['bytes'] else '')
                          for k, v in c.items()))
        print("    (the plugin's _read does gdb.parse_and_eval + one Python int() per byte)")
    for l in restarts:
        print(f"    restart: {l}")
    gt = hf('gdb-ompd')
    if gt and gt[3]:
        print(f"    WARNING: {gt[3]} of the {gt[2]} timed gdb loops did not get through every thread")
print()
rows = [('coreq ompd --json', hf('coreq-json'), cb.get('reads')),
        ('coreq ompd (text)', hf('coreq-text'), cb.get('reads'))]
if e['BO_HAVE_GDB'] == '1':
    rows += [('gdb load core', hf('gdb-load'), None),
             ('gdb + OMPD plugin', hf('gdb-ompd'), (g['counts'].get('_read') or {}).get('calls'))]
base = rows[0][1]
hdr = ['tool', 'runs', 'min ms', 'med ms', 'x coreq(med)', 'x coreq(min)', 'plugin reads']
fmt = '{:<20} {:>5} {:>10} {:>10} {:>12} {:>12} {:>12}'
print(fmt.format(*hdr))
print(fmt.format(*['-' * len(h) for h in hdr]))
for name, t, reads in rows:
    if not t:
        print(fmt.format(name, '-', '-', '-', '-', '-', reads if reads is not None else '-'))
        continue
    rmed = f"{t[1] / base[1]:.1f}x" if base else '-'
    rmin = f"{t[0] / base[0]:.1f}x" if base else '-'
    print(fmt.format(name, t[2], f"{t[0]:.2f}", f"{t[1]:.2f}", rmed, rmin,
                     reads if reads is not None else '-'))
print()
print("commands:")
print(f"  coreq: {e['BO_CMD_JSON']}")
if e['BO_HAVE_GDB'] == '1':
    print(f"  gdb:   {e['BO_CMD_GDB']}")
    print(f"         (= {e['BO_CMD_GDB1']}" + (", restarted from the thread it died on if gdb crashes)" if e['BO_MODE'] == 'all'
          else ", but one gdb per thread: BENCH_THREADS=N, N = 1..%s)" % e['BO_NTHREADS']))
print()
checks = []
if base:
    checks.append(('coreq ompd --json (full report) median <= 30 ms on the 64-thread core',
                   base[1] <= 30.0, f"{base[1]:.2f} ms (min {base[0]:.2f} ms)"))
gt = hf('gdb-ompd') if e['BO_HAVE_GDB'] == '1' else None
if base and gt:
    checks.append(('coreq >= 100x faster than gdb + OMPD plugin (ompd parallel on every thread)',
                   gt[1] / base[1] >= 100, f"{gt[1] / base[1]:.1f}x by median, {gt[0] / base[0]:.1f}x by min"))
elif base:
    checks.append(('coreq >= 100x faster than gdb + OMPD plugin', False, 'gdb not measured'))
for name, ok, detail in checks:
    print(f"{'PASS' if ok else 'MISS'}  {name}: {detail}")
PYEOF
exit 0
