# cmake/toolchains/i686-linux.cmake - 32-bit x86 build on an x86-64 Linux host (gcc or clang with -m32).
# SPDX-License-Identifier: MIT
#
# Usage: cmake -S . -B build/m32 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/i686-linux.cmake
# Needs Debian's gcc-multilib (the 32-bit libc and libgcc) and the :i386
# -dev packages of the libraries weft finds (libcmocka-dev:i386 for the
# tests; libjansson-dev:i386 and libzstd-dev:i386 are optional), after
# `dpkg --add-architecture i386 && apt-get update`. docs/platforms.md.
#
# The host system name is kept (no CMAKE_SYSTEM_NAME): the result runs on
# this machine, so ctest runs the 32-bit tests directly.
# -Wno-psabi: GCC notes on every struct with an _Atomic 64-bit field that
# its i386 alignment changed in GCC 11; weft's internal structs never
# cross a boundary with code built by an older compiler.
set(CMAKE_C_FLAGS_INIT "-m32 -Wno-psabi")
set(CMAKE_CXX_FLAGS_INIT "-m32 -Wno-psabi")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-m32")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-m32")
set(CMAKE_MODULE_LINKER_FLAGS_INIT "-m32")
# Debian's multiarch directory for i386 libraries (find_library looks in
# /usr/lib/<arch> first).
set(CMAKE_LIBRARY_ARCHITECTURE i386-linux-gnu)
# pkg-config (used by nothing in the build today, but by consumers) must see
# the 32-bit .pc files.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/i386-linux-gnu/pkgconfig:/usr/share/pkgconfig")
