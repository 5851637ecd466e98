#include "chart_render.h"

#include <QApplication>
#include <QBuffer>
#include <QImage>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "chart_panel.h"
#include "csv_results.h"
#include "sim_controller.h"
#include "theme.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace sl::ui {

namespace {

struct ChartDef {
  PlotChartInfo info;
  const char* panelId;  // the ChartPanel chart it draws
  unsigned parts;
};

const std::vector<ChartDef>& chartDefs() {
  static const std::vector<ChartDef> defs = {
      {{"ttft-by-reasoning", "TTFT vs reasoning length per request, with the binned tail TTFT (bins of 256 tokens)"},
       "ttft_vs_reasoning", kSavedRequests},
      {{"ttft-percentiles", "Rolling p50/p99 TTFT over simulated time"}, "ttft", kSavedTimeseries},
      {{"tpot-percentiles", "Rolling p50/p99 TPOT over simulated time"}, "tpot", kSavedTimeseries},
      {{"slo-violation", "Rolling QoE violation rate and SLO attainment over simulated time"}, "qoe_slo",
       kSavedTimeseries},
      {{"throughput", "Output tokens per second over simulated time"}, "throughput", kSavedTimeseries},
      {{"kv-usage", "GPU KV cache usage per instance over simulated time"}, "kv_usage", kSavedTimeseries},
      {{"ttft-cdf", "CDF of TTFT over the finished requests"}, "ttft_cdf", kSavedRequests},
  };
  return defs;
}

std::vector<char> bytesOf(const QByteArray& b) { return {b.begin(), b.end()}; }

// The charts of one results folder: the GUI's chart panel fed with the saved
// samples (its CDF page included).
class SavedCharts {
public:
  explicit SavedCharts(const SavedResults& r) {
    panel_.clear(r.instances);
    panel_.addProbes(r.probes);
    std::vector<FinishedPoint> pts;
    for (const SavedRequest& q : r.requests) {
      if (!q.finished) continue;  // the live charts see requests as they finish
      FinishedPoint p;
      p.finishS = q.finishS;
      p.reasoning = q.reasoning;
      p.ttftS = q.ttftS;
      p.tpotS = q.tpotS;
      p.qoe = q.qoe;
      pts.push_back(p);
    }
    panel_.addFinished(pts);
    panel_.refresh();
  }
  LiveChart* chart(const ChartDef& d) { return panel_.chart(d.panelId); }

private:
  ChartPanel panel_;
};

bool isNumber(const std::string& s, double* out = nullptr) {
  if (s.empty()) return false;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return false;
  if (out) *out = v;
  return true;
}

QString prettyName(std::string s) {
  const auto dot = s.rfind('.');
  if (dot != std::string::npos) s.resize(dot);
  std::replace(s.begin(), s.end(), '_', ' ');
  return QString::fromStdString(s);
}

// A readable axis label for a chart CSV column ("bin_lo" -> "reasoning
// tokens (bin start)", "ttft_s" -> "TTFT (s)"); unknown names lose their
// underscores and keep a unit suffix as "(s)".
QString columnLabel(const std::string& c) {
  static const std::map<std::string, const char*> known = {
      {"bin_lo", "reasoning tokens (bin start)"},
      {"reasoning_tokens", "reasoning tokens"},
      {"rate_rps", "arrival rate (req/s)"},
      {"ttft_s", "TTFT (s)"},
      {"tpot_s", "TPOT (s)"},
      {"e2e_s", "end-to-end latency (s)"},
      {"p50_s", "p50 (s)"},
      {"p90_s", "p90 (s)"},
      {"p99_s", "p99 (s)"},
      {"mean_s", "mean (s)"},
      {"latency_s", "latency (s)"},
      {"start_s", "start (s)"},
      {"wire_s", "time on the wire (s)"},
      {"executed_s", "executed (s)"},
      {"blocked_s", "blocked (s)"},
      {"preempted_s", "preempted (s)"},
      {"total_s", "total (s)"},
      {"gbps", "Gbit/s"},
      {"tokens_per_s", "tokens/s"},
      {"slo_attainment_pct", "SLO attainment (%)"},
      {"normalized_to_oracle", "normalized to oracle"},
  };
  if (const auto it = known.find(c); it != known.end()) return QString::fromUtf8(it->second);
  std::string n = c;
  std::string unit;
  if (n.size() > 6 && n.compare(n.size() - 6, 6, "_per_s") == 0) {
    n.resize(n.size() - 6);
    unit = " (/s)";
  } else if (n.size() > 2 && n.compare(n.size() - 2, 2, "_s") == 0) {
    n.resize(n.size() - 2);
    unit = " (s)";
  } else if (n.size() > 4 && n.compare(n.size() - 4, 4, "_pct") == 0) {
    n.resize(n.size() - 4);
    unit = " (%)";
  }
  std::replace(n.begin(), n.end(), '_', ' ');
  return QString::fromStdString(n + unit);
}

}  // namespace

