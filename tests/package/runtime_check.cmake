# Checks that a shared library loads the shared C++ runtime instead of carrying
# a copy of libstdc++ (see the top-level CMakeLists.txt: a copy, bound to the
# library's code while the locale's data resolve to the process's runtime,
# crashed when an error message formatted a number in a PyTorch process).
# Usage: cmake -DLIB=<.so> -DREADELF=<readelf> -DNM=<nm> -P runtime_check.cmake
foreach(v LIB READELF NM)
  if(NOT ${v})
    message(FATAL_ERROR "runtime_check: -D${v}=... is required")
  endif()
endforeach()
execute_process(COMMAND ${READELF} -d ${LIB} OUTPUT_VARIABLE dyn RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "runtime_check: ${READELF} -d ${LIB} failed (${rc})")
endif()
if(NOT dyn MATCHES "NEEDED[^\n]*libstdc\\+\\+\\.so")
  message(FATAL_ERROR "${LIB} does not load libstdc++.so: the C++ runtime was linked statically into it")
endif()
execute_process(COMMAND ${NM} -D --defined-only ${LIB} OUTPUT_VARIABLE syms RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "runtime_check: ${NM} -D ${LIB} failed (${rc})")
endif()
string(REGEX MATCH "[^\n]*_ZNSt6locale[^\n]*" hit "${syms}")
if(hit)
  message(FATAL_ERROR "${LIB} defines libstdc++'s own symbols (${hit}): it carries a copy of the C++ runtime")
endif()
message(STATUS "${LIB}: loads the shared libstdc++, defines none of its symbols")
