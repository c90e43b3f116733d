# The C++ style (.clang-format) as a test and a target:
#   ctest -R format.check      fails, listing the lines, where a file differs
#   cmake --build <dir> --target format   rewrites the files in place
# Only with clang-format 14 (Debian 12's): another version formats some
# constructs differently and would fail files that are fine.
find_program(ACCORDION_CLANG_FORMAT NAMES clang-format-14)
if(NOT ACCORDION_CLANG_FORMAT)
  message(STATUS "Accordion: clang-format-14 not found; no format check (apt-get install clang-format-14)")
  return()
endif()

set(_format_dirs analysis bench common examples fuzz gui simulator tests traces trainer)
set(_format_sources "")
foreach(dir IN LISTS _format_dirs)
  file(GLOB_RECURSE _found CONFIGURE_DEPENDS
       ${CMAKE_SOURCE_DIR}/${dir}/*.h ${CMAKE_SOURCE_DIR}/${dir}/*.cc)
  list(APPEND _format_sources ${_found})
endforeach()
list(SORT _format_sources)

add_test(NAME format.check
         COMMAND ${ACCORDION_CLANG_FORMAT} --dry-run --Werror --style=file ${_format_sources}
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(format.check PROPERTIES LABELS format)
add_custom_target(format
                  COMMAND ${ACCORDION_CLANG_FORMAT} -i --style=file ${_format_sources}
                  WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
                  COMMENT "clang-format -i on ${CMAKE_SOURCE_DIR}"
                  VERBATIM)