const std::vector<PlotChartInfo>& plotCharts() {
  static const std::vector<PlotChartInfo> infos = [] {
    std::vector<PlotChartInfo> v;
    for (const ChartDef& d : chartDefs()) v.push_back(d.info);
    return v;
  }();
  return infos;
}

void preferOffscreenPlatform() {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  // Qt wants a private runtime folder and warns when XDG_RUNTIME_DIR is unset:
  // give it the one it would pick itself, quietly.
  if (qEnvironmentVariableIsEmpty("XDG_RUNTIME_DIR")) {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("runtime-" + std::to_string(::getuid()));
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    std::filesystem::permissions(dir, std::filesystem::perms::owner_all, ec);
    if (!ec) qputenv("XDG_RUNTIME_DIR", QByteArray::fromStdString(dir.string()));
  }
}

std::unique_ptr<QApplication> makeHeadlessApp() {
  if (QCoreApplication::instance()) return nullptr;
  preferOffscreenPlatform();
  static int argc = 1;
  static char name[] = "servelab-cli";
  static char* argv[] = {name, nullptr};
  return std::make_unique<QApplication>(argc, argv);
}

std::vector<std::string> plotSavedResults(const PlotOptions& opt) {
  if (opt.png.empty() && opt.svg.empty()) throw InputError("plot: give --png and/or --svg");
  if (opt.size.width() < 160 || opt.size.height() < 120 || opt.size.width() > 8000 || opt.size.height() > 8000)
    throw InputError("plot: --size must be between 160x120 and 8000x8000");
  if (!(opt.scale >= 0.5 && opt.scale <= 4) || opt.size.width() * opt.scale > 16000 ||
      opt.size.height() * opt.scale > 16000)
    throw InputError("plot: --scale must be between 0.5 and 4 (and size × scale at most 16000 pixels)");
  std::vector<const ChartDef*> chosen;
  const bool all = opt.chart == "all";
  for (const ChartDef& d : chartDefs())
    if (all || d.info.name == opt.chart) chosen.push_back(&d);
  if (chosen.empty()) {
    std::string known;
    for (const ChartDef& d : chartDefs()) known += (known.empty() ? "" : ", ") + d.info.name;
    throw InputError("plot: unknown chart '" + opt.chart + "' (known: " + known + ", all; see --chart list)");
  }
  unsigned parts = 0;
  for (const ChartDef* d : chosen) parts |= d->parts;
  const SavedResults res = loadSavedResults(opt.resultsDir, parts);
  for (const ChartDef* d : chosen)
    if (d->info.name == "kv-usage" && res.gpuCapacityBlocks <= 0 && !all)
      throw InputError(opt.resultsDir + "/summary.json: kv-usage needs the GPU KV capacity: " + res.capacityError);

  // Everything in memory first.
  SavedCharts charts(res);
  std::vector<std::pair<std::string, std::vector<char>>> files;
  auto target = [&](const std::string& base, const ChartDef& d, const char* ext) {
    if (!all) return base;
    return base + (base.empty() || base.back() == '/' ? "" : "/") + d.info.name + ext;
  };
  for (const ChartDef* d : chosen) {
    if (all && d->info.name == "kv-usage" && res.gpuCapacityBlocks <= 0) continue;  // nothing meaningful to draw
    LiveChart* c = charts.chart(*d);
    if (!opt.png.empty()) files.emplace_back(target(opt.png, *d, ".png"), bytesOf(c->renderPng(opt.size, opt.scale)));
    if (!opt.svg.empty()) {
      const QByteArray svg = c->renderSvg(opt.size);
      files.emplace_back(target(opt.svg, *d, ".svg"), std::vector<char>(svg.begin(), svg.end()));
    }
  }
  if (all) {
    if (!opt.png.empty()) ensureDirectory(opt.png);
    if (!opt.svg.empty()) ensureDirectory(opt.svg);
  }
  std::vector<std::string> written;
  for (const auto& [path, bytes] : files) {
    writeFileAtomic(path, std::string_view(bytes.data(), bytes.size()));
    written.push_back(path);
  }
  return written;
}

