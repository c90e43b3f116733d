# Optional parts of the toolkit. Each heavy dependency gates one module; the
# default is AUTO: build the module when its dependency is found, otherwise skip
# it and say so. ON makes a missing dependency an error, OFF skips the module.
set(ACCORDION_BUILD_TRAINER AUTO CACHE STRING "Build the LibTorch trainer (AUTO|ON|OFF)")
set(ACCORDION_BUILD_SIMULATOR AUTO CACHE STRING "Build the SimGrid simulator (AUTO|ON|OFF)")
set(ACCORDION_BUILD_GUI AUTO CACHE STRING "Build the Qt6 GUI (AUTO|ON|OFF)")
option(ACCORDION_BUILD_TESTS "Build tests and examples" ON)
option(ACCORDION_BUILD_BENCH "Build benchmarks (needs Google Benchmark)" ON)
option(ACCORDION_WERROR "Treat warnings in our code as errors" OFF)
# The sanitize preset: hold AddressSanitizer's locks across fork(), which
# GCC 12's runtime does not (common/fork_process.h); needs -static-libasan.
option(ACCORDION_ASAN_FORK_LOCKS "Hold ASan's allocator locks across fork (needs -static-libasan)" OFF)

set(_accordion_summary "")

# accordion_resolve_module(<VAR> <label> <found> <why-missing>)
# Turns VAR from AUTO/ON/OFF into a plain boolean and records a summary line.
function(accordion_resolve_module var label found why)
  set(mode "${${var}}")
  string(TOUPPER "${mode}" mode)
  if(mode STREQUAL "OFF" OR mode STREQUAL "FALSE" OR mode STREQUAL "0")
    set(result OFF)
    set(line "  ${label}: OFF (disabled by ${var}=OFF)")
  elseif(found)
    set(result ON)
    set(line "  ${label}: ON")
  elseif(mode STREQUAL "ON" OR mode STREQUAL "TRUE" OR mode STREQUAL "1")
    message(FATAL_ERROR "${var}=ON but ${why}")
  else()
    set(result OFF)
    set(line "  ${label}: SKIPPED - ${why}")
    message(WARNING "Accordion: ${label} will not be built: ${why}")
  endif()
  set(${var} ${result} PARENT_SCOPE)
  set(_accordion_summary "${_accordion_summary}${line}\n" PARENT_SCOPE)
endfunction()

# Which LibTorch, first: a pre-C++11 ABI one turns the simulator (and so the
# GUI) off, and their summary lines must say so rather than "ON".
if(NOT ACCORDION_BUILD_TRAINER STREQUAL "OFF")
  include(AccordionTorch)
endif()

# --- simulator: SimGrid (no CMake config in Debian; pkg-config and a plain search)
if(NOT ACCORDION_BUILD_SIMULATOR STREQUAL "OFF")
  find_path(SIMGRID_INCLUDE_DIR simgrid/s4u.hpp)
  find_library(SIMGRID_LIBRARY simgrid)
  if(SIMGRID_INCLUDE_DIR AND SIMGRID_LIBRARY)
    set(_simgrid_found TRUE)
  endif()
endif()
accordion_resolve_module(ACCORDION_BUILD_SIMULATOR "simulator (accordion-sim)"
  "${_simgrid_found}" "SimGrid not found (apt-get install libsimgrid-dev)")

# --- trainer: LibTorch with c10d/Gloo (cmake/AccordionTorch.cmake picks which)
if(NOT ACCORDION_BUILD_TRAINER STREQUAL "OFF")
  find_package(Torch QUIET)
endif()
if(Torch_FOUND AND NOT ACCORDION_TORCH_FROM_PYTHON)
  set(_accordion_summary "${_accordion_summary}  LibTorch: ${Torch_VERSION} at ${Torch_DIR} (not the .venv's PyTorch: ACCORDION_TORCH_FROM_PYTHON is OFF)\n")
endif()
accordion_resolve_module(ACCORDION_BUILD_TRAINER "trainer (accordion-train)"
  "${Torch_FOUND}" "LibTorch not found (scripts/install-deps.sh makes .venv with PyTorch; or apt-get install libtorch-dev libgloo-dev)")

# --- gui: Qt6 Widgets + QCustomPlot; it projects what-ifs with the simulator
if(NOT ACCORDION_BUILD_GUI STREQUAL "OFF")
  find_package(Qt6 QUIET COMPONENTS Core Widgets PrintSupport Concurrent Test)
  find_package(QCustomPlotQt6 QUIET)
  if(Qt6_FOUND AND TARGET QCustomPlotQt6::QCustomPlotQt6 AND ACCORDION_BUILD_SIMULATOR)
    set(_gui_found TRUE)
  endif()
