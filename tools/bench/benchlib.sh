# Shell pieces shared by the bench scripts (sourced; the caller defines log and sets
# install=1 when missing Debian packages may be installed).

# want_pkg CMD PACKAGE: true when CMD (a command name or a path) is there, after installing
# PACKAGE if allowed (root, install=1).
want_pkg() {
    command -v "$1" >/dev/null 2>&1 && return 0
    [ -x "$1" ] && return 0
    if [ "$install" = 1 ] && [ "$(id -u)" = 0 ]; then
        log "installing $2"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null 2>&1 ||
            { apt-get update -qq >/dev/null 2>&1 &&
              DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null 2>&1; }
    fi
    command -v "$1" >/dev/null 2>&1 || [ -x "$1" ]
}
