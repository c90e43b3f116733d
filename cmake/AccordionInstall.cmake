# What `cmake --install` puts under the prefix, in two components:
#
#   library  libaccordion_{common,traces,analysis}.a, their public headers
#            under include/accordion/ (so "traces/trace_writer.h" keeps its
#            name) and the CMake package: find_package(Accordion) gives
#            Accordion::traces and Accordion::analysis.
#   tools    the command-line tools and the GUI that this build made.
#
# Headers a library keeps to itself (SQLite handles, row checks, the tools'
# command-line helpers) are not installed: users see the narrow API only.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(ACCORDION_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/Accordion)

# accordion_install_library(<target> NAME <exported name> HEADERS <files>)
# Installs <target> as Accordion::<exported name> with HEADERS, which are
# relative to the calling directory, under include/accordion/<its name>/.
function(accordion_install_library target)
  cmake_parse_arguments(L "" "NAME" "HEADERS" ${ARGN})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${L_NAME})
  install(TARGETS ${target} EXPORT AccordionTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT library
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT library
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/accordion)
  get_filename_component(module ${CMAKE_CURRENT_SOURCE_DIR} NAME)
  install(FILES ${L_HEADERS}
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/accordion/${module} COMPONENT library)
endfunction()

# accordion_install_tools(<target>...): the executables among these that
# this configuration builds.
function(accordion_install_tools)
  foreach(tool IN LISTS ARGN)
    if(TARGET ${tool})
      install(TARGETS ${tool} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT tools)
    endif()
  endforeach()
endfunction()

# The package files, once every library has been installed above.
function(accordion_install_package)
  install(EXPORT AccordionTargets NAMESPACE Accordion::
    DESTINATION ${ACCORDION_INSTALL_CMAKEDIR} COMPONENT library)
  configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/AccordionConfig.cmake.in
    ${PROJECT_BINARY_DIR}/AccordionConfig.cmake
    INSTALL_DESTINATION ${ACCORDION_INSTALL_CMAKEDIR})
  # 0.x: a minor version may change the API.
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/AccordionConfigVersion.cmake
    COMPATIBILITY SameMinorVersion)
  install(FILES ${PROJECT_BINARY_DIR}/AccordionConfig.cmake ${PROJECT_BINARY_DIR}/AccordionConfigVersion.cmake
    DESTINATION ${ACCORDION_INSTALL_CMAKEDIR} COMPONENT library)
endfunction()
