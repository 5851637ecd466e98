# Qt 6 for the GUI (ui/, app/gui, tests/ui, `plot`). No silent degradation:
# when the GUI is asked for (SERVELAB_BUILD_UI=ON, the default) and a Qt
# CMake package is missing, configuring fails and names the Debian package
# that provides it. Build without the GUI only on request:
# -DSERVELAB_BUILD_UI=OFF (or SERVELAB_NO_GUI=1 for .ci/servelab).
#
# The components are looked up one by one in dependency order, because a
# package whose own dependency is missing (Debian 12's qt6-charts-dev needs
# Qt6OpenGL from libqt6opengl6-dev without depending on it) otherwise only
# reports itself as missing.
set(SERVELAB_QT_MIN_VERSION 6.2)
# component, then the Debian 12 package that ships its CMake config
set(_servelab_qt_packages
  Core qt6-base-dev
  Gui qt6-base-dev
  Widgets qt6-base-dev
  OpenGL libqt6opengl6-dev
  OpenGLWidgets libqt6opengl6-dev
  Svg qt6-svg-dev
  Charts qt6-charts-dev
  Test qt6-base-dev)

function(servelab_find_qt)
  set(missing "")
  set(packages "")
  find_package(Qt6 ${SERVELAB_QT_MIN_VERSION} QUIET CONFIG)
  if(NOT Qt6_FOUND)
    list(APPEND missing "Qt6 (Debian package qt6-base-dev)")
    list(APPEND packages qt6-base-dev)
  else()
    list(LENGTH _servelab_qt_packages n)
    math(EXPR last "${n} - 1")
    foreach(i RANGE 0 ${last} 2)
      math(EXPR j "${i} + 1")
      list(GET _servelab_qt_packages ${i} comp)
      list(GET _servelab_qt_packages ${j} pkg)
      find_package(Qt6${comp} ${SERVELAB_QT_MIN_VERSION} QUIET CONFIG)
      if(NOT Qt6${comp}_FOUND)
        # Installed but unusable because a dependency is missing: name the
        # dependency (listed on its own line), not this package.
        string(REGEX MATCH "dependency (Qt6[A-Za-z]+) could not be found" dep
          "${Qt6${comp}_NOT_FOUND_MESSAGE}")
        if(dep)
          list(APPEND missing "Qt6${comp} is installed but unusable: its dependency ${CMAKE_MATCH_1} is missing")
        else()
          list(APPEND missing "Qt6${comp} (Debian package ${pkg})")
          list(APPEND packages ${pkg})
        endif()
      endif()
    endforeach()
  endif()
  if(missing)
    list(REMOVE_DUPLICATES packages)
    list(JOIN missing "\n  - " missing_text)
    list(JOIN packages " " packages_text)
    message(FATAL_ERROR
      "ServeLab's GUI needs Qt 6 (>= ${SERVELAB_QT_MIN_VERSION}) and these CMake packages are missing:\n"
      "  - ${missing_text}\n"
      "Install them:  apt-get install ${packages_text}\n"
      "(`bash .ci/servelab build` installs every package it needs.) To build only the core, "
      "the CLI and the core tests, ask for it: -DSERVELAB_BUILD_UI=OFF, or SERVELAB_NO_GUI=1 "
      "with .ci/servelab.")
  endif()
endfunction()

servelab_find_qt()
find_package(Qt6 ${SERVELAB_QT_MIN_VERSION} REQUIRED COMPONENTS Core Gui Widgets Charts Svg Test)
