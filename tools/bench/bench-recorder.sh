#!/bin/bash
# bench-recorder.sh [--runs N] [--iters N] [--small-iters N] [--events N] [--threads N]
#
# Cost of the flight recorder (recorder/, libcoreq_rec.so). A report, not a test: exits 0
# whatever the numbers (non-zero only when it cannot run).
#   (a) ns per recorded event: tools/bench/recorder_loop.c `events`: a tight loop of
#       gasp_event_notify(GASP_C_FREE) and of __cyg_profile_func_enter (the
#       -finstrument-functions hook), best of 5; the same calls with recording off
#       (gasp_control 0) and a bare clock_gettime(CLOCK_MONOTONIC) for scale;
#   (b) a real OpenMP loop (recorder_loop `omp`: per iteration a parallel region with a
#       2-D 512x512 stencil sweep, a single spawning 8 tasks, a critical section;
#       clang-14 -fopenmp, Debian's libomp), run without a tool, with a no-op OMPT tool
#       (the same callbacks, nothing recorded: what OMPT itself costs in the runtime) and
#       with the recorder (OMP_TOOL_LIBRARIES); median of N interleaved runs (not
#       hyperfine: its runs of one command are consecutive, so load that comes and goes
#       biases one side; here every round runs all three); the slowdown with the recorder against no tool;
#   (c) the same with empty regions and tasks (`omp-small`: OMPT-bound), giving the
#       recorder's cost per OMPT event: (median recorder - median no-op tool) / events,
#       and the whole OMPT cost per event (against no tool).
# Targets: <= 50 ns per event (a), <= 5% on the OpenMP loop (b).
# Output also saved to build/bench/recorder-result.txt.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
RUNS=10 ITERS=3000 SMALL=20000 EVENTS=2000000 THREADS=${OMP_NUM_THREADS:-}
while [ $# -gt 0 ]; do
    case $1 in
    --runs) RUNS=$2; shift ;;
    --iters) ITERS=$2; shift ;;
    --small-iters) SMALL=$2; shift ;;
    --events) EVENTS=$2; shift ;;
    --threads) THREADS=$2; shift ;;
    *) echo "usage: $0 [--runs N] [--iters N] [--small-iters N] [--events N] [--threads N]" >&2; exit 2 ;;
    esac
    shift
done
out=$root/build/bench
mkdir -p "$out"
cd "$root"

