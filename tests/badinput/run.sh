#!/bin/bash
# SPDX-License-Identifier: MIT
# Bad-input suite: synthetic cores from build/mkcore, valid and malformed, run through
# coreq under a time limit.
#
#   tests/badinput/run.sh                       uses build/coreq
#   COREQ=build-asan/coreq tests/badinput/run.sh
#   COREQ=build32/coreq tests/badinput/run.sh
#
# MKCORE (default build/mkcore) writes the inputs; KEEP=1 keeps the temporary directory.
# Every coreq run must: finish within 10 s, not die of a signal, print no sanitizer
# report, and write to stderr only lines that start with "coreq: " (a fatal error is exactly
# one such line and nothing on stdout). Prints "ok - ..." / "not ok - ..." per check and
# "N passed, M failed" at the end; exits 1 if anything failed.
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
COREQ=${COREQ:-$ROOT/build/coreq}
MKCORE=${MKCORE:-$ROOT/build/mkcore}
# COREQ_RUN: the prefix that runs an i386 COREQ where the kernel runs no i386 code (tests/run.sh)
read -r -a COREQ_RUN <<<"${COREQ_RUN:-}"
JCHECK="python3 $ROOT/tests/badinput/jcheck.py"
case $COREQ in /*) ;; *) COREQ=$PWD/$COREQ ;; esac
case $MKCORE in /*) ;; *) MKCORE=$PWD/$MKCORE ;; esac
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

PASSED=0
FAILED=0
ok() { PASSED=$((PASSED + 1)); echo "ok - $*"; }
notok() { FAILED=$((FAILED + 1)); echo "not ok - $*"; }

if [ ! -x "$COREQ" ]; then
	echo "not ok - coreq binary $COREQ is missing (make build/coreq)"
	echo "0 passed, 1 failed"
	exit 1
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/coreq-badinput.XXXXXX")
if [ "${KEEP:-0}" = 1 ]; then echo "# keeping $TMP"; else trap 'rm -rf "$TMP"' EXIT; fi

# BADINPUT_JOBS=N (default 2): N shards at once, each this script with BADINPUT_SHARD=K/N
# (the architectures K, K+N, ... and, shard 1, the inputs that are no architecture's), their
# lines printed shard by shard and their counts summed: the runs are independent and short,
# and the rest of the suite runs one process at a time (a third of the ASan suite was this).
if [ -z "${BADINPUT_SHARD:-}" ] && [ "${BADINPUT_JOBS:-2}" -gt 1 ]; then
	n=${BADINPUT_JOBS:-2}
	for ((k = 1; k <= n; k++)); do
		BADINPUT_SHARD=$k/$n TMPDIR=$TMP "$0" >"$TMP/shard$k.out" 2>&1 &
	done
	wait
	for ((k = 1; k <= n; k++)); do
		line=$(tail -n 1 "$TMP/shard$k.out")
		p=$(sed -nE 's/^([0-9]+) passed, ([0-9]+) failed$/\1/p' <<<"$line")
		f=$(sed -nE 's/^([0-9]+) passed, ([0-9]+) failed$/\2/p' <<<"$line")
		if [ -z "$p" ]; then
			cat "$TMP/shard$k.out"
			notok "shard $k/$n: no result line"
			continue
		fi
		head -n -1 "$TMP/shard$k.out"
		PASSED=$((PASSED + p))
		FAILED=$((FAILED + f))
	done
	echo "$PASSED passed, $FAILED failed"
	[ "$FAILED" = 0 ]
	exit
fi
SHARD=${BADINPUT_SHARD:-1/1}
SHARD_K=${SHARD%/*} SHARD_N=${SHARD#*/}
D=$TMP/cores
if ! "$MKCORE" "$D" >"$TMP/mkcore.log" 2>&1; then
	notok "mkcore $D: $(head -1 "$TMP/mkcore.log")"
	echo "$PASSED passed, $FAILED failed"
	exit 1
fi
cd "$D" || exit 1

OUT=$TMP/out
ERR=$TMP/err
RC=0

# run ARGS...: run coreq with a time limit; sets RC, stdout in $OUT, stderr in $ERR.
run() {
	timeout -k 2 10 ${COREQ_RUN[@]+"${COREQ_RUN[@]}"} "$COREQ" "$@" >"$OUT" 2>"$ERR"
	RC=$?
}

