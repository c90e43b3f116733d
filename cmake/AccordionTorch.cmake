# Which LibTorch the trainer builds against.
#
#   -DACCORDION_TORCH_FROM_PYTHON=ON  the LibTorch inside ACCORDION_PYTHON's torch
#     (the presets' default)          package (torch.utils.cmake_prefix_path): the
#                                     project's .venv, PyTorch 2.x from PyPI with
#                                     CUDA and NCCL (scripts/install-deps.sh).
#   -DACCORDION_TORCH_FROM_PYTHON=OFF find_package(Torch): Debian's libtorch-dev
#     (the debian-torch preset)       (1.13, CPU only) or whatever Torch_DIR says.
#
# Without a preset the default is ON where the .venv exists.
#
# A wheel's LibTorch may use the pre-C++11 std::string ABI. Everything linked
# with it must then use that ABI too, which Debian's GoogleTest, Google
# Benchmark and SimGrid do not: in that case the whole build switches ABI and
# tests, benchmarks and the simulator are left out (the trainer and the
# analysis tools build). Included by AccordionOptions.cmake before it decides
# on the simulator, so that its summary line tells the truth.
set(_accordion_venv_python "${PROJECT_SOURCE_DIR}/.venv/bin/python")
if(EXISTS "${_accordion_venv_python}")
  set(_accordion_default_from_python ON)
else()
  set(_accordion_default_from_python OFF)
endif()
option(ACCORDION_TORCH_FROM_PYTHON "Build the trainer against ACCORDION_PYTHON's torch package (its LibTorch)"
       ${_accordion_default_from_python})
# Under pip install (scikit-build-core), the Python that runs pip.
if(SKBUILD AND Python_EXECUTABLE)
  set(_accordion_default_python ${Python_EXECUTABLE})
elseif(EXISTS "${_accordion_venv_python}")
  set(_accordion_default_python "${_accordion_venv_python}")
else()
  set(_accordion_default_python python3)
endif()
set(ACCORDION_PYTHON ${_accordion_default_python} CACHE STRING "The Python whose torch package provides LibTorch")

if(ACCORDION_TORCH_FROM_PYTHON)
  execute_process(
    COMMAND ${ACCORDION_PYTHON} -c
      "import torch; print(torch.utils.cmake_prefix_path); print(int(torch._C._GLIBCXX_USE_CXX11_ABI)); print(torch.__version__); print(torch.version.cuda or '')"
    RESULT_VARIABLE _torch_rc OUTPUT_VARIABLE _torch_out ERROR_VARIABLE _torch_err
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT _torch_rc EQUAL 0)
    message(FATAL_ERROR "ACCORDION_TORCH_FROM_PYTHON: '${ACCORDION_PYTHON} -c \"import torch\"' failed "
      "(scripts/install-deps.sh makes the project's .venv with PyTorch; or configure with --preset debian-torch "
      "for Debian's LibTorch): ${_torch_err}")
  endif()
  string(REPLACE "\n" ";" _torch_lines "${_torch_out}")
  list(GET _torch_lines 0 _torch_prefix)
  list(GET _torch_lines 1 _torch_cxx11_abi)
  list(GET _torch_lines 2 _torch_version)
  list(LENGTH _torch_lines _torch_count)
  set(_torch_cuda "")
  if(_torch_count GREATER 3)
    list(GET _torch_lines 3 _torch_cuda)
  endif()
  if(NOT EXISTS "${_torch_prefix}/Torch/TorchConfig.cmake")
    message(FATAL_ERROR "ACCORDION_TORCH_FROM_PYTHON: torch ${_torch_version} has no "
      "${_torch_prefix}/Torch/TorchConfig.cmake (Debian's python3-torch ships no CMake files; "
      "use PyTorch's own wheel, e.g. pip install torch)")
  endif()
  set(Torch_DIR "${_torch_prefix}/Torch" CACHE PATH "LibTorch's CMake directory" FORCE)
  # LibTorch's CMake files find Python by the interpreter first on PATH (a
  # pyenv shim, say), and pybind11 then takes its headers: the module is to
  # be built for the Python that imports it, whose headers are Debian's
  # python3-dev for the project's .venv.
  if(NOT SKBUILD)
    set(Python_EXECUTABLE "${ACCORDION_PYTHON}" CACHE FILEPATH "The Python LibTorch and pybind11 are found for")
  endif()
  # TorchConfig finds its libraries with find_library(... PATHS <torch>/lib),
  # which searches the system's directories first: where Debian's libtorch-dev
  # is installed too, it would link that LibTorch under these headers.
  # Its find_package(Caffe2 PATHS ...) likewise prefers Debian's Caffe2.
  get_filename_component(_torch_lib_dir "${_torch_prefix}/../../lib" ABSOLUTE)
  list(PREPEND CMAKE_LIBRARY_PATH "${_torch_lib_dir}")
  set(Caffe2_DIR "${_torch_prefix}/Caffe2" CACHE PATH "LibTorch's Caffe2 CMake directory" FORCE)
  # PyPI's libtorch.so exports std::filesystem functions of its own GCC; an
  # executable that finds them there before libstdc++ crashes in them
  # (std::filesystem::remove_all jumping to 0). libstdc++ first on the link
  # line puts it first among the libraries the dynamic linker searches.
  set(ACCORDION_TORCH_LINK_FIRST stdc++)
  message(STATUS "Accordion: LibTorch from ${ACCORDION_PYTHON}'s torch ${_torch_version} (CUDA '${_torch_cuda}') at ${Torch_DIR}")
  set(_accordion_summary "${_accordion_summary}  LibTorch: torch ${_torch_version} from ${ACCORDION_PYTHON} (CUDA '${_torch_cuda}')\n")
  if(_torch_cxx11_abi EQUAL 0)
    message(WARNING "Accordion: torch ${_torch_version} uses the pre-C++11 string ABI; building everything "
      "with _GLIBCXX_USE_CXX11_ABI=0 and leaving out tests, benchmarks and the simulator, whose "
      "Debian libraries use the new ABI")
    add_compile_definitions(_GLIBCXX_USE_CXX11_ABI=0)
    set(ACCORDION_BUILD_TESTS OFF CACHE BOOL "Build tests and examples" FORCE)
    set(ACCORDION_BUILD_BENCH OFF CACHE BOOL "Build benchmarks (needs Google Benchmark)" FORCE)
    set(ACCORDION_BUILD_TESTS OFF)
    set(ACCORDION_BUILD_BENCH OFF)
    set(ACCORDION_BUILD_SIMULATOR OFF)
    set(_accordion_summary "${_accordion_summary}  (pre-C++11 ABI LibTorch: tests, benchmarks, simulator off)\n")
  endif()
  # A CUDA LibTorch looks for the CUDA toolkit while it is found.
  if(NOT DEFINED CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  find_package(Torch REQUIRED)
endif()
