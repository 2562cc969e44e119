# Warnings are errors. The list follows Lua's stricter set (see STYLE.md).
set(LUMEN_WARNINGS
  -Wall -Wextra -Werror -Wshadow -Wundef -Wwrite-strings -Wredundant-decls
  -Wdisabled-optimization -Wdouble-promotion -Wmissing-declarations
  -Wmissing-prototypes -Wnested-externs -Wstrict-prototypes
  -Wold-style-definition -Wpointer-arith -Wformat=2 -Wvla
  -Wimplicit-fallthrough)
if(CMAKE_C_COMPILER_ID STREQUAL "GNU")
  list(APPEND LUMEN_WARNINGS -Wlogical-op -Wno-aggressive-loop-optimizations)
endif()

include(${CMAKE_CURRENT_LIST_DIR}/layers.cmake)

# lumen_module(NAME SOURCES... DEPS ...): one static library per module;
# an include pointing against the layer order its DEPS give is refused at
# configure time (layers.cmake).
function(lumen_module name)
  cmake_parse_arguments(M "" "" "SOURCES;DEPS" ${ARGN})
  add_library(lm_${name} STATIC ${M_SOURCES})
  target_compile_options(lm_${name} PRIVATE ${LUMEN_WARNINGS})
  target_include_directories(lm_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(lm_${name} PUBLIC ${M_DEPS})
  lumen_layer_record(${name} ${M_DEPS})
endfunction()
