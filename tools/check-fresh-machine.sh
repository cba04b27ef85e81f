#!/usr/bin/env bash
# tools/check-fresh-machine.sh - the newcomer check, automated: builds a
# minimal Debian bookworm (debootstrap --variant=minbase: no compiler, no
# cmake, no git) in a chroot, puts a clean `git clone` of this repository in
# it, and runs the two commands from the README's quick-start block there,
# exactly as written. Passing means a newcomer on a fresh machine gets from
# clone to demo and green tests with those two commands and nothing else.
#
# Only committed work is checked (it is a clone). Needs root (debootstrap,
# mount, chroot) and network access to a Debian mirror. Takes long: it
# downloads the packages and builds the project three times.
#
# Usage: tools/check-fresh-machine.sh [--reuse] [CHROOT_DIR]
#   CHROOT_DIR  where to build the chroot; must be outside the repository
#               (default: /var/tmp/subgraph-fresh-chroot). It is deleted
#               and recreated unless --reuse is given.
#   --reuse     keep an existing bootstrapped base system, only replace the
#               clone (faster reruns while fixing tools/setup.sh; packages
#               installed by an earlier run stay installed, so the package
#               step is not re-checked from scratch).
# Environment: DEBIAN_MIRROR (default http://deb.debian.org/debian);
#   NODE_EXTRA_CA_CERTS, when set to a readable file, is copied into the
#   chroot and set there too (a TLS-intercepting proxy's CA, for npm).
set -euo pipefail

reuse=0
root=/var/tmp/subgraph-fresh-chroot
for arg in "$@"; do
  case $arg in
    --reuse) reuse=1 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "check-fresh-machine: unknown option $arg" >&2; exit 2 ;;
    *) root=$arg ;;
  esac
done
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

say() { printf '\n==> [%s] %s\n' "$(date +%H:%M:%S)" "$*"; }
die() { printf 'check-fresh-machine: error: %s\n' "$*" >&2; exit 1; }
elapsed() {
  local s=$(($(date +%s) - $1))
  printf '%dm%02ds' $((s / 60)) $((s % 60))
}
# Sets cpu_now to the CPU seconds (user + system) used so far by finished
# child processes. On a shared machine wall time says little; CPU time
# divided by the core count estimates the wall time on a dedicated machine
# such as CI's. `times` must run in this shell, not in a $(...) subshell,
# which would see no children.
times_file=$(mktemp)
read_child_cpu() {
  times >"$times_file"
  cpu_now=$(awk 'NR == 2 {
    total = 0
    for (i = 1; i <= 2; i++) { split($i, p, /[ms]/); total += p[1] * 60 + p[2] }
    printf "%d\n", total
  }' "$times_file")
}

[[ $(id -u) -eq 0 ]] || die "needs root (debootstrap, mount and chroot)"
for tool in debootstrap chroot mount umount git; do
  command -v "$tool" >/dev/null || die "$tool not found"
done
root=$(realpath -m "$root")
case $root/ in
  "$repo"/*) die "$root is inside the repository; pick a folder outside it" ;;
  / | /bin/* | /usr/* | /etc/* | /dev/* | /proc/* | /sys/*) die "refusing to use $root" ;;
esac

# Anything still mounted under $root (from an interrupted run) must go
# before the folder is deleted: removing a bind-mounted /dev would delete
# the host's device nodes.
mounted_under_root() { awk -v r="$root/" 'index($2 "/", r) == 1 { print $2 }' /proc/mounts | sort -r; }
unmount_all() {
  local m
  for m in $(mounted_under_root); do
    umount "$m" 2>/dev/null || umount -l "$m" || true
  done
}
trap 'unmount_all; rm -f "$times_file"' EXIT
unmount_all
[[ -z $(mounted_under_root) ]] || die "could not unmount everything under $root"

# The README's two commands: the lines starting with ./ in its first fenced
# code block.
mapfile -t commands < <(awk '/^```/ { if (inblock) exit; inblock = 1; next }
                             inblock && /^\.\// { print }' "$repo/README.md")
[[ ${#commands[@]} -eq 2 ]] ||
  die "expected 2 commands in README.md's first code block, found ${#commands[@]}"

if [[ -n $(git -C "$repo" status --porcelain --untracked-files=no) ]]; then
  echo "note: uncommitted changes in $repo are not part of this check (it uses a clone)"
fi

total_start=$(date +%s)
if [[ $reuse -eq 1 && -x $root/bin/bash ]]; then
  say "Reusing the base system in $root"
else
  say "Bootstrapping Debian bookworm (minbase) into $root"
  rm -rf --one-file-system "$root"
  t0=$(date +%s)
  debootstrap --variant=minbase bookworm "$root" "$mirror"
  echo "debootstrap took $(elapsed "$t0")"
fi

say "Cloning $(git -C "$repo" rev-parse --short HEAD) into $root/root/subgraph"
rm -rf --one-file-system "$root/root/subgraph"
git clone --quiet --no-hardlinks "$repo" "$root/root/subgraph"
cp /etc/resolv.conf "$root/etc/resolv.conf"

# A host behind a TLS-intercepting proxy trusts the proxy's CA, and tells
# Node (npm) so through NODE_EXTRA_CA_CERTS. A fresh machine on the same
# network would need the same one setting for `npm ci` to reach the
# registry; it is the network's, not the project's, so it is forwarded
# into the chroot (the file copied, the variable set) and nothing else of
# the host's environment is. apt needs nothing: the mirror is plain HTTP
# with signed indexes.
extra_env=()
if [[ -n ${NODE_EXTRA_CA_CERTS:-} && -r $NODE_EXTRA_CA_CERTS ]]; then
  cp "$NODE_EXTRA_CA_CERTS" "$root/etc/host-extra-ca.pem"
  extra_env=(NODE_EXTRA_CA_CERTS=/etc/host-extra-ca.pem)
  echo "forwarding NODE_EXTRA_CA_CERTS ($NODE_EXTRA_CA_CERTS) into the chroot for npm"
fi

mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"

declare -a results
status=0
cores=$(nproc)
for cmd in "${commands[@]}"; do
  say "In the chroot: $cmd"
  t0=$(date +%s)
  read_child_cpu
  cpu0=$cpu_now
  rc=0
  chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "${extra_env[@]}" \
    /bin/bash -c "cd /root/subgraph && $cmd" || rc=$?
  read_child_cpu
  cpu=$((cpu_now - cpu0))
  verdict=PASSED
  [[ $rc -eq 0 ]] || verdict="FAILED (exit $rc)"
  results+=("$(printf '%-24s %s in %s wall, %dm%02ds CPU (~%dm%02ds on %d dedicated cores)' \
    "$cmd" "$verdict" "$(elapsed "$t0")" $((cpu / 60)) $((cpu % 60)) \
    $((cpu / cores / 60)) $((cpu / cores % 60)) "$cores")")
  if [[ $rc -ne 0 ]]; then
    status=1
    break
  fi
done

say "Fresh-machine check summary"
for line in "${results[@]}"; do echo "  $line"; done
echo "  total wall time $(elapsed "$total_start")"
[[ $status -eq 0 ]] && echo "PASSED: both README commands work on a fresh Debian bookworm." ||
  echo "FAILED"
exit $status
