#!/usr/bin/env bash
# Installs what the build needs, then runs the whole test suite, and the benchmark tool's own
# tests (Benchmarks/ is a package of its own, so that the root's tests stay fast).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
swift build --build-tests
swift test
swift test --package-path Benchmarks
