#!/usr/bin/env bash
# Installs everything mlpcore needs to build, test and regenerate its models, from Debian 12 packages.
# CI proves this list on a fresh debootstrapped Debian 12 (.ci/run): a package missing here fails CI.
set -euo pipefail
packages=(
  cmake ninja-build g++ pkg-config
  libgtest-dev nlohmann-json3-dev libcli11-dev
  python3 python3-numpy python3-torch libopenblas0-pthread
  # AMD code objects: clang with the AMDGPU target, its offload bundler (clang-tools), lld, llvm tools, HIP headers
  clang-19 clang-tools-19 lld-19 llvm-19 libamdhip64-dev
  libclang-rt-19-dev  # libFuzzer, for scripts/fuzz.sh
  libstb-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "All ${#packages[@]} Debian packages are installed."
  exit 0
fi
sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
echo "Installing ${#missing[@]} Debian packages (${missing[*]}); the first time downloads about 1 GB."
$sudo_cmd apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "Installed."
