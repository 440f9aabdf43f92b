#!/bin/bash
# Run tests/run.sh with the 64-bit, the ASan/UBSan and the 32-bit coreq, then print the
# summed closing line. The 32-bit binary must give the same golden JSON as the 64-bit one.
# ASan does not take over SIGSEGV/SIGABRT: the plugins' crashes must stay crashes (the
# tests see a crash of coreq itself as a signal death all the same).
set -u
cd "$(dirname "$0")/.."
pass=0 fail=0
# How build32's i386 programs run (natively, or under qemu-i386-static where the kernel runs
# no i386 code; COREQ_I386=qemu forces that way): decided once here, for every part.
# Without a way the 32-bit host fails here, in one line (never skipped silently), and the
# other two hosts are still tested.
. tools/host32/i386-way.sh
variants="build build-asan build32"
if i386_way; then
	echo "# 32-bit host: $I386_WHY"
	export COREQ_I386_WAY=$I386_WAY COREQ_I386_RUN=$I386_RUN COREQ_I386_WHY=$I386_WHY
else
	echo "not ok - build32: no way to run i386 code here: $I386_WHY"
	fail=$((fail + 1))
	variants="build build-asan"
fi
# The real applications' cores (tests/fixture/mqd_apps.py) are made once, for all three.
COREQ_APP_CORES=$(mktemp -d /tmp/coreq-app-cores.XXXXXX) && export COREQ_APP_CORES
trap 'rm -rf "$COREQ_APP_CORES"' EXIT
for variant in $variants; do
	t0=$SECONDS
	out=$(COREQ=$variant/coreq UNIT=$variant/tests ASAN_OPTIONS=detect_leaks=1:exitcode=86:handle_segv=0:handle_abort=0 UBSAN_OPTIONS=print_stacktrace=1:exitcode=87 tests/run.sh 2>&1)
	rc=$?
	echo "$out" | grep -v '^ok - '
	echo "# $variant: $((SECONDS - t0)) s"
	line=$(echo "$out" | tail -n 1)
	p=$(sed -nE 's/^([0-9]+) passed, ([0-9]+) failed$/\1/p' <<<"$line")
	f=$(sed -nE 's/^([0-9]+) passed, ([0-9]+) failed$/\2/p' <<<"$line")
	if [ -z "$p" ]; then
		echo "not ok - $variant: no result line (exit $rc)"
		fail=$((fail + 1))
		continue
	fi
	pass=$((pass + p))
	fail=$((fail + f))
	[ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && fail=$((fail + 1))
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
