#!/usr/bin/env bash
# Installs everything mlpcore needs to build, test and regenerate its models, from Debian packages.
set -euo pipefail
packages=(
  cmake ninja-build g++ pkg-config
  libgtest-dev nlohmann-json3-dev libcli11-dev
  python3 python3-numpy python3-torch libopenblas0-pthread
  clang-19 lld-19 llvm-19 libamdhip64-dev libstb-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
