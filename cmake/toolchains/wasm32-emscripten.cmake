# cmake/toolchains/wasm32-emscripten.cmake - WebAssembly build with Emscripten (Debian's emscripten package).
# SPDX-License-Identifier: MIT
#
# Usage (docs/platforms.md):
#   cmake -S . -B build/web -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/wasm32-emscripten.cmake
#   cmake --build build/web
# or `emcmake cmake -S . -B build/web`, which passes Emscripten's own
# toolchain file: CMakeLists.txt does the rest either way (EMSCRIPTEN).
#
# This wrapper finds Emscripten's toolchain file (EMSCRIPTEN_ROOT_PATH, the
# EMSCRIPTEN environment variable, or Debian's /usr/share/emscripten) and
# works around a Debian packaging gap: its emcc runs JavaScript tools
# (acorn, terser) at link time that find their modules only through
# NODE_PATH=/usr/share/nodejs, so when NODE_PATH is unset it is set for the
# configure step and passed to every compile and link through a launcher.
if(NOT EMSCRIPTEN_ROOT_PATH)
  if(DEFINED ENV{EMSCRIPTEN})
    set(EMSCRIPTEN_ROOT_PATH "$ENV{EMSCRIPTEN}")
  else()
    set(EMSCRIPTEN_ROOT_PATH /usr/share/emscripten)
  endif()
endif()
set(WEFT_EMSCRIPTEN_TOOLCHAIN
    "${EMSCRIPTEN_ROOT_PATH}/cmake/Modules/Platform/Emscripten.cmake")
if(NOT EXISTS "${WEFT_EMSCRIPTEN_TOOLCHAIN}")
  message(FATAL_ERROR "Emscripten's toolchain file was not found at "
                      "${WEFT_EMSCRIPTEN_TOOLCHAIN} (apt-get install emscripten, or set "
                      "EMSCRIPTEN_ROOT_PATH)")
endif()
if(NOT DEFINED ENV{NODE_PATH} AND EXISTS /usr/share/nodejs)
  set(ENV{NODE_PATH} /usr/share/nodejs)
  set(CMAKE_C_COMPILER_LAUNCHER env NODE_PATH=/usr/share/nodejs)
  set(CMAKE_CXX_COMPILER_LAUNCHER env NODE_PATH=/usr/share/nodejs)
  set(CMAKE_C_LINKER_LAUNCHER env NODE_PATH=/usr/share/nodejs)
  set(CMAKE_CXX_LINKER_LAUNCHER env NODE_PATH=/usr/share/nodejs)
endif()
include("${WEFT_EMSCRIPTEN_TOOLCHAIN}")
