#!/usr/bin/env bash
# Installs the dependencies (Debian packages) and builds mlpcore, saying what it does at each step.
#   scripts/build.sh                      Release build of everything in ./build
#   scripts/build.sh --sanitize           Debug build with AddressSanitizer + UBSan in ./build-asan
#   scripts/build.sh [--sanitize] T...    only the targets T (and what they need)
# A first Release build takes about 10 minutes on 2 cores (about 25 with the two NVIDIA fat binaries), most
# of it GPU code objects.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build
config=(-DCMAKE_BUILD_TYPE=Release)
if [ "${1:-}" = "--sanitize" ]; then
  shift
  dir=build-asan
  # No GPU in a sanitizer run: the renderer programs and the NVIDIA fat binaries are left out. -O1, as the
  # sanitizers' authors advise: at -O0 the emulated kernels' tests ran 5 minutes each. Line tables only
  # (-g1) are enough for the sanitizers' reports, and compile the emulated kernels a quarter faster than -g.
  # AMD code objects only for the architectures the host tests load: device code is not instrumented, and
  # the Release build makes and checks all of them. The specialized kernels' emulator tests are left to the
  # Release build too (tests/CMakeLists.txt says why).
  config=(-DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DMLPCORE_GPU_APPS=OFF -DMLPCORE_CUDA=OFF
          -DMLPCORE_SPECIALIZED_EMU_TESTS=OFF
          "-DMLPCORE_AMDGPU_TARGETS=gfx1100;gfx1151;gfx1201;gfx90a;gfx942"
          "-DCMAKE_CXX_FLAGS=-O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer")
fi
targets=("$@")

echo "==> Dependencies"
scripts/install_deps.sh
echo "==> Configuring $dir"
mkdir -p "$dir"
if ! cmake -S . -B "$dir" -G Ninja "${config[@]}" > "$dir/configure.log" 2>&1; then
  cat "$dir/configure.log"
  echo "error: configuring $dir failed (log above, also in $dir/configure.log)" >&2
  exit 1
fi
grep '^-- mlpcore:' "$dir/configure.log" || true
echo "==> Building ${targets[*]:-everything} in $dir ([done/total] per step; a failing step prints the compiler's error)"
start=$SECONDS
if ! cmake --build "$dir" --parallel "$(nproc)" ${targets[@]:+--target "${targets[@]}"}; then
  echo "error: the build failed; the compiler's message is above the line 'FAILED:'" >&2
  exit 1
fi
echo "==> Built in $((SECONDS - start)) s"
