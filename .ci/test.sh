#!/usr/bin/env bash
# .ci/test.sh - the README's test command: installs deps, then the whole ctest suite in two builds and the threaded tests under TSan.
# SPDX-License-Identifier: MIT
#
#  1. build/asan:    Debug, -DWEFT_SANITIZE=ON (AddressSanitizer + UBSan)
#  2. build/release: Release, warnings as errors (WEFT_WERROR, on by default),
#                    which also compiles the bench and examples
#  3. build/tsan:    ThreadSanitizer over the tests that run threads
#                    (concurrent entity reservation, deque, thread pool,
#                    every app test in tests/app, every scheduler test in
#                    tests/sched, every state test in tests/state, every
#                    task test in tests/task (tasks that span frames), the
#                    remote's HTTP, event-stream and 32-client tests (the
#                    last for 5 s), and the pipelined render-world example)
#                    and nothing else
#  4. build/single:  the build without threads (WEFT_THREADS=OFF), Release
#                    -Werror: no pthread reference, every ctest test (those
#                    about threads skip by name with the reason), and its
#                    per-frame world hashes equal build/release's on 4
#                    workers (.ci/single_thread.sh; about 3 minutes)
# Builds 1 and 2 run every ctest test (unit, api, model, fault, sched, abi,
# example, python); build 3 runs only the subset above. The Python tests
# must be registered in builds 1 and 2: CMake leaves them out (with a status
# line) when python3 is missing or libasan cannot be preloaded, which here
# is a failure rather than a silent skip.
# Then the platform builds, each in its own section at the end: the 32-bit
# suite (build/m32) and the web example in headless Chromium.
# Exits non-zero on the first failing step.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. .ci/deps.sh
weft_ensure_deps
jobs=$(weft_jobs)

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

# Fails unless build dir $1 registered the Python binding tests, the
# offline install into a fresh venv (it needs the system interpreter's
# python3-venv, python3-setuptools and python3-wheel), the numpy columns
# (python3-numpy) and the type hints (python3-mypy) among them.
require_python_tests() {
    local listed t
    listed=$(ctest --test-dir "$1" -N -L python)
    if ! grep -q "Total Tests: [1-9]" <<<"$listed"; then
        echo "ci: $1 has no Python tests (no python3, or no preloadable libasan?)" >&2
        exit 1
    fi
    for t in test_python_install test_python_numpy test_python_types; do
        if ! grep -q ": $t\$" <<<"$listed"; then
            echo "ci: $1 did not register $t (see bindings/python/tests/needs.py)" >&2
            exit 1
        fi
    done
}

echo "== [1/4] Debug + ASan/UBSan (build/asan)"
cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=Debug -DWEFT_SANITIZE=ON \
      -DWEFT_BUILD_TESTS=ON -DWEFT_BUILD_EXAMPLES=ON -DWEFT_BUILD_BENCH=OFF
cmake --build build/asan -j "$jobs"
require_python_tests build/asan
ctest --test-dir build/asan --output-on-failure -j "$jobs" --timeout 900

echo "== [2/4] Release + -Werror (build/release)"
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DWEFT_WERROR=ON \
      -DWEFT_BUILD_TESTS=ON -DWEFT_BUILD_EXAMPLES=ON -DWEFT_BUILD_BENCH=ON
cmake --build build/release -j "$jobs"
require_python_tests build/release
ctest --test-dir build/release --output-on-failure -j "$jobs" --timeout 900

echo "== [3/4] ThreadSanitizer, threaded tests (build/tsan)"
cmake -S . -B build/tsan -DCMAKE_BUILD_TYPE=Debug -DWEFT_TSAN=ON \
      -DWEFT_BUILD_TESTS=ON -DWEFT_BUILD_EXAMPLES=ON -DWEFT_BUILD_BENCH=OFF
sched_tests=$(for f in tests/sched/test_*.c tests/state/test_*.c tests/app/test_*.c tests/task/test_*.c; do
    basename "$f" .c; done)