endif()
accordion_resolve_module(ACCORDION_BUILD_GUI "gui (accordion-gui, accordion-report)"
  "${_gui_found}" "Qt6, QCustomPlot or the simulator not found (apt-get install qt6-base-dev libqcustomplot-dev libsimgrid-dev)")

# --- python: the accordion package (pybind11 over the trainer's C++ core). Its
# module is a torch extension: the Python that imports it must have a torch
# built from the same LibTorch (Debian's python3-torch beside libtorch-dev).
set(ACCORDION_BUILD_PYTHON AUTO CACHE STRING "Build the accordion Python package (AUTO|ON|OFF)")
# Against a torch package's LibTorch (ACCORDION_TORCH_FROM_PYTHON, the
# presets' default) the package is built for that same Python.
if(ACCORDION_TORCH_FROM_PYTHON)
  set(_default_python ${ACCORDION_PYTHON})
else()
  set(_default_python /usr/bin/python3)
endif()
set(ACCORDION_PYTHON_EXECUTABLE ${_default_python} CACHE FILEPATH "The Python the accordion package is built for")
set(_python_why "the trainer is not built")
if(ACCORDION_BUILD_TRAINER AND NOT ACCORDION_BUILD_PYTHON STREQUAL "OFF")
  set(_python_why "pybind11 or ${ACCORDION_PYTHON_EXECUTABLE}'s torch not found (scripts/install-deps.sh)")
  set(PYTHON_EXECUTABLE ${ACCORDION_PYTHON_EXECUTABLE})
  # PyTorch 2's CMake files find Python with the interpreter alone; pybind11
  # then takes that Python, without the headers its modules are built with.
  if(Python_FOUND AND NOT Python_Development.Module_FOUND)
    find_package(Python QUIET COMPONENTS Interpreter Development.Module)
  endif()
  find_package(pybind11 CONFIG QUIET)
  execute_process(COMMAND ${ACCORDION_PYTHON_EXECUTABLE} -c "import torch, sys; sys.stdout.write(torch.__version__)"
                  OUTPUT_VARIABLE _python_torch RESULT_VARIABLE _python_torch_rc ERROR_QUIET)
  if(pybind11_FOUND AND _python_torch_rc EQUAL 0)
    string(REGEX MATCH "^[0-9]+\\.[0-9]+" _python_torch_mm "${_python_torch}")
    string(REGEX MATCH "^[0-9]+\\.[0-9]+" _libtorch_mm "${Torch_VERSION}")
    if(_libtorch_mm STREQUAL "" OR _python_torch_mm STREQUAL _libtorch_mm)
      set(_python_found TRUE)
    else()
      set(_python_why "${ACCORDION_PYTHON_EXECUTABLE}'s torch ${_python_torch} is not LibTorch ${Torch_VERSION}")
    endif()
  endif()
endif()
accordion_resolve_module(ACCORDION_BUILD_PYTHON "python package (accordion)" "${_python_found}" "${_python_why}")
if(ACCORDION_BUILD_PYTHON)
  # The static libraries end up inside the package's shared module, so they
  # are position-independent. -fPIC for every target, not
  # POSITION_INDEPENDENT_CODE (-fPIC for libraries, -fPIE for executables):
  # executables reuse accordion_trainer's precompiled LibTorch header, which
  # GCC refuses under a different -fpie setting.
  string(APPEND CMAKE_CXX_FLAGS " -fPIC")
endif()

if(ACCORDION_BUILD_BENCH)
  find_package(benchmark QUIET)
  if(NOT benchmark_FOUND)
    set(ACCORDION_BUILD_BENCH OFF)
    set(_accordion_summary "${_accordion_summary}  benchmarks: SKIPPED - Google Benchmark not found (apt-get install libbenchmark-dev)\n")
  else()
    set(_accordion_summary "${_accordion_summary}  benchmarks: ON\n")
  endif()
endif()

function(accordion_print_summary)
  message(STATUS "Accordion Toolkit ${PROJECT_VERSION} modules:\n  traces, analysis: ON\n${_accordion_summary}  tests: ${ACCORDION_BUILD_TESTS}  werror: ${ACCORDION_WERROR}")
endfunction()
