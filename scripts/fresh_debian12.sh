#!/usr/bin/env bash
# Runs the README's two commands (scripts/demo.sh, then scripts/test.sh) on a fresh, minimal Debian 12:
# a root made by debootstrap from Debian's archive, with the checkout's tracked files copied in, entered
# with chroot. Only what scripts/install_deps.sh installs is there, so a missing package fails here.
#   scripts/fresh_debian12.sh [ROOT]     ROOT: an empty or absent folder (default: a new one under /tmp)
# Needs root (debootstrap, chroot, mount); installs debootstrap on the host if absent.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${1:-}" ]; then
  root=${1%/}
  keep=1
else
  root=$(mktemp -d /tmp/mlpcore-debian12.XXXXXX)
  keep=0
fi
mirror=http://deb.debian.org/debian
log=$root.debootstrap.log
# A root this script made is removed at the end (several GB: packages and a build); one given is kept.
cleanup() {
  umount "$root/proc" 2>/dev/null || true
  if [ "$keep" = 0 ] && ! mountpoint -q "$root/proc"; then rm -rf --one-file-system "$root" "$log"; fi
}
trap cleanup EXIT

if ! command -v debootstrap >/dev/null; then
  echo "==> Installing debootstrap on the host"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi
echo "==> debootstrap --variant=minbase bookworm $root"
start=$SECONDS
debootstrap --variant=minbase bookworm "$root" "$mirror" > "$log" 2>&1 || { tail -n 30 "$log"; exit 1; }
echo "==> Debian 12 root ready in $((SECONDS - start)) s"

echo "==> Copying the checkout's tracked files to $root/src/mlpcore"
mkdir -p "$root/src/mlpcore"
git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$root/src/mlpcore"

mount -t proc proc "$root/proc"
cp /etc/resolv.conf "$root/etc/resolv.conf"
proxies=()
for v in http_proxy https_proxy no_proxy; do [ -n "${!v:-}" ] && proxies+=("$v=${!v}"); done
run() {
  echo "==> [fresh Debian 12] $*"
  chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 TERM=dumb "${proxies[@]}" \
    /bin/bash -c "cd /src/mlpcore && $*"
}
start=$SECONDS
run scripts/demo.sh
echo "==> demo.sh took $((SECONDS - start)) s on a fresh system"
start=$SECONDS
run scripts/test.sh
echo "==> test.sh took $((SECONDS - start)) s after the demo"
