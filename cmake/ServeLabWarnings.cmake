# Warning flags and sanitizers applied to every ServeLab target via servelab_target().
function(servelab_target tgt)
  target_compile_options(${tgt} PRIVATE -Wall -Wextra -Wpedantic)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC 12 reports false positives inside nlohmann::json's iterators at -O2
    # (a known GCC issue); everything else stays an error under -Werror.
    target_compile_options(${tgt} PRIVATE -Wno-maybe-uninitialized)
  endif()
  if(SERVELAB_WERROR)
    target_compile_options(${tgt} PRIVATE -Werror)
  endif()
endfunction()

if(SERVELAB_SANITIZE)
  add_compile_options(-fsanitize=${SERVELAB_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${SERVELAB_SANITIZE})
endif()

# servelab_module(NAME DEPS...) : static library core_NAME from core/NAME/*.cpp
# and the .cpp files of its subfolders (core/policy/<family>/,
# core/experiments/<paper>/), so a new family is a new folder, no CMake edit.
function(servelab_module name)
  file(GLOB_RECURSE srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  if(NOT srcs)
    set(srcs ${PROJECT_SOURCE_DIR}/cmake/empty.cpp)
  endif()
  add_library(core_${name} STATIC ${srcs})
  target_include_directories(core_${name} PUBLIC ${PROJECT_SOURCE_DIR}/core)
  target_link_libraries(core_${name} PUBLIC ${ARGN})
  servelab_target(core_${name})
endfunction()

# servelab_gtest(NAME SOURCES... LIBS ...) : one gtest executable registered with CTest
function(servelab_gtest name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
    SERVELAB_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    SERVELAB_SHARED_DIR="${PROJECT_SOURCE_DIR}/../shared")
  servelab_target(${name})
  include(GoogleTest)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 600)
endfunction()
