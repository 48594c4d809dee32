# Sourced by scripts/fresh_debian12.sh and scripts/rocm_debian13.sh: a fresh minimal Debian root made by
# debootstrap from Debian's archive, the checkout's tracked files copied to /src/mlpcore in it, and
# `run LABEL COMMAND` to run a command there (chroot, /proc mounted, a clean environment, bash with
# `set -euo pipefail`).
#   debian_root SUITE [ROOT]     ROOT: an empty or absent folder (default: a new one under /tmp, removed at exit)
# Needs root (debootstrap, chroot, mount); installs debootstrap on the host if absent.
debian_root() {
  local suite=$1
  if [ -n "${2:-}" ]; then
    root=${2%/}
    keep=1
  else
    root=$(mktemp -d "/tmp/mlpcore-$suite.XXXXXX")
    keep=0
  fi
  log=$root.debootstrap.log
  # A root made here is removed at the end (several GB: packages and a build); one given is kept.
  trap 'umount "$root/proc" 2>/dev/null || true
        if [ "$keep" = 0 ] && ! mountpoint -q "$root/proc"; then rm -rf --one-file-system "$root" "$log"; fi' EXIT
  if ! command -v debootstrap >/dev/null; then
    echo "==> Installing debootstrap on the host"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
  fi
  echo "==> debootstrap --variant=minbase $suite $root"
  local start=$SECONDS
  debootstrap --variant=minbase "$suite" "$root" http://deb.debian.org/debian > "$log" 2>&1 || { tail -n 30 "$log"; exit 1; }
  echo "==> $suite root ready in $((SECONDS - start)) s"
  echo "==> Copying the checkout's tracked files to $root/src/mlpcore"
  mkdir -p "$root/src/mlpcore"
  git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$root/src/mlpcore"
  mount -t proc proc "$root/proc"
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  proxies=()
  local v
  for v in http_proxy https_proxy no_proxy; do [ -n "${!v:-}" ] && proxies+=("$v=${!v}"); done
  return 0
}

run() {
  local label=$1
  shift
  echo "==> [$label] $*"
  chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 TERM=dumb "${proxies[@]}" \
    /bin/bash -c "set -euo pipefail; cd /src/mlpcore && $*"
}
