#!/usr/bin/env bash
# .ci/example.sh - the README's first command: installs deps, builds Release, runs the flagship example.
# SPDX-License-Identifier: MIT
#
# Usage: bash .ci/example.sh [UNITS [FRAMES [THREADS]]]
#        (defaults: 100,000 units, 120 frames, one thread per CPU)
# Shares build/release with .ci/test.sh, so either one makes the other
# incremental. The flagship's trace (open in https://ui.perfetto.dev) and
# schedule graph (Graphviz) are written to build/flagship/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. .ci/deps.sh
weft_ensure_deps
jobs=$(weft_jobs)

cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DWEFT_WERROR=ON \
      -DWEFT_BUILD_EXAMPLES=ON >/dev/null
cmake --build build/release -j "$jobs" --target weft_example_flagship
mkdir -p build/flagship
./build/release/examples/weft_example_flagship "${1:-100000}" "${2:-120}" build/flagship "${3:--1}"
