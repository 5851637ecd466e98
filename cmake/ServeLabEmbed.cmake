# Embed resource files into a library as raw string literals, so binaries
# work from any directory (docs/architecture.md "Resources").
#
# sl_embed_files(TARGET tgt TEMPLATE tpl.in OUTPUT name.cpp VAR VARNAME
#                BASE dir KEY REL|NAME|NAME_WE DELIM tag GLOBS glob...)
# reads every file matching GLOBS (sorted by path), and sets VARNAME to one
#     {"key", R"tag(text)tag"},
# line per file before configuring TEMPLATE into OUTPUT (in the current
# binary directory) and adding it to TGT. KEY: the path relative to BASE,
# the file name, or the name without extension. A file containing the
# closing delimiter stops configuration with its path. CONFIGURE_DEPENDS
# plus CMAKE_CONFIGURE_DEPENDS re-run CMake when a file is added or edited.
function(sl_embed_files)
  cmake_parse_arguments(E "" "TARGET;TEMPLATE;OUTPUT;VAR;BASE;KEY;DELIM" "GLOBS" ${ARGN})
  file(GLOB _files CONFIGURE_DEPENDS ${E_GLOBS})
  list(SORT _files)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_files})
  set(_entries "")
  foreach(_f ${_files})
    if(E_KEY STREQUAL "REL")
      file(RELATIVE_PATH _key ${E_BASE} ${_f})
    else()
      get_filename_component(_key ${_f} ${E_KEY})
    endif()
    file(READ ${_f} _text)
    string(FIND "${_text}" ")${E_DELIM}\"" _bad)
    if(NOT _bad EQUAL -1)
      message(FATAL_ERROR "${_f}: contains the raw-string delimiter )${E_DELIM}\"")
    endif()
    string(APPEND _entries "    {\"${_key}\", R\"${E_DELIM}(${_text})${E_DELIM}\"},\n")
  endforeach()
  set(${E_VAR} "${_entries}")
  set(_gen ${CMAKE_CURRENT_BINARY_DIR}/${E_OUTPUT})
  configure_file(${E_TEMPLATE} ${_gen} @ONLY)
  target_sources(${E_TARGET} PRIVATE ${_gen})
endfunction()
