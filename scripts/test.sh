#!/usr/bin/env bash
# Builds everything and runs the whole test suite (GoogleTest through CTest).
#   scripts/test.sh              Release build
#   scripts/test.sh --sanitize   the same tests under AddressSanitizer + UBSan
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh "$@"
dir=build
[ "${1:-}" = "--sanitize" ] && dir=build-asan
echo "==> Tests in $dir"
# The "gpu" tests need a real GPU (run them with: ctest --test-dir build -L gpu).
ctest --test-dir "$dir" --output-on-failure --parallel "$(nproc)" --label-exclude gpu
