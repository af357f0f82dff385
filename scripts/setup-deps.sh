#!/usr/bin/env bash
# setup-deps.sh - installs the Debian/Ubuntu packages mgpu-harness builds and
# tests with (as root, or through sudo).  Does nothing when all are present.
set -euo pipefail
pkgs=(cmake make gcc libc6-dev liblua5.4-dev libjansson-dev nettle-dev lua5.4 lua-busted lua-cjson luajit libluajit-5.1-dev
  chromium fonts-dejavu-core) # chromium: the headless browser test of `mgpu-harness report`
pkgs+=(slurm-wlm munge) # a real single-node Slurm for tests/slurm (started and stopped by the test itself)
pkgs+=(clang bc)        # clang: the libFuzzer targets' short run in scripts/test.sh; bc: scripts/bench
pkgs+=(libiberty-dev)   # the C++ demangler of kernel names in messages (core/base/demangle.c)
pkgs+=(python3)         # tests/trace_viewer.py: the DevTools protocol driving chromium (trace_viewer_flows)
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
echo "installing: ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