# the recorder (the main Makefile includes recorder/recorder.mk; a stand-alone fallback)
mk=$out/recorder-bench.mk
printf 'include Makefile\nifeq ($(REC_SO),)\ninclude recorder/recorder.mk\nendif\n' > "$mk"
make -s -f "$mk" build/include/omp-tools.h build/recorder/libcoreq_rec.so >/dev/null || { echo "cannot build the recorder" >&2; exit 1; }
REC=$root/build/recorder/libcoreq_rec.so
NOOP=$out/libcoreq_rec_noop.so
cc -std=gnu11 -O2 -D_GNU_SOURCE -Ibuild/include -Irecorder -fPIC -shared -fvisibility=hidden \
   -DCQ_REC_BENCH_NOOP -o "$NOOP" recorder/*.c -lpthread || exit 1
LOOP=$out/recorder_loop
clang-14 -O2 -fopenmp -o "$LOOP" tools/bench/recorder_loop.c -ldl || exit 1
[ -n "$THREADS" ] && export OMP_NUM_THREADS=$THREADS

median() { sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

# Interleaved rounds (no tool, no-op tool, recorder, no tool, ...) so that load from
# elsewhere on the machine hits the three alike; the time is the loop's own (recorder_loop
# prints it, process start and exit excluded). Prints the three medians (seconds) and the
# recorder's event count.
rounds() {
    local mode=$1 iters=$2 i
    : > "$out/rec-$mode.none"; : > "$out/rec-$mode.noop"; : > "$out/rec-$mode.rec"
    "$LOOP" "$mode" "$iters" >/dev/null   # warm-up
    for i in $(seq "$RUNS"); do
        env -u OMP_TOOL_LIBRARIES "$LOOP" "$mode" "$iters" | awk '$1 == "seconds" {print $2}' >> "$out/rec-$mode.none"
        OMP_TOOL_LIBRARIES=$NOOP "$LOOP" "$mode" "$iters" | awk '$1 == "seconds" {print $2}' >> "$out/rec-$mode.noop"
        OMP_TOOL_LIBRARIES=$REC "$LOOP" "$mode" "$iters" > "$out/rec-$mode.last"
        awk '$1 == "seconds" {print $2}' "$out/rec-$mode.last" >> "$out/rec-$mode.rec"
    done
    echo "$(median < "$out/rec-$mode.none") $(median < "$out/rec-$mode.noop") $(median < "$out/rec-$mode.rec")" \
         "$(awk '$1 == "events" {print $2}' "$out/rec-$mode.last")" \
         "$(sort -g "$out/rec-$mode.none" | head -1) $(sort -g "$out/rec-$mode.rec" | head -1)"
}

{
echo "coreq flight recorder benchmark  ($(uname -m), $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg), clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null), OMP_NUM_THREADS=${OMP_NUM_THREADS:-default}, runs $RUNS)"
echo
echo "(a) per event, tight loop of $EVENTS calls, best of 5"
res=$("$LOOP" events "$REC" "$EVENTS") || exit 1
get() { echo "$res" | awk -v k="$1" '$1 == k {print $2}'; }
printf '  %-44s %8s ns\n' "gasp_event_notify (recorded)" "$(get gasp_event_notify)" \
    "__cyg_profile_func_enter (recorded)" "$(get cyg_profile_func_enter)" \
    "gasp_event_notify (gasp_control off)" "$(get gasp_event_notify_off)" \
    "__cyg_profile_func_enter (gasp_control off)" "$(get cyg_profile_func_enter_off)" \
    "clock_gettime(CLOCK_MONOTONIC) alone" "$(get clock_gettime)"
ev_ns=$(get gasp_event_notify)

echo
echo "(b) OpenMP loop: $ITERS x (parallel: 512x512 stencil for, single + 8 tasks, critical), median of $RUNS interleaved runs"
read -r tb0 tb1 tb2 evb tbmin0 tbmin2 < <(rounds omp "$ITERS")
printf '  %-44s %10.1f ms\n' "no tool" "$(echo "$tb0 * 1000" | bc -l)" \
    "no-op OMPT tool (callbacks only)" "$(echo "$tb1 * 1000" | bc -l)" \
    "recorder ($evb events)" "$(echo "$tb2 * 1000" | bc -l)"
slow=$(echo "($tb2 / $tb0 - 1) * 100" | bc -l)
slow_noop=$(echo "($tb2 / $tb1 - 1) * 100" | bc -l)
nthr=$("$LOOP" omp-small 1 | awk '$1 == "threads" {print $2}')
printf '  %-44s %+9.2f %%\n' "slowdown, recorder vs no tool" "$slow" "slowdown, recorder vs no-op tool" "$slow_noop" \
    "slowdown, fastest runs (min vs min)" "$(echo "($tbmin2 / $tbmin0 - 1) * 100" | bc -l)" \
    "expected from (a): events x ns / threads" "$(echo "$evb * $ev_ns / $nthr / ($tb0 * 1000000000) * 100" | bc -l)"

echo
echo "(c) OMPT-bound loop: $SMALL x (empty parallel, single + 8 empty tasks, critical), median of $RUNS interleaved runs"
read -r tc0 tc1 tc2 evc tcmin0 tcmin2 < <(rounds omp-small "$SMALL")
printf '  %-44s %10.1f ms\n' "no tool" "$(echo "$tc0 * 1000" | bc -l)" \
    "no-op OMPT tool (callbacks only)" "$(echo "$tc1 * 1000" | bc -l)" \
    "recorder ($evc events, $nthr threads)" "$(echo "$tc2 * 1000" | bc -l)"
rec_ev=$(echo "($tc2 - $tc1) * 1000000000 / $evc" | bc -l)
all_ev=$(echo "($tc2 - $tc0) * 1000000000 / $evc" | bc -l)
printf '  %-44s %9.1f ns (wall, events of all threads)\n' "recorder per OMPT event (vs no-op tool)" "$rec_ev" \
    "OMPT + recorder per event (vs no tool)" "$all_ev"
printf '  %-44s %9.1f ns\n' "recorder per OMPT event per thread" "$(echo "$rec_ev * $nthr" | bc -l)"

echo
pf() { if [ "$(echo "$2" | bc -l)" = 1 ]; then echo "PASS  $1"; else echo "MISS  $1"; fi; }
pf "$(printf 'per recorded event %.1f ns <= 50 ns (gasp_event_notify, tight loop)' "$ev_ns")" "$ev_ns <= 50"
pf "$(printf 'OpenMP loop slowdown %+.2f %% <= 5 %% (recorder vs no tool)' "$slow")" "$slow <= 5"
} 2>&1 | tee "$out/recorder-result.txt"
exit 0
