#!/usr/bin/env bash
# .ci/fuzz.sh - the CI fuzz step: builds the libFuzzer targets of tests/fuzz
# with clang (ASan + UBSan, coverage-instrumented library) and runs each one
# for SECONDS (default 60) from its committed seed corpus and dictionary.
# SPDX-License-Identifier: MIT
#
# A crash, sanitizer report, leak, timeout or broken check fails the step;
# the reproducer is left in build/fuzz-ci/<target>/ and its path printed.
# Fix the bug, then commit the reproducer to tests/fuzz/regressions/<target>/
# so the normal ctest suite (the <target>_replay tests) replays it for good.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. .ci/deps.sh
weft_ensure_fuzz_deps
secs=${1:-60}
# fuzz_remote needs the weft_remote library (jansson: deps.sh)
targets=(fuzz_ops fuzz_schedule fuzz_snapshot fuzz_json fuzz_relations fuzz_remote)

# clang's own warnings about stb_ds's header macros are not this step's
# business: the -Werror builds are gcc's (.ci/test.sh).
CC=clang cmake -S . -B build/fuzz -DCMAKE_BUILD_TYPE=Debug -DWEFT_FUZZ=ON -DWEFT_WERROR=OFF \
      -DWEFT_BUILD_TESTS=OFF -DWEFT_BUILD_BENCH=OFF -DWEFT_BUILD_EXAMPLES=OFF >/dev/null
cmake --build build/fuzz -j "$(weft_jobs)" --target "${targets[@]}"

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
failed=()
for t in "${targets[@]}"; do
    out="build/fuzz-ci/$t"
    rm -rf "$out"
    mkdir -p "$out/corpus"
    # a scratch copy: what the run adds never lands in the repository
    cp "tests/fuzz/corpus/$t/"* "$out/corpus/"
    dict=()
    [ -f "tests/fuzz/$t.dict" ] && dict=(-dict="tests/fuzz/$t.dict")
    echo "== fuzz: $t for ${secs}s"
    if "build/fuzz/tests/fuzz/$t" -max_total_time="$secs" -timeout=30 -rss_limit_mb=2048 \
           -artifact_prefix="$out/" -print_final_stats=1 "${dict[@]}" \
           "$out/corpus" "tests/fuzz/regressions/$t" >"$out/log" 2>&1; then
        grep -E '^stat::(number_of_executed_units|average_exec_per_sec)|DONE' "$out/log" || true
    else
        echo "fuzz: $t FAILED; last lines of $out/log:" >&2
        tail -n 40 "$out/log" >&2
        for f in "$out"/crash-* "$out"/leak-* "$out"/timeout-* "$out"/oom-*; do
            [ -e "$f" ] && echo "fuzz: reproducer: $f (replay: build/fuzz/tests/fuzz/$t $f)" >&2
        done
        failed+=("$t")
    fi
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: failed: ${failed[*]}" >&2
    exit 1
fi
echo "fuzz: all targets ran ${secs}s without a finding"