# Why the last run is not sane ("" if it is).
insane() {
	if [ "$RC" = 124 ] || [ "$RC" = 137 ]; then echo "timed out (10 s)"; return; fi
	if [ "$RC" -gt 128 ]; then echo "killed by signal $((RC - 128))"; return; fi
	if grep -qE 'AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error:' "$ERR"; then
		echo "sanitizer: $(grep -m1 -E 'ERROR|runtime error' "$ERR")"
		return
	fi
	stray
}

# Why stderr of the last run has lines that are not coreq's own ("" if none).
stray() {
	local bad
	bad=$(grep -v -m1 '^coreq: ' "$ERR")
	if [ -n "$bad" ] || { [ -s "$ERR" ] && [ "$(tail -c1 "$ERR" | od -An -c | tr -d ' ')" != '\n' ]; }; then
		echo "stderr line not from coreq: '$(printf %s "$bad" | head -c 160)'"
	fi
}

# fatal LABEL STATUS SUBSTRING ARGS...: coreq must fail with STATUS, print nothing on
# stdout and exactly one "coreq: " line on stderr containing SUBSTRING.
fatal() {
	local label=$1 status=$2 sub=$3 why
	shift 3
	run "$@"
	why=$(insane)
	if [ -z "$why" ] && [ "$RC" != "$status" ]; then why="exit status $RC, expected $status"; fi
	if [ -z "$why" ] && [ "$(wc -l <"$ERR")" != 1 ]; then why="stderr has $(wc -l <"$ERR") lines, expected 1"; fi
	if [ -z "$why" ] && ! grep -qF -- "$sub" "$ERR"; then why="error does not contain '$sub'"; fi
	if [ -z "$why" ] && [ -s "$OUT" ]; then why="stdout not empty"; fi
	if [ -z "$why" ]; then
		ok "$label: status $status"
	else
		notok "$label: $why; stderr: $(head -c 300 "$ERR" | tr '\n' '|')"
	fi
}

# status LABEL STATUS ARGS...: the run is sane and exits with STATUS (output checked after).
status() {
	local label=$1 status=$2 why
	shift 2
	run "$@"
	why=$(insane)
	# Stray stderr lines are reported on their own line; the output is still checked.
	case $why in "stderr line not from coreq"*) why= ;; esac
	if [ -z "$why" ] && [ "$RC" != "$status" ]; then why="exit status $RC, expected $status"; fi
	if [ -n "$why" ]; then
		notok "$label: $why; stderr: $(head -c 300 "$ERR" | tr '\n' '|')"
		return 1
	fi
	ok "$label: status $status"
	why=$(stray)
	[ -z "$why" ] || notok "$label: $why"
	return 0
}

# jcheck LABEL ARGS...: a jcheck.py check on the last output (pass $OUT in ARGS).
jcheck() {
	local label=$1 why
	shift
	if why=$($JCHECK "$@" 2>&1); then ok "$label"; else notok "$label: $why"; fi
}

ARCHES="x86_64 i386 s390x ppc32 mipsel mips64el hppa sh4 sparc64 alpha"
# this shard's
i=0 mine=
for a in $ARCHES; do
	[ $((i % SHARD_N)) = $((SHARD_K - 1)) ] && mine="$mine $a"
	i=$((i + 1))
done
ARCHES=$mine

