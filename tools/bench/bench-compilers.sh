#!/bin/bash
# bench-compilers.sh [--runs N] [--size SIZE] [--no-install] [--coreq BINARY]
#
# `coreq bt` on the same program built by gcc and by clang: tools/bench/bigcore.c (65
# threads, -O1 -g, make-bigcore.sh) built with gcc-12 and with clang-14, a kernel core of
# each (default --size 64M: the heap does not matter to bt). clang emits no .debug_aranges,
# so coreq maps addresses to units from the units' own ranges (elf/cu_map.h): the target is
# clang's core within 2x of gcc's by median, with the same frames and as many with a line.
# Interleaved runs (hyperfine -N, both commands in one invocation) so that drift on this
# machine hits both alike. A report: exits 0 whatever the numbers (non-zero only when it
# cannot run at all).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
runs=30 size=64M install=1 coreq=
while [ $# -gt 0 ]; do
    case $1 in
        --runs) runs=$2; shift 2 ;;
        --size) size=$2; shift 2 ;;
        --no-install) install=0; shift ;;
        --coreq) coreq=$(realpath "$2"); shift 2 ;;
        -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench-compilers.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
log() { echo "bench-compilers: $*" >&2; }
. "$here/benchlib.sh"
want_pkg hyperfine hyperfine || { log "hyperfine needed"; exit 1; }
want_pkg clang-14 clang-14 || { log "clang-14 needed"; exit 1; }
if [ -z "$coreq" ]; then
    make -s -C "$root" build/coreq >&2 || { log "make build/coreq failed"; exit 1; }
    coreq=$root/build/coreq
fi
declare -A core
for cc in gcc-12 clang-14; do
    out=$root/build/bench-$cc
    core[$cc]=$(CC=$cc "$here/make-bigcore.sh" --size "$size" "$out" | head -n1) || { log "no $cc core"; exit 1; }
done
exe() { echo "$(dirname "$1")/bigcore"; }
# frames and frames with a line in the program's own code (bigcore), from bt --json
count() {
    "$coreq" bt --json "$1" "$(exe "$1")" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
own = [f for t in d["threads"] for f in t["frames"] if f.get("module") == "bigcore"]
print(sum(len(t["frames"]) for t in d["threads"]), len(own), sum(1 for f in own if f.get("line")))'
}
json=$(mktemp)
trap 'rm -f "$json"' EXIT
hyperfine -N -w 3 -r "$runs" --export-json "$json" \
    -n gcc "$coreq bt ${core[gcc-12]} $(exe "${core[gcc-12]}")" \
    -n clang "$coreq bt ${core[clang-14]} $(exe "${core[clang-14]}")" >/dev/null 2>&1 ||
    { log "hyperfine failed"; exit 1; }
read -r gf go gl <<<"$(count "${core[gcc-12]}")"
read -r cf co cl <<<"$(count "${core[clang-14]}")"
python3 - "$json" "$gf" "$go" "$gl" "$cf" "$co" "$cl" <<'PY'
import json, statistics, sys
res = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
gf, go, gl, cf, co, cl = map(int, sys.argv[2:])
med = {k: statistics.median(r["times"]) * 1000 for k, r in res.items()}
mn = {k: min(r["times"]) * 1000 for k, r in res.items()}
print(f"{'build':<7} {'frames':>7} {'own':>5} {'with line':>10} {'min ms':>8} {'median ms':>10}")
for k, f, o, l in (("gcc", gf, go, gl), ("clang", cf, co, cl)):
    print(f"{k:<7} {f:>7} {o:>5} {l:>10} {mn[k]:>8.2f} {med[k]:>10.2f}")
r = med["clang"] / med["gcc"]
print(f"clang / gcc by median: {r:.2f}x")
print(("PASS" if r <= 2.0 else "MISS") + f": coreq bt on the clang-built core within 2x of the gcc-built one ({r:.2f}x)")
# _start has none in either (crt1.o carries no DWARF)
print(("PASS" if cl == gl and co == go else "MISS") +
      f": as many own frames with a line in both ({cl}/{co} clang, {gl}/{go} gcc)")
PY
