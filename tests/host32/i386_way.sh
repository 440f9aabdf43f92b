#!/bin/bash
# How the suite runs i386 code (tools/host32/i386-way.sh): the decision in each situation,
# including the one this machine may not be in (a kernel with IA-32 emulation off, simulated
# by a probe that fails natively), and that an i386 coreq nobody can run fails the suite
# with one line instead of being skipped. Prints "N passed, M failed".
set -u
cd "$(dirname "$0")/../.."
WAY=tools/host32/i386-way.sh
pass=0 fail=0
ok() { echo "ok - $*"; pass=$((pass + 1)); }
notok() { echo "not ok - $*"; fail=$((fail + 1)); }
# the decision is made fresh in each case below, not taken from a caller's run
unset COREQ_I386 COREQ_I386_WAY COREQ_I386_RUN COREQ_I386_WHY COREQ_RUN

# expect NAME WANT_RC WANT_OUT_REGEX WANT_ERR_REGEX CMD...
expect() {
	local name=$1 rc=$2 o=$3 e=$4 got out err
	shift 4
	out=$("$@" 2>/tmp/i386_way.$$) && got=0 || got=$?
	err=$(cat /tmp/i386_way.$$)
	rm -f /tmp/i386_way.$$
	if [ "$got" = "$rc" ] && [[ $out =~ $o ]] && [[ $err =~ $e ]] && [ "$(wc -l <<<"$err")" -le 1 ]; then
		ok "$name"
	else
		notok "$name: exit $got (want $rc), stdout '$out', stderr '$err'"
	fi
}

qemu=$(command -v qemu-i386-static || true)
if native_ok=$(/lib/ld-linux.so.2 --version 2>/dev/null) && [[ $native_ok == ld.so* ]]; then
	expect "auto: this kernel runs i386 code, so native" 0 '^native$' 'runs natively' "$WAY"
else
	expect "auto: this kernel runs no i386 code, so qemu" 0 '^qemu$' 'IA-32 emulation off' "$WAY"
fi
if [ -n "$qemu" ]; then
	expect "COREQ_I386=qemu forces emulation" 0 '^qemu$' 'forced: COREQ_I386=qemu' env COREQ_I386=qemu "$WAY"
	expect "--run gives qemu's path as the prefix" 0 "^$qemu\$" '^$' env COREQ_I386=qemu "$WAY" --run
else
	notok "qemu-i386-static is missing (tools/install-deps.sh installs qemu-user-static)"
fi
expect "unknown COREQ_I386: one line, exit 3" 3 '^$' '^i386-way: COREQ_I386=sometimes: say auto, native or qemu$' \
	env COREQ_I386=sometimes "$WAY"
# no qemu on PATH (a directory holding only bash)
nobin=$(mktemp -d)
ln -s "$(command -v bash)" "$nobin/bash"
expect "forced emulation without qemu: one line naming the package, exit 3" 3 '^$' \
	'qemu-i386-static is missing \(apt-get install qemu-user-static\)' env PATH="$nobin" COREQ_I386=qemu bash "$WAY"

# The situation of a kernel with IA-32 emulation off: the native probe fails.
# sim yes|no: source the script, make the native probe fail (qemu's succeeds), and let
# `command -v qemu-i386-static` find qemu (yes) or not (no)
sim() {
	bash -c '. tools/host32/i386-way.sh
		_i386_runs() { [ $# -gt 0 ]; }
		if [ "$1" = yes ]; then command() { echo /usr/bin/qemu-i386-static; }; else command() { :; }; fi
		i386_way; rc=$?; echo "$rc ${I386_WAY:-} ${I386_RUN:-}"; echo "$I386_WHY" >&2' sim "$1"
}
expect "IA-32 off, qemu works: qemu chosen and why said" 0 '^0 qemu /usr/bin/qemu-i386-static$' \
	'under /usr/bin/qemu-i386-static \(this kernel runs no i386 code: IA-32 emulation off\)' sim yes
expect "IA-32 off, qemu missing: refused with the package to install" 0 '^3  $' \
	'runs no i386 code and qemu-i386-static is missing \(apt-get install qemu-user-static\)' sim no
expect "IA-32 off, COREQ_I386=native: refused" 0 '^3  $' 'COREQ_I386=native, but this kernel runs no i386 code' \
	env COREQ_I386=native bash -c "$(declare -f sim); sim yes"
rm -rf "$nobin"

# tests/run.sh with an i386 coreq that cannot run: one "not ok" line and a failed count,
# before any part runs (never a silent skip of the 32-bit host)
if [ -x build32/coreq ]; then
	out=$(COREQ_I386=sometimes COREQ=build32/coreq UNIT=build32/tests tests/run.sh 2>&1) && rc=0 || rc=$?
	if [ "$rc" = 1 ] && [ "$(grep -c '^not ok' <<<"$out")" = 1 ] && [ "$(tail -n 1 <<<"$out")" = "0 passed, 1 failed" ] &&
		! grep -q '^###' <<<"$out"; then
		ok "tests/run.sh refuses an i386 coreq it cannot run, in one line"
	else
		notok "tests/run.sh with an unrunnable i386 coreq: exit $rc: $(head -c 300 <<<"$out")"
	fi
fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
