# examples/same_hashes.cmake - ctest helper: two builds of an example write the same world hash after every frame.
# SPDX-License-Identifier: MIT
#
# cmake -DA=<exe> -DA_ARGS=<args,...> -DB=<exe> -DB_ARGS=<args,...>
#       -DOUT=<file prefix> -P same_hashes.cmake
# Runs A and B, each with its arguments followed by the path of a file it
# writes "frame <n> <hash>" lines to (OUT.a, OUT.b), and fails unless both
# wrote the same, non-empty sequence. Used by the build without threads
# (WEFT_THREADS=OFF) to compare its flagship and 11_states runs with the
# threaded build's on several workers (WEFT_COMPARE_WITH).
foreach(v A B OUT)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "same_hashes.cmake: -D${v}= is required")
  endif()
endforeach()
foreach(side A B)
  string(REPLACE "," ";" ${side}_ARGS "${${side}_ARGS}")
  string(TOLOWER ${side} s)
  set(file ${OUT}.${s})
  file(REMOVE ${file})
  execute_process(COMMAND ${${side}} ${${side}_ARGS} ${file}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${${side}} ${${side}_ARGS} failed (${rc}):\n${out}\n${err}")
  endif()
  if(NOT EXISTS ${file})
    message(FATAL_ERROR "${${side}} wrote no hash file ${file}")
  endif()
  file(STRINGS ${file} lines_${s})
  list(LENGTH lines_${s} n_${s})
endforeach()
if(n_a EQUAL 0)
  message(FATAL_ERROR "no frame hashes in ${OUT}.a")
endif()
if(NOT n_a EQUAL n_b)
  message(FATAL_ERROR "${n_a} frames in ${OUT}.a, ${n_b} in ${OUT}.b")
endif()
math(EXPR last "${n_a} - 1")
foreach(i RANGE ${last})
  list(GET lines_a ${i} la)
  list(GET lines_b ${i} lb)
  if(NOT la STREQUAL lb)
    message(FATAL_ERROR "first difference at line ${i}:\n  A (${A}): ${la}\n  B (${B}): ${lb}")
  endif()
endforeach()
message(STATUS "same world hash after each of ${n_a} frames:\n  A: ${A} ${A_ARGS}\n  B: ${B} ${B_ARGS}")