# ---- valid cores ------------------------------------------------------------------------------
for a in $ARCHES; do
	for core in $a.core $a.core.gz $a.core.3m.gz $a.core.zz; do
		exp=$core.expected.json
		exe=$a.exe
		if status "$core: info --json with exe" 0 info --json "$core" "$exe"; then
			jcheck "$core: info fields" subset "$exp" info "$OUT"
			jcheck "$core: no problems" expr "$OUT" 'd["problems"] == []'
			[ -s "$ERR" ] && notok "$core: stderr not empty on success: $(head -c 200 "$ERR")"
		fi
		if status "$core: info --json without exe" 1 info --json "$core"; then
			jcheck "$core: only the executable is missing" expr "$OUT" \
				'[p["item"] for p in d["problems"]] == ["synth"] and d["images"][0]["status"] == "missing"'
			jcheck "$core: info fields without exe" subset "$exp" info "$OUT"
		fi
		if status "$core: info (text)" 0 info "$core" "$exe"; then
			grep -q 'pid 1001, ppid 1, command synth, args "synth --test"' "$OUT" &&
				ok "$core: text names the process" ||
				notok "$core: text does not name the process: $(head -3 "$OUT" | tr '\n' '|')"
		fi
		if status "$core: maps --json" 0 maps --json "$core" "$exe"; then
			jcheck "$core: maps segments" subset "$exp" maps "$OUT"
		fi
		if [ "$core" != "$a.core" ]; then
			# Compressed copies: one read and one fault are enough.
			read -r addr len hex < <($JCHECK list "$exp" reads addr len hex | sed -n 1p)
			status "$core: read $addr $len" 0 read --json "$core" "$addr" "$len" &&
				jcheck "$core: bytes at $addr" expr "$OUT" "d['bytes'] == '$hex'"
			read -r addr len fault < <($JCHECK list "$exp" faults addr len fault | sed -n 1p)
			fatal "$core: read $addr $len faults at $fault" 7 "cannot read target memory at $fault" \
				read "$core" "$addr" "$len"
			continue
		fi
		while read -r addr len hex; do
			status "$core: read $addr $len" 0 read --json "$core" "$addr" "$len" &&
				jcheck "$core: bytes at $addr" expr "$OUT" "d['bytes'] == '$hex'"
		done < <($JCHECK list "$exp" reads addr len hex)
		while read -r addr as len value; do
			if [ "$as" = str ]; then
				status "$core: read --as str $addr" 0 read --json --as str "$core" "$addr" "$len" &&
					jcheck "$core: string at $addr" expr "$OUT" "d['string'] == 'synthetic segment two'"
			else
				status "$core: read --as $as $addr" 0 read --json --as "$as" "$core" "$addr" "$len" &&
					jcheck "$core: $as at $addr" expr "$OUT" "d['values'] == ['$value']"
			fi
		done < <($JCHECK list "$exp" values addr as len value)
		while read -r addr len fault; do
			fatal "$core: read $addr $len faults at $fault" 7 "cannot read target memory at $fault" \
				read "$core" "$addr" "$len"
		done < <($JCHECK list "$exp" faults addr len fault)
	done
done

# ---- malformed cores: fatal errors --------------------------------------------------------------
# case (file is ARCH-case.core) | exit status | substring of the one-line error
FATAL_TABLE='
trunc-ident         5 truncated ELF header
trunc-ehdr          5 truncated ELF header
trunc-phdrs         5 truncated core
trunc-notes         5 lies past the end of the file
et-exec             4 is an executable (e_type 2), not a core file
et-dyn              4 is a shared object or PIE executable
bad-machine         4 unsupported architecture: e_machine 4660
bad-class           4 bad ELF class 3
class-none          4 bad ELF class 0
bad-data            4 bad ELF byte order 7
other-class         4 unsupported architecture
other-data          4 EI_DATA is wrong
note-descsz         5 has sizes past the end of its segment
note-namesz         5 has sizes past the end of its segment
note-descsz-last    5 has sizes past the end of its segment
pt-note-offset      5 lies past the end of the file
pt-note-size        5 lies past the end of the file
pt-note-wrap        5 lies past the end of the file
pt-note-empty       5 core has no NT_PRSTATUS note
filesz-gt-memsz     5 has more file bytes (0x2000) than memory (0x1000)
overlap             5 overlap
seg-wrap            5 wraps around the address space
phnum-xnum          5 program header
phnum-huge          5 run past the end of the file
phnum-zero          5 core has no program headers
phoff-end           5 run past the end of the file
ntfile-count32      5 NT_FILE note claims 4294967295 mappings
ntfile-count64      5 NT_FILE note claims
ntfile-count-wrap   5 NT_FILE note claims
ntfile-end-lt-start 5 NT_FILE entry 0 is malformed
ntfile-name-unterminated 5 NT_FILE entry 0 is malformed
no-prstatus         5 core has no NT_PRSTATUS note
prstatus-short      5 NT_PRSTATUS note #1 has
prstatus-tiny       5 NT_PRSTATUS note #1 has 40 bytes
'
for a in $ARCHES; do
	while read -r c st sub; do
		[ -n "$c" ] || continue
		f=$a-$c.core
		if [ "$c" = other-class ] && [ "${a#mips}" != "$a" ]; then
			# MIPS's other class is the other MIPS target: the flipped core is read
			# as one and fails on its layout instead
			st=5 sub="program header"
		fi
		fatal "$f: info" "$st" "$sub" info "$f"
		fatal "$f: info --json" "$st" "$sub" info --json "$f"
		fatal "$f: maps" "$st" "$sub" maps "$f"
		fatal "$f: read" "$st" "$sub" read "$f" 0x10000 4
	done <<<"$FATAL_TABLE"
	# Compressed inputs that are broken.
	fatal "$a-trunc.core.gz: info" 6 "compressed stream ends early" info "$a-trunc.core.gz"
	fatal "$a-trunc-header.core.gz: info" 6 "compressed stream ends early" info "$a-trunc-header.core.gz"
	fatal "$a-corrupt.core.gz: info" 6 "corrupt compressed data" info "$a-corrupt.core.gz"
	fatal "$a-corrupt.core.gz: read" 6 "corrupt compressed data" read "$a-corrupt.core.gz" 0x10000 4
