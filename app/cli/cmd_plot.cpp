#include "cli/cmd_plot.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "cli/charts_helper.h"
#include "util/error.h"

#ifdef SERVELAB_HAVE_UI
#include <QApplication>

#include "ui/charts/chart_render.h"
#endif

namespace sl::cli {
namespace {

struct PlotArgs {
  std::string dir;
  std::string chart;
  std::string png;
  std::string svg;
  std::string size = "960x600";
  double scale = 1.0;
};

#ifdef SERVELAB_HAVE_UI
bool parseSize(const std::string& s, int& w, int& h) {
  const auto x = s.find_first_of("xX");
  if (x == std::string::npos) return false;
  try {
    std::size_t a = 0, b = 0;
    w = std::stoi(s.substr(0, x), &a);
    h = std::stoi(s.substr(x + 1), &b);
    return a == x && b == s.size() - x - 1;
  } catch (const std::exception&) {
    return false;
  }
}
#endif

int runPlot(const PlotArgs& a) {
#ifndef SERVELAB_HAVE_UI
  (void)a;
#ifdef SERVELAB_CHARTS_HELPER
  // The charts are drawn by the Qt twin (charts_helper.h): it takes over
  // this call; execChartsHelper returns only if it could not start.
  std::fprintf(stderr, "servelab-cli: error: plot: %s\n", execChartsHelper().c_str());
#else
  std::fprintf(stderr,
               "servelab-cli: error: plot: this servelab-cli was built without the Qt GUI "
               "(SERVELAB_BUILD_UI=OFF or Qt 6 not found); rebuild with the GUI to render charts\n");
#endif
  return 2;
#else
  if (a.chart == "list") {
    std::size_t w = 0;
    for (const auto& c : ui::plotCharts()) w = std::max(w, c.name.size());
    for (const auto& c : ui::plotCharts())
      std::cout << c.name << std::string(w - c.name.size() + 2, ' ') << c.description << "\n";
    std::cout << "all" << std::string(w - 1, ' ') << "every chart above (--png / --svg name folders)\n";
    return 0;
  }
  if (a.dir.empty()) throw InputError("plot: give the results folder (written by `servelab-cli run --out DIR`)");
  int w = 0, h = 0;
  if (!parseSize(a.size, w, h)) throw InputError("plot: --size: expected WxH, e.g. 1200x700 (got '" + a.size + "')");
  ui::PlotOptions opt;
  opt.resultsDir = a.dir;
  while (opt.resultsDir.size() > 1 && opt.resultsDir.back() == '/') opt.resultsDir.pop_back();
  opt.chart = a.chart;
  opt.png = a.png;
  opt.svg = a.svg;
  opt.size = QSize(w, h);
  opt.scale = a.scale;
  const auto app = ui::makeHeadlessApp();
  const std::vector<std::string> files = ui::plotSavedResults(opt);
  for (const std::string& f : files) std::cout << "wrote " << f << "\n";
  return 0;
#endif
}

}  // namespace

bool plotAvailable() {
#ifdef SERVELAB_HAVE_UI
  return true;
#else
  return false;
#endif
}

std::function<int()> addPlotCommand(CLI::App& app) {
  auto args = std::make_shared<PlotArgs>();
  auto* c = app.add_subcommand("plot", "Render the app's charts from saved results (a `run --out` folder) to PNG/SVG");
  c->add_option("results", args->dir, "Results folder written by `servelab-cli run --out DIR`");
  c->add_option("--chart", args->chart, "Chart name, `list` to list them, or `all`")->required();
  c->add_option("--png", args->png, "PNG file to write (a folder with --chart all)");
  c->add_option("--svg", args->svg, "SVG file to write (a folder with --chart all)");
  c->add_option("--size", args->size, "Chart size (layout) in pixels, WxH")->capture_default_str();
  c->add_option("--scale", args->scale, "PNG pixels per layout pixel (2 for sharp slides); SVG ignores it")
      ->capture_default_str();
  return [args]() { return runPlot(*args); };
}

}  // namespace sl::cli
