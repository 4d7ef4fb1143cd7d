# bench/check_selftest.cmake - ctest helper: weft_bench --check fails on a miss, a dead target and a malformed line.
# SPDX-License-Identifier: MIT
#
# cmake -DBENCH=<weft_bench> -DDIR=<scratch dir> -P check_selftest.cmake
# Runs the small `spawnset` scenario against four targets files and checks
# the exit status and the summary line of each: a file whose one target is
# met passes (exit 0; a "peers:" line, weft_peers' business, is skipped);
# a missed target, a target that matches no row and a
# line that does not parse each fail with exit 4 (the summary also counts
# rows a scenario marked INVALID: none here).
set(row "N11 bulk spawn vs one by one (Pos+Vel+Health)")
set(cases
    "met|${row} @ 1000, 1000\npeers: create cold vs best, 1.0|0|1 target\\(s\\) checked against 1 row\\(s\\): 0 miss\\(es\\), 0 invalid, 0 without a row, 0 malformed"
    "miss|${row}, 0.0001|4|1 target\\(s\\) checked against 1 row\\(s\\): 1 miss\\(es\\), 0 invalid, 0 without a row, 0 malformed"
    "dead|${row}, 1000\nno such scenario @ 5, 2.0|4|2 target\\(s\\) checked against 1 row\\(s\\): 0 miss\\(es\\), 0 invalid, 1 without a row, 0 malformed"
    "bad|${row}, 1000\n${row} 1000\n${row}, 1x|4|1 target\\(s\\) checked against 1 row\\(s\\): 0 miss\\(es\\), 0 invalid, 0 without a row, 2 malformed")
foreach(case IN LISTS cases)
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts 0 name)
  list(GET parts 1 body)
  list(GET parts 2 want_rc)
  list(GET parts 3 want_line)
  string(REPLACE "\\n" "\n" body "${body}")
  file(WRITE "${DIR}/targets_${name}.txt" "# ${name}\n${body}\n")
  execute_process(COMMAND ${BENCH} --n 1000 --reps 1 --warmup 0 spawnset
                          --check "${DIR}/targets_${name}.txt"
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL want_rc)
    message(FATAL_ERROR "${name}: exit ${rc}, expected ${want_rc}:\n${out}")
  endif()
  if(NOT out MATCHES "${want_line}")
    message(FATAL_ERROR "${name}: no summary matching '${want_line}':\n${out}")
  endif()
  message(STATUS "${name}: exit ${rc} as expected")
endforeach()
