# layers.cmake - the layer order of src/, checked from the includes.
#
# Each module (one library per folder, lumen_module) may include the
# headers of its own folder and of the modules it depends on, directly or
# through them; nothing else. lumen_module records each module's folder,
# sources and allowed folders; lumen_check_layers (configure time, and the
# test lint/layers, which re-reads the sources) refuses an include that
# points the wrong way, naming the file, the line and the rule.

if(CMAKE_SCRIPT_MODE_FILE)
  cmake_minimum_required(VERSION 3.20)
endif()

# lumen_layer_record(NAME DEPS...): remember module NAME's allowed folders.
function(lumen_layer_record name)
  set(allowed ${name} lumen) # lumen: the installed API (include/lumen)
  foreach(dep ${ARGN})
    if(dep MATCHES "^lm_(.*)$")
      get_property(sub GLOBAL PROPERTY LUMEN_LAYER_${CMAKE_MATCH_1})
      list(APPEND allowed ${CMAKE_MATCH_1} ${sub})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES allowed)
  set_property(GLOBAL PROPERTY LUMEN_LAYER_${name} ${allowed})
  set_property(GLOBAL APPEND PROPERTY LUMEN_LAYER_MODULES ${name})
  set_property(GLOBAL PROPERTY LUMEN_LAYER_DIR_${name} ${CMAKE_CURRENT_SOURCE_DIR})
endfunction()

# lumen_layer_files(DIR OUT): the C sources and headers directly in DIR.
function(lumen_layer_files dir out)
  file(GLOB files ${dir}/*.c ${dir}/*.h)
  set(${out} ${files} PARENT_SCOPE)
endfunction()

# lumen_check_layers(MODULES... ): check every file of each module's
# folder against the folders that module may include. A folder holding
# several modules is checked against the union of theirs. Variables
# LUMEN_LAYER_<name> and LUMEN_LAYER_DIR_<name> hold the table.
function(lumen_check_layers)
  set(errors "")
  set(dirs "")
  foreach(name ${ARGN})
    list(APPEND dirs ${LUMEN_LAYER_DIR_${name}})
  endforeach()
  list(REMOVE_DUPLICATES dirs)
  foreach(dir ${dirs})
    set(allowed "")
    foreach(name ${ARGN})
      if(LUMEN_LAYER_DIR_${name} STREQUAL dir)
        list(APPEND allowed ${LUMEN_LAYER_${name}})
      endif()
    endforeach()
    lumen_layer_files(${dir} files)
    foreach(f ${files})
      file(STRINGS ${f} lines REGEX "^#include \"[a-z_]+/")
      foreach(line ${lines})
        string(REGEX REPLACE "^#include \"([a-z_]+)/.*" "\\1" folder "${line}")
        if(NOT folder IN_LIST allowed)
          get_filename_component(fname ${f} NAME)
          get_filename_component(here ${dir} NAME)
          string(APPEND errors "\n  src/${here}/${fname}: ${line}: src/${here} may include only ${allowed}")
        endif()
      endforeach()
    endforeach()
  endforeach()
  if(errors)
    message(FATAL_ERROR "includes against the layer order (cmake/layers.cmake):${errors}")
  endif()
endfunction()

# Run as a script (the test lint/layers): -DLAYERS=<table written at
# configure time>.
if(CMAKE_SCRIPT_MODE_FILE AND LAYERS)
  include(${LAYERS})
  lumen_check_layers(${LUMEN_LAYER_MODULES})
endif()
