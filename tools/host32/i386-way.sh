#!/bin/bash
# How this machine runs i386 code: natively (the kernel's IA-32 emulation) or under Debian's
# qemu-i386-static (package qemu-user-static). Some kernels of our machine kind have IA-32
# emulation switched off: exec of an i386 ELF then fails with ENOEXEC, and execvp() (timeout,
# Python's subprocess with a shell fallback) even runs it as a shell script. So the way is
# decided by exec'ing a tiny i386 program, /lib/ld-linux.so.2 --version (the i386 loader
# itself, from libc6-i386, which every i386 program of the suite needs anyway).
#
#   tools/host32/i386-way.sh         prints the way on stdout, "native" or "qemu", and a line
#                                    saying why on stderr; exit 3 with a one-line reason when
#                                    neither way runs i386 code
#   tools/host32/i386-way.sh --run   the command prefix: empty (native) or qemu's path
#   source tools/host32/i386-way.sh; i386_way || exit
#                                    sets I386_WAY (native|qemu), I386_RUN (prefix, a word
#                                    list: empty or the qemu binary) and I386_WHY
#
# COREQ_I386=qemu forces the emulated way (so both ways are tested on any machine),
# COREQ_I386=native forces the native way; unset or "auto" decides by the probe. The
# decision is made once per run: a caller exports COREQ_I386_WAY, COREQ_I386_RUN (and
# COREQ_I386_WHY, the reason to repeat), and
# i386_way takes them as they are when both are set (a nested script does not probe again).
#
# qemu-user needs no -L here: the i386 programs of the suite use the host's i386 loader and
# libc (libc6-i386) and find the host32 sysroot's libraries through their DT_RPATH; the
# fixture scripts pass -L themselves where a program runs on a sysroot's libc.

I386_PROBE=(/lib/ld-linux.so.2 --version)

# _i386_runs PREFIX...: the probe runs through PREFIX (none: natively) and says it is ld.so
_i386_runs() {
	local out
	out=$("$@" "${I386_PROBE[@]}" 2>/dev/null) || return 1
	[[ $out == ld.so* ]]
}

i386_way() {
	if [ -n "${COREQ_I386_WAY:-}" ] && [ -n "${COREQ_I386_RUN+set}" ]; then
		I386_WAY=$COREQ_I386_WAY I386_RUN=$COREQ_I386_RUN I386_WHY=${COREQ_I386_WHY:-decided earlier in this run}
		return 0
	fi
	local want=${COREQ_I386:-auto} qemu
	qemu=$(command -v qemu-i386-static || true)
	if [ ! -x "${I386_PROBE[0]}" ]; then
		I386_WHY="no i386 loader ${I386_PROBE[0]} (apt-get install libc6-i386)"
		return 3
	fi
	case $want in
	auto | native)
		if _i386_runs; then
			I386_WAY=native I386_RUN="" I386_WHY="i386 code runs natively (${I386_PROBE[*]} ran)"
			[ "$want" = native ] && I386_WHY="$I386_WHY; COREQ_I386=native"
			return 0
		fi
		if [ "$want" = native ]; then
			I386_WHY="COREQ_I386=native, but this kernel runs no i386 code (${I386_PROBE[*]} did not run: IA-32 emulation off?)"
			return 3
		fi
		;;
	qemu) ;;
	*)
		I386_WHY="COREQ_I386=$want: say auto, native or qemu"
		return 3
		;;
	esac
	if [ -z "$qemu" ]; then
		I386_WHY="this kernel runs no i386 code and qemu-i386-static is missing (apt-get install qemu-user-static)"
		[ "$want" = qemu ] && I386_WHY="COREQ_I386=qemu, but qemu-i386-static is missing (apt-get install qemu-user-static)"
		return 3
	fi
	if ! _i386_runs "$qemu"; then
		I386_WHY="$qemu ${I386_PROBE[*]} did not run: neither the kernel nor qemu-user runs i386 code here"
		return 3
	fi
	I386_WAY=qemu I386_RUN=$qemu
	if [ "$want" = qemu ]; then
		I386_WHY="i386 code runs under $qemu (forced: COREQ_I386=qemu)"
	else
		I386_WHY="i386 code runs under $qemu (this kernel runs no i386 code: IA-32 emulation off)"
	fi
	return 0
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	if ! i386_way; then
		echo "i386-way: $I386_WHY" >&2
		exit 3
	fi
	case ${1:-} in
	--run) echo "$I386_RUN" ;;
	'') echo "$I386_WAY"; echo "i386-way: $I386_WHY" >&2 ;;
	*) echo "usage: $0 [--run]" >&2; exit 2 ;;
	esac
fi
