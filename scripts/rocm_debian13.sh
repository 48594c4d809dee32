#!/usr/bin/env bash
# Builds and ISA-checks the AMD code objects with a real ROCm HIP toolchain: Debian 13's hipcc packages
# (clang-17, rocm-device-libs-17, HIP 5.7 headers; the LLVM of ROCm 6.0/6.1), in a fresh debootstrapped
# root entered with chroot. The configure must find that compiler and its device libraries by itself, and
# leave out the targets it cannot build (gfx12); the code-object tests then check every object it built
# and that docs/amd-kernels-clang17.md matches them, and the specialized kernels that `mlpcore compile`
# builds with clang-17 and that HIP 5.7's hiprtc builds at run time. The report of this build is written to
# $MLPCORE_REPORT_OUT (default /tmp/amd-kernels-clang17.md) by the report test, even when a check fails.
#   scripts/rocm_debian13.sh [ROOT]     ROOT: an empty or absent folder (default: a new one under /tmp)
# Needs root (debootstrap, chroot, mount); installs debootstrap on the host if absent.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/debian_root.sh
debian_root trixie "${1:-}"
start=$SECONDS
label="Debian 13, ROCm HIP"
run "$label" "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
  hipcc libamdhip64-dev libhiprtc-builtins5 rocm-device-libs-17 clang-17 llvm-17 lld-17 \
  cmake ninja-build g++ libgtest-dev nlohmann-json3-dev libcli11-dev libstb-dev python3 > /dev/null"
echo "==> packages installed in $((SECONDS - start)) s"
# The report's GPUs that clang-17 builds, gfx942 (CDNA3), and gfx1201, which the configure must leave out by
# itself. Every other target is built and checked with clang-19 in the Release build (scripts/fresh_debian12.sh).
run "$label" "cmake -S . -B build-rocm -G Ninja -DCMAKE_BUILD_TYPE=Release -DMLPCORE_CUDA=OFF \
  '-DMLPCORE_AMDGPU_TARGETS=gfx1100;gfx1201;gfx90a;gfx942' | grep 'mlpcore:'"
run "$label" "cmake --build build-rocm --parallel \$(nproc) --target mlpcore_code_object_tests mlpcore_specialized_code_object_tests mlpcore_cli mlpcore sdf_render_hip_app | tail -n 20"
# HIP 5.7 keeps hiprtc in libamdhip64.so.5, which mlpcore loads only when named. Its comgr is LLVM 17, as
# clang-17 is, whose gfx1100 code the CLI test checks: hiprtc is checked on gfx90a.
status=0
run "$label" "MLPCORE_HIPRTC_LIBRARY=libamdhip64.so.5 ctest --test-dir build-rocm --output-on-failure --parallel \$(nproc) -R 'CodeObject' \
  -E 'HiprtcCompilesTheSameSourceToTheFloor/gfx1100' | tail -n 15" || status=$?
report=${MLPCORE_REPORT_OUT:-/tmp/amd-kernels-clang17.md}
cp "$root/src/mlpcore/build-rocm/amd-kernel-report.md" "$report" || true  # written by CodeObjectReport.DocsMatchTheCodeObjects
echo "==> ROCm toolchain check took $((SECONDS - start)) s; its kernel report: $report"
exit "$status"
