#!/bin/bash
# Run the whole suite against one coreq binary and print "N passed, M failed".
#   tests/run.sh                 build/coreq, unit tests from build/tests
#   COREQ=build-asan/coreq UNIT=build-asan/tests tests/run.sh
# Each part prints its own lines; this script adds up their closing lines.
set -u
cd "$(dirname "$0")/.."
export COREQ=${COREQ:-build/coreq}
# No part may depend on debuginfod servers the machine's environment names (Debian can set
# DEBUGINFOD_URLS for login shells): tests/fixture/debuginfod.py names its own.
unset DEBUGINFOD_URLS
UNIT=${UNIT:-build/tests}
total_pass=0 total_fail=0
log=$(mktemp)
sums=$(mktemp)
# coreq searches the user's data directory for Open MPI type donors (coreq donor writes
# there): the suite runs with an empty one, whatever this machine's user has made
XDG_DATA_HOME=$(mktemp -d)
export XDG_DATA_HOME
trap 'rm -f "$log" "$sums"; rm -rf "$XDG_DATA_HOME"' EXIT

# An i386 coreq (build32) runs natively or under qemu-i386-static, whichever this machine
# can (tools/host32/i386-way.sh; COREQ_I386=qemu forces emulation). Its unit tests likewise.
# tools/check-all.sh decides once and exports COREQ_I386_WAY/COREQ_I386_RUN for all parts.
is_i386_elf() { [ "$(od -An -tx1 -j4 -N1 "$1" 2>/dev/null)" = " 01" ] &&
	[ "$(od -An -tx1 -j18 -N2 "$1" 2>/dev/null)" = " 03 00" ]; }
export COREQ_RUN=
if is_i386_elf "$COREQ"; then
	. tools/host32/i386-way.sh
	if ! i386_way; then
		echo "not ok - the i386 coreq $COREQ cannot run here: $I386_WHY"
		echo "0 passed, 1 failed"
		exit 1
	fi
	echo "# $COREQ: $I386_WHY"
	export COREQ_I386_WAY=$I386_WAY COREQ_I386_RUN=$I386_RUN COREQ_I386_WHY=$I386_WHY COREQ_RUN=$I386_RUN
fi
# every fixture's checksum, compared after the suite: nothing may write to an input
fixture_sums() { find fixtures -type f -print0 | sort -z | xargs -0 sha256sum; }
fixture_sums >"$sums"

part() {
	local name=$1
	shift
	echo "### $name ($COREQ)"
	local t0=$SECONDS
	"$@" >"$log" 2>&1
	local rc=$?
	grep -v '^ok - ' "$log"
	# (what each part costs, for keeping make check within its time)
	echo "# part took $((SECONDS - t0)) s"
	local line
	line=$(grep -E '([0-9]+) passed, ([0-9]+) failed' "$log" | tail -n 1)
	if [ -z "$line" ]; then
		echo "not ok - $name printed no result line (exit $rc)"
		total_fail=$((total_fail + 1))
		return
	fi
	local p f
	p=$(sed -E 's/.*\b([0-9]+) passed.*/\1/' <<<"$line")
	f=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - $name exited $rc"
		total_fail=$((total_fail + 1))
	fi
}

for t in "$UNIT"/test_*; do
	# shellcheck disable=SC2086 # COREQ_RUN is a word list (empty, or qemu's path)
	[ -x "$t" ] && part "unit $(basename "$t")" $COREQ_RUN "$t"
