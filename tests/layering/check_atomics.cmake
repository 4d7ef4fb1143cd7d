# tests/layering/check_atomics.cmake - every atomic in src/ goes through the wrappers
# of src/core/atomic.h, which carry the memory order in their names. Fails
# on any direct <stdatomic.h> operation or _Atomic declaration elsewhere.
# Run as: cmake -DWEFT_SOURCE_DIR=<repo> -P tests/layering/check_atomics.cmake
# SPDX-License-Identifier: MIT
file(GLOB_RECURSE files "${WEFT_SOURCE_DIR}/src/*.c" "${WEFT_SOURCE_DIR}/src/*.h")
set(bad "")
foreach(f IN LISTS files)
  if(f MATCHES "/src/core/atomic\\.h$")
    continue()
  endif()
  file(STRINGS "${f}" hits REGEX
       "(^|[^_A-Za-z0-9])(atomic_[a-z_]+[ ]*\\(|_Atomic|#include <stdatomic\\.h>)")
  foreach(h IN LISTS hits)
    file(RELATIVE_PATH rel "${WEFT_SOURCE_DIR}" "${f}")
    string(APPEND bad "\n  ${rel}: ${h}")
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "raw atomics outside src/core/atomic.h (use its wrappers):${bad}")
endif()
list(LENGTH files n)
message(STATUS "atomics: ${n} files checked, all through src/core/atomic.h")
