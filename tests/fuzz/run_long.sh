#!/usr/bin/env bash
# tests/fuzz/run_long.sh - long fuzzing runs: every target for a given time,
# one after the other, with libFuzzer's -fork mode (crashes are recorded and
# the run goes on), then the corpus each run grew is merged back, minimized,
# into a working corpus under the build directory.
# SPDX-License-Identifier: MIT
#
# Usage: tests/fuzz/run_long.sh SECONDS_PER_TARGET [JOBS] [TARGET...]
#   JOBS: parallel fork jobs (default 1; the machine is shared, and every
#         job is one busy core). Targets default to all of them.
# Environment: WEFT_FUZZ_BUILD (default build/fuzz), WEFT_FUZZ_WORK (default
# build/fuzz-work): <work>/<target>/corpus is the merged corpus kept between
# runs, <work>/<target>/crashes the reproducers, <work>/<target>/log the
# libFuzzer output. The run uses `nice -n 10`.
# A reproducer found here belongs in tests/fuzz/regressions/<target>/ once
# the bug is fixed, so the normal ctest suite replays it.
# Exit status: 1 when any target left a crash, leak or timeout reproducer.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
secs=${1:?usage: run_long.sh SECONDS_PER_TARGET [JOBS] [TARGET...]}
jobs=${2:-1}
shift $(( $# >= 2 ? 2 : 1 ))
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_ops fuzz_schedule fuzz_snapshot fuzz_json fuzz_relations)
build=${WEFT_FUZZ_BUILD:-build/fuzz}
work=${WEFT_FUZZ_WORK:-build/fuzz-work}

CC=${CC:-clang} cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DWEFT_FUZZ=ON \
    -DWEFT_WERROR=OFF -DWEFT_BUILD_TESTS=OFF -DWEFT_BUILD_BENCH=OFF \
    -DWEFT_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$build" -j 2 --target "${targets[@]}"

status=0
for t in "${targets[@]}"; do
    dir="$work/$t"
    mkdir -p "$dir/corpus" "$dir/crashes" "$dir/new"
    dict=()
    [ -f "tests/fuzz/$t.dict" ] && dict=(-dict="tests/fuzz/$t.dict")
    echo "== $t: ${secs}s, $jobs job(s)"
    # -fork keeps going past crashes; what it finds lands in $dir/new, then
    # -merge=1 folds the new inputs into the kept corpus, minimized.
    nice -n 10 "$build/tests/fuzz/$t" -fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1 \
        -ignore_ooms=1 -max_total_time="$secs" -timeout=30 -rss_limit_mb=2048 \
        -artifact_prefix="$dir/crashes/" "${dict[@]}" -print_final_stats=1 \
        "$dir/new" "$dir/corpus" "tests/fuzz/corpus/$t" >"$dir/log" 2>&1 || true
    nice -n 10 "$build/tests/fuzz/$t" -merge=1 "$dir/corpus" "$dir/new" \
        >>"$dir/log" 2>&1 || true
    rm -rf "$dir/new"
    grep -E '^#[0-9]+: cov:|^INFO: fuzzed for|stat::' "$dir/log" | tail -4 || true
    n=$(find "$dir/crashes" -type f | wc -l)
    echo "$t: $(find "$dir/corpus" -type f | wc -l) corpus files, $n reproducers in $dir/crashes"
    [ "$n" -eq 0 ] || status=1
done
exit $status
