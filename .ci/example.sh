#!/usr/bin/env bash
# .ci/example.sh - the README's first command: installs deps, builds Release, runs the flagship example.
# SPDX-License-Identifier: MIT
#
# Usage: bash .ci/example.sh [N]   (N entities, default 1,000,000)
# Shares build/release with .ci/test.sh, so either one makes the other
# incremental.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. .ci/deps.sh
weft_ensure_deps
jobs=$(weft_jobs)

cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DWEFT_WERROR=ON \
      -DWEFT_BUILD_EXAMPLES=ON >/dev/null
cmake --build build/release -j "$jobs" --target weft_example_flagship
./build/release/examples/weft_example_flagship "${1:-1000000}"
