# The NCCL communicator (trainer/nccl_communicator.cc, the GPU path).
# Included by trainer/CMakeLists.txt once accordion_trainer and
# accordion_trainer_core exist; it leaves the summary line in _nccl_line.
#
# ACCORDION_NCCL: AUTO builds it when CUDA's and NCCL's headers are found. It
# is linked into accordion-train (--backend nccl) only against a CUDA
# LibTorch; against a CPU-only LibTorch (Debian's) the same source is compiled
# as a check - an object library nothing links - so it keeps building.
set(ACCORDION_NCCL AUTO CACHE STRING "NCCL communicator (AUTO|ON|OFF)")
set(ACCORDION_CUDA_ROOT "/usr/local/cuda" CACHE PATH "CUDA toolkit with NCCL, for the NCCL communicator")
string(TOUPPER "${ACCORDION_NCCL}" _nccl_mode)
set(_nccl_line "")
set(ACCORDION_NCCL_LINKED OFF CACHE INTERNAL "Whether accordion-train links the NCCL communicator")
if(NOT _nccl_mode STREQUAL "OFF")
  find_path(ACCORDION_CUDA_INCLUDE_DIR cuda_runtime.h HINTS ${ACCORDION_CUDA_ROOT}/include $ENV{CUDA_HOME}/include)
  find_path(ACCORDION_NCCL_INCLUDE_DIR nccl.h HINTS ${ACCORDION_CUDA_ROOT}/include $ENV{CUDA_HOME}/include)
  find_library(ACCORDION_NCCL_LIBRARY nccl HINTS ${ACCORDION_CUDA_ROOT}/lib64 $ENV{CUDA_HOME}/lib64)
  # A CUDA LibTorch exports torch_cuda (PyTorch's own) or lists c10_cuda.
  set(_torch_has_cuda FALSE)
  if(TARGET torch_cuda OR TORCH_LIBRARIES MATCHES "c10_cuda|torch_cuda")
    set(_torch_has_cuda TRUE)
  endif()
  if(NOT (ACCORDION_CUDA_INCLUDE_DIR AND ACCORDION_NCCL_INCLUDE_DIR AND ACCORDION_NCCL_LIBRARY))
    if(_nccl_mode STREQUAL "ON")
      message(FATAL_ERROR "ACCORDION_NCCL=ON but cuda_runtime.h, nccl.h or libnccl were not found under ${ACCORDION_CUDA_ROOT}")
    endif()
    set(_nccl_line "  NCCL communicator: SKIPPED - CUDA or NCCL headers not found (ACCORDION_CUDA_ROOT)")
  else()
    set(_nccl_includes ${ACCORDION_CUDA_INCLUDE_DIR} ${ACCORDION_NCCL_INCLUDE_DIR})
    file(STRINGS ${ACCORDION_NCCL_INCLUDE_DIR}/nccl.h _nccl_version_lines REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) ")
    string(REGEX REPLACE "[^;]*NCCL_[A-Z]+ +([0-9]+)[^;]*" "\\1" _nccl_version "${_nccl_version_lines}")
    string(REPLACE ";" "." _nccl_version "${_nccl_version}")
    # Debian's LibTorch ships c10/cuda headers without the one its build
    # generates (cuda_cmake_macros.h); supply PyTorch's content for it.
    find_path(_c10_cuda_macros c10/cuda/impl/cuda_cmake_macros.h HINTS ${TORCH_INCLUDE_DIRS})
    if(NOT _c10_cuda_macros)
      set(_shim ${CMAKE_CURRENT_BINARY_DIR}/cuda_shim)
      file(WRITE ${_shim}/c10/cuda/impl/cuda_cmake_macros.h
           "#pragma once\n// Written by accordion's CMake: PyTorch's build generates this header.\n#define C10_CUDA_BUILD_SHARED_LIBS\n")
      list(APPEND _nccl_includes ${_shim})
    endif()
    if(_torch_has_cuda)
      target_sources(accordion_trainer PRIVATE nccl_communicator.cc)
      set_source_files_properties(nccl_communicator.cc PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
      target_include_directories(accordion_trainer SYSTEM PRIVATE ${_nccl_includes})
      # PUBLIC: the targets that reuse accordion_trainer's precompiled header must be
      # compiled with the same definitions, or GCC refuses the header (invalid-pch).
      target_compile_definitions(accordion_trainer PUBLIC USE_C10D_NCCL)
      target_compile_definitions(accordion_trainer_core PRIVATE ACCORDION_HAVE_NCCL)
      target_compile_definitions(accordion_trainer PUBLIC ACCORDION_HAVE_NCCL)
      target_link_libraries(accordion_trainer PUBLIC ${ACCORDION_NCCL_LIBRARY})
      set(ACCORDION_NCCL_LINKED ON CACHE INTERNAL "Whether accordion-train links the NCCL communicator")
      set(_nccl_line "  NCCL communicator: ON (--backend nccl), NCCL ${_nccl_version} from ${ACCORDION_CUDA_ROOT}")
    else()
      add_library(accordion_nccl_compile_check OBJECT nccl_communicator.cc)
      target_include_directories(accordion_nccl_compile_check PRIVATE ${PROJECT_SOURCE_DIR})
      target_include_directories(accordion_nccl_compile_check SYSTEM PRIVATE ${_nccl_includes} ${TORCH_INCLUDE_DIRS})
      target_compile_definitions(accordion_nccl_compile_check PRIVATE USE_C10D_NCCL ACCORDION_HAVE_NCCL)
      target_compile_options(accordion_nccl_compile_check PRIVATE ${TORCH_CXX_FLAGS})
      accordion_target_warnings(accordion_nccl_compile_check)
      set(_nccl_line "  NCCL communicator: COMPILE CHECK ONLY - LibTorch has no CUDA (see docs/gpu.md)")
    endif()
  endif()
else()
  set(_nccl_line "  NCCL communicator: OFF (ACCORDION_NCCL=OFF)")
endif()
