#!/usr/bin/env bash
# Installs the dependencies (Debian packages) and builds mlpcore.
#   scripts/build.sh              Release build in ./build
#   scripts/build.sh --sanitize   Debug build with AddressSanitizer + UBSan in ./build-asan
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
if [ "${1:-}" = "--sanitize" ]; then
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DMLPCORE_GPU_APPS=OFF \
    -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
  cmake --build build-asan --parallel "$(nproc)"
else
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
  cmake --build build --parallel "$(nproc)"
fi
