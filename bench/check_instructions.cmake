# Instruction-count guard (issue 16 item 5; docs/performance.md "Regression guard").
#
# cmake -DBENCH=servelab-bench-macro -DVALGRIND=valgrind -DBASELINE=instructions_baseline.json
#       -DCOMPILER="GNU 12.2.0" -DOUT_DIR=dir [-DSCENARIO=G-out] [-DUPDATE=1] -P check_instructions.cmake
#
# Runs the macro bench's fixed guard scenario (`--only G --no-fork`; or
# SCENARIO, e.g. G-out: the same run writing every output file) under
# callgrind, counting only the instructions executed inside sl::executeRun
# (the event loop and the summary; no start-up, no JSON printing), and
# compares the count with the committed baseline. Instruction counts do not
# depend on the machine's load, so the check is stable on a shared machine;
# they do depend on the compiler, so a build with another compiler than the
# baseline's is reported as skipped instead of comparing apples with pears.
# UPDATE=1 (or SERVELAB_UPDATE_INSTRUCTIONS=1 in the environment) rewrites
# the baseline with the current count.
file(READ "${BASELINE}" base)
string(JSON baseCompiler GET "${base}" compiler)
string(JSON baseCount GET "${base}" instructions)
string(JSON tolerance GET "${base}" tolerance_percent)
set(update OFF)
if(UPDATE OR "$ENV{SERVELAB_UPDATE_INSTRUCTIONS}" STREQUAL "1")
  set(update ON)
endif()
if(NOT update AND NOT COMPILER STREQUAL baseCompiler)
  # The test's SKIP_REGULAR_EXPRESSION matches this line: a skip, not a pass.
  message(STATUS "instruction guard skipped: baseline is for '${baseCompiler}', this build uses '${COMPILER}'")
  return()
endif()

if(NOT SCENARIO)
  set(SCENARIO G)
endif()
file(MAKE_DIRECTORY "${OUT_DIR}")
set(outFile "${OUT_DIR}/callgrind.guard.${SCENARIO}.out")
file(REMOVE "${outFile}")
execute_process(
  COMMAND ${VALGRIND} --tool=callgrind --callgrind-out-file=${outFile} --toggle-collect=sl::executeRun*
          ${BENCH} --only ${SCENARIO} --no-fork --json
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "callgrind run failed (${rc}):\n${err}\n${out}")
endif()
# The guard scenario must still be the one the baseline counted: same
# trajectory (fingerprint) as recorded with it.
string(JSON fp GET "${out}" ${SCENARIO} fingerprint)
string(JSON baseFp GET "${base}" fingerprint)
file(STRINGS "${outFile}" totals REGEX "^(summary|totals): ")
if(NOT totals)
  message(FATAL_ERROR "no totals in ${outFile}")
endif()
list(GET totals 0 line)
string(REGEX REPLACE "^(summary|totals): ([0-9]+).*" "\\2" count "${line}")
if(update)
  string(JSON base SET "${base}" instructions "${count}")
  string(JSON base SET "${base}" compiler "\"${COMPILER}\"")
  string(JSON base SET "${base}" fingerprint "\"${fp}\"")
  file(WRITE "${BASELINE}" "${base}\n")
  message(STATUS "instruction baseline updated: ${count} (${COMPILER}, fingerprint ${fp})")
  return()
endif()
if(NOT fp STREQUAL baseFp)
  message(FATAL_ERROR "the guard scenario's trajectory changed (fingerprint ${fp}, baseline ${baseFp}): "
                      "a behaviour change; re-record the baseline with SERVELAB_UPDATE_INSTRUCTIONS=1")
endif()
# Integer percent arithmetic in per-mille: |count - base| * 1000 / base.
math(EXPR diff "${count} - ${baseCount}")
if(diff LESS 0)
  math(EXPR absDiff "0 - ${diff}")
else()
  set(absDiff ${diff})
endif()
math(EXPR permille "${absDiff} * 1000 / ${baseCount}")
math(EXPR limit "${tolerance} * 10")
message(STATUS "instructions in executeRun (${SCENARIO}): ${count} (baseline ${baseCount}, change ${diff}, ${permille} per mille; "
               "tolerance ${tolerance} %)")
if(permille GREATER limit)
  if(diff GREATER 0)
    message(FATAL_ERROR "instruction count regressed by more than ${tolerance} %: ${count} vs baseline ${baseCount}")
  else()
    message(FATAL_ERROR "instruction count fell by more than ${tolerance} % (${count} vs ${baseCount}): good news -- "
                        "record the new baseline (SERVELAB_UPDATE_INSTRUCTIONS=1 ctest -R instructions) so the guard "
                        "keeps its teeth")
  endif()
endif()
