#pragma once
// The message of the sl::InputError that `fn` throws, or "<no InputError>".
// Shared by the test folders (included by relative path; tests/common has no
// target).
#include <string>

#include "util/error.h"

namespace sl::testutil {

std::string errorOf(auto&& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e.what();
  }
  return "<no InputError>";
}

}  // namespace sl::testutil
