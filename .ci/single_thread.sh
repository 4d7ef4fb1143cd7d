#!/usr/bin/env bash
# .ci/single_thread.sh - the build without threads (-DWEFT_THREADS=OFF): warning-free, no pthread dependency, the whole ctest suite, and the same per-frame world hashes as the threaded build.
# SPDX-License-Identifier: MIT
#
#  1. build/single: Release, -Werror, WEFT_THREADS=OFF, tests and examples,
#     configured with WEFT_COMPARE_WITH=build/release (a threaded build of
#     the same sources; its two example programs are built here if needed)
#  2. no pthread: neither libweft.a nor libweft.so references a pthread_*
#     symbol (nm), and libweft.so needs no libpthread (readelf)
#  3. ctest over everything: the tests about threads report themselves
#     skipped, by name, with the reason (tests/support/needs_threads.h and
#     weft_add_threads_test in CMakeLists.txt); the list is printed. The
#     *_same_hashes_as_threaded tests compare, frame by frame, the flagship
#     and examples/11_states.c here (calling thread) with build/release on
#     4 workers, and test_sched_determinism's game-shaped simulation with
#     build/release on 8.
# Exits non-zero on the first failing step. About 3 minutes on 2 cores
# when build/release exists (as in .ci/test.sh, which calls it last).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)
. .ci/deps.sh
jobs=$(weft_jobs)

echo "== single-threaded: the threaded reference (build/release: flagship, 11_states," \
     "test_sched_determinism)"
if [ ! -f build/release/CMakeCache.txt ]; then
    cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DWEFT_WERROR=ON \
          -DWEFT_BUILD_TESTS=ON -DWEFT_BUILD_EXAMPLES=ON -DWEFT_BUILD_BENCH=ON >/dev/null
fi
cmake --build build/release -j "$jobs" --target weft_example_flagship weft_example_states \
    test_sched_determinism

echo "== single-threaded: Release + -Werror + WEFT_THREADS=OFF (build/single)"
cmake -S . -B build/single -DCMAKE_BUILD_TYPE=Release -DWEFT_WERROR=ON -DWEFT_THREADS=OFF \
      -DWEFT_BUILD_TESTS=ON -DWEFT_BUILD_EXAMPLES=ON -DWEFT_BUILD_BENCH=OFF \
      -DWEFT_COMPARE_WITH="$root/build/release"
cmake --build build/single -j "$jobs"

echo "== single-threaded: no pthread dependency"
# (each listing is read whole before grep: with pipefail, grep -q closing
# the pipe early would fail nm with SIGPIPE)
undef_a=$(nm -u build/single/libweft.a)
if grep -E ' pthread_' <<<"$undef_a"; then
    echo "ci: libweft.a (WEFT_THREADS=OFF) references pthread symbols (above)" >&2
    exit 1
fi
so=$(find build/single -maxdepth 1 -name 'libweft.so.*.*' -type f -print -quit)
test -n "$so" || { echo "ci: build/single has no libweft.so" >&2; exit 1; }
undef_so=$(nm -D --undefined-only "$so")
if grep -E ' pthread_' <<<"$undef_so"; then
    echo "ci: $so (WEFT_THREADS=OFF) references pthread symbols (above)" >&2
    exit 1
fi
needed=$(readelf -d "$so")
if grep -E 'NEEDED.*libpthread' <<<"$needed"; then
    echo "ci: $so (WEFT_THREADS=OFF) needs libpthread" >&2
    exit 1
fi
# The check must be able to fail: the threaded library does reference them.
undef_mt=$(nm -u build/release/libweft.a)
if ! grep -q ' pthread_create' <<<"$undef_mt"; then
    echo "ci: build/release/libweft.a references no pthread_create:" \
         "the check above proves nothing" >&2
    exit 1
fi
echo "libweft.a and ${so#build/single/} reference no pthread symbol"

echo "== single-threaded: ctest (build/single)"
ctest --test-dir build/single --output-on-failure -j "$jobs" --timeout 900 \
      >build/single/ctest.log 2>&1 ||
    { cat build/single/ctest.log; echo "ci: build/single ctest failed" >&2; exit 1; }
cat build/single/ctest.log
for t in example_flagship_same_hashes_as_threaded example_states_same_hashes_as_threaded \
         test_sched_determinism_same_hashes_as_threaded; do
    if ! grep -qE "Test +#[0-9]+: $t \.+ +Passed" build/single/ctest.log; then
        echo "ci: $t did not run and pass" >&2
        exit 1
    fi
done
echo "== single-threaded: skipped, by name (each printed its reason):"
grep -E '\(Skipped\)' build/single/ctest.log || echo "  (no whole test program skipped)"
skips=$(cat build/single/Testing/Temporary/LastTest.log)
grep -E '^\[  SKIP    \]|^SKIPPED ' <<<"$skips" | sort -u | sed 's/^/  /' || true
echo "== single-threaded: all passed"
