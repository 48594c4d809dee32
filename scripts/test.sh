#!/usr/bin/env bash
# Builds everything and runs the whole test suite (GoogleTest through CTest).
#   scripts/test.sh              Release build
#   scripts/test.sh --sanitize   the same tests under AddressSanitizer + UBSan
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh "$@"
dir=build
skip=()
if [ "${1:-}" = "--sanitize" ]; then
  dir=build-asan
  # The emulated backends' whole-network suites take minutes each under the sanitizers (the emulator's
  # lanes are fibers, and every switch costs ASan work): two of the five families run here, RDNA3 (lane
  # shuffles) and NVIDIA; all five run in the Release pass.
  skip=(--exclude-regex '(FusedBackend[.].*/emu_|SpecializedSources[.]MatchFloat64OnTheEmulator/)(rdna4|cdna|cdna2|nvidia_f16acc)( |$)')
fi
echo "==> Tests in $dir"
# The "gpu" tests need a real GPU (run them with: ctest --test-dir build -L gpu).
ctest --test-dir "$dir" --output-on-failure --parallel "$(nproc)" --label-exclude gpu "${skip[@]}"
