#pragma once
// Headless chart rendering (`servelab-cli plot`, `reproduce --out`): the
// GUI's own charts (ChartPanel / LiveChart) fed from saved results instead of
// a live run, rendered to PNG/SVG on the offscreen platform. Outputs are
// rendered in memory first and then written atomically, so bad input leaves
// nothing half-written.
#include <QSize>
#include <QString>

#include <memory>
#include <string>
#include <vector>

#include "experiments/experiment.h"

class QApplication;

namespace sl::ui {

struct PlotChartInfo {
  std::string name;         // CLI name, e.g. "ttft-by-reasoning"
  std::string description;  // one line
};
/// The charts `plot` can draw, in display order.
const std::vector<PlotChartInfo>& plotCharts();

/// Before a QApplication exists: choose the offscreen platform unless
/// QT_QPA_PLATFORM names one, and give Qt a private XDG_RUNTIME_DIR when none
/// is set. Batch modes (`plot`, `servelab --screenshot/--export-charts`) call
/// it so they run without a display and draw the same pixels with or without one.
void preferOffscreenPlatform();

/// A QApplication for headless rendering when none exists (the offscreen
/// platform unless QT_QPA_PLATFORM says otherwise); null when one exists.
std::unique_ptr<QApplication> makeHeadlessApp();

struct PlotOptions {
  std::string resultsDir;
  std::string chart;  // a name from plotCharts() or "all"
  std::string png;    // file, or a folder with "all"; may be empty when svg is set
  std::string svg;    // optional; same rules
  QSize size{960, 600};  // layout size (logical pixels)
  qreal scale = 1.0;     // the PNG has size × scale pixels (e.g. 2 for slides)
};

/// Render and write. Returns the files written. InputError on bad input
/// (missing folder or file, malformed CSV, unknown chart) before anything is written.
std::vector<std::string> plotSavedResults(const PlotOptions& opt);

class LiveChart;
/// A generic chart from a chart CSV (header + rows), labelled in words
/// ("reasoning tokens (bin start)", "TTFT (s)", not the column names); a
/// binned-tail CSV (with a "rule" column) says in its subtitle which
/// statistic each bin uses. See renderCsvChartPng for the choice of x/y.
std::unique_ptr<LiveChart> csvChart(const std::string& csv, const std::string& name, const QString& title);

/// A generic chart from a chart CSV (header + rows): the first numeric column
/// that identifies the rows is x, text columns (and numeric columns before x)
/// split the series, the other numeric columns are y. PNG bytes.
/// InputError (naming `name`) when the CSV has no numeric columns to draw.
std::vector<char> renderCsvChartPng(const std::string& csv, const std::string& name, const QString& title,
                                    QSize size = QSize(960, 600), qreal scale = 1.0);

/// A chart of a chart CSV drawn as the experiment asked (exp::PlotSpec: x,
/// y columns, series columns, row filter, categorical x, fixed y range).
/// InputError (naming `name` and the column) when a named column is missing
/// or nothing is left to draw.
std::unique_ptr<LiveChart> csvChart(const std::string& csv, const std::string& name, const QString& title,
                                    const exp::PlotSpec& spec);

}  // namespace sl::ui
