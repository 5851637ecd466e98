#include "cli/charts_helper.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <system_error>
#include <vector>

namespace sl::cli {
namespace {
int gArgc = 0;
char** gArgv = nullptr;
}  // namespace

void rememberArgs(int argc, char** argv) {
  gArgc = argc;
  gArgv = argv;
}

std::string chartsHelperPath() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path dir =
      ec ? std::filesystem::path(gArgc > 0 ? gArgv[0] : "").parent_path() : self.parent_path();
  return (dir / "servelab-cli-charts").string();
}

std::string execChartsHelper() {
  const std::string path = chartsHelperPath();
  std::string why = "no arguments kept to pass on";
  if (gArgc > 0 && gArgv != nullptr) {
    std::vector<char*> args(gArgv, gArgv + gArgc);
    args.push_back(nullptr);
    std::cout.flush();
    std::fflush(nullptr);
    ::execv(path.c_str(), args.data());
    why = std::strerror(errno);
  }
  return "the charts are drawn by servelab-cli-charts, built with the Qt GUI next to servelab-cli, and it could "
         "not be started (" + path + ": " + why + ")";
}

}  // namespace sl::cli
