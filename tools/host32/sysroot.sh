#!/bin/bash
# Build an i386 sysroot of *extracted* Debian packages for the 32-bit coreq host
# build (i686-linux-gnu-gcc-12 + libbfd-multiarch, libdw, libelf, libjansson, zlib) and
# the 32-bit plugins it hosts: LLVM's libompd (libomp-14-dev) and Open MPI's message-queue
# DLL (libopenmpi3: .../openmpi/lib/openmpi3/libompi_dbg_msgq.so, which needs only libc).
# Nothing i386 is installed system-wide; the only system change is
# `dpkg --add-architecture i386` (+ apt-get update) and, for running the
# result, the amd64 package libc6-i386 (the i386 loader /lib/ld-linux.so.2).
#
# usage: sysroot.sh DEST                build/refresh the sysroot (idempotent)
#        sysroot.sh --print-flags DEST  print CC/CFLAGS/LDFLAGS/LIBS/RUN (see env.sh)
#        sysroot.sh --check DEST        build the sysroot, then build and run check.c
#        sysroot.sh --lock              re-pin packages.lock to the current candidates
#
# Versions come from packages.lock next to this script ("package version sha256",
# architecture i386). Downloaded .debs are cached in $HOST32_DEB_CACHE
# (default DEST/.debs) and checked against the pinned SHA256. A stamp file makes a
# second run a no-op (a few ms) as long as packages.lock is unchanged.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LOCK="$HERE/packages.lock"
FORMAT=1          # bump when the extraction/fix-up logic changes
ARCH=i386

# The package set (closure of what linking/running needs; libc6:i386 is deliberately
# NOT extracted: link against the cross toolchain's libc, run on libc6-i386).
PACKAGES=(
  binutils-multiarch-dev binutils-multiarch binutils-dev libbinutils libctf0 libctf-nobfd0
  libdw-dev libdw1 libelf-dev libelf1
  libjansson-dev libjansson4
  zlib1g zlib1g-dev libzstd1 libzstd-dev liblzma5 liblzma-dev liblz4-1 liblz4-dev libbz2-1.0
  libomp-14-dev libomp5-14 libstdc++6 libgcc-s1 libatomic1
  libopenmpi3
  # libdebuginfod (loaded by coreq only when DEBUGINFOD_URLS is set and a file is missing)
  # and the closure of what libcurl3-gnutls needs; libresolv comes with libc6-i386
  libdebuginfod1 libdebuginfod-dev libcurl3-gnutls libbrotli1 libgnutls30 libgssapi-krb5-2
  libidn2-0 libldap-2.5-0 libnghttp2-14 libpsl5 librtmp1 libssh2-1 libgmp10 libhogweed6
  libnettle8 libp11-kit0 libtasn1-6 libunistring2 libffi8 libkrb5-3 libk5crypto3 libcom-err2
  libkrb5support0 libkeyutils1 libsasl2-2 libssl3
)

die() { echo "sysroot.sh: $*" >&2; exit 1; }
log() { echo "sysroot.sh: $*" >&2; }

need_root() { [ "$(id -u)" = 0 ] || die "$1 needs root"; }

ensure_arch() {
  if ! dpkg --print-foreign-architectures | grep -qx "$ARCH"; then
    need_root "dpkg --add-architecture $ARCH"
    log "adding dpkg architecture $ARCH"
    dpkg --add-architecture "$ARCH"
    apt_update
  fi
}

# apt-get update; waits for a concurrent apt holding the lists lock. Failures of
# single indexes (bookworm-security's i386 index is sometimes out of sync) are
# tolerated: the caller checks that the pinned versions are then known.
apt_update() {
  need_root "apt-get update"
  local i out
  for i in $(seq 1 60); do
    if out=$(apt-get -q -o DPkg::Lock::Timeout=300 update 2>&1); then return 0; fi
    if grep -q 'Could not get lock' <<<"$out"; then sleep 5; continue; fi
    grep -E '^(E|W):' <<<"$out" | sed 's/^/  apt: /' >&2 || true
    log "apt-get update reported errors (ignored; checking pinned versions next)"
    return 0
  done
  die "apt lists lock still held after 5 minutes"
}

