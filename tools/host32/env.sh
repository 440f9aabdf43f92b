#!/bin/bash
# Compiler/linker flags for the 32-bit (i386) coreq host build against the sysroot
# made by tools/host32/sysroot.sh.
#
#   source tools/host32/env.sh DEST     (bash) sets HOST32_SYSROOT HOST32_CC HOST32_CFLAGS
#                                       HOST32_LDFLAGS HOST32_LIBS HOST32_RUN
#   bash tools/host32/env.sh DEST [--make|--sh]
#                                       prints them: --make (default) as Makefile
#                                       assignments CC/CFLAGS/LDFLAGS/LIBS/RUN,
#                                       --sh as shell assignments HOST32_*=...
#
# Running: the binary uses the *system* i386 loader /lib/ld-linux.so.2 and libc from
# /usr/lib32 (amd64 package libc6-i386). The sysroot libraries are found through a
# DT_RPATH baked in at link time (-Wl,--disable-new-dtags: DT_RPATH, unlike the
# default DT_RUNPATH, also applies to the libraries' own dependencies such as
# libbfd -> libzstd/libsframe, libdw -> liblzma/libbz2). The sysroot contains no
# libc, so the rpath cannot drag in a foreign libc (mixing the cross libc with the
# system loader hangs). So RUN is empty: just execute the binary. A binary linked
# without the rpath runs with LD_LIBRARY_PATH=$HOST32_LIBPATH instead.

_h32_dest=${1:-${HOST32_SYSROOT:-}}
if [ -z "$_h32_dest" ]; then
  echo "env.sh: usage: env.sh DEST [--make|--sh]" >&2
  return 1 2>/dev/null || exit 1
fi
HOST32_SYSROOT=$(cd "$_h32_dest" 2>/dev/null && pwd) || {
  echo "env.sh: $_h32_dest does not exist (run tools/host32/sysroot.sh $_h32_dest)" >&2
  return 1 2>/dev/null || exit 1
}
unset _h32_dest
_h32_l1=$HOST32_SYSROOT/usr/lib/i386-linux-gnu
_h32_l2=$HOST32_SYSROOT/lib/i386-linux-gnu      # zlib1g, liblzma5, libbz2-1.0 live here
HOST32_LIBPATH=$_h32_l1:$_h32_l2
HOST32_CC=i686-linux-gnu-gcc-12
# Sysroot headers first (-I beats the cross compiler's own search list, which
# ends with the host's /usr/include).
HOST32_CFLAGS="-D_FILE_OFFSET_BITS=64 -I$HOST32_SYSROOT/usr/include -I$HOST32_SYSROOT/usr/include/i386-linux-gnu"
HOST32_LDFLAGS="-L$_h32_l1 -L$_h32_l2 -Wl,-rpath-link,$HOST32_LIBPATH -Wl,--disable-new-dtags -Wl,-rpath,$HOST32_LIBPATH"
# libbfd is not linked: coreq loads it when needed from the file a link would take
# (the Makefile finds it through these -L directories: the sysroot's libbfd-multiarch).
HOST32_LIBS="-ldw -lelf -ljansson -lz -lzstd -llzma -llz4 -lpthread"
HOST32_RUN=""
unset _h32_l1 _h32_l2

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  case "${2:---make}" in
    --make)
      echo "CC := $HOST32_CC"
      echo "CFLAGS := $HOST32_CFLAGS"
      echo "LDFLAGS := $HOST32_LDFLAGS"
      echo "LIBS := $HOST32_LIBS"
      echo "# RUN: nothing needed, the binary carries DT_RPATH=$HOST32_LIBPATH and uses"
      echo "# the system i386 loader /lib/ld-linux.so.2 (package libc6-i386)."
      echo "# Without the rpath: LD_LIBRARY_PATH=$HOST32_LIBPATH ./prog"
      echo "RUN := $HOST32_RUN" ;;
    --sh)
      for _v in HOST32_SYSROOT HOST32_LIBPATH HOST32_CC HOST32_CFLAGS HOST32_LDFLAGS HOST32_LIBS HOST32_RUN; do
        printf '%s=%q\n' "$_v" "${!_v}"
      done ;;
    *) echo "env.sh: unknown format $2" >&2; exit 1 ;;
  esac
fi
