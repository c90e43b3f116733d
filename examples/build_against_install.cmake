# Installs the library component of the build in BUILD_DIR into PREFIX, then
# configures and builds the project in SOURCE_DIR against it in
# EXAMPLE_BUILD_DIR, with find_package(Accordion) seeing PREFIX only: what a
# user of the installed toolkit does. Both directories start empty, so a
# header or a target missing from the package fails here, not later.
file(REMOVE_RECURSE ${PREFIX} ${EXAMPLE_BUILD_DIR})

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}")
  endif()
endfunction()

run_step("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX} --component library)
# The same compiler and flags as the toolkit (a sanitizer build needs them at
# link time too).
run_step("configure" ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${EXAMPLE_BUILD_DIR} -G ${GENERATOR}
  -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
  -DCMAKE_BUILD_TYPE=${BUILD_TYPE} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
  -DCMAKE_CXX_COMPILER_LAUNCHER=${CXX_COMPILER_LAUNCHER}
  "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${EXE_LINKER_FLAGS}")
run_step("build" ${CMAKE_COMMAND} --build ${EXAMPLE_BUILD_DIR})

# Every installed header on its own: one that includes a header the package
# does not install fails here, whatever the example happens to include.
file(GLOB_RECURSE headers RELATIVE ${PREFIX}/include/accordion ${PREFIX}/include/accordion/*.h)
foreach(header IN LISTS headers)
  file(WRITE ${EXAMPLE_BUILD_DIR}/header_check.cc "#include \"${header}\"\n")
  run_step("compiling the installed ${header} on its own"
    ${CXX_COMPILER} -std=c++17 -fsyntax-only -I${PREFIX}/include/accordion ${EXAMPLE_BUILD_DIR}/header_check.cc)
endforeach()