done
is_i386_elf "$COREQ" && part "how i386 code runs" tests/host32/i386_way.sh
part "fixtures" python3 tests/fixture/run.py
part "file lookup" python3 tests/fixture/lookup.py
part "debuginfod (real servers, file://)" python3 tests/fixture/debuginfod.py
part "ppc64 ELFv1 function descriptors" python3 tests/fixture/ppc64_opd.py
part "bundles" python3 tests/fixture/run.py --bundle
part "OMPD callback conformance" python3 tests/fixture/ompd_conformance.py
part "OMPD with LLVM libompd" python3 tests/fixture/ompd.py
part "OMPD faulty plugins" python3 tests/fixture/ompd_faulty.py
part "types (DWARF, donors)" python3 tests/fixture/types.py
part "flight recorder (events)" python3 tests/fixture/events.py
part "MQD job view (synthetic)" python3 tests/fixture/mqd_job.py
part "MQD with Open MPI's DLL" python3 tests/fixture/mqd.py
part "MQD faulty DLLs" python3 tests/fixture/mqd_faulty.py
part "MQD on real hung jobs (LAMMPS, HPCC; cores made now)" python3 tests/fixture/mqd_apps.py
part "MQD: values from the program's DWARF (communicator, loop variables; cores made now)" python3 tests/fixture/mqd_dwarf.py
part "MQD: the loop-variable search bounded and cached (a generated 448 KB program, 256 frames deep)" python3 tests/fixture/deep_loops.py
part "MQD with MPICH's DLL (MPICH 4.0.2 built with --enable-debuginfo)" python3 tests/fixture/mqd_mpich.py
[ -x tests/badinput/run.sh ] && part "bad input" tests/badinput/run.sh
part "malformed real cores" python3 tests/badinput/mutate.py
[ -x tests/fixture/gdb_crosscheck.sh ] && [ "${SKIP_GDB:-0}" != 1 ] && part "gdb cross-check" tests/fixture/gdb_crosscheck.sh
part "inputs never written" python3 tests/fixture/inputs.py
part "outputs: errors said, files through a temporary" python3 tests/fixture/outputs.py
part "compressed cores, executables, donors (zstd, xz, lz4)" python3 tests/fixture/compressed.py
part "apport reports (/var/crash/*.crash)" python3 tests/fixture/apport.py
part "signals: si_code, fault address, sender" python3 tests/fixture/signals.py
part "hostile cores, round 2" python3 tests/fixture/hostile.py
part "image ranges (a file mapped twice)" python3 tests/fixture/image_range.py
part "backtraces (the fixture cores)" python3 tests/fixture/bt.py
part "backtraces against gdb and eu-stack (the fixture cores, 2 signal cores)" python3 tests/fixture/bt_ref.py
part "backtraces through signal frames (fixtures/signal)" python3 tests/fixture/bt_signal.py
part "backtraces through nested inlined calls, a thread that never ran (fixtures/inline)" python3 tests/fixture/bt_inline.py
part "backtraces against gdb: names, lines, inlined calls by compiler and packaging (fixtures/debuginfo)" python3 tests/fixture/bt_debuginfo.py
part "hostile debug information: FIFOs for split units and dwz alt files, zstd bombs" python3 tests/fixture/hostile_debuginfo.py
part "backtraces from bundles (the fixture cores)" python3 tests/fixture/bt_bundle.py
part "stack tree across processes (coreq stacks)" python3 tests/fixture/stacks.py
part "live processes: bt --pid (stopped, read, resumed as they were)" python3 tests/fixture/live.py
part "live processes, round 4: the bound on every path, snapshots no wider than a core, nothing planted followed" python3 tests/fixture/live_bounds.py
part "live processes: libraries deleted or replaced since they were mapped (map_files, build-id)" python3 tests/fixture/live_mapped.py
part "across nodes: a Slurm cluster of 4 nodes on this machine, coreq snapshot --slurm (ring, mpirun in sbatch, a wrapper shell, bad jobs and nodes)" python3 tests/fixture/slurm.py
part "backtraces through libomp (OpenMP fixture bundles)" python3 tests/fixture/bt_omp.py
part "hostile stacks" python3 tests/fixture/hostile_bt.py
part "sh4: the one real sh4 core (qemu's dump of ld.so's crash) against gdb" python3 tests/fixture/sh4_core.py
part "make install, installed type donors, coreq donor" python3 tests/fixture/install.py
untouched() {
	if fixture_sums | cmp -s - "$sums"; then
		echo "ok - every fixture file unchanged after the suite"; echo "1 passed, 0 failed"
	else
		echo "not ok - fixture files changed during the suite:"
		fixture_sums | diff "$sums" - | head -5
		echo "0 passed, 1 failed"
	fi
}
part "fixtures untouched" untouched
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