done

# ---- what is no architecture's (shard 1) ----------------------------------------------------
if [ "$SHARD_K" = 1 ]; then
# Inputs that are not cores, or not files.
fatal "empty.core" 4 "not an ELF file (empty file)" info empty.core
fatal "text.core" 4 "not an ELF file" info text.core
fatal "text-x.core (text starting like a zlib header)" 4 "not an ELF file" info text-x.core
fatal "empty.core.gz" 4 "not an ELF file (empty file)" info empty.core.gz
fatal "text.core.gz" 4 "not an ELF file" info text.core.gz
fatal "magic-only.core.gz" 6 "compressed stream ends early" info magic-only.core.gz
fatal "x86_64.exe given as the core" 4 "is an executable" info x86_64.exe x86_64.core
fatal "missing file" 3 "No such file or directory" info "$D/does-not-exist.core"
fatal "a directory" 3 "not a regular file" info "$D"
fatal "/dev/null" 3 "not a regular file" info /dev/null
fatal "bomb.core.gz --max-inflate 1048576" 6 "expands to more than 1048576 bytes" \
	info --max-inflate 1048576 bomb.core.gz
fatal "bomb.core.gz --max-inflate 1048576 (json)" 6 "raise --max-inflate" \
	info --json --max-inflate 1048576 bomb.core.gz
fatal "bomb.core.gz (default limit: 64 MiB of zeros)" 4 "not an ELF file" info bomb.core.gz
# Usage errors.
fatal "no core argument" 2 "missing CORE" info
fatal "--max-inflate 0" 2 "bad --max-inflate" info --max-inflate 0 x86_64.core
fatal "read LEN 0" 2 "bad ADDR or LEN" read x86_64.core 0x10000 0
fatal "read bad --as" 2 "--as must be" read --as u7 x86_64.core 0x10000 4
fatal "unknown command" 2 "unknown command" frobnicate x86_64.core

# ---- stacks without unwind tables ---------------------------------------------------------------
# sh4: libdwfl 0.188 unwinds no sh4 core: frame 0 from the registers and the reason (exit 1:
# cut short); hppa: coreq's own walk, the synthetic executable has no unwind tables. The pc
# of hppa's core has its privilege bits set (3): frame 0 is without them.
if status "sh4.core: bt --json" 1 bt --json sh4.core sh4.exe; then
	jcheck "sh4.core: frame 0 of each thread, and why the walk ends there" expr "$OUT" \
		'[[f["pc"] for f in t["frames"]] for t in d["threads"]] == [["0x10020"], ["0x10040"]] and all(t["cut_short"] and t["stop"].startswith("no unwinder for sh4: libdwfl (elfutils ") for t in d["threads"])'
fi
if status "hppa.core: bt --json" 1 bt --json hppa.core hppa.exe; then
	jcheck "hppa.core: frame 0 of each thread without the privilege bits, and why the walk ends" expr "$OUT" \
		'[[f["pc"] for f in t["frames"]] for t in d["threads"]] == [["0x10020"], ["0x10040"]] and all(t["cut_short"] and "no CFI and no .PARISC.unwind descriptor" in t["stop"] for t in d["threads"])'
fi

fi

