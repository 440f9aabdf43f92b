#!/bin/bash
# SPDX-License-Identifier: MIT
# Run the fuzz targets (fuzz/README.md); used by `make fuzz`, `make fuzz-smoke` and
# `make fuzz-regress`.
#
#   fuzz/run.sh SECONDS [TARGET...]   fuzz each target SECONDS on build-fuzz/corpus/<target>
#                                     (fill it first: fuzz/seeds.sh corpus); crashes, leaks,
#                                     timeouts and OOMs go to build-fuzz/findings/<target>/,
#                                     the log to build-fuzz/logs/<target>.log
#   fuzz/run.sh --regress [TARGET...] replay fuzz/regressions/<target>/* once each (30 s
#                                     each; 2 s for slow-* inputs, former slow units)
#
# Prints one line per target (executions, time, coverage, findings). Exit status 1 if any
# target found something (or a regression input fails), else 0.
# Environment: FUZZ_DIR (build-fuzz), FUZZ_PARALLEL (targets at a time, 1),
# FUZZ_FORK=1 (keep fuzzing after a finding: -fork=1 -ignore_crashes etc.),
# FUZZ_ARGS (more libFuzzer flags).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FUZZ_DIR=${FUZZ_DIR:-build-fuzz}
case $FUZZ_DIR in /*) ;; *) FUZZ_DIR=$ROOT/$FUZZ_DIR ;; esac
PARALLEL=${FUZZ_PARALLEL:-1}
ALL="fuzz_core fuzz_linkmap fuzz_tls fuzz_bundle fuzz_callbacks fuzz_image fuzz_jobjson fuzz_stack fuzz_tree fuzz_progress"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# Largest input per target: a small core, a link_map segment, a bundle's notes with a type
# donor, structured inputs.
max_len() {
	case $1 in
	fuzz_core) echo 65536 ;;
	fuzz_linkmap) echo 131072 ;;
	fuzz_bundle | fuzz_image) echo 262144 ;;
	fuzz_jobjson | fuzz_tree | fuzz_progress) echo 65536 ;;
	fuzz_tls | fuzz_stack) echo 4096 ;;
	*) echo 8192 ;;
	esac
}

# libFuzzer flags per target: fuzz_stack's inputs are patch records of 6 bytes and more,
# so the length limit does not start at 4 bytes.
target_args() {
	case $1 in
	fuzz_stack) echo -len_control=0 ;;
	esac
}

# Time and memory per input: 20 s and 2 GiB, except where a target's input is bounded so
# that more would be a finding. fuzz_tree makes at most 40,000 nodes and frames from 64 KiB:
# the tree is O(n log n) in time and linear in memory (job/tree.c), so an input that needs
# 5 s or 768 MiB is a bound broken. fuzz_progress makes at most 40,000 threads of samples,
# compared in O(n log n) (job/progress.c): the same bounds.
limits() {
	case $1 in
	fuzz_tree | fuzz_progress) echo -timeout=5 -rss_limit_mb=768 ;;
	*) echo -timeout=20 -rss_limit_mb=2048 ;;
	esac
}

regress() {
	local fails=0
	for t in ${*:-$ALL}; do
		local dir=$ROOT/fuzz/regressions/$t n=0 bad=0
		[ -d "$dir" ] || continue
		for f in "$dir"/*; do
			[ -f "$f" ] || continue
			case $f in *.md|*.txt) continue ;; esac
			n=$((n + 1))
			# an input that was a slowness finding must now run well inside a second
			local limit=30
			case $(basename "$f") in slow-*) limit=2 ;; esac
			# shellcheck disable=SC2046
			if ! "$FUZZ_DIR/$t" $(limits "$t") -timeout=$limit "$f" >"$FUZZ_DIR/regress.log" 2>&1; then
				echo "not ok - $t $(basename "$f"): $(grep -m1 -E 'ERROR|runtime error|fuzz:' "$FUZZ_DIR/regress.log")"
				bad=$((bad + 1))
			fi
		done
		echo "$t: $n regression inputs, $bad failed"
		fails=$((fails + bad))
	done
	[ "$fails" = 0 ]
}

# fuzz_one TARGET SECONDS: one campaign; the summary line goes to logs/TARGET.summary.
fuzz_one() {
	local t=$1 secs=$2
	local corpus=$FUZZ_DIR/corpus/$t findings=$FUZZ_DIR/findings/$t log=$FUZZ_DIR/logs/$t.log
	mkdir -p "$corpus" "$findings" "$FUZZ_DIR/logs"
	local fork=()
	[ "${FUZZ_FORK:-0}" = 1 ] && fork=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
	local before
	before=$(ls "$findings" | wc -l)
	# (the log may hold an input's raw bytes: every grep of it reads it as text, -a)
	# CPU seconds (user + system, fork-mode workers included) go to logs/TARGET.cpu: when
	# more targets run than there are CPUs, wall time overstates how long each was fuzzed.
	local TIMEFORMAT='%U %S'
	# shellcheck disable=SC2086
	# fuzz_tree's and fuzz_progress's memory limits are their bounds: ASan's quarantine
	# (256 MiB of freed blocks held back) would count against them, so they keep 32 MiB
	local asan=$ASAN_OPTIONS
	case $t in fuzz_tree | fuzz_progress) asan="$asan:quarantine_size_mb=32" ;; esac
	{ time ASAN_OPTIONS=$asan "$FUZZ_DIR/$t" "${fork[@]}" -max_total_time="$secs" -max_len="$(max_len "$t")" \
		$(limits "$t") -print_final_stats=1 \
		-artifact_prefix="$findings/" $(target_args "$t") ${FUZZ_ARGS:-} "$corpus" >"$log" 2>&1; } 2>"$FUZZ_DIR/logs/$t.cpu"
	local rc=$?
	local cpu
	cpu=$(awk '{printf "%.0f", $1 + $2}' "$FUZZ_DIR/logs/$t.cpu")
	local after execs rate cov ft
	after=$(ls "$findings" | wc -l)
	execs=$(grep -a -m1 'stat::number_of_executed_units' "$log" | awk '{print $2}')
	rate=$(grep -a -m1 'stat::average_exec_per_sec' "$log" | awk '{print $2}')
	# fork mode prints no final stats: take the last status line "#N: cov: ..."
	[ -n "$execs" ] || execs=$(grep -a -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#')
	[ -n "$rate" ] || rate=$(grep -a -oE 'exec/s:? [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+$')
	cov=$(grep -a -oE 'cov: [0-9]+' "$log" | tail -1 | awk '{print $2}')
	ft=$(grep -a -oE 'ft: [0-9]+' "$log" | tail -1 | awk '{print $2}')
	local status=ok
	if [ "$rc" != 0 ] || [ "$after" -gt "$before" ]; then status="FINDING (exit $rc, $((after - before)) new in $findings)"; fi
	echo "$t: ${secs}s (${cpu:-?} s CPU), ${execs:-?} executions (${rate:-?}/s), cov ${cov:-?}, ft ${ft:-?}, corpus $(ls "$corpus" | wc -l): $status" \
		>"$FUZZ_DIR/logs/$t.summary"
	# A finding in CI is gone with its machine: what it was goes into the summary (the
	# sanitizer's verdict and the innermost frames of our code), and the input itself when
	# small, base64 (`base64 -d > input; build-fuzz/$t input` replays it).
	if [ "$status" != ok ]; then
		grep -a -m1 -E '^(==[0-9]+==ERROR|SUMMARY:|.*runtime error:|ALARM:|.*Timeout|.*out-of-memory)' "$log" |
			cut -c1-300 | sed 's/^/  /' >>"$FUZZ_DIR/logs/$t.summary"
		grep -a -E '^ +#[0-9]+ 0x[0-9a-f]+ in ' "$log" | grep -v -E 'libFuzzer|fuzzer::|__interceptor|__asan|__ubsan|libc\.so|libstdc|compiler-rt| in (malloc|calloc|realloc|free) ' |
			head -6 | cut -c1-200 | sed 's/^/  /' >>"$FUZZ_DIR/logs/$t.summary"
		local f
		for f in $(ls -t "$findings" | head -1); do
			echo "  input $f ($(stat -c %s "$findings/$f") bytes)" >>"$FUZZ_DIR/logs/$t.summary"
			[ "$(stat -c %s "$findings/$f")" -le 8192 ] && base64 -w0 "$findings/$f" | sed 's/^/  base64 /; s/$/\n/' >>"$FUZZ_DIR/logs/$t.summary"
		done
	fi
}

if [ "${1:-}" = --regress ]; then
	shift
	regress "$@"
	exit
fi
SECS=${1:?usage: fuzz/run.sh SECONDS [TARGET...] | --regress [TARGET...]}
shift
TARGETS=${*:-$ALL}
for t in $TARGETS; do
	[ -x "$FUZZ_DIR/$t" ] || { echo "run.sh: $FUZZ_DIR/$t missing (make fuzz-build)"; exit 1; }
	rm -f "$FUZZ_DIR/logs/$t.summary"
done
running=0
for t in $TARGETS; do
	if [ "$running" -ge "$PARALLEL" ]; then
		wait -n
		running=$((running - 1))
	fi
	fuzz_one "$t" "$SECS" &
	running=$((running + 1))
done
wait
status=0
for t in $TARGETS; do
	cat "$FUZZ_DIR/logs/$t.summary"
	head -1 "$FUZZ_DIR/logs/$t.summary" | grep -q ': ok$' || status=1
done
exit $status
