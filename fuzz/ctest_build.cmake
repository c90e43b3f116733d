# The test fuzz.build: configures fuzz/ with clang and builds every fuzz
# target (only the libraries they link come along), two jobs at most.
#   cmake -DSOURCE_DIR=<repo>/fuzz -DBINARY_DIR=<build>/fuzz -DCXX=clang++
#         [-DGENERATOR=Ninja] [-DLAUNCHER=ccache] -P fuzz/ctest_build.cmake
foreach(var SOURCE_DIR BINARY_DIR CXX)
  if(NOT ${var})
    message(FATAL_ERROR "ctest_build.cmake: -D${var}= is required")
  endif()
endforeach()
if(NOT GENERATOR)
  set(GENERATOR Ninja)
endif()
set(configure ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${BINARY_DIR} -G ${GENERATOR}
    -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=RelWithDebInfo)
if(LAUNCHER)
  list(APPEND configure -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()
execute_process(COMMAND ${configure} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the fuzz targets failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BINARY_DIR} -j2 RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the fuzz targets failed (${rc})")
endif()