std::unique_ptr<LiveChart> csvChart(const std::string& csv, const std::string& name, const QString& title) {
  const CsvTable t = parseCsvTable(csv, name);
  const std::size_t nc = t.columns.size();
  // Column kinds: numeric when every non-empty cell is a number.
  std::vector<bool> numeric(nc, !t.rows.empty());
  for (const auto& row : t.rows)
    for (std::size_t c = 0; c < nc; ++c)
      if (!row[c].empty() && !isNumber(row[c])) numeric[c] = false;
  // Bookkeeping columns that are neither x nor a value worth drawing.
  static const std::set<std::string> skip = {"n", "bin_hi", "id", "request_id", "rule"};
  std::vector<std::size_t> nums, texts;
  for (std::size_t c = 0; c < nc; ++c) {
    if (skip.count(t.columns[c])) continue;
    (numeric[c] ? nums : texts).push_back(c);
  }
  if (nums.size() < 2) throw InputError(name + ": needs at least two numeric columns to draw");
  // x: the first numeric column that, with the text columns and the numeric
  // columns before it as the series key, identifies every row; otherwise the
  // second-to-last numeric column (a scatter).
  auto keyOf = [&](const std::vector<std::string>& row, std::size_t xi) {
    std::string k;
    for (std::size_t c : texts) k += row[c] + " · ";
    for (std::size_t i = 0; i < xi; ++i)
      k += (t.columns[nums[i]] == "rate_rps" ? row[nums[i]] + " req/s"
                                             : columnLabel(t.columns[nums[i]]).toStdString() + " " + row[nums[i]]) +
           " · ";
    if (k.size() >= 4) k.resize(k.size() - 4);  // drop the last " · " (UTF-8: 4 bytes)
    return k;
  };
  std::size_t xi = nums.size() - 2;
  for (std::size_t i = 0; i + 1 < nums.size(); ++i) {
    std::set<std::pair<std::string, std::string>> seen;
    bool unique = true;
    for (const auto& row : t.rows)
      if (!seen.emplace(keyOf(row, i), row[nums[i]]).second) { unique = false; break; }
    if (unique) { xi = i; break; }
  }
  // y: the first numeric column after x, plus the following ones in the same
  // unit (seconds: "*_s", not rates "*_per_s"), so one axis fits them all.
  auto seconds = [&](std::size_t c) {
    const std::string& n = t.columns[c];
    return n.size() > 2 && n.compare(n.size() - 2, 2, "_s") == 0 && n.find("_per_") == std::string::npos;
  };
  std::vector<std::size_t> ys;
  for (std::size_t i = xi + 1; i < nums.size(); ++i)
    if (ys.empty() || (seconds(ys.front()) && seconds(nums[i]))) ys.push_back(nums[i]);
  // Series: key (+ y column when several); in first-seen order.
  std::vector<std::string> order;
  std::map<std::string, std::vector<QPointF>> series;
  std::set<std::string> keys;
  for (const auto& row : t.rows) keys.insert(keyOf(row, xi));
  if (keys.size() * ys.size() > 12) ys.resize(1);  // keep it readable
  for (const auto& row : t.rows) {
    double x = 0;
    if (!isNumber(row[nums[xi]], &x)) continue;
    for (std::size_t y : ys) {
      double v = 0;
      if (!isNumber(row[y], &v)) continue;
      std::string k = keyOf(row, xi);
      const std::string yName = columnLabel(t.columns[y]).toStdString();
      if (ys.size() > 1) k = k.empty() ? yName : k + " · " + yName;
      if (k.empty()) k = yName;
      auto [it, fresh] = series.try_emplace(k);
      if (fresh) order.push_back(k);
      it->second.emplace_back(x, v);
    }
  }
  QString yLabel = ys.size() == 1 ? columnLabel(t.columns[ys[0]])
                 : std::all_of(ys.begin(), ys.end(), seconds) ? QObject::tr("seconds")
                                                              : QObject::tr("value");
  // A binned tail (tail_ttft.csv, a "rule" column): say which statistic each bin uses.
  const bool tailBins = std::find(t.columns.begin(), t.columns.end(), "rule") != t.columns.end();
  if (tailBins) yLabel = QObject::tr("tail TTFT (s)");
  auto chart = std::make_unique<LiveChart>("csv", title.isEmpty() ? prettyName(name) : title,
                                           columnLabel(t.columns[nums[xi]]), yLabel);
  if (tailBins)
    chart->setSubtitle(QObject::tr("tail TTFT per 256-token bin of reasoning length: p99 (bins of ≥ 100 requests), "
                                   "p95 (≥ 20), p90 (≥ 10), max (≥ 5)"));
  std::size_t most = 0;
  for (const auto& kv : series) most = std::max(most, kv.second.size());
  int i = 0;
  for (const std::string& k : order) {
    std::vector<QPointF>& pts = series[k];
    const bool increasing =
        std::adjacent_find(pts.begin(), pts.end(), [](const QPointF& a, const QPointF& b) { return b.x() <= a.x(); }) ==
        pts.end();
    const int s = chart->addSeries(QString::fromStdString(k), theme::instanceColor(i++),
                                  increasing ? SeriesStyle::Line : SeriesStyle::Scatter);
    chart->setSeriesData(s, std::move(pts));
  }
  chart->setLegendVisible(order.size() > 1 || ys.size() > 1);
  chart->setPointsVisible(most <= 30);  // a few measured points: show them
  return chart;
}

