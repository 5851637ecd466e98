#include "cli/cmd_reproduce.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "cli/charts_helper.h"
#include "experiments/experiment.h"
#include "experiments/summary.h"
#include "util/atomic_file.h"
#include "util/error.h"

#ifdef SERVELAB_HAVE_UI
#include <QApplication>

#include "ui/charts/chart_render.h"
#include "ui/charts/live_chart.h"
#endif

namespace sl::cli {
namespace {

struct ReproduceArgs {
  std::string id;
  std::string out;
  bool list = false;
  bool summary = false;
  bool quick = false;
  bool quiet = false;
  std::uint64_t seedValue = 0;
  CLI::Option* seedOpt = nullptr;
};

// reproduce --summary: every family's headline claims in one table
// (experiments/summary.h; docs/fidelity.md opens with its output).
int runSummary(const ReproduceArgs& a) {
  exp::ExperimentOptions opt;
  opt.quick = a.quick;
  if (a.seedOpt && a.seedOpt->count() > 0) opt.seed = a.seedValue;
  if (!a.quiet) opt.onRun = [](const std::string& label) { std::fprintf(stderr, "  running %s\n", label.c_str()); };
  const exp::ExperimentResult r = exp::runFidelitySummary(opt);
  std::cout << "How well ServeLab reproduces each paper's headline claims, at the policies' default settings"
            << (a.quick ? " (--quick: small runs, seed 1; the full table is docs/fidelity.md's)" : "") << "\n\n";
  std::cout << r.table.text();
  for (const std::string& n : r.notes) std::cout << n << "\n";
  if (!a.out.empty()) {
    const std::string dir = a.out + "/summary";
    exp::writeExperimentOutputs(r, dir);
    // The same table in Markdown, as docs/fidelity.md opens with it.
    std::string md = "|";
    for (const std::string& c : r.table.columns) md += " " + c + " |";
    md += "\n|";
    for (std::size_t i = 0; i < r.table.columns.size(); ++i) md += "---|";
    md += "\n";
    for (const auto& row : r.table.rows) {
      md += "|";
      for (const std::string& cell : row) {
        std::string c = cell;
        for (std::size_t k = 0; (k = c.find('|', k)) != std::string::npos; k += 2) c.replace(k, 1, "\\|");
        md += " " + c + " |";
      }
      md += "\n";
    }
    md += "\n";
    for (const std::string& n : r.notes) md += "- " + n + "\n";
    writeFileAtomic(dir + "/table.md", md);
    std::cout << "wrote " << dir << "/table.csv, table.txt, table.md\n";
  }
  return 0;
}

int runReproduce(const ReproduceArgs& a) {
  if (a.summary) {
    if (!a.id.empty() || a.list) throw InputError("--summary runs every family's claims: give no experiment id");
    return runSummary(a);
  }
  if (a.list || a.id.empty()) {
    if (!a.list) {
      std::fprintf(stderr, "servelab-cli: error: reproduce needs an experiment id (see reproduce --list)\n");
      return 2;
    }
    std::size_t w = 0;
    for (const auto& e : exp::experimentRegistry()) w = std::max(w, e.id.size());
    for (const auto& e : exp::experimentRegistry())
      std::cout << e.id << std::string(w - e.id.size() + 2, ' ') << "[" << e.paper << "] " << e.title << "\n";
    return 0;
  }
  const exp::Experiment* e = exp::findExperiment(a.id);
  if (!e) {
    std::string known;
    for (const auto& x : exp::experimentRegistry()) known += (known.empty() ? "" : ", ") + x.id;
    throw InputError("unknown experiment '" + a.id + "' (known: " + known + ")");
  }
#if !defined(SERVELAB_HAVE_UI) && defined(SERVELAB_CHARTS_HELPER)
  // With --out the PNGs next to the chart CSVs are drawn by the Qt twin
  // (charts_helper.h): it runs the whole call. If it cannot start, the
  // tables and CSVs are still written, without PNGs.
  if (!a.out.empty()) std::fprintf(stderr, "servelab-cli: note: no PNGs: %s\n", execChartsHelper().c_str());
#endif
  exp::ExperimentOptions opt;
  opt.quick = a.quick;
  if (a.seedOpt && a.seedOpt->count() > 0) opt.seed = a.seedValue;
  if (!a.quiet) opt.onRun = [](const std::string& label) { std::fprintf(stderr, "  running %s\n", label.c_str()); };
  std::cout << e->id << ": " << e->title << "\n" << e->description << "\n\n";
  const exp::ExperimentResult r = e->run(opt);
  std::cout << r.table.text();
  for (const std::string& n : r.notes) std::cout << n << "\n";
  if (!a.out.empty()) {
    const std::string dir = a.out + "/" + e->id;
    exp::writeExperimentOutputs(r, dir);
    std::cout << "wrote " << dir << "/table.csv";
    for (const auto& c : r.charts) std::cout << ", " << c.name;
    std::cout << "\n";
#ifdef SERVELAB_HAVE_UI
    // A PNG next to each chart CSV (a generic line/scatter chart of its columns).
    const auto app = ui::makeHeadlessApp();
    std::string pngs;
    for (const auto& c : r.charts) {
      const std::string stem = c.name.substr(0, c.name.rfind('.'));
      const QString title = QString::fromStdString(e->id + ": " + stem);
      if (c.plots.empty()) {
        try {
          const std::vector<char> png = ui::renderCsvChartPng(c.csv, c.name, title);
          writeFileAtomic(dir + "/" + stem + ".png", std::string_view(png.data(), png.size()));
          pngs += (pngs.empty() ? "" : ", ") + stem + ".png";
        } catch (const InputError& err) {
          std::fprintf(stderr, "servelab-cli: note: no PNG for %s: %s\n", c.name.c_str(), err.what());
        }
      }
      // The experiment's own choice of axes, one PNG per plot (a plot whose
      // rows a --quick run did not make is left out with a note).
      for (const exp::PlotSpec& p : c.plots) {
        try {
          const QString t = p.title.empty() ? title : QString::fromStdString(e->id + ": " + p.title);
          const QByteArray png = ui::csvChart(c.csv, c.name, t, p)->renderPng(QSize(960, 600), 1.0);
          writeFileAtomic(dir + "/" + stem + p.suffix + ".png", std::string_view(png.data(), png.size()));
          pngs += (pngs.empty() ? "" : ", ") + stem + p.suffix + ".png";
        } catch (const InputError& err) {
          std::fprintf(stderr, "servelab-cli: note: no PNG %s%s.png: %s\n", stem.c_str(), p.suffix.c_str(), err.what());
        }
      }
    }
    if (!pngs.empty()) std::cout << "wrote " << dir << "/" << pngs << "\n";
#endif
  }
  return 0;
}

}  // namespace

std::function<int()> addReproduceCommand(CLI::App& app) {
  auto args = std::make_shared<ReproduceArgs>();
  auto* c = app.add_subcommand("reproduce", "Run an experiment that mirrors a paper's figure (table + chart CSVs)");
  c->add_option("experiment", args->id, "Experiment id (see --list)");
  c->add_flag("--list", args->list, "List the experiments");
  c->add_flag("--summary", args->summary,
              "One table of every family's headline claims: the paper's number, ServeLab's, a verdict");
  c->add_option("--out", args->out, "Write DIR/<experiment>/table.csv, table.txt and chart CSVs");
  c->add_flag("--quick", args->quick, "Small request counts and fewer rates (tests, CI)");
  args->seedOpt = c->add_option("--seed", args->seedValue, "Override run.seed of every run");
  c->add_flag("--quiet", args->quiet, "Do not list the runs on stderr");
  return [args]() { return runReproduce(*args); };
}

}  // namespace sl::cli
