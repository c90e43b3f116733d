# The tests fuzz.<target>: runs one fuzz target for a bounded time on a fresh
# copy of its seeds, all under WORK_DIR (never the source tree), and fails on
# any finding (libFuzzer exits non-zero and leaves the input in
# WORK_DIR/artifacts).
#   cmake -DFUZZER=<binary> -DWORK_DIR=<dir> -DSEEDS=<file|file|...> [-DDICT=<file>]
#         [-DSECONDS=10] -P fuzz/ctest_run.cmake
if(NOT FUZZER OR NOT WORK_DIR)
  message(FATAL_ERROR "ctest_run.cmake: -DFUZZER= and -DWORK_DIR= are required")
endif()
if(NOT SECONDS)
  set(SECONDS 10)
endif()
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/corpus ${WORK_DIR}/artifacts ${WORK_DIR}/tmp)
# Seeds from different folders may share a name: number them.
string(REPLACE "|" ";" SEEDS "${SEEDS}")
set(i 0)
foreach(seed IN LISTS SEEDS)
  if(seed)
    get_filename_component(name ${seed} NAME)
    configure_file(${seed} ${WORK_DIR}/corpus/seed-${i}-${name} COPYONLY)
    math(EXPR i "${i} + 1")
  endif()
endforeach()
set(args -max_total_time=${SECONDS} -timeout=30 -rss_limit_mb=2048 -print_final_stats=1
    -artifact_prefix=${WORK_DIR}/artifacts/)
if(DICT)
  list(APPEND args -dict=${DICT})
endif()
string(JOIN " " shown ${args})
message(STATUS "${FUZZER} ${shown} ${WORK_DIR}/corpus  (${i} seeds)")
execute_process(COMMAND ${CMAKE_COMMAND} -E env TMPDIR=${WORK_DIR}/tmp ${FUZZER} ${args} ${WORK_DIR}/corpus
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  file(GLOB findings ${WORK_DIR}/artifacts/*)
  message(FATAL_ERROR "${FUZZER} found a problem (exit ${rc}); input: ${findings}")
endif()
