#!/usr/bin/env bash
# The soak test (not in CI): one process runs 10,000 requests over several
# sessions and client threads and prints its RSS every tenth of the way;
# it fails if a run fails, a result is wrong or memory grows by more than
# 16 MiB after warm-up (bench/soak.cpp).
#
#   tools/soak.sh [BUILD_DIR] [soak options: --runs N --sessions S --threads T --seconds MAX]
#
# BUILD_DIR defaults to build/release; the `soak` program is built there if
# missing. The run is bounded by --seconds (default 600).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build/release}
[[ $# -gt 0 ]] && shift
if [[ ! -x $build/bin/soak ]]; then
  [[ -f $build/build.ninja ]] || cmake --preset release >/dev/null
  cmake --build "$build" -j2 --target soak
fi
exec "$build/bin/soak" "$@"
