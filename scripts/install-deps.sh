#!/usr/bin/env bash
# Installs the Debian packages TaskLog builds against (C libraries wrapped as SwiftPM system
# libraries). Safe to run again. Needs root or sudo.
set -euo pipefail

packages=(pkg-config liblz4-dev libxxhash-dev libmicrohttpd-dev libcurl4-openssl-dev libsodium-dev)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
for attempt in 1 2 3 4 5; do
  if $sudo apt-get update -qq && $sudo apt-get install -y -qq "${missing[@]}"; then
    exit 0
  fi
  echo "install-deps: apt-get failed (attempt $attempt); the apt lock may be busy, retrying" >&2
  sleep $((attempt * 3))
done
echo "install-deps: could not install ${missing[*]}" >&2
exit 1
