# Fuzz tests (docs/fuzzing.md): the libFuzzer targets of fuzz/ are a project
# of their own, built with clang whatever compiler builds the toolkit. The
# test fuzz.build configures and builds it into <build>/fuzz (a fixture), and
# fuzz.<target> runs each target for ACCORDION_FUZZ_SECONDS on a copy of its
# seed corpus under <build>/fuzz/run/<target>; any finding fails the test.
# Label: fuzz (ctest -L fuzz). AUTO adds them when clang can link a
# -fsanitize=fuzzer,address,undefined program (apt-get install clang
# libfuzzer-14-dev); ON makes that an error, OFF leaves them out.
set(ACCORDION_FUZZ AUTO CACHE STRING "Fuzz tests with clang + libFuzzer (AUTO|ON|OFF)")
set(ACCORDION_FUZZ_SECONDS 10 CACHE STRING "Seconds each fuzz.<target> test fuzzes")
set(ACCORDION_FUZZ_CXX "" CACHE FILEPATH "clang++ for the fuzz targets (empty: search for one)")

set(ACCORDION_FUZZ_TARGETS
  trace_reader_fuzzer trace_validator_fuzzer
  platform_json_fuzzer platform_xml_fuzzer
  idx_file_fuzzer cifar_file_fuzzer token_file_fuzzer checkpoint_manifest_fuzzer)

set(_fuzz_found FALSE)
set(_fuzz_why "clang++ not found (apt-get install clang libfuzzer-14-dev)")
string(TOUPPER "${ACCORDION_FUZZ}" _fuzz_mode)
if(NOT _fuzz_mode STREQUAL "OFF" AND NOT ACCORDION_BUILD_SIMULATOR)
  set(_fuzz_why "the platform targets need SimGrid (apt-get install libsimgrid-dev)")
elseif(NOT _fuzz_mode STREQUAL "OFF")
  if(NOT ACCORDION_FUZZ_CXX)
    find_program(_fuzz_clangxx NAMES clang++ clang++-16 clang++-15 clang++-14)
    if(_fuzz_clangxx)
      set(ACCORDION_FUZZ_CXX "${_fuzz_clangxx}" CACHE FILEPATH "clang++ for the fuzz targets (empty: search for one)" FORCE)
    endif()
  endif()
  if(ACCORDION_FUZZ_CXX)
    # Can it link a fuzzer with both sanitizers? Checked once per compiler.
    if(NOT DEFINED _ACCORDION_FUZZ_CHECKED OR NOT _ACCORDION_FUZZ_CHECKED STREQUAL ACCORDION_FUZZ_CXX)
      set(_dir ${CMAKE_BINARY_DIR}/CMakeFiles/accordion-fuzz-check)
      file(WRITE ${_dir}/check.cc
        "#include <cstddef>\n#include <cstdint>\n"
        "extern \"C\" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }\n")
      execute_process(
        COMMAND ${ACCORDION_FUZZ_CXX} -fsanitize=fuzzer,address,undefined ${_dir}/check.cc -o ${_dir}/check
        RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_VARIABLE _err)
      if(_rc EQUAL 0)
        set(_ACCORDION_FUZZ_WORKS TRUE CACHE INTERNAL "")
      else()
        set(_ACCORDION_FUZZ_WORKS FALSE CACHE INTERNAL "")
      endif()
      set(_ACCORDION_FUZZ_CHECKED "${ACCORDION_FUZZ_CXX}" CACHE INTERNAL "")
    endif()
    if(_ACCORDION_FUZZ_WORKS)
      set(_fuzz_found TRUE)
    else()
      set(_fuzz_why "${ACCORDION_FUZZ_CXX} cannot link -fsanitize=fuzzer,address,undefined (apt-get install libfuzzer-14-dev)")
    endif()
  endif()
endif()
accordion_resolve_module(ACCORDION_FUZZ "fuzz tests (ctest -L fuzz, ${ACCORDION_FUZZ_SECONDS} s per target)"
  "${_fuzz_found}" "${_fuzz_why}")

if(ACCORDION_FUZZ)
  set(_fuzz_bin ${CMAKE_BINARY_DIR}/fuzz)
  set(_fuzz_launcher "")
  if(CMAKE_CXX_COMPILER_LAUNCHER)
    set(_fuzz_launcher "-DLAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER}")
  endif()
  add_test(NAME fuzz.build
    COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}/fuzz -DBINARY_DIR=${_fuzz_bin}
            -DCXX=${ACCORDION_FUZZ_CXX} -DGENERATOR=Ninja ${_fuzz_launcher}
            -P ${PROJECT_SOURCE_DIR}/fuzz/ctest_build.cmake)
  set_tests_properties(fuzz.build PROPERTIES FIXTURES_SETUP accordion_fuzzers LABELS fuzz TIMEOUT 1200)

  # Seeds: the committed samples and examples, and fuzz/corpus/<target>.
  file(GLOB_RECURSE _trace_seeds ${PROJECT_SOURCE_DIR}/traces/samples/*.trace
                                 ${PROJECT_SOURCE_DIR}/fuzz/corpus/trace/*.trace)
  file(GLOB _json_seeds ${PROJECT_SOURCE_DIR}/examples/simulator/platforms/*.json)
  file(GLOB _xml_seeds ${PROJECT_SOURCE_DIR}/examples/simulator/platforms/*.xml)
  set(_seeds_trace_reader_fuzzer ${_trace_seeds})
  set(_seeds_trace_validator_fuzzer ${_trace_seeds})
  set(_seeds_platform_json_fuzzer ${_json_seeds})
  set(_seeds_platform_xml_fuzzer ${_xml_seeds})
  set(_dict_trace_reader_fuzzer sqlite.dict)
  set(_dict_trace_validator_fuzzer sqlite.dict)
  set(_dict_platform_json_fuzzer json.dict)
  set(_dict_platform_xml_fuzzer xml.dict)
  set(_dict_checkpoint_manifest_fuzzer json.dict)
  foreach(target IN LISTS ACCORDION_FUZZ_TARGETS)
    set(_dict "")
    if(_dict_${target})
      set(_dict "-DDICT=${PROJECT_SOURCE_DIR}/fuzz/${_dict_${target}}")
    endif()
    string(REPLACE "_fuzzer" "" _name ${target})
    file(GLOB _committed ${PROJECT_SOURCE_DIR}/fuzz/corpus/${_name}/*)
    string(REPLACE ";" "|" _seeds "${_seeds_${target}};${_committed}")
    add_test(NAME fuzz.${_name}
      COMMAND ${CMAKE_COMMAND} -DFUZZER=${_fuzz_bin}/bin/${target} -DWORK_DIR=${_fuzz_bin}/run/${_name}
              "-DSEEDS=${_seeds}" ${_dict} -DSECONDS=${ACCORDION_FUZZ_SECONDS}
              -P ${PROJECT_SOURCE_DIR}/fuzz/ctest_run.cmake)
    math(EXPR _timeout "${ACCORDION_FUZZ_SECONDS} + 300")
    set_tests_properties(fuzz.${_name} PROPERTIES FIXTURES_REQUIRED accordion_fuzzers LABELS fuzz
                         TIMEOUT ${_timeout})
  endforeach()
endif()