# ---- malformed cores that still open: partial answers ------------------------------------------
for a in $ARCHES; do
	if [ "$a" = x86_64 ] || [ "$a" = s390x ] || [ "$a" = mips64el ] || [ "$a" = sparc64 ] || [ "$a" = alpha ]; then a2=0x7f0000000000; a3=0x7f0000100000; else
		a2=0x40000000; a3=0x40100000; fi
	# Truncated inside segment 1: the first half reads, the second half faults.
	f=$a-trunc-load1.core
	if status "$f: info --json" 1 info --json "$f" "$a.exe"; then
		jcheck "$f: problem names the truncation" expr "$OUT" \
			'any("truncated" in p["message"] for p in d["problems"])'
		jcheck "$f: threads still read" expr "$OUT" '[t["tid"] for t in d["threads"]] == [1001, 1002]'
	fi
	status "$f: read before the cut" 0 read "$f" 0x10000 16
	fatal "$f: read after the cut" 7 "cannot read target memory at 0x10f00: the core is truncated" \
		read "$f" 0x10f00 4
	fatal "$f: read across the cut" 7 "cannot read target memory at 0x10800" read "$f" 0x107f0 32
	if status "$f: maps --json" 1 maps --json "$f" "$a.exe"; then
		jcheck "$f: maps does not call the cut segment complete" expr "$OUT" \
			'[s["source"] for s in d["segments"]][0] != "core"'
	fi
	f=$a-trunc-load2.core
	status "$f: info" 1 info "$f" "$a.exe"
	fatal "$f: read segment 2 past the cut" 7 "the core is truncated" read "$f" "$((a2 + 0x100))" 4
	status "$f: read segment 1" 0 read "$f" 0x10ff0 16
	# Huge segment, not wrapping: its file bytes are mostly absent.
	f=$a-seg-huge.core
	status "$f: info" 1 info "$f" "$a.exe"
	status "$f: read inside the file" 0 read "$f" "$a2" 8
	fatal "$f: read far into it" 7 "the core is truncated" read "$f" "$((a2 + 0x100000))" 4
	if status "$f: maps --json" 1 maps --json "$f" "$a.exe"; then
		jcheck "$f: maps byte counts are sane" expr "$OUT" \
			'all(isinstance(s["core_bytes"], int) and 0 <= s["core_bytes"] < 2**63 for s in d["segments"])'
	fi
	f=$a-seg-offset-wrap.core
	status "$f: info" 1 info "$f" "$a.exe"
	fatal "$f: read" 7 "cannot read target memory at $(printf 0x%x $((a2)))" read "$f" "$a2" 4
	# Section headers that do not exist: cores need none.
	status "$a-shoff-past-end.core: info" 0 info "$a-shoff-past-end.core" "$a.exe"
	status "$a-shoff-xnum-past-end.core: info" 0 info "$a-shoff-xnum-past-end.core" "$a.exe"
	# Register block shorter than the table's but with pc/sp/tp (not on i386).
	f=$a-prstatus-partial.core
	if [ -f "$f" ] && status "$f: info --json" 1 info --json "$f" "$a.exe"; then
		jcheck "$f: problem names the registers" expr "$OUT" \
			'any(p["item"] == "registers" for p in d["problems"])'
		jcheck "$f: pc/sp/tp still right" subset "$a.core.expected.json" info "$OUT"
	fi
	# link_map lists: problems, never a crash or hang.
	f=$a-lm-ok.core
	if status "$f: info --json" 1 info --json "$f"; then
		jcheck "$f: images from link_map" expr "$OUT" \
			'd["images_source"] == "link_map" and [i["name"] for i in d["images"]] == ["synth", "/lib/liba.so.1", "/lib/libb.so.2"] and [i["bias"] for i in d["images"]][1:] == ["0x50000000", "0x50100000"]'
		jcheck "$f: no link_map problem" expr "$OUT" \
			'not any(p["item"] == "link_map" for p in d["problems"])'
	fi
	while read -r c sub; do
		f=$a-$c.core
		for cmd in "info --json" "maps --json"; do
			if status "$f: $cmd" 1 $cmd "$f"; then
				jcheck "$f: $cmd problem '$sub'" expr "$OUT" \
					"any(p['item'] == 'link_map' and '$sub' in p['message'] for p in d['problems'])"
			fi
		done
		status "$f: info (text)" 1 info "$f"
	done <<EOF
lm-cycle link_map list has a cycle at $(printf 0x%x $((a3 + 0x400 + (a2 == 0x40000000 ? 20 : 40)))) after 3 entries
lm-wild-next reading link_map entry 3 at
lm-bad-name reading the name of link_map entry 2: cannot read target memory at 0x5000
lm-long link_map list is longer than 4096 entries
EOF
done

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