std::unique_ptr<LiveChart> csvChart(const std::string& csv, const std::string& name, const QString& title,
                                    const exp::PlotSpec& spec) {
  const CsvTable t = parseCsvTable(csv, name);
  auto col = [&](const std::string& c) {
    const auto it = std::find(t.columns.begin(), t.columns.end(), c);
    if (it == t.columns.end()) throw InputError(name + ": no column '" + c + "' to draw");
    return static_cast<std::size_t>(it - t.columns.begin());
  };
  const std::size_t xc = col(spec.x);
  std::vector<std::size_t> ycs, scs;
  for (const std::string& y : spec.ys) ycs.push_back(col(y));
  for (const std::string& c : spec.series) scs.push_back(col(c));
  std::vector<std::pair<std::size_t, std::string>> where;
  for (const auto& [c, v] : spec.where) where.emplace_back(col(c), v);
  if (ycs.empty()) throw InputError(name + ": a plot needs a y column");
  // Categories: the given labels for a numeric index, else the x values in
  // first-seen order.
  QStringList cats;
  std::map<std::string, int> catOf;
  for (const std::string& l : spec.xLabels) cats << QString::fromStdString(l);
  std::vector<std::string> order;
  std::map<std::string, std::vector<QPointF>> series;
  for (const auto& row : t.rows) {
    if (std::any_of(where.begin(), where.end(), [&](const auto& w) { return row[w.first] != w.second; })) continue;
    double x = 0;
    if (spec.categoricalX && spec.xLabels.empty()) {
      auto [it, fresh] = catOf.try_emplace(row[xc], static_cast<int>(catOf.size()));
      if (fresh) cats << QString::fromStdString(row[xc]);
      x = it->second;
    } else if (!isNumber(row[xc], &x)) {
      continue;
    }
    std::string key;
    for (std::size_t c : scs) key += (key.empty() ? "" : " · ") + row[c];
    for (const std::size_t& y : ycs) {
      double v = 0;
      if (!isNumber(row[y], &v)) continue;
      std::string k = key;
      if (ycs.size() > 1) {
        const std::size_t yi = static_cast<std::size_t>(&y - ycs.data());
        const std::string yName =
            yi < spec.yNames.size() ? spec.yNames[yi] : columnLabel(t.columns[y]).toStdString();
        k = k.empty() ? yName : k + " · " + yName;
      }
      if (k.empty()) k = columnLabel(t.columns[y]).toStdString();
      auto [it, fresh] = series.try_emplace(k);
      if (fresh) order.push_back(k);
      it->second.emplace_back(x, v);
    }
  }
  if (order.empty()) throw InputError(name + ": no rows to draw for " + spec.x);
  const QString yLabel = !spec.yLabel.empty() ? QString::fromStdString(spec.yLabel)
                         : ycs.size() == 1    ? columnLabel(t.columns[ycs[0]])
                                              : QObject::tr("value");
  auto chart = std::make_unique<LiveChart>(
      "csv", title.isEmpty() ? prettyName(name) : title,
      spec.xLabel.empty() ? columnLabel(t.columns[xc]) : QString::fromStdString(spec.xLabel), yLabel);
  if (spec.categoricalX) chart->setXCategories(cats);
  std::size_t most = 0;
  int i = 0;
  for (const std::string& k : order) {
    std::vector<QPointF>& pts = series[k];
    std::stable_sort(pts.begin(), pts.end(), [](const QPointF& a, const QPointF& b) { return a.x() < b.x(); });
    most = std::max(most, pts.size());
    if (spec.step && pts.size() > 1) {  // hold each value until the next point
      std::vector<QPointF> steps;
      for (std::size_t j = 0; j < pts.size(); ++j) {
        if (j > 0) steps.emplace_back(pts[j].x(), pts[j - 1].y());
        steps.push_back(pts[j]);
      }
      pts = std::move(steps);
    }
    const bool line = !spec.scatter && !spec.categoricalX;
    const int s = chart->addSeries(QString::fromStdString(k), theme::instanceColor(i++),
                                  line ? SeriesStyle::Line : SeriesStyle::Scatter);
    chart->setSeriesData(s, std::move(pts));
  }
  if (spec.yRange) chart->setFixedYRange(spec.yRange->first, spec.yRange->second);
  chart->setLegendVisible(order.size() > 1);
  chart->setPointsVisible(most <= 30);
  return chart;
}

std::vector<char> renderCsvChartPng(const std::string& csv, const std::string& name, const QString& title,
                                    QSize size, qreal scale) {
  return bytesOf(csvChart(csv, name, title)->renderPng(size, scale));
}

}  // namespace sl::ui