# shellcheck disable=SC2086 # one target per word
cmake --build build/tsan -j "$jobs" --target test_entity_index test_api_entity \
    test_deque test_deque_stress test_thread_pool weft_example_render_world test_remote_http test_remote_hostile test_remote_bevy \
    test_remote_stream test_remote_load \
    test_module test_module_layout $sched_tests
TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1}" WEFT_REMOTE_LOAD_SECONDS=5 \
    ctest --test-dir build/tsan --output-on-failure -j "$jobs" --timeout 900 \
    -R "test_entity_index|test_api_entity|test_deque|test_thread_pool|test_task|test_app|test_stepping|test_diag|test_subapp|example_render_world|test_sched_|test_state|test_remote_http|test_remote_hostile|test_remote_bevy|test_remote_stream|test_remote_load|test_module"

echo "== [4/4] the build without threads (build/single, .ci/single_thread.sh)"
bash .ci/single_thread.sh

# ---- 32-bit (i386) ----
# The whole ctest suite built with -m32 (cmake/toolchains/i686-linux.cmake),
# Release with -Werror and no sanitizer: every size computation with a
# 32-bit size_t, i386's 4-byte alignment of 64-bit struct members, x87
# floating point. Skipped, with the reason printed, only when its Debian
# packages cannot be installed (weft_ensure_m32_deps in .ci/deps.sh). On a
# kernel that cannot execute i386 programs (some virtual machines: the exec
# fails with "Exec format error") the suite is still built with -Werror,
# and the tests are skipped with that reason printed.
echo "== [32-bit] Release -m32 + -Werror (build/m32)"
if weft_ensure_m32_deps; then
    cmake -S . -B build/m32 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/i686-linux.cmake \
          -DCMAKE_BUILD_TYPE=Release -DWEFT_WERROR=ON -DWEFT_BUILD_TESTS=ON \
          -DWEFT_BUILD_EXAMPLES=ON -DWEFT_BUILD_BENCH=ON
    if ! grep -q 'CMAKE_C_SIZEOF_DATA_PTR "4"' build/m32/CMakeFiles/*/CMakeCCompiler.cmake; then
        echo "ci: build/m32 is not a 32-bit build" >&2
        exit 1
    fi
    echo "== [32-bit] note: weft_remote and its tests are not built in a 32-bit" \
         "build (CMakeLists.txt, docs/platforms.md)"
    cmake --build build/m32 -j "$jobs"
    printf 'int main(void) { return 0; }\n' >build/m32/exec_probe.c
    gcc -m32 build/m32/exec_probe.c -o build/m32/exec_probe
    if build/m32/exec_probe 2>/dev/null; then
        ctest --test-dir build/m32 --output-on-failure -j "$jobs" --timeout 900
    else
        echo "== [32-bit] tests SKIPPED: this kernel cannot execute i386 programs" \
             "(a gcc -m32 program fails to start); the suite was built with -Werror"
    fi
else
    echo "== [32-bit] SKIPPED: its packages cannot be installed (reason above)"
fi

# ---- WebAssembly in Chromium ----
# The release build with WEFT_WEB: the web example built twice with
# Emscripten (single-threaded, -pthread; build/release/web-st, web-mt),
# each page run for 600 frames in headless Chromium and its hash sequence
# compared with the native program's (ctest label web). Skipped, with the
# reason printed, only when emscripten or chromium cannot be installed.
echo "== [web] the web example in headless Chromium (build/release, WEFT_WEB=ON)"
if weft_ensure_web_deps && command -v emcc >/dev/null 2>&1 &&
   { command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; }; then
    cmake -S . -B build/release -DWEFT_WEB=ON
    cmake --build build/release -j "$jobs"
    ctest --test-dir build/release --output-on-failure -L web --timeout 900
    if ! ctest --test-dir build/release -N -L web | grep -q "Total Tests: 2"; then
        echo "ci: build/release did not register the two web tests" >&2
        exit 1
    fi
else
    echo "== [web] SKIPPED: emscripten or chromium cannot be installed (reason above)"
fi

echo "== tests: all passed"
