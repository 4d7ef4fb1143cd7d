# .ci/deps.sh - sourced by the .ci scripts: installs the Debian packages weft needs when missing.
# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# weft_ensure_deps (the build and tests) and weft_ensure_fuzz_deps (the
# fuzz step) check each package with dpkg-query and installs only
# the missing ones, with apt-get when running as root, through sudo
# otherwise; when neither is possible it prints the exact apt-get line and
# returns 1. On a system without dpkg it only checks that the tools exist.

# python3-venv, python3-setuptools and python3-wheel: the Python package is
# installed offline into a fresh virtual environment by its tests and by
# .ci/run (pip --no-index --no-build-isolation builds it with these).
# python3-numpy: Chunk.array's numpy columns are tested (test_python_numpy)
# and benchmarked with it; the binding itself does not need it.
# python3-mypy: test_python_types checks the binding's type hints with it.
# chromium: test_remote_browser loads the remote's inspector page in
# headless Chromium (skipped when it is missing).
WEFT_DEB_PACKAGES=(build-essential cmake pkg-config libcmocka-dev libxxhash-dev libstb-dev
                   libjansson-dev libzstd-dev python3 python3-venv python3-setuptools
                   python3-wheel python3-numpy python3-mypy chromium)
# Only the fuzz step needs these: clang ships libFuzzer, and Debian puts its
# runtime (and clang's ASan/UBSan runtimes) in libclang-rt-dev.
# libjansson-dev: fuzz_remote links the weft_remote library.
WEFT_FUZZ_DEB_PACKAGES=(clang libclang-rt-dev libjansson-dev)

# The 32-bit build (cmake/toolchains/i686-linux.cmake, docs/platforms.md):
# gcc-multilib and g++-multilib bring the 32-bit libc, libgcc and libstdc++
# (the C++ consumer example); the :i386 -dev packages come from Debian's
# i386 architecture, which weft_ensure_m32_deps adds when it is missing.
# jansson and zstd are optional in weft, but installed so that the 32-bit
# tests cover JSON and compressed snapshots too. The 32-bit build has no
# weft_remote (CMakeLists.txt; its configure step says so).
WEFT_M32_DEB_PACKAGES=(gcc-multilib g++-multilib libcmocka-dev:i386 libjansson-dev:i386
                       libzstd-dev:i386)

# The web example's check (examples/web, .ci/test.sh): Emscripten builds
# the page, headless Chromium runs it.
WEFT_WEB_DEB_PACKAGES=(emscripten chromium)

weft_ensure_deps() {
    weft_ensure_packages "${WEFT_DEB_PACKAGES[@]}"
}

weft_ensure_fuzz_deps() {
    weft_ensure_packages "${WEFT_FUZZ_DEB_PACKAGES[@]}"
}

# weft_ensure_m32_deps: the 32-bit build's packages on an amd64 Debian
# host; prints why and returns 1 when that is impossible (another system,
# another host architecture, no root).
weft_ensure_m32_deps() {
    if ! command -v dpkg >/dev/null 2>&1; then
        echo "deps: not a Debian system (no dpkg): cannot install the 32-bit packages" >&2
        return 1
    fi
    if [ "$(dpkg --print-architecture)" != amd64 ]; then
        echo "deps: the 32-bit build is set up for amd64 hosts (this is" \
             "$(dpkg --print-architecture))" >&2
        return 1
    fi
    if ! dpkg --print-foreign-architectures | grep -qx i386; then
        local sudo=()
        if [ "$(id -u)" -ne 0 ]; then
            if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
                sudo=(sudo)
            else
                echo "deps: the i386 architecture is not enabled and this is not root;" \
                     "run: dpkg --add-architecture i386 && apt-get update" >&2
                return 1
            fi
        fi
        echo "deps: enabling Debian's i386 architecture for the 32-bit build" >&2
        ${sudo[@]+"${sudo[@]}"} dpkg --add-architecture i386 || return 1
    fi
    weft_ensure_packages "${WEFT_M32_DEB_PACKAGES[@]}"
}

weft_ensure_web_deps() {
    weft_ensure_packages "${WEFT_WEB_DEB_PACKAGES[@]}"
}

# weft_ensure_packages PKG...: installs the missing ones (see above).
weft_ensure_packages() {
    if ! command -v dpkg-query >/dev/null 2>&1; then
        echo "deps: not a Debian system (no dpkg-query); assuming these are present:" \
             "$*" >&2
        local tool
        for tool in cc cmake pkg-config; do
            if ! command -v "$tool" >/dev/null 2>&1; then
                echo "deps: '$tool' not found" >&2
                return 1
            fi
        done
        return 0
    fi
    local missing=() pkg
    for pkg in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
            missing+=("$pkg")
        fi
    done
    if [ "${#missing[@]}" -eq 0 ]; then
        return 0
    fi
    echo "deps: installing missing packages: ${missing[*]}" >&2
    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            sudo=(sudo)
        elif command -v sudo >/dev/null 2>&1 && [ -t 0 ]; then
            sudo=(sudo) # interactive: sudo may ask for a password
        else
            echo "deps: not root and sudo is not available; run this, then retry:" >&2
            echo "  apt-get install -y ${missing[*]}" >&2
            return 1
        fi
    fi
    export DEBIAN_FRONTEND=noninteractive
    if ! ${sudo[@]+"${sudo[@]}"} apt-get update -q || ! ${sudo[@]+"${sudo[@]}"} apt-get install -y -q "${missing[@]}"; then
        echo "deps: apt-get failed; install them yourself, then retry:" >&2
        echo "  apt-get install -y ${missing[*]}" >&2
        return 1
    fi
}

# Parallel build/test jobs: every core, at least 1.
weft_jobs() {
    local n
    n=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
    [ "$n" -ge 1 ] 2>/dev/null || n=2
    echo "$n"
}
