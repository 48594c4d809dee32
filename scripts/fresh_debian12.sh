#!/usr/bin/env bash
# Runs the README's two commands (scripts/demo.sh, then scripts/test.sh) on a fresh, minimal Debian 12:
# a root made by debootstrap from Debian's archive, with the checkout's tracked files copied in, entered
# with chroot. Only what scripts/install_deps.sh installs is there, so a missing package fails here.
#   scripts/fresh_debian12.sh [ROOT]     ROOT: an empty or absent folder (default: a new one under /tmp)
# Needs root (debootstrap, chroot, mount); installs debootstrap on the host if absent.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/debian_root.sh
debian_root bookworm "${1:-}"
start=$SECONDS
run "fresh Debian 12" scripts/demo.sh
echo "==> demo.sh took $((SECONDS - start)) s on a fresh system"
start=$SECONDS
run "fresh Debian 12" scripts/test.sh
echo "==> test.sh took $((SECONDS - start)) s after the demo"
