#!/usr/bin/env bash
# Builds the release binaries and installs them side by side, with the manual page:
#   scripts/install.sh [PREFIX]      # default /usr/local: PREFIX/bin and PREFIX/share/man/man1
# tasklog runs tasklog-http from its own folder for serve and http:// or caldav:// syncs, so
# the two must stay together. Set SKIP_BUILD=1 to install binaries already built.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix="${1:-/usr/local}"
[ "${SKIP_BUILD:-}" = 1 ] || scripts/build-release.sh
install -d "$prefix/bin" "$prefix/share/man/man1"
install -m 0755 .build/release/tasklog .build/release/tasklog-http "$prefix/bin/"
install -m 0644 .build/release/tasklog.1 "$prefix/share/man/man1/"
echo "installed tasklog and tasklog-http in $prefix/bin; man tasklog has every command"
case ":$PATH:" in *":$prefix/bin:"*) ;; *) echo "add $prefix/bin to PATH to run tasklog by name" ;; esac
