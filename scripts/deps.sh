#!/usr/bin/env bash
# Debian 12 packages that lumen builds and tests with (Open MPI: the MPI
# tests run the simulated applications under a real mpirun).
set -euo pipefail
pkgs="build-essential cmake ninja-build pkg-config clang libclang-rt-14-dev
      libyaml-dev libpcre2-dev libcjson-dev libsqlite3-dev libzstd-dev libxxhash-dev librocm-smi-dev
      libpq-dev postgresql libmicrohttpd-dev curl wrk chromium
      openmpi-bin libopenmpi-dev"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null
fi
# npm installs the web GUI's chart library at build time (and the browser
# tests' driver); Debian's npm brings Node.js with it.
if ! command -v npm >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq npm >/dev/null
fi
