# Runs PROGRAM with ARGS and fails unless its stdout equals EXPECTED's text,
# as SimGrid's tesh does: the output goes to ACTUAL (in the build tree, never
# beside EXPECTED) and a mismatch prints `diff -u EXPECTED ACTUAL`.
execute_process(COMMAND ${PROGRAM} ${ARGS}
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
file(WRITE ${ACTUAL} "${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} exited with ${rc}:\n${err}")
endif()
file(READ ${EXPECTED} want)
if(NOT out STREQUAL want)
  # The diff goes to the test's output as it is: message() would reflow it.
  find_program(DIFF diff)
  if(DIFF)
    execute_process(COMMAND ${DIFF} -u ${EXPECTED} ${ACTUAL})
  else()
    execute_process(COMMAND ${CMAKE_COMMAND} -E echo "(no diff program) got:\n${out}")
  endif()
  message(FATAL_ERROR "output differs from ${EXPECTED} (got ${ACTUAL}, diff above)")
endif()
