#!/usr/bin/env bash
# Installs what the build needs, then runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
swift build --build-tests
swift test
