# examples/same_result.cmake - ctest helper: the flagship ends in the same state on 1 and on 4 threads.
# SPDX-License-Identifier: MIT
#
# cmake -DEXE=<weft_example_flagship> -DDIR=<output dir> [-DHASH=OFF] -P same_result.cmake
# Compares the "final state:" line (from the simulation's own census) and,
# unless HASH is OFF, the "world hash:" line between the two runs.
set(LINES "final state: [^\n]*")
if(NOT DEFINED HASH OR HASH)
  list(APPEND LINES "world hash: [0-9a-f]+")
endif()
set(first "")
foreach(threads 1 4)
  execute_process(COMMAND ${EXE} 5000 30 ${DIR} ${threads}
                  OUTPUT_VARIABLE out RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "flagship on ${threads} threads failed (${rc}):\n${out}")
  endif()
  set(found "")
  foreach(re IN LISTS LINES)
    string(REGEX MATCH "${re}" line "${out}")
    if(line STREQUAL "")
      message(FATAL_ERROR "no line matching '${re}' in the output:\n${out}")
    endif()
    string(APPEND found "${line}\n")
  endforeach()
  message(STATUS "${threads} thread(s):\n${found}")
  if(first STREQUAL "")
    set(first "${found}")
  elseif(NOT found STREQUAL first)
    message(FATAL_ERROR "the result depends on the thread count")
  endif()
endforeach()
