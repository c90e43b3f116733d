# accordion_target_warnings(<target>): our warning set. Third-party headers come
# in as SYSTEM includes, so -Werror only ever judges our own code.
function(accordion_target_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
    -Wnon-virtual-dtor -Wcast-align -Woverloaded-virtual)
  if(ACCORDION_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
