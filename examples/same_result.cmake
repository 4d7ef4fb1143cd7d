# examples/same_result.cmake - ctest helper: the flagship ends in the same state on 1, 2 and 4 threads.
# SPDX-License-Identifier: MIT
#
# cmake -DEXE=<weft_example_flagship> -DDIR=<output dir> [-DUNITS=n] [-DFRAMES=n]
#       [-DHASH=OFF] -P same_result.cmake
# Runs the flagship for FRAMES frames (default 300) with UNITS units
# (default 8192: enough rows that both par_each systems, movement with
# min_rows 4096 and aging with the default 1024, split their tables into
# several chunk tasks once there is more than one worker). Compares the
# "final state:" line (from the simulation's own census) and, unless HASH is
# OFF, the "world hash:" line between the runs. The "par_each" line must
# show one chunk task per call on 1 thread and more chunk tasks than calls,
# for both systems, on 2 and 4 threads: a comparison in which nothing ran
# in parallel would prove nothing.
if(NOT DEFINED UNITS)
  set(UNITS 8192)
endif()
if(NOT DEFINED FRAMES)
  set(FRAMES 300)
endif()
set(LINES "final state: [^\n]*")
if(NOT DEFINED HASH OR HASH)
  list(APPEND LINES "world hash: [0-9a-f]+")
endif()
set(PAR_RE "par_each \\(whole run\\): movement ([0-9]+) calls, ([0-9]+) chunk tasks; aging ([0-9]+) calls, ([0-9]+) chunk tasks")
set(first "")
foreach(threads 1 2 4)
  execute_process(COMMAND ${EXE} ${UNITS} ${FRAMES} ${DIR} ${threads}
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
  string(REGEX MATCH "${PAR_RE}" par "${out}")
  if(par STREQUAL "")
    message(FATAL_ERROR "no par_each line in the output:\n${out}")
  endif()
  set(move_calls ${CMAKE_MATCH_1})
  set(move_chunks ${CMAKE_MATCH_2})
  set(age_calls ${CMAKE_MATCH_3})
  set(age_chunks ${CMAKE_MATCH_4})
  if(move_calls EQUAL 0 OR age_calls EQUAL 0)
    message(FATAL_ERROR "a par_each system never ran on ${threads} thread(s): ${par}")
  endif()
  if(threads EQUAL 1)
    if(NOT move_chunks EQUAL move_calls OR NOT age_chunks EQUAL age_calls)
      message(FATAL_ERROR "1 thread: expected one chunk task per par_each call: ${par}")
    endif()
  elseif(NOT move_chunks GREATER move_calls OR NOT age_chunks GREATER age_calls)
    message(FATAL_ERROR "${threads} threads: the par_each systems did not split: ${par}")
  endif()
  message(STATUS "${threads} thread(s):\n${found}${par}")
  if(first STREQUAL "")
    set(first "${found}")
  elseif(NOT found STREQUAL first)
    message(FATAL_ERROR "the result depends on the thread count "
                        "(1 thread:\n${first}${threads} threads:\n${found})")
  endif()
endforeach()