deb_name() { echo "${1}_${2//:/%3a}_${ARCH}.deb"; }   # apt-get download's file name

# packages.lock -> arrays L_PKG L_VER L_SHA
read_lock() {
  [ -f "$LOCK" ] || die "$LOCK missing (run: $0 --lock)"
  L_PKG=(); L_VER=(); L_SHA=()
  local p v s
  while read -r p v s; do
    case "$p" in ''|'#'*) continue ;; esac
    [ -n "$v" ] && [ -n "$s" ] || die "bad line in $LOCK: $p $v $s"
    L_PKG+=("$p"); L_VER+=("$v"); L_SHA+=("$s")
  done <"$LOCK"
  [ "${#L_PKG[@]}" -gt 0 ] || die "$LOCK is empty"
}

write_lock() {
  ensure_arch
  apt_update
  local tmp p v specs=() vers
  declare -A ver sha
  # One apt-cache call each (every call costs ~1 s here).
  vers=$(apt-cache policy "${PACKAGES[@]/%/:$ARCH}" |
         awk '/^[^ ].*:$/{sub(":$","");sub(":'"$ARCH"'$","");p=$0} /Candidate:/{print p, $2}')
  while read -r p v; do ver[$p]=$v; done <<<"$vers"
  for p in "${PACKAGES[@]}"; do
    v=${ver[$p]:-}
    [ -n "$v" ] && [ "$v" != "(none)" ] || die "no candidate for $p:$ARCH"
    specs+=("$p:$ARCH=$v")
  done
  while read -r p v; do sha[$p]=$v; done < <(apt-cache show "${specs[@]}" |
         awk '/^Package:/{p=$2} /^SHA256:/{print p, $2}')
  tmp=$(mktemp)
  {
    echo "# i386 packages extracted into the coreq 32-bit host sysroot (tools/host32/sysroot.sh)."
    echo "# package  version  sha256   -- regenerate with: tools/host32/sysroot.sh --lock"
    echo "# source: apt-cache policy PKG:$ARCH on Debian bookworm, $(date -u +%Y-%m-%d)"
    for p in "${PACKAGES[@]}"; do
      [ -n "${sha[$p]:-}" ] || die "no SHA256 for $p:$ARCH=${ver[$p]}"
      printf '%-24s %-22s %s\n' "$p" "${ver[$p]}" "${sha[$p]}"
    done
  } >"$tmp"
  mv "$tmp" "$LOCK"
  log "wrote $LOCK"
  cat "$LOCK"
}

sha_ok() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]; }

# Make sure every pinned .deb is in the cache with the right checksum.
fetch_debs() {
  local cache=$1 i f missing=() specs=() out
  mkdir -p "$cache"
  for i in "${!L_PKG[@]}"; do
    f="$cache/$(deb_name "${L_PKG[i]}" "${L_VER[i]}")"
    sha_ok "$f" "${L_SHA[i]}" || { rm -f "$f"; missing+=("$i"); }
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  ensure_arch
  for i in "${missing[@]}"; do specs+=("${L_PKG[i]}:$ARCH=${L_VER[i]}"); done
  log "downloading ${#specs[@]} package(s) into $cache"
  # Sandbox::User=root: the cache dir need not be writable by _apt.
  # If apt does not know a pinned version (no i386 index yet), update once and retry.
  if ! out=$(cd "$cache" && apt-get -q -o APT::Sandbox::User=root download "${specs[@]}" 2>&1); then
    apt_update
    out=$(cd "$cache" && apt-get -q -o APT::Sandbox::User=root download "${specs[@]}" 2>&1) ||
      { echo "$out" >&2; die "apt-get download failed (pinned version gone? re-pin with: $0 --lock)"; }
  fi
  for i in "${missing[@]}"; do
    f="$cache/$(deb_name "${L_PKG[i]}" "${L_VER[i]}")"
    sha_ok "$f" "${L_SHA[i]}" || die "$f: missing or SHA256 differs from $LOCK"
  done
}

