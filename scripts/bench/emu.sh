#!/usr/bin/env bash
# emu.sh - emu speed benchmark (thread-instructions per second on a memory
# kernel and an arithmetic loop, each against a plain C loop doing the same
# work, measured in the same run).  usage: scripts/bench/emu.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
[ -x "$build/emubench" ] || { echo "build first: $build/emubench is missing" >&2; exit 2; }
"$build/emubench" .
