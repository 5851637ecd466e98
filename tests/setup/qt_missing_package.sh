#!/usr/bin/env bash
# Configuring with part of Qt missing must fail and name the Debian package to
# install (cmake/ServeLabQt.cmake). A package is hidden from CMake with
# CMAKE_DISABLE_FIND_PACKAGE_<name>, which also hides it from the look-ups
# that other Qt packages make for their dependencies — the same state as a
# machine without it (checked by hand on Debian 12 without libqt6opengl6-dev).
#   qt_missing_package.sh CASE SOURCE_DIR WORK_DIR [GENERATOR CXX_COMPILER]
# The probe is configured with the parent build's generator and compiler: a
# fresh Debian 12 with the project's packages has ninja but no make.
set -uo pipefail
case_=$1 src=$2 work=$3 generator=${4:-Ninja} cxx=${5:-}
probe="$src/tests/setup/qt-probe"
dir="$work/qt-probe-$case_"
rm -rf "$dir"; mkdir -p "$work"

configure() {  # extra cmake arguments
  cmake -S "$probe" -B "$dir" -G "$generator" ${cxx:+"-DCMAKE_CXX_COMPILER=$cxx"} \
    -DSERVELAB_CMAKE_DIR="$src/cmake" "$@" >"$dir.log" 2>&1
}
fail() { echo "FAIL: $*"; echo "--- cmake output:"; cat "$dir.log"; exit 1; }
expect_missing() {  # hidden package, Debian package the message must name
  local hidden=$1 pkg=$2
  if configure "-DCMAKE_DISABLE_FIND_PACKAGE_$hidden=TRUE"; then fail "configure passed with $hidden hidden"; fi
  grep -q "CMake packages are missing" "$dir.log" || fail "no 'packages are missing' message"
  grep -q "$hidden (Debian package $pkg)" "$dir.log" || fail "message does not name $hidden and $pkg"
  grep -q "apt-get install .*$pkg" "$dir.log" || fail "no 'apt-get install $pkg' line"
  grep -q "SERVELAB_BUILD_UI=OFF" "$dir.log" || fail "message does not say how to build without the GUI"
  echo "ok: $hidden hidden -> names $pkg"
}

case "$case_" in
  all_found)
    configure || fail "configure failed with every package present"
    grep -q "servelab qt probe: Qt 6" "$dir.log" || fail "probe did not report Qt"
    echo "ok: configure passes with every Qt package present" ;;
  opengl)
    expect_missing Qt6OpenGL libqt6opengl6-dev
    # Charts is installed but needs OpenGL: it is named as unusable, and its
    # own package is not offered (installing it again would not help).
    grep -q "Qt6Charts is installed but unusable: its dependency Qt6OpenGL is missing" "$dir.log" ||
      fail "Charts' missing dependency not explained"
    grep -q "apt-get install .*qt6-charts-dev" "$dir.log" && fail "offers qt6-charts-dev, which is installed"
    echo "ok: Charts named as unusable for want of Qt6OpenGL" ;;
  charts) expect_missing Qt6Charts qt6-charts-dev ;;
  svg) expect_missing Qt6Svg qt6-svg-dev ;;
  test) expect_missing Qt6Test qt6-base-dev ;;
  no_qt)
    if configure -DCMAKE_DISABLE_FIND_PACKAGE_Qt6=TRUE; then fail "configure passed without Qt"; fi
    grep -q "Qt6 (Debian package qt6-base-dev)" "$dir.log" || fail "message does not name qt6-base-dev"
    echo "ok: no Qt at all -> names qt6-base-dev" ;;
  *) echo "unknown case $case_"; exit 2 ;;
esac