# Absolute symlinks (zlib1g-dev's libz.so -> /lib/i386-linux-gnu/libz.so.1.2.13,
# liblzma-dev's liblzma.so) would point into the host; make them relative.
fix_symlinks() {
  local root=$1 l t
  while IFS= read -r -d '' l; do
    t=$(readlink "$l")
    ln -sfn "$(realpath -m -s --relative-to="$(dirname "$l")" "$root$t")" "$l"
  done < <(find "$root" -type l -lname '/*' -print0)
}

stamp_value() { { echo "format $FORMAT"; cat "$LOCK"; } | sha256sum | cut -d' ' -f1; }

build() {
  local dest=$1 cache stamp new i
  mkdir -p "$dest"
  dest=$(cd "$dest" && pwd)
  stamp="$dest/.host32-sysroot"
  # Fast path: already built from this exact lock.
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$(stamp_value)" ] &&
     [ -e "$dest/usr/lib/$ARCH-linux-gnu/libbfd-multiarch.so" ]; then
    return 0
  fi
  # Never wipe a directory we did not create.
  if [ ! -f "$stamp" ] && [ -n "$(ls -A "$dest" | grep -vx '.debs' || true)" ]; then
    die "$dest is not empty and not a host32 sysroot; refusing to touch it"
  fi
  read_lock
  cache=${HOST32_DEB_CACHE:-$dest/.debs}
  fetch_debs "$cache"
  new="$dest/.new.$$"
  rm -rf "$new"; mkdir -p "$new"
  trap 'rm -rf "$new"' EXIT
  for i in "${!L_PKG[@]}"; do
    dpkg-deb -x "$cache/$(deb_name "${L_PKG[i]}" "${L_VER[i]}")" "$new"
  done
  fix_symlinks "$new"
  mkdir -p "$new/usr/include/$ARCH-linux-gnu"   # for -I symmetry; no package uses it today
  # Swap in the new tree (keeps the cache and stamp).
  : >"$stamp"
  for i in "$dest"/* "$dest"/.[!.]*; do
    case "$i" in "$dest/.debs"|"$stamp"|"$new"|"$dest/.[!.]*"|"$dest/*") ;; *) rm -rf "$i" ;; esac
  done
  mv "$new"/* "$dest"/
  rmdir "$new"; trap - EXIT
  stamp_value >"$stamp"
  log "sysroot ready: $dest (${#L_PKG[@]} packages)"
}

# Runtime side: the i386 loader and libc from the amd64 package libc6-i386.
ensure_runtime() {
  [ -e /lib/ld-linux.so.2 ] && return 0
  need_root "apt-get install libc6-i386"
  log "installing libc6-i386 (refusing any removal)"
  apt-get -q -y -o DPkg::Lock::Timeout=600 install --no-remove libc6-i386 >&2
  command -v i686-linux-gnu-gcc-12 >/dev/null || die "cross compiler gone after installing libc6-i386!"
}

case "${1:-}" in
  --lock) write_lock ;;
  --print-flags)
    [ $# = 2 ] || die "usage: $0 --print-flags DEST"
    build "$2"
    exec bash "$HERE/env.sh" "$2" "${HOST32_FORMAT:---make}" ;;
  --check)
    [ $# = 2 ] || die "usage: $0 --check DEST"
    build "$2"; ensure_runtime
    # shellcheck source=env.sh
    source "$HERE/env.sh" "$2"
    set -x
    $HOST32_CC $HOST32_CFLAGS -Wall -Wextra -O2 -o "$HOST32_SYSROOT/check32" "$HERE/check.c" \
      $HOST32_LDFLAGS $HOST32_LIBS
    set +x
    # shellcheck source=i386-way.sh
    . "$HERE/i386-way.sh"
    i386_way || die "$I386_WHY"
    log "$I386_WHY"
    # shellcheck disable=SC2086 # I386_RUN: empty or qemu's path
    $I386_RUN "$HOST32_SYSROOT/check32" ;;
  -*|'') die "usage: $0 [--print-flags|--check] DEST | $0 --lock" ;;
  *) [ $# = 1 ] || die "usage: $0 DEST"; build "$1"; ensure_runtime ;;
esac
